"""Recall's channels answered from the in-memory index (``recall.index``): each tier's vector and keyword
candidates, the episodic neighbours and the live procedure versions, as ``recall.search`` finds them in
LanceDB, over the rows the recall may see.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from memdeck.core.recall import bm25
from memdeck.core.recall.index import NULL, STATE_CODES, Partition
from memdeck.core.records import Memory

if TYPE_CHECKING:
    from memdeck.core.filters import RecallFilter
    from memdeck.core.store import Store


@dataclass
class TierHits:
    """One tier's candidates: (memory, vector) in vector rank order, then in keyword rank order, and the BM25 score of every row of the tier that holds a
    query term, by id (what completes a vector-only candidate's keyword score)."""

    tier: str
    vector: list[tuple[Memory, np.ndarray]]
    keyword: list[tuple[Memory, np.ndarray]]
    scores: dict[str, float]
    graph: list[tuple[Memory, np.ndarray]] = field(default_factory=list)  # reached by the graph alone


@dataclass
class Query:
    """What one recall asks of the index."""

    text: str
    qvec: np.ndarray | None
    limit: int
    at: datetime
    include_deprecated: bool
    written_by: str | None
    filters: RecallFilter | None
    graph_ids: Sequence[str] = ()  # memories the graph channel reached: read here if no search found them


def search(store: Store, parts: Sequence[Partition], q: Query) -> list[TierHits]:
    """Vector and keyword candidates of every tier, as the LanceDB path finds them: each channel's
    ``limit`` best of the rows the recall may see (principal, state, filters, not expired now), the
    keyword channel ranked by BM25 with the principal's statistics over all the tiers searched."""
    with contextlib.ExitStack() as held:
        for part in parts:
            held.enter_context(part.lock)
        return _search(store, parts, q)


def _search(store: Store, parts: Sequence[Partition], q: Query) -> list[TierHits]:
    words = bm25.query_words(q.text)
    allowed = [p.allowed(q.include_deprecated, q.written_by, q.filters) for p in parts]
    scored = bm25.principal_scores([(p.postings, m) for p, m in zip(parts, allowed, strict=True)], words)
    out = []
    for part, mask, (kw_rows, kw_scores) in zip(parts, allowed, scored, strict=True):
        live = mask & part.live(store, q.at)
        vec_rows = part.nearest(q.qvec, live, q.limit) if q.qvec is not None else []
        keep = live[kw_rows]
        kw_rows, kw_scores = kw_rows[keep], kw_scores[keep]
        order = np.lexsort((kw_rows, -kw_scores))[: q.limit]
        kw_top = kw_rows[order].tolist()
        rows = list(dict.fromkeys([*vec_rows, *kw_top]))
        taken = set(rows)
        graph_rows = [r for r in _rows_of(part, q.graph_ids, live) if r not in taken]
        rows += graph_rows
        vectors = part.cols["vector"]
        fetched = {r: (m, vectors[r]) for r, m in zip(rows, part.memories(rows), strict=True)}
        score_of = dict(zip(kw_rows.tolist(), kw_scores.tolist(), strict=True))
        scores = {fetched[r][0].id: score_of[r] for r in rows if r in score_of}
        out.append(TierHits(part.tier, [fetched[r] for r in vec_rows], [fetched[r] for r in kw_top], scores,
                            [fetched[r] for r in graph_rows]))
    return out


def _rows_of(part: Partition, ids: Sequence[str], mask: np.ndarray) -> list[int]:
    """The rows of ``mask`` holding these ids, in row order (a LanceDB scan's order)."""
    if not ids or not part.cols.n:
        return []
    return sorted(r for r in part.rows_with_ids(ids) if r < len(mask) and mask[r])


def neighbours(part: Partition | None, store: Store, q: Query, episodic: Sequence[Memory],
               max_rows: int) -> dict[str, tuple[str, ...]]:
    """Each episodic candidate's neighbours in its session (the memories just before and after it), from the
    rows the recall may see that are not expired: as ``search._session_neighbours`` reads them."""
    if part is None or not episodic:
        return {}
    sessions = [part.codes["session"].get(m.session) for m in episodic if m.session]
    wanted = [s for s in sessions if s is not None]
    mask = part.allowed(q.include_deprecated, q.written_by, q.filters) & part.live(store, q.at)
    mask &= np.isin(part.cols["session"], wanted)
    rows = np.flatnonzero(mask)
    if rows.size > max_rows:
        return {}
    c = part.cols
    started, created = c["started_at"][rows], c["created_at"][rows]
    anchor = np.where(started != NULL, started, created)
    ids = part.arrow().column("id").take(pa.array(rows)).to_pylist()
    session = c["session"][rows]
    order = sorted(range(rows.size), key=lambda i: (int(session[i]), int(anchor[i]), int(created[i]), ids[i]))
    names = {code: name for name, code in part.codes["session"].items()}
    ordered = [(names[int(session[i])], ids[i]) for i in order]
    around: dict[str, tuple[str, ...]] = {}
    for i, (sess, mem_id) in enumerate(ordered):
        around[mem_id] = tuple(ordered[j][1] for j in (i - 1, i + 1) if 0 <= j < len(ordered) and ordered[j][0] == sess)
    return around


def live_procedures(part: Partition | None) -> dict[tuple[str, str], int]:
    """The highest active version of each (principal, procedure name) in the partition."""
    if part is None:
        return {}
    with part.lock:
        keep = np.flatnonzero(part.cols["alive"] & (part.cols["state"] == STATE_CODES["active"]))
        table = part.arrow().select(["principal", "name", "proc_version"]).take(pa.array(keep))
    live: dict[tuple[str, str], int] = {}
    for principal, name, version in zip(*(table.column(c).to_pylist() for c in table.column_names), strict=True):
        key = (principal, name or "")
        live[key] = max(live.get(key, 0), version or 0)
    return live
