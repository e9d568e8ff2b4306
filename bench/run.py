"""Run every benchmark and write bench/RESULTS.md.

    python bench/run.py --quick     # 10k and 100k memories, minutes
    python bench/run.py --full      # adds 1M (builds cached under bench/.work/ on the first run)
    python bench/run.py --quick --steps recall,peers   # part of a run; the report reuses earlier results

Each benchmark runs in its own process with a time limit; its peak RSS is measured by wait4 on that
process. The other engineers' scripts (bench_app, bench_rerank, bench_forget, bench_redaction,
bench_locomo) run afterwards when present, with --quick/--full passed through when their --help lists it;
each writes its own bench/RESULTS-<topic>.md, which is folded into RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import BENCH, WORK, ChildResult, bench_env, fmt_ms, log, machine_info, run_child

PY = sys.executable

MODES: dict[str, dict[str, Any]] = {
    "quick": {
        "sizes": [10_000, 100_000],
        "queries": 80,
        "ingest_texts": 500,
        "singles": 50,
        "writes": 2_000,
        "script_limit": 900,
    },
    "full": {
        "sizes": [10_000, 100_000, 1_000_000],
        "queries": 200,
        "ingest_texts": 3000,
        "singles": 200,
        "writes": 10_000,
        "script_limit": 3600,
    },
}
BUILD_LIMIT = {10_000: 600, 100_000: 1800, 1_000_000: 4 * 3600}
CHROMA_LIMIT = {10_000: 600, 100_000: 1800, 1_000_000: 4 * 3600}
# The scripts first, then any other bench_*.py found. Arguments per mode where a script needs more
# than a --quick/--full it lists in its --help (bench_app takes a subcommand and a size).
SCRIPTS = ["bench_app.py", "bench_rerank.py", "bench_forget.py", "bench_redaction.py", "bench_locomo.py"]
SCRIPT_ARGS = {"bench_app.py": {"quick": ["run", "--size", "100000"], "full": ["run", "--size", "1000000"]}}
OWN = {"bench_core.py"}
STEPS = ["build", "recall", "model", "peers", "ftsfilter", "ingest", "embed", "smallwrites", "scripts"]

TARGETS = {
    "recall_1m_ms": 25.0,
    "recall_ms": {10_000: 2.0, 100_000: 6.0, 1_000_000: 25.0},  # excl. the query embedding
    "chroma_ratio": 1.5,  # within this of Chroma vector-only (no filter) at 10k and 100k
    "defaults_ratio": 1.2,  # recall as agents call it (access counts, trace) against the read path
    "ingest_ratio": 0.9,
    "rerank_ms": 16.0,
    "first_paint_s": 1.0,
    "repaint_ms": 50.0,
    "forget_s": 2.0,
    "smallwrites_ratio": 1.5,
}


def label(size: int) -> str:
    return f"{size // 1_000_000}M" if size >= 1_000_000 else f"{size // 1000}k"


class Runner:
    def __init__(
        self, mode: str, steps: list[str], sizes: list[int] | None = None, skip: set[str] | None = None
    ) -> None:
        self.mode = mode
        self.skip = skip or set()
        self.cfg = dict(MODES[mode])
        if sizes:
            self.cfg["sizes"] = sizes
        self.steps = steps
        self.dir = WORK / f"results-{mode}"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.env = bench_env()
        self.children: dict[str, dict[str, Any]] = {}

    def child(
        self, name: str, cmd: list[str], limit: float, env: dict[str, str] | None = None
    ) -> dict[str, Any] | None:
        """Run one benchmark process; keep its JSON result with wall time, peak RSS and load around it."""
        out = self.dir / f"{name}.json"
        if name in self.skip:
            log(f"{name}: skipped (--skip); its last result, if any, stays")
            return json.loads(out.read_text()) if out.exists() else None
        out.unlink(missing_ok=True)
        load0 = _load()
        code0 = code_version()
        log(f"{name}: {' '.join(cmd[1:])}")
        res: ChildResult = run_child([*cmd, "--out", str(out)], limit, {**self.env, **(env or {})})
        info = {
            "seconds": round(res.seconds, 1),
            "peak_rss_mb": round(res.peak_rss_mb, 1),
            "returncode": res.returncode,
            "load_before": load0,
            "load_after": _load(),
            "at": datetime.now().isoformat(timespec="seconds"),
            "code": code0,
        }
        (self.dir / f"{name}.log").write_text(res.stdout + "\n--- stderr ---\n" + _tail(res.stderr, 200))
        if not res.ok:
            why = "time limit" if res.returncode is None else f"exit {res.returncode}"
            log(f"{name}: FAILED ({why}); log in {self.dir / (name + '.log')}")
            info["error"] = why + ": " + _tail(res.stderr, 5)
            (self.dir / f"{name}.status.json").write_text(json.dumps(info, indent=2))
            return None
        (self.dir / f"{name}.status.json").write_text(json.dumps(info, indent=2))
        log(f"{name}: done in {res.seconds:.0f} s, peak RSS {res.peak_rss_mb:.0f} MB")
        return json.loads(out.read_text()) if out.exists() else None

    def run(self) -> None:
        sizes, q = self.cfg["sizes"], str(self.cfg["queries"])
        core, peers = str(BENCH / "bench_core.py"), str(BENCH / "peers.py")
        for size in sizes:
            if "build" in self.steps:
                self.child(
                    f"build-{label(size)}", [PY, core, "build", "--size", str(size)], BUILD_LIMIT[size]
                )
            if "recall" in self.steps:
                self.child(
                    f"recall-{label(size)}", [PY, core, "recall", "--size", str(size), "--queries", q], 1800
                )
            if "model" in self.steps:
                self.child(
                    f"model-{label(size)}",
                    [PY, core, "recall", "--size", str(size), "--queries", q, "--model"],
                    1800,
                )
            if "peers" in self.steps:
                self.child(
                    f"chroma-{label(size)}",
                    [PY, peers, "chroma", "--size", str(size), "--queries", q],
                    CHROMA_LIMIT[size],
                )
                self.child(
                    f"proto-{label(size)}", [PY, peers, "proto", "--size", str(size), "--queries", q], 1800
                )
        if "ftsfilter" in self.steps:
            big = str(sizes[-1])
            self.child("ftsfilter-memdeck", [PY, core, "ftsfilter", "--size", big], 1800)
            self.child(
                "ftsfilter-lance-default",
                [PY, core, "ftsfilter", "--size", big],
                1800,
                {"LANCE_FLAT_SEARCH_PERCENT_THRESHOLD": "10"},
            )
        if "ingest" in self.steps:
            self.child(
                "ingest",
                [
                    PY,
                    core,
                    "ingest",
                    "--texts",
                    str(self.cfg["ingest_texts"]),
                    "--singles",
                    str(self.cfg["singles"]),
                ],
                1800,
            )
        if "embed" in self.steps:
            self.child("embed-default", [PY, core, "embed"], 600)
            self.child("embed-passive", [PY, core, "embed"], 600, {"OMP_WAIT_POLICY": "PASSIVE"})
        if "smallwrites" in self.steps:
            self.child("smallwrites", [PY, core, "smallwrites", "--writes", str(self.cfg["writes"])], 3600)
        if "scripts" in self.steps:
            for script in all_scripts():
                self.script(script)

    def script(self, name: str) -> None:
        path = BENCH / name
        if not path.exists():
            return
        cmd = [PY, str(path)]
        known = SCRIPT_ARGS.get(name, {}).get(self.mode)
        if known is not None:
            cmd += known
            passed = " ".join(known)
        else:
            help_text = run_child([PY, str(path), "--help"], 120, self.env).stdout
            flag = f"--{self.mode}"
            passed = flag if flag in help_text else "(no mode flag)"
            if flag in help_text:
                cmd.append(flag)
        stem = name.removesuffix(".py")
        load0 = _load()
        code0 = code_version()
        log(f"{stem}: {' '.join(cmd[1:])}")
        res = run_child(cmd, self.cfg["script_limit"], self.env)
        info = {
            "seconds": round(res.seconds, 1),
            "peak_rss_mb": round(res.peak_rss_mb, 1),
            "returncode": res.returncode,
            "load_before": load0,
            "load_after": _load(),
            "at": datetime.now().isoformat(timespec="seconds"),
            "code": code0,
            "cmd": " ".join([f"bench/{name}", *cmd[2:]]),
            "passed": passed,
        }
        if not res.ok:
            info["error"] = (
                ("time limit" if res.returncode is None else f"exit {res.returncode}")
                + ": "
                + _tail(res.stderr, 5)
            )
            log(f"{stem}: FAILED: {info['error']}")
        else:
            log(f"{stem}: done in {res.seconds:.0f} s, peak RSS {res.peak_rss_mb:.0f} MB")
        (self.dir / f"{stem}.log").write_text(res.stdout + "\n--- stderr ---\n" + _tail(res.stderr, 200))
        (self.dir / f"{stem}.json").write_text(json.dumps(info, indent=2))


def all_scripts() -> list[str]:
    extra = sorted(p.name for p in BENCH.glob("bench_*.py") if p.name not in SCRIPTS and p.name not in OWN)
    return [*SCRIPTS, *extra]


def code_version() -> str:
    """The commit measured, and whether the package's sources differed from it (read-only git)."""
    import subprocess

    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=BENCH.parent,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "core", "tui"],
            cwd=BENCH.parent,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"{head}{' + uncommitted changes in core/tui' if dirty else ''}" if head else "unknown"


def _load() -> list[float]:
    import os

    return [round(x, 2) for x in os.getloadavg()]


def _tail(text: str, n: int) -> str:
    lines = [ln for ln in text.splitlines() if "Deprecation warning" not in ln]
    return "\n".join(lines[-n:])


# --- the report -------------------------------------------------------------------------------------


def load_results(directory: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for path in directory.glob("*.json"):
        if path.name.endswith(".status.json"):
            continue
        try:
            out[path.stem] = json.loads(path.read_text())
        except ValueError:
            continue
        status = directory / f"{path.stem}.status.json"
        if status.exists():
            out[path.stem]["_status"] = json.loads(status.read_text())
    for path in directory.glob("*.status.json"):
        name = path.name.removesuffix(".status.json")
        if name not in out:
            out[name] = {"_status": json.loads(path.read_text())}
    return out


def verdict(ok: bool | None) -> str:
    return "-" if ok is None else ("PASS" if ok else "MISS")


def rss(r: dict[str, Any] | None) -> str:
    if not r:
        return "-"
    status = r.get("_status") or {}
    value = status.get("peak_rss_mb") or r.get("peak_rss_mb")
    return f"{value:.0f} MB" if value else "-"


def rss_recall(r: dict[str, Any] | None) -> str:
    """Peak RSS of a recall benchmark's recall phase (before its diagnostics map the data set's vectors)."""
    value = (r or {}).get("peak_rss_recall_mb")
    return f"{value:.0f} MB" if value else rss(r)


def p(r: dict[str, Any] | None, *path: str) -> float | None:
    cur: Any = r
    for key in path:
        if not isinstance(cur, dict) or key not in cur:
            return None
        cur = cur[key]
    return cur if isinstance(cur, (int, float)) else None


def report(mode: str, results: dict[str, Any], started: float, info: dict[str, Any], steps: list[str]) -> str:
    cfg = MODES[mode]
    sizes = cfg["sizes"]
    largest = label(sizes[-1])
    v = info["versions"]
    lines = [
        "# memdeck benchmarks",
        "",
        f"Written {datetime.now().strftime('%Y-%m-%d %H:%M')} by `python bench/run.py --{mode}`"
        f" ({'--report-only: from the results already there' if not steps else 'all steps' if steps == STEPS else 'steps: ' + ', '.join(steps)}); "
        f"{run_span(results, started)}.",
        "",
        f"Machine: {info['cpu']}, {info['cores']} cores, {info['ram_gib']} GiB RAM, {info['os']}, "
        f"Python {info['python']}. Load average at the start {first_load(results) or info['load_avg']} (the cores are shared with "
        "other work; each section gives the load around its run).",
        "",
        "Versions: " + ", ".join(f"{k} {val}" for k, val in v.items()) + ".",
        "",
        "Code measured: " + codes_measured(results) + ".",
        "",
        "Timings are warm (after 20 warm-up queries), in milliseconds, p50/p95 over the queries; peak RSS "
        "is that benchmark process's own maximum resident set (wait4).",
        "",
    ]
    lines += targets_table(results, sizes, largest)
    lines += recall_section(results, sizes)
    lines += engines_section(results, sizes)
    lines += peers_section(results, sizes)
    lines += ann_section(results, sizes)
    lines += analysis_section(results, sizes)
    lines += ingest_section(results)
    lines += smallwrites_section(results)
    lines += scripts_section(results)
    return "\n".join(lines) + "\n"


def codes_measured(results: dict[str, Any]) -> str:
    codes: dict[str, list[str]] = {}
    for name, r in sorted(results.items()):
        st = r.get("_status") or r
        codes.setdefault(st.get("code") or "not recorded", []).append(name)
    if len(codes) == 1:
        return f"commit {next(iter(codes))} for every step"
    return "; ".join(f"{code}: {', '.join(names)}" for code, names in codes.items())


def first_load(results: dict[str, Any]) -> list[float] | None:
    firsts = [
        (st["at"], st.get("load_before"))
        for r in results.values()
        if (st := r.get("_status") or (r if "load_before" in r else None)) and st.get("at")
    ]
    return min(firsts)[1] if firsts else None


def run_span(results: dict[str, Any], started: float) -> str:
    """The measured run's start, end and length, from its steps' own records (also right for --report-only)."""
    spans = []
    for r in results.values():
        st = r.get("_status") or (r if "at" in r and "seconds" in r else None)
        if st and st.get("at") and st.get("seconds") is not None:
            end = datetime.fromisoformat(st["at"]).timestamp()
            spans.append((end - float(st["seconds"]), end))
    if not spans:
        return f"total run time {(time.time() - started) / 60:.1f} min"
    t0, t1 = min(s for s, _ in spans), max(e for _, e in spans)
    return (
        f"steps ran {datetime.fromtimestamp(t0).strftime('%Y-%m-%d %H:%M')} to "
        f"{datetime.fromtimestamp(t1).strftime('%H:%M')}, total run time {(t1 - t0) / 60:.1f} min"
    )


def peer_ms(value: float | None) -> str:
    """A peer's figure, or why there is none (a run left out with --skip, e.g. Chroma's hour-long 1M build)."""
    return f"{fmt_ms(value)} ms" if value is not None else "not run in this run"


def targets_table(results: dict[str, Any], sizes: list[int], largest: str) -> list[str]:
    rows = [
        "## Targets",
        "",
        "| figure | measured | target | peer | result | peak RSS |",
        "|---|---|---|---|---|---|",
    ]
    big = results.get(f"recall-{largest}")
    value = p(big, "recall_excl_embed", "p50")
    is_1m = largest == "1M"
    chroma = results.get(f"chroma-{largest}")
    rows.append(
        f"| recall p50 at {largest}, excl. query embedding (hybrid + principal filter + composite score) | "
        f"{fmt_ms(value)} ms | <= {TARGETS['recall_1m_ms']:.0f} ms at 1M | Chroma vector-only "
        f"{peer_ms(p(chroma, 'vector', 'p50'))} | "
        f"{verdict(None if value is None else value <= TARGETS['recall_1m_ms']) if is_1m else '- (1M only in --full)'} | {rss_recall(big)} |"
    )
    for size in sizes:
        mine = results.get(f"recall-{label(size)}")
        peer = results.get(f"chroma-{label(size)}")
        a, b = p(mine, "recall_excl_embed", "p50"), p(peer, "vector", "p50")
        rows.append(
            f"| recall p50 at {label(size)} vs Chroma vector-only p50 | {fmt_ms(a)} ms | <= Chroma | {fmt_ms(b)} ms "
            f"(ratio {a / b:.2f}x) | {verdict(a <= b) if a and b else '-'} | {rss_recall(mine)} / {rss(peer)} |"
            if a and b
            else f"| recall p50 at {label(size)} vs Chroma vector-only p50 | {fmt_ms(a)} ms | <= Chroma | "
            f"{peer_ms(b)} | - | {rss_recall(mine)} / {rss(peer)} |"
        )
    rows += recall_targets(results, sizes)
    ing = results.get("ingest")
    ratio = p(ing, "ratio")
    rows.append(
        f"| batch add (remember_many) throughput / raw model.encode | {ratio:.2f}x | >= 0.9x | raw encode "
        f"{p(ing, 'raw_per_s'):.0f}/s | {verdict(ratio >= TARGETS['ingest_ratio'])} | {rss(ing)} |"
        if ratio
        else "| batch add / raw encode | - | >= 0.9x | - | - | - |"
    )
    sw = results.get("smallwrites")
    r = p(sw, "ratio_after_vs_fresh")
    rows.append(
        f"| recall p50 after {sw['writes']:,} single writes / freshly compacted | {r:.2f}x | <= 1.5x | "
        f"{fmt_ms(p(sw, 'recall_after_ms', 'p50'))} vs {fmt_ms(p(sw, 'recall_fresh_ms', 'p50'))} ms | "
        f"{verdict(r <= TARGETS['smallwrites_ratio'])} | {rss(sw)} |"
        if r
        else "| recall after 10,000 single writes / fresh | - | <= 1.5x | - | - | - |"
    )
    rows += script_targets(results)
    return rows + [""]


def script_targets(results: dict[str, Any]) -> list[str]:
    """Target rows from the other engineers' results files: their own target tables where they have one,
    the figures that carry a target where they have none (bench_app)."""
    rows: list[str] = []
    for stem, fig, target in (
        ("bench_rerank", "re-rank", "<= 16 ms"),
        ("bench_app", "first paint / keypress-to-repaint", "<= 1 s / <= 50 ms at 1M"),
        ("bench_forget", "forget at 100k", "<= 2 s"),
    ):
        r = results.get(stem)
        md = BENCH / f"RESULTS-{stem.removeprefix('bench_')}.md"
        if r is None and md.exists():  # not run here: its own last results, dated in its section below
            r = {"peak_rss_mb": None}
        if r is None:
            why = "not run" if (BENCH / f"{stem}.py").exists() else f"bench/{stem}.py absent"
            rows.append(f"| {fig} | {why} | {target} | | - | - |")
            continue
        err = r.get("error")
        if err or not md.exists():
            rows.append(
                f"| {fig} | {'FAILED: ' + err.splitlines()[-1][:120] if err else 'no results file'} | "
                f"{target} | | - | {rss(r)} |"
            )
            continue
        text = md.read_text(encoding="utf-8")
        topic = stem.removeprefix("bench_")
        found = app_targets(text, rss(r)) if stem == "bench_app" else target_rows(text, rss(r), topic)
        rows += found or [f"| {fig} | see its section | {target} | | - | {rss(r)} |"]
    return rows


def target_rows(text: str, peak: str, topic: str) -> list[str]:
    """Rows of any table in a results file whose header has a 'target' column, as measure/value/target/verdict."""
    out: list[str] = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or not any(c.lower() == "target" for c in cells):
            continue
        head = [c.lower() for c in cells]
        t = head.index("target")
        v = next((j for j, c in enumerate(head) if c in ("verdict", "met")), None)
        for row in lines[i + 2 :]:
            if not row.startswith("|"):
                break
            rc = [c.strip() for c in row.strip().strip("|").split("|")]
            if len(rc) != len(head):
                continue
            if t >= 3:  # e.g. size | index | figures... | target: the first two cells name the case
                measure = f"{topic}: {rc[0]} ({rc[1]})"
                value = " / ".join(f"{head[j]} {rc[j]}" for j in range(2, t))
            else:
                measure, value = f"{topic}: {rc[0]}", rc[t - 1] if t >= 1 else ""
            verdict_ = rc[v] if v is not None else "-"
            verdict_ = {"yes": "PASS", "no": "MISS"}.get(verdict_.lower(), verdict_)
            out.append(f"| {measure} | {value} | {rc[t]} | | {verdict_} | {peak} |")
    return out


def app_targets(text: str, peak: str) -> list[str]:
    """bench_app states no verdicts: first frame and repaint from its cold-start table, against the targets."""
    size = re.search(r"^# The app at ([\d,]+) memories", text, flags=re.M)
    at = size.group(1) if size else "?"
    rows = [ln for ln in text.splitlines() if ln.startswith("| `app` |")]
    if not rows:
        return []
    cells = [c.strip() for c in rows[-1].strip().strip("|").split("|")]  # the warm start (page cache filled)
    first = _num(cells[1])
    down = _num(cells[5].split("/")[0])
    page = _num(cells[6].split("/")[0])
    out = []
    if first is not None:
        out.append(
            f"| first paint at {at} (app, warm page cache) | {first:.2f} s | <= {TARGETS['first_paint_s']:.0f} s | "
            f"| {verdict(first <= TARGETS['first_paint_s'])} | {peak} |"
        )
    if down is not None:
        worst = max(x for x in (down, page) if x is not None)
        out.append(
            f"| keypress to repaint at {at} (down / pagedown p50, real terminal) | {down:.1f} / "
            f"{page if page is not None else float('nan'):.1f} ms | <= {TARGETS['repaint_ms']:.0f} ms | | "
            f"{verdict(worst <= TARGETS['repaint_ms'])} | {peak} |"
        )
    return out


def _num(text: str) -> float | None:
    m = re.search(r"[-\d.]+", text or "")
    try:
        return float(m.group(0)) if m else None
    except ValueError:
        return None


def recall_section(results: dict[str, Any], sizes: list[int]) -> list[str]:
    out = [
        "## Recall (memdeck)",
        "",
        "`store.recall(query, principal=p, k=10)` with the default engine, the in-memory index (see the engines "
        "section): the principal and state filter before anything is scored, vector and full-text search over "
        "every tier, the composite score; each principal's partition loaded before the timed queries. One tier holds every row; ten principals of equal "
        "share, so the filter keeps 10 % of the rows. Where every principal's partition does not fit in "
        "`index_max_rows` (1M: ten of 100k rows, three fit), the queries are asked principal by principal, "
        "each partition loaded in the background as a long-lived process does and waited for before its first "
        "query (switching principal costs a load: see the engines section). Partitions of 8k rows or more rank a "
        "shortlist from 96 projected dimensions exactly (`core/recall/projection.py`). Excl. embedding: the query vector comes from a lookup "
        "(a vector near a stored row). Incl. embedding: the packaged all-MiniLM-L6-v2 embeds the query text. "
        "Peak RSS (excl.) is the process's high-water mark when the timed recalls end, before the diagnostics "
        "below map the data set's vectors for the exact search.",
        "",
        "| memories | index | recall p50 / p95 excl. embed | CPU p50 | search / score / rest p50 | incl. embed p50 / p95 | embed p50 | peak RSS (excl. / incl.) | load |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for size in sizes:
        r = results.get(f"recall-{label(size)}")
        m = results.get(f"model-{label(size)}")
        if not r:
            out.append(f"| {label(size)} | not measured | | | | | | | |")
            continue
        idx = "IVF_PQ + FTS" if r.get("ann_index") else "FTS (vector brute force)"
        out.append(
            f"| {label(size)} | {idx} | {fmt_ms(p(r, 'recall_excl_embed', 'p50'))} / {fmt_ms(p(r, 'recall_excl_embed', 'p95'))} | "
            f"{fmt_ms(p(r, 'recall_cpu_ms', 'p50'))} | {fmt_ms(p(r, 'search_ms', 'p50'))} / {fmt_ms(p(r, 'score_ms', 'p50'))} / "
            f"{fmt_ms(p(r, 'rest_ms', 'p50'))} | {fmt_ms(p(m, 'recall_incl_embed', 'p50'))} / "
            f"{fmt_ms(p(m, 'recall_incl_embed', 'p95'))} | {fmt_ms(p(m, 'embed_ms', 'p50'))} | {rss_recall(r)} / {rss(m)} | "
            f"{_loads(r)} |"
        )
    defaults = [(label(sz), results.get(f"recall-{label(sz)}", {}).get("recall_defaults")) for sz in sizes]
    defaults = [(lb, d) for lb, d in defaults if d]
    if defaults:
        out += [
            "",
            "The figures above call `recall(..., record_access=False, trace=False)`: the read path alone. "
            "As an agent calls it, on a copy of the store (defaults: access counts updated in a background "
            "thread after each recall, a trace queued for DuckDB), p50 / p95 ms:",
            "",
            "| memories | read path | defaults | access counts only | trace only | fragments after |",
            "|---|---|---|---|---|---|",
        ]
        for sz in sizes:
            r = results.get(f"recall-{label(sz)}") or {}
            if "recall_defaults" not in r:
                continue

            def pp(key: str) -> str:
                return f"{fmt_ms(p(r, key, 'p50'))} / {fmt_ms(p(r, key, 'p95'))}"

            out.append(
                f"| {label(sz)} | {pp('recall_excl_embed')} | {pp('recall_defaults')} | "
                f"{pp('recall_access_only')} | {pp('recall_trace_only')} | {r.get('fragments_after_defaults')} |"
            )
    keys = [
        ("vector_prefilter", "vector, as recall runs it"),
        ("vector_ids_only", "vector, ids only"),
        ("vector_ids_norefine", "vector, ids only, no refine"),
        ("vector_minimal_cols", "vector, minimal columns"),
        ("vector_nofilter", "vector, no filter"),
        ("fts_prefilter", "FTS, as recall runs it"),
        ("fts_ids_only", "FTS, ids only"),
        ("fts_ids_nofilter", "FTS, ids only, no filter"),
    ]
    out += [
        "",
        "The parts of the search step, each alone on the same queries, p50 ms wall / CPU. 'As recall runs "
        "it': principal + state prefilter, the 23 candidate columns, nprobes 24 and refine 4 once indexed. "
        f"'Minimal columns': only {len(MINIMAL_SET)} columns scoring and a result line need.",
        "",
        "| memories | " + " | ".join(t for _, t in keys) + " |",
        "|---|" + "---|" * len(keys),
    ]
    for size in sizes:
        r = results.get(f"recall-{label(size)}")
        if not r or "parts" not in r:
            continue
        cells = []
        for key, _ in keys:
            part = r["parts"].get(key, {})
            cpu = part.get("cpu_p50")
            cells.append(f"{fmt_ms(part.get('p50'))}" + (f" / {fmt_ms(cpu)}" if cpu is not None else ""))
        out.append(f"| {label(size)} | " + " | ".join(cells) + " |")
    return out + [""]


MINIMAL_SET = [
    "id",
    "tier",
    "principal",
    "agent",
    "text",
    "importance",
    "pinned",
    "state",
    "access_count",
    "created_at",
    "updated_at",
    "tier anchor time",
    "vector",
]


def peers_section(results: dict[str, Any], sizes: list[int]) -> list[str]:
    out = [
        "## Peers on the same data and queries",
        "",
        "Chroma 1.5.9: persistent client, HNSW (cosine), the same vectors and texts, `principal` as metadata; "
        "vector search only. Prototype: SQLite FTS5 + numpy brute force + reciprocal rank fusion (k=60), "
        "principal filter on both (bench/peers.py). Ratio = memdeck recall p50 / peer p50 (below 1: memdeck "
        "faster), memdeck doing hybrid search and the composite score in every case.",
        "",
        "| memories | memdeck recall p50 | Chroma vector p50 / p95 | ratio | Chroma + where p50 / p95 | ratio | prototype hybrid p50 / p95 | ratio | Chroma add | memdeck write + index build | peak RSS memdeck / Chroma / prototype |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for size in sizes:
        m = results.get(f"recall-{label(size)}")
        c = results.get(f"chroma-{label(size)}")
        pr = results.get(f"proto-{label(size)}")
        mine = p(m, "recall_excl_embed", "p50")

        def ratio(x: float | None) -> str:
            return f"{mine / x:.2f}x" if mine and x else "-"

        add = p(c, "build", "add_s")
        add_txt = (
            (
                f"{add:.0f} s ({p(c, 'build', 'add_rows_per_s'):.0f}/s)"
                + (" (when built)" if (c or {}).get("build", {}).get("cached") else "")
            )
            if add
            else ("cached" if c else "-")
        )
        out.append(
            f"| {label(size)} | {fmt_ms(mine)} | {fmt_ms(p(c, 'vector', 'p50'))} / {fmt_ms(p(c, 'vector', 'p95'))} | "
            f"{ratio(p(c, 'vector', 'p50'))} | {fmt_ms(p(c, 'vector_where', 'p50'))} / {fmt_ms(p(c, 'vector_where', 'p95'))} | "
            f"{ratio(p(c, 'vector_where', 'p50'))} | {fmt_ms(p(pr, 'hybrid', 'p50'))} / {fmt_ms(p(pr, 'hybrid', 'p95'))} | "
            f"{ratio(p(pr, 'hybrid', 'p50'))} | {add_txt} | {_build_txt(m)} | {rss_recall(m)} / {rss(c)} / {rss(pr)} |"
        )
    return out + [""]


def _build_txt(m: dict[str, Any] | None) -> str:
    b = (m or {}).get("build") or {}
    if "write_s" not in b:
        return "-"
    return f"{b['write_s']:.0f} s + {b['index_s']:.0f} s" + (" (when built)" if b.get("cached") else "")


def ann_section(results: dict[str, Any], sizes: list[int]) -> list[str]:
    out = [
        "## Vector recall@10 against exact search",
        "",
        "Exact: numpy cosine over the query principal's active rows. memdeck: `vector_search` as recall runs "
        "it (prefilter, nprobes 24, refine 4). 'Top 10 in candidates': share of the exact top 10 among the "
        "40 vector candidates the composite score sees.",
        "",
        "| memories | memdeck index | recall@10 | exact top 10 in the 40 candidates | Chroma + where recall@10 |",
        "|---|---|---|---|---|",
    ]
    for size in sizes:
        r = results.get(f"recall-{label(size)}")
        c = results.get(f"chroma-{label(size)}")
        if not r:
            continue
        a = r.get("ann_recall", {})
        cr = p(c, "vector_where", "recall_at_10")
        out.append(
            f"| {label(size)} | {'IVF_PQ' if r.get('ann_index') else 'none (exact)'} | "
            f"{a.get('recall_at_10', float('nan')):.3f} | {a.get('top10_in_candidates', float('nan')):.3f} | "
            f"{'-' if cr is None else f'{cr:.3f}'} |"
        )
    return out + [""]


def ingest_section(results: dict[str, Any]) -> list[str]:
    r = results.get("ingest")
    out = ["## Ingest (real model)", ""]
    if not r:
        return out + ["Not measured.", ""]
    rc = r["ratio_chunks"]
    out += [
        f"{r['texts']:,} LoCoMo turns in chunks of {r['chunk']}: for each chunk `store.remember_many` (semantic "
        "tier, redaction on, one commit) and `SentenceTransformer.encode` of the same texts (batch 64, "
        "normalised), alternating which goes first, so both see the same load. Torch threads: "
        f"{r.get('torch_threads')}.",
        "",
        "| measure | value |",
        "|---|---|",
        f"| raw encode | {r['raw_per_s']:.0f} texts/s ({r['raw_encode_s']:.1f} s) |",
        f"| remember_many | {r['store_per_s']:.0f} texts/s ({r['remember_many_s']:.1f} s) |",
        f"| ratio (throughput, totals) | {r['ratio']:.2f}x (per chunk p50 {rc['p50']:.2f}, p95 {rc['p95']:.2f}) |",
        *_graph_rows(r),
        f"| remember_many without the model (hash embedder) | {r['overhead_without_model_s']:.2f} s for {r['texts']:,} texts |",
        f"| single remember() p50 / p95 | {fmt_ms(r['single_remember_ms']['p50'])} / {fmt_ms(r['single_remember_ms']['p95'])} ms |",
        f"| of which one-text embedding p50 | {fmt_ms(r['single_embed_ms']['p50'])} ms |",
        f"| peak RSS | {rss(r)} |",
        f"| load before / after | {_loads(r)} |",
    ]
    d, pz = results.get("embed-default"), results.get("embed-passive")
    if d or pz:
        out += [
            "",
            "One short query embedding (what every recall pays first), torch defaults against "
            "`OMP_WAIT_POLICY=PASSIVE` (OpenMP threads sleep instead of spinning while they wait):",
            "",
            "| setting | p50 | p95 | CPU p50 | load before -> after |",
            "|---|---|---|---|---|",
        ]
        for label_, x in (("default", d), ("OMP_WAIT_POLICY=PASSIVE", pz)):
            if x:
                out.append(
                    f"| {label_} | {fmt_ms(p(x, 'embed_ms', 'p50'))} ms | {fmt_ms(p(x, 'embed_ms', 'p95'))} ms | "
                    f"{fmt_ms(p(x, 'cpu_ms', 'p50'))} ms | {_loads(x)} |"
                )
    return out + [""]


def _graph_rows(r: dict[str, Any]) -> list[str]:
    """The graph's catch-up: it is indexed after each write, in the background (bench_core.py ingest --drain)."""
    waits = r.get("graph_catch_up_s")
    if not waits:
        return []
    if r.get("graph_drain") == "chunk":
        return [
            f"| graph caught up after each call returned (waited outside both timers) | p50 "
            f"{sorted(waits)[len(waits) // 2]:.2f} s, max {max(waits):.2f} s, last chunk {waits[-1]:.2f} s |",
            f"| remember_many plus that wait / raw encode | {r['ratio_with_graph_wait']:.2f}x |",
        ]
    return [
        f"| graph caught up after the last chunk returned (indexing ran beside the chunks) | {waits[-1]:.2f} s |"
    ]


def smallwrites_section(results: dict[str, Any]) -> list[str]:
    r = results.get("smallwrites")
    out = ["## Many small writes", ""]
    if not r:
        return out + ["Not measured.", ""]
    if "writes" not in r:
        st = r.get("_status") or {}
        return out + [
            f"No result (exit {st.get('returncode', '-')}, {st.get('seconds', '-')} s); see "
            "`bench/.work/results-<mode>/smallwrites.log`.",
            "",
        ]
    out += [
        f"A store of {r['base_rows']:,} memories (hash embedder), then {r['writes']:,} single `remember()` calls; "
        f"compaction runs inside the write once a table has {r['compact_fragment_threshold']} fragments "
        "(`store.compact_fragment_threshold`). Recall p50 after the writes, against a copy of the same store "
        "compacted as `memdeck maintain` does (`store.engine.compact` + `store.engine.ensure_indexes`); the two stores answer "
        "each query in turn, so a change in the machine's load hits both alike.",
        "",
        "| measure | value |",
        "|---|---|",
        f"| writes | {r['write_total_s']:.0f} s in all; p50 {fmt_ms(r['write_ms']['p50'])} ms, p95 {fmt_ms(r['write_ms']['p95'])} ms |",
        f"| writes that compacted | {r['writes_that_compacted']} (p50 {fmt_ms(r['compacting_write_ms']['p50'])} ms) |",
        f"| recall p50 before the writes | {fmt_ms(r['recall_before_ms']['p50'])} ms |",
        f"| recall p50 / p95 after | {fmt_ms(r['recall_after_ms']['p50'])} / {fmt_ms(r['recall_after_ms']['p95'])} ms |",
        f"| recall p50 / p95, freshly compacted | {fmt_ms(r['recall_fresh_ms']['p50'])} / {fmt_ms(r['recall_fresh_ms']['p95'])} ms |",
        f"| ratio | {r['ratio_after_vs_fresh']:.2f}x (target <= 1.5x) |",
        f"| fragments after / max seen / fresh | {r['fragments_after']} / {r['fragments_max_seen']} / {r['fragments_fresh']} |",
        f"| unindexed rows after the writes | {r['unindexed_rows_after']} |",
        f"| peak RSS | {rss(r)} |",
    ]
    return out + [""]


def scripts_section(results: dict[str, Any]) -> list[str]:
    out = []
    for script in all_scripts():
        stem = script.removesuffix(".py")
        r = results.get(stem)
        topic = stem.removeprefix("bench_")
        md = BENCH / f"RESULTS-{topic}.md"
        if not md.exists():  # a script may name its file with hyphens (RESULTS-graph-extract.md)
            md = BENCH / f"RESULTS-{topic.replace('_', '-')}.md"
        if r is None and not md.exists():
            out += [f"## {topic}", "", f"`bench/{script}` was not run and has no results file.", ""]
            continue
        if r is None:
            head = (
                f"Not run by this `run.py`: `bench/{script}`'s own last results, as its file gives them (its "
                "date, code and load are inside)."
            )
        else:
            st = r.get("_status", r)
            head = (
                f"`python {r.get('cmd', 'bench/' + script)}`: {r.get('seconds', '-')} s, peak RSS {rss(r)}, "
                f"load {r.get('load_before')} -> {r.get('load_after')}"
            )
            if r.get("error") or st.get("error"):
                head += f"; FAILED: {r.get('error') or st.get('error')}"
        body = md.read_text(encoding="utf-8") if md.exists() else "(no results file written)"
        # The script's own headings go under this section: its top level becomes ###.
        levels = [len(m) for m in re.findall(r"^(#+) ", body, flags=re.M)]
        shift = 3 - min(levels) if levels else 0
        body = re.sub(r"^(#+) ", lambda mt: "#" * (len(mt.group(1)) + shift) + " ", body, flags=re.M)
        out += [f"## {topic} (from bench/RESULTS-{topic}.md)", "", head, "", body.strip(), ""]
    return out


def _wall(parts: dict[str, Any], key: str) -> float:
    return float((parts.get(key) or {}).get("p50") or 0.0)


def analysis_section(results: dict[str, Any], sizes: list[int]) -> list[str]:
    """Why a target is missed, from this run's own figures (the parts table and the peers)."""
    big = label(sizes[-1])
    r = results.get(f"recall-{big}") or {}
    parts = r.get("parts") or {}
    c = results.get(f"chroma-{big}") or {}

    def cpu(key: str) -> float | None:
        return (parts.get(key) or {}).get("cpu_p50")

    out = ["## Where the time goes", ""]
    if parts:
        vec, ids, norefine = cpu("vector_prefilter"), cpu("vector_ids_only"), cpu("vector_ids_norefine")
        minimal, fts, fts_ids, fts_nof = (
            cpu("vector_minimal_cols"),
            cpu("fts_prefilter"),
            cpu("fts_ids_only"),
            cpu("fts_ids_nofilter"),
        )
        out += [
            f"At {big}, CPU p50 of each search alone (the wall figures above include waiting for a core):",
            "",
            f"- vector search as recall runs it {fmt_ms(vec)} ms: ANN with the prefilter and refine, ids only "
            f"{fmt_ms(ids)} ms (without refine {fmt_ms(norefine)} ms); reading the 23 candidate columns of the 40 "
            f"rows is the rest. With only the columns scoring and a result line need: {fmt_ms(minimal)} ms.",
            f"- full-text search as recall runs it {fmt_ms(fts)} ms: ids only {fmt_ms(fts_ids)} ms, ids only "
            f"without the principal prefilter {fmt_ms(fts_nof)} ms.",
            "- recall submits both searches of every tier at once to a thread pool and then scores in Python "
            f"(score p50 {fmt_ms(p(r, 'score_ms', 'p50'))} ms). Its wall p50 "
            f"{fmt_ms(p(r, 'recall_excl_embed', 'p50'))} ms against the two searches' wall p50 summed, "
            f"{fmt_ms(_wall(parts, 'vector_prefilter') + _wall(parts, 'fts_prefilter'))} ms: on two cores each "
            "search already keeps both busy, so running them at once does not shorten it here.",
        ]
        floor = (norefine or 0) + (fts_nof or 0)
        out += [
            f"- the floor of this design at {big}: the vector lookup with the prefilter but no refine and no "
            f"columns ({fmt_ms(norefine)} ms) plus the full-text lookup with no filter and no columns "
            f"({fmt_ms(fts_nof)} ms) is already {fmt_ms(floor)} ms, before the principal filter on full text, "
            "the candidate rows and the score.",
        ]
        out += plan_lines(r.get("plans") or {}, len(candidate_cols(r)))
        out += ftsfilter_lines(results.get("ftsfilter-memdeck"), results.get("ftsfilter-lance-default"))
        if c:
            out += [
                f"- Chroma answers vector-only from an HNSW graph held in memory: "
                f"{fmt_ms(p(c, 'vector', 'p50'))} ms; with a `where` on principal "
                f"{fmt_ms(p(c, 'vector_where', 'p50'))} ms."
            ]
        out.append("")
    d, pz = results.get("embed-default"), results.get("embed-passive")
    if d and pz:
        out += [
            f"Query embedding: {fmt_ms(p(d, 'embed_ms', 'p50'))} ms p50 with torch's defaults against "
            f"{fmt_ms(p(pz, 'embed_ms', 'p50'))} ms with `OMP_WAIT_POLICY=PASSIVE` (load {_loads(d)}). On a busy "
            "machine the default OpenMP threads spin while they wait and starve the thread doing the work.",
            "",
        ]
    small = results.get(f"recall-{label(sizes[0])}") or {}
    if "recall_defaults" in small:
        out += [
            f"Recall as an agent calls it (access counts and a trace written in the background) at "
            f"{label(sizes[0])}: p50 {fmt_ms(p(small, 'recall_defaults', 'p50'))} ms against "
            f"{fmt_ms(p(small, 'recall_excl_embed', 'p50'))} ms for the read path alone: on two cores the "
            "background writes of one recall compete with the next (see the recall section).",
            "",
        ]
    return out


def recall_targets(results: dict[str, Any], sizes: list[int]) -> list[str]:
    """The recall index's targets: p50 per size, against each peer, and as agents call it."""
    rows = []
    for size in sizes:
        lb = label(size)
        mine = results.get(f"recall-{lb}")
        a = p(mine, "recall_excl_embed", "p50")
        goal = TARGETS["recall_ms"][size]
        cpu = p(mine, "recall_cpu_ms", "p50")
        rows.append(
            f"| recall p50 at {lb}, excl. embedding | {fmt_ms(a)} ms (CPU {fmt_ms(cpu)} ms) | <= {goal:g} ms | | "
            f"{verdict(None if a is None else a <= goal)} | {rss_recall(mine)} |"
        )
        chroma, proto = results.get(f"chroma-{lb}"), results.get(f"proto-{lb}")
        for name, peer, key, bound in (
            ("Chroma + where", chroma, "vector_where", 1.0),
            ("prototype hybrid", proto, "hybrid", 1.0),
            ("Chroma vector-only", chroma, "vector", TARGETS["chroma_ratio"]),
        ):
            if name == "Chroma vector-only" and size > 100_000:
                continue
            b = p(peer, key, "p50")
            ratio = f" (ratio {a / b:.2f}x)" if a and b else ""
            rows.append(
                f"| recall p50 at {lb} vs {name} p50 | {fmt_ms(a)} ms | <= {bound:g}x peer | {peer_ms(b)}"
                f"{ratio} | {verdict(a <= bound * b) if a and b else '-'} | {rss_recall(mine)} / {rss(peer)} |"
            )
        d = p(mine, "recall_defaults", "p50")
        if d is not None and a:
            rows.append(
                f"| recall as agents call it (access counts + trace) at {lb} / read path | {d / a:.2f}x "
                f"({fmt_ms(d)} vs {fmt_ms(a)} ms) | <= {TARGETS['defaults_ratio']:g}x | | "
                f"{verdict(d <= TARGETS['defaults_ratio'] * a)} | |"
            )
    return rows


def engines_section(results: dict[str, Any], sizes: list[int]) -> list[str]:
    """The in-memory index against LanceDB's searches on the same queries, and what the index holds."""
    out = [
        "## Recall engines: the in-memory index against LanceDB's searches",
        "",
        '`[recall] engine = "memory"` (the default) answers from a per-principal index held in memory and '
        'rebuilt from LanceDB (core/recall/index.py); `engine = "lance"` runs LanceDB\'s vector and full-text '
        "searches per tier. Both are asked each query in turn, on one process, so the machine's load hits both "
        "alike. These queries are the timed ones asked again. Where the two differ, the cause is LanceDB's vector "
        "search, approximate once a table has an IVF_PQ index (its recall@10 against an exact scan is in the ANN "
        "section: below 1 at 100k and 1M), while the memory engine's is exact below 8k rows a partition and a "
        "projected shortlist ranked exactly past that. 'Target in top 10': how often the row a query was made from is among the ten returned. "
        "Index: bytes of what the partitions hold (float32 vectors, filter and score columns, the rest of each "
        "row as Arrow, BM25 postings) per 100k memories, and the time of a partition's first load.",
        "",
        "| memories | memory p50 | lance p50 | same ids, same order | same ids | target in top 10 (memory / lance) "
        "| index MB per 100k | first load s per 100k | partition loads (held at the end) | peak RSS |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for size in sizes:
        r = results.get(f"recall-{label(size)}") or {}
        e, ix = r.get("engines") or {}, r.get("index") or {}
        if not e:
            continue
        hits = e.get("target_in_top10") or {}
        out.append(
            f"| {label(size)} | {fmt_ms(e.get('memory_p50'))} | {fmt_ms(e.get('lance_p50'))} | "
            f"{e.get('same_order')}/{e.get('queries')} | {e.get('same_set')}/{e.get('queries')} | "
            f"{hits.get('memory')} / {hits.get('lance')} | {ix.get('mb_per_100k', '-')} | "
            f"{ix.get('load_s_per_100k', '-')} | {ix.get('partitions', '-')} ({ix.get('held_mb', '-')} MB) | "
            f"{rss_recall(r)} |"
        )
    folded = []
    for size in sizes:
        r = results.get(f"recall-{label(size)}") or {}
        if "unindexed_before" in r:
            before = sum(v or 0 for v in r["unindexed_before"].values())
            after = sum(v or 0 for v in (r.get("unindexed_after") or {}).values())
            folded.append(f"{label(size)} {before:,} -> {after:,}")
    if folded:
        out += [
            "",
            "Rows outside LanceDB's indices when the run began (rows rewritten by earlier runs' access "
            "counts), folded in by `store.engine.compact` as `memdeck maintain` and the app's scheduler do, before and "
            "after: "
            + "; ".join(folded)
            + ". LanceDB's path scores unindexed rows apart from the indexed ones "
            "(a cached 10k store with 2,259 of them ranked 14 of 200 queries in a different order from the memory "
            "engine, which scores every row alike; folded in, 200/200 agreed).",
        ]
    out.append("")
    return out


def candidate_cols(r: dict[str, Any]) -> list[str]:
    from memdeck.core.recall.search import candidate_columns

    return candidate_columns("semantic")


def plan_lines(plans: dict[str, Any], ncols: int) -> list[str]:
    """LanceDB's own plan metrics (median over 10 queries) for the full-text search: where its time goes."""
    full, ids, nof = (
        plans.get("fts_prefilter_all_columns"),
        plans.get("fts_prefilter_id"),
        plans.get("fts_nofilter_id"),
    )
    if not (full and ids and nof):
        return []

    def read_ms(m: dict[str, float]) -> float:  # LanceRead's elapsed includes its child, the index search
        return max(0.0, m.get("read_elapsed_ms", 0.0) - m.get("match_elapsed_ms", 0.0))

    rows = max(1.0, full.get("read_rows_scanned", 0.0))
    return [
        "- LanceDB's own plan metrics for the full-text search (`analyze_plan`, median of 10 queries): the "
        f"index search compares {full.get('match_index_comparisons', 0):,.0f} postings with the principal "
        f"prefilter against {nof.get('match_index_comparisons', 0):,.0f} without "
        f"({fmt_ms(ids.get('match_elapsed_ms'))} ms against {fmt_ms(nof.get('match_elapsed_ms'))} ms).",
        f"- reading the {ncols} candidate columns of the {rows:.0f} hits takes {fmt_ms(read_ms(full))} ms "
        f"({full.get('read_iops', 0):,.0f} reads, {full.get('read_bytes_read', 0) / 1e6:.2f} MB, "
        f"{full.get('read_fragments_scanned', 0):.0f} fragments); the id column alone {fmt_ms(read_ms(ids))} ms "
        f"({ids.get('read_iops', 0):,.0f} reads). Each (row, column) is a separate random read of a compressed "
        "block, so this grows with rows x columns more than with bytes.",
    ]


def ftsfilter_lines(mine: dict[str, Any] | None, default: dict[str, Any] | None) -> list[str]:
    """The filtered full-text search under memdeck's LANCE_FLAT_SEARCH_PERCENT_THRESHOLD and LanceDB's."""
    if not (mine and default and mine.get("answers") and default.get("answers")):
        return []
    same = sum(1 for a, b in zip(mine["answers"], default["answers"], strict=False) if a == b)
    return [
        f"- the principal-filtered full-text search alone at {label(mine['size'])} (ids and scores, "
        f"{mine['queries']} queries, `bench_core.py ftsfilter`): with LanceDB's default "
        "`LANCE_FLAT_SEARCH_PERCENT_THRESHOLD` of 10 % it scores the filter's rows one by one when they are at "
        f"most 10 % of the table, as one principal of ten is: {default.get('comparisons_p50') or 0:,.0f} postings "
        f"compared, p50 {fmt_ms(p(default, 'wall', 'p50'))} ms (CPU {fmt_ms(default.get('cpu_p50'))}). With the "
        f"1 % memdeck sets, it walks the posting lists with the filter as a mask: "
        f"{mine.get('comparisons_p50') or 0:,.0f} postings, p50 {fmt_ms(p(mine, 'wall', 'p50'))} ms (CPU "
        f"{fmt_ms(mine.get('cpu_p50'))}). Same ids and scores in {same} of {len(mine['answers'])} queries.",
    ]


def _loads(r: dict[str, Any]) -> str:
    st = r.get("_status") or {}
    return f"{st.get('load_before', '-')} -> {st.get('load_after', '-')}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--quick", action="store_true", help="10k and 100k (default)")
    group.add_argument("--full", action="store_true", help="10k, 100k and 1M")
    parser.add_argument("--steps", help=f"comma-separated subset of: {', '.join(STEPS)}")
    parser.add_argument(
        "--sizes",
        help="comma-separated subset of the mode's sizes to run (10k,100k,1M); "
        "the report covers every size of the mode",
    )
    parser.add_argument(
        "--skip", default="", help="comma-separated runs not to run, e.g. chroma-1M (an hour's build)"
    )
    parser.add_argument("--report-only", action="store_true", help="rewrite RESULTS.md from the last results")
    parser.add_argument("--out", default=str(BENCH / "RESULTS.md"))
    args = parser.parse_args(argv)
    mode = "full" if args.full else "quick"
    steps = STEPS if not args.steps else [s.strip() for s in args.steps.split(",") if s.strip()]
    unknown = [s for s in steps if s not in STEPS]
    if unknown:
        print(f"unknown step(s): {', '.join(unknown)}; known: {', '.join(STEPS)}", file=sys.stderr)
        return 2
    by_label = {label(size): size for size in MODES[mode]["sizes"]}
    picked = [s.strip() for s in (args.sizes or "").split(",") if s.strip()]
    if any(s not in by_label for s in picked):
        print(f"unknown size(s) for --{mode}: {args.sizes}; known: {', '.join(by_label)}", file=sys.stderr)
        return 2
    started = time.time()
    info = machine_info()
    runner = Runner(
        mode, steps, [by_label[s] for s in picked], {s.strip() for s in args.skip.split(",") if s.strip()}
    )
    if not args.report_only:
        runner.run()
    text = report(mode, load_results(runner.dir), started, info, [] if args.report_only else steps)
    Path(args.out).write_text(text, encoding="utf-8")
    log(f"wrote {args.out} ({(time.time() - started) / 60:.1f} min)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
