"""The store's doors for people and agents: a forget through ``Store.forget`` reports its steps and returns
the signed receipt; an agent's session stamps its episodes and records what it was given; the engine under a
store is reached as ``store.engine``."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memdeck.core.errors import NotFound
from memdeck.core.filters import Scope
from memdeck.core.recall.traces import injections
from memdeck.core.receipts import ReceiptBook, verify_file
from memdeck.core.sessions import AgentSession
from memdeck.core.storage.engine import Engine
from memdeck.core.store import Store


def test_store_forget_tells_each_step_and_returns_the_verified_receipt(store: Store) -> None:
    gone = store.remember("alice's door code is 4711", principal="alice").memory
    kept = store.remember("alice likes green tea", principal="alice").memory
    assert gone is not None and kept is not None
    steps: list[str] = []

    receipt = store.forget([gone.id], "asked to be forgotten", Scope.of("alice"), progress=steps.append)

    assert steps, "the purge told no step"
    assert all(isinstance(step, str) and step for step in steps)
    assert all(check["passed"] for check in receipt["checks"])
    path = ReceiptBook(store.root).path_of(receipt["receipt_id"])
    assert verify_file(path).ok
    with pytest.raises(NotFound):
        store.get(gone.id)
    assert store.get(kept.id).text == "alice likes green tea"


def test_store_forget_reaches_only_the_scope_it_is_given(store: Store) -> None:
    bobs = store.remember("bob's flight lands at nine", principal="bob").memory
    assert bobs is not None
    with pytest.raises(NotFound):
        store.forget([bobs.id], "not alice's to forget", Scope.of("alice"))
    assert store.get(bobs.id).principal == "bob"


def test_forget_principal_through_the_store_reports_progress(store: Store) -> None:
    store.remember("carol lives in Lyon", principal="carol")
    store.remember("dave lives in Porto", principal="dave")
    steps: list[str] = []

    receipt = store.forget_principal("carol", "account closed", progress=steps.append)

    assert steps
    assert all(check["passed"] for check in receipt["checks"])
    assert store.count(Scope.of("carol")) == 0
    assert store.count(Scope.of("dave")) == 1


def test_an_agent_session_stamps_its_episodes_and_records_what_it_was_given(store: Store) -> None:
    session = AgentSession(store, "alice", "planner", "trip-planning")
    episode = session.remember("we booked the train to Lyon", tier="episodic").memory
    fact = session.remember("alice prefers window seats").memory
    store.remember("bob prefers aisle seats", principal="bob")
    assert episode is not None and fact is not None
    assert episode.session == "trip-planning" and episode.closed is False
    assert episode.agent == "planner" and fact.agent == "planner"

    result = session.recall("seats", k=5, source="test", ledger_kind="test-recall")

    returned = [item.memory.id for item in result.items]
    assert fact.id in returned
    assert all(item.memory.principal == "alice" for item in result.items)
    (given,) = injections(store.engine, session="trip-planning")
    assert given["agent"] == "planner" and given["kind"] == "test-recall"
    assert given["ids"] == returned

    closed = session.close()
    assert closed["session"] == "trip-planning" and closed["closed"] == 1
    assert store.get(episode.id).closed is True


def test_an_agent_session_writes_an_episode_into_a_named_session(store: Store) -> None:
    session = AgentSession(store, "alice", "planner", "default-session")
    episode = session.remember("a side conversation", tier="episodic", session="side").memory
    assert episode is not None and episode.session == "side"
    with pytest.raises(NotFound):
        session.close()  # nothing was written in the session's own id
    assert session.close("side")["closed"] == 1


def test_the_store_composes_its_engine_and_its_public_methods_are_typed(store: Store) -> None:
    assert isinstance(store.engine, Engine)
    assert store.root == store.engine.root
    for name, member in inspect.getmembers(Store, inspect.isfunction):
        if name.startswith("_"):
            continue
        returned = inspect.signature(member).return_annotation
        assert returned is not inspect.Signature.empty, f"Store.{name} says nothing of what it returns"
        assert returned not in ("Any", "typing.Any"), f"Store.{name} returns Any"


def _memdeck(memdeck_home: Path, store_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The installed command on a scratch store, with the hash embedder (plumbing only)."""
    (memdeck_home / "config.toml").write_text('[embedding]\nmodel = "hash-384"\n', encoding="utf-8")
    exe = Path(sys.executable).with_name("memdeck")
    env = {**os.environ, "MEMDECK_HOME": str(memdeck_home)}
    return subprocess.run(
        [str(exe), *args, "--store", str(store_dir)], capture_output=True, text=True, env=env, timeout=240
    )


def test_the_forget_command_purges_and_prints_the_receipt(tmp_path: Path, memdeck_home: Path) -> None:
    store_dir = tmp_path / "store"
    added = _memdeck(
        memdeck_home,
        store_dir,
        "add",
        "erin's badge number is 3321",
        "--tier",
        "semantic",
        "--principal",
        "erin",
        "--json",
    )
    assert added.returncode == 0, added.stderr
    memory_id = json.loads(added.stdout)["memory"]["id"]

    forgot = _memdeck(memdeck_home, store_dir, "forget", memory_id, "--reason", "badge replaced", "--json")

    assert forgot.returncode == 0, forgot.stderr
    receipt = json.loads(forgot.stdout)
    assert receipt["receipt_id"] and all(c["passed"] for c in receipt["checks"])
    shown = _memdeck(memdeck_home, store_dir, "show", memory_id)
    assert shown.returncode != 0
    assert "Traceback" not in shown.stderr and len(shown.stderr.strip().splitlines()) == 1
