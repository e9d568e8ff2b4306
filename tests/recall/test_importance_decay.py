"""Importance decays with disuse: from the last recall that returned a memory, computed at recall (never
written back), shown in explain as stored against effective."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from memdeck.core import Scope
from memdeck.core.config import DEFAULT_HALF_LIFE_DAYS, load_profile, parse_weights
from memdeck.core.recall.explain import explain, render
from memdeck.core.recall.scoring import decayed

ALICE = Scope.of("alice")
HALF_LIFE = DEFAULT_HALF_LIFE_DAYS["importance"]


def test_decay_halves_per_half_life_and_spares_the_never_recalled():
    got = decayed(np.array([0.8, 0.8, 0.8, 0.8]), np.array([0.0, 90.0, 180.0, np.nan]), 90.0)
    assert got.tolist() == pytest.approx([0.8, 0.4, 0.2, 0.8])


def _use(store, monkeypatch, memory_id: str, query: str, when: datetime) -> None:
    """A recall at ``when`` that returns this memory (and so records its use then)."""
    monkeypatch.setattr("memdeck.core.storage.access.now", lambda: when)
    result = store.recall(query, principal="alice", k=1)
    assert [i.memory.id for i in result.items] == [memory_id]
    store.engine.flush_access()
    monkeypatch.undo()


@pytest.mark.parametrize("engine", ["memory", "lance"])
def test_of_two_equal_memories_the_one_used_lately_ranks_first_after_the_half_life(
    open_store, real_embedder, monkeypatch, engine
):
    store = open_store(embedder=real_embedder, recall={"engine": engine})
    # Identical episodes (same text, same importance, written together) in two sessions, twice over: in the
    # first pair the one written first was used long ago, in the second the one written second, so neither
    # order of writing nor a tie-break can make both pairs come out right.
    text = {"tea": "Alice drinks green tea every afternoon", "bike": "Alice cycles to work along the river"}
    ids = {
        (topic, n): store.remember(
            text[topic], tier="episodic", principal="alice", session=f"{topic}-{n}"
        ).memory.id  # type: ignore[union-attr]
        for topic in text
        for n in (1, 2)
    }
    now = datetime.now(UTC)
    long_ago = now - timedelta(days=2 * HALF_LIFE)
    stale = {"tea": ids["tea", 1], "bike": ids["bike", 2]}
    fresh = {"tea": ids["tea", 2], "bike": ids["bike", 1]}
    for topic in text:
        # Each is returned once (a recall narrowed to its session by asking with the session's memory only).
        store_filter_one(store, monkeypatch, stale[topic], text[topic], long_ago)
        store_filter_one(store, monkeypatch, fresh[topic], text[topic], now - timedelta(hours=1))

    for topic, query in (
        ("tea", "what does Alice drink in the afternoon?"),
        ("bike", "how does Alice get to work?"),
    ):
        items = store.recall(query, principal="alice", k=2, record_access=False).items
        assert [i.memory.id for i in items] == [fresh[topic], stale[topic]]
        first, second = items
        assert first.components["relevance"] == pytest.approx(second.components["relevance"], abs=1e-6)
        assert first.components["frequency"] == second.components["frequency"]
        assert second.components["importance"] == pytest.approx(0.5 * 0.25, rel=0.02)  # two half-lives
        assert first.components["importance"] == pytest.approx(0.5, rel=0.01)

    # The stored importance is untouched: the decay is computed at recall, never written back.
    assert store.get(stale["tea"]).importance == pytest.approx(0.5)

    # With a half-life far longer than the gap, the pair is equal again on importance.
    slow = parse_weights("half_life.importance=100000", load_profile(None))
    items = store.recall(
        "what does Alice drink in the afternoon?", principal="alice", k=2, profile=slow, record_access=False
    ).items
    assert items[0].components["importance"] == pytest.approx(items[1].components["importance"], abs=1e-3)

    report = explain(store.engine, "what does Alice drink in the afternoon?", stale["tea"], ALICE)
    imp = report["importance"]
    assert imp["stored"] == pytest.approx(0.5)
    assert imp["effective"] == pytest.approx(0.125, rel=0.02)
    assert imp["idle_days"] == pytest.approx(2 * HALF_LIFE, abs=0.1)
    assert imp["half_life_days"] == HALF_LIFE
    assert "importance: stored 0.500, effective 0.12" in render(report)


def store_filter_one(store, monkeypatch, memory_id: str, text: str, when: datetime) -> None:
    """Record one use of ``memory_id`` at ``when`` through a real recall: the other copy of the same text
    is deprecated for the moment so that the recall returns this one alone."""
    twin = next(m.id for m in store.list(ALICE, tier="episodic") if m.text == text and m.id != memory_id)
    store.deprecate(twin, "hold aside while its twin is recalled")
    _use(store, monkeypatch, memory_id, text, when)
    store.undeprecate(twin)


def test_a_memory_never_recalled_keeps_its_importance(store):
    kept = store.remember(
        "Alice keeps a spare key under the blue pot", principal="alice", importance=0.9
    ).memory
    assert kept is not None
    item = store.recall("spare key", principal="alice", record_access=False).items[0]
    assert item.components["importance"] == pytest.approx(0.9)
    report = explain(store.engine, "spare key", kept.id, ALICE)
    assert report["importance"]["idle_days"] is None
    assert report["importance"]["stored"] == report["importance"]["effective"] == pytest.approx(0.9)
    assert "never returned by a recall" in render(report)
