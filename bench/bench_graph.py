"""Graph channel cost: recall p50 with and without the graph channel on one store, and the write cost of
building the graph (extraction, resolution, commits).

    python bench/bench_graph.py [--size 100000] [--queries 200] [--source DIR] [--out FILE]

The store is a copy of bench_core's cached store of this size (``bench/.work/memdeck-<size>``, built by
``bench_core.py build --size N``: synthetic vectors and text, ten principals, an ANN index at 100k). Its
rows get conversational text (real LoCoMo turns, cycled; only their names matter here) from which the graph
is built through the product's write path for the graph (``index_memories``), in batches per principal.
Queries are LoCoMo questions, so they name entities that exist, many of them in thousands of memories: the
graph channel does real work on every query. The query embedder is the deterministic hash embedder for
both runs, so the difference between the two is the graph channel alone.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import DIM, WORK, emit, locomo_texts, log, machine_info

from memdeck.core.config import load_config
from memdeck.core.embed import HashEmbedder
from memdeck.core.graph.memory.write import index_memories
from memdeck.core.records import Memory
from memdeck.core.store import Store

BATCH = 2000


def questions(limit: int) -> list[str]:
    from common import SHARED_DATA

    data = json.loads((SHARED_DATA / "locomo" / "locomo10.json").read_text(encoding="utf-8"))
    out = [q["question"] for conv in data for q in conv["qa"] if q.get("question")]
    return out[:limit]


def config(graph: bool) -> dict[str, Any]:
    cfg = load_config()
    cfg["redaction"] = {**cfg["redaction"], "enabled": False}
    cfg["traces"] = {**cfg["traces"], "enabled": False}
    cfg["graph"] = {**cfg.get("graph", {}), "enabled": graph}
    return cfg


def build_graph(store: Store) -> dict[str, Any]:
    rows = store.engine.scan("semantic", ["id", "principal"]).to_pylist()
    texts = locomo_texts(len(rows))
    by_principal: dict[str, list[Memory]] = {}
    for row, text in zip(rows, texts, strict=True):
        by_principal.setdefault(row["principal"], []).append(
            Memory(id=row["id"], tier="semantic", principal=row["principal"], agent="bench", text=text)
        )
    t0 = time.perf_counter()
    for group in by_principal.values():
        for start in range(0, len(group), BATCH):
            index_memories(store.engine, group[start : start + BATCH])
    seconds = time.perf_counter() - t0
    return {
        "memories": len(rows),
        "seconds": round(seconds, 1),
        "per_memory_ms": round(seconds * 1000 / max(len(rows), 1), 3),
        "entities": store.engine.table("entities").count_rows(),
        "relations": store.engine.table("relations").count_rows(),
    }


def measure(
    stores: dict[str, Store], queries: list[str], principals: list[str], warmup: int
) -> dict[str, Any]:
    times: dict[str, list[float]] = {name: [] for name in stores}
    for n, query in enumerate(queries):
        principal = principals[n % len(principals)]
        for name, store in stores.items():  # alternate, so load on the machine hits both alike
            t0 = time.perf_counter()
            store.recall(query, principal=principal, k=10, record_access=False, trace=False)
            if n >= warmup:
                times[name].append((time.perf_counter() - t0) * 1000)
    out = {}
    for name, values in times.items():
        values.sort()
        out[name] = {
            "p50_ms": round(statistics.median(values), 2),
            "p95_ms": round(values[int(len(values) * 0.95) - 1], 2),
            "n": len(values),
        }
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument(
        "--source", type=Path, help="the cached bench_core store (default bench/.work/memdeck-SIZE)"
    )
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    source = args.source or WORK / f"memdeck-{args.size}"
    if not (source / "bench-built").exists():
        print(
            f"no cached store at {source}: run `python bench/bench_core.py build --size {args.size}`",
            file=sys.stderr,
        )
        return 2
    with tempfile.TemporaryDirectory(prefix="memdeck-graph-bench-") as tmp:
        path = Path(tmp) / "store"
        shutil.copytree(source, path)
        log(f"copied {source} to {path}; building the graph")
        writer = Store.open(path, embedder=HashEmbedder(DIM), config=config(True))
        built = build_graph(writer)
        log(f"graph built: {built}")
        principals = sorted({r["principal"] for r in writer.scan("semantic", ["principal"]).to_pylist()})
        writer.close()
        stores = {
            "with_graph": Store.open(path, embedder=HashEmbedder(DIM), config=config(True)),
            "without_graph": Store.open(path, embedder=HashEmbedder(DIM), config=config(False)),
        }
        timed = measure(stores, questions(args.queries + args.warmup), principals, args.warmup)
        for s in stores.values():
            s.close()
    ratio = timed["with_graph"]["p50_ms"] / timed["without_graph"]["p50_ms"]
    result = {
        "bench": "graph",
        "size": args.size,
        "machine": machine_info(),
        "graph_build": built,
        "recall": timed,
        "p50_ratio": round(ratio, 3),
    }
    log(
        f"recall p50 with graph {timed['with_graph']['p50_ms']} ms, without {timed['without_graph']['p50_ms']} ms "
        f"(x{ratio:.2f})"
    )
    emit(result, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
