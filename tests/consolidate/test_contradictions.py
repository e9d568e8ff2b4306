"""Contradiction detection that generalises, merges that never join opposites, resolution strategies.

Pairs are read by structure (core/consolidate/contradict.py); consolidation compares only pairs on one
topic by the real model's cosine, so the store tests use ``model_store``.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest

from memdeck.core.consolidate import consolidate, contradictions, merge_blocker
from memdeck.core.consolidate.contradict import compare
from memdeck.core.filters import Scope
from memdeck.core.store import Store
from tests.paths import ROOT

sys.path.insert(0, str(ROOT / "bench"))
from contradiction_set import labelled_pairs

ISSUE_PAIRS = [
    ("The API uses OAuth 2.0", "The API uses API keys"),
    ("The user prefers metric units", "The user prefers imperial units"),
    ("We use PostgreSQL", "We use MySQL"),
    ("The user likes dark mode", "The user dislikes dark mode"),
]
HARD_NEGATIVES = [
    ("Alice plays the piano", "Alice plays the guitar"),
    ("Alice has a sister", "Alice has a brother"),
    ("Alice lives in Paris", "Bob lives in Paris"),
    ("Alice's favourite colour is blue", "Alice's favourite food is pizza"),
    ("Alice worked at Acme until 2018", "Alice works at Globex"),
]


@pytest.mark.parametrize(("a", "b"), ISSUE_PAIRS)
def test_issue_pairs_are_contradictions(a: str, b: str) -> None:
    assert compare(a, b).contradicts and compare(b, a).contradicts


@pytest.mark.parametrize(("a", "b"), HARD_NEGATIVES)
def test_hard_negatives_are_not(a: str, b: str) -> None:
    assert not compare(a, b).contradicts and not compare(b, a).contradicts


@pytest.mark.parametrize(
    ("a", "b"),
    [
        *ISSUE_PAIRS,
        ("Alice is vegetarian", "Alice is not vegetarian"),
        ("The meeting is at 3pm", "The meeting is at 4pm"),
    ],
)
def test_opposites_and_different_values_never_merge(a: str, b: str) -> None:
    assert merge_blocker(a, b) is not None


def test_labelled_set_meets_the_targets() -> None:
    pairs = labelled_pairs()
    assert len(pairs) >= 300
    flagged = [(label, compare(a, b).contradicts) for a, b, label in pairs]
    tp = sum(f and label == "contradiction" for label, f in flagged)
    fp = sum(f and label != "contradiction" for label, f in flagged)
    fn = sum(not f and label == "contradiction" for label, f in flagged)
    assert tp / (tp + fp) >= 0.9 and tp / (tp + fn) >= 0.85


def _fact(store: Store, text: str, when: str, agent: str = "a1") -> str:
    r = store.remember(text, tier="semantic", principal="alice", agent=agent, created_at=when)
    assert r.memory is not None
    return r.memory.id


def _state(store: Store, mem_id: str) -> tuple[str, Any]:
    m = store.get(mem_id)
    return m.state, m.superseded_by


def test_consolidate_flags_the_issue_pairs_and_merges_no_opposite(model_store: Store) -> None:
    ids = []
    for i, (a, b) in enumerate(ISSUE_PAIRS):
        ids.append(
            (
                _fact(model_store, a, f"2024-0{i + 1}-01T00:00:00Z"),
                _fact(model_store, b, f"2024-0{i + 1}-02T00:00:00Z"),
            )
        )
    for a, b in HARD_NEGATIVES:
        _fact(model_store, a, "2024-06-01T00:00:00Z")
        _fact(model_store, b, "2024-06-02T00:00:00Z")
    report = consolidate(model_store.engine, "alice")
    assert not report.merged
    found = {frozenset((c.a_id, c.b_id)) for c in contradictions(model_store.engine, Scope.of("alice"))}
    assert found == {frozenset(p) for p in ids}
    assert not consolidate(model_store.engine, "alice").changed


def test_newest_wins_deprecates_the_older(model_store: Store) -> None:
    old = _fact(model_store, "We use PostgreSQL", "2024-01-01T00:00:00Z")
    new = _fact(model_store, "We use MySQL", "2024-02-01T00:00:00Z")
    report = consolidate(model_store.engine, "alice", resolution="newest_wins")
    assert report.contradictions_resolved == [{"kept": new, "deprecated": old, "rule": "newest_wins"}]
    assert _state(model_store, old) == ("deprecated", new) and _state(model_store, new)[0] == "active"
    assert contradictions(model_store.engine, Scope.of("alice")) == []
    assert not consolidate(model_store.engine, "alice", resolution="newest_wins").changed


def test_trusted_wins_keeps_the_trusted_agents_fact(model_store: Store) -> None:
    from memdeck.core.recall.feedback import feedback

    trusted = _fact(model_store, "The user prefers metric units", "2024-01-01T00:00:00Z", agent="good")
    newer = _fact(model_store, "The user prefers imperial units", "2024-02-01T00:00:00Z", agent="bad")
    feedback(model_store.engine, trusted, "reviewer", useful=True)
    feedback(model_store.engine, newer, "reviewer", useful=False)
    report = consolidate(model_store.engine, "alice", resolution="trusted_wins")
    assert report.contradictions_resolved == [{"kept": trusted, "deprecated": newer, "rule": "trusted_wins"}]
    assert _state(model_store, newer) == ("deprecated", trusted)


def test_trusted_wins_falls_back_to_the_newer(model_store: Store) -> None:
    older = _fact(model_store, "The user prefers metric units", "2024-01-01T00:00:00Z", agent="x")
    newer = _fact(model_store, "The user prefers imperial units", "2024-02-01T00:00:00Z", agent="y")
    consolidate(model_store.engine, "alice", resolution="trusted_wins")
    assert _state(model_store, older) == ("deprecated", newer)


def test_unknown_resolution_is_refused(model_store: Store) -> None:
    from memdeck.core.errors import MemdeckError

    with pytest.raises(MemdeckError, match="unknown resolution"):
        consolidate(model_store.engine, "alice", resolution="coin_flip")


def test_subject_predicate_reader_does_not_flag_values_that_coexist() -> None:
    from memdeck.core.consolidate import contradicting_pairs, parse_statement

    a, b = "My sister is allergic to peanuts", "My sister is allergic to shellfish"
    facts = [{"id": "a", "text": a}, {"id": "b", "text": b}]
    assert parse_statement(a) and parse_statement(
        b
    )  # the reader alone would call these two values of one attribute
    assert contradicting_pairs(facts, {"a": parse_statement(a), "b": parse_statement(b)}) == {}
    c, d = "Alice's favourite colour is blue", "Alice's favorite color is green"
    facts = [{"id": "c", "text": c}, {"id": "d", "text": d}]
    assert contradicting_pairs(facts, {"c": parse_statement(c), "d": parse_statement(d)})


def test_a_value_settled_by_newest_wins_keeps_its_own_evidence(model_store: Store) -> None:
    """The older value's episode is evidence for the older value only: a second run does not hand it to the
    newer fact that superseded it (a merge's survivor gains its merged facts' episodes; a new value does not)."""
    episodes = []
    for when, value in (("2024-01-01T00:00:00Z", "March"), ("2024-02-01T00:00:00Z", "May")):
        r = model_store.remember(
            f"Planning call about the launch ({value})",
            tier="episodic",
            principal="alice",
            created_at=when,
            derived_facts=[f"The deadline of the launch is {value}"],
        )
        assert r.memory is not None
        episodes.append(r.memory.id)
    report = consolidate(model_store.engine, "alice", resolution="newest_wins")
    [resolved] = report.contradictions_resolved
    old, new = model_store.get(resolved["deprecated"]), model_store.get(resolved["kept"])
    assert (old.text, new.text) == (
        "The deadline of the launch is March",
        "The deadline of the launch is May",
    )
    assert old.superseded_by == new.id and new.sources == [episodes[1]]
    again = consolidate(model_store.engine, "alice", resolution="newest_wins")
    assert not again.changed, again.to_json()
    assert model_store.get(new.id).sources == [episodes[1]] and model_store.get(new.id).evidence_count == 1


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("The payments service depends on Redis", "The payments service depends on Kafka"),
        ("Marco is the owner of billing revamp", "Marco is the owner of the Q3 roadmap"),
        ("Tom reviews every change to billing revamp", "Tom reviews every change to the mobile app"),
        (
            "Dana should be contacted about the launch on Slack",
            "Dana should be contacted about the launch by email",
        ),
    ],
)
def test_relations_that_hold_several_values_are_not_contradictions(a: str, b: str) -> None:
    assert not compare(a, b).contradicts and not compare(b, a).contradicts


def test_one_owner_of_one_thing_still_contradicts() -> None:
    assert compare("The owner of billing revamp is Marco", "The owner of billing revamp is Dana").contradicts
