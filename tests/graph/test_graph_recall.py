"""The graph channel of recall: ranks.graph and the graph component, depth, and isolation."""

from __future__ import annotations

import json

from memdeck.cli import main as cli_main
from memdeck.core import Scope
from memdeck.core.config import COMPONENTS, Profile
from memdeck.core.graph.memory.recall import graph_channel


def _story(store):
    a = store.remember("Zorblax shares a flat with Quentin.", principal="alice").memory
    b = store.remember("Quentin grows tomatoes on the balcony.", principal="alice").memory
    other = store.remember("An unrelated note on tax forms.", principal="alice").memory
    store.add_relation("alice", "Zorblax", "lives with", "Quentin", sources=[a.id])
    return a, b, other


def test_recall_reports_graph_rank_and_component(store):
    a, b, other = _story(store)
    result = store.recall("what does Zorblax do", principal="alice", k=10)
    by_id = {item.memory.id: item for item in result.items}
    assert by_id[a.id].ranks["graph"] == 1
    assert by_id[a.id].components["graph"] == 1.0
    # One relation away: a candidate through the graph alone, at half the weight (the relevance floor may
    # still keep it out of the results: the graph adds candidates, it never overrides the floor).
    cands = {c.memory.id: c for c in result.candidates.candidates}
    assert cands[b.id].ranks["graph"] == 2
    assert 0 < cands[b.id].graph < 1
    assert other.id not in cands or cands[other.id].ranks["graph"] is None
    for item in result.items:
        assert set(item.components) == set(COMPONENTS)
        assert item.score == sum(result.profile.weights[c] * item.components[c] for c in COMPONENTS)


def test_depth_zero_keeps_to_the_named_entities(open_store):
    store = open_store(graph={"depth": 0})
    a, _b, _ = _story(store)
    hits = graph_channel(store.engine, Scope.of("alice"), "what does Zorblax do", None, 10, 0)
    assert hits.ranked == [a.id]


def test_the_graph_weight_reranks_without_a_new_search(store):
    _story(store)
    result = store.recall("what does Zorblax do", principal="alice", k=10)
    none = result.rerank(Profile().with_weights(graph=0.0))
    assert all(
        item.score
        == sum(Profile().with_weights(graph=0.0).weights[c] * item.components[c] for c in COMPONENTS)
        for item in none
    )


def test_another_principals_graph_is_never_traversed(store):
    _story(store)
    theirs = store.remember("Zorblax hides the key with Quentin.", principal="bob").memory
    store.add_entity("bob", "Vault Code")
    store.add_relation("bob", "Quentin", "knows", "Vault Code", sources=[theirs.id])
    hits = graph_channel(store.engine, Scope.of("alice"), "Zorblax Quentin Vault Code", None, 100, 6)
    assert theirs.id not in hits.scores
    result = store.recall("Zorblax Quentin Vault Code", principal="alice", k=50)
    assert {item.memory.principal for item in result.items} == {"alice"}
    hostile = graph_channel(store.engine, Scope.of("nobody' OR '1'='1"), "Zorblax", None, 100, 6)
    assert hostile.scores == {}


def test_recall_json_and_explain_show_the_graph_channel(store, capsys):
    a, _b, _ = _story(store)
    store.close()
    base = ["--store", str(store.root)]
    assert cli_main([*base, "recall", "what does Zorblax do", "--principal", "alice", "--json"]) == 0
    items = json.loads(capsys.readouterr().out)
    first = next(i for i in items if i["id"] == a.id)
    assert first["ranks"]["graph"] == 1 and first["components"]["graph"] == 1.0
    assert (
        cli_main([*base, "explain", "what does Zorblax do", "--id", a.id, "--principal", "alice", "--json"])
        == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert report["channels"]["graph"]["rank"] == 1 and report["components"]["graph"] == 1.0


def test_the_trace_log_keeps_the_graph_component_and_replay_uses_it(store):
    from memdeck.core.recall import traces
    from memdeck.core.tuning.replay import replay

    a, _b, _ = _story(store)
    result = store.recall("what does Zorblax do", principal="alice", k=10)
    traces.flush(store.engine)
    trace = traces.get_trace(store.engine, result.trace_id, Scope.of("alice"))
    logged = {c.memory_id: c for c in trace.candidates}
    assert logged[a.id].components["graph"] == 1.0 and logged[a.id].ranks["graph"] == 1
    heavy = Profile(min_relevance=0.0).with_weights(graph=1.0)  # replay re-scores every logged candidate
    report = replay(store.engine, heavy, trace_id=result.trace_id)
    live = [s.memory.id for s in result.rerank(heavy)]
    assert report["traces"][0]["after"] == live


def test_both_engines_read_the_graphs_own_candidates_alike_and_inside_the_filters(store):
    _a, b, _other = _story(store)
    for n in range(12):  # more rows than k=2 lets each search return, so the graph may reach some alone
        store.remember(
            f"Filler note {n} about the weekly shopping list and the bus timetable.", principal="alice"
        )
    seen = {}
    for engine in ("memory", "lance"):
        store.settings = store.settings.with_changes(recall={"engine": engine})
        result = store.recall("Zorblax timetable", principal="alice", k=2, record_access=False, trace=False)
        seen[engine] = {
            c.memory.id: (c.ranks["graph"], round(c.keyword, 9), round(c.similarity, 6))
            for c in result.candidates.candidates
        }
    store.settings = store.settings.with_changes(recall={"engine": "memory"})
    assert seen["memory"] == seen["lance"]
    assert seen["memory"][b.id][0] == 2  # reached through the relation to Quentin
    # A deprecated memory is outside the recall's filters: the graph does not bring it back.
    store.deprecate(b.id, "moved out", scope=Scope.of("alice"))
    for engine in ("memory", "lance"):
        store.settings = store.settings.with_changes(recall={"engine": engine})
        result = store.recall("Zorblax timetable", principal="alice", k=2, record_access=False, trace=False)
        assert b.id not in {c.memory.id for c in result.candidates.candidates}
    store.settings = store.settings.with_changes(recall={"engine": "memory"})
