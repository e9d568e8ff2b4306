"""The Entities screen (key 6): entities with counts, an entity's relations and memories, a path; and the
entity chips of the memory detail, which open it."""

from __future__ import annotations

from typing import Any

import pytest
from textual.app import App
from textual.widgets import DataTable, Input, OptionList, Static

from memdeck.core.filters import Scope
from memdeck.tui.app import MemdeckApp
from memdeck.tui.screens.detail import DetailScreen
from memdeck.tui.screens.entities import EntitiesScreen
from tests.appwait import settle as wait

pytestmark = pytest.mark.anyio


async def settle(app: App[Any], pilot: Any) -> None:
    await wait(app, pilot, 4)


def _seed(store: Any) -> str:
    memory = store.remember("Ann works with Ben at Globex.", principal="alice").memory
    store.add_relation("alice", "Ann", "works with", "Ben", sources=[memory.id])
    store.add_entity("alice", "Cal")
    store.add_relation("alice", "Ben", "knows", "Cal")
    store.remember("Zed keeps a secret.", principal="bob")
    return memory.id


async def test_key_6_lists_the_scopes_entities_and_shows_relations_and_a_path(store):
    _seed(store)
    app = MemdeckApp(store, Scope.of("alice"), load_model=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("6")
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, EntitiesScreen)
        table = screen.query_one("#entities-list", DataTable)
        names = {str(table.get_row_at(i)[1]) for i in range(table.row_count)}  # cells are Text (never markup)
        assert names == {"Ann", "Ben", "Cal", "Globex"}
        await pilot.press("p")
        first = screen.current
        assert first is not None
        target = "Cal" if first["name"] != "Cal" else "Ann"
        screen.query_one("#entities-path", Input).value = target
        await pilot.press("enter")
        await settle(app, pilot)
        shown = str(screen.query_one("#entities-path-result", Static).render())
        assert target in shown and "no path" not in shown


async def test_an_entity_chip_in_the_detail_opens_the_entity(store):
    memory_id = _seed(store)
    app = MemdeckApp(store, Scope.of("alice"), load_model=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        app.push_screen(DetailScreen(memory_id))
        await settle(app, pilot)
        chips = app.screen.query_one("#detail-entities", OptionList)
        assert chips.option_count == 3  # Ann, Ben, Globex
        await pilot.press("n")
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, EntitiesScreen)
        assert app.screen.current is not None and app.screen.current["name"] in {"Ann", "Ben", "Globex"}
        await pilot.press("escape")
        assert isinstance(app.screen, DetailScreen)
