"""The app's start: the first rows come before the model's load and the filter fields, and the footer is rebuilt
only when the keys it shows change (a rebuild restyles a dozen widgets, which start-up and every focus change used
to pay for)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from textual.widgets import Select
from textual.widgets._footer import FooterKey

from memdeck.core.filters import Scope
from memdeck.core.store import MemoryInput, Store
from memdeck.tui import app as app_module
from memdeck.tui import model as app_model
from memdeck.tui.app import MemdeckApp
from memdeck.tui.screens import browse as browse_module
from memdeck.tui.screens.browse import BrowseScreen
from memdeck.tui.widgets.filter_bar import FilterBar
from memdeck.tui.widgets.key_footer import KeyFooter
from memdeck.tui.widgets.memory_table import MemoryTable
from tests.appwait import settle

pytestmark = pytest.mark.anyio

NOW = datetime(2025, 3, 1, tzinfo=UTC)
SIZE = (140, 42)


def fill(store: Store, n: int) -> None:
    store.remember_many(
        [
            MemoryInput(
                text=f"note {i} about the garden",
                tier="semantic",
                principal="alice",
                created_at=NOW - timedelta(hours=i),
                force=True,
            )
            for i in range(n)
        ]
    )


def footer_keys(app: MemdeckApp) -> list[FooterKey]:
    return list(app.screen.query_one(KeyFooter).query(FooterKey))


def key_for(app: MemdeckApp, action: str) -> FooterKey:
    return next(k for k in footer_keys(app) if k.action == action)


async def test_the_model_starts_loading_once_the_first_rows_are_on_screen(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    fill(store, 3)
    app = MemdeckApp(store=store, scope=Scope.everyone(), clock=lambda: NOW)
    seen: list[tuple[type, int | None, str | None]] = []

    def what_is_shown() -> tuple[type, int | None, str | None]:
        table = app.screen.query_one(MemoryTable)
        first = table.row(0)
        return type(app.screen), table.count, None if first is None else first.text

    def load(embedder: Any) -> str | None:
        seen.append(app.call_from_thread(what_is_shown))
        return None

    monkeypatch.setattr(app_model, "load", load)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert seen == [(BrowseScreen, 3, "note 0 about the garden")]
        assert app.model_state == "ready"
        assert "semantic search: ready" in str(app.screen.query_one("#status-model").render())


async def test_switching_screens_before_the_rows_starts_the_model_at_once(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    fill(store, 2)
    app = MemdeckApp(store=store, scope=Scope.everyone(), clock=lambda: NOW)
    loads: list[str] = []
    monkeypatch.setattr(app_model, "load", lambda embedder: loads.append("load"))
    monkeypatch.setattr(MemdeckApp, "first_rows_shown", lambda self: None)  # the rows never tell the app
    monkeypatch.setattr(app_module, "MODEL_LOAD_AT_LATEST_S", 600.0)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert loads == []
        await pilot.press("2")  # the recall inspector, which ranks by meaning
        await settle(app, pilot)
        assert loads == ["load"]
        assert app.model_state == "ready"


async def test_the_footer_keeps_its_keys_until_what_they_show_changes(store: Store) -> None:
    fill(store, 3)
    app = MemdeckApp(store=store, scope=Scope.everyone(), clock=lambda: NOW, load_model=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        keys = footer_keys(app)
        assert not key_for(app, "pin").has_class(
            "-disabled"
        )  # rows are there: the actions on them are offered
        assert key_for(app, "search").key_display == "/"

        app.screen.refresh_bindings()
        app.screen.refresh_bindings()
        await pilot.press("down", "up")
        await settle(app, pilot)
        assert footer_keys(app) == keys  # the same widgets: nothing was rebuilt

        app.set_keymap({"browse.search": "ctrl+f"})
        app.screen.refresh_bindings()
        await settle(app, pilot)
        assert key_for(app, "search").key_display != "/"  # a key it shows changed: rebuilt
        assert footer_keys(app) != keys
        await pilot.press("ctrl+f")
        assert app.screen.focused is app.screen.query_one("#search")


async def test_an_empty_store_dims_the_actions_once_the_count_is_known(store: Store) -> None:
    app = MemdeckApp(store=store, scope=Scope.everyone(), clock=lambda: NOW, load_model=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.screen.query_one(MemoryTable).count == 0
        assert key_for(app, "pin").has_class("-disabled") and key_for(app, "forget").has_class("-disabled")
        assert not key_for(app, "search").has_class("-disabled")


async def test_the_filter_fields_come_after_the_first_rows_with_the_choices_read_meanwhile(
    store: Store,
) -> None:
    fill(store, 3)
    app = MemdeckApp(store=store, scope=Scope.everyone(), clock=lambda: NOW, load_model=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.screen.query_one(FilterBar).filled
        principal = app.screen.query_one("#filter-principal", Select)
        assert [v for _, v in principal._options if isinstance(v, str)] == ["alice"]
        principal.value = "alice"
        await settle(app, pilot)
        assert app.screen.query_one(MemoryTable).count == 3
        assert "principal=alice" in str(app.screen.query_one("#status-view").render())


async def test_f_brings_the_filter_fields_at_once_when_the_rows_are_late(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    fill(store, 3)
    monkeypatch.setattr(MemoryTable, "visible_loaded", lambda self: False)  # the first rows never "arrive"
    monkeypatch.setattr(browse_module, "FILTERS_AT_LATEST_S", 600.0)
    app = MemdeckApp(store=store, scope=Scope.everyone(), clock=lambda: NOW, load_model=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        bar = app.screen.query_one(FilterBar)
        assert not bar.filled and not bar.query(Select)
        await pilot.press("ctrl+p")  # the palette's "Clear filters" with no field yet does nothing wrong
        await pilot.press(*"Clear filters", "enter")
        await settle(app, pilot)
        assert isinstance(app.screen, BrowseScreen) and not bar.filled
        await pilot.press("f")
        await settle(app, pilot)
        assert bar.filled
        assert app.screen.focused is app.screen.query_one("#filter-principal", Select)
