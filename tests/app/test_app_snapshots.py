"""Snapshots of the key screens (browse, detail, help), from a store with fixed ids, times and clock.

Update them after an intended change with ``pytest tests/app/test_app_snapshots.py --snapshot-update``.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

import memdeck.core.storage.writes as writes_module
from memdeck.core.filters import Scope
from memdeck.core.store import MemoryInput, Store
from memdeck.tui.app import MemdeckApp

NOW = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)
SIZE = (140, 42)
TEXTS = [
    ("episodic", "alice", "assistant", "Planned the Atlas launch with Dana; agreed on a June date"),
    ("semantic", "alice", "assistant", "Dana owns the Atlas launch"),
    ("semantic", "alice", "scheduler", "Alice does not want meetings on Thursday"),
    (
        "procedural",
        "bob",
        "coder",
        "deploy the payments service: run the tests; tag the release; watch Grafana",
    ),
    ("episodic", "bob", "coder", "Debugged the search indexer timeout under load"),
    ("semantic", "bob", "assistant", "The payments service depends on Kafka"),
    ("semantic", "carol", "researcher", "Carol prefers filter coffee"),
    ("episodic", "carol", "researcher", "Reading group picked the retrieval paper for next week"),
]


@pytest.fixture
def snapshot_store(store: Store, monkeypatch: pytest.MonkeyPatch) -> Store:
    counter = itertools.count(1)
    monkeypatch.setattr(writes_module, "new_id", lambda tier: f"{tier[:3]}_{next(counter):020d}")
    items = [
        MemoryInput(
            text=text,
            tier=tier,
            principal=who,
            agent=agent,
            tags=[tier[:4]],
            importance=0.3 + 0.08 * n,
            pinned=n == 2,
            created_at=NOW - timedelta(days=3 * n + 1),
            force=True,
        )
        for n, (tier, who, agent, text) in enumerate(TEXTS)
    ]
    store.remember_many(items)
    return store


def make_app(store: Store) -> MemdeckApp:
    return MemdeckApp(store=store, scope=Scope.everyone(), clock=lambda: NOW)


async def _ready(pilot: Any) -> None:
    app = pilot.app
    for _ in range(4):
        await app.workers.wait_for_complete()
        await pilot.pause()
    app.sub_title = "test store · all principals"  # not the temporary directory's name
    await pilot.pause()


def test_browse_snapshot(snap_compare: Any, snapshot_store: Store) -> None:
    assert snap_compare(
        make_app(snapshot_store), press=["down", "space"], terminal_size=SIZE, run_before=_ready
    )


def test_detail_snapshot(snap_compare: Any, snapshot_store: Store) -> None:
    async def open_detail(pilot: Any) -> None:
        await _ready(pilot)
        await pilot.press("down", "enter")
        await _ready(pilot)

    assert snap_compare(make_app(snapshot_store), terminal_size=SIZE, run_before=open_detail)


def test_help_snapshot(snap_compare: Any, snapshot_store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMDECK_HOME", "/home/user/.local/share/memdeck")  # the path the help screen shows

    async def open_help(pilot: Any) -> None:
        await _ready(pilot)
        await pilot.press("question_mark")
        await pilot.pause()

    assert snap_compare(make_app(snapshot_store), terminal_size=SIZE, run_before=open_help)
