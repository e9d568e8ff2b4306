"""The Review screen: contradictions side by side; keep right deprecates the left (superseded by the
right), undo restores it; dismiss hides an item; reachable from the app by its key. Real model."""

from __future__ import annotations

from typing import Any

import pytest
from textual.app import App
from textual.widgets import DataTable, Static

from memdeck.core.consolidate import consolidate
from memdeck.core.filters import Scope
from memdeck.core.store import Store
from memdeck.tui.app import MemdeckApp
from memdeck.tui.screens.review import ReviewScreen
from tests.appwait import settle as wait

pytestmark = pytest.mark.anyio


async def settle(app: App[Any], pilot: Any) -> None:
    await wait(app, pilot, 3)


def _seed(store: Store) -> tuple[str, str]:
    a = store.remember("We use PostgreSQL", tier="semantic", principal="alice").memory
    b = store.remember("We use MySQL", tier="semantic", principal="alice").memory
    assert a is not None and b is not None
    consolidate(store.engine, "alice")
    return a.id, b.id


async def test_keep_right_undo_and_dismiss(model_store: Store, host) -> None:
    a, b = _seed(model_store)
    screen = ReviewScreen(model_store, Scope.of("alice"))
    app = host(screen)
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(app, pilot)
        table = screen.query_one("#review-list", DataTable)
        assert table.row_count == 1
        item = screen.current()
        assert item is not None and item.kind == "contradiction"
        left, right = item.left["id"], item.right["id"]  # type: ignore[index]
        assert {left, right} == {a, b}
        assert left in str(screen.query_one("#review-left", Static).render())
        assert right in str(screen.query_one("#review-right", Static).render())

        await pilot.press("right_square_bracket")
        await settle(app, pilot)
        assert model_store.get(left).state == "deprecated" and model_store.get(left).superseded_by == right
        assert table.row_count == 0

        await pilot.press("u")
        await settle(app, pilot)
        assert model_store.get(left).state == "active"
        assert table.row_count == 1

        await pilot.press("x")
        await settle(app, pilot)
        assert table.row_count == 0
        assert model_store.get(left).state == "active" and model_store.get(right).state == "active"


async def test_reachable_from_the_app_by_key(model_store: Store) -> None:
    _seed(model_store)
    app = MemdeckApp(model_store, Scope.of("alice"), load_model=False)
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("5")
        await settle(app, pilot)
        assert isinstance(app.screen, ReviewScreen)
        assert app.screen.query_one("#review-list", DataTable).row_count == 1
