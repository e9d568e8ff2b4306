"""Store analytics at scale: every section of the analytics screen over a store of up to 1,000,000 memories.

    python bench/bench_analytics.py [--quick | --full] [--size N] [--out bench/RESULTS-analytics.md]

The store is built once under ``bench/.work/analytics-<size>/`` by writing Arrow rows straight into the
three tier tables (``tier_schema``; 16-dimensional vectors, since only the near-duplicate sample reads
them): ten principals, eight agents, two years of creation times, access counts, pins, some deprecated.
Then each :class:`memdeck.core.analytics.Analytics` call is timed (median of three) for the whole store
and for one principal (a tenth of the rows), and once more all sections together, concurrently, as the
screen runs them. Peak RSS shows that rows are aggregated in DuckDB rather than pulled into Python.
``--quick`` uses 200,000 memories; the default and ``--full`` use 1,000,000.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

REPO = Path(__file__).resolve().parents[1]
WORK = REPO / "bench" / ".work"
DIM = 16
PRINCIPALS = [f"user-{i}" for i in range(10)]
AGENTS = [f"agent-{i}" for i in range(8)]
TIER_SHARE = {"episodic": 0.5, "semantic": 0.35, "procedural": 0.15}
CHUNK = 200_000
TARGET_S = 2.0  # a section of the screen should fill within this at 1M rows

os.environ.setdefault("MEMDECK_HOME", tempfile.mkdtemp(prefix="memdeck-bench-home-"))

from memdeck.core.analytics import Analytics  # noqa: E402
from memdeck.core.embed import HashEmbedder  # noqa: E402
from memdeck.core.filters import Scope  # noqa: E402
from memdeck.core.records import tier_schema  # noqa: E402
from memdeck.core.store import Store  # noqa: E402

WORDS = np.array(
    [
        "coffee",
        "tea",
        "meeting",
        "deploy",
        "release",
        "budget",
        "lisbon",
        "paris",
        "invoice",
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
        "family",
        "project",
        "deadline",
    ]
)


def _chunk(tier: str, start: int, n: int, rng: np.random.Generator, now: datetime) -> pa.Table:
    schema = tier_schema(tier, DIM)
    age = rng.uniform(0, 730, n)
    created = np.datetime64(now.replace(tzinfo=None), "us") - (age * 86400e6).astype("timedelta64[us]")
    recalled = rng.uniform(0, 1, n) < 0.4
    last = np.where(
        recalled,
        created + (rng.uniform(0, 1, n) * age * 86400e6).astype("timedelta64[us]"),
        np.datetime64("NaT", "us"),
    )
    words = WORDS[rng.integers(0, len(WORDS), (n, 8))]
    texts = [" ".join(w) + f" #{start + i}" for i, w in enumerate(words)]
    vectors = rng.normal(size=(n, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    cols: dict[str, Any] = {
        "id": [f"{tier[:3]}_{start + i:020d}" for i in range(n)],
        "tier": [tier] * n,
        "principal": np.array(PRINCIPALS)[rng.integers(0, len(PRINCIPALS), n)],
        "agent": np.array(AGENTS)[rng.integers(0, len(AGENTS), n)],
        "text": texts,
        "importance": rng.uniform(0, 1, n).astype(np.float32),
        "pinned": rng.uniform(0, 1, n) < 0.01,
        "state": np.where(rng.uniform(0, 1, n) < 0.03, "deprecated", "active"),
        "tags": [[]] * n,
        "access_count": np.where(recalled, rng.poisson(4, n) + 1, 0).astype(np.int64),
        "last_accessed": pa.array(last, type=pa.timestamp("us"), from_pandas=True).cast(
            pa.timestamp("us", tz="UTC")
        ),
        "created_at": pa.array(created, type=pa.timestamp("us")).cast(pa.timestamp("us", tz="UTC")),
        "updated_at": pa.array(created, type=pa.timestamp("us")).cast(pa.timestamp("us", tz="UTC")),
        "content_sha256": ["0" * 64] * n,
        "version": np.ones(n, dtype=np.int32),
        "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1)), DIM),
    }
    arrays = []
    for f in schema:
        value = cols.get(f.name)
        if value is None:
            arrays.append(pa.nulls(n, type=f.type))
        elif isinstance(value, pa.Array):
            arrays.append(value.cast(f.type))
        else:
            arrays.append(pa.array(value, type=f.type))
    return pa.Table.from_arrays(arrays, schema=schema)


def build(size: int) -> Store:
    root = WORK / f"analytics-{size}"
    store = Store.open(root, embedder=HashEmbedder(DIM))
    have = sum(store.engine.table(t).count_rows() for t in TIER_SHARE if store.engine.has_table(t))
    if have == size:
        return store
    if have:
        raise SystemExit(f"{root} holds {have} rows, not {size}; delete it to rebuild")
    rng = np.random.default_rng(20261122)
    now = datetime.now(UTC)
    t0 = time.perf_counter()
    for tier, share in TIER_SHARE.items():
        total = int(size * share) if tier != "procedural" else size - int(size * 0.5) - int(size * 0.35)
        tbl = store.engine.table(tier)
        for start in range(0, total, CHUNK):
            tbl.add(_chunk(tier, start, min(CHUNK, total - start), rng, now))
        tbl.optimize()
        print(f"  {tier}: {total:,} rows", file=sys.stderr)
    print(f"built {size:,} rows in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return store


def timed(fn: Any, reps: int = 3) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(reps):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000, result


SECTIONS = {
    "summary": lambda a: a.summary(),
    "over_time (month, by tier)": lambda a: a.over_time(by="tier", period="month"),
    "over_time (week, by agent)": lambda a: a.over_time(by="agent", period="week"),
    "breakdown by principal": lambda a: a.breakdown("principal"),
    "importance histogram": lambda a: a.importance_histogram(),
    "age histogram": lambda a: a.age_histogram(),
    "most recalled (50)": lambda a: a.most_recalled(50),
    "least recalled (50)": lambda a: a.least_recalled(50),
    "stale > 90 days (100 listed)": lambda a: a.stale(90, limit=100),
    "near-duplicates (newest 2,000 per tier)": lambda a: a.near_duplicates(),
    "agent trust": lambda a: a.agent_trust(),
    "previews of 100 ids": None,  # filled in below: needs ids
}


def run_all(a: Analytics) -> None:
    ids = [r["id"] for r in a.least_recalled(100)]
    jobs = [lambda f=f: f(a) for f in SECTIONS.values() if f is not None] + [lambda: a.previews(ids)]
    with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
        for f in [pool.submit(j) for j in jobs]:
            f.result()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="200,000 memories")
    mode.add_argument("--full", action="store_true", help="1,000,000 memories (the default)")
    parser.add_argument("--size", type=int, default=None)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "RESULTS-analytics.md")
    args = parser.parse_args(argv)
    size = args.size or (200_000 if args.quick else 1_000_000)

    started = datetime.now()
    load0 = os.getloadavg()[0]
    store = build(size)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    rows = []
    for label, scope in (("whole store", Scope.everyone()), ("one principal", Scope.of(PRINCIPALS[3]))):
        a = store.analytics(scope)
        ids = [r["id"] for r in a.least_recalled(100)]
        for name, fn in SECTIONS.items():
            ms, _ = timed(
                (lambda a=a, ids=ids: a.previews(ids)) if fn is None else (lambda a=a, fn=fn: fn(a))
            )
            rows.append((label, name, ms))
            print(f"{label:14} {name:42} {ms:8.0f} ms", file=sys.stderr)
        all_ms, _ = timed(lambda a=a: run_all(a), reps=2)
        rows.append((label, "all sections at once (threads, as the screen runs them)", all_ms))
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    total = store.analytics().summary()["total"]
    slowest = max(ms for label, name, ms in rows if not name.startswith("all sections"))
    verdict = "PASS" if slowest <= TARGET_S * 1000 else "MISS"

    lines = [
        "## Analytics (DuckDB over the Lance tables)",
        "",
        f"Run {started:%Y-%m-%d %H:%M} on {platform.platform()}, {os.cpu_count()} CPUs, load average {load0:.1f} "
        f"at the start and {os.getloadavg()[0]:.1f} at the end; Python {platform.python_version()}, duckdb "
        f"{__import__('duckdb').__version__}, pylance {__import__('lance').__version__}. "
        f"`python bench/bench_analytics.py{' --quick' if args.quick else ''}`: a store of {total:,} memories "
        "(half episodic, a third semantic, the rest procedural; ten principals). Median of three runs, in ms.",
        "",
        "| measure | value | target | verdict |",
        "|---|---|---|---|",
        f"| slowest single section at {total:,} memories | {slowest:,.0f} ms | <= {TARGET_S * 1000:,.0f} ms | "
        f"{verdict} |",
        f"| peak RSS of the process (store opened, every section run) | {rss:,.0f} MB | | |",
        "",
        "| scope | section | ms |",
        "|---|---|---|",
    ]
    lines += [f"| {label} | {name} | {ms:,.0f} |" for label, name, ms in rows]
    lines += [
        "",
        f"Peak RSS before the analytics ran: {rss_before:,.0f} MB. Each call opens a DuckDB cursor on an "
        "in-memory database, registers the tiers' Lance datasets and aggregates there; only grouped rows "
        "(and the near-duplicate sample of vectors) reach Python. The principal filter is a bound parameter "
        "that DuckDB pushes into the Lance scan.",
        "",
    ]
    args.out.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))
    store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
