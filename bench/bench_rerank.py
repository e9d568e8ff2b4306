"""Re-ranking cached recall candidates under new weights: what the recall inspector does on every keypress.

    python bench/bench_rerank.py [--quick | --full] [--reps N] [--out bench/RESULTS-rerank.md]

Target: ``RecallResult.rerank(profile)`` over 1,000 candidates in at most 16 ms (one frame at 60 Hz).

Measured, each with a different profile on every repetition (so nothing is reused between calls):

1. ``rerank`` over a synthetic set of 1,000 candidates (three tiers, two years of ages, access counts,
   pins), for k = 10, 50 and 1,000 (k = 1,000 builds a result object for every candidate);
2. the rest of the inspector's work after a re-rank: the moves (▲/▼) and the context pack;
3. the same on the candidates of a real recall: a store of memories written with ``remember_many`` (hash
   embedder) and recalled with k = 250, which gathers about 1,000 candidates from the vector and
   full-text channels;
4. the whole keypress in the app, headless: a weight change on the inspector screen, re-rank, results
   table (k rows), score bars and context pack redrawn (Textual's ``run_test``; the paint to a real
   terminal is not included).

``--full`` adds 10,000 synthetic candidates.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
TARGET_MS = 16.0

from memdeck.core.config import Profile  # noqa: E402
from memdeck.core.filters import Scope  # noqa: E402
from memdeck.core.recall.scoring import Candidate, CandidateSet  # noqa: E402
from memdeck.core.recall.search import RecallResult  # noqa: E402
from memdeck.core.records import STORED_TIERS, Memory  # noqa: E402


def profiles(n: int, seed: int = 7) -> list[Profile]:
    """n different profiles: every weight and half-life moves, as a person stepping the controls would."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        p = Profile(f"p{i}")
        for key in p.weights:
            p.weights[key] = round(rng.uniform(0, 1), 2)
        for tier in p.half_life_days:
            p.half_life_days[tier] = round(rng.uniform(1, 400), 1)
        out.append(p)
    return out


def synthetic_result(n: int, seed: int = 1) -> RecallResult:
    rng = np.random.default_rng(seed)
    at = datetime.now(UTC)
    cands = []
    for i in range(n):
        tier = STORED_TIERS[i % 3]
        created = at - timedelta(days=float(rng.uniform(0, 730)))
        mem = Memory(
            id=f"{tier[:3]}_{i:020d}",
            tier=tier,
            principal="alice",
            agent=f"agent{i % 5}",
            text=f"synthetic memory {i} " + "word " * int(rng.integers(5, 60)),
            importance=float(rng.uniform(0, 1)),
            pinned=bool(rng.uniform() < 0.05),
            access_count=int(rng.poisson(3)),
            created_at=created,
            updated_at=created,
            last_reinforced_at=created if tier == "semantic" else None,
            ended_at=created if tier == "episodic" else None,
        )
        c = Candidate(
            memory=mem,
            similarity=float(rng.uniform(0, 1)),
            keyword=float(rng.uniform(0, 1)),
            trust=float(rng.uniform(0, 1)),
        )
        c.ranks = {"vector": i + 1, "keyword": int(rng.integers(1, n + 1)) if rng.uniform() < 0.6 else None}
        cands.append(c)
    cset = CandidateSet(cands, at)
    return RecallResult(
        query="q",
        scope=Scope.of("alice"),
        agent=None,
        tiers=list(STORED_TIERS),
        k=10,
        profile=Profile(),
        candidates=cset,
        items=[],
    )


def timed(fn: Any, reps: int) -> dict[str, float]:
    """Wall-clock p50/p95/max and the median CPU time of this thread (what an idle machine would see)."""
    fn(0)  # warm up
    times, cpu = [], []
    for i in range(reps):
        t0, c0 = time.perf_counter(), time.thread_time()
        fn(i)
        times.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.thread_time() - c0) * 1000)
    times.sort()
    return {
        "p50": statistics.median(times),
        "p95": times[min(len(times) - 1, int(0.95 * len(times)))],
        "max": times[-1],
        "n": len(times),
        "cpu50": statistics.median(cpu),
    }


def bench_rerank(result: RecallResult, reps: int, ks: tuple[int, ...]) -> dict[int, dict[str, float]]:
    ps = profiles(reps + 1)
    return {k: timed(lambda i, k=k: result.rerank(ps[i], k=k), reps) for k in ks}


def bench_followups(result: RecallResult, reps: int, k: int = 50) -> dict[str, float]:
    from memdeck.tui.screens.inspector import build_context_pack, rank_moves

    ps = profiles(reps + 1, seed=11)
    before = [s.memory.id for s in result.rerank(ps[0], k=k)]
    pinned = [c.memory for c in result.candidates.candidates if c.memory.pinned][:20]

    def step(i: int) -> None:
        ranked = result.rerank(ps[i], k=k)
        rank_moves(before, [s.memory.id for s in ranked])
        build_context_pack(pinned, ranked, 2000)

    return timed(step, reps)


def real_store(n: int) -> tuple[Any, RecallResult, float]:
    from memdeck.core.embed import HashEmbedder
    from memdeck.core.store import MemoryInput, Store

    os.environ.setdefault("MEMDECK_HOME", tempfile.mkdtemp(prefix="memdeck-bench-home-"))
    root = Path(tempfile.mkdtemp(prefix="memdeck-bench-rerank-")) / "store"
    store = Store.open(root, embedder=HashEmbedder())
    rng = random.Random(3)
    words = [
        "coffee",
        "tea",
        "meeting",
        "deploy",
        "release",
        "budget",
        "lisbon",
        "paris",
        "invoice",
        "cat",
        "garden",
        "bicycle",
        "report",
        "review",
        "design",
        "launch",
        "travel",
        "doctor",
        "school",
        "music",
    ]
    now = datetime.now(UTC)
    items = [
        MemoryInput(
            text=" ".join(rng.choices(words, k=rng.randint(6, 30))) + f" note {i}",
            tier=("episodic", "semantic")[i % 2],
            principal="alice",
            agent=f"agent{i % 4}",
            importance=rng.random(),
            pinned=rng.random() < 0.02,
            created_at=now - timedelta(days=rng.uniform(0, 700)),
            force=True,
        )
        for i in range(n)
    ]
    for start in range(0, n, 2000):
        store.remember_many(items[start : start + 2000])
    t0 = time.perf_counter()
    result = store.recall(
        "coffee meeting budget report", principal="alice", k=250, record_access=False, trace=False
    )
    recall_ms = (time.perf_counter() - t0) * 1000
    return store, result, recall_ms


async def bench_app_keypress(store: Any, reps: int, k: int) -> dict[str, Any]:
    from textual.app import App
    from textual.widgets import Input

    from memdeck.tui.screens.inspector import InspectorScreen

    class Host(App[None]):
        def __init__(self, screen: Any) -> None:
            super().__init__()
            self._screen = screen

        def on_mount(self) -> None:
            self.push_screen(self._screen)

    screen = InspectorScreen(store, Scope.of("alice"))
    app = Host(screen)
    async with app.run_test(size=(160, 50)) as pilot:
        screen.query_one("#inspector-query", Input).value = "coffee meeting budget report"
        screen.query_one("#inspector-principal", Input).value = "alice"
        screen.query_one("#inspector-k", Input).value = str(k)
        await pilot.press("ctrl+r")
        await app.workers.wait_for_complete()
        await pilot.pause()
        n_candidates = len(screen.result.candidates)
        idle = []
        for _ in range(min(reps, 20)):
            t0 = time.perf_counter()
            await pilot.pause()
            idle.append((time.perf_counter() - t0) * 1000)
        field = screen.query_one("#inspector-weight-recency-input", Input)
        times = []
        for i in range(reps):
            field.value = f"{(i % 40) * 0.05 + 0.05:.2f}"
            t0 = time.perf_counter()
            await pilot.pause()  # the Changed message, the re-rank and the redraw of table, bars and pack
            times.append((time.perf_counter() - t0) * 1000)
        times.sort()
        rerank_ms = screen.last_rerank_ms
    return {
        "candidates": n_candidates,
        "k": k,
        "p50": statistics.median(times),
        "p95": times[min(len(times) - 1, int(0.95 * len(times)))],
        "max": times[-1],
        "n": len(times),
        "last_rerank_ms": rerank_ms,
        "idle_p50": statistics.median(idle),
    }


async def bench_bare_table(reps: int, rows: int = 50) -> dict[str, float]:
    """The same wait after refilling a plain DataTable of the same shape: Textual's own repaint cost."""
    from rich.text import Text
    from textual.app import App, ComposeResult
    from textual.widgets import DataTable

    class Bare(App[None]):
        def compose(self) -> ComposeResult:
            yield DataTable()

    app = Bare()
    async with app.run_test(size=(160, 50)) as pilot:
        table = app.query_one(DataTable)
        table.add_columns(*"abcdefghijk")
        times = []
        for i in range(reps):
            table.clear()
            for r in range(rows):
                table.add_row(
                    str(r),
                    Text(f"▲{i % 3}", style="green"),
                    f"{r / rows:.3f}",
                    Text("█" * (r % 16), style="blue"),
                    str(r),
                    "—",
                    "semantic",
                    "",
                    "",
                    "agent",
                    f"memory text number {r} " * 3,
                    key=str(r),
                )
            t0 = time.perf_counter()
            await pilot.pause()
            times.append((time.perf_counter() - t0) * 1000)
        times.sort()
    return {
        "p50": statistics.median(times),
        "p95": times[min(len(times) - 1, int(0.95 * len(times)))],
        "max": times[-1],
        "n": len(times),
    }


def machine() -> str:
    cpu = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import textual

    return (
        f"{platform.platform()}, {os.cpu_count()} CPUs ({cpu}); Python {platform.python_version()}, "
        f"numpy {np.__version__}, textual {textual.__version__}"
    )


def fmt(t: dict[str, float]) -> str:
    cpu = f"{t['cpu50']:.2f}" if "cpu50" in t else "-"
    return f"{t['p50']:.2f} | {t['p95']:.2f} | {t['max']:.2f} | {cpu}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="the default: 1,000 candidates")
    mode.add_argument("--full", action="store_true", help="also 10,000 synthetic candidates")
    parser.add_argument("--reps", type=int, default=300, help="repetitions per measurement")
    parser.add_argument("--store-size", type=int, default=6000, help="memories in the real store")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "RESULTS-rerank.md")
    args = parser.parse_args(argv)

    started = datetime.now()
    header = machine()
    load_start = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print("synthetic 1,000 candidates…", file=sys.stderr)
    syn = synthetic_result(1000)
    syn_t = bench_rerank(syn, args.reps, (10, 50, 1000))
    follow = bench_followups(syn, args.reps)
    big_t = None
    if args.full:
        print("synthetic 10,000 candidates…", file=sys.stderr)
        big_t = bench_rerank(synthetic_result(10_000), max(args.reps // 5, 30), (10, 50, 10_000))
    print(f"real store of {args.store_size} memories…", file=sys.stderr)
    store, real, recall_ms = real_store(args.store_size)
    real_t = bench_rerank(real, args.reps, (10, 250))
    print("inspector keypress, headless…", file=sys.stderr)
    app_t = asyncio.run(bench_app_keypress(store, min(args.reps, 60), k=50))
    bare_t = asyncio.run(bench_bare_table(min(args.reps, 60)))
    store.close()

    shown = max(syn_t[10]["p50"], syn_t[50]["p50"])
    full = syn_t[1000]["p50"]
    load_end = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [
        "## Re-rank (recall inspector)",
        "",
        f"Run {started:%Y-%m-%d %H:%M} on {header}; load average {load_start:.1f} at the start and "
        f"{load_end:.1f} at the end. "
        f"`python bench/bench_rerank.py{' --full' if args.full else ''}`; {args.reps} repetitions, a different "
        "weight profile (all six weights and three half-lives changed) on each. Verdicts are on the median: "
        "on a shared machine the tail is the scheduler's, not the code's (p95 and max are in the tables). "
        "CPU p50 is the thread's own CPU time: what the same call costs when it has a core to itself.",
        "",
        "| measure | p50 | target | verdict |",
        "|---|---|---|---|",
        f"| `rerank` of 1,000 candidates, k = 10 and 50 (what the inspector shows) | {shown:.2f} ms | "
        f"<= {TARGET_MS:g} ms | {'PASS' if shown <= TARGET_MS else 'MISS'} |",
        f"| `rerank` of 1,000 candidates, k = 1,000 (a result object for every candidate) | {full:.2f} ms "
        f"(CPU {syn_t[1000]['cpu50']:.2f} ms) | <= {TARGET_MS:g} ms | {'PASS' if full <= TARGET_MS else 'MISS'} |",
        "",
        "### `RecallResult.rerank(profile, k)` (ms)",
        "",
        "| candidates | k | p50 | p95 | max | CPU p50 |",
        "|---|---|---|---|---|---|",
    ]
    lines += [f"| 1,000 synthetic | {k:,} | {fmt(t)} |" for k, t in syn_t.items()]
    if big_t:
        lines += [f"| 10,000 synthetic | {k:,} | {fmt(t)} |" for k, t in big_t.items()]
    lines += [
        f"| {len(real.candidates):,} from a real recall | {k:,} | {fmt(t)} |" for k, t in real_t.items()
    ]
    lines += [
        "",
        f"The real recall: {args.store_size:,} memories (episodic and semantic, hash embedder), "
        f"`store.recall(..., k=250)` took {recall_ms:.0f} ms and gathered {len(real.candidates):,} candidates; "
        "re-ranking them needs no search at all.",
        "",
        "### The rest of the inspector's work per change (ms)",
        "",
        "| step | p50 | p95 | max | CPU p50 |",
        "|---|---|---|---|---|",
        f"| re-rank 1,000 (k = 50) + moves + context pack (2,000-token budget) | {fmt(follow)} |",
        f"| whole keypress in the app, headless: {app_t['candidates']:,} candidates, k = {app_t['k']}, table + "
        f"bars redrawn | {fmt(app_t)} |",
        f"| the same wait with nothing changed (the harness's own cost) | {app_t['idle_p50']:.2f} | | | |",
        f"| for comparison: refilling a plain 50-row, 11-column DataTable (no memdeck code) | {fmt(bare_t)} |",
        "",
        "The headless keypress includes Textual's message handling and widget updates but not the write to a "
        "terminal; repainting the results table costs about what any DataTable of that size costs, and far more "
        "than the re-rank. A burst of changes (a held arrow key) collapses into one re-rank and one repaint. "
        "The machine is shared; rerun on an idle one before quoting a figure.",
        "",
    ]
    args.out.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
