"""A guessed name's kind read with the words around it (memdeck.core.graph.extract.name_contexts and
memdeck.core.graph.memory.kinds): what a determiner, a verb or a joined name says of it, and its sentence
compared with typical sentences of each kind, on top of the name's own embedding."""

from __future__ import annotations

import pytest

from memdeck.core.filters import Scope
from memdeck.core.graph.extract import MASK, NameContext, extract, name_contexts, normalise_name
from memdeck.core.graph.memory import kinds as kinds_module
from memdeck.core.graph.memory.kinds import known_names, prototypes, refine_all
from memdeck.core.store import Store
from tests.fakeembed import CountingEmbed


def _contexts(text: str) -> dict[str, NameContext | None]:
    entities = extract(text).entities
    return {e.name: c for e, c in zip(entities, name_contexts(text, entities), strict=True)}


def _context(text: str, name: str) -> NameContext:
    found = _contexts(text)[name]
    assert found is not None, (text, name)
    return found


def test_the_masked_sentence_is_the_name_s_own_sentence_with_the_name_masked() -> None:
    contexts = _contexts("I met Ana yesterday. The Hartwell office closes at four!")
    hartwell = contexts["Hartwell"]
    assert hartwell is not None and hartwell.masked == f"The {MASK} office closes at four!"
    assert _contexts("Tell me what Ondine's brother thinks.")["Ondine"] == NameContext(
        f"Tell me what {MASK}'s brother thinks."
    )


def test_a_kind_the_text_states_has_no_context_to_read() -> None:
    contexts = _contexts("Ana works at Barclays in Marseille on Monday.")
    assert contexts["Barclays"] is None and contexts["Marseille"] is None and contexts["Monday"] is None


def test_a_name_after_a_determiner_is_not_a_person_but_a_family_is() -> None:
    assert _context("The Hartwell office closes at four.", "Hartwell").exclude == {"person"}
    assert _context("Our Quillon dashboards are slow.", "Quillon").exclude == {"person"}
    assert _context("We had dinner with the Okonkwos.", "Okonkwos").exclude == frozenset()
    # "that" and "her" are also a conjunction and a pronoun: they say nothing of the name after them
    assert _context("It was the race that Ondine won.", "Ondine").exclude == frozenset()


def test_the_subject_of_what_people_do_and_the_object_of_asking_are_not_places() -> None:
    assert _context("Ondine said the flat is free.", "Ondine").exclude == {"place"}
    assert _context("Please remind Ondine about the rent.", "Ondine").exclude == {"place"}
    # a place may be the subject of a linking verb or of "has"
    assert _context("Corinth felt empty in the rain.", "Corinth").exclude == frozenset()
    assert _context("Corinth has two good bakeries.", "Corinth").exclude == frozenset()


def test_joined_names_share_a_group_and_a_kind_the_text_states_for_one_of_them() -> None:
    listed = _contexts("Sibiu, Brașov and Sighișoara are on the route.")
    groups = {c.group for c in listed.values() if c is not None}
    assert len(groups) == 1 and None not in groups
    switched = _contexts("We switched from Jenkins to Woodpecker last month.")
    assert switched["Jenkins"] is None  # "switched from" states a product
    assert switched["Woodpecker"] is not None and switched["Woodpecker"].partner == "product"
    apart = "Ondine thinks Corvin is right."
    assert _context(apart, "Ondine").group is None and _context(apart, "Corvin").group is None


# Sentences where the name alone misleads the margins and the words around it do not; none of the names is a
# known name except Verona, a known place that the verb after it makes a person.
CONTEXT_DECIDES = {
    "The Tórshavn office closes at four.": ("Tórshavn", "place"),
    "We switched from Jenkins to Woodpecker last month.": ("Woodpecker", "product"),
    "Adelaide said she would bring the cake.": ("Adelaide", "person"),
    "Siena thinks the draft is fine.": ("Siena", "person"),
    "Verona emailed the slides.": ("Verona", "person"),
    "Pelješac has lovely vineyards and quiet beaches.": ("Pelješac", "place"),
}


def _read_alone_and_in_context(embedder) -> dict[str, tuple[str, str]]:
    """Per case's name: the kind refine_all gives from the name alone and with its context."""
    protos = prototypes(embedder.name, embedder.encode)
    out = {}
    for text in CONTEXT_DECIDES:
        entities = extract(text).entities
        guessed = [(e, c) for e, c in zip(entities, name_contexts(text, entities), strict=True) if e.guessed]
        names, kinds = [e.name for e, _c in guessed], [e.kind for e, _c in guessed]
        vectors = embedder.encode(names)
        contexts = [c for _e, c in guessed]
        alone = refine_all(kinds, vectors, embedder.name, embedder.encode, protos)
        read = refine_all(kinds, vectors, embedder.name, embedder.encode, protos, contexts)
        out.update({n: (a, r) for n, a, r in zip(names, alone, read, strict=True)})
    return out


def test_the_words_around_a_name_change_what_the_margins_read_from_its_name_alone(
    real_embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(kinds_module._readers, real_embedder.name, None)  # as for a model with no weights
    listed = {normalise_name(n): k for k, n in known_names()}
    assert [listed.get(normalise_name(n)) for n, _k in CONTEXT_DECIDES.values()] == [None] * 4 + [
        "place",
        None,
    ]
    got = _read_alone_and_in_context(real_embedder)
    for name, kind in CONTEXT_DECIDES.values():
        alone, read = got[name]
        assert alone != kind and read == kind, (name, alone, read)


def test_the_learned_reading_gives_a_kind_the_context_supports_or_none(real_embedder) -> None:
    assert kinds_module.reader(real_embedder.name) is not None
    got = _read_alone_and_in_context(real_embedder)
    for name, kind in CONTEXT_DECIDES.values():
        assert got[name][1] in (kind, "other"), (name, got[name])  # never a wrong kind
    # the words around the name give its kind where the name alone gave none or a wrong one
    assert got["Woodpecker"] == ("other", "product") and got["Adelaide"] == ("other", "person")
    assert got["Verona"] == ("place", "person")
    assert got["Siena"] == (
        "place",
        "other",
    )  # a known place that "thinks": not a place, and not sure it is a person


def _never_wrong(kinds: dict[str, str]) -> None:
    for name, kind in CONTEXT_DECIDES.values():
        assert kinds.get(name) in (kind, "other"), (name, kinds.get(name))
    assert {n: kinds[n] for n in ("Woodpecker", "Adelaide", "Verona")} == {
        "Woodpecker": "product",
        "Adelaide": "person",
        "Verona": "person",
    }


def test_the_graph_reads_the_context_when_it_indexes_a_memory(model_store: Store) -> None:
    for text in CONTEXT_DECIDES:
        model_store.remember(text, principal="alice")
    _never_wrong({e["name"]: e["kind"] for e in model_store.entities(Scope.of("alice"))})


def test_names_of_several_memories_indexed_together_keep_their_own_contexts(model_store: Store) -> None:
    model_store.remember_many([{"text": text, "principal": "bob"} for text in CONTEXT_DECIDES])
    _never_wrong({e["name"]: e["kind"] for e in model_store.entities(Scope.of("bob"))})


def test_a_kind_not_known_takes_the_kind_a_later_memory_states(model_store: Store) -> None:
    model_store.remember("The Tórshavn office closes at four.", principal="alice")
    before = {e["name"]: e["kind"] for e in model_store.entities(Scope.of("alice"))}
    assert before["Tórshavn"] == "other"  # the office's town or its company: not sure enough to say
    model_store.remember("We flew to Tórshavn for the launch.", principal="alice")
    after = {e["name"]: e for e in model_store.entities(Scope.of("alice"))}
    assert after["Tórshavn"]["kind"] == "place"  # "flew to" states it
    model_store.remember("Adelaide said she would bring the cake.", principal="alice")
    assert {e["name"]: e["kind"] for e in model_store.entities(Scope.of("alice"))}["Adelaide"] == "person"
    model_store.remember("We flew to Adelaide in May.", principal="alice")
    kinds = {e["name"]: e["kind"] for e in model_store.entities(Scope.of("alice"))}
    assert kinds["Adelaide"] == "person"  # a kind read before is not replaced: only "other" is


def test_without_contexts_refine_all_reads_the_name_alone() -> None:
    embed = CountingEmbed()
    calls = embed.calls
    protos = prototypes("context-test-8d", embed)
    vectors = embed(["Ondine", "Corvin"])
    before = len(calls)
    refine_all(["person", "person"], vectors, "context-test-8d", embed, protos)
    assert len(calls) == before  # no sentence embedded without contexts
    refine_all(
        ["person", "person"],
        vectors,
        "context-test-8d",
        embed,
        protos,
        [NameContext(f"{MASK} said hi."), None],
    )
    assert calls[before:] == [1]  # one batch, one masked sentence
