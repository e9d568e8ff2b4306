"""The app shows each memory's type, filters by it from the filter bar, and shows a procedure's when-to-use
and outcomes on its detail screen."""

from __future__ import annotations

from typing import Any

import pytest
from rich.console import Console
from textual.widgets import Select, Static

from memdeck.core.filters import Scope
from memdeck.core.recall.feedback import feedback
from memdeck.core.store import Store
from memdeck.tui.app import MemdeckApp
from memdeck.tui.screens.browse import BrowseScreen
from memdeck.tui.screens.detail import DetailScreen
from memdeck.tui.widgets.memory_table import MemoryTable
from tests.appwait import settle as wait

pytestmark = pytest.mark.anyio

SIZE = (160, 42)


async def settle(app: MemdeckApp, pilot: Any) -> None:
    await wait(app, pilot, 4)


def rows(table: MemoryTable) -> list[Any]:
    return [r for r in (table.row(i) for i in range(table.count or 0)) if r is not None]


def text_of(static: Static) -> str:
    console = Console(width=150, record=True)
    console.print(static.content)
    return console.export_text()


async def test_browse_shows_the_type_and_the_type_filter_keeps_one(store: Store) -> None:
    store.remember("I prefer the early train to Leeds", principal="alice")
    decision = store.remember("We decided to move the offsite to Leeds", principal="alice").memory
    store.remember("The Leeds office has a roof garden", principal="alice", type="fact")
    assert decision is not None
    app = MemdeckApp(store=store, scope=Scope.everyone(), load_model=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert isinstance(app.screen, BrowseScreen)
        table = app.screen.query_one(MemoryTable)
        assert "type" in [c.label for c in table.columns]
        assert {m.type for m in rows(table)} == {"preference", "decision", "fact"}
        assert "decis" in app.export_screenshot()  # the column's cell for the decision

        chooser: Select[str] = app.screen.query_one("#filter-type", Select)
        chooser.focus()
        await pilot.press(*"decision", "enter")  # typing a type's name picks it (as the other selects)
        await settle(app, pilot)
        assert chooser.value == "decision"
        assert [m.id for m in rows(table)] == [decision.id]
        chooser.clear()
        await settle(app, pilot)
        assert table.count == 3


async def test_a_procedure_s_detail_shows_when_to_use_it_and_its_outcomes(store: Store) -> None:
    proc = store.remember(
        "1. Drain the node\n2. Reboot it",
        tier="procedural",
        principal="alice",
        name="reboot a node",
        meta={"when_to_use": "a node stops answering health checks"},
    ).memory
    assert proc is not None
    feedback(store.engine, proc.id, "ops", useful=True)
    feedback(store.engine, proc.id, "ops", useful=True)
    feedback(store.engine, proc.id, "ops", useful=False)
    app = MemdeckApp(store=store, scope=Scope.everyone(), load_model=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.screen.query_one(MemoryTable).cursor_memory.id == proc.id
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, DetailScreen)
        fields = text_of(app.screen.query_one("#detail-fields", Static))
        assert "when to use" in fields and "a node stops answering health checks" in fields
        assert "outcomes" in fields and "worked 2, failed 1" in fields
        assert "type" in fields
