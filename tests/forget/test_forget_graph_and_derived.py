"""What a forgotten memory gave the graph or its episode goes with it: an alias given with it, and its text
in the source episode's derived_facts."""

from __future__ import annotations

import pytest

from memdeck.core.errors import NotFound
from memdeck.core.forget import forget


def test_an_alias_given_with_a_forgotten_memory_no_longer_resolves(store):
    first = store.remember(
        "Ingrid Berg approved the budget in March.",
        tier="semantic",
        principal="alice",
        entities=[{"name": "Ingrid Berg", "kind": "person", "aliases": ["Nightjar"]}],
    ).memory
    store.remember(
        "Ingrid Berg leads the Atlas review.",
        tier="semantic",
        principal="alice",
        entities=[{"name": "Ingrid Berg", "kind": "person"}],
    )
    assert store.entity("alice", "Nightjar")["name"] == "Ingrid Berg"  # the alias resolves before
    receipt = forget(store.engine, [first.id], "user request")
    assert receipt["outcome"] == "verified"
    assert store.entity("alice", "Ingrid Berg")["name"] == "Ingrid Berg"  # still mentioned: the entity stays
    with pytest.raises(NotFound):
        store.entity("alice", "Nightjar")
    ents = store.engine.table("entities").to_arrow().to_pylist()
    assert not [e for e in ents if "nightjar" in " ".join(e["aliases"] or []).lower()]


def test_an_alias_a_kept_memory_says_stays(store):
    first = store.remember(
        "Ingrid Berg signed it.",
        tier="semantic",
        principal="alice",
        entities=[{"name": "Ingrid Berg", "kind": "person", "aliases": ["Ingrid B."]}],
    ).memory
    store.remember(
        "Ingrid B. leads the Atlas review with Ingrid Berg's team.",
        tier="semantic",
        principal="alice",
        entities=[{"name": "Ingrid Berg", "kind": "person"}],
    )
    forget(store.engine, [first.id], "user request")
    assert store.entity("alice", "Ingrid B.")["name"] == "Ingrid Berg"


def test_a_forgotten_fact_leaves_its_episodes_derived_facts(store):
    episode = store.remember(
        "Talked with Ingrid about coffee at the Brackwater office.",
        tier="episodic",
        principal="alice",
        derived_facts=["Ingrid takes oat milk at the Brackwater office", "The office opens at eight"],
    ).memory
    fact = store.remember(
        "Ingrid takes oat milk at the Brackwater office",
        tier="semantic",
        principal="alice",
        sources=[episode.id],
    ).memory
    receipt = forget(store.engine, [fact.id], "user request")
    assert receipt["outcome"] == "verified"
    kept = store.get(episode.id)
    assert kept.derived_facts == ["The office opens at eight"]
    assert next(c for c in receipt["checks"] if c["name"] == "no_row_in_any_data_file")["passed"]


def test_forgetting_an_episodes_only_derived_fact_leaves_it_none(store):
    episode = store.remember(
        "Talked about flying.",
        tier="episodic",
        principal="alice",
        derived_facts=["Alice is afraid of flying"],
    ).memory
    fact = store.remember(
        "Alice is afraid of flying", tier="semantic", principal="alice", sources=[episode.id]
    ).memory
    assert forget(store.engine, [fact.id], "user request")["outcome"] == "verified"
    assert store.get(episode.id).derived_facts == []
