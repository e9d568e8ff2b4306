"""Entity resolution by meaning (the real model): a near-identical name joins the entity as an alias; a
different name does not; and never across principals."""

from __future__ import annotations

from memdeck.core import Scope


def test_a_near_identical_name_becomes_an_alias_and_a_different_one_does_not(model_store):
    model_store.add_entity("alice", "Acme Corporation", kind="organisation")
    model_store.add_entity("alice", "Acme Corporation Ltd", kind="organisation")
    model_store.add_entity("alice", "Globex", kind="organisation")
    names = {e["name"]: e for e in model_store.entities(Scope.of("alice"))}
    assert "Acme Corporation Ltd" not in names
    assert "acme corporation ltd" in names["Acme Corporation"]["aliases"]
    assert "Globex" in names


def test_resolution_never_crosses_principals(model_store):
    model_store.add_entity("alice", "Acme Corporation", kind="organisation")
    model_store.add_entity("bob", "Acme Corporation Ltd", kind="organisation")
    model_store.add_entity("bob", "acme corporation", kind="organisation")
    assert [e["name"] for e in model_store.entities(Scope.of("alice"))] == ["Acme Corporation"]
    bob = {e["name"]: e for e in model_store.entities(Scope.of("bob"))}
    assert set(bob) == {"Acme Corporation Ltd"}  # the second name resolved inside bob's graph only
    assert "acme corporation" in bob["Acme Corporation Ltd"]["aliases"]
