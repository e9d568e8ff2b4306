"""What `memdeck explain --json` and `memdeck review --json` print (and what a review decision returns) has
exactly the keys and value types their declared types name, so the types and the JSON contract cannot drift."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from memdeck.core.consolidate.review import ReviewDecision, ReviewItemJSON
from memdeck.core.recall.explain import Explanation
from memdeck.core.store import Store
from tests.jsontypes import mismatches

MEMDECK = Path(sys.executable).with_name("memdeck")


def run(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMDECK_HOME": str(home)}
    env.pop("MEMDECK_DEBUG", None)
    return subprocess.run([str(MEMDECK), *args], env=env, capture_output=True, text=True, timeout=300)


def seed(home: Path, path: Path) -> dict[str, str]:
    (home / "config.toml").write_text('[embedding]\nmodel = "hash-384"\n', encoding="utf-8")
    store = Store.open(path)
    ids = {}
    rows = [
        ("older", "The office wifi password is on the fridge door", "semantic", "2024-01-01T00:00:00Z"),
        ("newer", "The office wifi password is on the fridge door now", "semantic", "2024-02-01T00:00:00Z"),
        ("stale", "met the auditors about the budget", "episodic", "2000-01-01T00:00:00Z"),
        ("refund", "the refund ledger report for the finance team", "semantic", "2024-03-01T00:00:00Z"),
        ("tax", "the tax audit report for the finance team", "semantic", "2024-03-02T00:00:00Z"),
        ("budget", "the budget payment report for the finance team", "semantic", "2024-03-03T00:00:00Z"),
        ("gone", "an invoice report that was replaced", "semantic", "2024-03-04T00:00:00Z"),
    ]
    for key, text, tier, when in rows:
        memory = store.remember(text, tier=tier, principal="alice", created_at=when, force=True).memory
        assert memory is not None
        ids[key] = memory.id
    store.deprecate(ids["gone"], "replaced")
    store.close()
    return ids


def test_explain_json_matches_the_explanation_type_for_every_status(
    memdeck_home: Path, tmp_path: Path
) -> None:
    path = tmp_path / "s"
    ids = seed(memdeck_home, path)
    seen = {}
    for key, memory_id in [*ids.items(), ("missing", "sem_doesnotexist")]:
        r = run(
            memdeck_home,
            *("--store", str(path), "explain", "finance report", "--id", memory_id),
            *("--principal", "alice", "--k", "1", "--json"),
        )
        assert r.returncode == 0, r.stderr
        report = json.loads(r.stdout)
        assert mismatches(report, Explanation, key) == []
        seen[report["status"]] = report
    # Every kind of answer was checked, including the ones with channels, scores and a weight change.
    assert {"not_visible", "filtered", "returned"} <= seen.keys()
    assert seen.keys() & {"below_k", "not_candidate"}
    assert any("weight_change" in r and "channels" in r for r in seen.values())


def test_review_json_and_a_decision_match_their_types(memdeck_home: Path, tmp_path: Path) -> None:
    path = tmp_path / "s"
    ids = seed(memdeck_home, path)
    r = run(memdeck_home, "review", "--json", "--store", str(path))
    assert r.returncode == 0, r.stderr
    items = json.loads(r.stdout)
    kinds = {item["kind"] for item in items}
    assert {"near_duplicate", "stale"} <= kinds  # a pair and a single memory (whose card names its tier)
    for item in items:
        assert mismatches(item, ReviewItemJSON, item["key"]) == []
    assert next(i for i in items if i["kind"] == "stale")["left"]["tier"] == "episodic"

    pair = next(i["key"] for i in items if i["kind"] == "near_duplicate")
    r = run(memdeck_home, "review", "merge", pair, "--json", "--store", str(path))
    assert r.returncode == 0, r.stderr
    done = json.loads(r.stdout)
    assert mismatches(done, ReviewDecision, "decision") == []
    assert (done["action"], done["kept"], done["deprecated"]) == ("merge", ids["older"], ids["newer"])


def test_graph_json_matches_the_graph_types(memdeck_home: Path, tmp_path: Path) -> None:
    from memdeck.core.filters import Scope
    from memdeck.core.graph.types import (
        EntityBrief,
        EntityDescription,
        EntityListing,
        GraphPath,
        GraphSummary,
        Related,
    )

    (memdeck_home / "config.toml").write_text('[embedding]\nmodel = "hash-384"\n', encoding="utf-8")
    path = tmp_path / "s"
    store = Store.open(path)
    store.add_entity("alice", "Ann")
    store.add_entity("alice", "Ben")
    store.add_entity("alice", "Lonely")
    store.add_relation("alice", "Ann", "knows", "Ben")
    memory = store.remember(
        "Ben and Carol met at the Milton library.", principal="alice", entities=["Ben", "Carol"]
    )
    assert memory.memory is not None
    described = store.entity("alice", "ann")
    mentioned = store.memory_entities("alice", memory.memory.id)
    summary = store.analytics(Scope.everyone()).graph()
    store.close()

    assert mismatches(described, EntityDescription, "entity") == []
    assert described["relations"] and described["relations"][0]["predicate"] == "knows"
    assert mentioned and all(mismatches(e, EntityBrief, "chip") == [] for e in mentioned)
    assert mismatches(summary, GraphSummary, "summary") == []
    assert summary["orphans"] and summary["most_connected"]

    base = ("--store", str(path))
    r = run(memdeck_home, *base, "entities", "--principal", "alice", "--json")
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)
    assert {e["name"] for e in rows} >= {"Ann", "Ben", "Lonely"}
    assert all(mismatches(e, EntityListing, e["name"]) == [] for e in rows)
    r = run(memdeck_home, *base, "related", "ann", "--principal", "alice", "--depth", "2", "--json")
    assert r.returncode == 0, r.stderr
    related = json.loads(r.stdout)
    assert mismatches(related, Related, "related") == []
    assert [e["name"] for e in related["related"]][:1] == ["Ben"] and related["related"][0]["via"]
    # Ann to Carol: Ann's relation to Ben, then what joins Ben to Carol in the memory naming both.
    r = run(memdeck_home, *base, "path", "Ann", "carol", "--principal", "alice", "--json")
    assert r.returncode == 0, r.stderr
    found = json.loads(r.stdout)
    assert mismatches(found, GraphPath, "path") == []
    assert found["found"] is True and [s["entity"]["name"] for s in found["path"]] == ["Ann", "Ben", "Carol"]
    assert found["path"][0]["via"] is None and all(s["via"]["kind"] for s in found["path"][1:])
