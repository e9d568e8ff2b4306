"""Routines found offline: the same actions in the same order in two closed sessions become a candidate
procedure in the review queue; keeping it stores the procedure, with its episodes as provenance.
Hash embedder: nothing here is about meaning."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from memdeck.core.consolidate.review import build_queue, decide, undo
from memdeck.core.consolidate.routines import find_routines, steps
from memdeck.core.filters import Scope
from memdeck.core.store import Store

ALICE = Scope.of("alice")


def _session(store: Store, principal: str, session: str, texts: list[str]) -> list[str]:
    ids = []
    for text in texts:
        memory = store.remember(
            text, tier="episodic", principal=principal, session=session, force=True
        ).memory
        assert memory is not None
        ids.append(memory.id)
    store.close_session(session, principal)
    return ids


def test_steps_read_actions_from_ordinary_sentences() -> None:
    found = steps("I restarted nginx, then cleared the cache and checked the error logs.")
    assert [(s.verb, sorted(s.obj)) for s in found] == [
        ("restart", ["nginx"]),
        ("clear", ["cache"]),
        ("check", ["error", "log"]),
    ]
    assert [s.text for s in found] == ["restart nginx", "clear the cache", "check the error logs"]
    assert steps("I went to the support group yesterday and it was amazing.") == []
    assert steps("I gave the keys to Mark") == []  # a name is not the verb "mark"


def test_the_same_steps_in_another_order_or_only_two_make_no_routine() -> None:
    sessions = {
        "a": [("e1", "Opened the ticket, assigned it to the on-call engineer, and notified the customer.")],
        "b": [
            ("e2", "Notified the customer, then opened the ticket and assigned it to the on-call engineer.")
        ],
    }
    assert find_routines(sessions, "alice") == []
    sessions["b"] = [("e2", "Opened the ticket and assigned it to the on-call engineer.")]
    assert find_routines(sessions, "alice") == []


def test_a_routine_from_two_sessions_is_reviewed_kept_as_a_procedure_and_undone(store: Store) -> None:
    first = _session(
        store, "alice", "mon", ["Pulled the latest changes, ran the migrations, deployed to staging."]
    )
    second = _session(
        store,
        "alice",
        "thu",
        ["I pulled the latest changes from main.", "Ran the migrations and deployed to staging."],
    )
    # Bob did the same once, and an open session of alice's does not count until it is closed.
    _session(store, "bob", "b1", ["Pulled the latest changes, ran the migrations, deployed to staging."])
    store.remember(
        "Pulled the latest changes, ran the migrations, deployed to staging.",
        tier="episodic",
        principal="alice",
        session="open-one",
        closed=False,  # as an agent's episodes are written, until close_session
        force=True,
    )

    queue = build_queue(store.engine, ALICE, ("routine",))
    [item] = queue.items
    assert item.kind == "routine" and item.principal == "alice"
    assert item.extra["steps"] == ["pull the latest changes", "run the migrations", "deploy to staging"]
    assert sorted(item.extra["sessions"]) == ["mon", "thu"]
    assert set(item.extra["episodes"]) == set(first + second)
    assert "1 routine" in queue.counts_line()
    assert (
        build_queue(store.engine, Scope.of("bob"), ("routine",)).items == []
    )  # one session of bob's: nothing

    done = decide(store.engine, item.key, "keep-left", ALICE)
    procedure = store.get(done["created"], ALICE)
    assert procedure.tier == "procedural" and procedure.principal == "alice"
    assert procedure.steps == ["pull the latest changes", "run the migrations", "deploy to staging"]
    assert set(procedure.learned_from) == set(first + second)
    assert build_queue(store.engine, ALICE, ("routine",)).items == []  # a procedure holds it now

    undo(store.engine, done, ALICE)
    assert store.get(done["created"], ALICE).state == "deprecated"
    assert [i.key for i in build_queue(store.engine, ALICE, ("routine",)).items] == [
        item.key
    ]  # back in the queue


def test_a_dismissed_routine_stays_out_of_the_queue(store: Store) -> None:
    _session(store, "alice", "s1", ["Watered the tomatoes, fed the cat, emptied the dishwasher."])
    _session(
        store, "alice", "s2", ["Watered the tomatoes", "then fed the cat", "and emptied the dishwasher."]
    )
    [item] = build_queue(store.engine, ALICE, ("routine",)).items
    decide(store.engine, item.key, "dismiss", ALICE)
    assert build_queue(store.engine, ALICE, ("routine",)).items == []


def test_the_review_command_lists_and_keeps_a_routine(memdeck_home: Path, tmp_path: Path) -> None:
    (memdeck_home / "config.toml").write_text('[embedding]\nmodel = "hash-384"\n')
    path = tmp_path / "s"
    store = Store.open(path)
    _session(store, "alice", "s1", ["Stopped the service, truncated the log table, vacuumed the database."])
    _session(
        store, "alice", "s2", ["I stopped the service", "truncated the log table", "vacuumed the database"]
    )
    store.close()
    env = {**os.environ, "MEMDECK_HOME": str(memdeck_home)}

    def memdeck(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "memdeck.cli", *args, "--store", str(path)],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    listed = memdeck("review", "--json")
    assert listed.returncode == 0, listed.stderr
    [item] = [i for i in json.loads(listed.stdout) if i["kind"] == "routine"]
    kept = memdeck("review", "keep-left", item["key"], "--json")
    assert kept.returncode == 0, kept.stderr
    created = json.loads(kept.stdout)["created"]
    shown = memdeck("show", created, "--json")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["steps"] == [
        "stop the service",
        "truncate the log table",
        "vacuum the database",
    ]
