"""Recall answered from the in-memory index (``recall.index``): each tier's vector and keyword candidates,
the memories only the graph reached, the episodic neighbours and the live procedure versions, as
``recall.search`` finds them in LanceDB, over the rows the recall may see; then every component the
score reads, as arrays straight from the partitions' columns. Memory objects are made only for the
candidates someone asks for (the results a recall returns; every candidate for an explanation).
"""

from __future__ import annotations

import contextlib
import sys
import time
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, overload

import numpy as np
import pyarrow as pa

from memdeck.core.recall import bm25
from memdeck.core.recall.index import NULL, STATE_CODES, Partition, micros, rows_as_memories
from memdeck.core.recall.scoring import (
    TIER_INDEX,
    Candidate,
    CandidateColumns,
    CandidateSet,
    keyword_share,
    rank_dicts,
    similarities,
    unnamed_similarity,
    with_previous_keyword,
)
from memdeck.core.records import Memory

if TYPE_CHECKING:
    from memdeck.core.filters import RecallFilter
    from memdeck.core.storage.engine import Engine


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
    unnamed_qvec: np.ndarray | None = (
        None  # the query with the persons it names left out (``unnamed_weight``)
    )
    unnamed_weight: float = 0.0
    previous_keyword_weight: float = 0.0  # the keyword channel's share read with the previous memory's words
    score_all_rows: int = 0  # every row the recall may see is a candidate when they are at most this many
    time_cue: bool = False  # the query asks when: read which candidates state a time (``timecue``)


@dataclass
class Fusion:
    """What scoring takes from outside the partitions: how relevance fuses the channels (config
    ``[recall]``), each writing agent's trust, and the graph channel's scores and order."""

    keyword_blend: float
    neighbour_weight: float
    session_weight: float
    trust: Mapping[str, float]  # an agent not named: 0.5
    graph_scores: Mapping[str, float]
    graph_ranked: Sequence[str]


@dataclass
class _Block:
    """One partition's candidate rows: the vector hits in rank order, then the keyword hits not among
    them, then (from ``graph_from``) the rows only the graph reached: the order the LanceDB path meets them."""

    part: Partition
    allowed: np.ndarray  # the rows the filters keep (what keyword statistics are taken over)
    live: np.ndarray  # the rows this recall may see
    rows: np.ndarray
    vector: np.ndarray  # which rows the vector channel returned
    keyword: np.ndarray  # which rows the keyword channel returned
    raw: np.ndarray  # each row's BM25 score, NaN for a row that holds no query term
    graph_from: int
    dots: np.ndarray | None  # every row's dot product with the query, when the vector search made them all


def candidates(
    store: Engine,
    parts: Sequence[Partition],
    q: Query,
    fusion: Fusion,
    max_session_rows: int,
    timings: dict[str, float],
) -> CandidateSet:
    """The recall's candidates, scored as the LanceDB path scores its own (``timings``: search, context)."""
    if not parts:  # no tier searched has a table yet
        timings.update(search=0.0, context=0.0)
        return CandidateSet([], q.at, fusion.keyword_blend, fusion.neighbour_weight, fusion.session_weight)
    t0 = time.perf_counter()
    with contextlib.ExitStack() as held:
        for part in parts:
            held.enter_context(part.lock)
        words = bm25.query_words(q.text)
        blocks = _search(store, parts, q, words)
        cols, block, rows, keyword_top = _columns(blocks, q, fusion, words)
        timings["search"] = (time.perf_counter() - t0) * 1000
        t0 = time.perf_counter()
        _neighbours(blocks, cols, block, rows, max_session_rows)
        timings["context"] = (time.perf_counter() - t0) * 1000
        made = _Made(
            cols, block, rows, [(weakref.ref(b.part), b.part.generation, b.part.arrow()) for b in blocks]
        )
    return CandidateSet.from_columns(
        cols, made, q.at, fusion.keyword_blend, fusion.neighbour_weight, fusion.session_weight, keyword_top
    )


@dataclass
class _Made:
    """Makes the Candidate objects of a recall's candidates when they are asked for, each Memory read from
    its partition as the recall saw it (a partition renumbers its rows when it drops dead ones).

    A result kept by its caller holds the partitions' Arrow as it was (which shares its buffers with the
    partition's until the partition rewrites them), never the partition itself: a partition the index
    dropped (least recently used, or a purge) is freed with its vectors and postings."""

    cols: CandidateColumns
    block: np.ndarray  # each candidate's block
    rows: np.ndarray  # and its row there
    seen: list[
        tuple[weakref.ref[Partition], int, pa.Table]
    ]  # each block's partition, its generation, its Arrow then
    memo: dict[int, Memory] = field(default_factory=dict)  # by candidate position

    def memories(self, positions: Sequence[int]) -> list[Memory]:
        """The candidates' Memory objects (made once each: a result and its candidate share one)."""
        missing = [i for i in positions if i not in self.memo]
        if missing:
            at = np.asarray(missing, dtype=np.int64)
            for n, (ref, generation, table) in enumerate(self.seen):
                mine = at[self.block[at] == n]
                if mine.size:
                    rows = self.rows[mine].tolist()
                    part = ref()
                    made = (
                        part.memories_at(generation, table, rows)
                        if part is not None
                        else rows_as_memories(table, rows)
                    )
                    self.memo.update(zip(mine.tolist(), made, strict=True))
        return [self.memo[i] for i in positions]

    def __call__(self, positions: Sequence[int]) -> list[Candidate]:
        at = np.asarray(positions, dtype=np.int64)
        c = self.cols
        return [
            Candidate(
                memory=m,
                similarity=sim,
                keyword=kw,
                ranks=r,
                trust=t,
                graph=g,
                neighbours=c.neighbours.get(i, ()),
            )
            for i, m, sim, kw, r, t, g in zip(
                positions,
                self.memories(positions),
                c.similarity[at].tolist(),
                c.keyword[at].tolist(),
                rank_dicts(c.ranks[:, at]),
                c.trust[at].tolist(),
                c.graph[at].tolist(),
                strict=True,
            )
        ]


def _search(
    store: Engine, parts: Sequence[Partition], q: Query, words: Sequence[tuple[str, str | None]]
) -> list[_Block]:
    """Each channel's ``limit`` best of the rows the recall may see (principal, state, filters, not expired
    now), the keyword channel ranked by BM25 (``words``: the query's, ``bm25.query_words``) with the
    principal's statistics over all the tiers searched, and the graph's memories no channel found, inside
    the same filters."""
    allowed = [p.allowed(q.include_deprecated, q.written_by, q.filters) for p in parts]
    scored = bm25.principal_scores([(p.postings, m) for p, m in zip(parts, allowed, strict=True)], words)
    lives = [p.live(store, q.at, m) for p, m in zip(parts, allowed, strict=True)]
    # Counted before expiry, as LanceDB's path counts them (an exact count of the live rows is a scan there).
    score_all = 0 < sum(int(m.sum()) for m in allowed) <= q.score_all_rows
    blocks = []
    for part, mask, live, (kw_rows, kw_scores) in zip(parts, allowed, lives, scored, strict=True):
        vec_rows, dots = part.nearest(q.qvec, live, q.limit) if q.qvec is not None else ([], None)
        keep = live[kw_rows]
        kw_rows, kw_scores = kw_rows[keep], kw_scores[keep]
        kw_top = kw_rows[np.lexsort((kw_rows, -kw_scores))[: q.limit]].tolist()
        rows = list(dict.fromkeys([*vec_rows, *kw_top]))
        graph_from = len(rows)
        taken = set(rows)
        rows += [r for r in _rows_of(part, q.graph_ids, live) if r not in taken]
        at = np.asarray(rows, dtype=np.int64)
        if score_all:  # then every other row the recall may see, in row order
            rest = live.copy()
            rest[at] = False
            at = np.concatenate([at, np.flatnonzero(rest)])
        raw = np.full(at.size, np.nan)
        if kw_rows.size and at.size:  # kw_rows ascend
            pos = np.minimum(np.searchsorted(kw_rows, at), kw_rows.size - 1)
            hit = kw_rows[pos] == at
            raw[hit] = kw_scores[pos[hit]]
        vector = np.zeros(at.size, dtype=bool)
        vector[: len(vec_rows)] = True
        keyword = np.zeros(at.size, dtype=bool)
        if kw_top:  # where the keyword hits are among the rows (each row once, vector hits first)
            place = {r: i for i, r in enumerate(rows)}
            keyword[[place[r] for r in kw_top]] = True
        blocks.append(_Block(part, mask, live, at, vector, keyword, raw, graph_from, dots))
    return blocks


def _columns(
    blocks: Sequence[_Block], q: Query, fusion: Fusion, words: Sequence[tuple[str, str | None]]
) -> tuple[CandidateColumns, np.ndarray, np.ndarray, float]:
    """Every component of every candidate, in the LanceDB path's order (each tier's channel hits tier by
    tier, then the graph's alone), procedure versions older than the live one left out; each candidate's
    block and row; and the best BM25 score among the candidates (what ``keyword`` is a share of)."""
    order = _order(blocks)

    def cat(pick: Callable[[_Block], np.ndarray]) -> np.ndarray:
        got = [pick(b) for b in blocks]
        out = got[0] if len(got) == 1 else np.concatenate(got)
        return out if order is None else out[order]

    def listed(pick: Callable[[_Block], np.ndarray | Callable[[], np.ndarray]]) -> _Listed:
        """Object arrays (one C-level take, not a Python loop per candidate), or what makes them, turned into
        a list when first read: a recall that scores every row reads the few it returns from their memories
        instead."""
        return _Listed([pick(b) for b in blocks], order, n)

    def column(name: str) -> np.ndarray:
        return cat(lambda b: b.part.cols[name][b.rows])

    block = cat(lambda b: np.full(b.rows.size, blocks.index(b), dtype=np.int64))
    rows = cat(lambda b: b.rows)
    n = rows.size
    ids = listed(lambda b: b.part.id_array()[b.rows])  # the array of this generation of the rows
    vector, keyword, raw = cat(lambda b: b.vector), cat(lambda b: b.keyword), cat(lambda b: b.raw)
    ranks = np.zeros((3, n), dtype=np.int64)
    similarity = np.zeros(n)
    qvec = q.qvec
    if qvec is not None and n:
        dots = cat(lambda b: _dots(b, qvec))
        similarity = np.clip(dots.astype(np.float64), 0.0, 1.0)
        unnamed = q.unnamed_qvec
        if unnamed is not None and q.unnamed_weight > 0:
            other = cat(lambda b: _dots(b, unnamed, every=False))
            similarity = unnamed_similarity(similarity, other, q.unnamed_weight)
        hits = np.flatnonzero(vector)
        ranks[0, hits[np.argsort(-dots[hits], kind="stable")]] = np.arange(1, hits.size + 1)
    scored = ~np.isnan(raw)
    keyword_top = float(raw[scored].max()) if scored.any() else 0.0
    keyword_value = np.asarray(keyword_share(np.where(scored, raw, 0.0), keyword_top), dtype=np.float64)
    previous = [b.part.previous(b.allowed) for b in blocks] if q.previous_keyword_weight > 0 and n else []
    # Without a memory that has a previous one, every text reads alone: the channel is the keyword channel.
    if any(p.size and p.max() >= 0 for p in previous):
        per_block = bm25.with_previous_scores(
            [(b.part.postings, b.allowed, p, b.rows) for b, p in zip(blocks, previous, strict=True)], words
        )
        joined = cat(lambda b: per_block[blocks.index(b)])
        keyword_value = with_previous_keyword(keyword_value, joined, q.previous_keyword_weight)
    hits = np.flatnonzero(keyword)
    ranks[1, hits[np.argsort(-raw[hits], kind="stable")]] = np.arange(1, hits.size + 1)
    position = _positions(blocks, block, rows, {*fusion.graph_ranked, *fusion.graph_scores})
    for rank, i in enumerate((position[m] for m in fusion.graph_ranked if m in position), start=1):
        ranks[2, i] = rank
    graph = np.zeros(n)
    for mem_id, value in fusion.graph_scores.items():
        if mem_id in position:
            graph[position[mem_id]] = value
    at_us = micros(q.at)
    anchor = column("anchor")
    age = np.where(anchor != NULL, np.maximum((at_us - anchor) / 1e6 / 86400.0, 0.0), 0.0)
    used = column("last_accessed")  # importance decays from it (scoring.decayed); never recalled: NaN
    idle = np.where(used != NULL, np.maximum((at_us - used) / 1e6 / 86400.0, 0.0), np.nan)

    def trust(b: _Block) -> np.ndarray:
        by_code = np.array(
            [0.5 if a is None else fusion.trust.get(a, 0.5) for a in b.part.codes["agent"]] or [0.5]
        )
        return by_code[b.part.cols["agent"][b.rows]]

    cols = CandidateColumns(
        ids=ids,
        tier=cat(lambda b: np.full(b.rows.size, TIER_INDEX[b.part.tier], dtype=np.int64)),
        principals=listed(lambda b: _names(b, "principal")),
        agents=listed(lambda b: _names(b, "agent")),
        similarity=similarity,
        keyword=keyword_value,
        age_days=age,
        frequency=column("frequency"),
        importance=column("reinforced"),
        pinned=column("pinned").astype(np.float64),
        trust=cat(trust),
        graph=graph,
        ranks=ranks,
        session=cat(_sessions),
        neighbours={},
        idle_days=idle,
        time_cue=cat(lambda b: b.part.time_cues(b.rows)) if q.time_cue else None,
    )
    return cols, block, rows, keyword_top


class _Listed(Sequence[Any]):
    """A column of object arrays (one per block, in candidate ``order``) as one list, taken when first read."""

    def __init__(
        self, parts: list[np.ndarray | Callable[[], np.ndarray]], order: np.ndarray | None, n: int
    ) -> None:
        self._parts: list[np.ndarray | Callable[[], np.ndarray]] | None = parts
        self._order = order
        self._n = n  # how many candidates (the parts' total, or the order's length)
        self._values: list[Any] = []

    def _list(self) -> list[Any]:
        if self._parts is not None:
            made = [p if isinstance(p, np.ndarray) else p() for p in self._parts]
            got = made[0] if len(made) == 1 else np.concatenate(made)
            self._values = (got if self._order is None else got[self._order]).tolist()
            self._parts = None
        return self._values

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, i: int) -> Any: ...
    @overload
    def __getitem__(self, i: slice) -> list[Any]: ...
    def __getitem__(self, i: int | slice) -> Any:
        return self._list()[i]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._list())

    def index(self, value: Any, start: int = 0, stop: int = sys.maxsize) -> int:
        return self._list().index(value, start, stop)


def _positions(
    blocks: Sequence[_Block], block: np.ndarray, rows: np.ndarray, ids: set[str]
) -> dict[str, int]:
    """The candidate position of each of these memory ids that is a candidate."""
    out: dict[str, int] = {}
    if not ids:
        return out
    wanted = list(ids)
    for n, b in enumerate(blocks):
        found = b.part.rows_of_ids(wanted)
        if not found:
            continue
        mine = np.flatnonzero(block == n)
        at = np.full(b.part.cols.n, -1, dtype=np.int64)
        at[rows[mine]] = mine
        for mem_id, row in found.items():
            if at[row] >= 0:
                out[mem_id] = int(at[row])
    return out


def _dots(b: _Block, qvec: np.ndarray, every: bool = True) -> np.ndarray:
    """The block's rows' dot products with the query (``scoring.similarities``); ``every``: the vector
    search's products with every row are for this query."""
    if every and b.dots is not None:
        return b.dots[b.rows]
    return similarities(b.part.cols["vector"][b.rows], qvec) if b.rows.size else np.zeros(0, np.float32)


def _order(blocks: Sequence[_Block]) -> np.ndarray | None:
    """Where each candidate is in the blocks' rows one after another (the channel hits of every block, then
    the graph's alone, older procedure versions left out); None when that is the blocks' own order."""
    keep = [_live_versions(b) for b in blocks]
    graph_rows = sum(b.rows.size - b.graph_from for b in blocks[:-1])
    if graph_rows == 0 and all(k is None for k in keep):
        return None
    starts = np.cumsum([0] + [b.rows.size for b in blocks])
    order = np.concatenate(
        [np.arange(s, s + b.graph_from) for s, b in zip(starts, blocks, strict=False)]
        + [np.arange(s + b.graph_from, s + b.rows.size) for s, b in zip(starts, blocks, strict=False)]
    )
    if any(k is not None for k in keep):
        kept = np.concatenate(
            [np.ones(b.rows.size, dtype=bool) if k is None else k for b, k in zip(blocks, keep, strict=True)]
        )
        order = order[kept[order]]
    return order


def _names(b: _Block, kind: str) -> Callable[[], np.ndarray]:
    """The principal or the agent of each of the block's rows, by name (an object array), made when first
    asked for (a recall that scores every row reads names only for a trace or an explanation) from the rows'
    codes and the code table as they are now."""
    codes, at = list(b.part.codes[kind]), b.part.cols[kind][b.rows]  # codes are given in order

    def make() -> np.ndarray:
        names = np.empty(len(codes) or 1, dtype=object)
        names[: len(codes)] = codes
        return names[at]

    return make


def _sessions(b: _Block) -> np.ndarray:
    """Each row's session code, -1 outside a session (another tier, or no session named)."""
    if b.part.tier != "episodic":
        return np.full(b.rows.size, -1, dtype=np.int64)
    codes = b.part.cols["session"][b.rows].astype(np.int64)
    blank = [c for c in (b.part.codes["session"].get(None), b.part.codes["session"].get("")) if c is not None]
    return np.where(np.isin(codes, blank), -1, codes) if blank else codes


def _live_versions(b: _Block) -> np.ndarray | None:
    """Which of a procedural block's rows are the live version of their procedure (its highest active
    version, ``live_procedures``); None for another tier."""
    if b.part.tier != "procedural" or not b.rows.size:
        return None
    table = b.part.arrow().select(["name", "proc_version"]).take(pa.array(b.rows))
    live = live_procedures(b.part)
    return np.array(
        [
            (version or 0) >= live.get((principal, name or ""), 0)
            for principal, name, version in zip(
                _names(b, "principal")(),
                table.column("name").to_pylist(),
                table.column("proc_version").to_pylist(),
                strict=True,
            )
        ],
        dtype=bool,
    )


def _neighbours(
    blocks: Sequence[_Block], cols: CandidateColumns, block: np.ndarray, rows: np.ndarray, max_rows: int
) -> None:
    """Each episodic candidate's neighbours in its session: the memories just before and after it among
    the rows the recall may see (as ``search._session_neighbours`` reads them), as candidate positions
    (``neighbour_at``) and, when a Candidate object is made, as ids. Vectorised: one sort of the rows of
    the candidates' sessions."""
    episodic = np.flatnonzero(cols.session >= 0)
    if not episodic.size:
        return
    n = next(i for i, b in enumerate(blocks) if b.part.tier == "episodic")
    part = blocks[n].part
    mask = blocks[n].live & np.isin(part.cols["session"], cols.session[episodic])
    before, after = session_neighbours(part, np.flatnonzero(mask), max_rows)
    if before is None or after is None:
        return
    mine = episodic[block[episodic] == n]
    near = np.full((cols.session.size, 2), -1, dtype=np.int64)
    near[mine, 0], near[mine, 1] = before[rows[mine]], after[rows[mine]]
    position = np.full(part.cols.n, -1, dtype=np.int64)
    position[rows[mine]] = mine
    cols.neighbour_at = np.where(near >= 0, position[np.maximum(near, 0)], -1)
    cols.neighbours = _NeighbourIds(part.ids, near)


class _NeighbourIds(Mapping[int, tuple[str, ...]]):
    """Candidate position -> its neighbours' ids (before, after), made when asked for."""

    def __init__(self, ids: Sequence[str], near: np.ndarray) -> None:
        self.ids = ids
        self.near = near
        self.some = np.flatnonzero((near >= 0).any(axis=1))

    def __getitem__(self, i: int) -> tuple[str, ...]:
        found = tuple(self.ids[r] for r in self.near[i].tolist() if r >= 0)
        if not found:
            raise KeyError(i)
        return found

    def __iter__(self) -> Iterator[int]:
        return iter(self.some.tolist())

    def __len__(self) -> int:
        return int(self.some.size)


def session_neighbours(
    part: Partition, rows: np.ndarray, max_rows: int
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """For every row of the partition, the row just before and just after it in its session among
    ``rows`` (ordered by start time, then write time, then id), -1 for none; (None, None) when there are
    more than ``max_rows`` rows."""
    if rows.size > max_rows:
        return None, None
    c = part.cols
    before = np.full(c.n, -1, dtype=np.int64)
    after = np.full(c.n, -1, dtype=np.int64)
    if not rows.size:
        return before, after
    started, created = c["started_at"][rows], c["created_at"][rows]
    anchor = np.where(started != NULL, started, created)
    session = c["session"][rows]
    ordered = rows[np.lexsort((part.id_ranks()[rows], created, anchor, session))]
    same = c["session"][ordered[1:]] == c["session"][ordered[:-1]]
    before[ordered[1:][same]] = ordered[:-1][same]
    after[ordered[:-1][same]] = ordered[1:][same]
    return before, after


def _rows_of(part: Partition, ids: Sequence[str], mask: np.ndarray) -> list[int]:
    """The rows of ``mask`` holding these ids, in row order (a LanceDB scan's order)."""
    if not ids or not part.cols.n:
        return []
    return sorted(r for r in part.rows_with_ids(ids) if r < len(mask) and mask[r])


def live_procedures(part: Partition | None) -> dict[tuple[str, str], int]:
    """The highest active version of each (principal, procedure name) in the partition."""
    if part is None:
        return {}
    with part.lock:
        keep = np.flatnonzero(part.cols["alive"] & (part.cols["state"] == STATE_CODES["active"]))
        table = part.arrow().select(["principal", "name", "proc_version"]).take(pa.array(keep))
    live: dict[tuple[str, str], int] = {}
    for principal, name, version in zip(
        *(table.column(c).to_pylist() for c in table.column_names), strict=True
    ):
        key = (principal, name or "")
        live[key] = max(live.get(key, 0), version or 0)
    return live
