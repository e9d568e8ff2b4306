"""Relevance judgments, and recall@k / nDCG@k / MRR of a weight profile on them.

A judgment says whether one memory is relevant to one query of one principal. The app's inspector calls
:func:`judge`; the command line ``memdeck eval`` calls :func:`evaluate`. Judgments live in the
``judgments`` table of the store's log database (see :mod:`memdeck.core.storage.logdb`); a later judgment of the
same (query, principal, memory) replaces the earlier one.

Each judged query is recalled once (its candidates do not depend on the weights) and then re-ranked under
every profile compared, which is what makes tuning cheap.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from memdeck.core.config import Profile, load_profile
from memdeck.core.errors import MemdeckError
from memdeck.core.filters import Scope
from memdeck.core.recall.search import recall
from memdeck.core.recall.traces import get_trace
from memdeck.core.records import check_principal, check_text, now
from memdeck.core.storage.logdb import aware_utc, connection, log_path, naive_utc

if TYPE_CHECKING:
    from memdeck.core.storage.engine import Engine

# --- metrics ----------------------------------------------------------------------------------------


def recall_at(ranked: Sequence[str], relevant: Iterable[str], k: int) -> float:
    """Share of the relevant items found in the first k of ``ranked``."""
    rel = set(relevant)
    if not rel:
        return 0.0
    return len(rel.intersection(ranked[:k])) / len(rel)


def ndcg_at(ranked: Sequence[str], relevant: Iterable[str], k: int) -> float:
    """Binary-gain nDCG@k: the ranking's DCG over the ideal ranking's DCG."""
    rel = set(relevant)
    if not rel:
        return 0.0
    dcg = sum(1.0 / math.log2(i + 2) for i, item in enumerate(ranked[:k]) if item in rel)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(rel), k)))
    return dcg / ideal


def mrr_at(ranked: Sequence[str], relevant: Iterable[str], k: int) -> float:
    """Reciprocal rank of the first relevant item within the first k; 0 if none is there."""
    rel = set(relevant)
    for i, item in enumerate(ranked[:k]):
        if item in rel:
            return 1.0 / (i + 1)
    return 0.0


def metrics(ranked: Sequence[str], relevant: Iterable[str], k: int) -> dict[str, float]:
    rel = list(relevant)
    return {
        f"recall@{k}": recall_at(ranked, rel, k),
        f"ndcg@{k}": ndcg_at(ranked, rel, k),
        "mrr": mrr_at(ranked, rel, k),
    }


def mean_metrics(rows: Sequence[dict[str, float]]) -> dict[str, float]:
    if not rows:
        return {}
    return {key: sum(r[key] for r in rows) / len(rows) for key in rows[0]}


# --- judgments --------------------------------------------------------------------------------------


@dataclass
class Judgment:
    judgment_id: str
    query: str
    principal: str
    memory_id: str
    relevant: bool
    trace_id: str | None = None
    by_agent: str | None = None
    at: Any = None

    def to_json(self) -> dict[str, Any]:
        from memdeck.core.records import iso

        return {
            "judgment_id": self.judgment_id,
            "query": self.query,
            "principal": self.principal,
            "memory_id": self.memory_id,
            "relevant": self.relevant,
            "trace_id": self.trace_id,
            "by_agent": self.by_agent,
            "at": iso(self.at) if self.at else None,
        }


def judge(
    store: Engine,
    query: str,
    principal: str,
    memory_id: str,
    relevant: bool,
    *,
    trace_id: str | None = None,
    by_agent: str | None = None,
) -> Judgment:
    """Save that ``memory_id`` is (or is not) relevant to ``query`` for ``principal``.

    The memory must be visible to the principal (NotFound otherwise, with no hint whether it exists).
    """
    query = check_text(query, "query")
    principal = check_principal(principal)
    store.get(memory_id, Scope.of(principal))  # raises NotFound outside the principal's scope
    query = store.redact(query, principal)  # written to disk: redacted like the trace log's queries
    j = Judgment(
        f"jdg_{uuid.uuid4().hex[:20]}", query, principal, memory_id, bool(relevant), trace_id, by_agent, now()
    )
    with connection(log_path(store)) as con:
        con.execute("BEGIN")
        con.execute(
            "DELETE FROM judgments WHERE query = ? AND principal = ? AND memory_id = ?",
            [query, principal, memory_id],
        )
        con.execute(
            "INSERT INTO judgments VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [j.judgment_id, naive_utc(j.at), trace_id, query, principal, memory_id, j.relevant, by_agent],
        )
        con.execute("COMMIT")
    return j


def judge_trace(
    store: Engine,
    trace_id: str,
    memory_id: str,
    relevant: bool,
    *,
    scope: Scope = Scope.everyone(),
    by_agent: str | None = None,
) -> Judgment:
    """Judge a memory against a logged recall's query (its scope must be a single principal)."""
    trace = get_trace(store, trace_id, scope)
    if not trace.principals or len(trace.principals) != 1:
        raise MemdeckError(
            f"trace {trace_id} recalled for {'several principals' if trace.principals else 'the whole store'}; "
            "judge with an explicit query and principal"
        )
    return judge(
        store, trace.query, trace.principals[0], memory_id, relevant, trace_id=trace_id, by_agent=by_agent
    )


def unjudge(store: Engine, query: str, principal: str, memory_id: str) -> bool:
    """Remove a judgment; True if there was one."""
    with connection(log_path(store), create=False) as con:
        if con is None:
            return False
        n = con.execute(
            "SELECT count(*) FROM judgments WHERE query = ? AND principal = ? AND memory_id = ?",
            [query, principal, memory_id],
        ).fetchone()[0]
        con.execute(
            "DELETE FROM judgments WHERE query = ? AND principal = ? AND memory_id = ?",
            [query, principal, memory_id],
        )
    return bool(n)


def list_judgments(store: Engine, scope: Scope = Scope.everyone()) -> list[Judgment]:
    """Every judgment visible in ``scope``, grouped by query."""
    where, params = (
        ("TRUE", []) if scope.is_everyone else ("list_contains(?, principal)", [list(scope.principals or ())])
    )
    with connection(log_path(store), create=False) as con:
        if con is None:
            return []
        rows = con.execute(
            "SELECT judgment_id, query, principal, memory_id, relevant, trace_id, by_agent, judged_at FROM judgments "
            f"WHERE {where} ORDER BY principal, query, judged_at",
            params,
        ).fetchall()
    return [
        Judgment(
            judgment_id=r[0],
            query=r[1],
            principal=r[2],
            memory_id=r[3],
            relevant=r[4],
            trace_id=r[5],
            by_agent=r[6],
            at=aware_utc(r[7]),
        )
        for r in rows
    ]


@dataclass
class JudgedQuery:
    """One query with its judged memories."""

    query: str
    principal: str
    relevant: set[str] = field(default_factory=set)
    irrelevant: set[str] = field(default_factory=set)

    @property
    def key(self) -> str:
        return f"{self.principal}\x00{self.query}"


def judged_queries(store: Engine, scope: Scope = Scope.everyone()) -> list[JudgedQuery]:
    """Judgments grouped by (principal, query), in a stable order."""
    out: dict[tuple[str, str], JudgedQuery] = {}
    for j in list_judgments(store, scope):
        q = out.setdefault((j.principal, j.query), JudgedQuery(j.query, j.principal))
        (q.relevant if j.relevant else q.irrelevant).add(j.memory_id)
    return [out[key] for key in sorted(out)]


# --- evaluation -------------------------------------------------------------------------------------


@dataclass
class Prepared:
    """A judged query with its recall done once; re-rank ``result`` under any profile."""

    judged: JudgedQuery
    result: Any

    def ranked(self, profile: Profile, k: int) -> list[str]:
        return [s.memory.id for s in self.result.rerank(profile, k)]


def prepare(store: Engine, queries: Sequence[JudgedQuery], k: int = 10) -> list[Prepared]:
    """Recall each query once (no trace, no access counting) to cache its candidates."""
    out = []
    profile = load_profile(store.settings.recall.profile)
    for q in queries:
        scope = Scope.of(check_principal(q.principal))
        result = store.read_retry(partial(recall, store, q.query, scope=scope, k=k, profile=profile))
        result.source = "eval"
        out.append(Prepared(q, result))
    return out


def score(prepared: Sequence[Prepared], profile: Profile, k: int) -> dict[str, Any]:
    """Mean metrics of ``profile`` over prepared queries with at least one relevant memory."""
    rows = [metrics(p.ranked(profile, k), p.judged.relevant, k) for p in prepared if p.judged.relevant]
    out: dict[str, Any] = {"queries": len(rows)}
    out.update({key: round(v, 4) for key, v in mean_metrics(rows).items()})
    return out


def evaluate(
    store: Engine,
    profile: Profile | str | None = None,
    *,
    k: int = 10,
    scope: Scope = Scope.everyone(),
    baseline: Profile | str | None = "default",
) -> dict[str, Any]:
    """recall@k, nDCG@k and MRR of ``profile`` on the saved judgments, beside ``baseline``'s."""
    if not isinstance(k, int) or not 1 <= k <= 1000:
        raise MemdeckError(f"k must be between 1 and 1000, got {k!r}")
    prof = profile if isinstance(profile, Profile) else load_profile(profile)
    base = baseline if isinstance(baseline, Profile) or baseline is None else load_profile(baseline)
    queries = judged_queries(store, scope)
    if not queries:
        raise MemdeckError(
            "no judgments yet: judge some recalled memories first (the app's inspector or `memdeck judge`)"
        )
    prepared = prepare(store, queries, k)
    skipped = sum(1 for q in queries if not q.relevant)
    out: dict[str, Any] = {
        "k": k,
        "queries": len(queries),
        "skipped_without_relevant": skipped,
        "judgments": sum(len(q.relevant) + len(q.irrelevant) for q in queries),
        "profile": {"name": prof.name, **score(prepared, prof, k)},
    }
    if base is not None:
        out["baseline"] = {"name": base.name, **score(prepared, base, k)}
    return out
