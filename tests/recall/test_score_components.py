"""Every score component counts under the default profile: importance, trust (from feedback), evidence
(reinforcement with diminishing returns), and a relevance floor that no weight can get past. Real model."""

from __future__ import annotations

import itertools

import pytest

from memdeck.core.config import DEFAULT_WEIGHTS, Profile, parse_weights
from memdeck.core.errors import MemdeckError
from memdeck.core.filters import Scope
from memdeck.core.recall.explain import explain
from memdeck.core.recall.feedback import feedback
from memdeck.core.recall.scoring import reinforced
from memdeck.core.store import Store

FACTS = [
    "The deploy pipeline runs the integration tests before every release",
    "Alice prefers window seats on long flights",
    "The billing service retries failed card payments three times",
    "Our staging database is refreshed from production every Sunday night",
    "The office coffee machine is descaled on the first Monday of the month",
]


def _add(store: Store, text: str, **extra: object) -> str:
    r = store.remember(text, tier="semantic", principal="alice", force=True, **extra)
    assert r.memory is not None
    return r.memory.id


def test_defaults_weigh_importance_and_trust() -> None:
    assert DEFAULT_WEIGHTS["importance"] > 0 and DEFAULT_WEIGHTS["trust"] > 0
    assert Profile().min_relevance > 0


def test_alike_but_for_importance_ranks_by_importance(model_store: Store) -> None:
    low = _add(model_store, "The release checklist lives in the ops wiki", importance=0.2, agent="a")
    high = _add(model_store, "The release checklist is kept in the ops wiki", importance=0.9, agent="a")
    for text in FACTS:
        _add(model_store, text)
    items = model_store.recall("where is the release checklist", principal="alice", k=5).items
    ids = [i.memory.id for i in items]
    assert ids.index(high) < ids.index(low)


def test_trust_feedback_changes_the_agents_scores(model_store: Store) -> None:
    mem = _add(model_store, "The release checklist lives in the ops wiki", agent="scribe")
    before = model_store.recall("release checklist", principal="alice", k=3).items[0]
    assert before.memory.id == mem
    for _ in range(3):
        feedback(model_store.engine, mem, "reviewer", useful=True)
    after = model_store.recall("release checklist", principal="alice", k=3).items[0]
    assert after.components["trust"] > before.components["trust"]
    assert after.score > before.score


def test_evidence_reinforces_with_diminishing_returns(model_store: Store) -> None:
    assert reinforced(0.5, 1) == pytest.approx(0.5)
    steps = [float(reinforced(0.5, n)) for n in range(1, 8)]
    gains = [b - a for a, b in itertools.pairwise(steps)]
    assert all(g > 0 for g in gains) and all(b < a for a, b in itertools.pairwise(gains))
    assert steps[-1] < 1.0
    many = _add(model_store, "The release checklist lives in the ops wiki", agent="a", evidence_count=6)
    item = model_store.recall("release checklist", principal="alice", k=2).items[0]
    assert item.memory.id == many
    assert item.components["importance"] == pytest.approx(float(reinforced(0.5, 6)))
    assert item.score == pytest.approx(sum(DEFAULT_WEIGHTS[c] * v for c, v in item.components.items()))


def test_off_topic_query_returns_fewer_than_k(model_store: Store) -> None:
    for text in FACTS:
        _add(model_store, text, pinned=True, importance=1.0)
    items = model_store.recall("volcanic eruptions on Jupiter's moon Io", principal="alice", k=5).items
    assert len(items) < 5
    on_topic = model_store.recall("when is the staging database refreshed", principal="alice", k=5).items
    assert on_topic and on_topic[0].memory.text.startswith("Our staging database")


def test_floor_cannot_be_outweighed(model_store: Store) -> None:
    pinned = _add(model_store, "The office coffee machine is descaled monthly", pinned=True, importance=1.0)
    _add(model_store, "The billing service retries failed card payments three times")
    heavy = parse_weights("pinned=100,importance=100,recency=100,min_relevance=0.3")
    items = model_store.recall(
        "how often do card payments get retried", principal="alice", k=5, profile=heavy
    ).items
    assert pinned not in [i.memory.id for i in items]
    why = explain(
        model_store.engine,
        "how often do card payments get retried",
        pinned,
        scope=Scope.of("alice"),
        k=5,
        profile=heavy,
    )
    assert why["status"] == "below_floor" and "min_relevance" in why["reason"]


def test_min_relevance_is_checked() -> None:
    with pytest.raises(MemdeckError, match="min_relevance"):
        parse_weights("min_relevance=2")
    assert parse_weights("min_relevance=0").min_relevance == 0.0
