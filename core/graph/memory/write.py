"""Writing the graph: entities and relations extracted from memories after their write commits (queued by
:mod:`.indexer`, indexed in the background), or given explicitly with a write.

Resolution, always inside one principal's graph: a name whose key (case-folded, whitespace collapsed, no
possessive or leading article) is an entity's key or alias is that entity; otherwise a name whose embedding
is within the store's model's ``name_near_match`` cosine (``NEAR_MATCH`` for MiniLM) of an entity of a compatible kind, and whose spelling is close too, becomes
an alias of it; otherwise it is a new entity. Each batch of memories costs one extraction pass, one
embedding batch for the names not seen before, and one commit per table.
"""

from __future__ import annotations

import collections
import dataclasses
import difflib
import uuid
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from memdeck.core.config import model_thresholds
from memdeck.core.errors import MemdeckError
from memdeck.core.graph.extract import NameContext, Relation, extract, name_contexts, normalise_name
from memdeck.core.graph.memory.kinds import refine_all
from memdeck.core.graph.memory.model import Edge, EntityNode, Graph, load_graph
from memdeck.core.graph.memory.queue import graph_work
from memdeck.core.graph.memory.tables import KINDS, entity_schema, relation_schema
from memdeck.core.records import ENTITIES, RELATIONS, Memory, MemoryInput, WriteResult, check_principal, now
from memdeck.core.storage.objectstore import write_errors

if TYPE_CHECKING:
    from memdeck.core.storage.engine import Engine

# A memory naming more entities than this is a dump, not a note (a log, a pasted file): the graph takes its
# first ones. Resolving names compares each new name with every other, so this bounds a batch's work.
MAX_ENTITIES_PER_MEMORY = 200
NEAR_MATCH = (
    0.9  # all-MiniLM-L6-v2's cosine between two names' embeddings for one to be an alias of the other
)
NEAR_SPELLING = 0.75  # and the ratio of their spellings (difflib), so "Jon" never becomes "John"'s alias
MAX_NAME = 200


@dataclass(frozen=True)
class EntitySpec:
    """An entity named by a caller: its name, kind, and other names it goes by."""

    name: str
    kind: str = "other"
    aliases: tuple[str, ...] = ()


# A relation named by a caller has the extractor's shape: one type for both.
RelationSpec = Relation


def check_name(name: Any, what: str = "entity name") -> str:
    if not isinstance(name, str) or not name.strip() or "\x00" in name:
        raise MemdeckError(f"{what} must be a non-empty string")
    if len(name) > MAX_NAME:
        raise MemdeckError(f"{what} is {len(name)} characters; the limit is {MAX_NAME}")
    if not normalise_name(name):
        raise MemdeckError(f"{what} {name!r} has no letters or digits left once normalised")
    return " ".join(name.split())


def check_kind(kind: Any) -> str:
    if kind is None:
        return "other"
    if kind not in KINDS:
        raise MemdeckError(f"unknown entity kind {kind!r}; use one of: {', '.join(KINDS)}")
    return str(kind)


def _check_when(value: Any, what: str) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str) or len(value) > 64 or "\x00" in value:
        raise MemdeckError(f"{what} must be a short date string such as 2019 or 2023-05-01")
    return value.strip()


def entity_specs(raw: Any) -> list[EntitySpec]:
    """Entities as an agent passes them: names, or objects with name, kind and aliases."""
    if raw is None:
        return []
    if not isinstance(raw, (list, tuple)):
        raise MemdeckError("entities must be a list of names or of {name, kind, aliases} objects")
    out = []
    for item in raw:
        if isinstance(item, str):
            out.append(EntitySpec(check_name(item)))
        elif isinstance(item, dict):
            aliases = item.get("aliases") or []
            if not isinstance(aliases, (list, tuple)):
                raise MemdeckError("an entity's aliases must be a list of names")
            out.append(
                EntitySpec(
                    check_name(item.get("name")),
                    check_kind(item.get("kind")),
                    tuple(check_name(a, "alias") for a in aliases),
                )
            )
        else:
            raise MemdeckError("each entity must be a name or a {name, kind, aliases} object")
    return out


def relation_specs(raw: Any) -> list[RelationSpec]:
    """Relations as an agent passes them: {subject, predicate, object[, negated, valid_from, valid_until]}."""
    if raw is None:
        return []
    if not isinstance(raw, (list, tuple)):
        raise MemdeckError("relations must be a list of {subject, predicate, object} objects")
    out = []
    for item in raw:
        if not isinstance(item, dict):
            raise MemdeckError("each relation must be a {subject, predicate, object} object")
        negated = item.get("negated", False)
        if not isinstance(negated, bool):
            raise MemdeckError("a relation's negated must be true or false")
        out.append(
            RelationSpec(
                check_name(item.get("subject"), "relation subject"),
                check_name(item.get("predicate"), "predicate"),
                check_name(item.get("object"), "relation object"),
                negated,
                _check_when(item.get("valid_from"), "valid_from"),
                _check_when(item.get("valid_until"), "valid_until"),
            )
        )
    return out


class GraphBatch:
    """Changes to one principal's graph, committed together (one merge per table)."""

    def __init__(self, store: Engine, principal: str) -> None:
        self.store = store
        self.graph: Graph = load_graph(store, principal)
        self.keys = dict(self.graph.by_key)  # the cached graph is shared: names added here stay here
        self.edge_keys = {
            _edge_key(e.subject_id, e.predicate, e.object_id, e.negated, e.valid_from, e.valid_until): e.id
            for e in self.graph.relations.values()
        }
        self._matrix: tuple[list[EntityNode], np.ndarray] | None = None
        self.principal = principal
        self.changed: dict[str, EntityNode] = {}
        self.edges: dict[str, Edge] = {}
        self.stamp = now()
        # The store's model decides how close two names' embeddings must be ([thresholds] overrides it).
        self.near_match = model_thresholds(
            store.settings, store.embedding_model or store.embedder.name
        ).name_near_match

    # -- entities --

    def resolve(
        self,
        names: Sequence[tuple[str, str]],
        guessed: Collection[str] = (),
        contexts: Mapping[str, NameContext] | None = None,
    ) -> dict[str, str]:
        """Entity ids for (name, kind) pairs, creating entities for new names; keyed by normalised name.

        ``guessed``: normalised names whose kind is the extractor's default; a new one's kind is then read
        from its name's embedding and, in ``contexts`` (by normalised name), the words around it
        (:mod:`memdeck.core.graph.memory.kinds`), which may leave it "other" (a kind not known). A known
        entity that is "other" takes the kind a name not in ``guessed`` is given now."""
        out: dict[str, str] = {}
        new: list[tuple[str, str, str]] = []
        for name, kind in names:
            key = normalise_name(name)
            if not key or key in out:
                continue
            known = self._by_key(key)
            if known is not None:
                out[key] = known
                if key not in guessed:
                    self.classify(known, kind)  # a kind stated now replaces "other" (a kind not known)
            else:
                new.append((key, name, kind))
                out[key] = ""
        if new:
            vectors, real = self.store.embed([name for _key, name, _kind in new])
            if real and guessed and self.store.embedder.semantic:
                around = contexts or {}
                refined = refine_all(
                    [kind if key in guessed else "" for key, _name, kind in new],
                    vectors,
                    self.store.embedding_model,
                    lambda texts: self.store.embed(texts)[0],
                    contexts=[around.get(key) if key in guessed else None for key, _name, _kind in new],
                )
                new = [(key, name, refined[i] or kind) for i, (key, name, kind) in enumerate(new)]
            for (key, name, kind), vec in zip(new, vectors, strict=True):
                near = self._near(key, kind, vec) if real else None
                if near is not None:
                    node = self._touch(near)
                    node.aliases = [*node.aliases, key]
                    self.keys.setdefault(key, node.id)
                    out[key] = node.id
                    continue
                node = EntityNode(
                    f"ent-{uuid.uuid4().hex[:20]}",
                    self.principal,
                    name,
                    key,
                    kind,
                    vector=np.asarray(vec, dtype=np.float32) if real else None,
                    created_at=self.stamp,
                    updated_at=self.stamp,
                )
                self.changed[node.id] = node
                self.keys[key] = node.id
                out[key] = node.id
        return out

    def _by_key(self, key: str) -> str | None:
        return self.keys.get(key)

    def _near(self, key: str, kind: str, vec: np.ndarray) -> str | None:
        if self._matrix is None:  # the principal's entities as one matrix, once per batch
            known = [n for n in self.graph.entities.values() if n.vector is not None]
            self._matrix = (
                known,
                np.stack([n.vector for n in known if n.vector is not None])
                if known
                else np.zeros((0, len(vec)), dtype=np.float32),
            )
        known, matrix = self._matrix
        fresh = [n for n in self.changed.values() if n.vector is not None and n.id not in self.graph.entities]
        nodes = [*known, *fresh]
        if not nodes:
            return None
        rows = [matrix, *(n.vector[None, :] for n in fresh if n.vector is not None)]
        sims = np.concatenate(rows) @ np.asarray(vec, dtype=np.float32)
        top = np.argpartition(-sims, 4)[:5] if sims.shape[0] > 5 else np.arange(sims.shape[0])
        for i in top[np.argsort(-sims[top])]:
            node = nodes[int(i)]
            if sims[i] < self.near_match:
                break
            if node.kind != kind and "other" not in (node.kind, kind):
                continue
            if difflib.SequenceMatcher(None, key, node.key).ratio() >= NEAR_SPELLING or (
                key.split()[0] == node.key.split()[0]
            ):
                return node.id
        return None

    def _touch(self, entity_id: str) -> EntityNode:
        node = self.changed.get(entity_id)
        if node is None:
            base = self.graph.entities[entity_id]
            node = EntityNode(
                base.id,
                base.principal,
                base.name,
                base.key,
                base.kind,
                list(base.aliases),
                list(base.mentions),
                base.vector,
                base.created_at,
                self.stamp,
            )
            self.changed[entity_id] = node
        return node

    def mention(self, entity_id: str, memory_ids: Iterable[str]) -> None:
        node = self._touch(entity_id)
        have = set(node.mentions)
        node.mentions = [*node.mentions, *(m for m in dict.fromkeys(memory_ids) if m not in have)]

    def classify(self, entity_id: str, kind: str) -> None:
        """Give an entity a kind a caller named, when it only had "other" (an extracted guess)."""
        current = self.changed.get(entity_id) or self.graph.entities.get(entity_id)
        if current is not None and current.kind == "other" and kind != "other":
            self._touch(entity_id).kind = kind

    def alias(self, entity_id: str, names: Iterable[str]) -> None:
        node = self._touch(entity_id)
        for name in names:
            key = normalise_name(name)
            if key and key != node.key and key not in node.aliases:
                node.aliases = [*node.aliases, key]
                self.keys.setdefault(key, node.id)

    # -- relations --

    def relate(
        self,
        subject_id: str,
        predicate: str,
        object_id: str,
        *,
        negated: bool = False,
        valid_from: str | None = None,
        valid_until: str | None = None,
        sources: Iterable[str] = (),
    ) -> str:
        pred = " ".join(predicate.split())
        key = _edge_key(subject_id, pred, object_id, negated, valid_from, valid_until)
        known = self.edge_keys.get(key)
        if known is not None:
            edge = self.edges.get(known) or self.graph.relations[known]
        else:
            edge = Edge(
                f"rel-{uuid.uuid4().hex[:20]}",
                self.principal,
                subject_id,
                pred,
                object_id,
                negated,
                valid_from,
                valid_until,
                [],
                self.stamp,
                self.stamp,
            )
            self.edge_keys[key] = edge.id
        if edge.id not in self.edges:
            edge = Edge(
                edge.id,
                edge.principal,
                edge.subject_id,
                edge.predicate,
                edge.object_id,
                edge.negated,
                edge.valid_from,
                edge.valid_until,
                list(edge.sources),
                edge.created_at,
                self.stamp,
            )
            self.edges[edge.id] = edge
        have = set(edge.sources)
        edge.sources = [*edge.sources, *(s for s in dict.fromkeys(sources) if s not in have)]
        return edge.id

    # -- commit --

    def commit(self) -> None:
        if not self.changed and not self.edges:
            return
        store = self.store
        with store.lock.shared(), write_errors():
            if self.changed:
                tbl = store.table(ENTITIES)
                zero = [0.0] * store.dim
                rows = [
                    {
                        "id": n.id,
                        "principal": n.principal,
                        "name": n.name,
                        "key": n.key,
                        "kind": n.kind,
                        "aliases": n.aliases,
                        "mentions": n.mentions,
                        "vector": n.vector.tolist() if n.vector is not None else zero,
                        "created_at": n.created_at or self.stamp,
                        "updated_at": n.updated_at or self.stamp,
                    }
                    for n in self.changed.values()
                ]
                data = pa.Table.from_pylist(rows, schema=entity_schema(store.dim))
                tbl.merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(data)
            if self.edges:
                tbl = store.table(RELATIONS)
                rows = [
                    {
                        "id": e.id,
                        "principal": e.principal,
                        "subject_id": e.subject_id,
                        "predicate": e.predicate,
                        "object_id": e.object_id,
                        "negated": e.negated,
                        "valid_from": e.valid_from,
                        "valid_until": e.valid_until,
                        "sources": e.sources,
                        "created_at": e.created_at or self.stamp,
                        "updated_at": self.stamp,
                    }
                    for e in self.edges.values()
                ]
                data = pa.Table.from_pylist(rows, schema=relation_schema())
                tbl.merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(data)
        for name in (ENTITIES, RELATIONS):
            store.maybe_compact(name)


def _edge_key(
    subject_id: str,
    predicate: str,
    object_id: str,
    negated: bool,
    valid_from: str | None,
    valid_until: str | None,
) -> tuple[Any, ...]:
    return (subject_id, predicate.casefold(), object_id, bool(negated), valid_from, valid_until)


def _stated_first(
    names: list[tuple[str, str]], stated: Mapping[str, collections.Counter[str]]
) -> list[tuple[str, str]]:
    """``names`` with each name's kind the one the batch's text states most often for it (the first stated
    on a tie), when any mention states one."""
    out = []
    for name, kind in names:
        votes = stated.get(normalise_name(name))
        out.append((name, votes.most_common(1)[0][0] if votes else kind))
    return out


def _extracted(batch: GraphBatch, memories: list[Memory]) -> None:
    found: list[tuple[Memory, list[tuple[str, str]], tuple[Relation, ...]]] = []
    names: list[tuple[str, str]] = []
    guessed: set[str] = set()
    contexts: dict[str, NameContext] = {}  # a guessed name's first mention in the batch
    # the kinds the batch's text states for a name: one stated anywhere in the batch beats a guess elsewhere
    # ("Investigated Atlas ..." / "Credentials for the Atlas service ...")
    stated: dict[str, collections.Counter[str]] = {}
    groups = 0  # joined names of one memory share a group number, unique across the batch
    for memory in memories:
        result = extract(memory.text or "")
        entities = result.entities[:MAX_ENTITIES_PER_MEMORY]
        pairs = [(e.name, e.kind) for e in entities]
        guessed.update(normalise_name(e.name) for e in entities if e.guessed)
        for e in entities:
            if not e.guessed:
                stated.setdefault(normalise_name(e.name), collections.Counter())[e.kind] += 1
        for entity, context in zip(entities, name_contexts(memory.text or "", entities), strict=True):
            if context is not None:
                if context.group is not None:
                    context = dataclasses.replace(context, group=groups + context.group)
                contexts.setdefault(normalise_name(entity.name), context)
        groups += len(entities)
        kept = {e.name for e in entities}
        relations = tuple(r for r in result.relations if r.subject in kept and r.object in kept)
        found.append((memory, pairs, relations))
        names.extend(pairs)
        names.extend((n, "other") for r in relations for n in (r.subject, r.object))
    ids = batch.resolve(_stated_first(names, stated), guessed - stated.keys(), contexts)
    for memory, pairs, relations in found:
        for key in dict.fromkeys(normalise_name(n) for n, _k in pairs):
            if ids.get(key):
                batch.mention(ids[key], [memory.id])
        for rel in relations:
            s, o = ids.get(normalise_name(rel.subject)), ids.get(normalise_name(rel.object))
            if s and o and s != o:
                batch.relate(
                    s,
                    rel.predicate,
                    o,
                    negated=rel.negated,
                    valid_from=rel.valid_from,
                    valid_until=rel.valid_until,
                    sources=[memory.id],
                )


def index_memories(store: Engine, memories: Sequence[Memory]) -> None:
    """Extract and resolve the entities and relations of memories, per principal, now (a write queues its
    memories with the store's :mod:`.indexer`, which calls this in the background)."""
    by_principal: dict[str, list[Memory]] = {}
    for memory in memories:
        if memory is not None and memory.text:
            by_principal.setdefault(memory.principal, []).append(memory)
    if not by_principal:
        return
    with graph_work(store):
        for principal, group in by_principal.items():
            batch = GraphBatch(store, principal)
            _extracted(batch, group)
            batch.commit()


def remember_many(store: Engine, items: Iterable[MemoryInput | dict[str, Any]]) -> list[WriteResult]:
    """Write many memories with one embedding batch and one commit per tier (bad input writes nothing), then
    the entities and relations an item names (``entities``, ``relations`` in its extras) to the graph."""
    from memdeck.core.storage.writes import input_from_dict

    inputs = []
    explicit = []
    for raw in items:
        item = raw if isinstance(raw, MemoryInput) else input_from_dict(raw)
        extra = dict(item.extra)
        ents, rels = (
            entity_specs(extra.pop("entities", None)),
            relation_specs(extra.pop("relations", None)),
        )
        inputs.append(dataclasses.replace(item, extra=extra))
        if rels:
            check_endpoints(store, item.principal, ents, rels)
        explicit.append((ents, rels))
    results = store.writer.write_many(inputs)
    if any(e or r for e, r in explicit) and len(results) == len(inputs):
        for result, (ents, rels) in zip(results, explicit, strict=True):
            if result.memory is not None and result.action != "skipped" and (ents or rels):
                add_explicit(store, result.memory, ents, rels)
    return results


def add_explicit(
    store: Engine, memory: Memory, entities: Sequence[EntitySpec], relations: Sequence[RelationSpec]
) -> None:
    """Entities and relations a caller named for one memory it wrote (provenance: that memory), after what
    is queued for indexing (its text's own entities included)."""
    with graph_work(store):
        _add_explicit(store, memory, entities, relations)


def _add_explicit(
    store: Engine, memory: Memory, entities: Sequence[EntitySpec], relations: Sequence[RelationSpec]
) -> None:
    batch = GraphBatch(store, memory.principal)
    red = store.redact
    specs = [
        EntitySpec(red(e.name, memory.principal), e.kind, tuple(red(a, memory.principal) for a in e.aliases))
        for e in entities
    ]
    ids = batch.resolve([(e.name, e.kind) for e in specs])
    for spec in specs:
        key = normalise_name(spec.name)
        batch.mention(ids[key], [memory.id])
        batch.alias(ids[key], spec.aliases)
        batch.classify(ids[key], spec.kind)
    for rel in relations:
        s, o = (_endpoint(batch, red(n, memory.principal)) for n in (rel.subject, rel.object))
        batch.relate(
            s,
            red(rel.predicate, memory.principal),
            o,
            negated=rel.negated,
            valid_from=rel.valid_from,
            valid_until=rel.valid_until,
            sources=[memory.id],
        )
    batch.commit()


def _endpoint(batch: GraphBatch, name: str) -> str:
    found = batch._by_key(normalise_name(name))
    if found is None:
        raise MemdeckError(
            f"no entity {name!r} for principal {batch.principal!r}: add it first (or list it in entities)"
        )
    return found


def check_endpoints(
    store: Engine, principal: str, entities: Sequence[EntitySpec], relations: Sequence[RelationSpec]
) -> None:
    """Every relation's subject and object is an entity named alongside it or one the principal has."""
    graph = load_graph(store, check_principal(principal))
    named = {normalise_name(n) for e in entities for n in (e.name, *e.aliases)}
    for rel in relations:
        for end in (rel.subject, rel.object):
            if normalise_name(end) not in named and graph.find(end) is None:
                raise MemdeckError(
                    f"relation endpoint {end!r} is not an entity of {principal!r}: "
                    "name it in entities or add it first"
                )


def add_entity(
    store: Engine,
    principal: str,
    name: str,
    *,
    kind: str = "other",
    aliases: Sequence[str] = (),
    mentions: Sequence[str] = (),
) -> EntityNode:
    principal = check_principal(principal)
    name = store.redact(check_name(name), principal)
    kind = check_kind(kind)
    with graph_work(store):
        batch = GraphBatch(store, principal)
        _check_memories(store, principal, mentions)
        entity_id = batch.resolve([(name, kind)])[normalise_name(name)]
        batch.classify(entity_id, kind)
        batch.alias(entity_id, [store.redact(check_name(a, "alias"), principal) for a in aliases])
        batch.mention(entity_id, mentions)
        node = batch.changed.get(entity_id) or batch.graph.entities[entity_id]
        batch.commit()
    return node


def add_relation(
    store: Engine,
    principal: str,
    subject: str,
    predicate: str,
    obj: str,
    *,
    negated: bool = False,
    valid_from: str | None = None,
    valid_until: str | None = None,
    sources: Sequence[str] = (),
) -> Edge:
    """A relation between two entities the principal has (both endpoints must exist)."""
    principal = check_principal(principal)
    with graph_work(store):
        batch = GraphBatch(store, principal)
        s = _endpoint(batch, store.redact(check_name(subject, "relation subject"), principal))
        o = _endpoint(batch, store.redact(check_name(obj, "relation object"), principal))
        if s == o:
            raise MemdeckError("a relation needs two different entities")
        _check_memories(store, principal, sources)
        edge_id = batch.relate(
            s,
            store.redact(check_name(predicate, "predicate"), principal),
            o,
            negated=bool(negated),
            valid_from=_check_when(valid_from, "valid_from"),
            valid_until=_check_when(valid_until, "valid_until"),
            sources=sources,
        )
        edge = batch.edges[edge_id]
        batch.commit()
    return edge


def _check_memories(store: Engine, principal: str, ids: Sequence[str]) -> None:
    from memdeck.core.filters import Scope

    for mem_id in ids:
        store.get(mem_id, Scope.of(principal))  # NotFound for another principal's memory or none
