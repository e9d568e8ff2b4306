"""Maintenance that runs on its own: the scheduler purges expired memories with receipts, consolidates
closed and idle sessions, re-syncs changed MEMORY.md folders, enforces size limits, and shows (and retries)
a failure, all without any command."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memdeck.cli.mcp import _Backend
from memdeck.core import NotFound, Scope
from memdeck.core.errors import MemdeckError
from memdeck.core.maintenance.limits import over_limit
from memdeck.core.maintenance.scheduler import Scheduler, TaskStatus
from memdeck.core.receipts import ReceiptBook
from memdeck.core.storage.sessions import pending_consolidation

FAST = {"evict_interval_s": 0.2, "consolidate_interval_s": 0.2, "index_interval_s": 3600, "retry_s": 0.2}


def wait_for(check: Callable[[], bool], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    raise AssertionError("timed out waiting for the scheduler")


def test_an_expired_memory_is_purged_with_a_receipt_without_any_command(open_store):
    s = open_store(maintenance=FAST)
    doomed = s.remember(
        "the wifi password this week is tulip",
        tier="semantic",
        principal="ann",
        expires_at=datetime.now(UTC) + timedelta(seconds=1),
    ).memory
    kept = s.remember("the wifi network is called home", tier="semantic", principal="ann").memory
    scheduler = Scheduler(s.engine).start()
    try:

        def purged() -> bool:
            try:
                s.get(doomed.id)
            except NotFound:
                return True
            return False

        wait_for(purged)
    finally:
        scheduler.stop()
    book = ReceiptBook(s.root)
    receipts = [book.get(r["receipt_id"]) for r in book.list()]
    assert len(receipts) == 1 and receipts[0]["reason"] == "ttl"
    assert [d["id"] for d in receipts[0]["deleted"]] == [doomed.id]
    assert s.get(kept.id)
    status = scheduler.tasks["expiry"]
    assert (
        status.ok
        and status.last_run is not None
        and status.runs >= 2
        and status.summary.startswith("evicted")
    )


def test_a_session_closed_through_mcp_gets_consolidated(memdeck_home, tmp_path):
    (memdeck_home / "config.toml").write_text(
        '[embedding]\nmodel = "hash-384"\n[maintenance]\nevict_interval_s = 0.2\nconsolidate_interval_s = 0.2\n'
    )
    backend = _Backend("alice", "assistant", tmp_path / "store")
    sessions_runs: list[str] = []  # the sessions task's summary after each of its runs

    def ran(task: TaskStatus) -> None:
        if task.name == "sessions":
            sessions_runs.append(task.summary)

    try:
        a = backend.remember(
            "Planned the trip. Alice always books an aisle seat on flights.", tier="episodic"
        )
        backend.remember("Talked about food. Alice always books an aisle seat on flights.", tier="episodic")
        assert a["session"] == backend.session
        store = backend.store
        assert store.get(a["id"]).closed is False
        assert backend.scheduler is not None and backend.scheduler.running
        backend.scheduler.on_change = ran
        out = backend.close_session()
        assert out == {
            "session": backend.session,
            "principal": "alice",
            "episodes": 2,
            "closed": 2,
            "queued": True,
            "why": "closed",
        }
        assert store.get(a["id"]).closed is True

        def consolidated() -> bool:
            facts = {m.text for m in store.list(Scope.of("alice"), tier="semantic")}
            return "Alice always books an aisle seat on flights." in facts and not pending_consolidation(
                store.engine
            )

        wait_for(consolidated)
        # The run that consolidated reports it once it returns, a moment after its writes are visible.
        wait_for(lambda: any(not s.startswith("consolidated 0 ") for s in sessions_runs))
        worked = [s for s in sessions_runs if not s.startswith("consolidated 0 ")]
        assert worked[0].startswith("consolidated 1 session"), sessions_runs
        with pytest.raises(MemdeckError):
            backend.close_session("no-such-session")
    finally:
        backend.scheduler.stop()
        backend.store.close()


def test_an_idle_session_is_closed_and_consolidated(open_store):
    s = open_store(maintenance={**FAST, "session_idle_minutes": 30})
    old = datetime.now(UTC) - timedelta(hours=2)
    for text in (
        "Alice always books an aisle seat on flights. First chat.",
        "Alice always books an aisle seat on flights. Second chat.",
    ):
        s.remember(text, tier="episodic", principal="alice", session="s-idle", closed=False, created_at=old)
    s.remember("still talking", tier="episodic", principal="alice", session="s-live", closed=False)
    task = Scheduler(s.engine).run("sessions")
    assert task.ok and task.detail["idle_closed"] == ["s-idle"]
    assert "s-idle" in task.detail["consolidated"]
    live = [s.get(m.id) for m in s.list(Scope.of("alice"), tier="episodic", limit=10)]
    assert {m.session: m.closed for m in live} == {"s-idle": True, "s-live": False}


def test_a_changed_memory_folder_is_resynced_by_the_running_scheduler(open_store, tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "MEMORY.md").write_text("# Tools\nAlice uses vim for everything.\n")
    s = open_store(maintenance=FAST, sync={"folders": [str(folder)], "principal": "alice", "interval_s": 0.2})
    scheduler = Scheduler(s.engine).start()

    def texts() -> set[str]:
        return {m.text for m in s.list(Scope.of("alice"), limit=100)}

    try:
        wait_for(lambda: any("vim" in t for t in texts()))
        (folder / "MEMORY.md").write_text("# Tools\nAlice switched to helix this year.\n")
        wait_for(lambda: any("helix" in t for t in texts()) and not any("vim" in t for t in texts()))
    finally:
        scheduler.stop()
    assert scheduler.tasks["sync"].ok


def test_a_failing_task_is_shown_logged_and_retried(open_store, caplog, monkeypatch):
    s = open_store(maintenance=FAST)
    scheduler = Scheduler(s.engine)
    calls = []

    def broken() -> tuple[str, dict]:
        calls.append(1)
        if len(calls) == 1:
            raise OSError("disk went away")
        return "ok now", {}

    monkeypatch.setattr(scheduler, "_task_expiry", broken)
    task = scheduler.run("expiry")
    assert task.ok is False and "disk went away" in (task.error or "") and task.failures == 1
    assert "disk went away" in caplog.text
    time.sleep(0.25)
    assert "expiry" in scheduler.run_due()
    assert scheduler.tasks["expiry"].ok and scheduler.tasks["expiry"].error is None


def test_size_limits_evict_the_least_valuable_never_pinned(open_store):
    s = open_store(limits={"semantic": 3})
    old = datetime.now(UTC) - timedelta(days=400)
    low = s.remember(
        "a trivial old fact", tier="semantic", principal="ann", importance=0.1, created_at=old
    ).memory
    pin = s.remember(
        "a pinned old fact", tier="semantic", principal="ann", importance=0.0, created_at=old, pinned=True
    ).memory
    mid = s.remember("a middling fact", tier="semantic", principal="ann", importance=0.3).memory
    for i in range(2):
        s.remember(f"an important fact {i}", tier="semantic", principal="ann", importance=0.9)
    s.remember("bob's only fact", tier="semantic", principal="bob", importance=0.0)
    assert over_limit(s.engine) == {"ann": [low.id, mid.id]}
    task = Scheduler(s.engine).run("expiry")
    assert task.ok and task.detail["over_limit"] == 2
    assert s.get(pin.id) and s.count(Scope.of("ann")) == 3
    book = ReceiptBook(s.root)
    receipt = book.get(book.list()[0]["receipt_id"])
    assert receipt["reason"] == "size limit" and [d["id"] for d in receipt["deleted"]] == [low.id, mid.id]


def test_bad_settings_get_one_clear_line(open_store):
    with pytest.raises(MemdeckError, match=r"maintenance\.evict_interval_s"):
        Scheduler(open_store(maintenance={"evict_interval_s": "often"}).engine)
    with pytest.raises(MemdeckError, match=r"limits\.semantic"):
        over_limit(open_store(Path(open_store().root.parent / "x"), limits={"semantic": -1}).engine)


def test_the_scheduler_never_syncs_away_an_emptied_folder(open_store, tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "MEMORY.md").write_text("# Tools\nAlice uses vim for everything.\n# Pets\nAlice has a cat.\n")
    s = open_store(maintenance=FAST, sync={"folders": [str(folder)], "principal": "alice", "interval_s": 0.2})
    scheduler = Scheduler(s.engine)
    assert scheduler.run("sync").ok and s.count(Scope.of("alice")) == 2
    (folder / "MEMORY.md").unlink()
    task = scheduler.run("sync")
    assert task.ok is False and "would forget 2 of its 2 memories" in (task.error or "")
    assert task.summary.startswith("failed:")
    assert s.count(Scope.of("alice")) == 2 and ReceiptBook(s.root).list() == []
    assert (
        scheduler.run("sync").ok is False
    )  # retried, and still refused: nothing forgotten behind anyone's back
    assert s.count(Scope.of("alice")) == 2


def test_the_expiry_task_skips_its_scan_until_something_can_have_expired(open_store):
    s = open_store(maintenance=FAST)
    soon = s.remember(
        "the door code this week is 4471",
        tier="semantic",
        principal="ann",
        expires_at=datetime.now(UTC) + timedelta(seconds=2),
    ).memory
    s.remember("the door is green", tier="semantic", principal="ann")
    scheduler = Scheduler(s.engine)
    assert scheduler.run("expiry").detail.get("skipped") is None  # the first run scans
    s.recall("door", principal="ann")
    s.engine.flush_access()  # the recall's access counts are committed: a new table version that moves nothing sooner
    task = scheduler.run("expiry")
    assert task.detail["skipped"] is True and "no scan: nothing changed, next expiry" in task.summary
    time.sleep(2.2)
    task = scheduler.run("expiry")  # the earliest expiry has passed: scanned and purged
    assert task.detail.get("skipped") is None and task.detail["expired"] == 1
    with pytest.raises(NotFound):
        s.get(soon.id)
    assert scheduler.run("expiry").detail["skipped"] is True
    later = s.remember(
        "the alarm code is 9081",
        tier="semantic",
        principal="ann",
        expires_at=datetime.now(UTC) - timedelta(seconds=1),
    ).memory  # a write: scan again
    task = scheduler.run("expiry")
    assert task.detail.get("skipped") is None and task.detail["expired"] == 1
    with pytest.raises(NotFound):
        s.get(later.id)


def test_index_upkeep_leaves_a_table_alone_until_fragments_pile_up(open_store, monkeypatch):
    from memdeck.core.maintenance.maintain import table_versions

    s = open_store(maintenance=FAST, store={"compact_fragment_threshold": 4})
    s.remember("first note about the garden", tier="semantic", principal="ann")
    scheduler = Scheduler(s.engine)
    before = table_versions(s.engine)
    task = scheduler.run("indexes")
    assert task.ok and task.detail["compacted"] == [] and table_versions(s.engine) == before
    monkeypatch.setattr(
        s.engine, "maybe_compact", lambda tier: None
    )  # as writes of another process may leave them
    for n in range(5):  # five small appends: five small fragments
        s.remember(f"note {n} about the shed", tier="semantic", principal="ann", force=True)
    task = scheduler.run("indexes")
    assert task.ok and task.detail["compacted"] == ["semantic"]
    from memdeck.core.maintenance.maintain import upkeep_due

    assert upkeep_due(s.engine, "semantic")["small_fragments"] < 4


def test_nothing_runs_before_the_start_delay_and_everything_due_runs_after_it(open_store):
    s = open_store(maintenance=FAST)
    clock = [100.0]
    scheduler = Scheduler(s.engine, clock=lambda: clock[0], start_delay_s=5.0)
    clock[0] = 104.9
    assert scheduler.run_due() == []
    clock[0] = 105.0
    assert scheduler.run_due() == ["expiry", "sessions"]


def test_the_mcp_server_delays_maintenance_and_runs_it_at_the_process_priority(memdeck_home, tmp_path):
    """Delayed, so the first answers come first; at the process's priority, so a thread holding the store's
    lock is never starved while a tool call waits for it."""
    import os
    import sys
    import threading

    from memdeck.cli.mcp import SCHEDULER_DELAY_S

    (memdeck_home / "config.toml").write_text('[embedding]\nmodel = "hash-384"\n')
    backend = _Backend("alice", "assistant", tmp_path / "store")
    try:
        backend.store  # noqa: B018 - waits for the background open
        wait_for(lambda: backend.scheduler is not None and backend.scheduler.running)
        assert SCHEDULER_DELAY_S >= 2
        assert all(t.runs == 0 for t in backend.scheduler.status())
        if sys.platform.startswith("linux"):
            thread = next(t for t in threading.enumerate() if t.name == "memdeck-maintenance")
            assert thread.native_id is not None
            assert os.getpriority(os.PRIO_PROCESS, thread.native_id) == os.getpriority(os.PRIO_PROCESS, 0)
    finally:
        backend.scheduler.stop()
        backend.store.close()


@pytest.mark.parametrize("runner", ["scheduler", "one-shot maintain"])
def test_a_memory_another_process_purged_first_is_not_an_expiry_failure(
    open_store, tmp_path, monkeypatch, runner
):
    """The MCP server's scheduler, `maintain --watch` and a one-shot `memdeck maintain` all purge expired
    memories: one that another got to between this one's scan and its purge is gone, as wanted; the rest are
    purged and the run is ok."""
    from memdeck.core.forget import forget
    from memdeck.core.maintenance import maintain

    s = open_store(tmp_path / "store", maintenance=FAST)
    past = datetime.now(UTC) - timedelta(minutes=1)
    doomed = [
        s.remember(f"expired note number {n}", tier="semantic", principal="ann", expires_at=past).memory
        for n in range(4)
    ]
    kept = s.remember("a note that stays", tier="semantic", principal="ann").memory
    other = open_store(tmp_path / "store")  # the other process's handle on the same store
    real = maintain.expired
    raced: list[str] = []

    def expired_then_raced(store, at=None):
        found = real(store, at)
        if not raced and found.get("ann"):
            raced.append(found["ann"][0])
            forget(other.engine, [raced[0]], "ttl", trigger="ttl")  # the other scheduler wins this one
        return found

    monkeypatch.setattr(maintain, "expired", expired_then_raced)
    if runner == "scheduler":
        status = Scheduler(s.engine).run("expiry")
        assert status.ok, status.error
    else:
        report = maintain.maintain(s.engine)
        assert not report["errors"] and sum(r["deleted"] for r in report["evicted"]) == 3, report
    assert raced and raced[0] in {m.id for m in doomed}
    for m in doomed:
        with pytest.raises(NotFound):
            s.get(m.id)
    assert s.get(kept.id)
    book = ReceiptBook(s.root)
    deleted = sorted(d["id"] for r in book.list() for d in book.get(r["receipt_id"])["deleted"])
    assert deleted == sorted(m.id for m in doomed)  # each purged once, by one or the other
