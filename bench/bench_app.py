"""The app at scale: cold start to first paint, keypress to repaint while paging, and resident memory,
over a synthetic store of up to 1,000,000 memories in all three tiers.

    python bench/bench_app.py build --size 1000000     # once; cached under bench/.work/app-<size>/
    python bench/bench_app.py run --size 1000000       # measures and writes bench/RESULTS-app.md

Three measurements, each in its own process so each peak RSS is that process's own:

* ``startup``: the app as a user starts it, in a real pseudo-terminal (140x42): the time to the first
  frame, to the browse screen, to the first rows, to "semantic search: ready"; then keys sent to the
  terminal, timed from the write to the first byte of the repaint; peak RSS (VmHWM) before quitting.
* ``keys``: the app under Pilot (``run_test``): ``pilot.press`` + ``pilot.pause()`` per key (p50/p95),
  and how long until the rows on screen have their data after a page jump, a tier switch, a filter,
  a sort and a search.
* the store is built by writing Arrow batches straight into LanceDB with the store's own schema.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import pty
import re
import select
import shutil
import struct
import sys
import termios
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import WORK, bench_env, log, machine_info, peak_rss_mb, percentiles

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
PYTHON = sys.executable
DIM = 384
SHARE = {"episodic": 0.45, "semantic": 0.45, "procedural": 0.10}
PRINCIPALS = [f"user-{i:02d}" for i in range(40)]
AGENTS = ["assistant", "coder", "scheduler", "researcher", "planner", "support"]
SUBJECTS = [
    "the team",
    "Dana",
    "Marco",
    "the client",
    "the on-call engineer",
    "Priya",
    "the release",
    "Kenji",
]
VERBS = ["prefers", "scheduled", "reviewed", "moved", "owns", "asked about", "fixed", "postponed", "approved"]
OBJECTS = [
    "the billing migration",
    "espresso with oat milk",
    "the Q3 roadmap",
    "the search indexer",
    "weekly standups",
    "the payments service",
    "the design review",
    "the incident report",
    "the Lisbon offsite",
    "the onboarding checklist",
    "dark mode",
    "the grant proposal",
]
CHUNK = 100_000
SIZE = (140, 42)


def store_path(size: int) -> Path:
    return WORK / f"app-{size}"


# --- building ---------------------------------------------------------------------------------------


def _texts(rng: np.random.Generator, n: int, start: int) -> list[str]:
    s = rng.integers(0, len(SUBJECTS), n)
    v = rng.integers(0, len(VERBS), n)
    o = rng.integers(0, len(OBJECTS), n)
    return [
        f"{SUBJECTS[a]} {VERBS[b]} {OBJECTS[c]} (note {start + i})"
        for i, (a, b, c) in enumerate(zip(s, v, o, strict=True))
    ]


def _batch(tier: str, start: int, n: int, schema: Any, t0: datetime) -> Any:
    import pyarrow as pa

    rng = np.random.default_rng(start * 7 + len(tier))
    texts = _texts(rng, n, start)
    vec = rng.standard_normal((n, DIM), dtype=np.float32)
    vec /= np.linalg.norm(vec, axis=1, keepdims=True)
    ts = pa.timestamp("us", tz="UTC")
    created_us = int(t0.timestamp() * 1e6) + rng.integers(0, 730 * 86_400 * 1_000_000, n)
    created = pa.array(created_us, pa.int64()).cast(ts)
    ids = [
        f"{tier[:3]}_{hashlib.blake2b(f'{tier}{start + i}'.encode(), digest_size=10).hexdigest()}"
        for i in range(n)
    ]
    cols: dict[str, Any] = {
        "id": ids,
        "tier": [tier] * n,
        "principal": np.asarray(PRINCIPALS)[rng.integers(0, len(PRINCIPALS), n)].tolist(),
        "agent": np.asarray(AGENTS)[rng.integers(0, len(AGENTS), n)].tolist(),
        "text": texts,
        "importance": rng.random(n).astype(np.float32),
        "pinned": (rng.random(n) < 0.01).tolist(),
        "state": np.where(rng.random(n) < 0.02, "deprecated", "active").tolist(),
        "tags": [[t] for t in np.asarray(["ops", "people", "project", "preference"])[rng.integers(0, 4, n)]],
        "access_count": rng.integers(0, 20, n),
        "last_accessed": pa.nulls(n, ts),
        "created_at": created,
        "updated_at": created,
        "content_sha256": [hashlib.sha256(t.encode()).hexdigest() for t in texts],
        "version": np.ones(n, dtype=np.int32),
        "deprecation_reason": pa.nulls(n, pa.string()),
        "superseded_by": pa.nulls(n, pa.string()),
        "meta": pa.nulls(n, pa.string()),
        "vector": pa.FixedSizeListArray.from_arrays(pa.array(vec.reshape(-1)), DIM),
        # episodic
        "session": [f"s-{(start + i) // 8:07d}" for i in range(n)],
        "started_at": created,
        "ended_at": created,
        "events": pa.nulls(n, pa.string()),
        "derived_facts": [[] for _ in range(n)],
        "closed": [True] * n,
        # semantic
        "sources": [[] for _ in range(n)],
        "confidence": rng.random(n).astype(np.float32),
        "evidence_count": rng.integers(1, 5, n),
        "last_reinforced_at": created,
        # procedural
        "name": [f"routine {(start + i) % 500}" for i in range(n)],
        "proc_version": np.ones(n, dtype=np.int32),
        "steps": [["open the runbook", "follow it"] for _ in range(n)],
        "learned_from": [[] for _ in range(n)],
    }
    arrays = [
        cols[f.name]
        if isinstance(cols[f.name], pa.Array) and cols[f.name].type == f.type
        else pa.array(cols[f.name], f.type)
        for f in schema
    ]
    return pa.Table.from_arrays(arrays, schema=schema)


def build(size: int, rebuild: bool = False) -> dict[str, Any]:
    """Write ``size`` synthetic memories over the three tiers; indexes as ``ensure_indexes`` builds them."""
    from memdeck.core.records import tier_schema
    from memdeck.core.store import Store

    path = store_path(size)
    marker = path / "bench-built"
    if marker.exists() and not rebuild:
        return {"size": size, "cached": True}
    if path.exists():
        shutil.rmtree(path)
    t0 = time.perf_counter()
    store = Store.open(path)  # the default config: the store's metadata names the real model
    base = datetime(2024, 6, 1, tzinfo=UTC)
    for tier, share in SHARE.items():
        n_tier = int(size * share)
        tbl, schema = store.engine.table(tier), tier_schema(tier, DIM)
        for start in range(0, n_tier, CHUNK):
            n = min(CHUNK, n_tier - start)
            tbl.add(_batch(tier, start, n, schema, base))
            log(f"{tier}: wrote {start + n:,}/{n_tier:,}")
        store.engine.compact(tier)
    written = time.perf_counter() - t0
    indexes = {tier: store.engine.ensure_indexes(tier) for tier in SHARE}
    store.close()
    marker.write_text("ok\n")
    out = {
        "size": size,
        "cached": False,
        "write_s": round(written, 1),
        "index_s": round(time.perf_counter() - t0 - written, 1),
        "indexes": indexes,
    }
    log(f"built {path}: {out}")
    return out


# --- start-up and keys in a real terminal -----------------------------------------------------------

_ANSI = re.compile(rb"\x1b\[[0-9;?<>=$]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>78]|\x1bP.*?\x1b\\", re.S)
MARKERS = {
    "first_frame": rb"memdeck",
    "browse_screen": rb"sorted by|counting",
    "rows": rb"[\d,]+ memories",
    "model_ready": rb"semantic search: ready|semantic search unavailable",
}
KEYS = {"down": b"\x1b[B", "pagedown": b"\x1b[6~", "end": b"\x1b[F", "home": b"\x1b[H"}


def _vm_hwm_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


class Terminal:
    """A child process in a pseudo-terminal of the bench's size."""

    def __init__(self, cmd: list[str], env: dict[str, str]) -> None:
        self.t0 = time.perf_counter()
        pid, fd = pty.fork()
        if pid == 0:  # the child: size its terminal, then become the app
            import fcntl

            fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", SIZE[1], SIZE[0], 0, 0))
            os.execvpe(cmd[0], cmd, env)
        self.pid, self.fd = pid, fd
        self.screen = b""

    def read(self, timeout: float) -> bytes:
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return b""
        try:
            data = os.read(self.fd, 65536)
        except OSError:
            return b""
        self.screen = (self.screen + _ANSI.sub(b"", data))[-200_000:]
        return data

    def wait_for(self, pattern: bytes, timeout: float) -> float | None:
        """Seconds since start when ``pattern`` first appears in the output (None: timed out)."""
        rx = re.compile(pattern)
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            if rx.search(self.screen):
                return time.perf_counter() - self.t0
            self.read(0.05)
        return None

    def drain(self, quiet: float = 0.3) -> None:
        while self.read(quiet):
            pass

    def key_latency(self, key: bytes) -> float:
        """Milliseconds from writing a key to the first byte of the repaint it causes."""
        self.drain(0.05)
        t = time.perf_counter()
        os.write(self.fd, key)
        while not self.read(2.0):
            if time.perf_counter() - t > 2.0:
                return float("nan")
        ms = (time.perf_counter() - t) * 1000
        self.drain(0.03)
        return ms

    def quit(self) -> float:
        hwm = _vm_hwm_mb(self.pid)
        os.write(self.fd, b"\x11")  # ctrl+q
        deadline = time.perf_counter() + 30
        while time.perf_counter() < deadline:
            self.read(0.1)
            pid, _status, usage = os.wait4(self.pid, os.WNOHANG)
            if pid:
                return max(hwm, usage.ru_maxrss / 1024)
        os.kill(self.pid, 9)
        os.wait4(self.pid, 0)
        return hwm


def startup(size: int, command: str, presses: int) -> dict[str, Any]:
    path = str(store_path(size))
    cmd = {
        "app": [PYTHON, "-c", f"import sys; from memdeck.tui.app import run; sys.exit(run({path!r}, None))"],
        "cli": [str(Path(PYTHON).parent / "memdeck"), "--store", path],
    }[command]
    env = {**bench_env(), "TERM": "xterm-256color", "COLUMNS": str(SIZE[0]), "LINES": str(SIZE[1])}
    term = Terminal(cmd, env)
    out: dict[str, Any] = {"command": command}
    for name, pattern in MARKERS.items():
        seconds = term.wait_for(pattern, 180)
        out[f"{name}_s"] = None if seconds is None else round(seconds, 3)
    out["rss_at_ready_mb"] = round(_vm_hwm_mb(term.pid), 1)
    term.drain(0.5)
    for key in ("down", "pagedown"):
        times = [term.key_latency(KEYS[key]) for _ in range(presses)]
        out[f"key_{key}_ms"] = {k: round(v, 2) for k, v in percentiles([t for t in times if t == t]).items()}
    out["key_end_ms"] = round(term.key_latency(KEYS["end"]), 2)
    out["key_home_ms"] = round(term.key_latency(KEYS["home"]), 2)
    out["peak_rss_mb"] = round(term.quit(), 1)
    return out


# --- keys under Pilot -------------------------------------------------------------------------------


async def _until(pilot: Any, check: Any, timeout: float = 120.0) -> float:
    """Seconds until ``check()`` holds, polling between event-loop turns."""
    t = time.perf_counter()
    while not check():
        if time.perf_counter() - t > timeout:
            return float("nan")
        await pilot.pause(0.002)
    return time.perf_counter() - t


async def _keys(size: int, presses: int) -> dict[str, Any]:
    from memdeck.core.filters import Scope
    from memdeck.core.store import Store
    from memdeck.tui.app import MemdeckApp
    from memdeck.tui.widgets.memory_table import MemoryTable

    out: dict[str, Any] = {}
    t = time.perf_counter()
    store = Store.open(store_path(size))
    app = MemdeckApp(store=store, scope=Scope.everyone())
    out["store_open_ms"] = round((time.perf_counter() - t) * 1000, 1)
    rss: dict[str, float] = {}
    async with app.run_test(size=SIZE) as pilot:

        def table() -> MemoryTable:
            return app.screen.query_one(MemoryTable)

        def ready() -> bool:
            try:
                return table().visible_loaded()
            except Exception:  # noqa: BLE001 - the browse screen is not mounted yet
                return False

        await _until(pilot, ready)
        out["rows_visible_s"] = round(time.perf_counter() - t, 3)
        out["count"] = table().count
        rss["rows visible"] = peak_rss_mb()
        waited = await _until(pilot, lambda: app.model_state != "loading", 300)
        out["model_ready_s"] = round(time.perf_counter() - t, 3) if waited == waited else None
        out["model_state"] = app.model_state
        rss["model loaded"] = peak_rss_mb()

        async def key_to_frame(key: str) -> float:
            """The key event handed to the app as the terminal driver would, until its frame is composed."""
            from textual import events

            t0 = time.perf_counter()
            event = events.Key(key, None)
            event.set_sender(app)
            app._driver.send_message(event)
            await pilot._wait_for_screen()  # every message the key caused has been handled
            app.screen._on_timer_update()  # and the frame is composed now, not at the next tick
            return (time.perf_counter() - t0) * 1000

        async def press(key: str) -> tuple[float, float, float]:
            rendered = await key_to_frame(key)
            await _until(pilot, ready)
            t0 = time.perf_counter()
            await pilot.press(key)  # Pilot itself waits for the process to look idle, twice
            await pilot.pause()
            paused = (time.perf_counter() - t0) * 1000
            await _until(pilot, ready)
            return rendered, paused, (time.perf_counter() - t0) * 1000

        for key in ("down", "pagedown"):
            results = [await press(key) for _ in range(presses)]
            out[f"{key}_key_to_frame_ms"] = percentiles([r[0] for r in results])
            out[f"{key}_press_pause_ms"] = percentiles([r[1] for r in results])
            out[f"{key}_rows_loaded_ms"] = percentiles([r[2] for r in results])
        for key in ("end", "home"):
            out[f"{key}_rows_loaded_ms"] = round((await press(key))[2], 1)
        rss["paging"] = peak_rss_mb()

        async def timed(action: Any) -> float:
            t0 = time.perf_counter()
            action()
            await pilot._wait_for_screen()
            await _until(pilot, lambda: table().count is not None and ready())
            return round((time.perf_counter() - t0) * 1000, 1)

        screen = app.screen
        for tier in ("episodic", "semantic", "procedural", None):
            out[f"tier_{tier or 'all'}_rows_ms"] = await timed(lambda tier=tier: screen.show_tier(tier))
        out["tier_episodic_again_rows_ms"] = await timed(lambda: screen.show_tier("episodic"))
        out["filter_principal_rows_ms"] = await timed(
            lambda: setattr(screen.query_one("#filter-principal"), "value", PRINCIPALS[3])
        )
        out["filter_count"] = table().count
        out["filter_clear_rows_ms"] = await timed(lambda: screen.query_one("#filter-principal").clear())
        out["sort_importance_rows_ms"] = await timed(lambda: screen._sort_by(2))
        rss["tiers, filters, sorts"] = peak_rss_mb()

        for label, semantic in (("keyword", False), ("semantic", True)):
            t0 = time.perf_counter()
            screen._search("espresso with oat milk", semantic)
            await pilot.pause()
            await app.workers.wait_for_complete()
            await _until(pilot, ready)
            out[f"search_{label}_ms"] = round((time.perf_counter() - t0) * 1000, 1)
            out[f"search_{label}_results"] = table().count
        rss["search"] = peak_rss_mb()
    out["peak_rss_mb"] = {k: round(v, 1) for k, v in rss.items()}
    store.close()
    return out


# --- report -----------------------------------------------------------------------------------------


def _child(args: list[str], timeout: float = 1800) -> dict[str, Any]:
    import subprocess

    proc = subprocess.run(
        [PYTHON, __file__, *args], capture_output=True, text=True, timeout=timeout, env=bench_env(), cwd=REPO
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{args} failed: {proc.stderr[-2000:]}")
    return json.loads(proc.stdout)


def report(size: int, startups: list[dict[str, Any]], keys: dict[str, Any], built: dict[str, Any]) -> str:
    info = machine_info()
    lines = [
        f"# The app at {size:,} memories",
        "",
        f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC by `python bench/bench_app.py run --size {size}`.",
        f"Machine: {info['cpu']}, {info['cores']} cores, {info['ram_gib']} GiB RAM, {info['os']}; "
        f"load average at start {info['load_avg']} (the machine is shared: wall times include waiting).",
        "Versions: python "
        + info["python"]
        + ", "
        + ", ".join(f"{k} {v}" for k, v in info["versions"].items() if v != "not installed")
        + ".",
        f"Store: {size:,} synthetic memories (45 % episodic, 45 % semantic, 10 % procedural; 40 principals), "
        f"random normalised 384-d vectors, written straight through LanceDB with the store's schema; "
        f"indexes as `ensure_indexes` builds them. Build: {json.dumps(built)}.",
        "",
        "## Cold start in a real terminal (140x42 pseudo-terminal)",
        "",
        "Seconds from process start. *first frame*: the app's first paint; *browse*: the browse screen is "
        "drawn; *rows*: the row count is on screen (ordering computed, first page read); *model*: the "
        "embedding model has loaded in the background. Keys are timed from writing the key to the first "
        "byte of the repaint; peak RSS is the process's high-water mark.",
        "",
        "| command | first frame | browse | rows | model ready | down p50 / p95 ms | pagedown p50 / p95 ms "
        "| end ms | RSS at rows MB | peak RSS MB |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in startups:
        lines.append(
            f"| `{s['command']}` | {s['first_frame_s']} | {s['browse_screen_s']} | {s['rows_s']} | "
            f"{s['model_ready_s']} | {s['key_down_ms']['p50']:.1f} / {s['key_down_ms']['p95']:.1f} | "
            f"{s['key_pagedown_ms']['p50']:.1f} / {s['key_pagedown_ms']['p95']:.1f} | {s['key_end_ms']} | "
            f"{s['rss_at_ready_mb']} | {s['peak_rss_mb']} |"
        )
    lines += [
        "",
        "`app` runs `memdeck.tui.app.run()` directly; `cli` is the `memdeck --store PATH` entry point, whose "
        "argument parsing imports `memdeck.core` (and LanceDB) before the app can paint.",
        "",
        "## Keys under Pilot (`run_test`, 140x42)",
        "",
        "*key to frame*: the key event handed to the app as its terminal driver does, until every message "
        "it caused is handled and the frame is composed; *press+pause*: `await pilot.press(key)` then "
        "`await pilot.pause()`, as the tests do (Pilot waits for the process to look idle twice per key "
        "and once more in `pause`: at least 3 x 20 ms, longer while any background thread runs); *rows "
        "loaded*: the same until every row on screen has its data (a page read in a worker).",
        "",
        "| measure | p50 ms | p95 ms | n |",
        "|---|---|---|---|",
    ]
    for key in ("down", "pagedown"):
        for what in ("key_to_frame", "press_pause", "rows_loaded"):
            p = keys[f"{key}_{what}_ms"]
            lines.append(f"| {key}: {what.replace('_', ' ')} | {p['p50']:.1f} | {p['p95']:.1f} | {p['n']} |")
    lines += ["", "| action | ms until the rows on screen are loaded |", "|---|---|"]
    for key, value in keys.items():
        if key.endswith("_ms") and not isinstance(value, dict) and key != "store_open_ms":
            lines.append(f"| {key.removesuffix('_ms').replace('_', ' ')} | {value} |")
    lines += [
        "",
        f"Store.open: {keys['store_open_ms']} ms; rows visible {keys['rows_visible_s']} s after it; "
        f"model {keys['model_state']} at {keys['model_ready_s']} s. Rows counted: {keys['count']:,}; "
        f"principal filter: {keys['filter_count']:,}; searches returned {keys['search_keyword_results']} "
        f"(keyword) and {keys['search_semantic_results']} (semantic) results.",
        "",
        "Peak RSS of the Pilot process after each phase (MB): "
        + ", ".join(f"{k} {v}" for k, v in keys["peak_rss_mb"].items())
        + ".",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    for name in ("build", "run", "startup", "keys"):
        p = sub.add_parser(name)
        p.add_argument("--size", type=int, default=100_000)
        p.add_argument("--presses", type=int, default=60)
        p.add_argument("--rebuild", action="store_true")
        p.add_argument("--command", choices=["app", "cli"], default="app")
        p.add_argument("--out", default=str(BENCH / "RESULTS-app.md"))
    args = parser.parse_args(argv)
    if args.cmd == "build":
        print(json.dumps(build(args.size, args.rebuild)))
    elif args.cmd == "startup":
        print(json.dumps(startup(args.size, args.command, args.presses)))
    elif args.cmd == "keys":
        print(json.dumps(asyncio.run(_keys(args.size, args.presses)), default=str))
    else:
        built = build(args.size, args.rebuild)
        startups = []
        for command in ("app", "app", "cli"):  # the first run also warms the page cache
            log(f"start-up ({command}) at {args.size:,}")
            startups.append(
                _child(
                    [
                        "startup",
                        "--size",
                        str(args.size),
                        "--command",
                        command,
                        "--presses",
                        str(args.presses),
                    ]
                )
            )
        log(f"keys under Pilot at {args.size:,}")
        keys = _child(["keys", "--size", str(args.size), "--presses", str(args.presses)])
        text = report(args.size, startups, keys, built)
        Path(args.out).write_text(text, encoding="utf-8")
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
