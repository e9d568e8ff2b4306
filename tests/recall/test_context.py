"""The working tier: Store.context / memdeck context / the MCP context tool. Pinned first, then recalled by
score, deduplicated, counted with the embedding model's tokenizer, never over budget; the injection ledger
records what each agent was given in which session."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memdeck.cli.mcp import _Backend
from memdeck.core import Scope
from memdeck.core.errors import MemdeckError
from memdeck.core.recall.traces import injections, sessions_using

WORDS = [
    "tea",
    "coffee",
    "garden",
    "deploy",
    "server",
    "cat",
    "lisbon",
    "budget",
    "report",
    "bike",
    "the",
    "a",
]


def _check_pack(store, pack, budget: int) -> None:
    assert pack.used <= budget
    assert store.engine.embedder.count_tokens(pack.text) <= budget  # the text as it goes into a prompt
    kinds = [e.source == "pinned" for e in pack.included]
    assert kinds == sorted(kinds, reverse=True)  # pinned first
    ids = [e.memory.id for e in pack.entries]
    assert len(ids) == len(set(ids))
    hashes = [e.memory.content_sha256 for e in pack.entries]
    assert len(hashes) == len(set(hashes))
    data = pack.to_json()
    assert data["tokens"] == sum(i["tokens"] for i in data["items"]) <= data["budget"] == budget
    assert {i["id"] for i in data["left_out"]}.isdisjoint({i["id"] for i in data["items"]})


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    memories=st.lists(
        st.tuples(
            st.lists(st.sampled_from(WORDS), min_size=1, max_size=40),
            st.booleans(),
            st.sampled_from(["semantic", "episodic", "procedural"]),
        ),
        min_size=0,
        max_size=12,
    ),
    budget=st.integers(min_value=0, max_value=400),
)
def test_context_never_exceeds_the_budget_and_pinned_come_first(store, memories, budget):
    principal = f"p{abs(hash((tuple(map(str, memories)), budget))) % 10**9}"  # a fresh principal per example
    for words, pinned, tier in memories:
        store.remember(" ".join(words), tier=tier, principal=principal, pinned=pinned, force=True)
    pack = store.context("tea garden deploy", principal=principal, budget_tokens=budget, ledger=False)
    _check_pack(store, pack, budget)
    # A pinned memory always goes in; another only when recall finds it (it shares a word with the query:
    # one that shares none may rank under the relevance floor, and the pack is then rightly empty).
    if budget >= 400 and any(
        pinned or {"tea", "garden", "deploy"} & set(words) for words, pinned, _ in memories
    ):
        assert pack.included


def test_the_real_tokenizer_counts_the_pack(model_store):
    for i in range(8):
        model_store.remember(
            f"Alice's favourite tea number {i} is a smoky lapsang souchong",
            tier="semantic",
            principal="alice",
            pinned=i == 0,
        )
    model_store.remember(
        "Alice's favourite tea number 3 is a smoky lapsang souchong", tier="episodic", principal="alice"
    )  # the same text in another tier goes in once
    for budget in (0, 10, 25, 60, 200):
        pack = model_store.context(
            "what tea does alice like", principal="alice", budget_tokens=budget, ledger=False
        )
        _check_pack(model_store, pack, budget)
    big = model_store.context("what tea does alice like", principal="alice", budget_tokens=2000, ledger=False)
    assert big.included[0].source == "pinned" and not big.left_out
    assert len(big.included) == 8
    second = big.included[1]
    assert second.rendered.startswith(f"[{second.memory.id} · {second.memory.tier} · ")
    assert "· user] Alice" in second.rendered
    with pytest.raises(MemdeckError, match="budget"):
        model_store.context("tea", principal="alice", budget_tokens=-1)


def test_the_ledger_answers_what_an_agent_saw_and_which_sessions_used_a_memory(store):
    tea = store.remember("alice likes green tea", tier="semantic", principal="alice", pinned=True).memory
    bike = store.remember("alice rides a green bike", tier="semantic", principal="alice").memory
    store.remember("bob likes green tea too", tier="semantic", principal="bob")
    p1 = store.context("green", principal="alice", agent="coder", session="s1")
    store.context(
        "green tea", principal="alice", agent="coder", session="s2", budget_tokens=p1.included[0].tokens
    )
    store.context("green", principal="alice", agent="writer", session="s3")
    seen = injections(store.engine, agent="coder", session="s1")
    assert len(seen) == 1 and seen[0]["ids"] == [e.memory.id for e in p1.included] == [tea.id, bike.id]
    using = {(u["agent"], u["session"]) for u in sessions_using(store.engine, tea.id)}
    assert using == {("coder", "s1"), ("coder", "s2"), ("writer", "s3")}
    assert {u["session"] for u in sessions_using(store.engine, bike.id)} == {
        "s1",
        "s3",
    }  # s2's budget left it out
    assert injections(store.engine, scope=Scope.of("bob")) == []
    store.forget([bike.id], "user request")
    assert sessions_using(store.engine, bike.id) == []
    assert all(bike.id not in i["ids"] for i in injections(store.engine))


def test_mcp_context_and_recall_are_recorded_for_the_session(memdeck_home, tmp_path):
    (memdeck_home / "config.toml").write_text(
        '[embedding]\nmodel = "hash-384"\n[maintenance]\nenabled = false\n'
    )
    backend = _Backend("alice", "assistant", tmp_path / "store")
    try:
        backend.remember("alice keeps her passport in the blue drawer", importance=0.9)
        out = backend.context("where is the passport", budget=50)
        assert out["items"] and out["tokens"] <= 50 and out["budget"] == 50
        assert set(out["items"][0]) >= {"id", "tier", "text", "tokens", "pinned", "score", "source"}
        assert out["text"].startswith("[sem_")
        backend.recall("passport")
        kinds = {i["kind"] for i in injections(backend.store.engine, session=backend.session)}
        assert kinds == {"mcp-context", "mcp-recall"}
    finally:
        backend.store.close()


def test_cli_context_json_and_bad_budget(memdeck_home, tmp_path):
    (memdeck_home / "config.toml").write_text('[embedding]\nmodel = "hash-384"\n')
    env = {**os.environ, "MEMDECK_HOME": str(memdeck_home)}
    store = str(tmp_path / "s")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "memdeck.cli", *args, "--store", store],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    assert (
        run(
            "add", "alice likes green tea", "--tier", "semantic", "--principal", "alice", "--pinned"
        ).returncode
        == 0
    )
    r = run(
        "add",
        "alice has a green bike",
        "--tier",
        "semantic",
        "--principal",
        "alice",
        "--expires-in",
        "7d",
        "--json",
    )
    assert r.returncode == 0 and json.loads(r.stdout)["memory"]["expires_at"]
    r = run(
        "context",
        "green",
        "--principal",
        "alice",
        "--budget",
        "30",
        "--json",
        "--agent",
        "a",
        "--session",
        "s",
    )
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert set(data) == {"items", "tokens", "budget", "left_out"} and data["tokens"] <= 30
    assert data["items"][0]["pinned"] is True
    r = run("ledger", "--session", "s", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)[0]["ids"] == [i["id"] for i in data["items"]]
    for bad in (
        ["context", "x", "--principal", "alice", "--budget", "lots"],
        ["add", "x", "--tier", "semantic", "--principal", "alice", "--expires-in", "7 parsecs"],
    ):
        r = run(*bad)
        assert r.returncode != 0 and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    r = run("session", "close", "nope", "--principal", "alice")
    assert r.returncode != 0 and "no session" in r.stderr
