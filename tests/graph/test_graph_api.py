"""The graph API, CLI and explicit entities: resolution, endpoint validation, related, path, isolation."""

from __future__ import annotations

import json

import pytest

from memdeck.cli import main as cli_main
from memdeck.core import MemdeckError, NotFound, Scope


def test_names_resolve_case_insensitively_and_by_alias(store):
    store.remember("Margaret Hale moved to Milton.", principal="alice")
    store.remember("margaret hale likes the sea.", principal="alice", entities=["margaret hale"])
    store.add_entity("alice", "Margaret Hale", aliases=["Maggie"])
    people = [e for e in store.entities(Scope.of("alice")) if e["name"] == "Margaret Hale"]
    assert len(people) == 1 and people[0]["mentions"] == 2
    assert store.entity("alice", "MAGGIE")["name"] == "Margaret Hale"


def test_add_relation_needs_both_endpoints_of_the_same_principal(store):
    store.add_entity("alice", "Acme", kind="organisation")
    store.add_entity("bob", "Zed", kind="person")
    with pytest.raises(MemdeckError, match="no entity 'Zed'"):
        store.add_relation("alice", "Acme", "employs", "Zed")
    with pytest.raises(MemdeckError, match="unknown entity kind"):
        store.add_entity("alice", "X", kind="spaceship")
    with pytest.raises(MemdeckError, match="two different"):
        store.add_relation("alice", "Acme", "owns", "acme")


def test_remember_with_entities_and_relations_validates_before_writing(store):
    with pytest.raises(MemdeckError, match="not an entity"):
        store.remember(
            "A note.",
            principal="alice",
            relations=[{"subject": "Ann", "predicate": "knows", "object": "Ben"}],
        )
    assert store.count(Scope.of("alice")) == 0
    mem = store.remember(
        "A note about a job.",
        principal="alice",
        entities=[{"name": "Ann", "kind": "person"}, "Globex"],
        relations=[{"subject": "Ann", "predicate": "worked at", "object": "Globex", "valid_until": "2019"}],
    ).memory
    rel = store.entity("alice", "ann")["relations"][0]
    assert (rel["subject"], rel["predicate"], rel["object"], rel["valid_until"]) == (
        "Ann",
        "worked at",
        "Globex",
        "2019",
    )
    assert rel["sources"] == [mem.id]


def test_related_to_a_depth_and_path(store):
    for name in ("Ann", "Ben", "Cal", "Dee"):
        store.add_entity("alice", name, kind="person")
    store.add_relation("alice", "Ann", "knows", "Ben")
    store.add_relation("alice", "Ben", "knows", "Cal")
    store.add_relation("alice", "Cal", "knows", "Dee")
    assert [e["name"] for e in store.related("alice", "ann", 1)["related"]] == ["Ben"]
    two = store.related("alice", "ann", 2)["related"]
    assert [(e["name"], e["depth"]) for e in two] == [("Ben", 1), ("Cal", 2)]
    found = store.path("alice", "ANN", "dee")
    assert found["found"] and [s["entity"]["name"] for s in found["path"]] == ["Ann", "Ben", "Cal", "Dee"]
    assert found["path"][0]["via"] is None and found["path"][1]["via"]["predicate"] == "knows"


def test_another_principals_entities_are_never_traversed(store):
    store.add_entity("alice", "Ann")
    store.add_entity("alice", "Hub")
    store.add_relation("alice", "Ann", "visits", "Hub")
    store.add_entity("bob", "Hub")
    store.add_entity("bob", "Secret Contact")
    store.add_relation("bob", "Hub", "hides", "Secret Contact")
    reached = store.related("alice", "Ann", 6)["related"]
    assert [e["name"] for e in reached] == ["Hub"]
    with pytest.raises(NotFound):
        store.path("alice", "Ann", "Secret Contact")
    assert {e["principal"] for e in store.entities(Scope.of("alice"))} == {"alice"}
    hostile = "nobody' OR '1'='1"
    assert store.entities(Scope.of(hostile)) == []


def test_cli_entities_related_path_json_and_errors(store, capsys):
    store.add_entity("alice", "Ann")
    store.add_entity("alice", "Ben")
    store.add_relation("alice", "Ann", "knows", "Ben")
    store.close()
    base = ["--store", str(store.root)]
    assert cli_main([*base, "entities", "--principal", "alice", "--json"]) == 0
    assert {e["name"] for e in json.loads(capsys.readouterr().out)} == {"Ann", "Ben"}
    assert cli_main([*base, "related", "ann", "--principal", "alice", "--depth", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["related"][0]["name"] == "Ben"
    assert cli_main([*base, "path", "Ann", "BEN", "--principal", "alice", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["found"] is True
    assert cli_main([*base, "related", "Nobody", "--principal", "alice"]) != 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no entity 'Nobody'" in err
    assert cli_main([*base, "related", "Ann", "--principal", "alice", "--depth", "40"]) != 0
    assert "depth" in capsys.readouterr().err


def test_analytics_most_connected_per_tier_and_orphans(store):

    store.remember("Alice worked at Acme Corp.", tier="episodic", principal="alice")
    store.remember("Bob met Alice.", tier="semantic", principal="alice")
    store.remember("Carol lives in Paris.", tier="semantic", principal="bob")
    store.add_entity("alice", "Lonely")
    store.add_relation("alice", "Alice", "knows", "Bob")
    stats = store.analytics(Scope.of("alice")).graph()
    top = stats["most_connected"][0]
    assert (
        top["name"] == "Alice" and top["relations"] == len(store.entity("alice", "Alice")["relations"]) >= 1
    )
    assert stats["per_tier"] == {"episodic": 2, "semantic": 2}
    assert [o["name"] for o in stats["orphans"]] == ["Lonely"]
    assert {e["principal"] for e in stats["most_connected"]} == {"alice"}


def test_mcp_remember_with_entities_and_the_graph_tools_stay_in_the_principal(memdeck_home, tmp_path):
    from memdeck.cli.mcp import MAX_GRAPH_ITEMS, _Backend

    (memdeck_home / "config.toml").write_text('[embedding]\nmodel = "hash-384"\n')
    backend = _Backend("alice", "assistant", tmp_path / "store", preload=False)
    out = backend.remember(
        "A note about a job.",
        entities=[{"name": "Ann", "kind": "person"}, "Globex"],
        relations=[{"subject": "Ann", "predicate": "worked at", "object": "Globex", "valid_until": "2019"}],
    )
    assert out["action"] == "added"
    assert {e["name"] for e in backend.entities()["entities"]} >= {"Ann", "Globex"}
    assert backend.related("ann")["related"][0]["via"]["valid_until"] == "2019"
    backend.add_entity("Bea", kind="person")
    backend.add_relation("Bea", "knows", "Ann")
    assert [s["entity"]["name"] for s in backend.path("Globex", "Bea")["path"]] == ["Globex", "Ann", "Bea"]
    with pytest.raises(MemdeckError, match="relation endpoint"):
        backend.remember(
            "Another note.", relations=[{"subject": "Ann", "predicate": "knows", "object": "Nobody"}]
        )
    with pytest.raises(MemdeckError, match="limit"):
        backend.remember("Many.", entities=[f"E{i}" for i in range(MAX_GRAPH_ITEMS + 1)])
    other = _Backend("bob", "assistant", tmp_path / "store", preload=False)
    assert other.entities()["entities"] == []
    with pytest.raises(NotFound):
        other.related("Ann")
    for b in (backend, other):
        if b._store is not None:
            b._store.close()


def test_an_edit_moves_the_graph_to_the_new_text(store):
    memory = store.remember("Ann moved to Lisbon.", principal="alice").memory
    store.remember("Ann likes tea.", principal="alice")
    store.edit(memory.id, "Ann moved to Porto.", scope=Scope.of("alice"))
    names = {e["name"]: e for e in store.entities(Scope.of("alice"))}
    assert "Lisbon" not in names and "Porto" in names
    assert memory.id in store.entity("alice", "Ann")["mentions"]


def test_entities_one_memory_names_together_are_joined_when_no_relation_is(store, capsys):
    """From four ordinary sentences only one verb relation is found (reports to), yet Ingrid Berg reaches
    Kubernetes through the memories that name Atlas with each of them; a relation, when there is one, is
    preferred; a memory naming a crowd of entities joins none of them; another principal's memories never."""
    texts = [
        "Nadia Okafor leads the Atlas project.",
        "The Atlas project runs on Kubernetes in Frankfurt.",
        "Nadia Okafor reports to Ingrid Berg.",
        "Ingrid Berg approved the Atlas budget in March.",
    ]
    ids = [store.remember(t, tier="semantic", principal="ann").memory.id for t in texts]
    crowd = ", ".join(f"Person{n} Lastname{n}" for n in range(14))
    store.remember(f"The offsite invited {crowd} and Kubernetes trainers.", tier="semantic", principal="ann")
    store.remember("Ingrid Berg runs Kubernetes at home.", tier="semantic", principal="bob")

    found = store.path("ann", "Ingrid Berg", "Kubernetes")
    assert found["found"], found
    names = [s["entity"]["name"] for s in found["path"]]
    assert names[0] == "Ingrid Berg" and names[-1] == "Kubernetes" and len(names) == 3
    vias = [s["via"] for s in found["path"][1:]]
    assert all(v["kind"] == "co-mention" and v["predicate"] == "mentioned with" for v in vias)
    assert vias[0]["sources"] == [ids[3]] and vias[1]["sources"] == [ids[1]]

    direct = store.path("ann", "Nadia Okafor", "Ingrid Berg")["path"]
    assert [s["entity"]["name"] for s in direct] == ["Nadia Okafor", "Ingrid Berg"]
    assert direct[1]["via"]["kind"] == "relation" and direct[1]["via"]["predicate"] == "reports to"

    near = {e["name"]: e for e in store.related("ann", "Kubernetes", 1)["related"]}
    assert {"Frankfurt"} <= set(near) and not any(n.startswith("Person") for n in near)
    assert near["Frankfurt"]["via"]["sources"] == [ids[1]]

    assert (
        cli_main(["--store", str(store.root), "path", "Ingrid Berg", "Kubernetes", "--principal", "ann"]) == 0
    )
    out = capsys.readouterr().out
    assert "mentioned with" in out and out.splitlines()[-1].startswith("Kubernetes")
