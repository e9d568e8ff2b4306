"""Hybrid recall: vector and full-text candidates per tier, after the principal filter, then scored.

The principal filter is part of every LanceDB query (``prefilter=True``), so another principal's rows
are never candidates, never scored and never counted.
"""

from __future__ import annotations

import logging
import re
import time
import weakref
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar, cast

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from memdeck.core import filters as F
from memdeck.core.config import Profile, RecallSettings
from memdeck.core.embed import EmbeddingUnavailable
from memdeck.core.filters import Scope
from memdeck.core.graph.memory.recall import GraphHits, graph_channel
from memdeck.core.models import thresholds_for
from memdeck.core.recall import bm25, index_search, timecue
from memdeck.core.recall import index as memory_index
from memdeck.core.recall.feedback import agent_trust, prefetch_trust
from memdeck.core.recall.scoring import (
    PREVIOUS_KEYWORD_WEIGHT,
    SCORE_ALL_ROWS,
    TIME_CUE_WEIGHT,
    UNNAMED_QUERY_WEIGHT,
    Candidate,
    CandidateSet,
    Scored,
    index_length,
    keyword_share,
    principal_bm25,
    similarities,
    term_frequency,
    unnamed_similarity,
    with_previous_keyword,
)
from memdeck.core.records import LIST_COLUMNS, STORED_TIERS, TIER_LIST_COLUMNS, check_text, now, row_to_memory
from memdeck.core.storage.expiry import live_where

if TYPE_CHECKING:
    from memdeck.core.storage.engine import Engine

log = logging.getLogger("memdeck.recall")

MIN_CANDIDATES = 20
_ID_TIERS = {"epi": "episodic", "sem": "semantic", "pro": "procedural"}  # an imported id may have none
_POOL = ThreadPoolExecutor(max_workers=6, thread_name_prefix="memdeck-search")


@dataclass(frozen=True)
class RecallOptions:
    """The optional parts of relevance (config ``[recall]``), each off at 0."""

    previous_keyword_weight: float = PREVIOUS_KEYWORD_WEIGHT  # keyword share read with the previous memory
    unnamed_weight: float = UNNAMED_QUERY_WEIGHT  # cosine share of the query without its person names
    score_all_rows: int = SCORE_ALL_ROWS  # every row a candidate when the recall may see at most this many
    time_cue_weight: float = TIME_CUE_WEIGHT  # a memory stating a time: its match raised for a "when" query


def recall_options(settings: RecallSettings) -> RecallOptions:
    """The ``[recall]`` settings of the optional relevance parts (checked when the settings were read)."""
    return RecallOptions(
        settings.previous_keyword_weight,
        settings.unnamed_query_weight,
        settings.score_all_rows,
        settings.time_cue_weight,
    )


_CAPITALISED = re.compile(r"\b[A-Z][\w’'-]*")
_POSSESSIVE = re.compile(r"[’']s?$")


def without_person_names(store: Engine, scope: Scope, query: str) -> str:
    """The query with the person names it holds left out: capitalised words (a possessive's ``'s`` with
    them) that the scope's entity graph knows as a person. The query as given when it names none, or when
    the graph is off."""
    if not store.graph_enabled or not _CAPITALISED.search(query):
        return query
    from memdeck.core.graph.memory.model import graph_principals, load_graph

    principals = graph_principals(store) if scope.is_everyone else list(scope.principals or ())
    graphs = [load_graph(store, p) for p in principals]

    def person(word: str) -> bool:
        name = _POSSESSIVE.sub("", word)
        for graph in graphs:
            node = graph.find(name) if name else None
            if node is not None and node.kind == "person":
                return True
        return False

    out = _CAPITALISED.sub(lambda m: "" if person(m.group(0)) else m.group(0), query)
    return " ".join(out.split())


@dataclass
class RecallResult:
    query: str
    scope: Scope
    agent: str | None
    tiers: list[str]
    k: int
    profile: Profile
    candidates: CandidateSet
    items: list[Scored]
    keyword_only: bool = False
    notice: str | None = None
    timings_ms: dict[str, float] = field(default_factory=dict)
    at: datetime = field(default_factory=now)
    source: str = "api"
    trace_id: str | None = None

    def rerank(self, profile: Profile, k: int | None = None) -> list[Scored]:
        """Re-score the cached candidates under another profile, without searching again."""
        return self.candidates.rank(profile, k or self.k, keyword_only=self.keyword_only)

    def to_json(self) -> list[dict[str, Any]]:
        return [item.to_json() for item in self.items]


def candidate_columns(tier: str) -> list[str]:
    return LIST_COLUMNS + TIER_LIST_COLUMNS[tier] + ["deprecation_reason", "meta", "vector"]


def state_filter(include_deprecated: bool) -> str:
    return F.ne("state", "forgotten-pending") if include_deprecated else F.eq("state", "active")


def _fts_query(text: str) -> str:
    # The full-text parser treats some punctuation as syntax; plain words always parse.
    words = re.findall(r"\w+", text)
    return " ".join(words)


def _dataset(tbl: Any) -> Any:
    """The Lance dataset behind a table at the table's current version.

    Searches go to the dataset directly: through the lancedb query builder each query costs ~4 ms more
    here (several hops to its event-loop thread; far more when the cores are busy). The dataset is kept
    per table and moved to a new version with ``checkout_version``, which keeps its index caches warm.
    Accepts a dataset too (returned as is), so a caller can resolve the version once for several searches.
    """
    if not hasattr(tbl, "to_lance"):
        return tbl
    version = tbl.version
    cached = _DATASETS.get(tbl)
    if cached is not None and cached[0] == version:
        return cached[1]
    ds = cached[1].checkout_version(version) if cached is not None else tbl.to_lance()
    _DATASETS[tbl] = (version, ds)
    return ds


_DATASETS: weakref.WeakKeyDictionary[Any, tuple[int, Any]] = weakref.WeakKeyDictionary()


def _rows(table: Any) -> list[dict[str, Any]]:
    """Arrow rows as dicts, the vector as a numpy array (not a list of 384 Python floats)."""
    vectors = None
    if "vector" in table.column_names:
        col = table.column("vector").combine_chunks()
        width = getattr(col.type, "list_size", None)
        if width and not col.null_count:
            vectors = col.flatten().to_numpy(zero_copy_only=False).reshape(len(col), width)
            table = table.drop_columns(["vector"])
    rows = table.to_pylist()
    if vectors is not None:
        for row, vec in zip(rows, vectors, strict=False):
            row["vector"] = vec
    return rows


def keyword_search(
    tbl: Any, query: str, where: str | None, limit: int, columns: list[str]
) -> list[dict[str, Any]]:
    cleaned = _fts_query(query)
    if not cleaned:
        return []
    try:
        found = _dataset(tbl).to_table(
            columns=[*columns, "_score"],
            filter=where,
            prefilter=True if where else None,
            limit=limit,
            full_text_query={"query": cleaned, "columns": ["text"]},
        )
    except Exception as exc:  # noqa: BLE001 - no FTS index yet, or an empty table
        log.info("keyword search failed: %s", exc)
        return []
    return _rows(found)


def vector_search(
    tbl: Any, qvec: np.ndarray, where: str | None, limit: int, columns: list[str], indexed: bool
) -> list[dict[str, Any]]:
    nearest: dict[str, Any] = {"column": "vector", "q": qvec, "k": limit, "metric": "cosine"}
    if indexed:
        nearest.update(nprobes=24, refine_factor=4)
    return _rows(
        _dataset(tbl).to_table(
            columns=[*columns, "_distance"], filter=where, prefilter=True if where else None, nearest=nearest
        )
    )


def candidate_limit(store: Engine, k: int) -> int:
    """How many candidates each channel takes from each tier for a top-k recall."""
    return max(k * store.settings.recall.candidate_multiplier, MIN_CANDIDATES)


def extra_candidate(
    store: Engine,
    result: RecallResult,
    memory: Any,
    cosine: float | None,
    keyword_score: float | None,
    vector_rank: int | None,
    keyword_rank: int | None,
) -> Candidate:
    """The candidate a memory no channel reached would have been in ``result`` (for explain)."""
    cand = Candidate(memory=memory)
    cand.similarity = max(float(cosine or 0.0), 0.0)
    cand.keyword = float(keyword_share(float(keyword_score or 0.0), result.candidates.keyword_top))
    cand.ranks = {"vector": vector_rank, "keyword": keyword_rank, "graph": None}
    cand.trust = float(agent_trust(store).get(memory.agent, 0.5))
    if memory.tier == "episodic" and memory.session:
        probe = {memory.id: cand, **{c.memory.id: c for c in result.candidates.candidates}}
        _session_neighbours(store, probe, F.all_of(result.scope.where(), state_filter(False)))
    return cand


def recall(
    store: Engine,
    query: str,
    *,
    scope: Scope,
    agent: str | None = None,
    tiers: Sequence[str] | None = None,
    k: int = 10,
    profile: Profile,
    include_deprecated: bool = False,
    written_by: str | None = None,
    keyword_only: str | None = None,
    filters: F.RecallFilter | None = None,
) -> RecallResult:
    """Hybrid recall. ``keyword_only``, a reason, skips the query embedding (the app while the model loads)."""
    check_text(query, "query")
    if not isinstance(k, int) or k < 1 or k > 1000:
        from memdeck.core.errors import MemdeckError

        raise MemdeckError(f"k must be between 1 and 1000, got {k!r}")
    wanted = list(tiers) if tiers else list(STORED_TIERS)
    for tier in wanted:
        if tier not in STORED_TIERS:
            from memdeck.core.errors import MemdeckError

            raise MemdeckError(f"unknown tier {tier!r}; recall searches: {', '.join(STORED_TIERS)}")
    prefetch_trust(store)  # read from the feedback log while the query embeds and the tables are scanned
    present = [t for t in wanted if store.has_table(t)]
    timings: dict[str, float] = {}
    limit = candidate_limit(store, k)

    notice = None
    qvec: np.ndarray | None = None
    t0 = time.perf_counter()
    try:
        if store.embedder.available and keyword_only is None:
            qvec = store.query_vector(query)
    except EmbeddingUnavailable:
        qvec = None
    if qvec is None:
        reason = keyword_only or store.embedder.error or "the embedding model is not available"
        notice = f"semantic search unavailable ({reason}); results are from keyword search only"
    settings = store.settings.recall
    options = recall_options(settings)
    # A query that asks when: candidates that state a time are read for it (``timecue``).
    time_cue = options.time_cue_weight > 0 and timecue.asks_for_time(query)
    unnamed_qvec: np.ndarray | None = None
    if qvec is not None and options.unnamed_weight > 0:
        unnamed = without_person_names(store, scope, query)
        if unnamed and unnamed != query:
            try:
                unnamed_qvec = store.query_vector(unnamed)
            except EmbeddingUnavailable:
                unnamed_qvec = None
    timings["embed"] = (time.perf_counter() - t0) * 1000

    t0 = time.perf_counter()
    at = now()
    graph_depth = store.settings.graph.depth
    parts = _partitions(store, scope, present)  # None: LanceDB's searches (config, or a scope too large)
    where: str | None = None
    if parts is None:
        where = F.all_of(
            scope.where(),
            state_filter(include_deprecated),
            F.eq("agent", written_by) if written_by else None,
            filters.where() if filters is not None else None,
        )
        every_row = _every_row_tables(store, present, where, options)
        if every_row is not None:
            terms = [term for _word, term in bm25.query_words(query) if term is not None]
            parts = {
                tier: memory_index.OneRecallPartition(tier, scope.where(), ds, terms)
                for tier, ds in every_row.items()
            }
    # The store's model decides the fusion weights (the profile's, per model) and the relevance floor.
    model = store.embedding_model or store.embedder.name
    fusion = profile.fusion_for(model, settings)
    if parts is not None:
        # Beside the in-memory index the graph's reads are most of the work: handing them to a thread cost
        # more than it overlapped.
        graph = (
            graph_channel(store, scope, query, qvec, k, graph_depth) if store.graph_enabled else GraphHits()
        )
        graph_ms = (time.perf_counter() - t0) * 1000
        asked = index_search.Query(
            query,
            qvec,
            limit,
            at,
            include_deprecated,
            written_by,
            filters,
            tuple(graph.ranked),
            unnamed_qvec,
            options.unnamed_weight,
            options.previous_keyword_weight,
            options.score_all_rows,
            time_cue,
        )
        cset = index_search.candidates(
            store,
            [part for part in parts.values() if part.rows],  # a tier without the scope's rows adds nothing
            asked,
            index_search.Fusion(*fusion, agent_trust(store), graph.scores, graph.ranked),
            MAX_SESSION_ROWS,
            timings,
        )
        timings["search"] += graph_ms
    else:
        cset = _lance_candidates(
            store,
            query,
            qvec,
            present,
            scope,
            where,
            limit,
            k,
            graph_depth,
            at,
            fusion,
            timings,
            options,
            unnamed_qvec,
        )
    cset.model_floor = thresholds_for(model).min_relevance
    t0 = time.perf_counter()
    if time_cue and len(cset):
        cset.cue_time(options.time_cue_weight)
    items = cset.rank(profile, k, keyword_only=qvec is None)
    timings["score"] = (time.perf_counter() - t0) * 1000
    return RecallResult(
        query=query,
        scope=scope,
        agent=agent,
        tiers=present,
        k=k,
        profile=profile,
        candidates=cset,
        items=items,
        keyword_only=qvec is None,
        notice=notice,
        timings_ms=timings,
        at=at,
    )


def _every_row_tables(
    store: Engine, tiers: list[str], where: str | None, options: RecallOptions
) -> dict[str, Any] | None:
    """The dataset of each tier that holds some of the scope's rows, when LanceDB's engine scores every row
    this recall may see, read into ``OneRecallPartition``s (one read of the scope's rows, then the recall
    index's arithmetic: the same ranking, none of the Python work per row of ``_lance_candidates``); None
    when it does not. It does when the rows the filters keep, expiry aside, are at most ``score_all_rows``
    (counted once per table version), as the recall index decides, and the keyword channel takes the
    principal's statistics (the index's own need LanceDB's full-text search)."""
    if not options.score_all_rows or store.settings.recall.keyword_statistics != "principal":
        return None
    counted = {tier: (ds, _count(ds, where)) for tier in tiers for ds in [_dataset(store.table(tier))]}
    if not 0 < sum(rows for _ds, rows in counted.values()) <= options.score_all_rows:
        return None
    return {tier: ds for tier, (ds, rows) in counted.items() if rows}  # an empty tier is not read


def _lance_candidates(
    store: Engine,
    query: str,
    qvec: np.ndarray | None,
    present: list[str],
    scope: Scope,
    where: str | None,
    limit: int,
    k: int,
    graph_depth: int,
    at: datetime,
    fusion: tuple[float, float, float],
    timings: dict[str, float],
    options: RecallOptions | None = None,
    unnamed_qvec: np.ndarray | None = None,
) -> CandidateSet:
    """The candidates from LanceDB's searches: every channel of every tier at once (LanceDB releases the
    GIL, so recall costs about the slowest search rather than their sum), merged in a fixed order so ranks
    stay deterministic; the graph's reads run in the pool beside them."""
    found: dict[str, Candidate] = {}
    raw_keyword: dict[str, float] = {}
    vectors: dict[str, np.ndarray] = {}
    t0 = time.perf_counter()
    graph_job = (
        _POOL.submit(graph_channel, store, scope, query, qvec, k, graph_depth)
        if store.graph_enabled
        else None
    )
    jobs = []
    for tier in present:
        tbl = _dataset(store.table(tier))  # one version check for both searches
        if not _count(tbl, where):
            continue  # none of the scope's rows in this tier (counted once per table version): no search
        cols = candidate_columns(tier)
        indexed = store.vector_indexed(tier)
        # Expired memories are never candidates: the filter is part of the query, from the moment they expire.
        tier_where = F.all_of(where, live_where(store, tier, at))
        vec_job = (
            _POOL.submit(vector_search, tbl, qvec, tier_where, limit, cols, indexed)
            if qvec is not None
            else None
        )
        kw_job = _POOL.submit(keyword_search, tbl, query, tier_where, limit, cols)
        jobs.append((tier, tbl, vec_job, kw_job, tier_where))
    graph = graph_job.result() if graph_job is not None else GraphHits()
    for tier, tbl, vec_job, kw_job, tier_where in jobs:
        if vec_job is not None:
            for rank, row in enumerate(vec_job.result(), start=1):
                cand = _candidate(found, row, vectors)
                cand.ranks["vector"] = (
                    rank if cand.ranks["vector"] is None else min(cand.ranks["vector"], rank)
                )
        for rank, row in enumerate(kw_job.result(), start=1):
            score = float(row.get("_score") or 0.0)  # read before _candidate, which drops the search columns
            cand = _candidate(found, row, vectors)
            cand.ranks["keyword"] = (
                rank if cand.ranks["keyword"] is None else min(cand.ranks["keyword"], rank)
            )
            raw_keyword[cand.memory.id] = max(raw_keyword.get(cand.memory.id, 0.0), score)
        graph_only = [m for m in graph.ranked if m not in found and _ID_TIERS.get(m[:3], tier) == tier]
        if graph_only:  # memories only the graph reached: read inside the same filters as the searches
            for row in _rows(
                tbl.to_table(
                    columns=candidate_columns(tier), filter=F.all_of(tier_where, F.is_in("id", graph_only))
                )
            ):
                _candidate(found, row, vectors)
        _complete_keyword(tbl, query, tier_where, tier, found, raw_keyword)
    options = options or RecallOptions()
    if options.score_all_rows and jobs:
        # Reached with the index's keyword statistics (``_scores_every_row`` takes the principal's): the rows
        # the filters keep, expiry aside (an exact count of the live rows scans the table, 6 ms at 100k);
        # the rows read are the live ones.
        counts = [_count(tbl, where) for _tier, tbl, _v, _k, _where in jobs]
        if 0 < sum(counts) <= options.score_all_rows:  # every other row the recall may see, in row order
            for tier, tbl, _vec, _kw, tier_where in jobs:
                for row in _rows(tbl.to_table(columns=candidate_columns(tier), filter=tier_where)):
                    if row["id"] not in found:
                        _candidate(found, row, vectors)
                _complete_keyword(tbl, query, tier_where, tier, found, raw_keyword)
    timings["search"] = (time.perf_counter() - t0) * 1000
    t0 = time.perf_counter()
    _session_neighbours(store, found, F.all_of(where, live_where(store, "episodic", at)))
    timings["context"] = (time.perf_counter() - t0) * 1000

    _keep_live_procedures(store, found)
    # Ranks were per tier; across tiers a channel's rank is its position by raw score.
    sims = (
        dict(zip(vectors, similarities(np.vstack(list(vectors.values())), qvec).tolist(), strict=True))
        if (qvec is not None and vectors)
        else {}
    )
    unnamed_sims = (
        dict(
            zip(vectors, similarities(np.vstack(list(vectors.values())), unnamed_qvec).tolist(), strict=True)
        )
        if (qvec is not None and unnamed_qvec is not None and options.unnamed_weight > 0 and vectors)
        else {}
    )
    _global_ranks(found, raw_keyword, sims)
    graph_rank = {m: n for n, m in enumerate((m for m in graph.ranked if m in found), start=1)}
    for mem_id, cand in found.items():
        cand.graph, cand.ranks["graph"] = graph.scores.get(mem_id, 0.0), graph_rank.get(mem_id)

    if store.settings.recall.keyword_statistics == "principal":
        for gone in [m for m in raw_keyword if m not in found]:  # older procedure versions dropped above
            del raw_keyword[gone]
        _principal_keyword_scores(
            [(tier, tbl) for tier, tbl, _vec, _kw, _where in jobs], query, where, found, raw_keyword
        )
    trust = agent_trust(store)
    top_kw = max(raw_keyword.values(), default=0.0)
    for cand in found.values():
        if cand.memory.id in sims:
            cand.similarity = min(max(sims[cand.memory.id], 0.0), 1.0)
            if cand.memory.id in unnamed_sims:
                cand.similarity = float(
                    unnamed_similarity(
                        np.array([cand.similarity]),
                        np.array([unnamed_sims[cand.memory.id]]),
                        options.unnamed_weight,
                    )[0]
                )
        cand.keyword = float(keyword_share(raw_keyword.get(cand.memory.id, 0.0), top_kw))
        cand.trust = float(trust.get(cand.memory.agent, 0.5))
    if options.previous_keyword_weight > 0 and found:
        joined = _with_previous_scores(
            [(tier, tbl) for tier, tbl, _vec, _kw, _where in jobs], query, where, found
        )
        if joined:
            ordered = list(found.values())
            blended = with_previous_keyword(
                np.array([c.keyword for c in ordered]),
                np.array([joined.get(c.memory.id, 0.0) for c in ordered]),
                options.previous_keyword_weight,
            )
            for cand, value in zip(ordered, blended.tolist(), strict=True):
                cand.keyword = value
    return CandidateSet(list(found.values()), at, *fusion, keyword_top=top_kw)


def _with_previous_scores(
    tables: list[tuple[str, Any]], query: str, where: str | None, found: dict[str, Candidate]
) -> dict[str, float]:
    """Each candidate's BM25 read together with the memory before it in its session
    (``bm25.with_previous_scores``), over the rows ``where`` keeps in each searched tier: the same rows,
    order and statistics as the recall index's ``Partition.previous`` and its postings. Every text of the
    scope is read and tokenised on each recall (the in-memory index keeps them), so a scope of more than
    ``LANCE_PREVIOUS_MAX_ROWS`` rows gets none (empty: its memories read alone, as with the part off)."""
    counted = [(tier, tbl, _count(tbl, where)) for tier, tbl in tables]
    if sum(rows for _tier, _tbl, rows in counted) > LANCE_PREVIOUS_MAX_ROWS:
        return {}
    words = bm25.query_words(query)
    terms = [term for _word, term in words if term is not None]
    parts = []
    positions: list[tuple[list[str], np.ndarray]] = []
    for tier, tbl, _rows_in_scope in counted:
        ds = _dataset(tbl)
        episodic = tier == "episodic"
        columns = ["id", "text", *(["session", "started_at", "created_at"] if episodic else [])]
        table = ds.to_table(columns=columns, filter=where)
        ids = table.column("id").to_pylist()
        postings = bm25.QueryPostings(table.column("text").to_pylist(), terms)
        prev = np.full(len(ids), -1, dtype=np.int64)
        if episodic and ids:
            names = table.column("session").to_pylist()
            in_session = np.array([bool(name) for name in names])
            _, session = np.unique(np.array([name or "" for name in names], dtype=str), return_inverse=True)
            started, created = (
                pc.fill_null(table.column(c).cast(pa.int64()), memory_index.NULL).to_numpy()
                for c in ("started_at", "created_at")
            )
            anchor = np.where(started != memory_index.NULL, started, created)
            id_rank = np.empty(len(ids), dtype=np.int64)
            id_rank[np.argsort(np.asarray(ids, dtype=str), kind="stable")] = np.arange(len(ids))
            rows = np.flatnonzero(in_session)
            ordered = rows[np.lexsort((id_rank[rows], created[rows], anchor[rows], session[rows]))]
            same = session[ordered[1:]] == session[ordered[:-1]]
            prev[ordered[1:][same]] = ordered[:-1][same]
        where_of = {mem_id: i for i, mem_id in enumerate(ids)}
        mine = [m for m, c in found.items() if c.memory.tier == tier and m in where_of]
        wanted = np.array([where_of[m] for m in mine], dtype=np.int64)
        parts.append((postings, np.ones(len(ids), dtype=bool), prev, wanted))
        positions.append((mine, wanted))
    out: dict[str, float] = {}
    if not any(prev.size and prev.max() >= 0 for _postings, _mask, prev, _wanted in parts):
        return out  # every text reads alone: the caller keeps the keyword channel as it is
    for (mine, _wanted), scores in zip(positions, bm25.with_previous_scores(parts, words), strict=True):
        out.update(zip(mine, scores.tolist(), strict=True))
    return out


MAX_TERM_MATCHES = 50_000  # a term in more of a principal's rows than this counts as in this many


def _principal_keyword_scores(
    tables: list[tuple[str, Any]],
    query: str,
    where: str | None,
    found: dict[str, Candidate],
    raw_keyword: dict[str, float],
) -> None:
    """Re-score the keyword channel with the principal's own statistics (see ``principal_bm25``).

    For each searched tier, one full-text search per query word inside the principal filter gives the
    principal's rows that contain it, with the index's score for that word alone; one more without the
    filter gives the word's document frequency over the table. From those and the table's mean length,
    each candidate's term frequency is recovered exactly (the index scores with standard BM25). Then every
    candidate is scored again with the principal's statistics over all the searched tiers together
    (document frequencies, row count, mean length), so the tiers share one scale.
    """
    words = sorted(set(_fts_query(query).lower().split()))
    wanted = {m for m in found if m in raw_keyword}
    if not words or not wanted:
        return
    lengths = {m: float(index_length(found[m].memory.text or "")) for m in wanted}
    df: dict[str, float] = dict.fromkeys(words, 0.0)
    tf: dict[str, dict[str, float]] = {w: {} for w in words}
    rows, total_length, measured = 0, 0.0, True
    for _tier, tbl in tables:
        mine = {w: _POOL.submit(keyword_search, tbl, w, where, MAX_TERM_MATCHES, ["id"]) for w in words}
        every = {w: _POOL.submit(keyword_search, tbl, w, None, MAX_TERM_MATCHES, ["id"]) for w in words}
        table_rows, table_avgdl = _principal_lengths(tbl, None)
        tier_rows, tier_avgdl = _principal_lengths(tbl, where)
        rows += tier_rows
        if tier_avgdl is None:
            measured = measured and tier_rows == 0
        else:
            total_length += tier_avgdl * tier_rows
        for word in words:
            hits = mine[word].result()
            df_table = len(every[word].result())
            df[word] += len(hits)
            for row in hits:
                mem_id = row["id"]
                if mem_id not in wanted:
                    continue
                tf[word][mem_id] = (
                    term_frequency(
                        float(row.get("_score") or 0.0), df_table, table_rows, lengths[mem_id], table_avgdl
                    )
                    if table_avgdl
                    else 1.0
                )
    avgdl = total_length / rows if measured and rows else None
    matches = {w: {"df": df[w], **tf[w]} for w in words}
    raw_keyword.update(principal_bm25(matches, rows, lengths, avgdl))


MAX_LENGTH_SCAN_ROWS = 200_000  # past this many rows the mean length comes from the candidates
# LanceDB's path reads the previous memory's words (``[recall] previous_keyword_weight``) only for a scope of at
# most this many rows: it reads and tokenises every text of the scope on each recall (a recall over 10,000 rows
# took about 200 ms with it, 60 ms without), where the in-memory index keeps them. The default engine answers
# such scopes from memory anyway; LanceDB answers a larger scope only while its partition loads in the
# background, or with ``engine = "lance"``.
LANCE_PREVIOUS_MAX_ROWS = 5_000
_LENGTHS: weakref.WeakKeyDictionary[Any, dict[tuple[int, str | None], Any]] = weakref.WeakKeyDictionary()


_T = TypeVar("_T")


def _per_version(
    cache: weakref.WeakKeyDictionary[Any, dict[tuple[int, str | None], Any]],
    ds: Any,
    where: str | None,
    make: Callable[[], _T],
) -> _T:
    """``make()`` for ``where`` on this dataset, computed once per table version. Kept on the dataset object,
    one per version (``_dataset``), not under its id: an id is reused once the object is freed, and a stale
    count would leave a tier out of a recall."""
    mine = cache.setdefault(ds, {})
    key = (int(ds.version), where)
    if key not in mine:
        if len(mine) > 256:
            mine.clear()
        mine[key] = make()
    return cast(_T, mine[key])


def _count(tbl: Any, where: str | None) -> int:
    """How many rows match ``where`` (cached per table version: a count scans the filter's columns)."""
    ds = _dataset(tbl)
    return _per_version(
        _COUNTS, ds, where, lambda: int(ds.count_rows(filter=where)) if where else int(ds.count_rows())
    )


_COUNTS: weakref.WeakKeyDictionary[Any, dict[tuple[int, str | None], Any]] = weakref.WeakKeyDictionary()


def _principal_lengths(tbl: Any, where: str | None) -> tuple[int, float | None]:
    """How many rows match ``where`` and their mean length in index words (cached per table version)."""
    ds = _dataset(tbl)
    return _per_version(_LENGTHS, ds, where, lambda: _lengths(ds, where))


def _lengths(ds: Any, where: str | None) -> tuple[int, float | None]:
    rows = _count(ds, where)
    avgdl = None
    if 0 < rows <= MAX_LENGTH_SCAN_ROWS:
        try:
            texts = ds.to_table(columns=["text"], filter=where).column("text").to_pylist()
        except Exception as exc:  # noqa: BLE001 - a damaged page elsewhere must not fail this recall (doctor names it)
            log.info("mean text length not read, candidates' used instead: %s", exc)
        else:
            avgdl = sum(index_length(t or "") for t in texts) / max(len(texts), 1)
    return rows, avgdl


def _candidate(found: dict[str, Candidate], row: dict[str, Any], vectors: dict[str, np.ndarray]) -> Candidate:
    mem_id = row["id"]
    cand = found.get(mem_id)
    if cand is None:
        vec = row.pop("vector", None)
        for key in ("_distance", "_score", "_relevance_score", "_rowid"):
            row.pop(key, None)
        cand = Candidate(memory=row_to_memory(row))
        found[mem_id] = cand
        if vec is not None:
            vectors[mem_id] = np.asarray(vec, dtype=np.float32)
    return cand


def _complete_keyword(
    tbl: Any,
    query: str,
    where: str | None,
    tier: str,
    found: dict[str, Candidate],
    raw_keyword: dict[str, float],
) -> None:
    """Give the vector-only candidates of a tier their BM25 score too (one search limited to their ids).

    Without it a memory the vector search found but the keyword search ranked past its limit would score
    as if it shared no word with the query: a fusion of two channels needs both scores for every
    candidate. Their keyword *rank* stays empty: the channel did not return them.
    """
    missing = [mid for mid, c in found.items() if c.memory.tier == tier and mid not in raw_keyword]
    if not missing:
        return
    for row in keyword_search(tbl, query, F.all_of(where, F.is_in("id", missing)), len(missing), ["id"]):
        raw_keyword[row["id"]] = float(row.get("_score") or 0.0)


MAX_SESSION_ROWS = 20_000  # reading more rows than this to order sessions costs more than context adds
# Finding neighbours scans the session column: cheap on a small table, tens of milliseconds per 100k rows
# without an index on ``session``. Past this size it runs only when the column is indexed.
SESSION_SCAN_MAX_ROWS = 50_000
_SESSION_SCAN: weakref.WeakKeyDictionary[Any, tuple[int, bool]] = weakref.WeakKeyDictionary()


def _session_scan_ok(tbl: Any) -> bool:
    version = tbl.version
    cached = _SESSION_SCAN.get(tbl)
    if cached is not None and cached[0] == version:
        return cached[1]
    from memdeck.core.storage.indexing import has_index_on

    ok = _dataset(tbl).count_rows() <= SESSION_SCAN_MAX_ROWS or has_index_on(tbl, "session")
    _SESSION_SCAN[tbl] = (version, ok)
    return ok


def _session_neighbours(store: Engine, found: dict[str, Candidate], where: str | None) -> None:
    """Set each episodic candidate's neighbours: the memories just before and after it in its session.

    One scan of the candidates' sessions (id and times only), ordered by start time, then write time.
    """
    episodic = [c for c in found.values() if c.memory.tier == "episodic" and c.memory.session]
    if not episodic:
        return
    sessions = sorted({c.memory.session for c in episodic if c.memory.session})
    try:
        table = store.table("episodic")
        if not _session_scan_ok(table):
            return
        rows = _dataset(table).to_table(
            columns=["id", "session", "started_at", "created_at"],
            filter=F.all_of(where, F.is_in("session", sessions)),
            limit=MAX_SESSION_ROWS + 1,
        )
    except Exception as exc:  # noqa: BLE001 - context is a refinement; recall works without it
        log.info("session context skipped: %s", exc)
        return
    if rows.num_rows > MAX_SESSION_ROWS:
        log.info("session context skipped: %d rows in the candidates' sessions", rows.num_rows)
        return
    ordered = sorted(
        zip(
            rows["session"].to_pylist(),
            rows["started_at"].to_pylist(),
            rows["created_at"].to_pylist(),
            rows["id"].to_pylist(),
            strict=True,
        ),
        key=lambda r: (r[0], r[1] or r[2], r[2], r[3]),
    )
    around: dict[str, tuple[str, ...]] = {}
    for i, (session, _, _, mem_id) in enumerate(ordered):
        near = [ordered[j][3] for j in (i - 1, i + 1) if 0 <= j < len(ordered) and ordered[j][0] == session]
        around[mem_id] = tuple(near)
    for cand in episodic:
        cand.neighbours = around.get(cand.memory.id, ())


def _global_ranks(found: dict[str, Candidate], raw_keyword: dict[str, float], sims: dict[str, float]) -> None:
    # Only what the keyword channel returned has a keyword rank (completed scores do not).
    returned = {mid for mid, c in found.items() if c.ranks["keyword"] is not None}
    kw = sorted(((m, v) for m, v in raw_keyword.items() if m in returned), key=lambda kv: -kv[1])
    kw_rank = {mem_id: i for i, (mem_id, _) in enumerate(kw, start=1)}
    vec_ids = [mid for mid, c in found.items() if c.ranks["vector"] is not None]
    vec_ids.sort(key=lambda mid: -sims.get(mid, 0.0))
    vec_rank = {mem_id: i for i, mem_id in enumerate(vec_ids, start=1)}
    for mem_id, cand in found.items():
        cand.ranks = {"vector": vec_rank.get(mem_id), "keyword": kw_rank.get(mem_id)}


def _keep_live_procedures(store: Engine, found: dict[str, Candidate]) -> None:
    """Only the highest non-deprecated version of a procedure is live; drop older candidates."""
    procs = [c for c in found.values() if c.memory.tier == "procedural"]
    if not procs:
        return
    tbl = store.table("procedural")
    keys = {(c.memory.principal, c.memory.name or "") for c in procs}
    live: dict[tuple[str, str], int] = {}
    # One query for every candidate procedure (per-name queries cost seconds at 1M rows).
    principals = sorted({p for p, _ in keys})
    names = sorted({n for _, n in keys})
    where = F.all_of(F.is_in("principal", principals), F.is_in("name", names), F.eq("state", "active"))
    found_rows = tbl.to_lance().to_table(columns=["principal", "name", "proc_version"], filter=where)
    for row in found_rows.to_pylist():
        key = (row["principal"], row["name"] or "")
        if key in keys:
            live[key] = max(live.get(key, 0), row["proc_version"] or 0)
    for cand in procs:
        if (cand.memory.proc_version or 0) < live.get((cand.memory.principal, cand.memory.name or ""), 0):
            del found[cand.memory.id]


def _partitions(store: Engine, scope: Scope, tiers: list[str]) -> dict[str, memory_index.Partition] | None:
    """Each searched tier's partition of the recall index, or None to search LanceDB instead."""
    if not memory_index.uses_index(store):
        return None
    index = memory_index.store_index(store)
    parts = {}
    for tier in tiers:
        ds = index.dataset(store, tier, lambda tier=tier: _dataset(store.table(tier)))  # type: ignore[misc]
        part = index.partition(tier, scope, ds)
        if part is None:
            return None
        parts[tier] = part
    return parts
