"""Extractive summaries of old sessions: written once per old closed session by consolidation, quoting the
session's central sentences, never for recent, open or already summarised sessions, never across
principals, and never mistaken for a second telling of what they quote."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memdeck.core.consolidate import consolidate
from memdeck.core.consolidate.summaries import extractive_summary
from memdeck.core.filters import Scope
from memdeck.core.store import Store

OLD = datetime.now(UTC) - timedelta(days=90)
TRIP = [
    "We started planning the trip to Lisbon for the second week of June.",
    "ok thanks",
    "Alice wants a hotel in Alfama close to the tram line.",
    "The flights from Berlin to Lisbon are cheapest on Tuesday mornings.",
    "Her cat needs a sitter while she is in Lisbon, maybe her neighbour Tom.",
    "We agreed to book the Lisbon flights and the Alfama hotel by Friday.",
]


def _session(store: Store, principal: str, session: str, texts: list[str], when: datetime) -> list[str]:
    ids = []
    for n, text in enumerate(texts):
        memory = store.remember(
            text,
            tier="episodic",
            principal=principal,
            session=session,
            created_at=when + timedelta(minutes=n),
            force=True,
        ).memory
        assert memory is not None
        ids.append(memory.id)
    store.close_session(session, principal)
    return ids


def test_the_summary_quotes_central_sentences_in_order() -> None:
    picked = extractive_summary(TRIP)
    assert len(picked) == 3 and all(p in TRIP for p in picked)
    assert "ok thanks" not in picked
    assert picked == sorted(picked, key=TRIP.index)
    assert "We agreed to book the Lisbon flights and the Alfama hotel by Friday." in picked


def test_consolidation_summarises_an_old_session_once(store: Store) -> None:
    ids = _session(store, "alice", "trip", TRIP, OLD)
    _session(store, "alice", "recent", TRIP[:4], datetime.now(UTC) - timedelta(days=2))
    _session(store, "bob", "bobs", TRIP, OLD)
    report = consolidate(store.engine, "alice")
    [summary_id] = report.summaries_added
    summary = store.get(summary_id, Scope.of("alice"))
    assert summary.tier == "episodic" and summary.session == "trip" and summary.closed is True
    assert "session-summary" in summary.tags and summary.meta["summarises"] == ids
    assert summary.meta["method"] == "extractive" and summary.agent == "memdeck"
    assert all(sentence in " ".join(TRIP) for sentence in summary.text.split(". ") if sentence)

    again = consolidate(store.engine, "alice")
    assert again.summaries_added == [] and again.facts_added == []  # quoting is not saying it twice
    assert not [m for m in store.list(Scope.of("bob"), limit=50) if "session-summary" in m.tags]


def test_a_session_an_agent_summarised_or_still_open_is_left_alone(store: Store) -> None:
    _session(store, "alice", "digested", TRIP, OLD)
    store.remember(
        "Planned the Lisbon trip.",
        tier="episodic",
        principal="alice",
        session="digested",
        tags=["session-summary"],
        closed=True,
        created_at=OLD,
    )
    for n, text in enumerate(TRIP):
        store.remember(
            text,
            tier="episodic",
            principal="alice",
            session="open",
            closed=False,
            created_at=OLD + timedelta(minutes=n),
            force=True,
        )
    assert consolidate(store.engine, "alice").summaries_added == []
