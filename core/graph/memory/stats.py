"""Graph analytics in DuckDB: the most connected entities, entities per tier, orphan entities.

Runs on a cursor of :class:`memdeck.core.analytics.Analytics` (whose ``memories`` view covers the tiers);
the entity and relation tables are registered beside it and filtered with the same bound principal list.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from memdeck.core.graph.memory.queue import drain
from memdeck.core.graph.types import GraphSummary
from memdeck.core.records import ENTITIES, RELATIONS

if TYPE_CHECKING:
    from memdeck.core.storage.engine import Engine


def register(store: Engine, con: Any) -> bool:
    """Register ``g_entities`` and ``g_relations``; False when the store has no graph yet. Memories still
    queued for indexing are indexed first."""
    drain(store)
    if not store.has_table(ENTITIES):
        return False
    con.register("g_entities", store.table(ENTITIES).to_lance())
    if store.has_table(RELATIONS):
        con.register("g_relations", store.table(RELATIONS).to_lance())
    else:
        con.execute(
            "CREATE OR REPLACE TEMP VIEW g_relations AS SELECT NULL::VARCHAR principal, "
            "NULL::VARCHAR subject_id, NULL::VARCHAR object_id WHERE false"
        )
    return True


def _scope(principals: Sequence[str] | None, column: str) -> tuple[str, list[Any]]:
    if principals is None:
        return "true", []
    if not principals:
        return "false", []
    return f"{column} IN ({', '.join('?' for _ in principals)})", list(principals)


def graph_summary(store: Engine, con: Any, principals: Sequence[str] | None, limit: int = 20) -> GraphSummary:
    """Entities and relations in scope, the most connected entities, entities per tier, orphans."""
    empty: GraphSummary = {
        "entities": 0,
        "relations": 0,
        "most_connected": [],
        "per_tier": {},
        "orphans": [],
    }
    if not register(store, con):
        return empty
    where, params = _scope(principals, "e.principal")
    rel_where, rel_params = _scope(principals, "r.principal")
    # A CTE, not a view: DuckDB cannot bind parameters inside CREATE VIEW.
    degree = f"""WITH g_degree AS (
        SELECT e.id, e.principal, e.name, e.kind, len(coalesce(e.mentions, [])) AS mentions,
               (SELECT count(*) FROM g_relations r WHERE r.principal = e.principal
                 AND (r.subject_id = e.id OR r.object_id = e.id)) AS relations
        FROM g_entities e WHERE {where}) """
    totals = con.execute(degree + "SELECT count(*) FROM g_degree", params).fetchone()
    n_rel = con.execute(f"SELECT count(*) FROM g_relations r WHERE {rel_where}", rel_params).fetchone()
    top = con.execute(
        degree + "SELECT id, principal, name, kind, relations, mentions FROM g_degree "
        "ORDER BY relations DESC, mentions DESC, name, id LIMIT ?",
        [*params, int(limit)],
    ).fetchall()
    tiers = con.execute(
        degree
        + """
        SELECT m.tier, count(DISTINCT d.id) FROM g_degree d, g_entities e, unnest(e.mentions) AS u(memory_id)
        JOIN memories m ON m.id = u.memory_id AND m.principal = e.principal
        WHERE e.id = d.id GROUP BY m.tier ORDER BY m.tier""",
        params,
    ).fetchall()
    orphans = con.execute(
        degree
        + """
        SELECT d.id, d.principal, d.name, d.kind FROM g_degree d WHERE d.relations = 0 AND NOT EXISTS (
            SELECT 1 FROM g_entities e, unnest(e.mentions) AS u(memory_id)
            JOIN memories m ON m.id = u.memory_id AND m.principal = e.principal
            WHERE e.id = d.id AND coalesce(m.state, 'active') = 'active')
        ORDER BY d.principal, d.name, d.id LIMIT ?""",
        [*params, int(limit)],
    ).fetchall()
    return {
        "entities": int(totals[0] if totals else 0),
        "relations": int(n_rel[0] if n_rel else 0),
        "most_connected": [
            {"id": i, "principal": p, "name": n, "kind": k, "relations": int(r), "mentions": int(m)}
            for i, p, n, k, r, m in top
        ],
        "per_tier": {t: int(n) for t, n in tiers},
        "orphans": [{"id": i, "principal": p, "name": n, "kind": k} for i, p, n, k in orphans],
    }
