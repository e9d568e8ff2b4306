"""The review queue in core and `memdeck review --json`: contradictions, near-duplicates, TTL due, low
trust; keep/merge/dismiss and their undo. Real model (contradictions and near-duplicates are about meaning)."""

from __future__ import annotations

import pytest

from memdeck.core.consolidate import consolidate, contradictions
from memdeck.core.consolidate.review import build_queue, dismiss, keep, merge, review_queue, undo
from memdeck.core.filters import Scope
from memdeck.core.recall.feedback import feedback
from memdeck.core.store import Store

ALICE = Scope.of("alice")


def _add(store: Store, text: str, **extra: object) -> str:
    r = store.remember(text, tier="semantic", principal="alice", force=True, **extra)  # type: ignore[arg-type]
    assert r.memory is not None
    return r.memory.id


def test_queue_lists_each_kind_and_actions_are_reversible(model_store: Store) -> None:
    model_store.settings = model_store.settings.with_changes(
        ttl_days={"episodic": 365}
    )  # TTL is off by default; the queue shows what is due
    a = _add(model_store, "We use PostgreSQL", created_at="2024-01-01T00:00:00Z")
    b = _add(model_store, "We use MySQL", created_at="2024-02-01T00:00:00Z")
    c = _add(model_store, "The user likes dark mode", created_at="2024-01-01T00:00:00Z")
    d = _add(model_store, "The user dislikes dark mode", created_at="2024-01-02T00:00:00Z")
    e = _add(model_store, "A note from a careless agent about lunch", agent="sloppy")
    for _ in range(4):
        feedback(model_store.engine, e, "reviewer", useful=False)
    old = model_store.remember(
        "met the auditors", tier="episodic", principal="alice", created_at="2000-01-01T00:00:00Z"
    ).memory
    assert old is not None
    consolidate(model_store.engine, "alice")
    items = review_queue(model_store.engine, ALICE)
    kinds = {(i.kind, frozenset(x["id"] for x in (i.left, i.right) if x)) for i in items}
    assert ("contradiction", frozenset((a, b))) in kinds
    assert ("contradiction", frozenset((c, d))) in kinds
    assert ("low_trust", frozenset((e,))) in kinds
    assert ("ttl_due", frozenset((old.id,))) in kinds

    pair = next(i for i in items if i.kind == "contradiction" and {i.left["id"], i.right["id"]} == {a, b})  # type: ignore[index]
    done = keep(model_store.engine, pair, "right", ALICE)
    assert model_store.get(done["deprecated"]).superseded_by == done["kept"]
    assert not any(i.key == pair.key for i in review_queue(model_store.engine, ALICE))
    undo(model_store.engine, done, ALICE)
    assert model_store.get(done["deprecated"]).state == "active"

    other = next(i for i in items if i.kind == "contradiction" and i.key != pair.key)
    gone = dismiss(model_store.engine, other)
    assert not any(i.key == other.key for i in review_queue(model_store.engine, ALICE))
    undo(model_store.engine, gone, ALICE)
    assert any(i.key == other.key for i in review_queue(model_store.engine, ALICE))

    merged = merge(model_store.engine, other, ALICE)
    assert merged["kept"] == c and model_store.get(d).superseded_by == c
    undo(model_store.engine, merged, ALICE)
    assert model_store.get(d).state == "active"


def test_close_facts_with_different_values_are_listed_as_contradictions_without_consolidation(
    model_store: Store,
) -> None:
    a = _add(model_store, "The Q3 roadmap budget is capped at 50k euros")
    b = _add(model_store, "The Q3 roadmap budget is capped at 10k euros")
    items = review_queue(model_store.engine, ALICE)
    kinds = {(i.kind, frozenset(x["id"] for x in (i.left, i.right) if x)) for i in items}
    assert ("contradiction", frozenset((a, b))) in kinds
    assert ("near_duplicate", frozenset((a, b))) not in kinds
    assert items[0].kind == "contradiction"  # contradictions come first


def test_a_principal_past_the_live_bound_gets_the_flagged_pairs_everywhere(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past LIVE_PAIR_FACTS a principal's pairs are the ones consolidation flagged; every view still agrees."""
    import memdeck.core.consolidate as consolidation

    blue = _add(store, "Alice's favourite colour is blue")
    green = _add(store, "Alice's favourite colour is green")
    consolidate(store.engine, "alice")
    monkeypatch.setattr(consolidation, "LIVE_PAIR_FACTS", 1)
    later = _add(store, "Alice's favourite colour is red")  # not flagged until consolidation runs again
    pairs = consolidation.open_pairs(store.engine, ALICE)
    assert pairs.flagged_only == ["alice"] and pairs.near_duplicates == []
    assert [{c.a_id, c.b_id} for c in pairs.contradictions] == [{blue, green}]
    assert [i.key for i in review_queue(store.engine, ALICE, ("contradiction",))] == [
        pairs.contradictions[0].key
    ]
    line = build_queue(store.engine, ALICE, ("contradiction",)).counts_line()
    assert line == "1 contradiction, pairs of alice as the last consolidation flagged them"
    consolidate(store.engine, "alice")
    found = {frozenset((c.a_id, c.b_id)) for c in contradictions(store.engine, ALICE)}
    assert found == {frozenset((blue, green)), frozenset((blue, later)), frozenset((green, later))}
    monkeypatch.setattr(consolidation, "LIVE_PAIR_FACTS", 5_000)
    assert {
        frozenset((c.a_id, c.b_id)) for c in contradictions(store.engine, ALICE)
    } == found  # live reads the same


def test_a_procedure_that_keeps_failing_is_put_up_for_review(store: Store) -> None:
    """Verdicts on a procedure's id count as its outcomes: failed twice and more often than it worked puts it
    in the queue (MCP feedback and `memdeck feedback` give them); one that mostly works stays out."""
    failing = store.remember(
        "deploy\nrun the tests\npush to main", tier="procedural", principal="alice", name="deploy"
    ).memory
    working = store.remember(
        "backup\ncopy the vault\ncheck the copy", tier="procedural", principal="alice", name="backup"
    ).memory
    assert failing is not None and working is not None
    feedback(store.engine, failing.id, "assistant", useful=False)
    assert not [
        i for i in review_queue(store.engine, ALICE) if i.kind == "failing_procedure"
    ]  # once is no pattern
    feedback(store.engine, failing.id, "assistant", useful=False)
    feedback(store.engine, failing.id, "assistant", useful=True)
    for verdict in (False, False, True, True, True):
        feedback(store.engine, working.id, "assistant", useful=verdict)
    items = [i for i in review_queue(store.engine, ALICE) if i.kind == "failing_procedure"]
    assert [(i.left["id"], i.reason) for i in items] == [(failing.id, "failed 2 of 3 times it was followed")]
    assert not [i for i in review_queue(store.engine, Scope.of("bob")) if i.kind == "failing_procedure"]
    queue = build_queue(store.engine, ALICE, ("failing_procedure",))
    assert queue.totals == {"failing_procedure": 1}
    assert queue.counts_line() == "1 failing procedure"  # what `memdeck review` and the app print
    dismiss(store.engine, items[0])
    assert not [i for i in review_queue(store.engine, ALICE) if i.kind == "failing_procedure"]
