"""Every key the help screen lists, pressed on every screen, dialog and tab of the app over a demo store.

The table of keys is not written here: it is what the help screen (``?``) shows for each screen, read from
its table, so a binding added to any screen or widget is pressed the day it is added. Each binding id has
an expected, visible effect in EFFECTS (a screen opened, a row pinned, a tab switched, a field focused...);
a binding without one fails the test until its effect is written down. A key that a focused text field
takes (a printable key in an input) must be typed into the field instead.
"""

from __future__ import annotations

import shutil
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from textual.command import CommandPalette
from textual.widgets import DataTable, Input, OptionList, Select, TabbedContent, TextArea

from memdeck.core.demo import build_demo
from memdeck.core.embed import HashEmbedder
from memdeck.core.filters import Scope
from memdeck.core.store import Store
from memdeck.tui.app import MemdeckApp
from memdeck.tui.screens.analytics import AnalyticsScreen
from memdeck.tui.screens.browse import BrowseScreen
from memdeck.tui.screens.detail import DetailScreen
from memdeck.tui.screens.dialogs import (
    ConfirmDialog,
    DeprecateDialog,
    EditDialog,
    ForgetDialog,
    MemoryIdPrompt,
    ReceiptDialog,
)
from memdeck.tui.screens.entities import EntitiesScreen
from memdeck.tui.screens.help import HelpScreen, binding_rows
from memdeck.tui.screens.inspector import InspectorScreen
from memdeck.tui.screens.receipts import ReceiptsScreen
from memdeck.tui.screens.review import ReviewScreen
from memdeck.tui.widgets.memory_table import MemoryTable
from tests.appwait import settle as wait

pytestmark = pytest.mark.anyio

SIZE = (140, 42)
MODE_SCREENS = {
    "browse": BrowseScreen,
    "inspector": InspectorScreen,
    "analytics": AnalyticsScreen,
    "receipts": ReceiptsScreen,
    "review": ReviewScreen,
    "entities": EntitiesScreen,
}


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A small demo store (hash embedder) with one deletion receipt, built once; each test uses a copy."""
    root = tmp_path_factory.mktemp("demo")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MEMDECK_HOME", str(root / "home"))
        build_demo(root / "store", total=300, store=Store.open(root / "store", embedder=HashEmbedder()))
        store = Store.open(root / "store", embedder=HashEmbedder())
        oldest = store.list(tier="episodic", limit=1, order_by="created_at", descending=False)[0]
        store.forget([oldest.id], "journey test")
        store.close()
    yield root / "store"


@pytest.fixture
def demo(demo_dir: Path, tmp_path: Path) -> Iterator[Store]:
    shutil.copytree(demo_dir, tmp_path / "demo")
    store = Store.open(tmp_path / "demo", embedder=HashEmbedder())
    yield store
    store.close()


@dataclass
class Journey:
    app: MemdeckApp
    pilot: Any
    store: Store
    tmp: Path

    async def settle(self) -> None:
        await wait(self.app, self.pilot, 2)

    async def press(self, *keys: str) -> None:
        await self.pilot.press(*keys)
        await self.settle()

    @property
    def screen(self) -> Any:
        return self.app.screen

    def status(self, selector: str) -> str:
        return str(self.screen.query_one(selector).render())


# --- contexts: how to reach each screen, dialog and tab from a fresh app -------------------------------


async def _mode(j: Journey, mode: str) -> None:
    j.app.switch_mode(mode)
    await j.settle()


async def _inspector(j: Journey) -> None:
    await _mode(j, "inspector")
    screen = j.screen
    if not screen.ranked:  # one recall serves every key after it
        screen.query_one("#inspector-query", Input).value = "deadline"
        screen.query_one("#inspector-principal", Input).value = "alice"
        await j.press("ctrl+r")
        assert screen.ranked
    screen.results.focus_table()
    await j.settle()


async def _detail(j: Journey) -> None:
    await _mode(j, "browse")
    memory = j.screen.query_one(MemoryTable).cursor_memory
    j.app.push_screen(DetailScreen(memory.id))
    await j.settle()


async def _over_browse(j: Journey, key: str) -> None:
    await _mode(j, "browse")
    j.screen.query_one(MemoryTable).focus()
    await j.press(key)


async def _receipt(j: Journey) -> None:
    await _mode(j, "browse")
    book = ReceiptsScreen(j.store, Scope.everyone()).book  # the receipt the fixture's forget wrote
    j.app.push_screen(ReceiptDialog(book.get(str(book.list()[0]["receipt_id"]))))
    await j.settle()


async def _confirm(j: Journey) -> None:
    await _over_browse(j, "e")
    j.screen.query_one(TextArea).insert(" and more")
    await j.press("escape")


async def _prompt(j: Journey) -> None:
    await _inspector(j)
    await j.press("w")


CONTEXTS: dict[str, tuple[type, Callable[[Journey], Awaitable[None]]]] = {
    "browse": (BrowseScreen, lambda j: _mode(j, "browse")),
    "inspector": (InspectorScreen, _inspector),
    "analytics": (AnalyticsScreen, lambda j: _mode(j, "analytics")),
    "receipts": (ReceiptsScreen, lambda j: _mode(j, "receipts")),
    "review": (ReviewScreen, lambda j: _mode(j, "review")),
    "entities": (EntitiesScreen, lambda j: _mode(j, "entities")),
    "detail": (DetailScreen, _detail),
    "edit": (EditDialog, lambda j: _over_browse(j, "e")),
    "deprecate": (DeprecateDialog, lambda j: _over_browse(j, "d")),
    "forget": (ForgetDialog, lambda j: _over_browse(j, "x")),
    "receipt": (ReceiptDialog, _receipt),
    "help": (HelpScreen, lambda j: _over_browse(j, "question_mark")),
    "confirm": (ConfirmDialog, _confirm),
    "prompt": (MemoryIdPrompt, _prompt),
}


async def enter(j: Journey, context: str) -> None:
    """Back to a fresh start of ``context``: every screen above the modes' own closed first."""
    closed = False
    for mode in MODE_SCREENS:
        if mode in j.app._screen_stacks:
            while len(j.app._screen_stacks[mode]) > 1:
                j.app._screen_stacks[mode].pop().remove()
                closed = True
    if closed:  # otherwise the app is as the last settled press left it
        await j.settle()
    screen_class, setup = CONTEXTS[context]
    await setup(j)
    if context in MODE_SCREENS:
        j.screen.home_focus().focus()
        await j.settle()
    assert isinstance(j.screen, screen_class), f"{context}: reached {type(j.screen).__name__}"


# --- what each binding visibly does --------------------------------------------------------------------

Effect = Callable[[Journey, str, str], Awaitable[None]]  # (journey, context, key)
EFFECTS: dict[str, Effect] = {}


def effect(*ids: str) -> Callable[[Effect], Effect]:
    def register(fn: Effect) -> Effect:
        for binding_id in ids:
            EFFECTS[binding_id] = fn
        return fn

    return register


def _mode_effect(mode: str) -> Effect:
    async def check(j: Journey, context: str, key: str) -> None:
        await j.press(key)
        # The mode's screen, or what was open over it when it was left (a detail stays on its mode).
        assert j.app.current_mode == mode
        assert isinstance(j.app.screen_stack[0], MODE_SCREENS[mode]), f"{key}: {type(j.screen).__name__}"

    return check


for _mode_name in MODE_SCREENS:
    EFFECTS[f"app.mode.{_mode_name}"] = _mode_effect(_mode_name)


@effect("app.help")
async def _help(j: Journey, context: str, key: str) -> None:
    await j.press(key)
    assert isinstance(j.screen, HelpScreen)
    assert j.screen.query_one(DataTable).row_count > 0


@effect(
    "help.close",
    "receipt.close",
    "edit.cancel",
    "deprecate.cancel",
    "forget.cancel",
    "inspector.prompt_cancel",
    "confirm.no",
)
async def _closes(j: Journey, context: str, key: str) -> None:
    dialog = j.screen
    below = j.app.screen_stack[-2]
    await j.press(key)
    assert j.screen is not dialog and j.screen is below, f"{key} left {type(j.screen).__name__}"


@effect("confirm.yes")
async def _discard(j: Journey, context: str, key: str) -> None:
    await j.press(key)  # "Discard your changes?" yes: the edit dialog goes too
    assert isinstance(j.screen, BrowseScreen)


@effect("edit.save")
async def _save(j: Journey, context: str, key: str) -> None:
    j.screen.query_one("#edit-expiry", Input).value = "30d"
    memory_id = j.screen.memory.id
    await j.press(key)
    assert not isinstance(j.screen, EditDialog)
    assert j.store.get(memory_id).expires_at is not None


@effect("command_palette")
async def _palette(j: Journey, context: str, key: str) -> None:
    await j.press(key)
    assert isinstance(j.screen, CommandPalette)
    await j.press("escape")


@effect("app.leave_field")
async def _leave(j: Journey, context: str, key: str) -> None:
    fields = [w for w in j.screen.query(Input) if w.focusable]
    if fields:
        fields[0].focus()
        await j.settle()
    screen = j.screen
    await j.press(key)
    assert j.screen is screen and not isinstance(j.app.focused, (Input, TextArea))


# browse and detail: the memory actions


def _target(j: Journey) -> Any:
    screen = j.screen
    return (
        screen.data.memory
        if isinstance(screen, DetailScreen)
        else screen.query_one(MemoryTable).cursor_memory
    )


@effect("memory.pin")
async def _pin(j: Journey, context: str, key: str) -> None:
    memory = _target(j)
    await j.press(key)
    assert j.store.get(memory.id).pinned is not memory.pinned


@effect("memory.edit")
async def _edit(j: Journey, context: str, key: str) -> None:
    await j.press(key)
    assert isinstance(j.screen, EditDialog)


@effect("memory.deprecate")
async def _deprecate(j: Journey, context: str, key: str) -> None:
    await j.press(key)
    assert isinstance(j.screen, DeprecateDialog)


@effect("memory.forget")
async def _forget(j: Journey, context: str, key: str) -> None:
    await j.press(key)
    assert isinstance(j.screen, ForgetDialog)


@effect("memory.undeprecate")
async def _undeprecate(j: Journey, context: str, key: str) -> None:
    memory = _target(j)
    j.store.deprecate(memory.id, "journey")
    j.app.note_change()
    if isinstance(j.screen, DetailScreen):
        j.screen.data.memory = j.store.get(memory.id)
    else:
        await j.press("ctrl+r")  # reload: the row is read again, deprecated
        assert _target(j).state == "deprecated"
    await j.press(key)
    assert j.store.get(memory.id).state == "active"


# browse


@effect("browse.search")
async def _search(j: Journey, context: str, key: str) -> None:
    await j.press(key)
    assert j.app.focused is j.screen.query_one("#search", Input)


@effect("browse.filters")
async def _filters(j: Journey, context: str, key: str) -> None:
    await j.press(key)
    assert j.app.focused is j.screen.query_one("#filter-principal", Select)


@effect("browse.next_tier", "browse.prev_tier")
async def _tier(j: Journey, context: str, key: str) -> None:
    before = j.screen.tier
    await j.press(key)
    tier = j.screen.tier
    assert tier != before
    if tier is not None:
        assert {m.tier for m in _rows(j)} == {tier}


def _rows(j: Journey) -> list[Any]:
    table = j.screen.query_one(MemoryTable)
    return [m for i in range(min(table.count or 0, 20)) if (m := table.row(i)) is not None]


@effect("browse.sort")
async def _sort(j: Journey, context: str, key: str) -> None:
    before = j.screen.sort_index
    await j.press(key)
    assert j.screen.sort_index != before
    assert j.screen.query_one(MemoryTable).sort[0] == j.screen.browse_query().order_by


@effect("browse.reverse")
async def _reverse(j: Journey, context: str, key: str) -> None:
    before = j.screen.descending
    first = _rows(j)[0].id
    await j.press(key)
    assert j.screen.descending is not before and _rows(j)[0].id != first


@effect("browse.reload")
async def _reload(j: Journey, context: str, key: str) -> None:
    table = j.screen.query_one(MemoryTable)
    before = table.count
    j.store.remember(f"written behind the app's back ({key})", tier="semantic", principal="alice")
    await j.press(key)
    assert table.count == (before or 0) + 1


@effect("browse.clear")
async def _clear(j: Journey, context: str, key: str) -> None:
    table = j.screen.query_one(MemoryTable)
    await j.press("home", "space")
    assert table.selected
    await j.press(key)
    assert not table.selected


@effect("table.down", "table.up", "table.page_down", "table.page_up", "table.first", "table.last")
async def _cursor(j: Journey, context: str, key: str) -> None:
    table = j.screen.query_one(MemoryTable)
    table.focus()
    await j.press("down", "down") if key in ("up", "pageup", "home") else None
    before = table.cursor
    await j.press(key)
    expected = {"down": before + 1, "up": before - 1, "home": 0, "end": (table.count or 0) - 1}
    if key in expected:
        assert table.cursor == expected[key]
    elif key == "pagedown":
        assert table.cursor > before + 1
    else:
        assert table.cursor < before


@effect("table.select")
async def _select(j: Journey, context: str, key: str) -> None:
    table = j.screen.query_one(MemoryTable)
    before = len(table.selected)
    await j.press(key)
    assert len(table.selected) == before + 1


@effect("table.open")
async def _open(j: Journey, context: str, key: str) -> None:
    memory = _target(j)
    await j.press(key)
    assert isinstance(j.screen, DetailScreen) and j.screen.memory_id == memory.id


# detail


@effect("detail.back")
async def _back(j: Journey, context: str, key: str) -> None:
    await j.press(key)
    assert isinstance(j.screen, BrowseScreen)


@effect("detail.links")
async def _links(j: Journey, context: str, key: str) -> None:
    await j.press(key)
    assert j.app.focused is j.screen.query_one("#detail-links", OptionList)


@effect("detail.entities")
async def _chips(j: Journey, context: str, key: str) -> None:
    await j.press(key)
    assert j.app.focused is j.screen.query_one("#detail-entities", OptionList)


@effect("detail.reveal")
async def _reveal(j: Journey, context: str, key: str) -> None:
    await j.press(key)
    assert "Nothing to reveal: this memory holds no redaction tokens." in [
        n.message for n in j.app._notifications
    ]


# inspector


@effect("inspector.recall")
async def _recall(j: Journey, context: str, key: str) -> None:
    before = j.screen.result
    await j.press(key)
    assert j.screen.result is not before and "candidates" in j.status("#inspector-status")


@effect("inspector.focus_query")
async def _query(j: Journey, context: str, key: str) -> None:
    await j.press(key)
    assert j.app.focused is j.screen.query_one("#inspector-query", Input)


@effect("inspector.focus_filters")
async def _inspector_filters(j: Journey, context: str, key: str) -> None:
    await j.press(key)
    assert j.app.focused is j.screen.query_one("#inspector-since", Input)


@effect("inspector.relevant", "inspector.not_relevant")
async def _judge(j: Journey, context: str, key: str) -> None:
    memory = j.screen.results.highlighted.memory
    await j.press(key)
    assert j.screen.judgments[memory.id] is (key == "y")


@effect("inspector.useful", "inspector.wrong")
async def _feedback(j: Journey, context: str, key: str) -> None:
    memory = j.screen.results.highlighted.memory
    await j.press(key)
    word = "useful" if key == "plus" else "wrong"
    assert f"{memory.id} was {word}" in j.status("#inspector-status")


@effect("inspector.explain")
async def _explain(j: Journey, context: str, key: str) -> None:
    await j.press(key)
    assert isinstance(j.screen, MemoryIdPrompt)


@effect("inspector.apply_suggestion")
async def _apply(j: Journey, context: str, key: str) -> None:
    await j.press(key)  # no explanation yet: it says what to do first
    assert "press w to explain" in j.status("#inspector-status")


@effect("inspector.focus_results")
async def _results(j: Journey, context: str, key: str) -> None:
    j.screen.query_one("#inspector-query", Input).focus()
    await j.settle()
    await j.press(key)
    assert j.app.focused is j.screen.query_one("#inspector-results", DataTable)


@effect("inspector.save_profile")
async def _save_profile(j: Journey, context: str, key: str) -> None:
    j.screen.query_one("#inspector-profile-name", Input).value = "journey"
    await j.press(key)
    assert "Saved profile 'journey'" in j.status("#inspector-status")


@effect("inspector.load_profile")
async def _load_profile(j: Journey, context: str, key: str) -> None:
    await j.press(key)
    assert j.screen.query_one("#inspector-profile-select", Select).expanded
    await j.press("escape")


@effect("inspector.reset_weights")
async def _reset(j: Journey, context: str, key: str) -> None:
    field = j.screen.query_one("#inspector-weight-recency-input", Input)
    field.value = "0.9"
    await j.settle()
    assert j.screen.profile.weights["recency"] == pytest.approx(0.9)
    j.screen.results.focus_table()
    await j.press(key)
    assert j.screen.profile.weights["recency"] != pytest.approx(0.9)


@effect("inspector.next_tab", "analytics.next_tab")
async def _next_tab(j: Journey, context: str, key: str) -> None:
    tabs = j.screen.query_one(TabbedContent)
    before = tabs.active
    await j.press(key)
    assert tabs.active != before


@effect("inspector.weight_increase", "inspector.weight_decrease")
async def _step(j: Journey, context: str, key: str) -> None:
    field = j.screen.query_one("#inspector-weight-recency-input", Input)
    field.focus()
    await j.settle()
    before = j.screen.profile.weights["recency"]
    await j.press(key)
    after = j.screen.profile.weights["recency"]
    assert after > before if key == "up" else after < before


# analytics, receipts, review, entities


@effect("analytics.refresh")
async def _analytics_refresh(j: Journey, context: str, key: str) -> None:
    before = j.status("#analytics-summary")
    j.store.remember_many(
        [
            {"text": f"new fact {n} written elsewhere", "tier": "semantic", "principal": "zed"}
            for n in range(3)
        ]
    )
    await j.press(key)
    assert j.status("#analytics-summary") != before  # the new principal and memories are counted


@effect("receipts.refresh")
async def _receipts_refresh(j: Journey, context: str, key: str) -> None:
    before = len(j.screen.rows)
    newest = j.store.list(tier="semantic", limit=1)[0]
    j.store.forget([newest.id], "forgotten elsewhere")
    await j.press(key)
    assert len(j.screen.rows) == before + 1


@effect("review.refresh")
async def _review_refresh(j: Journey, context: str, key: str) -> None:
    before = j.screen.items
    await j.press(key)
    assert j.screen.items is not before
    assert j.status("#review-status") == j.screen.counts_line()  # the reloaded queue's counts, every kind
    assert (j.status("#review-status") == "Nothing to review.") == (not j.screen.items)


@effect("entities.refresh")
async def _entities_refresh(j: Journey, context: str, key: str) -> None:
    memory = j.store.list(Scope.of("alice"), limit=1)[0]
    j.store.add_entity("alice", "Zanzibar Journey", kind="place", mentions=[memory.id])
    await j.press(key)
    assert "Zanzibar Journey" in {r["name"] for r in j.screen.rows}


@effect("analytics.period", "analytics.group")
async def _cycle(j: Journey, context: str, key: str) -> None:
    attribute = "period" if key == "p" else "group"
    before = getattr(j.screen, attribute)
    await j.press(key)
    assert getattr(j.screen, attribute) != before


@effect("receipts.verify")
async def _verify(j: Journey, context: str, key: str) -> None:
    rid = j.screen.highlighted_id
    await j.press(key)
    assert rid in j.screen.verified and f"receipt {rid[:12]} verified" in j.status("#receipts-status")


@effect("receipts.verify_chain")
async def _verify_chain(j: Journey, context: str, key: str) -> None:
    j.screen.query_one("#receipts-chain").update("")
    await j.press(key)
    assert "chain intact: 1 receipt" in j.status("#receipts-chain")


@effect("receipts.export_json", "receipts.export_md")
async def _export(j: Journey, context: str, key: str) -> None:
    folder = j.tmp / f"export-{key}"
    j.screen.query_one("#receipts-export-dir", Input).value = str(folder)
    await j.press(key)
    assert [p.suffix for p in folder.iterdir()] == [".json" if key == "j" else ".md"]


@effect("review.keep_left", "review.keep_right", "review.merge", "review.dismiss", "review.undo")
async def _review(j: Journey, context: str, key: str) -> None:
    j.screen.query_one("#review-status").update("")
    await j.press(key)
    assert j.status("#review-status").strip()  # what was done, or why it could not be


@effect("entities.path")
async def _path(j: Journey, context: str, key: str) -> None:
    await j.press(key)
    assert j.app.focused is j.screen.query_one("#entities-path", Input)


@effect("entities.memories")
async def _memories(j: Journey, context: str, key: str) -> None:
    await j.press(key)
    assert j.app.focused is j.screen.query_one("#entities-memories", OptionList)


@effect("entities.back")
async def _entities_back(j: Journey, context: str, key: str) -> None:
    j.screen.query_one("#entities-path", Input).focus()
    await j.settle()
    screen = j.screen
    await j.press(key)
    assert j.screen is screen and j.app.focused is screen.query_one("#entities-list", DataTable)


# --- the journey -----------------------------------------------------------------------------------------


def help_rows(j: Journey) -> list[tuple[str, str]]:
    """(binding id, where) of every row the help screen shows for the screen below it."""
    table = j.screen.query_one(DataTable)
    return [(str(table.get_row_at(i)[3]), str(table.get_row_at(i)[2])) for i in range(table.row_count)]


def binding_keys(j: Journey, binding_id: str) -> list[str]:
    """The keys bound to ``binding_id`` on this screen (after the keymap), as Textual names them."""
    if binding_id == "command_palette":
        return [j.app.COMMAND_PALETTE_BINDING]
    nodes = [j.screen, *j.screen.query("*"), j.app]
    return [key for node in nodes for key, b in node._bindings if b.id == binding_id][:4]


def winner(j: Journey, key: str) -> str | None:
    """The binding id a press of ``key`` runs here (the first enabled one along the focus chain)."""
    for _namespace, bindings in j.screen._modal_binding_chain:
        for binding in bindings.key_to_bindings.get(key, ()):
            return binding.id or binding.action
    return "command_palette" if key == j.app.COMMAND_PALETTE_BINDING else None


@pytest.mark.timeout(900)  # every key of a context pressed in turn: 3.5 min for "detail" with four workers
@pytest.mark.parametrize("context", list(CONTEXTS))
async def test_every_key_the_help_screen_lists_does_what_it_says(
    demo: Store, tmp_path: Path, context: str
) -> None:
    app = MemdeckApp(store=demo, scope=Scope.everyone(), load_model=False)
    async with app.run_test(size=SIZE) as pilot:
        j = Journey(app, pilot, demo, tmp_path)
        await j.settle()
        await enter(j, context)
        if context == "help":  # the help screen's own keys (it lists those of the screen below it)
            rows = [(b, where) for _keys, _does, where, b in binding_rows(app, j.screen, {})]
        else:
            await j.press("question_mark")
            if not isinstance(
                j.screen, HelpScreen
            ):  # a text field has the focus: ? is typed, as it should be
                j.app.action_help()
                await j.settle()
            rows = help_rows(j)
        assert rows, f"the help screen lists nothing for {context}"
        missing = sorted({b for b, _ in rows} - set(EFFECTS) - {"app.quit"})
        assert not missing, f"bindings without an expected effect in this test: {missing}"

        pressed = 0
        fresh = False  # every key is pressed on a fresh start of the context, entered once for it
        for binding_id, _where in rows:
            if binding_id == "app.quit":
                continue
            if not fresh:
                await enter(j, context)
                fresh = True
            for key in binding_keys(j, binding_id) or []:
                if not fresh:
                    await enter(j, context)
                fresh = False
                focused = j.app.focused
                if (
                    focused is not None
                    and isinstance(focused, (Input, TextArea))
                    and focused.check_consume_key(key, _character(key))
                ):
                    before = _text(focused)
                    await j.press(key)
                    assert _text(focused) != before, f"{context}: {key} was not typed into the field"
                    continue
                # A widget's key acts once that widget has the focus (its effect focuses it first).
                runs = binding_id if _where not in ("this screen", "everywhere") else winner(j, key)
                assert runs in EFFECTS, f"{context}: {key} runs {runs}, which has no expected effect here"
                await EFFECTS[runs](j, context, key)
                pressed += 1
        assert pressed, f"no key of {context} was pressed"

        if "app.quit" not in {b for b, _ in rows}:  # a dialog keeps its keys: q is not the app's there
            return
        # Last, q: it quits, unless a text field takes it.
        await enter(j, context)
        focused = j.app.focused
        if isinstance(focused, (Input, TextArea)):
            before = _text(focused)
            await j.press("q")
            assert _text(focused) != before  # typed, and the app still runs
            await j.press("escape")
            if isinstance(j.screen, ConfirmDialog):
                await j.press("escape")
            return
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0


def _text(widget: Any) -> str:
    return str(widget.text if isinstance(widget, TextArea) else widget.value)


def _character(key: str) -> str | None:
    from textual.keys import key_to_character

    return {"slash": "/", "plus": "+", "minus": "-"}.get(key) or key_to_character(key)
