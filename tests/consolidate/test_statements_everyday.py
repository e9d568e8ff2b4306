"""What a person tells an agent in a session, in everyday words, becomes a fact without any agent's help: a
diet or a condition ("I'm vegetarian, so ..."), a preference with a clause after it ("..., never after
4pm"), what they never eat or drink, their household, the name they go by; a title inside a sentence
("Dr. Okafor") does not end it. Passing states, questions, hypotheticals and negated identities stay out,
and an agent's "ok thanks" is not stored at all."""

from __future__ import annotations

import pytest

from memdeck.core.consolidate import consolidate
from memdeck.core.consolidate.sentences import split_sentences
from memdeck.core.consolidate.statements import explicit_statements
from memdeck.core.filters import Scope
from memdeck.core.sessions import AgentSession
from memdeck.core.store import Store

FOUND = [
    ("User: I'm vegetarian, so no meat in the meal plan please.", "I am vegetarian", "personal"),
    ("User: I prefer morning meetings, never after 4pm.", "I prefer morning meetings", "preference"),
    ("User: I'm a night owl.", "I am a night owl", "personal"),
    ("User: I am lactose intolerant.", "I am lactose intolerant", "personal"),
    ("User: I don't drink coffee.", "I do not drink coffee", "preference"),
    ("User: I never eat pork.", "I do not eat pork", "preference"),
    ("User: I have two kids, Mia and Leo.", "I have two kids", "personal"),
    ("User: I have a cat named Luna.", "I have a cat named Luna", "personal"),
    ("User: call me Sam.", "My preferred name is Sam", "attribute"),
    (
        "User: my dentist is Dr. Okafor at Smile Dental.",
        "My dentist is Dr. Okafor at Smile Dental",
        "attribute",
    ),
    ("User: I like tea, not coffee.", "I like tea", "preference"),
]

NOTHING = [
    "User: I am tired.",
    "User: I'm not vegetarian.",
    "User: I was vegetarian for a year.",
    "User: If I were vegan I would miss cheese.",
    "User: Do I have two kids?",
    "User: I have two meetings today.",
    "User: I don't like pizza.",
    "User: I never eat at that place.",
    "User: I don't drink much.",
    "User: I don't drink it.",
    "User: I'm a bit busy right now.",
]


@pytest.mark.parametrize(("text", "fact", "kind"), FOUND)
def test_an_everyday_statement_becomes_one_fact(text: str, fact: str, kind: str) -> None:
    assert [(s.kind, s.text) for s in explicit_statements(text)] == [(kind, fact)]


@pytest.mark.parametrize("text", NOTHING)
def test_a_passing_state_or_a_negation_gives_nothing(text: str) -> None:
    assert explicit_statements(text) == []


@pytest.mark.parametrize(
    ("text", "pieces"),
    [
        ("My dentist is Dr. Okafor. He is kind.", ["My dentist is Dr. Okafor.", "He is kind."]),
        ("We use e.g. Redis. Then we cache.", ["We use e.g. Redis.", "Then we cache."]),
        ("J. R. Smith wrote it. Fine!", ["J. R. Smith wrote it.", "Fine!"]),
        ("Meet at 10 a.m. tomorrow. OK?", ["Meet at 10 a.m. tomorrow.", "OK?"]),
        ("I said no. Then I left.", ["I said no.", "Then I left."]),
        ("first line\nsecond line", ["first line", "second line"]),
    ],
)
def test_sentences_end_at_their_end_not_after_a_title_or_an_initial(text: str, pieces: list[str]) -> None:
    assert [p.strip() for p in split_sentences(text)] == pieces


def test_a_session_with_no_agent_help_leaves_its_facts_and_no_noise(model_store: Store) -> None:
    session = AgentSession(model_store, "rio", "planner", "s1")
    lines = [
        "User: hey, can you help me plan the week?",
        "User: I'm vegetarian, so no meat in the meal plan please.",
        "User: I prefer morning meetings, never after 4pm.",
        "User: my dentist is Dr. Okafor at Smile Dental.",
        "Assistant: Got it.",
        "User: ok thanks",
    ]
    actions = [session.remember(line, tier="episodic").action for line in lines]
    assert actions == ["added"] * 4 + ["skipped"] * 2  # an agent's acknowledgements are not stored
    session.close()
    consolidate(model_store.engine, "rio")
    facts = {m.text for m in model_store.list(scope=Scope.of("rio"), tier="semantic")}
    assert facts == {
        "I am vegetarian",
        "I prefer morning meetings",
        "My dentist is Dr. Okafor at Smile Dental",
    }
