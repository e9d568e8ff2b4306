"""The graph's share of a forget: forgotten memory ids leave every entity's ``mentions`` and every
relation's ``sources``; an entity or relation left with none (that had some) is deleted, and so is a
relation whose subject or object goes. The purge then rewrites and cleans the graph tables' files like
every other table's, and the verifier reads them like every other table's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from memdeck.core import filters as F
from memdeck.core.graph.memory.model import Graph, load_graph
from memdeck.core.graph.types import GraphCounts
from memdeck.core.records import ENTITIES, RELATIONS, now

if TYPE_CHECKING:
    from memdeck.core.storage.engine import Engine

ENTITY_WHY = "entity mentioned only by forgotten memories"
RELATION_WHY = "relation supported only by forgotten memories"
ENDPOINT_WHY = "relation to an entity that is forgotten"


@dataclass
class GraphCascade:
    """Graph rows a forget deletes (with why) and rows whose lists it shortens (id -> the list left)."""

    delete_entities: dict[str, str] = field(default_factory=dict)
    delete_relations: dict[str, str] = field(default_factory=dict)
    mentions: dict[str, list[str]] = field(default_factory=dict)
    sources: dict[str, list[str]] = field(default_factory=dict)
    aliases: dict[str, list[str]] = field(default_factory=dict)  # a kept entity's aliases no kept memory says

    def receipt_items(self) -> list[dict[str, Any]]:
        """Cascade entries for the receipt: ids and reasons only, never a name."""
        return [
            {"id": i, "tier": ENTITIES, "why": why} for i, why in sorted(self.delete_entities.items())
        ] + [{"id": i, "tier": RELATIONS, "why": why} for i, why in sorted(self.delete_relations.items())]

    @property
    def empty(self) -> bool:
        return not (
            self.delete_entities or self.delete_relations or self.mentions or self.sources or self.aliases
        )


def cascade_of(graph: Graph, ids: Sequence[str]) -> GraphCascade:
    gone = set(ids)
    out = GraphCascade()
    for node in graph.entities.values():
        if gone.isdisjoint(node.mentions):
            continue
        left = [m for m in node.mentions if m not in gone]
        if left:
            out.mentions[node.id] = left
        else:
            out.delete_entities[node.id] = ENTITY_WHY
    for edge in graph.relations.values():
        if edge.subject_id in out.delete_entities or edge.object_id in out.delete_entities:
            out.delete_relations[edge.id] = ENDPOINT_WHY
            continue
        if gone.isdisjoint(edge.sources):
            continue
        left = [s for s in edge.sources if s not in gone]
        if left:
            out.sources[edge.id] = left
        else:
            out.delete_relations[edge.id] = RELATION_WHY
    return out


def plan_graph(store: Engine, principal: str, ids: Sequence[str], *, whole: bool = False) -> GraphCascade:
    """What forgetting ``ids`` of ``principal`` (or, ``whole``, everything of theirs) does to the graph."""
    graph = load_graph(store, principal)
    if whole:
        return GraphCascade(
            dict.fromkeys(graph.entities, "the principal is forgotten"),
            dict.fromkeys(graph.relations, "the principal is forgotten"),
        )
    out = cascade_of(graph, ids)
    _drop_unsaid_aliases(store, graph, out)
    return out


def _drop_unsaid_aliases(store: Engine, graph: Graph, out: GraphCascade) -> None:
    """An alias records no memory of its own (it may have been given with a memory, not written in it): of an
    entity that loses mentions, only the aliases a kept mention's text still says stay, so an alias given
    with a forgotten memory does not outlive it."""
    from memdeck.core.graph.extract import normalise_name

    for entity_id, left in out.mentions.items():
        node = graph.entities[entity_id]
        if not node.aliases:
            continue
        texts = " \n ".join(normalise_name(t) for t in _texts(store, graph.principal, left))
        said = [a for a in node.aliases if a and _says(texts, a)]
        if len(said) != len(node.aliases):
            out.aliases[entity_id] = said


def _texts(store: Engine, principal: str, ids: Sequence[str]) -> list[str]:
    out: list[str] = []
    for tier in store.tiers_present():
        for start in range(0, len(ids), 1000):
            where = F.all_of(F.eq("principal", principal), F.is_in("id", list(ids[start : start + 1000])))
            out.extend(t for t in store.scan(tier, ["text"], where)["text"].to_pylist() if t)
    return out


def _says(text: str, key: str) -> bool:
    """Whether a normalised alias occurs in normalised text as whole words."""
    at = text.find(key)
    while at >= 0:
        end = at + len(key)
        if (at == 0 or not text[at - 1].isalnum()) and (end == len(text) or not text[end].isalnum()):
            return True
        at = text.find(key, at + 1)
    return False


def apply_graph(store: Engine, principal: str, ids: Sequence[str], *, whole: bool = False) -> GraphCounts:
    """Apply the cascade as it stands now (the caller holds the exclusive lock); idempotent."""
    if whole:
        counts = {}
        for name in (ENTITIES, RELATIONS):
            if store.has_table(name):
                tbl = store.table(name)
                counts[name] = int(tbl.count_rows(F.eq("principal", principal)))
                tbl.delete(F.eq("principal", principal))
        return {"entities_deleted": counts.get(ENTITIES, 0), "relations_deleted": counts.get(RELATIONS, 0)}
    graph = load_graph(store, principal)
    cascade = cascade_of(graph, ids)
    _drop_unsaid_aliases(store, graph, cascade)
    stamp = now()
    for name, deletes, lists, column in (
        (ENTITIES, cascade.delete_entities, cascade.mentions, "mentions"),
        (RELATIONS, cascade.delete_relations, cascade.sources, "sources"),
    ):
        if not store.has_table(name) or not (deletes or lists):
            continue
        tbl = store.table(name)
        where_principal = F.eq("principal", principal)
        ids_gone = sorted(deletes)
        for start in range(0, len(ids_gone), 1000):
            tbl.delete(F.all_of(where_principal, F.is_in("id", ids_gone[start : start + 1000])))
        if lists:
            columns = [column, "aliases"] if name == ENTITIES else [column]
            schema = pa.schema(
                [
                    tbl.schema.field("id"),
                    *(tbl.schema.field(c) for c in columns),
                    tbl.schema.field("updated_at"),
                ]
            )
            aliases = graph.entities if name == ENTITIES else {}
            rows = [
                {"id": i, column: left, "updated_at": stamp}
                | ({"aliases": cascade.aliases.get(i, aliases[i].aliases)} if name == ENTITIES else {})
                for i, left in lists.items()
            ]
            tbl.merge_insert("id").when_matched_update_all().execute(
                pa.Table.from_pylist(rows, schema=schema)
            )
    return {
        "entities_deleted": len(cascade.delete_entities),
        "relations_deleted": len(cascade.delete_relations),
        "entities_updated": len(cascade.mentions),
        "relations_updated": len(cascade.sources),
    }
