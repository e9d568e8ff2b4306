"""The graph channel of recall: the query's entities, their neighbours, and the memories that mention them.

The query is matched against the principal's entity names and aliases (every run of one to four words,
normalised like a name, and the names the extractor finds in it). From those entities the traversal
follows relations to ``depth``. A memory's graph score is the best, over the reached entities it mentions,
of the entity's information content on an absolute scale, ``log(1 + N / mentions) / log(1 + N)`` (1 for
an entity only this memory mentions, about 0.17 for one in half of them), halved for each relation away
from the query. Absolute, not relative to the recall's best: a query that names only an entity every
other memory mentions (a conversation's speaker) lifts nothing much; the best, not the sum, so a memory
that names many common entities does not pile them up. Each principal's graph is loaded with the principal
filter in the query (see :mod:`.model`), so the traversal never reaches another principal's entities.
"""

from __future__ import annotations

import heapq
import re
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from memdeck.core.filters import Scope
from memdeck.core.graph.extract import extract, normalise_name
from memdeck.core.graph.memory.model import Graph, graph_principals, load_graph

if TYPE_CHECKING:
    from memdeck.core.storage.engine import Engine

MAX_NGRAM = 4
DECAY = 0.5  # a neighbour one relation away counts half as much as an entity the query names
_WORD = re.compile(r"[\w'’-]+")


@dataclass
class GraphHits:
    """What the graph channel found: the query's entities, and memory ids with scores in [0, 1]."""

    entities: list[str] = field(default_factory=list)  # ids of the entities the query names
    reached: int = 0  # entities reached, the query's included
    scores: dict[str, float] = field(default_factory=dict)  # every memory reached
    ranked: list[str] = field(default_factory=list)  # the best ``limit``, best first
    ms: float = 0.0  # how long the channel took


def query_entities(graph: Graph, query: str) -> list[str]:
    """Ids of the principal's entities that the query names, in the order it names them."""
    found: dict[str, None] = {}
    for entity in extract(query).entities:
        node = graph.find(entity.name)
        if node is not None:
            found.setdefault(node.id)
    words = [normalise_name(w) for w in _WORD.findall(query)]
    words = [w for w in words if w]
    for size in range(MAX_NGRAM, 0, -1):
        for start in range(len(words) - size + 1):
            hit = graph.by_key.get(" ".join(words[start : start + size]))
            if hit is not None:
                found.setdefault(hit)
    return list(found)


def graph_channel(
    store: Engine, scope: Scope, query: str, qvec: np.ndarray | None, limit: int, depth: int = 1
) -> GraphHits:
    """Memory ids the graph reaches from the query's entities, best first (at most ``limit``), with scores.

    ``qvec`` is accepted for a near-match of names the query spells differently; names match by key now.
    """
    started = time.perf_counter()
    principals = graph_principals(store) if scope.is_everyone else list(scope.principals or ())
    hits = GraphHits()
    raw: dict[str, float] = {}
    for principal in principals:
        graph = load_graph(store, principal)
        if not graph.entities:
            continue
        start = query_entities(graph, query)
        if not start:
            continue
        hits.entities.extend(start)
        reached = graph.reach(start, max(0, int(depth)))
        hits.reached += len(reached)
        # Heaviest entity first, so a memory keeps the first weight it is given, the largest (a memory is
        # one principal's: no other principal's graph mentions it).
        weighted = sorted(
            ((graph.information(graph.entities[e]) * DECAY**d, e) for e, d in reached.items()),
            key=lambda we: -we[0],
        )
        for weight, entity_id in weighted:
            if weight <= 0.0:
                continue
            for memory_id in graph.entities[entity_id].mentions:
                raw.setdefault(memory_id, weight)
    if raw:
        hits.scores = raw
        hits.ranked = heapq.nsmallest(
            limit, raw, key=lambda m: (-raw[m], m)
        )  # sorted(...)[:limit], without sorting all
    hits.ms = (time.perf_counter() - started) * 1000
    return hits
