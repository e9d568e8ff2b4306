"""Recall p50 excl. embedding at 10k: this checkout against another (an earlier commit), process by process.

    git worktree add /tmp/before <commit>                  # with its own venv: python -m venv .venv; pip ...
    (cd /tmp/before && .venv/bin/python bench/bench_core.py build --size 10000)
    python bench/bench_core.py build --size 10000
    python bench/bench_recall_against.py /tmp/before [--pairs 10] [--size 10000] [--engine memory|lance]

Each pair runs one process of the other checkout (its own venv, its own cached store of the same generated
data) and one of this one, back to back; each process warms up, then times 3 rounds of 200 queries
(`--queries`; `record_access` and `trace` off, the query vector from a lookup, its embedding time taken out) and prints
its p50. A third process per pair runs this checkout with the optional parts of relevance off. On a shared
machine the speed drifts between processes by more than the differences measured here, so the report gives
the medians and the median of the pairwise differences, with their range.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
PARTS_OFF = {
    "score_all_rows": 0,
    "previous_keyword_weight": 0.0,
    "unnamed_query_weight": 0.0,
    "time_cue_weight": 0.0,
}


def child(root: Path, size: int, parts_off: bool, engine: str, n_queries: int) -> None:
    """One process: the p50 of this root's code on its cached store."""
    sys.path.insert(0, str(root / "bench"))
    from bench_core import LookupEmbedder, _lookup, bench_config, store_path  # the root's own
    from common import PRINCIPALS, dataset

    from memdeck.core.store import Store

    queries, _vectors, table = _lookup(dataset(size))
    config = bench_config()
    config["recall"]["engine"] = engine
    if parts_off:
        config["recall"].update(PARTS_OFF)
    store = Store.open(store_path(size), embedder=LookupEmbedder(table), config=config, create=False)
    for q in queries[:60]:
        store.recall(q["text"], principal=q["principal"], k=10, record_access=False, trace=False)
    for p in PRINCIPALS:
        store.recall(queries[0]["text"], principal=p, k=10, record_access=False, trace=False)
    times = []
    for _round in range(3):
        for q in queries[:n_queries]:
            t = time.perf_counter()
            res = store.recall(q["text"], principal=q["principal"], k=10, record_access=False, trace=False)
            times.append((time.perf_counter() - t) * 1000 - res.timings_ms["embed"])
    store.close()
    print(f"p50 {np.median(times):.4f}")


def _run(python: Path, root: Path, args: argparse.Namespace, parts_off: bool = False) -> float:
    argv = [
        str(python),
        str(Path(__file__).resolve()),
        "--child",
        str(root),
        "--size",
        str(args.size),
        "--engine",
        args.engine,
        "--queries",
        str(args.queries),
    ]
    out = subprocess.run(
        [*argv, *(["--parts-off"] if parts_off else [])],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return float(out.strip().splitlines()[-1].split()[1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("other", nargs="?", type=Path, help="the other checkout, with its venv in .venv")
    ap.add_argument("--pairs", type=int, default=10)
    ap.add_argument("--size", type=int, default=10000)
    ap.add_argument("--engine", choices=("memory", "lance"), default="memory")
    ap.add_argument("--queries", type=int, default=200, help="queries a round (3 rounds a process)")
    ap.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--parts-off", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child is not None:
        child(args.child, args.size, args.parts_off, args.engine, args.queries)
        return
    if args.other is None:
        ap.error("give the other checkout's path")
    other = args.other.resolve()
    here = HERE.parent
    before, after, off = [], [], []
    load = os.getloadavg()[0]
    for n in range(args.pairs):
        before.append(_run(other / ".venv" / "bin" / "python", other, args))
        after.append(_run(Path(sys.executable), here, args))
        off.append(_run(Path(sys.executable), here, args, parts_off=True))
        print(f"pair {n + 1}: other {before[-1]:.3f}  this {after[-1]:.3f}  this, parts off {off[-1]:.3f} ms")
    diff = np.array(after) - np.array(before)
    print(
        f"recall p50 excl. embedding at {args.size:,} ({args.engine} engine), {args.pairs} pairs of processes, "
        f"load average "
        f"{load:.2f} -> {os.getloadavg()[0]:.2f}: other {np.median(before):.3f} ms, this {np.median(after):.3f} "
        f"ms (parts off {np.median(off):.3f} ms); this - other per pair: median {np.median(diff):+.3f} ms "
        f"({np.median(diff) / np.median(before):+.1%}), range {diff.min():+.3f} to {diff.max():+.3f}"
    )


if __name__ == "__main__":
    main()
