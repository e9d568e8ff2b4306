"""The app on a demo store, as a person uses it: the context pack tab, keys typed into fields, Escape and
Tab, a bad date filter, an expiry set in the edit dialog, and names that look like markup."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from textual.color import Color
from textual.keys import key_to_character
from textual.widgets import DataTable, Input, Select, TabbedContent, TextArea
from textual.widgets._footer import FooterKey

from memdeck.core.demo import build_demo
from memdeck.core.embed import HashEmbedder
from memdeck.core.filters import Scope
from memdeck.core.store import Store
from memdeck.tui.app import MemdeckApp
from memdeck.tui.screens.browse import BrowseScreen
from memdeck.tui.screens.detail import DetailScreen
from memdeck.tui.screens.dialogs import EditDialog
from memdeck.tui.screens.entities import EntitiesScreen
from memdeck.tui.screens.inspector import InspectorScreen
from memdeck.tui.widgets.memory_table import MemoryTable
from tests.appwait import settle as wait

pytestmark = pytest.mark.anyio

SIZE = (140, 42)
DEMO_SIZE = 300


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A small demo store (hash embedder), built once; each test opens a copy of it."""
    root = tmp_path_factory.mktemp("demo")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MEMDECK_HOME", str(root / "home"))
        build_demo(root / "store", total=DEMO_SIZE, store=Store.open(root / "store", embedder=HashEmbedder()))
    yield root / "store"


@pytest.fixture
def demo(demo_dir: Path, tmp_path: Path) -> Iterator[Store]:
    shutil.copytree(demo_dir, tmp_path / "demo")
    store = Store.open(tmp_path / "demo", embedder=HashEmbedder())
    yield store
    store.close()


def make_app(store: Store) -> MemdeckApp:
    return MemdeckApp(store=store, scope=Scope.everyone(), load_model=False)


async def settle(app: MemdeckApp, pilot: Any) -> None:
    await wait(app, pilot, 3)


def screen_text(app: MemdeckApp) -> str:
    """What the terminal shows now, as plain text."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def footer_keys(app: MemdeckApp) -> set[str]:
    return {key.key for key in app.screen.query(FooterKey)}


PUNCTUATION = {
    "slash": "/",
    "plus": "+",
    "minus": "-",
    "question_mark": "?",
    "left_square_bracket": "[",
    "right_square_bracket": "]",
    "space": " ",
}


def typing_keys(keys: set[str]) -> set[str]:
    """The keys that type a character into a focused field."""
    return {
        k for k in keys if PUNCTUATION.get(k) or ((c := key_to_character(k)) is not None and c.isprintable())
    }


async def recall(app: MemdeckApp, pilot: Any, query: str = "deadline", principal: str = "alice") -> None:
    screen = app.screen
    assert isinstance(screen, InspectorScreen)
    screen.query_one("#inspector-query", Input).value = query
    screen.query_one("#inspector-principal", Input).value = principal
    await pilot.press("ctrl+r")
    await settle(app, pilot)
    assert screen.ranked, "the recall found nothing to show"


# --- ctrl+n: the inspector's context pack tab ----------------------------------------------------------


async def test_ctrl_n_shows_the_context_pack_before_and_after_a_recall(demo: Store) -> None:
    app = make_app(demo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("2")
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, InspectorScreen)
        await pilot.press("ctrl+n")
        await settle(app, pilot)
        assert screen.query_one("#inspector-tabs", TabbedContent).active == "inspector-tab-pack"
        assert "Run a recall to see its context pack." in screen_text(app)
        assert app.focused is screen.query_one("#inspector-pack", DataTable)  # the focus went with the tab

        await pilot.press("ctrl+n", "ctrl+n")  # explain, back to results
        await recall(app, pilot)
        await pilot.press("ctrl+n")
        await settle(app, pilot)
        pack = screen.context_pack
        assert pack is not None and pack.included
        assert screen.query_one("#inspector-pack", DataTable).row_count == len(pack.entries)
        assert f"{pack.used} of {pack.budget} tokens" in screen_text(app)
    assert app.return_code in (None, 0)


# --- keys typed into a focused field -------------------------------------------------------------------


async def test_keys_typed_into_a_focused_field_stay_in_it_and_the_footer_does_not_offer_them(
    demo: Store,
) -> None:
    app = make_app(demo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        browse = app.screen
        since = browse.query_one("#filter-since", Input)
        await pilot.click("#filter-since")
        assert app.focused is since
        await pilot.press(*"2025-03-01", "q", "question_mark", "slash")
        await settle(app, pilot)
        assert since.value == "2025-03-01q?/"
        assert app.screen is browse and app.is_running  # 2 did not switch screens, q did not quit
        shown = footer_keys(app)
        assert not typing_keys(shown), f"the footer offers keys the field would type: {typing_keys(shown)}"

        await pilot.press("2")  # from the table again (Escape): now 2 is the app's key
        await settle(app, pilot)
        assert app.screen is browse
        await pilot.press("escape", "2")
        await settle(app, pilot)
        inspector = app.screen
        assert isinstance(inspector, InspectorScreen)
        await pilot.click("#inspector-principal")
        await pilot.press(*"alice")
        await settle(app, pilot)
        assert inspector.query_one("#inspector-principal", Input).value == "alice"
        assert "no suggested weight change" not in screen_text(app)  # `a` typed, not Apply suggestion
        await pilot.click("#inspector-query")
        await pilot.press("plus", "minus", "slash", "y", "n", "w", "f")
        assert inspector.query_one("#inspector-query", Input).value == "+-/ynwf"
        shown = footer_keys(app)
        assert not typing_keys(shown), f"the footer offers keys the field would type: {typing_keys(shown)}"
        assert {"ctrl+r", "ctrl+n"} <= shown  # keys that do not type are still offered


async def test_a_focused_filter_list_searches_what_is_typed(demo: Store) -> None:
    app = make_app(demo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        browse = app.screen
        assert isinstance(browse, BrowseScreen)
        await pilot.press("f")  # the principal list
        principal: Select[str] = browse.query_one("#filter-principal", Select)
        assert app.focused is principal
        await pilot.press(*"bob", "enter")  # `e` would edit, `d` deprecate, if the list let them through
        await settle(app, pilot)
        assert app.screen is browse
        assert principal.value == "bob"
        assert browse.filters.principal == "bob"


# --- Escape leaves a text field; Tab reaches the inspector's principal ---------------------------------


@pytest.mark.parametrize("mode", ["browse", "inspector", "analytics", "receipts", "entities"])
async def test_escape_leaves_every_text_field(demo: Store, mode: str) -> None:
    app = make_app(demo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.switch_mode(mode)
        await settle(app, pilot)
        screen = app.screen
        fields = [w for w in screen.query(Input) if w.focusable]
        assert fields, f"{mode} has no text field to try"
        for field in fields:
            field.focus()
            await settle(app, pilot)
            assert app.focused is field, f"{field.id} did not take the focus"
            await pilot.press("escape")
            await settle(app, pilot)
            assert app.screen is screen, f"Escape in {field.id} left the screen"
            assert not isinstance(app.focused, (Input, TextArea)), f"Escape did not leave {field.id}"
            assert app.focused is not None  # the focus went somewhere the screen's keys act


async def test_tab_from_the_inspector_results_reaches_the_principal_field(demo: Store) -> None:
    app = make_app(demo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("2")
        await settle(app, pilot)
        await recall(app, pilot)
        screen = app.screen
        results = screen.query_one("#inspector-results", DataTable)
        results.focus()
        await pilot.pause()
        seen = []
        for _ in range(3):
            await pilot.press("tab")
            seen.append(app.focused.id if app.focused else None)
        assert seen[:2] == ["inspector-query", "inspector-principal"], seen
        await pilot.press("shift+tab", "shift+tab", "shift+tab")
        assert app.focused is results  # and back the same way


async def test_the_focused_field_stands_out(demo: Store) -> None:
    app = make_app(demo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.screen
        tag, since = screen.query_one("#filter-tag", Input), screen.query_one("#filter-since", Input)
        since.focus()
        await pilot.pause()

        def luminance(widget: Input) -> float:
            bgcolor = widget.rich_style.bgcolor
            assert bgcolor is not None
            color = Color.from_rich_color(bgcolor)

            def channel(c: int) -> float:
                v = c / 255
                return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

            return 0.2126 * channel(color.r) + 0.7152 * channel(color.g) + 0.0722 * channel(color.b)

        lighter, darker = sorted((luminance(since), luminance(tag)), reverse=True)
        # The WCAG contrast ratio between the focused and an unfocused field's background: a glance must tell
        # them apart (1.0 is identical; the two greys the app used to have were 1.06 apart).
        assert (lighter + 0.05) / (darker + 0.05) >= 1.5


# --- a bad date in the browse filter ---------------------------------------------------------------------


async def test_an_unreadable_date_filter_says_why_and_a_relative_one_works(demo: Store) -> None:
    app = make_app(demo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        browse = app.screen
        assert isinstance(browse, BrowseScreen)
        table = browse.query_one(MemoryTable)
        everything = table.count
        await pilot.click("#filter-since")
        await pilot.press(*"2025-13-45")
        await pilot.pause(0.6)  # the filter reads once typing pauses
        await settle(app, pilot)
        text = screen_text(app)
        assert "not a date: '2025-13-45'" in text and "7d" in text
        assert table.count == everything  # the table keeps what it showed
        await pilot.press(*["backspace"] * 10, *"7d")
        await pilot.pause(0.6)
        await settle(app, pilot)
        text = screen_text(app)
        assert "not a date" not in text
        since = browse.filters.since
        assert since is not None and abs(since - (datetime.now(UTC) - timedelta(days=7))) < timedelta(
            minutes=5
        )
        assert table.count is not None and 0 < table.count < everything
        assert "since " in text  # the status bar names the filter in force


# --- an expiry set in the edit dialog ------------------------------------------------------------------


async def test_an_expiry_set_in_the_edit_dialog_is_shown_in_the_detail_and_the_table(demo: Store) -> None:
    app = make_app(demo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        browse = app.screen
        table = browse.query_one(MemoryTable)
        memory = table.cursor_memory
        assert memory is not None and memory.expires_at is None
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, DetailScreen)
        assert "expires" in screen_text(app)
        await pilot.press("e")
        await settle(app, pilot)
        assert isinstance(app.screen, EditDialog)
        app.screen.query_one("#edit-expiry", Input).value = "7d"
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert isinstance(app.screen, DetailScreen)
        stored = demo.get(memory.id)
        assert stored.expires_at is not None
        text = screen_text(app)
        assert f"{stored.expires_at:%Y-%m-%d %H:%M}" in text
        assert "(in 6d)" in text or "(in 7d)" in text
        await pilot.press("escape")
        await settle(app, pilot)
        assert app.screen is browse
        row = next(
            i for i in range(table.count or 0) if (m := table.row(i)) is not None and m.id == memory.id
        )
        line = screen_text(app).splitlines()
        header = next(n for n, t in enumerate(line) if " ends" in t)
        shown = line[header + 1 + row - table.scroll_offset.y]
        assert shown.rstrip().endswith(("6d", "7d")), shown


# --- user text is never markup -------------------------------------------------------------------------

NAME = "Dr [/e] Evil"
TEXT = "[b]not bold[/b] met Dr [/e] Evil about [link=x]the plan"


async def test_names_and_text_that_look_like_markup_are_shown_as_written(demo: Store) -> None:
    principal, agent = "m[/b]", "a[/i]"
    memory = demo.remember(TEXT, tier="semantic", principal=principal, agent=agent, tags=["[/t]"]).memory
    assert memory is not None
    demo.add_entity(principal, NAME, kind="person", aliases=["[red]Evil[/red]"], mentions=[memory.id])
    demo.add_entity(principal, "the plan", kind="product", mentions=[memory.id])
    demo.add_relation(principal, NAME, "owns [/o]", "the plan")
    app = make_app(demo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        # Entities (key 6): the name in the list, the title, the relation.
        await pilot.press("6")
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, EntitiesScreen)
        table = screen.query_one("#entities-list", DataTable)
        row = next(i for i, r in enumerate(screen.rows) if r["name"] == NAME)
        table.move_cursor(row=row)
        await settle(app, pilot)
        text = screen_text(app)
        aliases = demo.entity(principal, NAME)["aliases"]  # as the graph stores them
        assert any("[" in a for a in aliases)
        assert NAME in text and "owns [/o]" in text and all(a in text for a in aliases)
        # Browse: the principal list, the row, the detail.
        await pilot.press("1")
        await settle(app, pilot)
        browse = app.screen
        select: Select[str] = browse.query_one("#filter-principal", Select)
        select.value = principal
        await settle(app, pilot)
        select.focus()
        await pilot.press("enter")  # open the list
        await settle(app, pilot)
        assert principal in screen_text(app)
        await pilot.press("escape", "escape")
        await settle(app, pilot)
        text = screen_text(app)
        assert "[b]not bold[/b]" in text and principal in text
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, DetailScreen)
        text = screen_text(app)
        assert TEXT in text and agent in text and "[/t]" in text and NAME in text
        await pilot.press("e")
        await settle(app, pilot)
        app.screen.query_one("#edit-expiry", Input).value = "[/x]"
        await pilot.press("ctrl+s")  # refused with a notification that quotes it
        await settle(app, pilot)
        await pilot.pause(0.2)  # the notification is drawn: as markup, "[/x]" would end the app here
        assert isinstance(app.screen, EditDialog)
        assert "not an ISO 8601 time: '[/x]'" in [n.message for n in app._notifications]
        app.screen.query_one("#edit-expiry", Input).value = ""  # nothing changed: Escape closes at once
        await pilot.press("escape")
        await settle(app, pilot)
        assert isinstance(app.screen, DetailScreen)
        # The inspector: the principal typed, a recall, the context pack.
        await pilot.press("escape", "2")
        await settle(app, pilot)
        await recall(app, pilot, "Evil plan", principal)
        assert "not bold[/b]" in screen_text(app)
        await pilot.press("ctrl+n")
        await settle(app, pilot)
        assert "[b]not bold" in screen_text(app)
        # What a person types comes back in messages (the status line, a notification) as typed.
        app.screen.query_one("#inspector-since", Input).value = "[/s]"
        await pilot.press("ctrl+r")
        await settle(app, pilot)
        assert "'[/s]'" in screen_text(app)
        for key in "345":
            await pilot.press(key)
            await settle(app, pilot)
    assert app.return_code in (None, 0)
