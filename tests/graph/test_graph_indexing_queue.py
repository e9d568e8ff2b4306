"""Graph indexing runs after the write, in the background: the entities of a write appear by themselves,
every read of the graph drains what is queued first, a forget never leaves a mention of what was queued,
a killed process's queue is indexed by the next open, and a failed indexing is reported."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memdeck.core.filters import Scope
from memdeck.core.graph.memory import indexer as indexer_module
from memdeck.core.graph.memory.indexer import GraphIndexError, indexer_for
from memdeck.core.graph.memory.queue import QUEUE_DIR
from memdeck.core.store import Store

DEADLINE_S = 10.0


def stored_entities(store: Store) -> list[dict]:
    """The entity rows as the table holds them, read without draining the queue."""
    if not store.engine.has_table("entities"):
        return []
    store.engine.refresh()
    return store.engine.table("entities").to_arrow().to_pylist()


def names(rows: list[dict]) -> set[str]:
    return {r["name"] for r in rows}


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> None:
    """The background thread waits far longer than a test: what is queued stays queued until a read."""
    monkeypatch.setattr(indexer_module, "SETTLE_S", 600.0)


def test_a_writes_entities_appear_in_the_background_without_a_read(store):
    store.remember("Marguerite Okafor moved to Lisbon in 2021.", principal="alice")
    deadline = time.monotonic() + DEADLINE_S
    while "Marguerite Okafor" not in names(stored_entities(store)):
        assert time.monotonic() < deadline, f"not indexed within {DEADLINE_S} s: {stored_entities(store)}"
        time.sleep(0.05)
    row = next(r for r in stored_entities(store) if r["name"] == "Marguerite Okafor")
    assert row["principal"] == "alice" and len(row["mentions"]) == 1


def test_the_write_returns_before_the_graph_is_indexed(store, held):
    result = store.remember("Thaddeus Brannigan runs the Oslo office.", principal="alice")
    assert "Thaddeus Brannigan" not in names(stored_entities(store))  # queued, not on the write path
    assert indexer_for(store.engine).pending == 1
    assert "Thaddeus Brannigan" in {e["name"] for e in store.memory_entities("alice", result.memory.id)}
    assert "Thaddeus Brannigan" in names(stored_entities(store))  # the read drained it
    assert indexer_for(store.engine).pending == 0


READERS = {
    "entities": lambda s, m: {e["name"] for e in s.entities(Scope.of("alice"))},
    "entity": lambda s, m: {s.entity("alice", "Wilhelmina Achterberg")["name"]},
    "memory_entities": lambda s, m: {e["name"] for e in s.memory_entities("alice", m.id)},
    "related": lambda s, m: {s.related("alice", "Wilhelmina Achterberg")["entity"]["name"]},
    "path": lambda s, m: {s.path("alice", "Wilhelmina Achterberg", "Wilhelmina Achterberg")["from"]["name"]},
    "analytics": lambda s, m: {e["name"] for e in s.analytics(Scope.of("alice")).graph()["most_connected"]},
    "recall": lambda s, m: (
        {"Wilhelmina Achterberg"}
        if next(
            i for i in s.recall("Wilhelmina Achterberg", principal="alice").items if i.memory.id == m.id
        ).components["graph"]
        > 0
        else set()
    ),
}


@pytest.mark.parametrize("reader", sorted(READERS))
def test_every_graph_read_sees_a_write_made_just_before(store, held, reader):
    memory = store.remember("Wilhelmina Achterberg chairs the Rotterdam board.", principal="alice").memory
    assert "Wilhelmina Achterberg" not in names(stored_entities(store))
    assert "Wilhelmina Achterberg" in READERS[reader](store, memory)


def test_an_edit_is_indexed_again_in_order(store, held):
    memory = store.remember("Ottoline Vasquez met Bartholomew Ng in Quito.", principal="alice").memory
    store.edit(memory.id, "Ottoline Vasquez met Cordelia Haines in Quito.")
    assert indexer_for(store.engine).pending == 2  # the first write and the edit, neither indexed yet
    mentioned = {e["name"] for e in store.memory_entities("alice", memory.id)}
    assert "Cordelia Haines" in mentioned and "Bartholomew Ng" not in mentioned
    assert "Bartholomew Ng" not in names(stored_entities(store))  # only the old text named him: gone


def test_forgetting_a_queued_memory_leaves_no_mention(store, held):
    kept = store.remember("Ignatius Ferreira leads the Porto team.", principal="alice").memory
    gone = store.remember("Ignatius Ferreira introduced Perpetua Lindqvist.", principal="alice").memory
    assert indexer_for(store.engine).pending == 2
    receipt = store.forget([gone.id], "user request")
    assert receipt["outcome"] == "verified"
    indexer_for(store.engine).flush()
    rows = stored_entities(store)
    assert "Perpetua Lindqvist" not in names(rows)
    assert not [r for r in rows if gone.id in (r["mentions"] or [])]
    relations = (
        store.engine.table("relations").to_arrow().to_pylist() if store.engine.has_table("relations") else []
    )
    assert not [r for r in relations if gone.id in (r["sources"] or [])]
    assert kept.id in next(r for r in rows if r["name"] == "Ignatius Ferreira")["mentions"]


def test_a_memory_forgotten_by_another_process_while_queued_is_never_indexed(store, held, tmp_path):
    gone = store.remember("Evangeline Mbeki signed with Clementine Osei.", principal="alice").memory
    assert indexer_for(store.engine).pending == 1
    script = f"""
from memdeck.core.embed import HashEmbedder
from memdeck.core.store import Store
s = Store.open({str(store.root)!r}, embedder=HashEmbedder())
print(s.forget([{gone.id!r}], "user request")["outcome"])
s.close()
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "verified", out.stderr
    indexer_for(store.engine).flush()  # the job was queued before that purge: its rows are read again
    rows = stored_entities(store)
    assert not {"Evangeline Mbeki", "Clementine Osei"} & names(rows)
    assert not [r for r in rows if gone.id in (r["mentions"] or [])]


CHILD = """
import sys, time
from memdeck.core.embed import HashEmbedder
from memdeck.core.graph.memory.queue import graph_lock
from memdeck.core.store import Store

store = Store.open(sys.argv[1], embedder=HashEmbedder())
graph_lock(store.engine).acquire()  # the background thread cannot index before the kill
result = store.remember("Florentyna Kowalczyk founded Ardent Analytics in Gdansk.", principal="alice")
print(result.memory.id, flush=True)
time.sleep(300)
"""


def test_kill_9_after_the_commit_leaves_the_graph_to_the_next_open(tmp_path, open_store):
    root = tmp_path / "store"
    open_store(root).close()
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(root)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None
        memory_id = child.stdout.readline().strip()
        assert memory_id, child.stderr.read() if child.stderr else ""
        os.kill(child.pid, signal.SIGKILL)
        assert child.wait(timeout=30) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
    left = list((root / QUEUE_DIR).iterdir())
    assert left and memory_id in left[0].read_text()  # its queue file, ids only
    store = open_store(root)
    assert store.get(memory_id).text.startswith("Florentyna")  # the write itself had committed
    # The open queued what the killed process left: it is indexed in the background, no read needed.
    deadline = time.monotonic() + DEADLINE_S
    while "Florentyna Kowalczyk" not in names(stored_entities(store)):
        assert time.monotonic() < deadline, "the killed process's memory was not indexed after the next open"
        time.sleep(0.05)
    row = next(r for r in stored_entities(store) if r["name"] == "Florentyna Kowalczyk")
    assert row["mentions"] == [memory_id]
    assert not [p for p in left if p.exists()]  # the dead process's file was taken over and removed
    store.close()
    assert not list((root / QUEUE_DIR).iterdir())  # nothing left undone, nothing left behind


def test_a_failed_indexing_is_reported_and_done_again_at_the_next_open(
    tmp_path, open_store, monkeypatch, caplog
):
    root = tmp_path / "store"
    store = open_store(root)
    real = indexer_module.index_memories

    def broken(engine, memories):
        if memories:
            raise RuntimeError("extractor crashed")
        return real(engine, memories)

    monkeypatch.setattr(indexer_module, "index_memories", broken)
    memory = store.remember("Casimir Delacroix opened a bakery in Lyon.", principal="alice").memory
    with pytest.raises(GraphIndexError, match="extractor crashed"):
        deadline = time.monotonic() + DEADLINE_S
        while indexer_for(store.engine).pending and time.monotonic() < deadline:
            time.sleep(0.05)  # the background thread meets the error
        store.entities()
    assert "indexing 1 memories into the graph failed (RuntimeError: extractor crashed)" in caplog.text
    assert store.entities() == []  # reported once; the graph read still answers
    monkeypatch.setattr(indexer_module, "index_memories", real)
    store.close()
    queued = [json.loads(line) for p in (root / QUEUE_DIR).iterdir() for line in p.read_text().splitlines()]
    assert [e["refs"] for e in queued if "refs" in e] == [[["semantic", memory.id]]]  # kept for next time
    again = open_store(root)
    assert {e["name"] for e in again.memory_entities("alice", memory.id)} >= {"Casimir Delacroix"}


def test_cli_add_then_path_in_another_process_finds_the_entities(memdeck_home, tmp_path):
    (memdeck_home / "config.toml").write_text('[embedding]\nmodel = "hash-384"\n')
    env = {**os.environ, "MEMDECK_HOME": str(memdeck_home)}
    env.pop("MEMDECK_DEBUG", None)
    store = str(tmp_path / "s")

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "memdeck.cli", "--store", store, *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    text = "Leopoldina Haverkamp works with Augustin Moreau at Vireo Labs."
    added = cli("add", text, "--tier", "semantic", "--principal", "alice")
    assert added.returncode == 0, added.stderr
    found = cli("path", "Leopoldina Haverkamp", "Augustin Moreau", "--principal", "alice", "--json")
    assert found.returncode == 0, found.stderr
    body = json.loads(found.stdout)
    assert body["found"] is True
    assert [s["entity"]["name"] for s in body["path"]] == ["Leopoldina Haverkamp", "Augustin Moreau"]
    assert not list((Path(store) / QUEUE_DIR).iterdir())  # the adding process drained it before exiting
