"""The graph of one principal in memory: entities, relations, adjacency; loaded per table version.

Every read of the graph tables is filtered by principal in the LanceDB query itself (the filter helpers of
:mod:`memdeck.core.filters`), so a traversal can only ever reach the rows of the principal it was loaded
for. A loaded graph is cached per store and principal and reused while both tables keep their version.
Loading drains the store's indexing queue first (:mod:`.indexer`): what was written is in the graph read.
"""

from __future__ import annotations

import math
import threading
import weakref
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from memdeck.core import filters as F
from memdeck.core.graph.extract import normalise_name
from memdeck.core.graph.memory.queue import drain
from memdeck.core.graph.types import EntityBrief, EntityJSON, RelationJSON
from memdeck.core.records import ENTITIES, RELATIONS, iso
from memdeck.core.storage.tables import HeldDataset, latest_dataset

if TYPE_CHECKING:
    from memdeck.core.storage.engine import Engine


@dataclass
class EntityNode:
    id: str
    principal: str
    name: str
    key: str
    kind: str
    aliases: list[str] = field(default_factory=list)
    mentions: list[str] = field(default_factory=list)
    vector: np.ndarray | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None

    def brief(self) -> EntityBrief:
        return {"id": self.id, "name": self.name, "kind": self.kind, "mentions": len(self.mentions)}

    def to_json(self) -> EntityJSON:
        return {
            "id": self.id,
            "principal": self.principal,
            "name": self.name,
            "key": self.key,
            "kind": self.kind,
            "aliases": list(self.aliases),
            "mentions": list(self.mentions),
            "created_at": iso(self.created_at) if self.created_at else None,
            "updated_at": iso(self.updated_at) if self.updated_at else None,
        }


@dataclass
class Edge:
    id: str
    principal: str
    subject_id: str
    predicate: str
    object_id: str
    negated: bool = False
    valid_from: str | None = None
    valid_until: str | None = None
    sources: list[str] = field(default_factory=list)
    created_at: datetime | None = None
    updated_at: datetime | None = None

    def other(self, entity_id: str) -> str:
        return self.object_id if entity_id == self.subject_id else self.subject_id

    def to_json(self, graph: Graph | None = None) -> RelationJSON:
        out: RelationJSON = {
            "id": self.id,
            "subject_id": self.subject_id,
            "predicate": self.predicate,
            "object_id": self.object_id,
            "negated": self.negated,
            "valid_from": self.valid_from,
            "valid_until": self.valid_until,
            "sources": list(self.sources),
        }
        if graph is not None:
            out["subject"] = graph.name_of(self.subject_id)
            out["object"] = graph.name_of(self.object_id)
        return out


CO_MENTION = "m:"  # an edge id that is a memory naming both entities, not a relation
MAX_LINKED_PER_MEMORY = 12


@dataclass
class Graph:
    principal: str
    entities: dict[str, EntityNode] = field(default_factory=dict)
    relations: dict[str, Edge] = field(default_factory=dict)
    by_key: dict[str, str] = field(default_factory=dict)
    adjacency: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # entity -> [(edge, other)]
    _mentioned: int | None = None
    _links: dict[str, list[tuple[str, str]]] | None = None  # entity -> [(CO_MENTION + memory, other)]

    def index(self) -> Graph:
        self._links = None
        self.by_key = {}
        for node in self.entities.values():  # a name first, then aliases: an alias never hides a name
            self.by_key.setdefault(node.key, node.id)
        for node in self.entities.values():
            for alias in node.aliases:
                self.by_key.setdefault(alias, node.id)
        self.adjacency = {}
        for edge in self.relations.values():
            if edge.subject_id in self.entities and edge.object_id in self.entities:
                self.adjacency.setdefault(edge.subject_id, []).append((edge.id, edge.object_id))
                self.adjacency.setdefault(edge.object_id, []).append((edge.id, edge.subject_id))
        return self

    def find(self, name: str) -> EntityNode | None:
        """The entity written as ``name`` (case-insensitively, or as one of its aliases), or None."""
        found = self.by_key.get(normalise_name(name))
        return self.entities.get(found) if found else None

    def name_of(self, entity_id: str) -> str | None:
        node = self.entities.get(entity_id)
        return node.name if node else None

    @property
    def mentioned(self) -> int:
        """How many distinct memories mention some entity (the ``N`` of the channel's idf)."""
        if self._mentioned is None:
            self._mentioned = len({m for node in self.entities.values() for m in node.mentions})
        return self._mentioned

    def information(self, node: EntityNode) -> float:
        """How much naming this entity says, in [0, 1]: log(1 + N / mentions) / log(1 + N)."""
        n = max(self.mentioned, 1)
        return math.log1p(n / max(len(node.mentions), 1)) / math.log1p(n)

    @property
    def links(self) -> dict[str, list[tuple[str, str]]]:
        """Entities mentioned together in one memory, as edges ``(CO_MENTION + memory id, other entity)``:
        what connects two entities when no verb relation between them was found. A memory naming more than
        :data:`MAX_LINKED_PER_MEMORY` entities links none (a list of names says little about each pair)."""
        if self._links is None:
            by_memory: dict[str, list[str]] = {}
            for node in self.entities.values():
                for memory in node.mentions:
                    by_memory.setdefault(memory, []).append(node.id)
            links: dict[str, list[tuple[str, str]]] = {}
            for memory, ids in sorted(by_memory.items()):
                if not 2 <= len(ids) <= MAX_LINKED_PER_MEMORY:
                    continue
                for a in ids:
                    for b in ids:
                        if a != b:
                            links.setdefault(a, []).append((CO_MENTION + memory, b))
            self._links = links
        return self._links

    def neighbours(self, entity_id: str, co_mentions: bool = False) -> list[tuple[str, str]]:
        """(edge, other entity) of an entity: its relations, then (with ``co_mentions``) the entities it is
        mentioned with."""
        out = list(self.adjacency.get(entity_id, ()))
        if co_mentions:
            out += self.links.get(entity_id, [])
        return out

    def step_json(self, edge: str, a: str, b: str) -> RelationJSON:
        """What joins entity ``a`` to ``b`` along ``edge``: the relation, or the memory that names both."""
        if edge.startswith(CO_MENTION):
            memory = edge[len(CO_MENTION) :]
            return {
                "id": None,
                "kind": "co-mention",
                "subject_id": a,
                "subject": self.name_of(a),
                "predicate": "mentioned with",
                "object_id": b,
                "object": self.name_of(b),
                "negated": False,
                "valid_from": None,
                "valid_until": None,
                "sources": [memory],
            }
        return {"kind": "relation", **self.relations[edge].to_json(self)}

    def reach(self, start: Iterable[str], depth: int, co_mentions: bool = False) -> dict[str, int]:
        """Every entity within ``depth`` relations (and, with ``co_mentions``, shared memories) of the start
        entities, with its distance."""
        seen = {e: 0 for e in start if e in self.entities}
        queue = deque(seen)
        while queue:
            current = queue.popleft()
            if seen[current] >= depth:
                continue
            for _edge, other in self.neighbours(current, co_mentions):
                if other not in seen:
                    seen[other] = seen[current] + 1
                    queue.append(other)
        return seen

    def shortest_path(
        self, a: str, b: str, max_depth: int = 6, co_mentions: bool = False
    ) -> list[tuple[str, str | None]] | None:
        """[(entity, edge that led to it)], from ``a`` to ``b``; None when no path within ``max_depth``. With
        ``co_mentions``, two entities one memory names count as joined (relations are tried first)."""
        if a == b:
            return [(a, None)]
        back: dict[str, tuple[str, str] | None] = {a: None}
        frontier = [a]
        for _ in range(max_depth):
            nxt = []
            for current in frontier:
                relations = sorted(self.adjacency.get(current, ()))
                shared = sorted(self.links.get(current, ())) if co_mentions else []
                for edge, other in relations + shared:
                    if other in back:
                        continue
                    back[other] = (current, edge)
                    if other == b:
                        steps: list[tuple[str, str | None]] = []
                        node: str = b
                        while True:
                            prev = back[node]
                            if prev is None:
                                steps.append((node, None))
                                break
                            steps.append((node, prev[1]))
                            node = prev[0]
                        steps.reverse()
                        return steps
                    nxt.append(other)
            frontier = nxt
            if not frontier:
                break
        return None


_CACHE: weakref.WeakKeyDictionary[Any, dict[str, tuple[tuple[int, int], Graph]]] = weakref.WeakKeyDictionary()
_CACHE_LOCK = threading.Lock()


# Pylance handles on each store's graph tables: their version is a directory listing, where asking the
# LanceDB table hops to its event loop (every recall asks for both tables' versions).
_DATASETS: weakref.WeakKeyDictionary[Any, dict[str, HeldDataset]] = weakref.WeakKeyDictionary()


def _version(store: Engine, name: str) -> int:
    with _CACHE_LOCK:
        held = _DATASETS.setdefault(store, {})
    ds = latest_dataset(store, name, held)
    return int(store.table(name).version) if ds is None else int(ds.version)


def _versions(store: Engine) -> tuple[int, int]:
    out = []
    for name in (ENTITIES, RELATIONS):
        out.append(_version(store, name) if store.has_table(name) else -1)
    return out[0], out[1]


def load_graph(store: Engine, principal: str) -> Graph:
    """The graph of ``principal``: only rows whose ``principal`` column is ``principal`` are read. Memories
    still queued for indexing are indexed first (:func:`~.queue.drain`)."""
    drain(store)
    versions = _versions(store)
    with _CACHE_LOCK:
        cached = _CACHE.setdefault(store, {}).get(principal)
    if cached is not None and cached[0] == versions:
        return cached[1]
    graph = Graph(principal)
    where = F.eq("principal", principal)
    if versions[0] >= 0:
        rows = store.scan(
            ENTITIES,
            [
                "id",
                "principal",
                "name",
                "key",
                "kind",
                "aliases",
                "mentions",
                "vector",
                "created_at",
                "updated_at",
            ],
            where,
        )
        vectors = rows.column("vector").combine_chunks()
        flat = (
            vectors.flatten().to_numpy(zero_copy_only=False).reshape(len(vectors), -1)
            if len(vectors)
            else None
        )
        for i, row in enumerate(rows.drop_columns(["vector"]).to_pylist()):
            vec = flat[i] if flat is not None else None
            graph.entities[row["id"]] = EntityNode(
                row["id"],
                row["principal"],
                row["name"] or "",
                row["key"] or "",
                row["kind"] or "other",
                list(row["aliases"] or []),
                list(row["mentions"] or []),
                vec if vec is not None and np.any(vec) else None,
                row["created_at"],
                row["updated_at"],
            )
    if versions[1] >= 0:
        for row in store.scan(
            RELATIONS,
            [
                "id",
                "principal",
                "subject_id",
                "predicate",
                "object_id",
                "negated",
                "valid_from",
                "valid_until",
                "sources",
                "created_at",
                "updated_at",
            ],
            where,
        ).to_pylist():
            graph.relations[row["id"]] = Edge(
                row["id"],
                row["principal"],
                row["subject_id"],
                row["predicate"] or "",
                row["object_id"],
                bool(row["negated"]),
                row["valid_from"],
                row["valid_until"],
                list(row["sources"] or []),
                row["created_at"],
                row["updated_at"],
            )
    graph.index()
    with _CACHE_LOCK:
        _CACHE.setdefault(store, {})[principal] = (versions, graph)
    return graph


def graph_principals(store: Engine) -> list[str]:
    """The principals that have at least one entity."""
    drain(store)
    if not store.has_table(ENTITIES):
        return []
    import pyarrow.compute as pc

    return sorted(pc.unique(store.scan(ENTITIES, ["principal"])["principal"]).to_pylist())
