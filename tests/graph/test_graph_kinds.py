"""A bare name's kind read from the packaged model when the text gives no cue: the graph stores a city as a
place and a bank as an organisation, where the text-only extractor can only guess "person"."""

from __future__ import annotations

from memdeck.core.filters import Scope
from memdeck.core.graph.extract import extract
from memdeck.core.store import Store

TEXTS = [
    "Honestly Marseille was the highlight of the whole trip.",
    "Barclays called about the mortgage again.",
    "Svetlana called about dinner.",
    "Tokyo felt enormous after a week of quiet.",
]


def _kinds(store: Store) -> dict[str, str]:
    return {e["name"]: e["kind"] for e in store.entities(Scope.of("alice"))}


# What the text alone guesses: a place the gazetteer (core/data/place_names.txt) holds, else a person.
TEXT_GUESSES = {"Marseille": "place", "Barclays": "person", "Svetlana": "person", "Tokyo": "place"}


def test_the_text_alone_guesses_a_kind_for_a_bare_name() -> None:
    for text in TEXTS:
        [entity] = extract(text).entities
        assert entity.guessed and entity.kind == TEXT_GUESSES[entity.name], text


def test_the_model_reads_places_and_organisations_and_keeps_people(model_store: Store) -> None:
    for text in TEXTS:
        model_store.remember(text, principal="alice")
    assert _kinds(model_store) == {
        "Marseille": "place",
        "Barclays": "organisation",
        "Svetlana": "person",
        "Tokyo": "place",
    }


def test_a_kind_the_text_states_is_not_second_guessed(model_store: Store) -> None:
    # "works at" makes Barclays an organisation and Marseille, after "in", a place: neither is a guess.
    [barclays, marseille] = extract("Svetlana works at Barclays in Marseille.").entities[1:]
    assert not barclays.guessed and not marseille.guessed
    model_store.remember("Mr Tokyo is our new neighbour.", principal="alice")
    assert _kinds(model_store)["Mr Tokyo"] == "person"  # an honorific says person, whatever the name


def test_without_a_model_the_guess_stays(store: Store) -> None:
    for text in TEXTS:
        store.remember(text, principal="alice")
    assert _kinds(store) == TEXT_GUESSES  # the hash embedder carries no meaning to read


def test_meetings_and_quarters_are_neither_people_nor_companies() -> None:
    extraction = extract("Standup moved to 9:30; the Q3 review with Priya follows the All-Hands.")
    kinds = {e.name: (e.kind, e.guessed) for e in extraction.entities}
    assert kinds["Standup"] == ("other", False)
    assert kinds["All-Hands"] == ("other", False)
    assert kinds["Q3"] == ("date", False)
    assert {
        e.name: e.kind for e in extract("Revenue grew in Q2 2025 and the FY2026 budget is set.").entities
    }["Q2 2025"] == "date"


def test_at_and_from_are_only_guesses_the_model_may_turn(model_store: Store) -> None:
    # "at X" reads as an organisation and "from X" as a place, but a town and a company come after both
    [_, town] = extract("Bjorn spent the whole weekend at Brighton.").entities
    assert town.kind == "organisation" and town.guessed
    model_store.remember("Bjorn spent the whole weekend at Brighton.", principal="alice")
    model_store.remember("Juliana got a job offer from Nubank.", principal="alice")
    model_store.remember("Amira flew in from Lisbon.", principal="alice")
    model_store.remember("Kofi is a nurse at Barclays.", principal="alice")
    kinds = _kinds(model_store)
    assert kinds["Brighton"] == "place"
    assert kinds["Nubank"] == "organisation"
    assert kinds["Lisbon"] == "place"
    assert kinds["Barclays"] == "organisation"


def test_a_kind_stated_anywhere_in_a_batch_beats_a_guess(store: Store) -> None:
    from memdeck.core.records import MemoryInput

    texts = [
        "Investigated why Zephyrine metrics dropped after the upgrade.",  # a bare name: guessed a person
        "Credentials for the Zephyrine service are in the vault.",  # "service" says a product
        "Zephyrine onboarding slipped again.",
    ]
    for order, principal in ((texts, "alice"), (texts[::-1], "bob")):
        store.remember_many([MemoryInput(t, "episodic", principal) for t in order])
        assert _kinds_of(store, principal) == {"Zephyrine": "product"}
    store.remember_many([MemoryInput(t, "episodic", "carol") for t in (texts[0], texts[2])])
    assert _kinds_of(store, "carol") == {"Zephyrine": "person"}  # nothing states it: the guess stands


def _kinds_of(store: Store, principal: str) -> dict[str, str]:
    return {e["name"]: e["kind"] for e in store.entities(Scope.of(principal))}
