"""Consolidation on real LanceDB stores: facts from episodes, merges (real model), contradictions,
procedure versions, idempotency and one principal at a time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memdeck.cli import main
from memdeck.core.consolidate import consolidate, contradictions, merge_blocker, parse_statement
from memdeck.core.filters import Scope
from memdeck.core.records import parse_time
from memdeck.core.store import Store


def _versions(store: Store) -> dict[str, int]:
    return {t: store.engine.table(t).version for t in store.engine.tiers_present()}


def _facts(store: Store, principal: str = "alice", state: str | None = None) -> dict[str, Any]:
    return {m.text: m for m in store.list(Scope.of(principal), tier="semantic", state=state, limit=1000)}


def _episode(store: Store, text: str, when: str, principal: str = "alice", **extra: Any) -> str:
    result = store.remember(
        text, tier="episodic", principal=principal, started_at=when, ended_at=when, **extra
    )
    assert result.memory is not None
    return result.memory.id


def test_facts_from_derived_facts_and_repeated_statements(store: Store) -> None:
    e1 = _episode(
        store,
        "Planned the Lisbon trip. Alice always books an aisle seat on flights.",
        "2024-03-01T10:00:00Z",
        derived_facts=["Alice is vegetarian"],
    )
    e2 = _episode(
        store,
        "Talked about food. Alice always books an aisle seat on flights.",
        "2024-04-01T10:00:00Z",
        events=[{"role": "user", "text": "I'm still vegetarian, remember that."}],
        derived_facts=["Alice is vegetarian"],
    )
    _episode(store, "Only said once: Alice owns a red bicycle.", "2024-05-01T10:00:00Z")
    _episode(
        store,
        "Bob always books an aisle seat on flights.",
        "2024-05-01T10:00:00Z",
        principal="bob",
        derived_facts=["Alice is vegetarian"],
    )

    report = consolidate(store.engine, "alice")
    facts = _facts(store)
    assert set(facts) == {"Alice is vegetarian", "Alice always books an aisle seat on flights."}
    veg = facts["Alice is vegetarian"]
    assert veg.sources == [e1, e2] and veg.evidence_count == 2
    assert veg.last_reinforced_at == parse_time("2024-04-01T10:00:00Z")
    assert veg.agent == "consolidate"
    seat = facts["Alice always books an aisle seat on flights."]
    assert sorted(seat.sources) == sorted([e1, e2]) and seat.evidence_count == 2
    assert len(report.facts_added) == 2 and report.changed
    # Bob's identical episode and derived fact made nothing for Alice, and nothing for Bob either.
    assert _facts(store, "bob") == {}


def test_second_run_changes_nothing(store: Store) -> None:
    _episode(
        store,
        "We agreed the weekly sync moves to Thursday mornings.",
        "2024-01-01T09:00:00Z",
        derived_facts=["Alice's favourite colour is blue", "The team standup is at 9:30"],
    )
    _episode(
        store,
        "We agreed the weekly sync moves to Thursday mornings.",
        "2024-01-08T09:00:00Z",
        derived_facts=["Alice's favourite colour is green"],
    )
    store.remember("deploy\nbuild\nship", tier="procedural", principal="alice", name="deploy")
    store.remember("deploy\nbuild\ntest\nship", tier="procedural", principal="alice", name="deploy")
    first = consolidate(store.engine, "alice")
    assert first.changed
    before = _versions(store)
    counts = {t: store.count(tier=t) for t in store.engine.tiers_present()}
    evidence = {
        m.id: (m.evidence_count, tuple(m.sources), m.last_reinforced_at) for m in _facts(store).values()
    }

    second = consolidate(store.engine, "alice")
    assert not second.changed, second.to_json()
    assert _versions(store) == before
    assert {t: store.count(tier=t) for t in store.engine.tiers_present()} == counts
    assert {
        m.id: (m.evidence_count, tuple(m.sources), m.last_reinforced_at) for m in _facts(store).values()
    } == evidence


def test_new_episode_reinforces_an_existing_fact(store: Store) -> None:
    e1 = _episode(store, "Kickoff.", "2024-01-01T09:00:00Z", derived_facts=["Alice works at Acme Corp"])
    consolidate(store.engine, "alice")
    e2 = _episode(store, "Follow-up.", "2024-02-01T09:00:00Z", derived_facts=["Alice works at Acme Corp"])
    report = consolidate(store.engine, "alice")
    fact = _facts(store)["Alice works at Acme Corp"]
    assert fact.sources == [e1, e2] and fact.evidence_count == 2
    assert fact.last_reinforced_at == parse_time("2024-02-01T09:00:00Z")
    assert [r["id"] for r in report.facts_reinforced] == [fact.id] and not report.facts_added


def test_a_fact_a_person_deprecated_is_not_revived(store: Store) -> None:
    _episode(store, "One.", "2024-01-01T09:00:00Z", derived_facts=["Alice drinks oat milk"])
    consolidate(store.engine, "alice")
    fact = _facts(store)["Alice drinks oat milk"]
    store.deprecate(fact.id, "no longer true")
    _episode(store, "Two.", "2024-02-01T09:00:00Z", derived_facts=["Alice drinks oat milk"])
    report = consolidate(store.engine, "alice")
    assert not report.changed
    assert store.get(fact.id).state == "deprecated" and store.get(fact.id).evidence_count == 1


def test_contradictions_are_flagged_not_resolved(store: Store) -> None:
    _episode(store, "Chat one.", "2024-01-01T09:00:00Z", derived_facts=["Alice's favourite colour is blue"])
    _episode(store, "Chat two.", "2024-02-01T09:00:00Z", derived_facts=["Alice's favorite color is green"])
    _episode(
        store,
        "Chat three.",
        "2024-03-01T09:00:00Z",
        derived_facts=["Alice lives in Porto", "Alice's cat is grey"],
    )
    _episode(
        store, "Bob chat.", "2024-03-01T09:00:00Z", principal="bob", derived_facts=["Alice lives in Lyon"]
    )
    report = consolidate(store.engine, "alice")
    consolidate(store.engine, "bob")
    assert len(report.contradictions_flagged) == 1
    found = contradictions(store.engine, Scope.of("alice"))
    assert len(found) == 1
    c = found[0]
    assert (c.subject, c.predicate) == ("alice", "favorite color")
    assert {c.a_value, c.b_value} == {"blue", "green"}
    facts = _facts(store)
    assert facts["Alice's favourite colour is blue"].state == "active"
    assert facts["Alice's favorite color is green"].state == "active"
    # Alice's Porto and Bob's note about Lyon are different principals' data: no cross-principal flag.
    assert contradictions(store.engine, Scope.of("bob")) == []
    assert len(contradictions(store.engine, Scope.everyone())) == 1
    # Once a person settles it, the pair is no longer listed.
    store.deprecate(c.a_id, "resolved by the person")
    assert contradictions(store.engine, Scope.of("alice")) == []


def test_procedure_versions_are_superseded_but_stay_live_by_the_design_rule(store: Store) -> None:
    ids = [
        store.remember(
            f"deploy\nbuild\nship v{n}", tier="procedural", principal="alice", name="deploy"
        ).memory.id  # type: ignore[union-attr]
        for n in range(1, 4)
    ]
    report = consolidate(store.engine, "alice")
    assert sorted(p["version"] for p in report.procedures_superseded) == [1, 2]
    v1, v2, v3 = (store.get(i) for i in ids)
    assert v1.meta["superseded_by_version"] == 3 and v2.meta["superseded_by_id"] == ids[2]
    assert "superseded_by_version" not in v3.meta
    assert {v1.state, v2.state, v3.state} == {"active"}
    # The person deprecates v3: v2 is live again, and the next run moves the markers.
    store.deprecate(ids[2], "broke the build")
    consolidate(store.engine, "alice")
    assert "superseded_by_version" not in store.get(ids[1]).meta
    assert store.get(ids[0]).meta["superseded_by_version"] == 2
    result = store.recall("deploy build ship", principal="alice", tiers=["procedural"], k=5)
    assert [i.memory.id for i in result.items] == [ids[1]]


def test_parse_statement() -> None:
    assert parse_statement("Alice's favourite colour is blue.") == ("alice", "favorite color", "blue")
    assert parse_statement("The capital of France is Paris") == ("france", "capital", "paris")
    assert parse_statement("My favourite food is ramen") == ("self", "favorite food", "ramen")
    assert parse_statement("Bob lives in Berlin") == ("bob", "lives in", "berlin")
    assert parse_statement("Bob is 41 years old") == ("bob", "age", "41")
    assert parse_statement("Alice is allergic to peanuts") is None
    assert parse_statement("What is Alice's favourite colour?") is None
    # Values end where a clause starts; descriptions, plurals and participles are not attribute values.
    assert parse_statement("Alice lives in Porto with her husband") == ("alice", "lives in", "porto")
    assert parse_statement("Audrey's dogs are all 3 years old") is None
    assert parse_statement("Alice's cat is called Miso") is None
    assert parse_statement("Alice's car is red") == ("alice", "car", "red")
    assert (
        parse_statement("Caroline's favourite book is a story about the history of the civil rights movement")
        is None
    )


def test_merge_blockers() -> None:
    assert merge_blocker("Alice has two cats", "Alice has three cats") == "different numbers"
    assert merge_blocker("Alice likes coffee", "Alice does not like coffee") == "negated on one side"
    assert (
        merge_blocker("Alice's favourite colour is blue", "Alice's favourite colour is green")
        == "contradicting values"
    )
    assert (
        merge_blocker("Alice is allergic to peanuts", "Alice is allergic to peanuts and shellfish")
        is not None
    )
    assert merge_blocker("Alice prefers tea over coffee", "Alice likes tea more than coffee") is None


def test_near_duplicates_merge_into_the_older_fact(model_store: Store) -> None:
    store = model_store
    e1 = _episode(
        store, "Coffee chat.", "2024-01-01T09:00:00Z", derived_facts=["Alice prefers tea over coffee"]
    )
    e2 = _episode(
        store,
        "Tea talk.",
        "2024-02-01T09:00:00Z",
        derived_facts=["Alice likes tea more than coffee", "Alice has two cats"],
    )
    e3 = _episode(
        store,
        "Pets.",
        "2024-03-01T09:00:00Z",
        derived_facts=[
            "Alice has three cats",
            "Alice likes coffee",
            "Alice does not like coffee",
            "The staging database runs on port 5432",
        ],
    )
    report = consolidate(store.engine, "alice")
    assert len(report.merged) == 1
    older = store.get(report.merged[0]["kept"])
    newer = store.get(report.merged[0]["merged"])
    assert older.text == "Alice prefers tea over coffee"
    assert newer.text == "Alice likes tea more than coffee"
    assert report.merged[0]["similarity"] >= 0.92
    assert older.sources == [e1, e2] and older.evidence_count == 2
    assert older.meta["merged_from"] == [newer.id]
    assert newer.state == "deprecated" and newer.superseded_by == older.id
    assert newer.deprecation_reason.startswith("merged: near-duplicate of")
    active = set(_facts(store, state="active"))
    assert {
        "Alice has two cats",
        "Alice has three cats",
        "Alice likes coffee",
        "Alice does not like coffee",
    } <= active

    # Idempotent, and a new episode restating the merged fact reinforces the survivor.
    assert not consolidate(store.engine, "alice").changed
    e4 = _episode(store, "Again.", "2024-04-01T09:00:00Z", derived_facts=["Alice likes tea more than coffee"])
    consolidate(store.engine, "alice")
    older = store.get(older.id)
    assert older.sources == [e1, e2, e4] and older.evidence_count == 3
    assert store.get(newer.id).state == "deprecated"
    assert e3 not in older.sources


def test_cli_consolidate_and_contradictions(memdeck_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    (memdeck_home / "config.toml").write_text('[embedding]\nmodel = "hash-384"\n', encoding="utf-8")
    store = Store.open(memdeck_home / "store")
    _episode(store, "One.", "2024-01-01T09:00:00Z", derived_facts=["Carol lives in Oslo"])
    _episode(store, "Two.", "2024-02-01T09:00:00Z", derived_facts=["Carol lives in Bergen"])
    store.close()
    assert main(["consolidate", "--principal", "alice", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert len(report["facts_added"]) == 2 and len(report["contradictions_flagged"]) == 1
    assert main(["consolidate", "--principal", "alice"]) == 0
    assert "nothing to consolidate" in capsys.readouterr().out
    assert main(["contradictions", "--principal", "alice", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(c["subject"], c["predicate"]) for c in listed] == [("carol", "lives in")]
    assert main(["consolidate", "--principal", ""]) == 2


@pytest.mark.parametrize("hostile", ["x' OR '1'='1", "alice' OR principal != '", "%"])
def test_hostile_principal_consolidates_nothing(store: Store, hostile: str) -> None:
    _episode(store, "One.", "2024-01-01T09:00:00Z", derived_facts=["Alice is vegetarian"])
    _episode(store, "Two.", "2024-02-01T09:00:00Z", derived_facts=["Alice is vegetarian"])
    before = _versions(store)
    report = consolidate(store.engine, hostile)
    assert report.episodes_scanned == 0 and not report.changed
    assert _versions(store) == before
    assert contradictions(store.engine, Scope.of(hostile)) == []
