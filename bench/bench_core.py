"""memdeck's own benchmarks: ingest, recall at scale, ANN recall@10, many small writes.

    python bench/bench_core.py build --size 100000          # cached store under bench/.work/
    python bench/bench_core.py recall --size 100000 [--queries 200] [--out r.json]
    python bench/bench_core.py ingest [--texts 2000]
    python bench/bench_core.py smallwrites [--writes 10000]

Each subcommand runs in its own process (bench/run.py starts them) and prints or writes one JSON result
with its peak RSS. Stores at 100k and 1M are built from the synthetic data in bench/common.py by writing
Arrow rows straight into the tier table (the same schema memory_to_row produces), then
``store.engine.ensure_indexes`` builds what the product would build: the full-text index always, the id B-tree
and the IVF_PQ vector index past ``store.ann_min_rows``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import resource
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (
    AGENTS,
    CHUNK,
    DIM,
    PRINCIPALS,
    WORK,
    Dataset,
    Timer,
    dataset,
    emit,
    exact_top_k,
    locomo_texts,
    log,
    percentiles,
    row_id,
    stamps,
)

from memdeck.core import filters as F
from memdeck.core.config import load_config
from memdeck.core.embed import HashEmbedder, SentenceTransformerEmbedder
from memdeck.core.filters import Scope
from memdeck.core.recall.index import recall_index
from memdeck.core.recall.search import candidate_columns, keyword_search, state_filter, vector_search
from memdeck.core.records import tier_schema
from memdeck.core.store import MemoryInput, Store

TIER = "semantic"
# What scoring and a result line need (the rest of a memory could be read for the top k only).
MINIMAL_COLUMNS = {
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
    "last_reinforced_at",
    "started_at",
    "ended_at",
    "name",
    "proc_version",
    "vector",
}


class LookupEmbedder:
    """Returns the prepared vector of each benchmark query, so recall is timed without the model while
    the vectors it searches with are near stored rows (recall@10 is meaningful)."""

    semantic = False  # prepared vectors: no meaning to read from a name

    def __init__(self, table: dict[str, np.ndarray]) -> None:
        self.name = "hash-384"
        self.dim = DIM
        self._table = table
        self._fallback = HashEmbedder(DIM)

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
        out = []
        for text in texts:
            vec = self._table.get(text)
            out.append(vec if vec is not None else self._fallback.encode([text])[0])
        return np.vstack(out).astype(np.float32)


def bench_config() -> dict[str, Any]:
    return load_config()


def store_path(size: int) -> Path:
    return WORK / f"memdeck-{size}"


# --- building ---------------------------------------------------------------------------------------


def arrow_rows(data: Dataset, start: int, end: int, schema: pa.Schema) -> pa.Table:
    """Rows [start, end) of the synthetic set in the semantic tier's schema."""
    n = end - start
    rng = np.random.default_rng(start + 7)
    texts = data.texts()[start:end]
    vec = np.asarray(data.vectors[start:end], dtype=np.float32)
    principal = np.asarray(PRINCIPALS)[data.principal_idx[start:end]]
    created = stamps(data.created_at()[start:end])
    state = np.where(rng.random(n) < 0.02, "deprecated", "active")
    cols: dict[str, Any] = {
        "id": [row_id(i) for i in range(start, end)],
        "tier": [TIER] * n,
        "principal": principal.tolist(),
        "agent": np.asarray(AGENTS)[rng.integers(0, len(AGENTS), n)].tolist(),
        "text": texts,
        "importance": rng.random(n).astype(np.float32),
        "pinned": (rng.random(n) < 0.01).tolist(),
        "state": state.tolist(),
        "tags": [["bench"] if x < 0.3 else [] for x in rng.random(n)],
        "access_count": rng.integers(0, 6, n),
        "last_accessed": pa.nulls(n, pa.timestamp("us", tz="UTC")),
        "created_at": pa.array(created, pa.timestamp("us")).cast(pa.timestamp("us", tz="UTC")),
        "updated_at": pa.array(created, pa.timestamp("us")).cast(pa.timestamp("us", tz="UTC")),
        "content_sha256": [hashlib.sha256(t.encode()).hexdigest() for t in texts],
        "version": np.ones(n, dtype=np.int32),
        "deprecation_reason": pa.nulls(n, pa.string()),
        "superseded_by": pa.nulls(n, pa.string()),
        "meta": pa.nulls(n, pa.string()),
        "vector": pa.FixedSizeListArray.from_arrays(pa.array(vec.reshape(-1)), DIM),
        "sources": [[] for _ in range(n)],
        "confidence": np.full(n, 0.7, dtype=np.float32),
        "evidence_count": np.ones(n, dtype=np.int64),
        "last_reinforced_at": pa.array(created, pa.timestamp("us")).cast(pa.timestamp("us", tz="UTC")),
    }
    # a column the schema gained since this generator was written is left empty, as on a store written before it
    for f in schema:
        if f.name not in cols and f.nullable:
            cols[f.name] = pa.nulls(n, f.type)
    arrays = [
        pa.array(cols[f.name], f.type)
        if not isinstance(cols[f.name], pa.Array)
        else cols[f.name].cast(f.type)
        for f in schema
    ]
    return pa.Table.from_arrays(arrays, schema=schema)


LAYOUT = "rows-per-fragment-v1"  # bump to rebuild cached stores when the product's table layout changes


def _append(store: Store, tbl: Any, data: pa.Table) -> None:
    """Append as the product does (bounded fragments when the store bounds them)."""
    from memdeck.core.storage.tables import append_rows

    append_rows(store.engine, tbl, data)


def build(size: int, rebuild: bool = False) -> dict[str, Any]:
    """Build (or reuse) the memdeck store of this size. Returns what it did and how long each step took."""
    path = store_path(size)
    marker = path / "bench-built"
    if marker.exists() and marker.read_text().strip() == LAYOUT and not rebuild:
        saved = path / "bench-build.json"  # what building it took, on this machine
        info = json.loads(saved.read_text()) if saved.exists() else {}
        return {**info, "size": size, "cached": True, "path": str(path)}
    if path.exists():
        shutil.rmtree(path)
    data = dataset(size)
    store = Store.open(path, embedder=HashEmbedder(DIM), config=bench_config())
    tbl = store.engine.table(TIER)
    schema = tier_schema(TIER, DIM)
    out: dict[str, Any] = {"size": size, "cached": False, "path": str(path)}
    with Timer() as t:
        for start in range(0, size, CHUNK):
            end = min(size, start + CHUNK)
            _append(store, tbl, arrow_rows(data, start, end, schema))
            log(f"memdeck-{size}: wrote rows {start:,}-{end:,}")
    out["write_s"] = round(t.seconds, 1)
    with Timer() as t:
        done = store.engine.ensure_indexes(TIER)
    out["index_s"] = round(t.seconds, 1)
    out["indexes"] = done
    out["fragments"] = store.engine.fragment_count(TIER)
    store.close()
    out["built_at"] = time.strftime("%Y-%m-%d %H:%M")
    (path / "bench-build.json").write_text(json.dumps(out, default=str))
    marker.write_text(LAYOUT + "\n")
    log(f"memdeck-{size}: built in {out['write_s']} s + indexes {out['index_s']} s: {done}")
    return out


# --- recall -----------------------------------------------------------------------------------------


def _lookup(data: Dataset) -> tuple[list[dict[str, Any]], np.ndarray, dict[str, np.ndarray]]:
    queries = data.queries()
    qv = data.query_vectors()
    table: dict[str, np.ndarray] = {}
    kept = []
    for q in queries:
        if q["text"] in table:  # two queries with the same words would share one vector
            continue
        table[q["text"]] = qv[q["n"]]
        kept.append(q)
    return kept, qv, table


def recall_bench(size: int, n_queries: int, warmup: int, with_model: bool) -> dict[str, Any]:
    built = build(size)
    data = dataset(size)
    queries, _qv, table = _lookup(data)
    queries = queries[: n_queries + warmup]
    config = bench_config()
    if with_model:
        return recall_with_model(size, queries, warmup, config)
    store = Store.open(store_path(size), embedder=LookupEmbedder(table), config=config, create=False)
    # What `memdeck maintain` does: indices the current code wants that a cached store may lack.
    with Timer() as t:
        added = store.engine.ensure_indexes(TIER)
    # Rows rewritten since the store was built (earlier runs' access counts) sit outside LanceDB's full-text
    # index until maintenance folds them in, and LanceDB's path scores them apart from the indexed rows:
    # fold them in as `memdeck maintain` and the app's scheduler do, so both engines see one index.
    unindexed = _unindexed_rows(store)
    if any(unindexed.values()):
        store.engine.compact(TIER)
    indexed = store.engine.vector_indexed(TIER)
    out: dict[str, Any] = {
        "size": size,
        "queries": len(queries) - warmup,
        "warmup": warmup,
        "ann_index": indexed,
        "indexes": sorted(_index_names(store)),
        "indexes_added": added,
        "build": built,
        "indexes_added_s": round(t.seconds, 2),
        "unindexed_before": unindexed,
        "unindexed_after": _unindexed_rows(store),
    }

    # 1. The product's recall: principal filter, vector + full text per tier, composite score.
    #    Each principal's partition of the recall index is loaded first (its load time is reported apart).
    for principal in PRINCIPALS:
        store.recall(queries[0]["text"], principal=principal, k=10, record_access=False, trace=False)
        recall_index(store.engine).wait()
    out["grouped_by_principal"] = size > recall_index(store.engine).max_rows
    for q in in_partition_order(store, queries[:warmup], size):
        store.recall(q["text"], principal=q["principal"], k=10, record_access=False, trace=False)
    wall, search, score, embed, cpu = [], [], [], [], []
    for q in in_partition_order(store, queries[warmup:], size):
        with Timer() as t:
            res = store.recall(q["text"], principal=q["principal"], k=10, record_access=False, trace=False)
        wall.append(t.ms)
        cpu.append(t.cpu_ms)
        search.append(res.timings_ms["search"])
        score.append(res.timings_ms["score"])
        embed.append(res.timings_ms["embed"])
    out["recall_excl_embed"] = percentiles([w - e for w, e in zip(wall, embed, strict=False)])
    out["recall_cpu_ms"] = percentiles(cpu)
    out["search_ms"] = percentiles(search)
    out["score_ms"] = percentiles(score)
    out["rest_ms"] = percentiles(
        [w - s - c - e for w, s, c, e in zip(wall, search, score, embed, strict=False)]
    )
    # High-water mark of the recall phase alone: the parts and the exact search below map the data set's
    # vectors (1.5 GB at 1M), which is the benchmark's memory, not recall's.
    out["peak_rss_recall_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out["engine"] = str(config["recall"].get("engine", "memory"))
    out["index"] = index_size(store)
    out["engines"] = compare_engines(store, queries[warmup:], table, config, size)

    # 2. The parts of the search step, each alone, on the same queries.
    tbl = store.engine.table(TIER)
    cols = candidate_columns(TIER)
    limit = 10 * int(config["recall"].get("candidate_multiplier", 4))
    parts: dict[str, tuple[list[float], list[float]]] = {}

    def part(name: str, fn: Any) -> None:
        with Timer() as t:
            fn()
        wall, cpu = parts.setdefault(name, ([], []))
        wall.append(t.ms)
        cpu.append(t.cpu_ms)

    ds = tbl.to_lance()
    minimal = [c for c in cols if c in MINIMAL_COLUMNS]

    def nearest(vec: np.ndarray, refine: bool) -> dict[str, Any]:
        out = {"column": "vector", "q": vec, "k": limit, "metric": "cosine"}
        if indexed:
            out.update(nprobes=24, **({"refine_factor": 4} if refine else {}))
        return out

    for q in queries[warmup:]:
        where = F.all_of(Scope.of(q["principal"]).where(), state_filter(False))
        vec = table[q["text"]]
        fts = {"query": q["text"], "columns": ["text"]}
        part("vector_prefilter", lambda: vector_search(tbl, vec, where, limit, cols, indexed))
        part("vector_nofilter", lambda: vector_search(tbl, vec, None, limit, cols, indexed))
        part("vector_ids_only", lambda: vector_search(tbl, vec, where, limit, ["id"], indexed))
        part(
            "vector_ids_norefine",
            lambda: ds.to_table(
                columns=["id", "_distance"], filter=where, prefilter=True, nearest=nearest(vec, False)
            ),
        )
        part(
            "vector_minimal_cols",
            lambda: ds.to_table(
                columns=[*minimal, "_distance"], filter=where, prefilter=True, nearest=nearest(vec, True)
            ),
        )
        part("fts_prefilter", lambda: keyword_search(tbl, q["text"], where, limit, cols))
        part("fts_nofilter", lambda: keyword_search(tbl, q["text"], None, limit, cols))
        part("fts_ids_only", lambda: keyword_search(tbl, q["text"], where, limit, ["id"]))
        part(
            "fts_ids_nofilter",
            lambda: ds.to_table(columns=["id", "_score"], full_text_query=fts, limit=limit),
        )
    out["parts"] = {
        k: {**percentiles(w), "cpu_p50": float(np.percentile(c, 50))} for k, (w, c) in parts.items()
    }
    out["plans"] = plan_metrics(ds, queries[warmup : warmup + 10], cols, limit)

    # 3. recall@10 of the vector path (as recall() runs it) against exact search over the same rows.
    out["ann_recall"] = ann_recall(store, data, queries[warmup:], table, indexed, limit)
    store.close()

    # 4. recall as an agent calls it (access counts recorded in a background thread, a trace written),
    #    on a copy, since it writes to the store. Up to 100k: copying the 1M store is not worth its minutes.
    if size <= 100_000:
        copy = WORK / f"defaults-{size}"
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(store_path(size), copy)
        s2 = Store.open(copy, embedder=LookupEmbedder(table), config=config, create=False)
        for principal in PRINCIPALS:
            s2.recall(queries[0]["text"], principal=principal, k=10, record_access=False, trace=False)
        for q in queries[:warmup]:
            s2.recall(q["text"], principal=q["principal"], k=10)
        for key, kwargs in (
            ("recall_defaults", {}),
            ("recall_access_only", {"trace": False}),
            ("recall_trace_only", {"record_access": False}),
        ):
            wall = []
            for q in queries[warmup:]:
                with Timer() as t:
                    s2.recall(q["text"], principal=q["principal"], k=10, **kwargs)
                wall.append(t.ms)
            s2.close()  # joins the background writes, so each variant starts from a quiet store
            out[key] = percentiles(wall)
        out["fragments_after_defaults"] = s2.engine.fragment_count(TIER)
        shutil.rmtree(copy, ignore_errors=True)
    return out


def in_partition_order(store: Store, queries: list[dict[str, Any]], size: int) -> Iterator[dict[str, Any]]:
    """The queries as they come when every principal's partition fits in the recall index; otherwise
    (1M rows: ten partitions of 100k, three fit in ``index_max_rows``) principal by principal, each
    principal's partition loaded (in the background, as a long-lived process does) and waited for before
    its first query: what an agent recalling for one principal sees. Switching principal then costs a
    partition load, reported apart (``index``)."""
    index = recall_index(store.engine)
    if index is None or size <= index.max_rows:
        yield from queries
        return
    for principal in PRINCIPALS:
        mine = [q for q in queries if q["principal"] == principal]
        if not mine:
            continue
        key = (TIER, Scope.of(principal).where())
        for _ in range(3):  # a load of another partition may be under way: it goes first
            if key in index.partitions:
                break
            store.recall(mine[0]["text"], principal=principal, k=10, record_access=False, trace=False)
            index.wait()
        yield from mine


def index_size(store: Store) -> dict[str, Any]:
    """What the in-memory recall index holds after the timed recalls: rows, bytes, first-load time."""
    index = recall_index(store.engine)
    if index is None or not index.loads:
        return {}
    rows = sum(load["rows"] for load in index.loads)
    nbytes = sum(load["bytes"] for load in index.loads)
    seconds = sum(load["seconds"] for load in index.loads)
    return {
        "partitions": len(index.loads),
        "rows": rows,
        "bytes": nbytes,
        "load_s": round(seconds, 2),
        "mb_per_100k": round(nbytes / rows * 100_000 / 2**20, 1) if rows else None,
        "load_s_per_100k": round(seconds / rows * 100_000, 2) if rows else None,
        "held_rows": index.rows(),
        "held_mb": round(index.nbytes() / 2**20, 1),
    }


def compare_engines(
    store: Store,
    queries: list[dict[str, Any]],
    table: dict[str, np.ndarray],
    config: dict[str, Any],
    size: int,
) -> dict[str, Any]:
    """The in-memory index against LanceDB's searches (``[recall] engine = "lance"``) on the same queries,
    asked in turn: p50 of each, whether they return the same ids in the same order, and how often each has
    the row the query was made from in its top 10 (the only relevance the synthetic set knows)."""
    lance_config = json.loads(json.dumps(config))
    lance_config["recall"]["engine"] = "lance"
    other = Store.open(store.root, embedder=LookupEmbedder(table), config=lance_config, create=False)
    for q in queries[:10]:
        other.recall(q["text"], principal=q["principal"], k=10, record_access=False, trace=False)
    times: dict[str, list[float]] = {"memory": [], "lance": []}
    hits = {"memory": 0, "lance": 0}
    same = same_set = 0
    examples = []
    for q in in_partition_order(store, queries, size):
        got = {}
        for name, s in (("memory", store), ("lance", other)):
            with Timer() as t:
                res = s.recall(q["text"], principal=q["principal"], k=10, record_access=False, trace=False)
            times[name].append(t.ms - res.timings_ms["embed"])
            got[name] = [item.memory.id for item in res.items]
            hits[name] += row_id(q["target"]) in got[name]
        same += got["memory"] == got["lance"]
        same_set += set(got["memory"]) == set(got["lance"])
        if got["memory"] != got["lance"] and len(examples) < 5:
            examples.append({"query": q["text"], "memory": got["memory"], "lance": got["lance"]})
    other.close()
    n = len(queries)
    return {
        "queries": n,
        "same_order": same,
        "same_set": same_set,
        "target_in_top10": hits,
        "memory_p50": percentiles(times["memory"])["p50"],
        "lance_p50": percentiles(times["lance"])["p50"],
        "examples": examples,
    }


def recall_with_model(
    size: int, queries: list[dict[str, Any]], warmup: int, config: dict[str, Any]
) -> dict[str, Any]:
    """The same recall with the real model embedding each query. The stored vectors are synthetic, so only
    the time means something here; it runs in its own process so the model's memory is reported apart."""
    embedder = SentenceTransformerEmbedder()
    embedder.load()
    embedder.encode(["warm up the model"])
    store = Store.open(store_path(size), embedder=embedder, config=config, create=False)
    for q in queries[:warmup]:
        store.recall(q["text"], principal=q["principal"], k=10, record_access=False, trace=False)
    wall, embed, cpu = [], [], []
    for q in queries[warmup:]:
        with Timer() as t:
            res = store.recall(q["text"], principal=q["principal"], k=10, record_access=False, trace=False)
        wall.append(t.ms)
        cpu.append(t.cpu_ms)
        embed.append(res.timings_ms["embed"])
    store.close()
    return {
        "size": size,
        "queries": len(queries) - warmup,
        "recall_incl_embed": percentiles(wall),
        "embed_ms": percentiles(embed),
        "cpu_ms": percentiles(cpu),
    }


_METRIC = re.compile(r"(\w+)=([\d.]+)(?:\s*([KMG]))?(?:\s*B)?[,\]]")
_SCALE = {None: 1, "": 1, "K": 1e3, "M": 1e6, "G": 1e9}


def _operator_metrics(plan: str, operator: str) -> dict[str, float]:
    """The numeric metrics of the first ``operator`` line of an analyzed DataFusion plan."""
    for line in plan.splitlines():
        if line.strip().startswith(operator + ":"):
            metrics = {k: float(v) * _SCALE[u] for k, v, u in _METRIC.findall(line)}
            elapsed = re.search(r"elapsed=([\d.]+)(ms|µs|s)", line)
            if elapsed:
                value, unit = float(elapsed.group(1)), elapsed.group(2)
                metrics["elapsed_ms"] = value * {"ms": 1.0, "µs": 1e-3, "s": 1e3}[unit]
            return metrics
    return {}


def plan_metrics(ds: Any, queries: list[dict[str, Any]], cols: list[str], limit: int) -> dict[str, Any]:
    """What LanceDB itself reports for the full-text search with and without the principal prefilter, and
    for reading the candidates' columns: postings compared, and the reads (requests, bytes) per row."""
    runs: dict[str, list[dict[str, float]]] = {}
    for q in queries:
        where = F.all_of(Scope.of(q["principal"]).where(), state_filter(False))
        fts = {"query": q["text"], "columns": ["text"]}
        variants = {
            "fts_prefilter_all_columns": {"columns": [*cols, "_score"], "filter": where, "prefilter": True},
            "fts_prefilter_id": {"columns": ["id", "_score"], "filter": where, "prefilter": True},
            "fts_nofilter_id": {"columns": ["id", "_score"]},
        }
        for name, kwargs in variants.items():
            try:
                plan = ds.scanner(full_text_query=fts, limit=limit, **kwargs).analyze_plan()
            except Exception as exc:  # noqa: BLE001 - plan output is diagnostics only
                log(f"analyze_plan failed: {exc}")
                return {}
            runs.setdefault(name, []).append(
                {
                    **{f"match_{k}": v for k, v in _operator_metrics(plan, "MatchQuery").items()},
                    **{f"read_{k}": v for k, v in _operator_metrics(plan, "LanceRead").items()},
                }
            )
    return {
        name: {key: float(np.median([r.get(key, 0.0) for r in rs])) for key in rs[0]}
        for name, rs in runs.items()
    }


def _index_names(store: Store) -> list[str]:
    from memdeck.core.storage.indexing import index_names

    return list(index_names(store.engine.table(TIER)))


def ann_recall(
    store: Store,
    data: Dataset,
    queries: list[dict[str, Any]],
    table: dict[str, np.ndarray],
    indexed: bool,
    limit: int,
) -> dict[str, Any]:
    tbl = store.engine.table(TIER)
    lance = tbl.to_lance().to_table(columns=["id", "principal", "state"])
    ids = np.asarray(lance["id"].to_pylist())
    principal = np.asarray(lance["principal"].to_pylist())
    active = np.asarray(lance["state"].to_pylist()) == "active"
    # Vectors in table order (fragments may not follow generation order).
    order = np.fromiter((int(rid[4:], 16) for rid in ids), np.int64, len(ids))
    vectors = data.vectors
    at10, in_candidates = [], []
    for q in queries:
        where = F.all_of(Scope.of(q["principal"]).where(), state_filter(False))
        rows = np.flatnonzero((principal == q["principal"]) & active)
        truth_rows = exact_top_k_rows(vectors, order, rows, table[q["text"]])
        truth = set(ids[truth_rows])
        got10 = [r["id"] for r in vector_search(tbl, table[q["text"]], where, 10, ["id"], indexed)]
        got = [r["id"] for r in vector_search(tbl, table[q["text"]], where, limit, ["id"], indexed)]
        at10.append(len(truth & set(got10)) / 10)
        in_candidates.append(len(truth & set(got)) / 10)
    return {
        "recall_at_10": float(np.mean(at10)),
        "top10_in_candidates": float(np.mean(in_candidates)),
        "candidates": limit,
        "queries": len(queries),
        "exact": "numpy cosine over the principal's active rows",
    }


def exact_top_k_rows(
    vectors: np.ndarray, order: np.ndarray, rows: np.ndarray, query: np.ndarray
) -> np.ndarray:
    """Exact top-10 table rows for a query; ``order`` maps a table row to its generated row."""
    gen_rows = order[rows]
    sort = np.argsort(gen_rows)
    top = exact_top_k(vectors, gen_rows[sort], query, 10)
    back = dict(zip(gen_rows, rows, strict=False))
    return np.asarray([back[int(g)] for g in top])


# --- ingest -----------------------------------------------------------------------------------------


def ingest_bench(n_texts: int, singles: int, chunk: int, drain: str = "chunk") -> dict[str, Any]:
    """Batch add against raw encode, interleaved chunk by chunk so both see the same machine load.

    The graph is indexed after each write, in the background. ``drain="chunk"``: after each remember_many,
    outside both timers, wait until the graph has caught up (that wait is the chunk's graph catch-up), so
    neither timed step shares the machine with the indexing. ``drain="end"``: no wait between chunks (the
    indexing runs beside the next steps, as under a steady stream of writes); the catch-up is the wait after
    the last chunk."""
    from memdeck.core.graph.memory.queue import drain as drain_graph

    texts = locomo_texts(n_texts)
    embedder = SentenceTransformerEmbedder()
    embedder.load()
    model = embedder._model
    model.encode(texts[:64], batch_size=64, normalize_embeddings=True)
    root = WORK / "ingest"
    if root.exists():
        shutil.rmtree(root)
    store = Store.open(root / "batch", embedder=embedder, config=bench_config())
    raw_s, store_s, graph_s, added = [], [], [], 0
    for n, start in enumerate(range(0, n_texts, chunk)):
        part = texts[start : start + chunk]
        items = [
            MemoryInput(text=t, tier=TIER, principal=PRINCIPALS[(start + i) % 3], agent="assistant")
            for i, t in enumerate(part)
        ]

        def raw() -> None:
            with Timer() as t:
                model.encode(
                    part,
                    batch_size=64,
                    normalize_embeddings=True,
                    convert_to_numpy=True,
                    show_progress_bar=False,
                )
            raw_s.append(t.seconds)

        def mine() -> None:
            nonlocal added
            with Timer() as t:
                results = store.remember_many(items)
            store_s.append(t.seconds)
            added += sum(1 for x in results if x.action == "added")
            if drain == "chunk" or start + chunk >= n_texts:
                with Timer() as g:
                    drain_graph(store.engine)  # until the graph holds this chunk's entities
                graph_s.append(g.seconds)

        for step in (raw, mine) if n % 2 == 0 else (mine, raw):
            step()
        log(f"ingest chunk {n}: raw {raw_s[-1]:.1f} s, remember_many {store_s[-1]:.1f} s")
    entities = len(store.entities())
    store.close()
    # What remember_many spends beside the model (redaction, hashing, rows, commit), measured on its own.
    store = Store.open(root / "nomodel", embedder=HashEmbedder(DIM), config=bench_config())
    with Timer() as t:
        for start in range(0, n_texts, chunk):
            store.remember_many(
                [
                    MemoryInput(text=x, tier=TIER, principal="p", agent="a")
                    for x in texts[start : start + chunk]
                ]
            )
    overhead_s = t.seconds
    store.close()

    # Single remember(): one embedding of one text plus one commit each.
    store = Store.open(root / "single", embedder=embedder, config=bench_config())
    single, single_embed = [], []
    for i, text in enumerate(locomo_texts(n_texts + singles)[n_texts:]):
        with Timer() as t:
            store.remember(text, principal=PRINCIPALS[i % 3], agent="assistant")
        single.append(t.ms)
        with Timer() as t:
            embedder.encode([text])
        single_embed.append(t.ms)
    store.close()
    shutil.rmtree(root, ignore_errors=True)
    raw_total, store_total = sum(raw_s), sum(store_s)
    ratios = [a / b for a, b in zip(raw_s, store_s, strict=False)]
    return {
        "texts": n_texts,
        "chunk": chunk,
        "added": added,
        "raw_encode_s": raw_total,
        "remember_many_s": store_total,
        "raw_per_s": n_texts / raw_total,
        "store_per_s": n_texts / store_total,
        "ratio": raw_total / store_total,
        "ratio_chunks": percentiles(ratios),
        "graph_drain": drain,
        "graph_catch_up_s": graph_s,
        "graph_catch_up_last_s": graph_s[-1] if graph_s else None,
        "ratio_with_graph_wait": raw_total / (store_total + sum(graph_s)),
        "entities": entities,
        "overhead_without_model_s": overhead_s,
        "single_remember_ms": percentiles(single),
        "single_embed_ms": percentiles(single_embed),
        "torch_threads": _torch_threads(),
    }


def _torch_threads() -> int | None:
    try:
        import torch
    except ImportError:
        return None
    return int(torch.get_num_threads())


def embed_bench(n: int) -> dict[str, Any]:
    """One short query through the model, as recall embeds it (run under different OMP settings)."""
    import os

    embedder = SentenceTransformerEmbedder()
    embedder.load()
    embedder.encode(["warm up the model"])
    wall, cpu = [], []
    for i in range(n):
        with Timer() as t:
            embedder.encode([f"what did Caroline say about the support group on day {i}"])
        wall.append(t.ms)
        cpu.append(t.cpu_ms)
    return {
        "embed_ms": percentiles(wall),
        "cpu_ms": percentiles(cpu),
        "torch_threads": _torch_threads(),
        "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY", "(default)"),
    }


# --- many small writes ------------------------------------------------------------------------------


def smallwrites_bench(writes: int, base: int, n_queries: int) -> dict[str, Any]:
    data = dataset(10_000)
    texts = data.texts()
    queries = data.queries()[:n_queries]
    root = WORK / "smallwrites"
    if root.exists():
        shutil.rmtree(root)
    config = bench_config()
    store = Store.open(root / "store", embedder=HashEmbedder(DIM), config=config)
    for start in range(0, base, 1000):
        store.remember_many(
            [
                MemoryInput(
                    text=texts[i], tier=TIER, principal=PRINCIPALS[i % len(PRINCIPALS)], agent="assistant"
                )
                for i in range(start, min(base, start + 1000))
            ]
        )
    store.engine.ensure_indexes(TIER)
    store.engine.compact(TIER)

    def measure(s: Store) -> dict[str, float]:
        for q in queries[:10]:
            s.recall(q["text"], principal=q["principal"], k=10, record_access=False, trace=False)
        wall = []
        for q in queries[10:]:
            with Timer() as t:
                s.recall(q["text"], principal=q["principal"], k=10, record_access=False, trace=False)
            wall.append(t.ms)
        return percentiles(wall)

    before = measure(store)
    lat, compact_ms = [], []
    frag_max = 0
    with Timer() as total:
        for i in range(writes):
            text = f"{texts[(base + i) % len(texts)]} note {i}"
            before_v = store.engine.table(TIER).version
            with Timer() as t:
                store.remember(text, principal=PRINCIPALS[i % len(PRINCIPALS)], agent="assistant")
            lat.append(t.ms)
            if store.engine.table(TIER).version - before_v > 1:  # this write also compacted
                compact_ms.append(t.ms)
            if i % 500 == 0:
                frag_max = max(frag_max, store.engine.fragment_count(TIER))
                log(
                    f"small writes: {i:,}/{writes:,}, p50 {np.percentile(lat, 50):.1f} ms, "
                    f"fragments {store.engine.fragment_count(TIER)}"
                )
    fragments_after = store.engine.fragment_count(TIER)
    unindexed = _unindexed_rows(store)
    store.close()

    # The same rows, freshly compacted with every index up to date.
    fresh_root = root / "fresh"
    shutil.copytree(root / "store", fresh_root)
    fresh = Store.open(fresh_root, embedder=HashEmbedder(DIM), config=config)
    with Timer() as t:  # what `memdeck maintain` does to a table
        fresh.engine.compact(TIER)
        fresh.engine.ensure_indexes(TIER)
    fresh_compact_s = t.seconds
    fragments_fresh = fresh.engine.fragment_count(TIER)
    # Both stores answer each query in turn, so a change in the machine's load hits both alike.
    store = Store.open(root / "store", embedder=HashEmbedder(DIM), config=config)
    after, fresh_after = measure_pair(store, fresh, queries)
    store.close()
    fresh.close()
    shutil.rmtree(root, ignore_errors=True)
    return {
        "base_rows": base,
        "writes": writes,
        "write_total_s": total.seconds,
        "write_ms": percentiles(lat),
        "writes_that_compacted": len(compact_ms),
        "compacting_write_ms": percentiles(compact_ms),
        "recall_before_ms": before,
        "recall_after_ms": after,
        "recall_fresh_ms": fresh_after,
        "ratio_after_vs_fresh": after["p50"] / fresh_after["p50"],
        "fragments_after": fragments_after,
        "fragments_max_seen": frag_max,
        "fragments_fresh": fragments_fresh,
        "unindexed_rows_after": unindexed,
        "fresh_compact_s": fresh_compact_s,
        "compact_fragment_threshold": int(config["store"]["compact_fragment_threshold"]),
    }


def ftsfilter_bench(size: int, n_queries: int) -> dict[str, Any]:
    """The principal-filtered full-text search alone (ids and scores), under whatever
    LANCE_FLAT_SEARCH_PERCENT_THRESHOLD this process has: run once with memdeck's setting and once with
    LanceDB's default, the two show what the setting buys and that it changes no result."""
    import os

    build(size)
    data = dataset(size)
    queries = data.queries()[: n_queries + 10]
    store = Store.open(store_path(size), embedder=HashEmbedder(DIM), config=bench_config(), create=False)
    ds = store.engine.table(TIER).to_lance()
    wall, cpu, comparisons, answers = [], [], [], []
    for n, q in enumerate(queries):
        where = F.all_of(Scope.of(q["principal"]).where(), state_filter(False))
        fts = {"query": q["text"], "columns": ["text"]}
        with Timer() as t:
            found = ds.to_table(
                columns=["id", "_score"], filter=where, prefilter=True, limit=40, full_text_query=fts
            )
        if n < 10:  # warm-up
            continue
        wall.append(t.ms)
        cpu.append(t.cpu_ms)
        answers.append(
            sorted(
                f"{s:.4f} {i}"
                for s, i in zip(found["_score"].to_pylist(), found["id"].to_pylist(), strict=False)
            )
        )
        if n < 30:
            plan = ds.scanner(
                columns=["id", "_score"], filter=where, prefilter=True, limit=40, full_text_query=fts
            ).analyze_plan()
            comparisons.append(_operator_metrics(plan, "MatchQuery").get("index_comparisons", 0.0))
    store.close()
    digest = hashlib.sha256(json.dumps(answers).encode()).hexdigest()
    return {
        "size": size,
        "threshold": os.environ.get("LANCE_FLAT_SEARCH_PERCENT_THRESHOLD"),
        "queries": len(wall),
        "wall": percentiles(wall),
        "cpu_p50": float(np.percentile(cpu, 50)),
        "comparisons_p50": float(np.median(comparisons)) if comparisons else None,
        "answers_sha256": digest,
        "answers": answers,
    }


def measure_pair(
    a: Store, b: Store, queries: list[dict[str, Any]]
) -> tuple[dict[str, float], dict[str, float]]:
    """Recall latency of two stores on the same queries, alternating which goes first."""

    def one(s: Store, q: dict[str, Any]) -> float:
        with Timer() as t:
            s.recall(q["text"], principal=q["principal"], k=10, record_access=False, trace=False)
        return t.ms

    for q in queries[:10]:
        one(a, q)
        one(b, q)
    wall_a, wall_b = [], []
    for n, q in enumerate(queries[10:]):
        if n % 2:
            wall_b.append(one(b, q))
            wall_a.append(one(a, q))
        else:
            wall_a.append(one(a, q))
            wall_b.append(one(b, q))
    return percentiles(wall_a), percentiles(wall_b)


def _unindexed_rows(store: Store) -> dict[str, Any]:
    tbl = store.engine.table(TIER)
    out = {}
    try:
        for idx in tbl.list_indices():
            stats = tbl.index_stats(idx.name)
            out[idx.name] = getattr(stats, "num_unindexed_rows", None)
    except Exception as exc:  # noqa: BLE001
        out["error"] = str(exc)
    return out


# --- command line -----------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("build")
    p.add_argument("--size", type=int, required=True)
    p.add_argument("--rebuild", action="store_true")
    p.add_argument("--out")
    p = sub.add_parser("recall")
    p.add_argument("--size", type=int, required=True)
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--model", action="store_true", help="embed each query with the real model (time only)")
    p.add_argument("--out")
    p = sub.add_parser("ingest")
    p.add_argument("--texts", type=int, default=2000)
    p.add_argument("--singles", type=int, default=200)
    p.add_argument("--chunk", type=int, default=250)
    p.add_argument("--drain", choices=("chunk", "end"), default="chunk", help="when to wait for the graph")
    p.add_argument("--out")
    p = sub.add_parser("embed")
    p.add_argument("--n", type=int, default=40)
    p.add_argument("--out")
    p = sub.add_parser("ftsfilter")
    p.add_argument("--size", type=int, required=True)
    p.add_argument("--queries", type=int, default=100)
    p.add_argument("--out")
    p = sub.add_parser("smallwrites")
    p.add_argument("--writes", type=int, default=10_000)
    p.add_argument("--base", type=int, default=5_000)
    p.add_argument("--queries", type=int, default=110)
    p.add_argument("--out")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    if args.cmd == "build":
        result = build(args.size, args.rebuild)
    elif args.cmd == "recall":
        result = recall_bench(args.size, args.queries, args.warmup, args.model)
    elif args.cmd == "ingest":
        result = ingest_bench(args.texts, args.singles, args.chunk, args.drain)
    elif args.cmd == "embed":
        result = embed_bench(args.n)
    elif args.cmd == "ftsfilter":
        result = ftsfilter_bench(args.size, args.queries)
    else:
        result = smallwrites_bench(args.writes, args.base, args.queries)
    result["bench"] = args.cmd
    result["seconds"] = round(time.perf_counter() - t0, 1)
    emit(result, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
