"""A bare name's kind read from the packaged model against phrases and known names of each kind
(memdeck.core.graph.memory.kinds): names that are in no list still get their kind, and people of many
origins stay people."""

from __future__ import annotations

import json
import logging
from collections import Counter
from importlib import resources

import numpy as np
import pytest

from memdeck.core.filters import Scope
from memdeck.core.graph.extract import normalise_name
from memdeck.core.graph.memory import kinds as kinds_module
from memdeck.core.graph.memory.kinds import known_names, prototypes
from memdeck.core.store import Store
from tests.fakeembed import CountingEmbed

UNLISTED = {
    "Wrocław was rainy all week.": ("Wrocław", "place"),
    "Valletta felt tiny after the cruise.": ("Valletta", "place"),
    "Bitbucket was down all morning.": ("Bitbucket", "product"),
    "Oluwadamilare called about the invoice.": ("Oluwadamilare", "person"),
    "Xiadani sent the draft.": ("Xiadani", "person"),
    "Tjaša booked the venue.": ("Tjaša", "person"),
    "Soraya is back from leave.": ("Soraya", "person"),
}


def _unlisted_kinds(store: Store) -> dict[str, str]:
    listed = {normalise_name(n) for _k, n in known_names()}
    for text, (name, _kind) in UNLISTED.items():
        assert normalise_name(name) not in listed, name  # the model reads it, no list holds it
        store.remember(text, principal="alice")
    return {e["name"]: e["kind"] for e in store.entities(Scope.of("alice"))}


def test_names_in_no_list_get_their_kind_or_none_and_people_stay_people(model_store: Store) -> None:
    kinds = _unlisted_kinds(model_store)
    assert set(kinds) == {name for name, _k in UNLISTED.values()}
    for name, kind in UNLISTED.values():
        assert kinds[name] in (kind, "other"), (name, kinds[name])  # never a wrong kind
    assert {n for n, k in UNLISTED.values() if k == "person"} == {
        n for n, k in kinds.items() if k == "person"
    }
    assert kinds["Wrocław"] == "place"
    # not sure enough to say: a small capital, and a code host that is both a product and a company's
    assert kinds["Valletta"] == kinds["Bitbucket"] == "other"


def test_with_no_learned_weights_the_margins_give_every_unlisted_name_its_kind(
    model_store: Store, real_embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(kinds_module._readers, real_embedder.name, None)  # as for a model with no weights
    assert _unlisted_kinds(model_store) == dict(UNLISTED.values())


def test_the_shipped_weights_are_current_and_another_model_has_none(real_embedder) -> None:
    weights = json.loads(resources.files("memdeck.core").joinpath("data", "kind_weights.json").read_text())
    entry = weights["models"][real_embedder.name]
    # trained on today's phrases, typical sentences and known names: bench/train_kinds.py rewrites them
    assert entry["fingerprint"] == kinds_module.fingerprint()
    assert np.asarray(entry["coef"]).shape == (4, kinds_module.FEATURES) == (4, entry["features"])
    assert kinds_module.reader(real_embedder.name) is not None
    assert kinds_module.reader("another-model-8d") is None


def test_weights_trained_on_other_lists_are_not_used(real_embedder, monkeypatch, caplog) -> None:
    monkeypatch.setattr(kinds_module, "_readers", {})
    monkeypatch.setattr(kinds_module, "fingerprint", lambda: "0" * 16)
    with caplog.at_level(logging.WARNING, logger=kinds_module.__name__):
        assert kinds_module.reader(real_embedder.name) is None
    assert "trained on other lists" in caplog.text


def test_the_learned_kind_is_given_only_when_sure_and_the_margins_agree() -> None:
    read = kinds_module._read
    scores = {"person": 0.30, "place": 0.45, "organisation": 0.20, "product": 0.10}  # the margins: a place
    sure_place = np.array([0.10, 0.80, 0.05, 0.05])
    assert read("person", sure_place, scores, frozenset()) == "place"
    assert read("person", np.array([0.35, 0.45, 0.10, 0.10]), scores, frozenset()) == "other"  # not sure
    sure_org = np.array([0.10, 0.10, 0.75, 0.05])
    assert read("person", sure_org, scores, frozenset()) == "other"  # sure, but the margins say otherwise
    # the kinds the context rules out are left out before the probability is read
    assert read("person", np.array([0.40, 0.50, 0.05, 0.05]), scores, frozenset({"person"})) == "place"
    assert read("person", sure_place, scores, frozenset(kinds_module._KINDS)) == "person"  # nothing left


def test_the_known_names_name_one_kind_each() -> None:
    names = known_names()
    kinds_of: dict[str, set[str]] = {}
    for kind, name in names:
        kinds_of.setdefault(normalise_name(name), set()).add(kind)
    assert {k for v in kinds_of.values() for k in v} == {"person", "place", "organisation", "product"}
    assert [n for n, kinds in kinds_of.items() if len(kinds) > 1] == []
    assert min(Counter(k for k, _n in names).values()) >= 100


def test_the_shipped_name_vectors_are_the_packaged_model_s(real_embedder) -> None:
    protos = prototypes(real_embedder.name, real_embedder.encode)
    for kind in ("person", "place", "organisation", "product"):
        texts = list(protos.name_texts[kind])
        fresh = real_embedder.encode(texts)
        fresh /= np.linalg.norm(fresh, axis=1, keepdims=True)
        assert float(np.min(np.sum(fresh * protos.names[kind], axis=1))) > 0.995, kind


def test_another_model_embeds_phrases_and_names_once_per_process() -> None:
    embed = CountingEmbed()
    calls = embed.calls
    first = prototypes("another-model-8d", embed)
    assert prototypes("another-model-8d", embed) is first
    assert len(calls) == 2 and calls[1] == len(known_names())
    assert sum(len(first.name_texts[k]) for k in first.name_texts) == len(known_names())
    left = first.without({"Lisbon", "Madrid"})
    assert "Lisbon" in first.name_texts["place"] and "Lisbon" not in left.name_texts["place"]
    assert left.names["place"].shape[0] == first.names["place"].shape[0] - 2


def test_from_a_tool_is_a_product_and_from_a_city_stays_a_place(model_store: Store) -> None:
    model_store.remember("The team moved from Trello to Asana last spring.", principal="alice")
    model_store.remember("Shipped the parcel from Rotterdam on Monday.", principal="alice")
    kinds = {e["name"]: e["kind"] for e in model_store.entities(Scope.of("alice"))}
    assert kinds["Trello"] == "product"  # "from" read it as a place, the model as a tool
    assert kinds["Rotterdam"] == "place"


def test_a_name_the_package_knows_takes_its_kind_even_when_people_bear_it_too(model_store: Store) -> None:
    # Kafka is also a writer's name and Figma sounds like a first name: the list decides, not the nearest names.
    listed = {normalise_name(n): k for k, n in known_names()}
    assert listed["kafka"] == listed["figma"] == listed["notion"] == "product"
    for text in ("Kafka lagged again after the upgrade.", "Figma crashed twice.", "Notion was slow today."):
        model_store.remember(text, principal="alice")
    kinds = {e["name"]: e["kind"] for e in model_store.entities(Scope.of("alice"))}
    assert {n: kinds.get(n) for n in ("Kafka", "Figma", "Notion")} == dict.fromkeys(
        ("Kafka", "Figma", "Notion"), "product"
    )
