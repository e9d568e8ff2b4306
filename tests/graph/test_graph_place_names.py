"""The gazetteer (core/data/place_names.txt): a bare name it holds is guessed a place, a first name is not in
it, and a tool after "in" or "through" is a guess the model can make a product while a known place there stays
a place the text states."""

from __future__ import annotations

from importlib import resources

import pytest

from memdeck.core.embed import Embedder
from memdeck.core.graph.extract import extract, name_contexts, normalise_name, place_names
from memdeck.core.graph.memory.kinds import known_names, prototypes, refine_all


def test_the_packaged_file_holds_countries_continents_and_towns_as_lookup_keys() -> None:
    text = resources.files("memdeck.core").joinpath("data", "place_names.txt").read_text("utf-8")
    keys = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert "GeoNames" in text and "CC BY 4.0" in text  # the licence's attribution travels with the data
    assert keys == sorted(set(keys))
    assert all(normalise_name(k) == k for k in keys)  # read as written: no normalising at load
    assert {"japan", "europe", "ljubljana", "tromsø", "łódź", "valparaíso", "valparaiso"} <= place_names()
    assert len(place_names()) > 30_000


def test_names_that_are_also_first_names_are_left_out() -> None:
    places = place_names()
    assert not {"florence", "austin", "victoria", "charlotte", "regina", "eugene"} & places
    shipped_people = {normalise_name(n) for kind, n in known_names() if kind == "person"}
    # the known names hold the labelled sample's names too, which the gazetteer's build does not read
    assert len(shipped_people & places) <= 10


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Ljubljana was rainy all week.", ("Ljubljana", "place", True)),
        ("Valparaíso was foggy again.", ("Valparaíso", "place", True)),
        ("Florence sent the invoice.", ("Florence", "person", True)),  # a first name too: stays a person
        ("Svetlana sent the invoice.", ("Svetlana", "person", True)),
        # a known place after "in" is stated, whatever the model would say
        ("We spent a week in Ljubljana.", ("Ljubljana", "place", False)),
        # any other name after "in" or "through" is a guess: tools live there too
        ("We rewrote the importer in Elixir.", ("Elixir", "place", True)),
        ("The invoices go out through Xero now.", ("Xero", "place", True)),
    ],
)
def test_the_text_alone(text: str, expected: tuple[str, str, bool]) -> None:
    [entity] = extract(text).entities
    assert (entity.name, entity.kind, entity.guessed) == expected


def test_a_project_named_after_a_town_is_still_a_project() -> None:
    kinds = {e.name: e.kind for e in extract("Nadia leads the Orion initiative.").entities}
    assert "orion" in place_names() and kinds["Orion"] == "other"


@pytest.mark.parametrize(
    ("text", "kinds"),
    [
        ("We rewrote the importer in Elixir.", ["product"]),
        ("The backups are kept in Backblaze.", ["product"]),
        ("Ljubljana was rainy all week.", ["place"]),
        ("Auckland to Wellington is a long drive.", ["place", "place"]),
        ("Florence sent the invoice.", ["person"]),
        # the subject of something people and companies do is no place, even one the gazetteer holds
        ("Ljubljana emailed the slides to everyone.", ["organisation"]),
        # what comes "from" a sender: a person or an organisation, not a place
        ("Reviewed feedback on the draft from Hiro.", ["person"]),
        ("She flew in from Kona yesterday.", ["place"]),
    ],
)
def test_the_graph_reads_the_guesses_with_the_model(
    real_embedder: Embedder, text: str, kinds: list[str]
) -> None:
    entities = extract(text).entities
    guessed = [e for e in entities if e.guessed]
    contexts = [c for c in name_contexts(text, entities) if c is not None]
    protos = prototypes(real_embedder.name, real_embedder.encode)
    vectors = real_embedder.encode([e.name for e in guessed])
    got = refine_all(
        [e.kind for e in guessed], vectors, real_embedder.name, real_embedder.encode, protos, contexts
    )
    assert got == kinds


@pytest.mark.parametrize(
    ("text", "ruled_out"),
    [
        ("Reviewed feedback on the draft from Hiro.", {"place"}),
        ("Got two emails from Aviva about the claim.", {"place"}),
        ("She flew in from Kona yesterday.", set()),
        ("A parcel from Kona is on the doorstep.", set()),  # a parcel comes from places too
    ],
)
def test_what_comes_from_a_sender_is_no_place(text: str, ruled_out: set[str]) -> None:
    entities = extract(text).entities
    [context] = [c for c in name_contexts(text, entities) if c is not None]
    assert set(context.exclude) == ruled_out
