"""How long a forget takes: one memory (with its signed receipt) at 10k and 100k memories, with and without
an ANN index, and a whole principal. Writes bench/RESULTS-forget.md.

    python bench/bench_forget.py            # 10k and 100k (--quick, the default)
    python bench/bench_forget.py --sizes 10000

Each size runs in its own process (peak RSS measured by wait4 on it). The store is written through
``Store.remember_many`` (so rows land in bounded fragments as in real use) with synthetic texts and random
normalised 384-d vectors; redaction is off while building (not what is measured here). Each forget is the
full purge: delete, rewrite of the fragments that held the rows, cleanup of old versions, index remap,
trace scrub, the checks (every file of the store read back) and the signed receipt.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import BENCH, WORK, Timer, bench_env, log, machine_info, peak_rss_mb, run_child, vocabulary

TARGET_S = 2.0
DIM = 384
PRINCIPALS = [f"user-{i}" for i in range(10)]


class LookupEmbedder:
    """The vector prepared for each text (random, normalised); no model in the loop."""

    semantic = False  # prepared vectors: no meaning to read from a name

    def __init__(self, table: dict[str, np.ndarray]) -> None:
        self.name = "hash-384"
        self.dim = DIM
        self.table = table

    @property
    def available(self) -> bool:
        return True

    @property
    def loaded(self) -> bool:
        return True

    @property
    def error(self) -> str | None:
        return None

    def load(self) -> None:
        return None

    def encode(self, texts: list[str]) -> np.ndarray:
        rng = np.random.default_rng(len(texts))
        out = []
        for text in texts:
            vec = self.table.get(text)
            if vec is None:
                vec = rng.standard_normal(DIM).astype(np.float32)
                vec /= np.linalg.norm(vec)
            out.append(vec)
        return np.vstack(out).astype(np.float32)


def build(size: int, root: Path, storage: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
    """``storage``: ``Store.open``'s ``storage_uri`` and ``storage_options`` for tables in a bucket."""
    from memdeck.core.config import load_config
    from memdeck.core.store import Store

    rng = np.random.default_rng(size)
    vocab = vocabulary()
    texts = [" ".join(rng.choice(vocab, size=int(rng.integers(8, 18)))) + f" n{i}" for i in range(size)]
    vectors = rng.standard_normal((size, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    config = load_config()
    config["redaction"] = {**config["redaction"], "enabled": False}
    config["formation_filter"] = {"enabled": False}
    # No ANN index until the benchmark asks for one (ensure_indexes builds it from 50,000 rows otherwise).
    config["store"] = {**config["store"], "ann_min_rows": 10**9}
    embedder = LookupEmbedder(dict(zip(texts, vectors, strict=True)))
    shutil.rmtree(root, ignore_errors=True)
    store = Store.open(root, embedder=embedder, config=config, **(storage or {}))
    info: dict[str, Any] = {}
    with Timer() as t:
        batch = 20_000
        for start in range(0, size, batch):
            store.remember_many(
                [
                    {
                        "text": texts[i],
                        "tier": "episodic",
                        "principal": PRINCIPALS[i % len(PRINCIPALS)],
                        "force": True,
                    }
                    for i in range(start, min(size, start + batch))
                ]
            )
    info["write_s"] = round(t.seconds, 1)
    # A few facts derived from the memories the benchmark forgets: the purge cascades to them.
    victims = [store.list(tier="episodic", limit=1, offset=size // 2 + k * 997)[0] for k in range(5)]
    for v in victims:
        store.remember(
            f"fact learned from {v.id}", tier="semantic", principal=v.principal, sources=[v.id], force=True
        )
    with Timer() as t:
        store.engine.ensure_indexes("episodic")
        store.engine.compact("episodic")
    info["index_s"] = round(t.seconds, 1)
    info["fragments"] = len(store.engine.table("episodic").to_lance().get_fragments())
    info["rows"] = store.count()
    info["victims"] = [v.id for v in victims]
    return store, info


def forget_one(store: Any, mem_id: str) -> dict[str, Any]:
    from memdeck.core.forget import forget

    marks: list[tuple[str, float]] = []
    with Timer() as t:
        receipt = forget(
            store.engine, [mem_id], "benchmark", progress=lambda m: marks.append((m, time.perf_counter()))
        )
    steps = {}
    ends = [m[1] for m in marks[1:]] + [t.t0 + t.seconds]
    for (name, start), end in zip(marks, ends, strict=True):
        steps[name.split(":")[0]] = round((end - start) * 1000)
    return {
        "seconds": round(t.seconds, 3),
        "cpu_seconds": round(t.cpu_seconds, 3),
        "steps_ms": steps,
        "outcome": receipt["outcome"],
        "cascade": len(receipt["cascade"]),
        "failed": [c["name"] for c in receipt["checks"] if not c["passed"]],
    }


def child(size: int, ann: bool, out: Path) -> None:
    from memdeck.core.forget import forget_principal

    root = WORK / f"forget-{size}"
    log(f"building {size:,} memories in {root}")
    store, info = build(size, root)
    result: dict[str, Any] = {"size": size, "build": info, "runs": {}}
    log(f"forgetting one memory at a time (FTS index, vector brute force), {len(info['victims'][:3])} times")
    result["runs"]["fts"] = [forget_one(store, v) for v in info["victims"][:3]]
    if ann:
        log("building an IVF_PQ index (force_ann)")
        with Timer() as t:
            done = store.engine.ensure_indexes("episodic", force_ann=True)
        result["ann_build_s"] = round(t.seconds, 1)
        result["ann"] = done.get("ann")
        log("forgetting with the ANN index")
        result["runs"]["ann"] = [forget_one(store, v) for v in info["victims"][3:5]]
    principal = PRINCIPALS[3]
    n = store.count(__import__("memdeck.core.filters", fromlist=["Scope"]).Scope.of(principal))
    log(f"forgetting principal {principal} ({n:,} memories)")
    with Timer() as t:
        receipt = forget_principal(store.engine, principal, "benchmark")
    result["principal"] = {
        "memories": n,
        "seconds": round(t.seconds, 2),
        "cpu_seconds": round(t.cpu_seconds, 2),
        "outcome": receipt["outcome"],
        "failed": [c["name"] for c in receipt["checks"] if not c["passed"]],
    }
    result["peak_rss_mb"] = round(peak_rss_mb(), 1)
    store.close()
    out.write_text(json.dumps(result, indent=2))
    shutil.rmtree(root, ignore_errors=True)


def report(
    results: list[dict[str, Any]], info: dict[str, Any], started: datetime, load_after: list[float]
) -> str:
    v = info["versions"]
    lines = [
        "## Forget (core/forget.py)",
        "",
        (
            f"Run {started:%Y-%m-%d %H:%M} on {info['os']}, {info['cpu']}, {info['cores']} CPUs, {info['ram_gib']} GiB "
            f"(load average {info['load_avg'][0]} at the start, {load_after[0]} at the end: the machine is shared), "
            f"Python {info['python']}, lancedb {v['lancedb']}, pylance {v['pylance']}, duckdb {v['duckdb']}, "
            f"pyarrow {v['pyarrow']}. `python bench/bench_forget.py`."
        ),
        "",
        (
            "One forget = plan under the exclusive lock, delete by id, cascade, rewrite of the fragments holding the "
            "rows (at most `store.max_rows_per_fragment` = 8,192 rows each) with the index remap, cleanup of every "
            "older version, trace scrub, the checks (every Lance data and index file decoded, manifests, DuckDB and "
            "other files read raw, vector and keyword searches) and the signed receipt. Wall time, then this "
            "process's CPU time."
        ),
        "",
        "| memories | index | forget one memory (wall, each run) | CPU | target | met | slowest steps (ms) | peak RSS |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        if "error" in r:
            lines.append(f"| {r['size']:,} | - | failed: {r['error']} | | <= {TARGET_S:.0f} s | no | | |")
            continue
        for kind, runs in r["runs"].items():
            walls = [x["seconds"] for x in runs]
            cpus = [x["cpu_seconds"] for x in runs]
            worst = max(runs, key=lambda x: x["seconds"])
            slow = ", ".join(
                f"{k} {v}" for k, v in sorted(worst["steps_ms"].items(), key=lambda kv: -kv[1])[:3]
            )
            ok = all(x["outcome"] == "verified" for x in runs)
            met = "yes" if np.median(walls) <= TARGET_S and ok else "no"
            ann = r.get("ann") or {}
            label = (
                "FTS, vector brute force"
                if kind == "fts"
                else f"IVF_PQ ({ann.get('partitions')} partitions) + FTS"
            )
            lines.append(
                f"| {r['size']:,} | {label} | {', '.join(f'{w:.2f}' for w in walls)} s (median {np.median(walls):.2f}) "
                f"| {np.median(cpus):.2f} s | <= {TARGET_S:.0f} s | {met} | {slow} | {r['peak_rss_mb']:.0f} MB |"
            )
    lines += ["", "| memories | whole principal | wall | CPU | checks |", "|---|---|---|---|---|"]
    for r in results:
        if "error" in r:
            continue
        p = r["principal"]
        lines.append(
            f"| {r['size']:,} | {p['memories']:,} memories | {p['seconds']:.2f} s | {p['cpu_seconds']:.2f} s | "
            f"{p['outcome']}{' ' + ', '.join(p['failed']) if p['failed'] else ''} |"
        )
    lines += [
        "",
        "| memories | write (remember_many) | index + compact | fragments | ANN build |",
        "|---|---|---|---|---|",
    ]
    for r in results:
        if "error" in r:
            continue
        b = r["build"]
        lines.append(
            f"| {r['size']:,} | {b['write_s']} s | {b['index_s']} s | {b['fragments']} | "
            f"{str(r['ann_build_s']) + ' s' if 'ann_build_s' in r else '-'} |"
        )
    failed = [x for r in results if "runs" in r for runs in r["runs"].values() for x in runs if x["failed"]]
    lines += ["", f"Every receipt verified: {'yes' if not failed else 'no: ' + str(failed[:2])}.", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="10k and 100k (the default)")
    parser.add_argument(
        "--full", action="store_true", help="the same sizes (a forget is bounded by fragment size)"
    )
    parser.add_argument("--sizes", help="comma-separated sizes, e.g. 10000,100000")
    parser.add_argument("--no-ann", action="store_true", help="skip the IVF_PQ case at the largest size")
    parser.add_argument("--child", nargs=2, metavar=("SIZE", "OUT"), help=argparse.SUPPRESS)
    parser.add_argument("--ann", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out", default=str(BENCH / "RESULTS-forget.md"))
    args = parser.parse_args(argv)
    if args.child:
        child(int(args.child[0]), args.ann, Path(args.child[1]))
        return 0
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else [10_000, 100_000]
    started = datetime.now()
    info = machine_info()
    results = []
    for size in sizes:
        out = WORK / f"forget-{size}.json"
        out.unlink(missing_ok=True)
        cmd = [sys.executable, __file__, "--child", str(size), str(out)]
        if size == max(sizes) and not args.no_ann:
            cmd.append("--ann")
        res = run_child(cmd, timeout=1800, env=bench_env())
        if res.ok and out.exists():
            data = json.loads(out.read_text())
            data["peak_rss_mb"] = max(data.get("peak_rss_mb", 0.0), res.peak_rss_mb)
            results.append(data)
        else:
            tail = (res.stderr or "").strip().splitlines()[-1:] or ["killed at the time limit"]
            results.append({"size": size, "error": tail[0][:200]})
            log(f"size {size} failed: {res.stderr[-2000:]}")
    text = report(results, info, started, [round(x, 2) for x in __import__("os").getloadavg()])
    Path(args.out).write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
