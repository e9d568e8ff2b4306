"""The time cue: a query that asks when prefers the memories that say when, on both engines, with the
real model; nothing changes for other queries, and no unrelated memory is carried past the floor."""

from __future__ import annotations

import pytest

from memdeck.core.filters import Scope
from memdeck.core.recall.explain import explain, render
from memdeck.core.recall.timecue import asks_for_time, states_time
from memdeck.core.store import Store
from tests.recall_settings import recall_with

NOTES = [
    "The dentist on Elm Street is good with nervous patients",
    "My dentist says I should floss more and cut down on coffee",
    "Went for a dentist check-up yesterday, no fillings needed",
    "The dentist's receptionist is called Moira",
    "Booked the car in for its MOT next Tuesday",
    "The boiler was serviced in March",
    "Our neighbour's dog barks at the postman",
    "Renewed my passport, the new one came in the post",
]
CHECK_UP = "Went for a dentist check-up yesterday, no fillings needed"


@pytest.mark.parametrize(
    "query",
    [
        "When did I last go to the dentist?",
        "when is the parents' evening",
        "What year did we move to Leeds?",
        "Which month is the wedding in?",
        "How long ago did I renew my passport?",
        "Do you remember when the boiler broke?",
        "Can you tell me when the bins go out?",
        "So when does the lease end?",
        "What time does the pool open on Sundays?",
        "When did we meet, do you remember?",
        "When I was a kid, when did I learn to swim?",  # a clause first, then a question that asks when
        "When, exactly, did the lease start?",
    ],
)
def test_questions_that_ask_when(query: str) -> None:
    assert asks_for_time(query)


@pytest.mark.parametrize(
    "query",
    [
        "Where is the dentist?",
        "What did she say when it rained?",  # "when" joins two clauses: the question asks what
        "When I was a kid, what did I like to eat?",  # a "when" clause first, then the question
        "When we were in Lisbon, which hotel was it?",
        "when the boiler broke, who fixed it",
        "Who looks after the dog at the weekend?",
        "What does the boiler engineer charge?",
        "dentist",
        "",
    ],
)
def test_questions_that_do_not_ask_when(query: str) -> None:
    assert not asks_for_time(query)


@pytest.mark.parametrize(
    "text",
    [
        "Went to the dentist yesterday",
        "Last week was hectic at work",
        "We got the keys two months ago",
        "See you on Friday then",
        "Meeting moved to March 3rd",
        "Back in 2019 we still lived in Leeds",
        "Call the plumber at 5pm",
        "The flight leaves at 07:45",
        "Our anniversary is in May",
        "Invoice dated 2024-03-05",
        "Born 12/05/1990",
        "It was ages ago now",
        "Dentist on 5 Jan 2024",
        "Rent due Dec. 12",
    ],
)
def test_texts_that_state_a_time(text: str) -> None:
    assert states_time(text)


@pytest.mark.parametrize(
    "text",
    [
        "The dentist is on Elm Street",
        "We may go if it stops raining",  # "may" the verb, not the month
        "The band will march through the square",
        "Python 3.11 is installed on the server",
        "Split the bill 50/50",
        "Flat 12/3 has a blue door",
        "Chicago has great pizza",
        "Jan said the boiler is fixed",  # a name, not January
        "",
        None,
    ],
)
def test_texts_that_state_no_time(text: str | None) -> None:
    assert not states_time(text)


def _top(store: Store, query: str, k: int, engine: str, **settings: object) -> list[tuple[str, float]]:
    result = recall_with(store, query, k, engine=engine, **settings)
    return [(item.memory.text, round(item.score, 6)) for item in result.items]


@pytest.fixture
def notes(model_store: Store) -> Store:
    model_store.remember_many(
        [{"text": t, "tier": "semantic", "principal": "pat", "force": True} for t in NOTES]
    )
    return model_store


@pytest.mark.parametrize("engine", ["memory", "lance"])
def test_a_when_question_finds_the_memory_that_says_when(notes: Store, engine: str) -> None:
    query = "When did I last go to the dentist?"
    off = [t for t, _ in _top(notes, query, 3, engine, time_cue_weight=0.0)]
    assert CHECK_UP in off and off[0] != CHECK_UP  # memories about the dentist that say no time come first
    on = [t for t, _ in _top(notes, query, 3, engine)]  # on by default
    assert on[0] == CHECK_UP
    assert set(on) == set(off)  # the same memories, in another order


@pytest.mark.parametrize("engine", ["memory", "lance"])
def test_a_question_that_does_not_ask_when_ranks_as_without_the_cue(notes: Store, engine: str) -> None:
    for query in ["Where is the dentist?", "dentist receptionist", "What happened with the car?"]:
        assert _top(notes, query, 5, engine) == _top(notes, query, 5, engine, time_cue_weight=0.0)


@pytest.mark.parametrize("engine", ["memory", "lance"])
def test_the_cue_carries_no_unrelated_memory_past_the_floor(notes: Store, engine: str) -> None:
    # "The boiler was serviced in March" states a time and shares nothing with the question: raised by
    # the cue it would clear the floor, judged without the cue it does not.
    query = "When did I renew my passport?"
    on = [t for t, _ in _top(notes, query, 5, engine)]
    assert on == [t for t, _ in _top(notes, query, 5, engine, time_cue_weight=0.0)]
    assert on[0] == "Renewed my passport, the new one came in the post"
    assert "The boiler was serviced in March" not in on


def test_both_engines_rank_and_score_a_when_question_alike(notes: Store) -> None:
    for query in [
        "When did I last go to the dentist?",
        "When is the car's MOT?",
        "what month was the boiler serviced",
    ]:
        assert _top(notes, query, 8, "memory") == _top(notes, query, 8, "lance")


def test_an_edited_memory_is_read_again(notes: Store) -> None:
    query = "When did I last go to the dentist?"
    assert _top(notes, query, 1, "memory")[0][0] == CHECK_UP  # the index has read every text's cue
    check_up = next(m for m in notes.list(Scope.of("pat")) if m.text == CHECK_UP)
    notes.edit(check_up.id, "Went for a dentist check-up, no fillings needed")
    receptionist = next(m for m in notes.list(Scope.of("pat")) if "receptionist" in m.text)
    notes.edit(receptionist.id, "Met the dentist's new receptionist on Monday")
    for engine in ("memory", "lance"):
        assert _top(notes, query, 1, engine)[0][0] == "Met the dentist's new receptionist on Monday"


def test_explain_says_what_the_cue_did(notes: Store) -> None:
    query = "When did I last go to the dentist?"
    by_text = {m.text: m.id for m in notes.list(Scope.of("pat"))}
    raised = explain(notes.engine, query, by_text[CHECK_UP], Scope.of("pat"))
    assert raised["time_cue"] == {"states_time": True, "match_factor": 1.5}
    assert raised["status"] == "returned" and raised["rank"] == 1
    assert "asks when and this memory states a time" in render(raised)
    plain = explain(
        notes.engine, query, by_text["The dentist's receptionist is called Moira"], Scope.of("pat")
    )
    assert plain["time_cue"] == {"states_time": False, "match_factor": 1.0}
    assert "states no time" in render(plain)
    other = explain(notes.engine, "Where is the dentist?", by_text[CHECK_UP], Scope.of("pat"))
    assert "time_cue" not in other and "time:" not in render(other)
