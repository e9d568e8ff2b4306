"""Memory types judged with the embedding model: the memory's own vector against the shipped labelled
examples arbitrates the wording rules (memdeck.core.memtypes)."""

from __future__ import annotations

import numpy as np
import pytest

from memdeck.core.memtypes import (
    MEMORY_TYPES,
    example_texts,
    examples_for,
    infer_type,
    packaged_model,
    rule_type,
)
from tests.fakeembed import CountingEmbed

# "X is ..." sentences the fact rule takes for facts, which say a decision or a failure.
NOT_FACTS = [
    "The release is delayed to next quarter, per the steering group.",
    "The login page is broken on Firefox since this morning's deploy.",
    "The office move is cancelled; we stay in the current building.",
]


def test_an_x_is_y_decision_or_failure_is_not_stored_as_a_fact(model_store):
    for text in NOT_FACTS:
        assert rule_type(text) == "fact"  # the wording rule alone would say fact
        written = model_store.remember(text, principal="alice").memory
        assert written is not None
        assert model_store.get(written.id).type != "fact", text


def test_plain_wordings_keep_their_type_with_the_model(model_store):
    cases = {
        "Kofi is the treasurer of the rowing club.": "fact",
        "I prefer aisle seats on trains.": "preference",
        "We decided to host the wiki ourselves.": "decision",
        "KeyError: 'customer_id' in the nightly export": "error",
        "Always answer in French when Amélie writes.": "instruction",
    }
    for text, expected in cases.items():
        written = model_store.remember(text, principal="alice").memory
        assert written is not None
        assert model_store.get(written.id).type == expected, text


def test_the_model_types_a_clear_text_no_rule_reads(model_store):
    text = "The nightly backup job is stuck on the upload step again."
    assert rule_type(text) is None
    written = model_store.remember(text, principal="alice").memory
    assert written is not None and model_store.get(written.id).type == "error"


def test_the_writer_s_type_wins_over_the_model(model_store):
    written = model_store.remember(NOT_FACTS[1], principal="alice", type="fact").memory
    assert written is not None and model_store.get(written.id).type == "fact"


def test_without_a_semantic_model_the_rules_alone_answer(store):
    written = store.remember(NOT_FACTS[0], principal="alice").memory
    assert written is not None and store.get(written.id).type == "fact"


def test_the_shipped_vectors_are_the_packaged_model_s_vectors_of_the_examples(real_embedder):
    assert real_embedder.name == packaged_model()
    shipped = examples_for(packaged_model(), None)
    assert shipped is not None
    texts = example_texts()
    assert shipped.types == tuple(t for t, _x in texts)
    assert set(shipped.types) == set(MEMORY_TYPES)
    fresh = real_embedder.encode([x for _t, x in texts])
    fresh /= np.linalg.norm(fresh, axis=1, keepdims=True)
    assert float(np.min(np.sum(fresh * shipped.vectors, axis=1))) > 0.995


def test_another_model_embeds_the_examples_once_per_process():
    embed = CountingEmbed()
    calls = embed.calls
    first = examples_for("some-other-model-8d", embed)
    again = examples_for("some-other-model-8d", embed)
    assert first is again and calls == [len(example_texts())]
    assert examples_for("a-model-never-embedded", None) is None


@pytest.mark.parametrize("vector", [np.zeros(384, dtype=np.float32), np.ones(12, dtype=np.float32)])
def test_a_vector_that_cannot_be_compared_leaves_the_rules(vector):
    text = NOT_FACTS[0]
    assert infer_type(text, vector, packaged_model()) == rule_type(text) == "fact"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The user prefers short answers with links.", "preference"),
        ("Would rather fly out on Friday evening than Saturday morning.", "preference"),
        ("User decided to switch banks after the fees went up.", "decision"),
        ("Before merging, run the linter and the type checker.", "instruction"),
        ("Respond with a table when comparing prices.", "instruction"),
        ("The scanner won't connect to the office wifi.", "error"),
        ("2026-11-02 08:00:01 ERROR sync: token expired", "error"),
        ("Deliveries are almost always late on Mondays.", "observation"),
        ("Moved the servers to the new rack at 14:30 yesterday.", "event"),
        # a look-alike: a command word that names something is not an instruction
        ("Run is the name of the shop by the station.", "fact"),
        ("The error rate is 2% on a normal day.", "fact"),
    ],
)
def test_more_everyday_wordings_are_read_by_the_rules(text, expected):
    assert rule_type(text) == expected
