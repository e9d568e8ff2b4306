"""What recall's optional parts cost, measured inside one process.

    python bench/bench_core.py build --size 10000          # once: the cached 10k store
    python bench/bench_recall_parts.py [--size 10000] [--rounds 16] [--block 30]

The cached store is opened twice in this process: once with the defaults, and once with the optional parts of
`[recall]` off (`score_all_rows = 0`, `previous_keyword_weight = 0`, `unnamed_query_weight = 0`,
`time_cue_weight = 0`: the recall before 2026-11-27). Blocks of queries are asked of each in turn, each block once to warm it and
once timed, excl. the query embedding (the vector comes from a lookup), `record_access` and `trace` off.
On a shared machine whose speed drifts between processes, one process seeing both in turn compares them
where separate processes do not. Prints p25 and p50 of each and the ratio, with the load average.
"""

from __future__ import annotations

import argparse
import copy
import os
import resource
import time

import numpy as np
from bench_core import LookupEmbedder, _lookup, bench_config, build, store_path
from common import PRINCIPALS, dataset

from memdeck.core.recall.index import recall_index
from memdeck.core.store import Store

PARTS_OFF = {
    "score_all_rows": 0,
    "previous_keyword_weight": 0.0,
    "unnamed_query_weight": 0.0,
    "time_cue_weight": 0.0,
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=10000)
    ap.add_argument("--rounds", type=int, default=16)
    ap.add_argument("--block", type=int, default=30)
    args = ap.parse_args()
    build(args.size)
    queries, _qv, table = _lookup(dataset(args.size))
    queries = queries[: 8 * args.block]
    config = bench_config()
    off_config = copy.deepcopy(config)
    off_config["recall"].update(PARTS_OFF)
    stores = {
        name: Store.open(store_path(args.size), embedder=LookupEmbedder(table), config=c, create=False)
        for name, c in (("parts on (default)", config), ("parts off", off_config))
    }
    for store in stores.values():  # every principal's partition loaded before the timed recalls
        for principal in PRINCIPALS:
            store.recall(queries[0]["text"], principal=principal, k=10, record_access=False, trace=False)
            recall_index(store.engine).wait()
    load = os.getloadavg()[0]
    times: dict[str, list[float]] = {name: [] for name in stores}
    for n in range(args.rounds):
        start = (n * args.block) % len(queries)
        block = queries[start : start + args.block]
        for name, store in stores.items():
            for timed in (False, True):
                for q in block:
                    t = time.perf_counter()
                    res = store.recall(
                        q["text"], principal=q["principal"], k=10, record_access=False, trace=False
                    )
                    if timed:
                        times[name].append((time.perf_counter() - t) * 1000 - res.timings_ms["embed"])
    for store in stores.values():
        store.close()
    p50 = {name: float(np.median(v)) for name, v in times.items()}
    print(
        f"recall at {args.size:,}, excl. embedding, {args.rounds} rounds of {args.block} queries each, "
        f"load average {load:.2f} -> {os.getloadavg()[0]:.2f}, "
        f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB"
    )
    for name, v in times.items():
        print(f"| {name} | p25 {np.percentile(v, 25):.3f} ms | p50 {p50[name]:.3f} ms | n {len(v)} |")
    print(f"parts on / off, p50: {p50['parts on (default)'] / p50['parts off']:.3f}")


if __name__ == "__main__":
    main()
