"""Indices: the full-text index on every tier table, an ANN vector index once a table is large.

Rows added after an index was built stay searchable: LanceDB scans the unindexed fragments too, and
``optimize()`` (run with compaction) folds them into the indices.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from lancedb.index import FTS, Bitmap, BTree, IvfPq

if TYPE_CHECKING:
    from memdeck.core.storage.base import Tables

log = logging.getLogger("memdeck.indexing")


def index_names(tbl: Any) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    try:
        for idx in tbl.list_indices():
            out[idx.name] = list(idx.columns or [])
    except Exception:  # noqa: BLE001
        pass
    return out


def has_index_on(tbl: Any, column: str) -> bool:
    return any(column in cols for cols in index_names(tbl).values())


def ensure_fts(tbl: Any) -> bool:
    if has_index_on(tbl, "text"):
        return False
    tbl.create_index(
        "text",
        config=FTS(
            with_position=False,
            base_tokenizer="simple",
            lower_case=True,
            stem=True,
            remove_stop_words=True,
            ascii_folding=True,
        ),
    )
    return True


def ensure_indexes(store: Tables, tier: str, *, force_ann: bool = False) -> dict[str, Any]:
    """Create what is missing; returns what was done. Holds the shared store lock while committing."""
    tbl = store.table(tier)
    done: dict[str, Any] = {"tier": tier}
    rows = tbl.count_rows()
    if rows == 0:
        return done
    with store.lock.shared():
        if ensure_fts(tbl):
            done["fts"] = "created"
        min_rows = store.settings.store.ann_min_rows
        if rows >= min_rows and not has_index_on(tbl, "id"):
            tbl.create_index("id", config=BTree())
            done["id_index"] = "created"
        if rows >= min_rows:
            # Every recall prefilters on principal and state; without these the filter scans both columns of
            # every row (at 100k: ~5 ms of each prefiltered search; grows with the table).
            for column in ("principal", "state"):
                if not has_index_on(tbl, column):
                    tbl.create_index(column, config=Bitmap())
                    done[f"{column}_index"] = "created"
        if (rows >= min_rows or force_ann) and not has_index_on(tbl, "vector") and rows >= 256:
            partitions = max(1, min(1024, int(rows**0.5 / 2)))
            sub_vectors = 48 if store.dim % 48 == 0 else 16 if store.dim % 16 == 0 else 8
            tbl.create_index(
                "vector",
                config=IvfPq(distance_type="cosine", num_partitions=partitions, num_sub_vectors=sub_vectors),
            )
            done["ann"] = {"type": "IVF_PQ", "partitions": partitions, "sub_vectors": sub_vectors}
    return done
