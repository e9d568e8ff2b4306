"""Hybrid recall: vector and full-text candidates per tier, after the principal filter, then scored.

The principal filter is part of every LanceDB query (``prefilter=True``), so another principal's rows
are never candidates, never scored and never counted.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

from . import filters as F
from .config import Profile
from .embed import EmbeddingUnavailable
from .filters import Scope
from .records import LIST_COLUMNS, STORED_TIERS, TIER_LIST_COLUMNS, check_text, now, row_to_memory
from .scoring import Candidate, CandidateSet, Scored

log = logging.getLogger("memdeck.recall")

MIN_CANDIDATES = 20


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


def keyword_search(tbl: Any, query: str, where: str | None, limit: int, columns: list[str]) -> list[dict[str, Any]]:
    cleaned = _fts_query(query)
    if not cleaned:
        return []
    builder = tbl.search(cleaned, query_type="fts", fts_columns="text").limit(limit).select([*columns, "_score"])
    if where:
        builder = builder.where(where, prefilter=True)
    try:
        return builder.to_list()
    except Exception as exc:  # noqa: BLE001 - no FTS index yet, or an empty table
        log.info("keyword search failed: %s", exc)
        return []


def vector_search(
    tbl: Any, qvec: np.ndarray, where: str | None, limit: int, columns: list[str], indexed: bool
) -> list[dict[str, Any]]:
    builder = tbl.search(qvec, vector_column_name="vector").distance_type("cosine").limit(limit).select([*columns, "_distance"])
    if where:
        builder = builder.where(where, prefilter=True)
    if indexed:
        builder = builder.nprobes(24).refine_factor(4)
    return builder.to_list()


def recall(
    store: Any,
    query: str,
    *,
    scope: Scope,
    agent: str | None = None,
    tiers: Sequence[str] | None = None,
    k: int = 10,
    profile: Profile,
    include_deprecated: bool = False,
    written_by: str | None = None,
) -> RecallResult:
    check_text(query, "query")
    if not isinstance(k, int) or k < 1 or k > 1000:
        from .errors import MemdeckError

        raise MemdeckError(f"k must be between 1 and 1000, got {k!r}")
    wanted = list(tiers) if tiers else list(STORED_TIERS)
    for tier in wanted:
        if tier not in STORED_TIERS:
            from .errors import MemdeckError

            raise MemdeckError(f"unknown tier {tier!r}; recall searches: {', '.join(STORED_TIERS)}")
    present = [t for t in wanted if store.has_table(t)]
    timings: dict[str, float] = {}
    multiplier = int(store.config["recall"].get("candidate_multiplier", 4))
    limit = max(k * multiplier, MIN_CANDIDATES)
    where = F.all_of(scope.where(), state_filter(include_deprecated), F.eq("agent", written_by) if written_by else None)

    notice = None
    qvec: np.ndarray | None = None
    t0 = time.perf_counter()
    try:
        if store.embedder.available:
            qvec = store.embedder.encode([query])[0]
    except EmbeddingUnavailable:
        qvec = None
    if qvec is None:
        reason = getattr(store.embedder, "error", None) or "the embedding model is not available"
        notice = f"semantic search unavailable ({reason}); results are from keyword search only"
    timings["embed"] = (time.perf_counter() - t0) * 1000

    found: dict[str, Candidate] = {}
    raw_keyword: dict[str, float] = {}
    vectors: dict[str, np.ndarray] = {}
    t0 = time.perf_counter()
    for tier in present:
        tbl = store.table(tier)
        cols = candidate_columns(tier)
        indexed = store.vector_indexed(tier)
        if qvec is not None:
            for rank, row in enumerate(vector_search(tbl, qvec, where, limit, cols, indexed), start=1):
                cand = _candidate(found, row, vectors)
                cand.ranks["vector"] = rank if cand.ranks["vector"] is None else min(cand.ranks["vector"], rank)
        for rank, row in enumerate(keyword_search(tbl, query, where, limit, cols), start=1):
            cand = _candidate(found, row, vectors)
            cand.ranks["keyword"] = rank if cand.ranks["keyword"] is None else min(cand.ranks["keyword"], rank)
            raw_keyword[cand.memory.id] = max(raw_keyword.get(cand.memory.id, 0.0), float(row.get("_score") or 0.0))
    timings["search"] = (time.perf_counter() - t0) * 1000

    _keep_live_procedures(store, found)
    # Ranks were per tier; across tiers a channel's rank is its position by raw score.
    _global_ranks(found, raw_keyword, vectors, qvec)

    trust = store.agent_trust()
    top_kw = max(raw_keyword.values(), default=0.0)
    for cand in found.values():
        if qvec is not None and cand.memory.id in vectors:
            cand.similarity = float(np.clip(np.dot(vectors[cand.memory.id], qvec), -1.0, 1.0))
            cand.similarity = max(cand.similarity, 0.0)
        if top_kw > 0:
            cand.keyword = raw_keyword.get(cand.memory.id, 0.0) / top_kw
        cand.trust = float(trust.get(cand.memory.agent, 0.5))

    t0 = time.perf_counter()
    at = now()
    cset = CandidateSet(list(found.values()), at, float(store.config["recall"].get("keyword_blend", 0.3)))
    items = cset.rank(profile, k, keyword_only=qvec is None)
    timings["score"] = (time.perf_counter() - t0) * 1000
    return RecallResult(
        query=query, scope=scope, agent=agent, tiers=present, k=k, profile=profile, candidates=cset,
        items=items, keyword_only=qvec is None, notice=notice, timings_ms=timings, at=at,
    )


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


def _global_ranks(
    found: dict[str, Candidate], raw_keyword: dict[str, float], vectors: dict[str, np.ndarray], qvec: np.ndarray | None
) -> None:
    kw = sorted(raw_keyword.items(), key=lambda kv: -kv[1])
    kw_rank = {mem_id: i for i, (mem_id, _) in enumerate(kw, start=1)}
    vec_ids = [mid for mid, c in found.items() if c.ranks["vector"] is not None]
    if qvec is not None:
        vec_ids.sort(key=lambda mid: -float(np.dot(vectors[mid], qvec)) if mid in vectors else 0.0)
    vec_rank = {mem_id: i for i, mem_id in enumerate(vec_ids, start=1)}
    for mem_id, cand in found.items():
        cand.ranks = {"vector": vec_rank.get(mem_id), "keyword": kw_rank.get(mem_id)}


def _keep_live_procedures(store: Any, found: dict[str, Candidate]) -> None:
    """Only the highest non-deprecated version of a procedure is live; drop older candidates."""
    procs = [c for c in found.values() if c.memory.tier == "procedural"]
    if not procs:
        return
    tbl = store.table("procedural")
    keys = {(c.memory.principal, c.memory.name or "") for c in procs}
    live: dict[tuple[str, str], int] = {}
    for principal, name in keys:
        where = F.all_of(F.eq("principal", principal), F.eq("name", name), F.eq("state", "active"))
        rows = tbl.search().where(where).select(["proc_version"]).limit(10_000).to_list()
        live[(principal, name)] = max((r["proc_version"] or 0 for r in rows), default=0)
    for cand in procs:
        if (cand.memory.proc_version or 0) < live.get((cand.memory.principal, cand.memory.name or ""), 0):
            del found[cand.memory.id]
