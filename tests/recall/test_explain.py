"""Why not: where a memory stood in a recall, without leaking other principals' memories."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from memdeck.cli import main
from memdeck.core.config import Profile
from memdeck.core.filters import Scope
from memdeck.core.recall.explain import NOT_VISIBLE, explain
from memdeck.core.recall.search import candidate_limit, keyword_search
from memdeck.core.records import now
from memdeck.core.store import Store

ALICE = Scope.of("alice")


def _filler(store: Store, n: int, principal: str = "alice") -> list[str]:
    words = ["invoice", "ledger", "payment", "refund", "budget", "receipt", "audit", "tax"]
    items = [
        {
            "text": f"the {words[i % 8]} {words[(i * 3) % 8]} report number {i} for the finance team",
            "tier": "semantic",
            "principal": principal,
        }
        for i in range(n)
    ]
    return [r.memory.id for r in store.remember_many(items)]


def test_another_principals_memory_and_a_missing_one_get_the_same_answer(store: Store) -> None:
    _filler(store, 5)
    bobs = store.remember("bob's secret finance report", tier="semantic", principal="bob").memory
    store.deprecate(bobs.id, "old")
    a = explain(store.engine, "finance report", bobs.id, ALICE)
    b = explain(store.engine, "finance report", "sem_doesnotexist000000", ALICE)
    assert a["status"] == b["status"] == "not_visible"
    assert a["reason"] == b["reason"] == NOT_VISIBLE
    assert set(a) == set(b) == {"query", "memory_id", "k", "profile", "status", "reason"}
    assert "deprecated" not in json.dumps(a)


def test_deprecated_and_ttl_expired(store: Store) -> None:
    store.settings = store.settings.with_changes(ttl_days={"episodic": 365})  # TTL is off by default now
    _filler(store, 5)
    dep = store.remember("the old finance report template", tier="semantic", principal="alice").memory
    store.deprecate(dep.id, "superseded by the new template")
    report = explain(store.engine, "finance report template", dep.id, ALICE)
    assert report["status"] == "filtered"
    assert report["state"] == "deprecated"
    assert "superseded by the new template" in report["reason"]

    old = store.remember(
        "met the auditor about the finance report",
        tier="episodic",
        principal="alice",
        created_at=now() - timedelta(days=400),
    ).memory
    report = explain(store.engine, "auditor finance report", old.id, ALICE)
    assert report["ttl"]["expired"] is True
    assert report["ttl"]["days"] == 365
    assert report["status"] in {"returned", "below_k", "not_candidate"}


def test_a_returned_memory_reports_its_rank(store: Store) -> None:
    _filler(store, 10)
    result = store.recall("refund audit report", principal="alice", k=5, trace=False, record_access=False)
    second = result.items[1]
    report = explain(store.engine, "refund audit report", second.memory.id, ALICE, k=5)
    assert report["status"] == "returned"
    assert report["rank"] == 2
    assert report["score"] == pytest.approx(second.score, abs=1e-6)
    assert report["components"] == {k: pytest.approx(v, abs=1e-6) for k, v in second.components.items()}


def test_below_k_finds_a_weight_change_that_really_returns_it(store: Store) -> None:
    _filler(store, 30)
    target = store.remember(
        "the budget report number 99 for the finance team", tier="semantic", principal="alice", importance=1.0
    ).memory
    k = 2
    result = store.recall(
        "budget report finance team", principal="alice", k=k, trace=False, record_access=False
    )
    ids = [s.memory.id for s in result.rerank(result.profile, len(result.candidates))]
    assert target.id in ids and ids.index(target.id) >= k, "the fixture must leave the target below k"
    report = explain(store.engine, "budget report finance team", target.id, ALICE, k=k)
    assert report["status"] == "below_k"
    assert report["rank"] == ids.index(target.id) + 1
    change = report["weight_change"]
    assert change["kind"] in {"single", "pair"}
    weights = dict(Profile().weights)
    for c in change["change"]:
        assert 0.0 <= c["to"] <= 1.0
        weights[c["weight"]] = c["to"]
    again = store.recall(
        "budget report finance team",
        principal="alice",
        k=k,
        profile=Profile("x", weights),
        trace=False,
        record_access=False,
    )
    assert target.id in [s.memory.id for s in again.items]


def test_not_a_candidate_reports_exact_channel_ranks_and_the_k_that_would_reach_it(store: Store) -> None:
    # Each channel's shortlist, as in a scope larger than ``score_all_rows`` (in a smaller one every row
    # the recall may see is a candidate).
    store.settings = store.settings.with_changes(recall={"score_all_rows": 0})
    _filler(store, 80)
    target = store.remember(
        "a ledger of garden seeds and sunflowers", tier="semantic", principal="alice"
    ).memory
    _filler(store, 10, principal="bob")  # other principals' rows never count in ranks
    query = "invoice payment report for the finance team"
    report = explain(store.engine, query, target.id, ALICE, k=1)
    assert report["status"] == "not_candidate"
    vec = report["channels"]["vector"]
    # The exact vector rank, by brute force over alice's rows.
    rows = (
        store.engine.table("semantic").to_lance().to_table(columns=["id", "vector", "principal"]).to_pylist()
    )
    qvec = store.engine.embedder.encode([query])[0]
    cos = {r["id"]: float(np.dot(np.asarray(r["vector"]), qvec)) for r in rows if r["principal"] == "alice"}
    assert vec["cosine"] == pytest.approx(cos[target.id], abs=1e-5)
    assert vec["rank"] == 1 + sum(1 for v in cos.values() if v > cos[target.id] + 1e-6)
    kw = report["channels"]["keyword"]
    hits = [
        r["id"]
        for r in keyword_search(store.engine.table("semantic"), query, "principal = 'alice'", 1000, ["id"])
    ]
    assert kw["rank"] == (hits.index(target.id) + 1 if target.id in hits else None)
    assert "no weight change can return it" in report["reason"]
    need = report["k_needed"]
    assert need is not None and candidate_limit(store.engine, need) >= min(
        r for r in (vec["rank"], kw["rank"]) if r
    )
    wider = store.recall(query, principal="alice", k=need, trace=False, record_access=False)
    assert wider.candidates.index_of(target.id) is not None


def test_explain_cli_json_and_text(
    store: Store, capsys: pytest.CaptureFixture[str], memdeck_home: Path
) -> None:
    (memdeck_home / "config.toml").write_text('[embedding]\nmodel = "hash-384"\n', encoding="utf-8")
    ids = _filler(store, 10)
    store.close()
    root = str(store.root)
    assert (
        main(
            [
                "--store",
                root,
                "explain",
                "refund audit report",
                "--id",
                ids[3],
                "--principal",
                "alice",
                "--k",
                "3",
                "--json",
            ]
        )
        == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert report["memory_id"] == ids[3] and report["status"] in {"returned", "below_k", "not_candidate"}
    assert (
        main(["--store", root, "explain", "refund audit report", "--id", ids[3], "--principal", "bob"]) == 0
    )
    out = capsys.readouterr().out
    assert NOT_VISIBLE in out and "refund" not in out.split("\n", 1)[1]
    with pytest.raises(SystemExit) as exc:  # argparse refuses it before any handler runs
        main(["--store", root, "explain", "q", "--id", ids[3], "--principal", "alice", "--k", "0"])
    assert exc.value.code == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_the_ttl_counts_from_the_last_use_when_the_tier_says_so(store: Store) -> None:
    from memdeck.core import filters as F
    from memdeck.core.recall.explain import render

    store.settings = store.settings.with_changes(ttl_days={"episodic": 365})  # ttl_from episodic: last_used
    _filler(store, 5)
    used = store.remember(
        "met the auditor about the finance report",
        tier="episodic",
        principal="alice",
        created_at=now() - timedelta(days=400),
    ).memory
    store.engine.table("episodic").update(
        where=F.eq("id", used.id), values={"last_accessed": now() - timedelta(days=10)}
    )
    report = explain(store.engine, "auditor finance report", used.id, ALICE)
    assert report["status"] != "not_visible"  # recall still shows it: last used ten days ago
    assert report["ttl"]["from"] == "last_used" and report["ttl"]["expired"] is False
    assert 9.9 < report["ttl"]["age_days"] < 10.1

    store.settings = store.settings.with_changes(ttl_from={"episodic": "created"})
    report = explain(store.engine, "auditor finance report", used.id, ALICE)
    assert report["ttl"]["from"] == "created" and report["ttl"]["expired"] is True
    assert "400 days since it was written, TTL 365 days" in render(report)

    pinned = store.remember(
        "the auditor's phone extension is 4411",
        tier="episodic",
        principal="alice",
        created_at=now() - timedelta(days=400),
    ).memory
    store.pin(pinned.id)
    report = explain(store.engine, "auditor phone extension", pinned.id, ALICE)
    assert report["ttl"]["expired"] is False and "pinned" in report["ttl"]["note"]
