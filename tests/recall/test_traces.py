"""The recall trace log: what is logged, retention, visibility, lock contention, and erasure on forget."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest

from memdeck.cli import main
from memdeck.core.config import COMPONENTS
from memdeck.core.errors import NotFound
from memdeck.core.filters import Scope
from memdeck.core.recall import traces
from memdeck.core.recall.feedback import feedback, feedback_counts
from memdeck.core.records import now
from memdeck.core.storage import logdb
from memdeck.core.store import Store
from memdeck.core.tuning.evaluate import judge, list_judgments


def _seed(store: Store, principal: str = "alice", n: int = 12) -> list[str]:
    items = [
        {
            "text": f"note {i} about the garden and the {w} tomatoes",
            "tier": "semantic",
            "principal": principal,
            "agent": "gardener" if i % 2 else "planner",
        }
        for i, w in enumerate(["red", "green", "yellow", "cherry", "plum", "beef"] * (n // 6))
    ]
    return [r.memory.id for r in store.remember_many(items)]


def _raw_bytes(store: Store) -> bytes:
    path = logdb.log_path(store.engine)
    data = b""
    for p in (path, path.with_name(path.name + ".wal")):
        if p.exists():
            data += p.read_bytes()
    return data


def test_every_recall_is_logged_with_candidates_components_and_ranks(store: Store) -> None:
    _seed(store)
    result = store.recall("tomatoes in the garden", principal="alice", agent="bot", k=3)
    assert result.trace_id and result.trace_id.startswith("trc_")
    traces.flush(store.engine)
    trace = traces.get_trace(store.engine, result.trace_id)
    assert trace.query == "tomatoes in the garden"
    assert trace.principals == ["alice"]
    assert trace.agent == "bot"
    assert trace.source == "api"
    assert trace.k == 3
    assert trace.profile["name"] == "default"
    assert trace.profile["weights"]["relevance"] == pytest.approx(0.6)
    assert trace.returned == [s.memory.id for s in result.items]
    assert len(trace.candidates) == len(result.candidates)
    by_id = {c.memory_id: c for c in trace.candidates}
    for rank, item in enumerate(result.items, start=1):
        logged = by_id[item.memory.id]
        assert logged.returned_rank == rank
        assert logged.score == pytest.approx(item.score)
        assert set(logged.components) == set(COMPONENTS)
        for name in COMPONENTS:
            assert logged.components[name] == pytest.approx(item.components[name])
        assert logged.ranks == item.ranks
    assert sum(1 for c in trace.candidates if c.returned_rank is None) == len(trace.candidates) - len(
        result.items
    )


def _hash_cli(home: Path) -> None:
    """Make the command line use the hash embedder (these tests are about plumbing, not meaning)."""
    (home / "config.toml").write_text('[embedding]\nmodel = "hash-384"\n', encoding="utf-8")


def _join_writers() -> None:
    # In a real CLI process the store closes at exit and that flushes; here main() returns in-process.
    for thread in threading.enumerate():
        if thread.name == "memdeck-traces":
            thread.join(timeout=60)


def test_command_line_recall_is_logged_as_cli(
    store: Store, capsys: pytest.CaptureFixture[str], memdeck_home: Path
) -> None:
    _hash_cli(memdeck_home)
    _seed(store)
    store.close()
    assert (
        main(["--store", str(store.root), "recall", "garden", "--principal", "alice", "--agent", "cli-bot"])
        == 0
    )
    capsys.readouterr()
    _join_writers()
    reopened = Store.open(store.root, embedder=store.engine.embedder, config=store.settings)
    try:
        listed = traces.list_traces(reopened.engine)
        assert [t.source for t in listed] == ["cli"]
        assert listed[0].agent == "cli-bot"
    finally:
        reopened.close()


def test_close_flushes_pending_traces(store: Store) -> None:
    _seed(store)
    result = store.recall("garden", principal="alice")
    store.close()  # no explicit flush: close joins the writer thread
    reopened = Store.open(store.root, embedder=store.engine.embedder, config=store.settings)
    try:
        assert [t.trace_id for t in traces.list_traces(reopened.engine)] == [result.trace_id]
    finally:
        reopened.close()


def test_disabled_traces_write_nothing(open_store) -> None:
    s = open_store(traces={"enabled": False})
    _seed(s)
    result = s.recall("garden", principal="alice")
    s.close()
    assert result.trace_id is None
    assert not logdb.log_path(s.engine).exists()


def test_trace_false_skips_the_log(store: Store) -> None:
    _seed(store)
    store.recall("garden", principal="alice", trace=False)
    assert traces.list_traces(store.engine) == []


def test_retention_by_count_and_age(open_store) -> None:
    s = open_store(traces={"enabled": True, "retention_days": 30, "max_traces": 3})
    _seed(s)
    old = s.recall("old garden", principal="alice", trace=False)
    old.at = now() - timedelta(days=45)
    traces.log_recall(s.engine, old)
    kept = [s.recall(f"garden {i}", principal="alice").trace_id for i in range(5)]
    traces.prune(s.engine)
    remaining = [t.trace_id for t in traces.list_traces(s.engine)]
    assert old.trace_id not in remaining
    assert sorted(remaining) == sorted(kept[-3:])
    with logdb.connection(logdb.log_path(s.engine)) as con:
        orphans = con.execute(
            "SELECT count(*) FROM trace_candidates WHERE trace_id NOT IN (SELECT trace_id FROM traces)"
        ).fetchone()[0]
    assert orphans == 0


def test_traces_are_visible_only_within_their_scope(store: Store) -> None:
    _seed(store, "alice")
    _seed(store, "bob")
    a = store.recall("garden", principal="alice")
    b = store.recall("garden", principal="bob")
    both = store.recall("garden", principal=["alice", "bob"])
    traces.flush(store.engine)
    assert {t.trace_id for t in traces.list_traces(store.engine, scope=Scope.of("bob"))} == {b.trace_id}
    assert {t.trace_id for t in traces.list_traces(store.engine, scope=Scope.of("alice", "bob"))} == {
        a.trace_id,
        b.trace_id,
        both.trace_id,
    }
    with pytest.raises(NotFound):
        traces.get_trace(store.engine, a.trace_id, Scope.of("bob"))
    with pytest.raises(NotFound):
        traces.get_trace(store.engine, both.trace_id, Scope.of("bob"))
    assert traces.get_trace(store.engine, a.trace_id, Scope.everyone()).trace_id == a.trace_id


def test_a_second_process_holding_the_file_delays_the_write_but_not_the_recall(
    store: Store, tmp_path: Path
) -> None:
    _seed(store)
    store.recall("warm up", principal="alice")
    traces.flush(store.engine)
    path = logdb.log_path(store.engine)
    ready = tmp_path / "ready"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
        import duckdb, pathlib, time
        con = duckdb.connect({str(path)!r})
        pathlib.Path({str(ready)!r}).write_text("x")
        time.sleep(1.5)
        con.close()
    """),
        ]
    )
    try:
        deadline = time.monotonic() + 60
        while not ready.exists():
            assert holder.poll() is None and time.monotonic() < deadline, "holder did not start"
            time.sleep(0.02)
        result = store.recall("garden while locked", principal="alice")
        assert result.items  # the recall itself does not touch the file
        traces.flush(store.engine)  # retries until the other process lets go
    finally:
        holder.wait(timeout=60)
    assert "garden while locked" in [t.query for t in traces.list_traces(store.engine)]


def test_scrub_drops_every_trace_mentioning_the_ids_and_rewrites_the_file(store: Store) -> None:
    ids = _seed(store)
    secret_query = "zebra-unicorn-7421 where are the cherry tomatoes"
    hit = store.recall(secret_query, principal="alice", k=3)
    target = hit.items[0].memory.id
    other = store.remember("the shed door squeaks", tier="semantic", principal="bob").memory
    unrelated = store.recall("shed door", principal="bob", k=1)
    assert target not in {c.memory.id for c in unrelated.candidates.candidates}
    judge(store.engine, secret_query, "alice", target, True)
    judge(
        store.engine, secret_query, "alice", ids[-1], False
    )  # same query: it may quote the forgotten memory
    judge(store.engine, "shed door", "bob", other.id, True)
    feedback(store.engine, target, "bot", useful=True)
    traces.flush(store.engine)
    assert secret_query.encode() in _raw_bytes(store) and target.encode() in _raw_bytes(store)

    report = logdb.scrub(store.engine, [target])

    assert report["rewritten"] is True
    assert report["deleted"]["traces"] == 1
    assert report["deleted"]["judgments"] == 2
    assert report["deleted"]["feedback"] == 1
    remaining = traces.list_traces(store.engine)
    assert [t.trace_id for t in remaining] == [unrelated.trace_id]
    assert [j.memory_id for j in list_judgments(store.engine)] == [other.id]
    assert feedback_counts(store.engine) == {}
    raw = _raw_bytes(store)
    assert secret_query.encode() not in raw
    assert target.encode() not in raw
    assert b"shed door" in raw  # the rewrite kept what it should


def test_scrub_principal_removes_their_traces_judgments_and_feedback(store: Store) -> None:
    _seed(store, "alice")
    bob_ids = _seed(store, "bob")
    a = store.recall("alice-only-query-3141 garden", principal="alice")
    b = store.recall("bob-only-query-2718 garden", principal="bob")
    everyone = store.recall("operator garden", scope=Scope.everyone())
    judge(store.engine, "bob-only-query-2718 garden", "bob", bob_ids[0], True)
    feedback(store.engine, bob_ids[0], "bot", useful=False)
    traces.flush(store.engine)
    report = logdb.scrub_principal(store.engine, "bob")
    assert report["rewritten"] is True
    left = {t.trace_id for t in traces.list_traces(store.engine)}
    assert a.trace_id in left
    assert b.trace_id not in left
    assert everyone.trace_id not in left  # its candidates included bob's memories
    assert list_judgments(store.engine) == []
    raw = _raw_bytes(store)
    assert b"bob-only-query-2718" not in raw
    assert b"alice-only-query-3141" in raw


def test_scrub_without_a_log_is_a_no_op(store: Store) -> None:
    report = logdb.scrub(store.engine, ["sem_nothing"])
    assert report["rewritten"] is False
    assert not logdb.log_path(store.engine).exists()


def test_traces_cli_list_and_show(
    store: Store, capsys: pytest.CaptureFixture[str], memdeck_home: Path
) -> None:
    _hash_cli(memdeck_home)
    _seed(store)
    result = store.recall("garden tomatoes", principal="alice", agent="bot")
    store.close()
    root = str(store.root)
    assert main(["--store", root, "traces", "list", "--json"]) == 0
    import json

    listed = json.loads(capsys.readouterr().out)
    assert [t["trace_id"] for t in listed] == [result.trace_id]
    assert main(["--store", root, "traces", "show", result.trace_id, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["query"] == "garden tomatoes"
    assert shown["candidates"][0]["components"].keys() == set(COMPONENTS)
    assert main(["--store", root, "traces", "show", result.trace_id]) == 0
    assert "garden tomatoes" in capsys.readouterr().out
    assert main(["--store", root, "traces", "show", result.trace_id, "--principal", "bob"]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no trace" in err


def test_trace_query_text_is_redacted_like_memory_text(store):
    from memdeck.core.recall import traces as T

    store.remember("alice's manager is Dana", tier="semantic", principal="alice")
    store.recall("what did alice.smith@example.com ask about Dana", principal="alice")
    T.flush(store.engine)
    queries = [t.query for t in T.list_traces(store.engine)]
    assert queries and all("alice.smith@example.com" not in q for q in queries)
    assert any("<EMAIL_" in q for q in queries)


def test_a_trace_logs_the_weights_the_recall_used_though_the_profile_changes_after(store: Store) -> None:
    """The candidates' rows are made when the log is written, off the recall's thread; what they record is
    still the recall as it ran (the app tunes weights on the result's profile right after)."""
    _seed(store)
    result = store.recall("tomatoes in the garden", principal="alice", k=3)
    scored = {item.memory.id: item.score for item in result.items}
    result.profile.weights["relevance"] = 0.0  # changed before the writer ran
    result.profile.weights["pinned"] = 5.0
    traces.flush(store.engine)
    trace = traces.get_trace(store.engine, result.trace_id)
    assert trace.profile["weights"]["relevance"] == pytest.approx(0.6)
    for c in trace.candidates:
        if c.memory_id in scored:
            assert c.score == pytest.approx(scored[c.memory_id])


def test_a_query_the_redactor_fails_on_is_never_logged_and_the_others_are(store: Store, monkeypatch) -> None:
    _seed(store)
    kept = store.recall("tomatoes", principal="alice")
    real = store.engine.redact

    def failing(text: str, principal: str) -> str:
        if "plum" in text:
            raise RuntimeError("redactor unavailable")
        return real(text, principal)

    monkeypatch.setattr(store.engine, "redact", failing)
    lost = store.recall("plum tomatoes", principal="alice")  # the recall itself is unaffected
    assert lost.items and lost.trace_id
    traces.flush(store.engine)
    logged = {t.trace_id for t in traces.list_traces(store.engine)}
    assert kept.trace_id in logged and lost.trace_id not in logged
    assert b"plum tomatoes" not in _raw_bytes(store)
