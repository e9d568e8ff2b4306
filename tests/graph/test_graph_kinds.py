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


def test_the_text_alone_guesses_person_for_a_bare_name() -> None:
    for text in TEXTS:
        [entity] = extract(text).entities
        assert entity.kind == "person" and entity.guessed, text


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
    assert set(_kinds(store).values()) == {"person"}  # the hash embedder carries no meaning to read
