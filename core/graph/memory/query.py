"""Reading the graph: entities with counts, an entity's relations and memories, related entities, paths.

Names are matched as written, case-insensitively (and by alias). Each call reads one principal's graph.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memdeck.core.errors import MemdeckError, NotFound
from memdeck.core.filters import Scope
from memdeck.core.graph.memory.model import EntityNode, Graph, graph_principals, load_graph
from memdeck.core.graph.types import (
    EntityBrief,
    EntityDescription,
    EntityListing,
    GraphPath,
    Related,
    RelatedEntity,
)
from memdeck.core.records import check_principal

if TYPE_CHECKING:
    from memdeck.core.storage.engine import Engine

MAX_DEPTH = 6


def check_depth(depth: Any) -> int:
    if isinstance(depth, bool) or not isinstance(depth, int) or not 1 <= depth <= MAX_DEPTH:
        raise MemdeckError(f"depth must be a whole number from 1 to {MAX_DEPTH}, got {depth!r}")
    return depth


def entity(graph: Graph, name: str) -> EntityNode:
    node = graph.find(name)
    if node is None:
        raise NotFound(f"no entity {name!r} for principal {graph.principal!r}")
    return node


def list_entities(store: Engine, scope: Scope = Scope.everyone()) -> list[EntityListing]:
    """Every entity the scope may see: name, kind, how many memories mention it and relations touch it."""
    principals = graph_principals(store) if scope.is_everyone else list(scope.principals or ())
    out: list[EntityListing] = []
    for principal in principals:
        graph = load_graph(store, principal)
        for node in graph.entities.values():
            out.append(
                {
                    **node.brief(),
                    "principal": principal,
                    "aliases": list(node.aliases),
                    "relations": len(graph.adjacency.get(node.id, ())),
                }
            )
    out.sort(key=lambda e: (e["principal"], -e["mentions"], e["name"].casefold(), e["id"]))
    return out


def describe(store: Engine, principal: str, name: str) -> EntityDescription:
    """One entity with its relations (both directions) and the memories that mention it."""
    graph = load_graph(store, check_principal(principal))
    node = entity(graph, name)
    relations = [graph.relations[e].to_json(graph) for e, _other in graph.adjacency.get(node.id, ())]
    return {**node.to_json(), "relations": relations}


def related(store: Engine, principal: str, name: str, depth: int = 1) -> Related:
    """The entities within ``depth`` relations of ``name``, nearest first, each with the relation reaching it."""
    depth = check_depth(depth)
    graph = load_graph(store, check_principal(principal))
    start = entity(graph, name)
    reached = graph.reach([start.id], depth, co_mentions=True)
    items: list[RelatedEntity] = []
    for entity_id, distance in sorted(
        reached.items(), key=lambda kv: (kv[1], graph.entities[kv[0]].name.casefold())
    ):
        if entity_id == start.id:
            continue
        steps = graph.shortest_path(start.id, entity_id, distance, co_mentions=True) or []
        via = None
        if len(steps) >= 2 and steps[-1][1]:
            via = graph.step_json(str(steps[-1][1]), steps[-2][0], steps[-1][0])
        items.append({**graph.entities[entity_id].brief(), "depth": distance, "via": via})
    return {"entity": start.brief(), "principal": principal, "depth": depth, "related": items}


def path(store: Engine, principal: str, a: str, b: str, max_depth: int = MAX_DEPTH) -> GraphPath:
    """The shortest chain from ``a`` to ``b`` (``path`` is empty when there is none): by relations when they
    join them, else also through memories that name two entities together (a step's ``via.kind`` says
    which: ``relation`` or ``co-mention``, with the memory in ``sources``)."""
    graph = load_graph(store, check_principal(principal))
    start, end = entity(graph, a), entity(graph, b)
    depth = check_depth(max_depth)
    steps = (
        graph.shortest_path(start.id, end.id, depth)
        or graph.shortest_path(start.id, end.id, depth, co_mentions=True)
        or []
    )
    return {
        "from": start.brief(),
        "to": end.brief(),
        "principal": principal,
        "found": bool(steps),
        "path": [
            {
                "entity": graph.entities[e].brief(),
                "via": graph.step_json(r, steps[i - 1][0], e) if r else None,
            }
            for i, (e, r) in enumerate(steps)
        ],
    }


def entities_of(store: Engine, principal: str, memory_id: str) -> list[EntityBrief]:
    """The entities that a memory mentions (the detail screen's chips)."""
    graph = load_graph(store, check_principal(principal))
    return [node.brief() for node in graph.entities.values() if memory_id in node.mentions]
