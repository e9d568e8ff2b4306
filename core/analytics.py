"""Store analytics: DuckDB (in memory) scanning the Lance datasets directly.

Every query runs in a fresh in-memory DuckDB connection over the tiers' Lance datasets, so nothing is ever
copied into a DuckDB file (a forget has no analytics file to rewrite) and every call sees the latest table
versions. The scope's principal filter is a bound parameter list (``principal IN (?, ...)``) that DuckDB
pushes down into the Lance scan; principal strings are never formatted into SQL. Aggregation happens in
DuckDB: at a million rows only the grouped results reach Python.

Near-duplicate search is the exception: it reads the stored vectors of a bounded sample (the newest N
memories per tier in scope) and compares them with numpy, within one principal and one tier.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import duckdb
import numpy as np

from memdeck.core.consolidate import contradictions
from memdeck.core.filters import Scope
from memdeck.core.recall.feedback import feedback_counts, trust
from memdeck.core.records import STORED_TIERS, now

if TYPE_CHECKING:
    from memdeck.core.graph.types import GraphSummary
    from memdeck.core.storage.engine import Engine

log = logging.getLogger("memdeck.analytics")

# Columns every tier has; text and vectors stay out of the shared view.
COMMON_COLUMNS = (
    "id",
    "tier",
    "principal",
    "agent",
    "importance",
    "pinned",
    "state",
    "access_count",
    "last_accessed",
    "created_at",
    "updated_at",
)
GROUPS = ("tier", "principal", "agent")
PERIODS = ("day", "week", "month", "year")
AGE_BUCKETS: tuple[tuple[str, float, float], ...] = (
    ("< 1 day", 0, 1),
    ("1-7 days", 1, 7),
    ("7-30 days", 7, 30),
    ("30-90 days", 30, 90),
    ("90-365 days", 90, 365),
    ("> 1 year", 365, float("inf")),
)
DUPLICATE_THRESHOLD = 0.92
DUPLICATE_SAMPLE_PER_TIER = 2000


@dataclass
class DuplicateCluster:
    """Memories of one principal and tier whose stored vectors are near-identical."""

    tier: str
    principal: str
    ids: list[str]
    max_similarity: float
    min_similarity: float

    @property
    def size(self) -> int:
        return len(self.ids)

    def to_json(self) -> dict[str, Any]:
        return {
            "tier": self.tier,
            "principal": self.principal,
            "ids": list(self.ids),
            "size": self.size,
            "max_similarity": round(self.max_similarity, 4),
            "min_similarity": round(self.min_similarity, 4),
        }


@dataclass
class Series:
    """Counts per time bucket for a few keys (the rest folded into ``other``), ready to plot."""

    period: str
    by: str
    buckets: list[str]
    counts: dict[str, list[int]] = field(default_factory=dict)

    def total(self) -> list[int]:
        return [sum(v[i] for v in self.counts.values()) for i in range(len(self.buckets))]


class Analytics:
    """Read-only statistics over one store, limited to a scope. Safe to call from several threads."""

    def __init__(self, engine: Engine, scope: Scope | None = None) -> None:
        self.engine = engine
        self.scope = scope if scope is not None else Scope.everyone()
        # One in-memory database; each call takes its own cursor (a DuckDB connection is not shared
        # between threads) and registers fresh dataset handles, so it sees the latest table versions.
        self._db = duckdb.connect(":memory:")
        self._db_lock = threading.Lock()

    # --- plumbing -----------------------------------------------------------------------------------

    def tiers(self) -> list[str]:
        return [t for t in STORED_TIERS if self.engine.has_table(t)]

    @contextmanager
    def connect(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A cursor with ``t_<tier>`` per stored tier and a ``memories`` view over them (no text, no vectors)."""
        with self._db_lock:
            con = self._db.cursor()
        try:
            con.execute("SET TimeZone = 'UTC'")
            selects = []
            for tier in self.tiers():
                con.register(f"t_{tier}", self.engine.table(tier).to_lance())
                selects.append(f"SELECT {', '.join(COMMON_COLUMNS)} FROM t_{tier}")
            if not selects:
                # An empty store: a view with the right columns and no rows keeps every query valid.
                selects.append(
                    "SELECT NULL::VARCHAR id, NULL::VARCHAR tier, NULL::VARCHAR principal, NULL::VARCHAR agent, "
                    "NULL::FLOAT importance, NULL::BOOLEAN pinned, NULL::VARCHAR state, NULL::BIGINT access_count, "
                    "NULL::TIMESTAMPTZ last_accessed, NULL::TIMESTAMPTZ created_at, NULL::TIMESTAMPTZ updated_at "
                    "WHERE false"
                )
            con.execute("CREATE OR REPLACE TEMP VIEW memories AS " + " UNION ALL ".join(selects))
            yield con
        finally:
            con.close()

    def close(self) -> None:
        self._db.close()

    def _where(self, *, active_only: bool = False) -> tuple[str, list[Any]]:
        """The scope and state filter as SQL with placeholders, and its parameters."""
        params: list[Any] = []
        parts = ["state = 'active'" if active_only else "coalesce(state, 'active') != 'forgotten-pending'"]
        if not self.scope.is_everyone:
            principals = list(self.scope.principals or ())
            if not principals:
                parts.append("false")
            else:
                parts.append(f"principal IN ({', '.join('?' for _ in principals)})")
                params.extend(principals)
        return " AND ".join(parts), params

    def _query(self, sql: str, params: Sequence[Any] = (), con: Any = None) -> list[tuple[Any, ...]]:
        if con is not None:
            return con.execute(sql, list(params)).fetchall()
        with self.connect() as fresh:
            return fresh.execute(sql, list(params)).fetchall()

    # --- counts ---------------------------------------------------------------------------------------

    def summary(self) -> dict[str, Any]:
        """Totals: memories, per tier, per state, pinned, principals, agents, never recalled."""
        where, params = self._where()
        with self.connect() as con:
            rows = self._query(
                f"""
                SELECT tier, state, count(*), count(*) FILTER (WHERE pinned),
                       count(*) FILTER (WHERE coalesce(access_count, 0) = 0)
                FROM memories WHERE {where} GROUP BY tier, state
                """,
                params,
                con,
            )
            distinct = self._query(
                f"SELECT count(DISTINCT principal), count(DISTINCT agent) FROM memories WHERE {where}",
                params,
                con,
            )[0]
        per_tier: dict[str, int] = dict.fromkeys(self.tiers(), 0)
        per_state: dict[str, int] = {}
        pinned = never = total = 0
        for tier, state, n, n_pinned, n_never in rows:
            per_tier[tier] = per_tier.get(tier, 0) + n
            per_state[state or "active"] = per_state.get(state or "active", 0) + n
            pinned += n_pinned
            never += n_never
            total += n
        return {
            "total": total,
            "per_tier": per_tier,
            "per_state": per_state,
            "pinned": pinned,
            "never_recalled": never,
            "principals": int(distinct[0] or 0),
            "agents": int(distinct[1] or 0),
        }

    def breakdown(self, by: str = "principal", limit: int = 50) -> list[dict[str, Any]]:
        """Memories per principal, agent or tier, largest first."""
        column = _group_column(by)
        where, params = self._where()
        rows = self._query(
            f"""
            SELECT {column} AS key, count(*) AS n,
                   count(*) FILTER (WHERE pinned) AS pinned,
                   count(*) FILTER (WHERE state = 'deprecated') AS deprecated,
                   avg(importance) AS importance, sum(coalesce(access_count, 0)) AS recalls
            FROM memories WHERE {where} GROUP BY key ORDER BY n DESC, key LIMIT ?
            """,
            [*params, int(limit)],
        )
        return [
            {
                "key": k,
                "n": n,
                "pinned": p,
                "deprecated": d,
                "importance": float(i or 0.0),
                "recalls": int(r or 0),
            }
            for k, n, p, d, i, r in rows
        ]

    def over_time(self, by: str = "tier", period: str = "month", top: int = 6) -> Series:
        """New memories per period, split by tier, principal or agent (the ``top`` largest keys)."""
        column = _group_column(by)
        if period not in PERIODS:
            raise ValueError(f"period must be one of {', '.join(PERIODS)}")
        where, params = self._where()
        rows = self._query(
            f"""
            WITH counted AS (
                SELECT date_trunc(?, created_at) AS bucket, {column} AS key, count(*) AS n
                FROM memories WHERE {where} AND created_at IS NOT NULL GROUP BY bucket, key
            ), ranked AS (
                SELECT key, sum(n) AS total FROM counted GROUP BY key ORDER BY total DESC, key LIMIT ?
            )
            SELECT strftime(bucket, '%Y-%m-%d'), CASE WHEN key IN (SELECT key FROM ranked) THEN key END AS k,
                   sum(n)
            FROM counted GROUP BY bucket, k ORDER BY bucket
            """,
            [period, *params, int(top)],
        )
        buckets = sorted({r[0] for r in rows})
        index = {b: i for i, b in enumerate(buckets)}
        series = Series(period=period, by=by, buckets=buckets)
        for bucket, key, n in rows:
            name = "other" if key is None else str(key)
            series.counts.setdefault(name, [0] * len(buckets))[index[bucket]] += int(n)
        # Largest first, "other" last, so colours and legend order stay stable between refreshes.
        order = sorted(series.counts, key=lambda k: (k == "other", -sum(series.counts[k]), k))
        series.counts = {k: series.counts[k] for k in order}
        return series

    # --- distributions --------------------------------------------------------------------------------

    def importance_histogram(self, bins: int = 10) -> list[dict[str, Any]]:
        """Memories per importance bin over [0, 1] (the last bin includes 1.0)."""
        bins = max(1, int(bins))
        where, params = self._where()
        rows = dict(
            self._query(
                f"""
                SELECT least(CAST(floor(coalesce(importance, 0) * ?) AS INTEGER), ? - 1) AS b, count(*)
                FROM memories WHERE {where} GROUP BY b
                """,
                [bins, bins, *params],
            )
        )
        return [{"lo": i / bins, "hi": (i + 1) / bins, "n": int(rows.get(i, 0))} for i in range(bins)]

    def age_histogram(self, at: datetime | None = None) -> list[dict[str, Any]]:
        """Memories per age bucket (from created_at to ``at``)."""
        at = at or now()
        where, params = self._where()
        cases = " ".join(
            f"WHEN age < {float(hi)!r} THEN {i}"
            for i, (_, _, hi) in enumerate(AGE_BUCKETS)
            if hi != float("inf")
        )
        rows = dict(
            self._query(
                f"""
                SELECT CASE {cases} ELSE {len(AGE_BUCKETS) - 1} END AS b, count(*) FROM (
                    SELECT greatest(epoch(?::TIMESTAMPTZ) - epoch(created_at), 0) / 86400.0 AS age
                    FROM memories WHERE {where} AND created_at IS NOT NULL
                ) GROUP BY b
                """,
                [at, *params],
            )
        )
        return [{"label": label, "n": int(rows.get(i, 0))} for i, (label, _, _) in enumerate(AGE_BUCKETS)]

    # --- recall statistics ----------------------------------------------------------------------------

    def most_recalled(self, limit: int = 20) -> list[dict[str, Any]]:
        """Memories recalled most often (access_count), with their last recall."""
        where, params = self._where()
        return self._rows(
            f"""
            SELECT id, tier, principal, agent, coalesce(access_count, 0) AS recalls,
                   strftime(last_accessed, '%Y-%m-%dT%H:%M:%SZ') AS last_recalled,
                   strftime(created_at, '%Y-%m-%dT%H:%M:%SZ') AS created
            FROM memories WHERE {where} AND coalesce(access_count, 0) > 0
            ORDER BY recalls DESC, last_accessed DESC NULLS LAST, id LIMIT ?
            """,
            [*params, int(limit)],
        )

    def least_recalled(self, limit: int = 20) -> list[dict[str, Any]]:
        """Active memories recalled least often, oldest first among equals."""
        where, params = self._where(active_only=True)
        return self._rows(
            f"""
            SELECT id, tier, principal, agent, coalesce(access_count, 0) AS recalls,
                   strftime(last_accessed, '%Y-%m-%dT%H:%M:%SZ') AS last_recalled,
                   strftime(created_at, '%Y-%m-%dT%H:%M:%SZ') AS created
            FROM memories WHERE {where}
            ORDER BY recalls ASC, created_at ASC NULLS LAST, id LIMIT ?
            """,
            [*params, int(limit)],
        )

    def stale(self, days: float = 90, limit: int = 50, at: datetime | None = None) -> dict[str, Any]:
        """Active memories not recalled in ``days`` (never-recalled ones count from their creation)."""
        if days < 0:
            raise ValueError("days must be zero or more")
        cutoff = (at or now()) - timedelta(days=float(days))
        where, params = self._where(active_only=True)
        stale_sql = f"{where} AND coalesce(last_accessed, created_at) < ?::TIMESTAMPTZ"
        with self.connect() as con:
            counts = self._query(
                f"""
                SELECT tier, count(*) FILTER (WHERE coalesce(last_accessed, created_at) < ?::TIMESTAMPTZ), count(*)
                FROM memories WHERE {where} GROUP BY tier
                """,
                [cutoff, *params],
                con,
            )
            per_tier = {tier: int(n) for tier, n, _ in counts if n}
            active = sum(int(total) for _, _, total in counts)
            rows = self._rows(
                f"""
                SELECT id, tier, principal, agent, coalesce(access_count, 0) AS recalls,
                       strftime(last_accessed, '%Y-%m-%dT%H:%M:%SZ') AS last_recalled,
                       strftime(created_at, '%Y-%m-%dT%H:%M:%SZ') AS created, pinned
                FROM memories WHERE {stale_sql}
                ORDER BY coalesce(last_accessed, created_at) ASC, id LIMIT ?
                """,
                [*params, cutoff, int(limit)],
                con,
            )
        return {
            "days": days,
            "count": int(sum(per_tier.values())),
            "active": int(active or 0),
            "per_tier": per_tier,
            "rows": rows,
        }

    def _rows(self, sql: str, params: Sequence[Any], con: Any = None) -> list[dict[str, Any]]:
        if con is None:
            with self.connect() as fresh:
                return self._rows(sql, params, fresh)
        cur = con.execute(sql, list(params))
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]

    def graph(self, limit: int = 20) -> GraphSummary:
        """The graph in scope: counts, the most connected entities, entities per tier, orphan entities."""
        from memdeck.core.graph.memory.stats import graph_summary

        principals = None if self.scope.is_everyone else list(self.scope.principals or ())
        with self.connect() as con:
            return graph_summary(self.engine, con, principals, limit)

    # --- duplicates, contradictions, trust ------------------------------------------------------------

    def near_duplicates(
        self,
        threshold: float = DUPLICATE_THRESHOLD,
        sample_per_tier: int = DUPLICATE_SAMPLE_PER_TIER,
        max_clusters: int = 200,
    ) -> list[DuplicateCluster]:
        """Clusters of active memories with cosine >= ``threshold``, within one principal and tier.

        Bounded: only the newest ``sample_per_tier`` memories in scope per tier are compared.
        """
        clusters: list[DuplicateCluster] = []
        where, params = self._where(active_only=True)
        with self.connect() as con:
            samples = {
                tier: con.sql(
                    f"SELECT id, principal, vector FROM t_{tier} WHERE {where} ORDER BY created_at DESC, id LIMIT ?",
                    params=[*params, int(sample_per_tier)],
                ).to_arrow_table()
                for tier in self.tiers()
            }
        for tier, table in samples.items():
            if table.num_rows < 2:
                continue
            vectors = _vectors(table.column("vector"))
            ids = table.column("id").to_pylist()
            principals = table.column("principal").to_pylist()
            by_principal: dict[str, list[int]] = {}
            for i, p in enumerate(principals):
                by_principal.setdefault(p, []).append(i)
            for principal, idx in by_principal.items():
                for members, hi, lo in _clusters(vectors[idx], threshold):
                    clusters.append(DuplicateCluster(tier, principal, [ids[idx[m]] for m in members], hi, lo))
        clusters.sort(key=lambda c: (-c.size, -c.max_similarity, c.ids[0]))
        return clusters[:max_clusters]

    def contradictions(self) -> list[dict[str, Any]]:
        """The contradictions awaiting review in scope: :func:`memdeck.core.consolidate.contradictions`, the
        same pairs ``memdeck contradictions`` lists and the review queue shows."""
        found = contradictions(self.engine, self.scope)
        return [item.to_json() for item in found]

    def agent_trust(self) -> list[dict[str, Any]]:
        """Trust per agent that wrote memories in scope, with its feedback counts (0.5 with no feedback)."""
        counts = feedback_counts(self.engine)

        def value(agent: str) -> float:
            return float(trust(**counts[agent])) if agent in counts else 0.5

        out = []
        for row in self.breakdown("agent", limit=10_000):
            agent = row["key"]
            if agent is None:
                continue
            c = counts.get(agent, {"useful": 0, "total": 0})
            out.append(
                {
                    "agent": agent,
                    "memories": row["n"],
                    "trust": value(agent),
                    "useful": c["useful"],
                    "verdicts": c["total"],
                    "rated": c["total"] > 0,
                }
            )
        return out

    def previews(self, ids: Sequence[str], width: int = 100) -> dict[str, str]:
        """A one-line text preview per memory id (in scope only), for display next to statistics."""
        wanted = list(dict.fromkeys(str(i) for i in ids))
        if not wanted:
            return {}
        where, params = self._where()
        out: dict[str, str] = {}
        with self.connect() as con:
            for tier in self.tiers():
                rows = con.execute(
                    f"SELECT id, left(text, ?) FROM t_{tier} WHERE {where} AND id IN ({', '.join('?' for _ in wanted)})",
                    [int(width) + 1, *params, *wanted],
                ).fetchall()
                for mem_id, text in rows:
                    text = " ".join((text or "").split())
                    out[mem_id] = text if len(text) <= width else text[: width - 1] + "…"
        return out


def _group_column(by: str) -> str:
    # Column names come from this fixed list, never from the caller's text.
    if by not in GROUPS:
        raise ValueError(f"group by one of {', '.join(GROUPS)}, not {by!r}")
    return by


def _vectors(column: Any) -> np.ndarray:
    """A fixed-size-list Arrow column as an (n, dim) float32 matrix."""
    arr = column.combine_chunks()
    dim = arr.type.list_size
    return np.asarray(arr.values.to_numpy(zero_copy_only=False), dtype=np.float32).reshape(len(arr), dim)


def _clusters(
    vectors: np.ndarray, threshold: float, block: int = 1024
) -> list[tuple[list[int], float, float]]:
    """Connected groups of rows with cosine >= threshold: (members, max pair similarity, min pair similarity)."""
    n = len(vectors)
    if n < 2:
        return []
    norms = np.linalg.norm(vectors, axis=1)
    usable = norms > 1e-6  # unembedded memories carry a zero vector: they match nothing
    unit = np.zeros_like(vectors)
    unit[usable] = vectors[usable] / norms[usable, None]
    parent = list(range(n))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    pair_sims: dict[tuple[int, int], float] = {}
    for start in range(0, n, block):
        sims = unit[start : start + block] @ unit.T
        rows, cols = np.nonzero(sims >= threshold)
        for r, c in zip(rows.tolist(), cols.tolist(), strict=True):
            i = start + r
            if c <= i or not (usable[i] and usable[c]):
                continue
            pair_sims[(i, c)] = float(sims[r, c])
            a, b = find(i), find(c)
            if a != b:
                parent[b] = a
    groups: dict[int, tuple[set[int], list[float]]] = {}
    for (i, j), sim in pair_sims.items():
        members, sims = groups.setdefault(find(i), (set(), []))
        members.update((i, j))
        sims.append(sim)
    return [(sorted(members), max(sims), min(sims)) for members, sims in groups.values()]
