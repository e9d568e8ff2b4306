"""Replay of logged recalls, judgments, evaluation, tuning, and agent trust from feedback."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from memdeck.cli import main
from memdeck.core.config import Profile, load_profile
from memdeck.core.errors import MemdeckError, NotFound
from memdeck.core.recall import traces
from memdeck.core.recall.feedback import feedback, trust, trust_by_agent
from memdeck.core.records import now
from memdeck.core.store import Store
from memdeck.core.tuning.evaluate import evaluate, judge, judged_queries, list_judgments, metrics, ndcg_at
from memdeck.core.tuning.replay import replay, replay_trace
from memdeck.core.tuning.tune import split_of, tune

RECENT_HEAVY = Profile(
    "recent",
    {"relevance": 0.1, "recency": 1.0, "frequency": 0.0, "importance": 0.0, "pinned": 0.0, "trust": 0.0},
    {"episodic": 2.0, "semantic": 2.0, "procedural": 2.0},
)


IMPORTANT = Profile(
    "important",
    {"relevance": 0.1, "recency": 0.0, "frequency": 0.0, "importance": 1.0, "pinned": 0.0, "trust": 0.0},
)


def _seed(store: Store, principal: str = "alice") -> list[str]:
    items = []
    for i in range(40):
        items.append(
            {
                "text": f"trip {i}: we hiked the {['north', 'south', 'east', 'west'][i % 4]} ridge trail and camped",
                "tier": "episodic",
                "principal": principal,
                "agent": "scribe" if i % 3 else "diarist",
                "created_at": now() - timedelta(days=i * 3),
                "importance": ((i * 7) % 10) / 10,
            }
        )
    return [r.memory.id for r in store.remember_many(items)]


def _hash_cli(home: Path) -> None:
    (home / "config.toml").write_text('[embedding]\nmodel = "hash-384"\n', encoding="utf-8")


# --- replay --------------------------------------------------------------------------------------------


def test_replay_under_the_same_profile_changes_nothing(store: Store) -> None:
    _seed(store)
    result = store.recall("ridge trail camping", principal="alice", agent="guide", k=5)
    traces.flush(store.engine)
    report = replay(store.engine, result.profile, trace_id=result.trace_id)
    assert report["method"] == "rescore"
    assert "re-scored the logged candidates" in report["note"]
    assert report["summary"]["changed"] == 0
    assert report["traces"][0]["after"] == [s.memory.id for s in result.items]


def test_replay_matches_a_live_rerank_and_reports_what_enters_and_leaves(store: Store) -> None:
    _seed(store)
    result = store.recall("ridge trail camping", principal="alice", agent="guide", k=5)
    expected = [s.memory.id for s in result.rerank(IMPORTANT, 5)]
    traces.flush(store.engine)
    trace = traces.get_trace(store.engine, result.trace_id)
    done = replay_trace(trace, IMPORTANT)
    assert done.after == expected
    before = [s.memory.id for s in result.items]
    assert done.entered == [m for m in expected if m not in before]
    assert done.left == [m for m in before if m not in expected]
    assert done.changed == (expected != before)
    assert done.entered, "an importance-led profile must change this ranking"


def test_replay_all_traces_of_an_agent_and_research(store: Store) -> None:
    _seed(store)
    for q in ("north ridge", "south ridge", "camping"):
        store.recall(q, principal="alice", agent="guide", k=3)
    store.recall("east ridge", principal="alice", agent="other", k=3)
    report = replay(store.engine, RECENT_HEAVY, agent="guide")
    assert report["summary"]["traces"] == 3
    assert {t["agent"] for t in report["traces"]} == {"guide"}
    fresh = store.remember(
        "we hiked the north ridge trail again today", tier="episodic", principal="alice"
    ).memory
    research = replay(store.engine, RECENT_HEAVY, agent="guide", research=True)
    assert research["method"] == "research"
    assert any(fresh.id in t["entered"] for t in research["traces"])  # only a new search can find it
    rescored = replay(store.engine, RECENT_HEAVY, agent="guide")
    assert not any(fresh.id in t["entered"] for t in rescored["traces"])
    with pytest.raises(MemdeckError):
        replay(store.engine, RECENT_HEAVY, agent="nobody")
    with pytest.raises(MemdeckError):
        replay(store.engine, RECENT_HEAVY)


def test_replay_cli(store: Store, capsys: pytest.CaptureFixture[str], memdeck_home: Path) -> None:
    _hash_cli(memdeck_home)
    _seed(store)
    result = store.recall("ridge trail camping", principal="alice", agent="guide", k=5)
    store.close()
    root = str(store.root)
    assert (
        main(
            [
                "--store",
                root,
                "replay",
                result.trace_id,
                "--weights",
                "relevance=0.1,recency=1,frequency=0,pinned=0,half_life.episodic=2",
                "--json",
            ]
        )
        == 0
    )
    body = json.loads(capsys.readouterr().out)
    assert body["summary"]["traces"] == 1 and body["method"] == "rescore"
    assert main(["--store", root, "replay", "--agent", "guide", "--weights", "recency=1"]) == 0
    assert "re-scored the logged candidates" in capsys.readouterr().out
    assert main(["--store", root, "replay", result.trace_id]) == 2  # no weights
    assert capsys.readouterr().err.count("\n") == 1


# --- judgments and evaluation ----------------------------------------------------------------------


def test_metric_arithmetic() -> None:
    ranked = ["a", "b", "c", "d"]
    m = metrics(ranked, {"b", "d", "z"}, 4)
    assert m["recall@4"] == pytest.approx(2 / 3)
    assert m["mrr"] == pytest.approx(0.5)
    import math

    dcg = 1 / math.log2(3) + 1 / math.log2(5)
    ideal = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert m["ndcg@4"] == pytest.approx(dcg / ideal)
    assert ndcg_at(["x"], {"x"}, 10) == pytest.approx(1.0)
    assert metrics(["a"], set(), 3)["recall@3"] == 0.0


def test_judgments_upsert_and_stay_within_the_principal(store: Store) -> None:
    ids = _seed(store)
    bob = _seed(store, "bob")
    judge(store.engine, "north ridge", "alice", ids[0], True)
    judge(store.engine, "north ridge", "alice", ids[0], False)  # replaces the first
    judge(store.engine, "north ridge", "alice", ids[4], True)
    assert len(list_judgments(store.engine)) == 2
    (q,) = judged_queries(store.engine)
    assert q.relevant == {ids[4]} and q.irrelevant == {ids[0]}
    with pytest.raises(NotFound):
        judge(store.engine, "north ridge", "alice", bob[0], True)


def test_evaluate_reports_profile_and_baseline(store: Store) -> None:
    _seed(store)
    result = store.recall("west ridge trail", principal="alice", k=10, trace=False, record_access=False)
    first, third = result.items[0].memory.id, result.items[2].memory.id
    judge(store.engine, "west ridge trail", "alice", first, True)
    judge(store.engine, "west ridge trail", "alice", third, True)
    report = evaluate(store.engine, "default", k=10)
    assert report["queries"] == 1 and report["judgments"] == 2
    row = report["profile"]
    assert row["recall@10"] == pytest.approx(1.0)
    assert row["mrr"] == pytest.approx(1.0)
    assert row["ndcg@10"] == pytest.approx(
        ndcg_at([s.memory.id for s in result.items], {first, third}, 10), abs=1e-4
    )
    assert report["baseline"]["name"] == "default"


def test_tune_is_deterministic_saves_a_profile_and_reports_held_out(store: Store) -> None:
    ids = _seed(store)
    # Judge the newest trips relevant: a profile leaning on recency should score better than the default.
    queries = [f"ridge trail {w} {n}" for w in ("hike", "camp", "walk", "trek", "climb") for n in range(4)]
    for q in queries:
        for mem in ids[:3]:
            judge(store.engine, q, "alice", mem, True)
    splits = {split_of(q, "alice") for q in queries}
    assert splits == {"train", "test"}
    a = tune(store.engine, trials=40, seed=7, save="tuned-test")
    b = tune(store.engine, trials=40, seed=7)
    assert a["tuned"]["weights"] == b["tuned"]["weights"]
    assert a["train"]["tuned"]["ndcg@10"] >= a["train"]["start"]["ndcg@10"]
    assert a["test"] is not None and "ndcg@10" in a["test"]["tuned"]
    saved = load_profile("tuned-test")
    assert saved.weights == pytest.approx(a["tuned"]["weights"])


def test_eval_and_tune_without_judgments_fail_with_one_line(
    store: Store, capsys: pytest.CaptureFixture[str], memdeck_home: Path
) -> None:
    _hash_cli(memdeck_home)
    _seed(store)
    store.close()
    root = str(store.root)
    assert main(["--store", root, "eval"]) == 2
    assert "no judgments" in capsys.readouterr().err
    assert main(["--store", root, "tune", "--trials", "5"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_judge_eval_tune_cli(store: Store, capsys: pytest.CaptureFixture[str], memdeck_home: Path) -> None:
    _hash_cli(memdeck_home)
    ids = _seed(store)
    result = store.recall("south ridge", principal="alice", agent="guide", k=5)
    extra = [f"ridge trail {n}" for n in range(8)]
    for q in extra:
        judge(store.engine, q, "alice", ids[2], True)
    assert "train" in {split_of(q, "alice") for q in extra}
    store.close()
    root = str(store.root)
    assert main(["--store", root, "judge", "--trace", result.trace_id, "--id", ids[1], "--relevant"]) == 0
    assert (
        main(["--store", root, "judge", "north ridge", "--principal", "alice", "--id", ids[0], "--relevant"])
        == 0
    )
    capsys.readouterr()
    assert main(["--store", root, "eval", "--k", "5", "--json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["queries"] == 10 and "recall@5" in body["profile"]
    assert (
        main(["--store", root, "tune", "--trials", "10", "--seed", "1", "--save", "cli-tuned", "--json"]) == 0
    )
    tuned = json.loads(capsys.readouterr().out)
    assert tuned["tuned"]["name"] == "cli-tuned"
    assert load_profile("cli-tuned").name == "cli-tuned"


# --- feedback and trust --------------------------------------------------------------------------------


def test_trust_is_smoothed_and_feeds_the_trust_component(store: Store) -> None:
    ids = _seed(store)
    assert trust(0, 0) == pytest.approx(0.5)
    assert trust(3, 4) == pytest.approx(4 / 6)
    scribe = [m for m in ids if store.get(m).agent == "scribe"]
    for mem in scribe[:3]:
        feedback(store.engine, mem, "reviewer", useful=False)
    feedback(store.engine, scribe[3], "reviewer", useful=True)
    assert trust_by_agent(store.engine)["scribe"] == pytest.approx(2 / 6)
    assert "diarist" not in trust_by_agent(store.engine)
    result = store.recall("ridge trail", principal="alice", k=40, trace=False)
    for item in result.items:
        expected = 2 / 6 if item.memory.agent == "scribe" else 0.5
        assert item.components["trust"] == pytest.approx(expected)


def test_feedback_on_a_trace_counts_for_the_writers_of_what_it_returned(store: Store) -> None:
    _seed(store)
    result = store.recall("ridge trail", principal="alice", agent="guide", k=6)
    traces.flush(store.engine)
    writers = {s.memory.agent for s in result.items}
    done = feedback(store.engine, result.trace_id, "guide", useful=True)
    assert set(done.agents) == writers
    assert done.memory_ids == [s.memory.id for s in result.items]
    for agent in writers:
        assert trust_by_agent(store.engine)[agent] == pytest.approx(2 / 3)


def test_feedback_cannot_reach_another_principal(store: Store) -> None:
    from memdeck.core.filters import Scope

    bob = _seed(store, "bob")
    with pytest.raises(NotFound):
        feedback(store.engine, bob[0], "x", useful=True, scope=Scope.of("alice"))


def test_feedback_and_trust_cli(store: Store, capsys: pytest.CaptureFixture[str], memdeck_home: Path) -> None:
    _hash_cli(memdeck_home)
    ids = _seed(store)
    store.close()
    root = str(store.root)
    assert main(["--store", root, "feedback", ids[1], "--wrong", "--agent", "guide", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["useful"] is False
    assert main(["--store", root, "trust", "--json"]) == 0
    rows = {r["agent"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["scribe"]["trust"] == pytest.approx(1 / 3, abs=1e-4)
    assert rows["diarist"]["trust"] == pytest.approx(0.5)
    assert main(["--store", root, "feedback", "trc_missing", "--useful"]) == 3
    assert capsys.readouterr().err.count("\n") == 1
