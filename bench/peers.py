"""Peers measured on the same synthetic data and queries as memdeck (bench/common.py).

    python bench/peers.py chroma --size 100000 [--queries 200] [--out c.json]
    python bench/peers.py proto  --size 100000 [--queries 200] [--out p.json]

* Chroma (a bench-only dependency: ``pip install chromadb==1.5.9``): a persistent client, its HNSW index
  with cosine space, the same vectors passed in with the texts and a ``principal`` metadata field. Vector
  search only, with and without ``where={"principal": ...}``. recall@10 against exact search is reported
  for the filtered query (the one that answers the same question as memdeck's recall).
* The prototype a memory-layer article describes: SQLite FTS5 for keywords, numpy brute force for vectors,
  reciprocal rank fusion (k=60) of the two lists, the principal as a filter on both. Written here as a
  baseline; no ANN, no composite score.

Built stores are cached under bench/.work/ by size.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import PRINCIPALS, WORK, Dataset, Timer, dataset, emit, exact_top_k, log, percentiles, row_id

RRF_K = 60
CANDIDATES = 40  # as memdeck: k * candidate_multiplier


def _queries(data: Dataset, n: int, warmup: int) -> tuple[list[dict[str, Any]], np.ndarray]:
    seen: set[str] = set()
    kept = []
    for q in data.queries():
        if q["text"] in seen:
            continue
        seen.add(q["text"])
        kept.append(q)
    return kept[: n + warmup], data.query_vectors()


def _truth(data: Dataset, queries: list[dict[str, Any]], qv: np.ndarray) -> dict[int, set[str]]:
    """Exact top-10 ids per query among the query principal's rows (every row: peers have no 'state')."""
    vectors = np.asarray(data.vectors)
    pidx = data.principal_idx
    out = {}
    for q in queries:
        rows = np.flatnonzero(pidx == PRINCIPALS.index(q["principal"]))
        out[q["n"]] = {row_id(int(r)) for r in exact_top_k(vectors, rows, qv[q["n"]], 10)}
    return out


# --- Chroma -----------------------------------------------------------------------------------------


def chroma_client(path: Path) -> Any:
    import chromadb
    from chromadb.config import Settings

    return chromadb.PersistentClient(path=str(path), settings=Settings(anonymized_telemetry=False))


def chroma_build(size: int) -> tuple[Any, dict[str, Any]]:
    path = WORK / f"chroma-{size}"
    marker = path / "bench-built"
    info: dict[str, Any] = {"cached": marker.exists()}
    if marker.exists():
        # The add time of the run that built it (same machine), so a cached run still reports it.
        saved = path / "build.json"
        if saved.exists():
            info.update(json.loads(saved.read_text()), cached=True)
        client = chroma_client(path)
        return client.get_collection("bench", embedding_function=None), info
    if path.exists():
        shutil.rmtree(path)
    data = dataset(size)
    client = chroma_client(path)
    coll = client.create_collection(
        "bench", configuration={"hnsw": {"space": "cosine"}}, embedding_function=None
    )
    batch = min(5000, client.get_max_batch_size())
    texts = data.texts()
    pidx = data.principal_idx
    with Timer() as t:
        for start in range(0, size, batch):
            end = min(size, start + batch)
            coll.add(
                ids=[row_id(i) for i in range(start, end)],
                embeddings=np.asarray(data.vectors[start:end], dtype=np.float32),
                documents=texts[start:end],
                metadatas=[{"principal": PRINCIPALS[int(p)]} for p in pidx[start:end]],
            )
            if (start // batch) % 20 == 0:
                log(f"chroma-{size}: added {end:,} rows in {time.perf_counter() - t.t0:.0f} s")
    info["add_s"] = round(t.seconds, 1)
    info["add_rows_per_s"] = round(size / t.seconds)
    info["built_at"] = time.strftime("%Y-%m-%d %H:%M")
    (path / "build.json").write_text(json.dumps(info))
    marker.write_text("ok\n")
    return coll, info


def chroma_bench(size: int, n: int, warmup: int) -> dict[str, Any]:
    coll, info = chroma_build(size)
    data = dataset(size)
    queries, qv = _queries(data, n, warmup)
    out: dict[str, Any] = {"peer": "chroma", "size": size, "build": info, "count": coll.count()}
    truth = _truth(data, queries[warmup:], qv)
    for label, with_where in (("vector", False), ("vector_where", True)):
        lat, cpu, rec = [], [], []
        for i, q in enumerate(queries):
            where = {"principal": q["principal"]} if with_where else None
            with Timer() as t:
                res = coll.query(query_embeddings=[qv[q["n"]]], n_results=10, where=where)
            if i >= warmup:
                lat.append(t.ms)
                cpu.append(t.cpu_ms)
                if with_where:
                    rec.append(len(truth[q["n"]] & set(res["ids"][0])) / 10)
        out[label] = percentiles(lat)
        out[label]["cpu_p50"] = float(np.percentile(cpu, 50))
        if rec:
            out[label]["recall_at_10"] = float(np.mean(rec))
    return out


# --- the article's prototype: SQLite FTS5 + numpy brute force + RRF ---------------------------------


class Prototype:
    def __init__(self, root: Path, vectors: np.ndarray, principal: np.ndarray) -> None:
        self.db = sqlite3.connect(root / "fts.sqlite")
        self.vectors = vectors
        self.principal = principal

    @classmethod
    def build(cls, size: int) -> tuple[Prototype, dict[str, Any]]:
        root = WORK / f"proto-{size}"
        marker = root / "bench-built"
        data = dataset(size)
        info: dict[str, Any] = {"cached": marker.exists()}
        if not marker.exists():
            if root.exists():
                shutil.rmtree(root)
            root.mkdir(parents=True)
            db = sqlite3.connect(root / "fts.sqlite")
            db.execute("CREATE VIRTUAL TABLE docs USING fts5(text, principal UNINDEXED, id UNINDEXED)")
            texts = data.texts()
            pidx = data.principal_idx
            with Timer() as t:
                db.executemany(
                    "INSERT INTO docs(rowid, text, principal, id) VALUES (?, ?, ?, ?)",
                    ((i, texts[i], PRINCIPALS[int(pidx[i])], row_id(i)) for i in range(size)),
                )
                db.commit()
            db.close()
            info["fts_build_s"] = round(t.seconds, 1)
            marker.write_text("ok\n")
        with Timer() as t:
            vectors = np.load(data.root / "vectors.npy")  # the prototype keeps every vector in RAM
        info["load_vectors_s"] = round(t.seconds, 2)
        principal = np.asarray(PRINCIPALS)[data.principal_idx]
        return cls(root, vectors, principal), info

    def search(
        self, text: str, qvec: np.ndarray, principal: str, k: int = 10
    ) -> list[tuple[str, float, str]]:
        sims = self.vectors @ qvec
        sims[self.principal != principal] = -np.inf
        top = np.argpartition(-sims, CANDIDATES)[:CANDIDATES]
        top = top[np.argsort(-sims[top])]
        words = " OR ".join(f'"{w}"' for w in text.split() if w.isalnum())
        kw = (
            self.db.execute(
                "SELECT rowid FROM docs WHERE docs MATCH ? AND principal = ? ORDER BY bm25(docs) LIMIT ?",
                (words, principal, CANDIDATES),
            ).fetchall()
            if words
            else []
        )
        fused: dict[int, float] = {}
        for rank, row in enumerate(top, start=1):
            fused[int(row)] = fused.get(int(row), 0.0) + 1.0 / (RRF_K + rank)
        for rank, (row,) in enumerate(kw, start=1):
            fused[int(row)] = fused.get(int(row), 0.0) + 1.0 / (RRF_K + rank)
        best = sorted(fused.items(), key=lambda kv: -kv[1])[:k]
        rows = (
            {
                r: (i, t)
                for r, i, t in self.db.execute(
                    f"SELECT rowid, id, text FROM docs WHERE rowid IN ({','.join('?' * len(best))})",
                    [r for r, _ in best],
                ).fetchall()
            }
            if best
            else {}
        )
        return [(rows[r][0], s, rows[r][1]) for r, s in best if r in rows]

    def vector_only(self, qvec: np.ndarray, principal: str, k: int = 10) -> list[str]:
        sims = self.vectors @ qvec
        sims[self.principal != principal] = -np.inf
        top = np.argpartition(-sims, k)[:k]
        return [row_id(int(r)) for r in top[np.argsort(-sims[top])]]


def proto_bench(size: int, n: int, warmup: int) -> dict[str, Any]:
    proto, info = Prototype.build(size)
    data = dataset(size)
    queries, qv = _queries(data, n, warmup)
    out: dict[str, Any] = {"peer": "prototype", "size": size, "build": info}
    lat, cpu, vec_lat = [], [], []
    for i, q in enumerate(queries):
        with Timer() as t:
            proto.search(q["text"], qv[q["n"]], q["principal"])
        if i >= warmup:
            lat.append(t.ms)
            cpu.append(t.cpu_ms)
    for q in queries[warmup:]:
        with Timer() as t:
            proto.vector_only(qv[q["n"]], q["principal"])
        vec_lat.append(t.ms)
    out["hybrid"] = percentiles(lat)
    out["hybrid"]["cpu_p50"] = float(np.percentile(cpu, 50))
    out["vector"] = percentiles(vec_lat)
    out["vector"]["recall_at_10"] = 1.0  # brute force is exact by construction
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("peer", choices=["chroma", "proto"])
    parser.add_argument("--size", type=int, required=True)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    if args.peer == "chroma":
        result = chroma_bench(args.size, args.queries, args.warmup)
    else:
        result = proto_bench(args.size, args.queries, args.warmup)
    result["seconds"] = round(time.perf_counter() - t0, 1)
    emit(result, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
