"""Replay logged recalls under another weight profile: what enters and what leaves the top k.

By default a replay re-scores the candidates the trace logged: they carry every component, and only
recency depends on the profile (through the half-lives), so the new ranking is exact for the candidate set
the recall had. It does not search again, so a memory written since, or one that was never a candidate,
cannot appear. ``research=True`` runs the search again instead (today's store, same query and scope) and
compares with what the trace returned.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from memdeck.core.config import COMPONENTS, Profile
from memdeck.core.errors import MemdeckError
from memdeck.core.filters import Scope
from memdeck.core.recall.scoring import recency, weight_vector
from memdeck.core.recall.search import recall
from memdeck.core.recall.traces import Trace, get_trace, list_traces
from memdeck.core.records import STORED_TIERS

if TYPE_CHECKING:
    from memdeck.core.storage.engine import Engine


@dataclass
class Replayed:
    """One trace replayed: the old and new top k and the difference."""

    trace_id: str
    query: str
    agent: str | None
    k: int
    before: list[str]
    after: list[str]
    entered: list[str]
    left: list[str]
    moved: dict[str, tuple[int, int]] = field(default_factory=dict)  # id -> (old rank, new rank)
    scores: dict[str, float] = field(default_factory=dict)  # new scores of the new top k
    method: str = "rescore"

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def to_json(self) -> dict[str, Any]:
        return {
            "trace_id": self.trace_id,
            "query": self.query,
            "agent": self.agent,
            "k": self.k,
            "method": self.method,
            "before": self.before,
            "after": self.after,
            "entered": self.entered,
            "left": self.left,
            "moved": {mid: {"from": a, "to": b} for mid, (a, b) in self.moved.items()},
            "scores": {mid: round(s, 6) for mid, s in self.scores.items()},
            "changed": self.changed,
        }


def rescore(trace: Trace, profile: Profile) -> list[tuple[str, float]]:
    """The trace's candidates ranked under ``profile``: (memory id, score), best first.

    Ties break on the logged similarity, then on the logged order, as a live recall does.
    """
    cands = trace.candidates
    if not cands:
        return []
    comps = np.array([[c.components[name] for c in cands] for name in COMPONENTS], dtype=np.float64)
    half = np.array(
        [profile.half_life_days.get(c.tier, profile.half_life_days[STORED_TIERS[0]]) for c in cands]
    )
    comps[COMPONENTS.index("recency")] = recency(np.array([c.age_days for c in cands]), half)
    total = weight_vector(profile) @ comps
    similarity = np.array([c.similarity for c in cands])
    order = np.lexsort((np.arange(len(cands)), -similarity, -total))
    return [(cands[int(i)].memory_id, float(total[int(i)])) for i in order]


def replay_trace(trace: Trace, profile: Profile, k: int | None = None) -> Replayed:
    """Re-rank one trace's logged candidates under ``profile``."""
    k = k or trace.k
    ranked = rescore(trace, profile)
    after = [mid for mid, _ in ranked[:k]]
    return _diff(trace, trace.returned[:k], after, dict(ranked[:k]), k, "rescore")


def research_trace(store: Engine, trace: Trace, profile: Profile, k: int | None = None) -> Replayed:
    """Run a trace's query again on today's store under ``profile`` (not logged, no access counted)."""
    k = k or trace.k
    scope = Scope.everyone() if trace.principals is None else Scope.of(*trace.principals)
    tiers = [t for t in trace.tiers if t in STORED_TIERS] or None
    result = store.read_retry(
        lambda: recall(store, trace.query, scope=scope, agent=trace.agent, tiers=tiers, k=k, profile=profile)
    )
    result.source = "replay"
    after = [s.memory.id for s in result.items]
    return _diff(
        trace, trace.returned[:k], after, {s.memory.id: s.score for s in result.items}, k, "research"
    )


def _diff(
    trace: Trace, before: list[str], after: list[str], scores: dict[str, float], k: int, method: str
) -> Replayed:
    old_rank = {mid: n for n, mid in enumerate(before, start=1)}
    new_rank = {mid: n for n, mid in enumerate(after, start=1)}
    moved = {mid: (old_rank[mid], r) for mid, r in new_rank.items() if mid in old_rank and old_rank[mid] != r}
    return Replayed(
        trace_id=trace.trace_id,
        query=trace.query,
        agent=trace.agent,
        k=k,
        before=before,
        after=after,
        entered=[m for m in after if m not in old_rank],
        left=[m for m in before if m not in new_rank],
        moved=moved,
        scores=scores,
        method=method,
    )


def replay(
    store: Engine,
    profile: Profile,
    *,
    trace_id: str | None = None,
    agent: str | None = None,
    scope: Scope = Scope.everyone(),
    research: bool = False,
    k: int | None = None,
    limit: int = 1000,
) -> dict[str, Any]:
    """Replay one trace, or the newest ``limit`` traces of an agent, under ``profile``.

    Returns ``{"profile", "method", "note", "traces": [...], "summary": {...}}``.
    """
    if (trace_id is None) == (agent is None):
        raise MemdeckError("replay needs either a trace id or an agent")
    if trace_id is not None:
        traces: Sequence[Trace] = [get_trace(store, trace_id, scope)]
    else:
        heads = list_traces(store, scope=scope, agent=agent, limit=limit)
        if not heads:
            raise MemdeckError(f"no traces of agent {agent!r}")
        traces = [get_trace(store, t.trace_id, scope) for t in heads]
    done = [research_trace(store, t, profile, k) if research else replay_trace(t, profile, k) for t in traces]
    changed = [r for r in done if r.changed]
    note = (
        "re-ran each search on the current store"
        if research
        else "re-scored the logged candidates (each carries its components); no new search, so only memories that "
        "were candidates then can enter"
    )
    return {
        "profile": profile.to_dict(),
        "method": "research" if research else "rescore",
        "note": note,
        "traces": [r.to_json() for r in done],
        "summary": {
            "traces": len(done),
            "changed": len(changed),
            "entered": sum(len(r.entered) for r in done),
            "left": sum(len(r.left) for r in done),
            "mean_overlap": round(float(np.mean([_overlap(r) for r in done])), 4) if done else None,
        },
    }


def _overlap(r: Replayed) -> float:
    if not r.before and not r.after:
        return 1.0
    return len(set(r.before) & set(r.after)) / max(len(r.before), len(r.after), 1)
