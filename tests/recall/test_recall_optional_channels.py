"""The optional parts of relevance, with the real model: the keyword channel read with the previous
memory's words, and the cosine of the query with its person names left out. Each finds a memory that
recall without it leaves out of the top k, on both engines, and is off when its setting is 0."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memdeck.core.records import MemoryInput
from memdeck.core.store import Store
from tests.recall_settings import recall_with

OFF = {"previous_keyword_weight": 0.0, "unnamed_query_weight": 0.0, "score_all_rows": 0}


def _sessions(store: Store, sessions: list[list[str]]) -> None:
    start = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
    items = []
    for s, turns in enumerate(sessions):
        for i, text in enumerate(turns):
            at = start + timedelta(days=s, seconds=i)
            items.append(
                MemoryInput(
                    text=text,
                    tier="episodic",
                    principal="pat",
                    created_at=at,
                    extra={"session": f"chat-{s}", "started_at": at},
                    force=True,
                )
            )
    store.remember_many(items)


def _top(store: Store, query: str, k: int, engine: str = "memory", **settings: object) -> list[str]:
    return [item.memory.text for item in recall_with(store, query, k, engine=engine, **settings).items]


def _has(texts: list[str], words: str) -> bool:
    return any(words in t for t in texts)


@pytest.mark.parametrize("engine", ["memory", "lance"])
def test_an_answer_that_shares_no_word_with_the_query_is_found_through_the_question_before_it(
    model_store: Store, engine: str
) -> None:
    _sessions(
        model_store,
        [
            [
                "Which venue did we choose for the team offsite?",
                "The lakeside lodge in Keswick, it has room for twenty",
                "Let's book it before prices rise",
            ],
            ["The offsite venue shortlist has three hotels"],
            ["The team offsite budget was approved"],
            ["Venue options for the product launch are limited"],
            ["We chose a new team logo"],
            ["The offsite team dinner venue is still open"],
        ],
    )
    query = "Which venue was chosen for the team offsite?"
    before = _top(model_store, query, 3, engine, **OFF)
    assert len(before) == 3 and not _has(before, "lakeside lodge")  # memories that share words win
    with_previous = _top(model_store, query, 3, engine, **{**OFF, "previous_keyword_weight": 0.5})
    assert _has(with_previous, "lakeside lodge")
    assert _has(_top(model_store, query, 3, engine), "lakeside lodge")  # on by default
    # The question itself still comes first: the answer is lifted, not put above it.
    assert with_previous[0] == "Which venue did we choose for the team offsite?"


def test_lancedb_reads_the_previous_memorys_words_only_for_a_scope_it_can_tokenise_per_recall(
    model_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memdeck.core.recall import search

    _sessions(
        model_store,
        [
            [
                "Which venue did we choose for the team offsite?",
                "The lakeside lodge in Keswick, it has room for twenty",
            ],
            ["The offsite venue shortlist has three hotels"],
            ["The team offsite budget was approved"],
            ["Venue options for the product launch are limited"],
        ],
    )
    query = "Which venue was chosen for the team offsite?"

    def keyword(engine: str, **settings: object) -> dict[str, float]:
        result = recall_with(model_store, query, 5, engine=engine, **{**OFF, **settings})
        return {item.memory.text: round(item.channels["keyword"], 6) for item in result.items}

    read = keyword("lance", previous_keyword_weight=0.5)
    alone = keyword("lance")
    assert read != alone  # five rows: read with the previous memory's words, as the memory engine does
    assert read == keyword("memory", previous_keyword_weight=0.5)
    monkeypatch.setattr(search, "LANCE_PREVIOUS_MAX_ROWS", 4)  # now the scope is past the limit
    assert keyword("lance", previous_keyword_weight=0.5) == alone


@pytest.mark.parametrize("engine", ["memory", "lance"])
def test_a_query_naming_a_person_finds_the_memory_about_the_topic_not_the_name(
    model_store: Store, engine: str
) -> None:
    _sessions(
        model_store,
        [
            [
                "Oscar is my manager at work",
                "Oscar asked for the quarterly report by Friday",
                "Oscar and Ruth share an office",
                "Oscar's flight to Berlin was delayed",
                "Oscar studies the budget every Monday",
                "Oscar said the meeting notes are in the shared drive",
                "Spanish lessons on the train every morning are going well",
                "The French course starts in May",
            ]
        ],
    )
    query = "What is Oscar studying these days?"
    before = _top(model_store, query, 5, engine, **OFF)
    assert len(before) == 5 and not _has(before, "Spanish lessons")  # memories naming Oscar fill the top
    unnamed = _top(model_store, query, 5, engine, **{**OFF, "unnamed_query_weight": 0.5})
    assert _has(unnamed, "Spanish lessons")
    assert _has(_top(model_store, query, 5, engine), "Spanish lessons")  # on by default


def test_names_are_left_out_only_when_the_entity_graph_knows_them_as_persons(model_store: Store) -> None:
    from memdeck.core.filters import Scope
    from memdeck.core.graph.memory.model import load_graph
    from memdeck.core.recall.search import without_person_names

    _sessions(
        model_store,
        [["Oscar is my manager at work", "We moved to Lisbon in May 2020", "I bought a Kindle in Lisbon"]],
    )
    kinds = {e.name: e.kind for e in load_graph(model_store.engine, "pat").entities.values()}
    assert kinds.get("Oscar") == "person"
    others = sorted(n for n, kind in kinds.items() if kind != "person" and n.istitle() and " " not in n)
    assert others, kinds  # a capitalised name the graph knows as something else
    scope = Scope.of("pat")
    other = others[0]
    assert without_person_names(model_store.engine, scope, f"What is Oscar's plan for {other}?") == (
        f"What is plan for {other}?"
    )
    assert (
        without_person_names(model_store.engine, scope, "What did Maria say?") == "What did Maria say?"
    )  # unknown


def test_the_settings_are_checked(model_store: Store) -> None:
    from memdeck.core.errors import MemdeckError

    _sessions(model_store, [["a note"]])
    for key, value in [
        ("previous_keyword_weight", 2),
        ("unnamed_query_weight", "x"),
        ("score_all_rows", -1),
        ("time_cue_weight", 1.5),
    ]:
        with pytest.raises(MemdeckError, match=f"recall.{key}"):
            _top(model_store, "note", 3, **{key: value})
