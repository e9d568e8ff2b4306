"""The app a person opens runs maintenance on its own, shows what it did, and stays responsive."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta

import pytest
from textual.widgets import Label

from memdeck.core.filters import Scope
from memdeck.core.maintenance.scheduler import TaskStatus
from memdeck.core.receipts import ReceiptBook
from memdeck.core.store import Store
from memdeck.tui.app import MemdeckApp
from memdeck.tui.widgets.status_bar import maintenance_line

SIZE = (140, 42)


async def _wait_for(predicate, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        await asyncio.sleep(0.1)
    return predicate()


@pytest.mark.anyio
async def test_the_app_purges_an_expired_memory_by_itself_and_says_so(store: Store) -> None:
    soon = datetime.now(UTC) + timedelta(seconds=1)
    gone = store.remember(
        "the door code is changing", tier="semantic", principal="alice", expires_at=soon
    ).memory
    kept = store.remember("alice likes tea", tier="semantic", principal="alice").memory
    assert gone is not None and kept is not None
    store.settings = store.settings.with_changes(
        maintenance={"evict_interval_s": 0.5, "consolidate_interval_s": 0, "index_interval_s": 0}
    )
    app = MemdeckApp(store=store, scope=Scope.everyone(), maintenance=True, load_model=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        label = app.screen.query_one("#status-maintenance", Label)
        assert app.scheduler is not None and app.scheduler.running
        assert await _wait_for(lambda: any(r["principal"] == "alice" for r in ReceiptBook(store.root).list()))
        assert await _wait_for(lambda: "expiry" in str(label.render()))
        # A keypress is handled while the scheduler works in its own thread.
        started = time.monotonic()
        await pilot.press("down")
        assert time.monotonic() - started < 5
    assert app.scheduler is None  # stopped with the app
    receipt = ReceiptBook(store.root).list()[0]
    assert receipt["reason"] == "ttl" and receipt["all_checks_passed"]
    assert store.count(Scope.of("alice")) == 1


@pytest.mark.anyio
async def test_the_app_opened_by_tests_runs_no_maintenance(store: Store) -> None:
    app = MemdeckApp(store=store, scope=Scope.everyone(), load_model=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.scheduler is None
        assert str(app.screen.query_one("#status-maintenance", Label).render()) == ""


def test_the_status_line_names_a_failing_task_first() -> None:
    at = datetime(2026, 1, 1, 12, tzinfo=UTC)
    ok = TaskStatus("indexes", 60, last_run=at - timedelta(minutes=1), ok=True, summary="compacted 2 tables")
    bad = TaskStatus("sync", 60, last_run=at - timedelta(minutes=5), ok=False, summary="failed: folder gone")
    never = TaskStatus("sessions", 60)
    text, well, detail = maintenance_line([ok, bad, never], at)
    assert (text, well) == ("maintenance: sync failed, retrying", False)
    assert "sessions: never run" in detail and "folder gone" in detail
    text, well, _ = maintenance_line([ok, never], at)
    assert well and text.startswith("maintenance: indexes 1m")
    assert maintenance_line([never], at)[:2] == ("maintenance: starting", True)
