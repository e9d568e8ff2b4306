"""Recall quality with the real model: paraphrases are found, and the score is what it says it is."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest

from memdeck.core.config import COMPONENTS, Profile
from memdeck.core.recall.scoring import Candidate, CandidateSet, keyword_share, recency
from memdeck.core.records import Memory, now

UNRELATED = [
    "The team lunch is on Friday at the Thai place near the office",
    "Alice prefers dark mode in every editor she uses",
    "The quarterly report is due at the end of March",
    "Bob's cat is called Miso and sleeps on the keyboard",
    "Deploys to staging happen automatically after each merge",
    "The office plants need watering twice a week",
    "Our brand colour is a dark teal, hex 0f766e",
    "The user asked for shorter answers with fewer bullet points",
]


def _fill(store, extra: list[str]) -> dict[str, str]:
    results = store.remember_many(
        [
            {"text": t, "tier": "semantic", "principal": "alice", "agent": "assistant"}
            for t in [*UNRELATED, *extra]
        ]
    )
    return {r.memory.text: r.memory.id for r in results}


def test_api_keys_finds_backend_credentials_first(model_store) -> None:
    ids = _fill(model_store, ["The credentials for the backend service are in the team vault"])
    result = model_store.recall("API keys", principal="alice", k=5, trace=False)
    assert result.items[0].memory.id == ids["The credentials for the backend service are in the team vault"]


def test_contact_limits_finds_free_tier(model_store) -> None:
    ids = _fill(model_store, ["Users can add 5 contacts on the free tier"])
    result = model_store.recall("contact limits", principal="alice", k=5, trace=False)
    assert ids["Users can add 5 contacts on the free tier"] in [s.memory.id for s in result.items[:3]]
    assert result.items[0].memory.id == ids["Users can add 5 contacts on the free tier"]


def test_score_is_the_weighted_sum_of_reported_components(model_store) -> None:
    _fill(model_store, ["Users can add 5 contacts on the free tier"])
    model_store.remember(
        "we talked about the free tier pricing",
        tier="episodic",
        principal="alice",
        session="s1",
        created_at=now() - timedelta(days=3),
    )
    model_store.remember(
        "and the contact limit came up",
        tier="episodic",
        principal="alice",
        session="s1",
        created_at=now() - timedelta(days=3) + timedelta(seconds=5),
    )
    profile = Profile(
        "odd",
        {
            "relevance": 0.55,
            "recency": 0.3,
            "frequency": 0.05,
            "importance": 0.2,
            "pinned": 0.4,
            "trust": 0.15,
        },
    )
    result = model_store.recall(
        "contact limits on the free tier", principal="alice", k=10, profile=profile, trace=False
    )
    assert len(result.items) >= 3
    for item in result.items:
        expected = sum(profile.weights[c] * item.components[c] for c in COMPONENTS)
        assert item.score == pytest.approx(expected, abs=1e-12)
        as_json = item.to_json()
        assert as_json["score"] == pytest.approx(
            sum(profile.weights[c] * as_json["components"][c] for c in COMPONENTS), abs=1e-5
        )
        assert 0.0 <= item.components["relevance"] <= 1.0
    # Re-ranking keeps the identity too.
    for item in result.rerank(Profile()):
        assert item.score == pytest.approx(sum(Profile().weights[c] * item.components[c] for c in COMPONENTS))


def test_recency_halves_at_the_half_life() -> None:
    assert recency(0.0, 30.0) == pytest.approx(1.0)
    assert recency(30.0, 30.0) == pytest.approx(0.5)
    assert recency(60.0, 30.0) == pytest.approx(0.25)
    assert recency(np.array([7.0, 14.0]), 7.0).tolist() == pytest.approx([0.5, 0.25])


def test_recency_component_of_a_recall_halves_at_the_half_life(model_store) -> None:
    half = 10.0
    stamp = now()
    model_store.remember(
        "kept the spare key under the blue flowerpot",
        tier="episodic",
        principal="alice",
        created_at=stamp - timedelta(days=half),
    )
    model_store.remember(
        "kept the spare key under the red flowerpot",
        tier="episodic",
        principal="alice",
        created_at=stamp - timedelta(days=2 * half),
    )
    profile = Profile("p", half_life_days={"episodic": half, "semantic": 180.0, "procedural": 365.0})
    result = model_store.recall(
        "where is the spare key", principal="alice", k=5, profile=profile, trace=False
    )
    by_text = {s.memory.text: s.components["recency"] for s in result.items}
    assert by_text["kept the spare key under the blue flowerpot"] == pytest.approx(0.5, abs=1e-3)
    assert by_text["kept the spare key under the red flowerpot"] == pytest.approx(0.25, abs=1e-3)


def test_keyword_share_is_squared_and_bounded() -> None:
    assert keyword_share(5.0, 10.0) == pytest.approx(0.25)
    assert keyword_share(10.0, 10.0) == pytest.approx(1.0)
    assert keyword_share(3.0, 0.0) == pytest.approx(0.0)


def test_a_neighbouring_turn_lends_its_topic_to_a_terse_reply() -> None:
    """Relevance folds in the best match of a candidate's session neighbours, and only theirs."""
    at = now()

    def cand(mid: str, sim: float, neighbours: tuple[str, ...] = (), session: str | None = "s") -> Candidate:
        m = Memory(id=mid, tier="episodic", principal="p", text=mid, session=session, created_at=at)
        return Candidate(memory=m, similarity=sim, neighbours=neighbours)

    question = cand("q", 0.8, ("reply",))
    reply = cand("reply", 0.2, ("q",))
    lone = cand("lone", 0.2, (), session="other")
    cset = CandidateSet(
        [question, reply, lone], at, keyword_blend=0.0, neighbour_weight=0.2, session_weight=0.1
    )
    fused = cset.fusion()
    assert fused["neighbour"].tolist() == pytest.approx([0.2, 0.8, 0.0])
    assert fused["session"].tolist() == pytest.approx([0.2, 0.8, 0.0])
    rel = fused["relevance"]
    assert rel[1] == pytest.approx((0.2 + 0.2 * 0.8 + 0.1 * 0.8) / 1.3)
    assert rel[2] == pytest.approx(0.2 / 1.3)
    assert rel[1] > rel[2]
