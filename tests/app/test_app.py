"""The Textual app driven with Pilot over real stores: browse, filter, search, act, help."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from textual.widgets import Input, Select, TextArea

from memdeck.core.errors import MemdeckError
from memdeck.core.filters import Scope
from memdeck.core.store import MemoryInput, Store
from memdeck.tui import app as app_module
from memdeck.tui.app import MemdeckApp
from memdeck.tui.screens.browse import BrowseScreen
from memdeck.tui.screens.detail import DetailScreen
from memdeck.tui.screens.dialogs import DeprecateDialog, EditDialog, ForgetDialog, ReceiptDialog
from memdeck.tui.screens.help import HelpScreen
from memdeck.tui.screens.receipts import ReceiptsScreen
from memdeck.tui.widgets.memory_table import MemoryTable
from tests.appwait import settle as wait

pytestmark = pytest.mark.anyio  # the anyio plugin runs these coroutines on asyncio

BASE = datetime(2025, 1, 1, tzinfo=UTC)
NOW = BASE + timedelta(days=30)
SIZE = (140, 42)


def fill(store: Store, n: int = 90) -> None:
    """n memories over three principals, two agents, all tiers; created an hour apart."""
    items = []
    for i in range(n):
        principal = ("alice", "bob", "carol")[i % 3]
        items.append(
            MemoryInput(
                text=f"note {i} about {'coffee beans' if i % 5 == 0 else 'atlas'} for {principal}",
                tier=("episodic", "semantic", "procedural")[(i // 3) % 3],
                principal=principal,
                agent=("assistant", "coder")[i % 2],
                tags=[f"t{i % 4}"],
                importance=(i % 10) / 10,
                created_at=BASE + timedelta(hours=i),
                force=True,
            )
        )
    store.remember_many(items)


def make_app(store: Store, scope: Scope | None = None) -> MemdeckApp:
    return MemdeckApp(store=store, scope=scope or Scope.everyone(), clock=lambda: NOW)


async def settle(app: MemdeckApp, pilot: Any) -> None:
    await wait(app, pilot, 4)


def table_of(app: MemdeckApp) -> MemoryTable:
    return app.screen.query_one(MemoryTable)


def loaded_rows(table: MemoryTable) -> list[Any]:
    rows = [table.row(i) for i in range(table.count or 0)]
    return [r for r in rows if r is not None]


async def test_browse_pages_newest_first_and_reaches_the_end(store: Store) -> None:
    fill(store, 150)
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert isinstance(app.screen, BrowseScreen)
        table = table_of(app)
        assert table.count == 150
        assert table.cursor_memory.text.startswith("note 149 ")
        await pilot.press("end")
        await settle(app, pilot)
        assert table.cursor == 149
        assert table.cursor_memory.text.startswith("note 0 ")
        await pilot.press("home", "down", "down")
        await settle(app, pilot)
        assert table.cursor_memory.text.startswith("note 147 ")


async def test_tier_views_show_only_their_tier(store: Store) -> None:
    fill(store)
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("t")  # all -> episodic
        await settle(app, pilot)
        table = table_of(app)
        assert app.screen.tier == "episodic"
        assert table.count == 30
        assert {m.tier for m in loaded_rows(table)} == {"episodic"}
        assert table.columns[0].label == "summary"
        await pilot.press("t", "t")  # -> procedural
        await settle(app, pilot)
        assert {m.tier for m in loaded_rows(table)} == {"procedural"}


async def test_filters_by_principal_agent_state_tag_and_date(store: Store) -> None:
    fill(store)
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.screen
        principal: Select[str] = screen.query_one("#filter-principal", Select)
        assert [v for _, v in principal._options if isinstance(v, str)] == ["alice", "bob", "carol"]
        principal.value = "bob"
        await settle(app, pilot)
        table = table_of(app)
        assert table.count == 30 and {m.principal for m in loaded_rows(table)} == {"bob"}
        screen.query_one("#filter-agent", Select).value = "coder"
        await settle(app, pilot)
        assert {(m.principal, m.agent) for m in loaded_rows(table)} == {("bob", "coder")}
        screen.query_one("#filter-principal", Select).clear()
        screen.query_one("#filter-agent", Select).clear()
        tag = screen.query_one("#filter-tag", Input)
        tag.focus()
        await pilot.press(*"t2", "enter")
        await settle(app, pilot)
        assert table.count == sum(1 for i in range(90) if i % 4 == 2)
        assert all("t2" in m.tags for m in loaded_rows(table))
        tag.value = ""
        since = screen.query_one("#filter-since", Input)
        since.focus()
        await pilot.press(*"2025-01-03", "enter")  # rows 48.. (created an hour apart from Jan 1)
        await settle(app, pilot)
        assert table.count == 90 - 48
        assert min(m.created_at for m in loaded_rows(table)) >= datetime(2025, 1, 3, tzinfo=UTC)
        since.value = "next week"
        await pilot.press("enter")
        await settle(app, pilot)
        assert since.has_class("-invalid")
        assert table.count == 90 - 48  # a bad date keeps the last good filter


async def test_state_filter_and_sorting(store: Store) -> None:
    fill(store, 30)
    victim = store.list(limit=1)[0]
    store.deprecate(victim.id, "stale")
    store.pin(store.list(limit=2)[1].id)
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.screen
        screen.query_one("#filter-state", Select).value = "deprecated"
        await settle(app, pilot)
        table = table_of(app)
        assert [m.id for m in loaded_rows(table)] == [victim.id]
        screen.query_one("#filter-state", Select).value = "pinned"
        await settle(app, pilot)
        assert [m.pinned for m in loaded_rows(table)] == [True]
        screen.query_one("#filter-state", Select).clear()
        table.focus()
        await pilot.press("s", "s")  # created -> updated -> importance
        await settle(app, pilot)
        values = [m.importance for m in loaded_rows(table)]
        assert values == sorted(values, reverse=True)
        await pilot.press("r")
        await settle(app, pilot)
        values = [m.importance for m in loaded_rows(table)]
        assert values == sorted(values)


async def test_keyword_search_while_the_model_loads(store: Store) -> None:
    fill(store)
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.model_state = "loading"
        await pilot.pause()
        assert "model loading" in str(app.screen.query_one("#search-mode").render())
        await pilot.press("slash", *"coffee", "enter")
        await settle(app, pilot)
        screen = app.screen
        assert screen.search_keyword_only and screen.search_waiting_for_model
        rows = loaded_rows(table_of(app))
        assert rows and all("coffee" in m.text for m in rows)
        assert len(rows) == 18
        app.model_state = "ready"  # the search runs again, now with meaning too
        await settle(app, pilot)
        assert not screen.search_keyword_only
        await pilot.press("escape")
        await settle(app, pilot)
        assert screen.search_query is None and table_of(app).count == 90


async def test_semantic_search_finds_a_paraphrase(model_store: Store) -> None:
    model_store.remember_many(
        [
            MemoryInput(text=t, tier="semantic", principal="alice", created_at=BASE, force=True)
            for t in [
                "Alice drinks her espresso black, no sugar",
                "The quarterly budget review is on Thursday",
                "Bob maintains the payments service",
                "The office plants need water on Mondays",
            ]
        ]
    )
    app = make_app(model_store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.model_state == "ready"
        await pilot.press("slash", *"how does she take her coffee", "enter")
        await settle(app, pilot)
        assert table_of(app).row(0).text.startswith("Alice drinks her espresso")


async def test_scope_hides_other_principals_in_browse_and_search(store: Store) -> None:
    fill(store)
    app = make_app(store, Scope.of("alice"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        table = table_of(app)
        assert table.count == 30 and {m.principal for m in loaded_rows(table)} == {"alice"}
        options = app.screen.query_one("#filter-principal", Select)._options
        assert [v for _, v in options if isinstance(v, str)] == ["alice"]
        await pilot.press("slash", *"coffee", "enter")
        await settle(app, pilot)
        assert {m.principal for m in loaded_rows(table)} == {"alice"}


async def test_pin_and_unpin_a_multi_selection(store: Store) -> None:
    fill(store, 12)
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        table = table_of(app)
        await pilot.press("space", "space")
        assert len(table.selected) == 2
        ids = list(table.selected)
        await pilot.press("p")
        await settle(app, pilot)
        assert all(store.get(i).pinned for i in ids)
        assert not store.get(table.cursor_memory.id).pinned  # the cursor row was not selected
        await pilot.press("p")
        await settle(app, pilot)
        assert not any(store.get(i).pinned for i in ids)
        await pilot.press("escape")
        assert not table.selected


async def test_edit_saves_a_new_version_and_keeps_the_history(store: Store) -> None:
    fill(store, 6)
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        memory = table_of(app).cursor_memory
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, EditDialog)
        app.screen.query_one(TextArea).text = "an edited note about tea"
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert isinstance(app.screen, BrowseScreen)
        assert store.get(memory.id).text == "an edited note about tea"
        assert [h["text"] for h in store.history(memory.id)] == [memory.text]
        assert table_of(app).cursor_memory.text == "an edited note about tea"


async def test_deprecate_with_reason_and_successor_then_undeprecate(store: Store) -> None:
    fill(store, 6)
    rows = store.list(limit=6)
    newer, older = rows[0], rows[3]
    assert newer.principal == older.principal
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("down", "down", "down")
        await settle(app, pilot)
        assert table_of(app).cursor_memory.id == older.id
        await pilot.press("d")
        await pilot.pause()
        assert isinstance(app.screen, DeprecateDialog)
        app.screen.query_one("#superseded", Input).value = newer.id
        await pilot.press(*"outdated", "enter")
        await settle(app, pilot)
        stored = store.get(older.id)
        assert (stored.state, stored.deprecation_reason, stored.superseded_by) == (
            "deprecated",
            "outdated",
            newer.id,
        )
        assert table_of(app).cursor_memory.state == "deprecated"
        await pilot.press("u")
        await settle(app, pilot)
        assert store.get(older.id).state == "active"


async def test_detail_shows_fields_provenance_and_history_and_follows_links(store: Store) -> None:
    episode = store.remember(
        "Planned the atlas launch with Dana", tier="episodic", principal="alice", created_at=BASE
    ).memory
    fact = store.remember(
        "Dana owns the atlas launch",
        tier="semantic",
        principal="alice",
        sources=[episode.id],
        created_at=BASE + timedelta(hours=1),
    ).memory
    store.edit(fact.id, "Dana owns the atlas launch plan")
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert table_of(app).cursor_memory.id == fact.id
        await pilot.press("enter")
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, DetailScreen) and screen.data is not None
        assert screen.data.memory.version == 2
        assert [h["text"] for h in screen.data.history] == ["Dana owns the atlas launch"]
        assert [(link.relation, link.memory_id) for link in screen.data.links] == [
            ("source episode", episode.id)
        ]
        await pilot.press("l", "enter")
        await settle(app, pilot)
        assert isinstance(app.screen, DetailScreen) and app.screen.memory_id == episode.id
        links = [(link.relation, link.memory_id) for link in app.screen.data.links]
        assert links == [("derived fact", fact.id)]  # derived facts come from the forget plan
        await pilot.press("escape", "escape")
        await settle(app, pilot)
        assert isinstance(app.screen, BrowseScreen)


async def test_detail_lists_the_recalls_that_returned_it(store: Store) -> None:
    fill(store, 9)
    result = store.recall("coffee beans", principal="alice", agent="scheduler", k=3)
    target = result.items[0].memory
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await app.push_screen(DetailScreen(target.id))
        await settle(app, pilot)
        recalls = app.screen.data.recalls
        assert [(r["agent"], r["query"], r["rank"]) for r in recalls] == [("scheduler", "coffee beans", 1)]


async def test_forget_shows_what_depends_on_it_then_the_receipt(store: Store) -> None:
    episode = store.remember(
        "Talked about the atlas launch", tier="episodic", principal="alice", created_at=BASE
    ).memory
    store.remember(
        "Dana owns the atlas launch",
        tier="semantic",
        principal="alice",
        sources=[episode.id],
        created_at=BASE - timedelta(hours=1),
    )
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert table_of(app).cursor_memory.id == episode.id
        await pilot.press("x")
        await settle(app, pilot)
        dialog = app.screen
        assert isinstance(dialog, ForgetDialog) and dialog.plan is not None
        assert [m.id for m in dialog.plan.deleted] == [episode.id]
        assert [m.text for m, _why in dialog.plan.cascade_delete] == ["Dana owns the atlas launch"]
        await pilot.click("#ok")
        await settle(app, pilot)
        assert isinstance(app.screen, ReceiptDialog)
        receipt = app.screen.receipt
        assert [d["id"] for d in receipt["deleted"]] == [episode.id]
        # The derived fact, and the entities only those two memories mentioned (the graph's cascade).
        memories = [c for c in receipt["cascade"] if c["tier"] not in ("entities", "relations")]
        assert len(memories) == 1
        assert {c["tier"] for c in receipt["cascade"]} - {"semantic"} <= {"entities", "relations"}
        await pilot.press("escape")
        await settle(app, pilot)
        assert table_of(app).count == 0
        with pytest.raises(MemdeckError):
            store.get(episode.id)


async def test_the_forget_preview_names_the_sessions_that_were_given_the_memory(store: Store) -> None:
    from memdeck.core.recall.traces import log_injection

    fill(store, 3)
    target = store.list(limit=1)[0]
    other = store.list(limit=3)[2]
    log_injection(
        store.engine,
        principal=target.principal,
        agent="coder",
        session="s-42",
        kind="context",
        ids=[target.id, other.id],
    )
    log_injection(
        store.engine,
        principal=target.principal,
        agent="coder",
        session="s-42",
        kind="recall",
        ids=[target.id],
    )
    log_injection(
        store.engine,
        principal=other.principal,
        agent="planner",
        session="s-7",
        kind="context",
        ids=[other.id],
    )
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert table_of(app).cursor_memory.id == target.id
        await pilot.press("x")
        await settle(app, pilot)
        dialog = app.screen
        assert isinstance(dialog, ForgetDialog) and dialog.plan is not None
        assert [(s["agent"], s["session"], s["times"]) for s in dialog.sessions] == [("coder", "s-42", 2)]
        shown = [str(label.render()) for label in dialog.query("#forget-plan Label")]
        assert "Used in sessions (1)" in shown
        line = next(text for text in shown if "s-42" in text)
        assert "coder" in line and "given 2 times" in line and "planner" not in " ".join(shown)


async def test_forget_can_be_cancelled(store: Store) -> None:
    fill(store, 3)
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("x")
        await settle(app, pilot)
        assert isinstance(app.screen, ForgetDialog)
        await pilot.press("escape")
        await settle(app, pilot)
        assert isinstance(app.screen, BrowseScreen) and table_of(app).count == 3


async def test_forget_dialog_typing_goes_to_the_reason_and_enter_alone_never_forgets(store: Store) -> None:
    fill(store, 3)
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        memory = table_of(app).cursor_memory
        await pilot.press("x")
        await settle(app, pilot)
        dialog = app.screen
        assert isinstance(dialog, ForgetDialog) and dialog.plan is not None
        await pilot.press(*"duplicate")  # typed at once, before any click or tab
        reason = dialog.query_one("#reason", Input)
        assert reason.value == "duplicate" and app.focused is reason
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.screen is dialog  # still asking: Enter alone never forgets
        assert store.get(memory.id).id == memory.id
        await pilot.click("#ok")
        await settle(app, pilot)
        assert isinstance(app.screen, ReceiptDialog)
        assert app.screen.receipt["reason"] == "duplicate"
        with pytest.raises(MemdeckError):
            store.get(memory.id)


async def test_help_lists_keys_and_the_config_remaps_them(open_store: Any) -> None:
    store = open_store(keys={"memory.pin": "ctrl+t", "no.such.binding": "z"}, recal={"k": 3})
    fill(store, 3)
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        said = [str(n.message) for n in app._notifications]
        assert any("config [keys]: ignoring 'no.such.binding'" in m for m in said), said
        assert "config.toml: unknown section [recal] (did you mean 'recall'?); it is ignored" in said
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        keys = {row[3]: row[0] for row in app.screen.rows}
        assert keys["memory.pin"] == "^t"
        assert {"memory.forget", "browse.search", "table.select", "app.help", "app.mode.inspector"} <= set(
            keys
        )
        await pilot.press("escape")
        memory = table_of(app).cursor_memory
        await pilot.press("ctrl+t")
        await settle(app, pilot)
        assert store.get(memory.id).pinned


async def test_palette_offers_the_actions_of_the_screen(store: Store) -> None:
    fill(store, 3)
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        titles = [c.title for c in app.get_system_commands(app.screen)]
        for wanted in (
            "Pin / unpin",
            "Edit memory",
            "Deprecate",
            "Undeprecate",
            "Forget",
            "Search",
            "Show semantic",
            "Go to recall inspector",
            "Help: keys",
        ):
            assert wanted in titles


async def test_modes_switch_and_a_missing_screen_module_is_a_broken_build(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    fill(store, 3)
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("4")
        await pilot.pause()
        assert isinstance(app.screen, ReceiptsScreen)
        await pilot.press("1")
        await pilot.pause()
        assert isinstance(app.screen, BrowseScreen)
        # memdeck's own screens are never optional: a missing one fails loudly, not as a stand-in screen.
        modes = [
            m if m[0] != "receipts" else (*m[:3], "memdeck.tui.screens.no_such_screen", "X")
            for m in app_module.MODES
        ]
        monkeypatch.setattr(app_module, "MODES", modes)
        with pytest.raises(ModuleNotFoundError):
            app._make_screen("receipts")


async def test_a_failing_action_is_reported_not_fatal(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    fill(store, 3)

    def broken(*args: Any, **kwargs: Any) -> None:
        raise MemdeckError("the store is read-only")

    monkeypatch.setattr(store, "pin", broken)
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("p")
        await settle(app, pilot)
        assert app.is_running
        assert any("the store is read-only" in str(n.message) for n in app._notifications)


async def test_opener_paints_first_and_a_bad_store_exits_with_one_line(tmp_path: Any) -> None:
    def opener() -> tuple[Any, Any]:
        raise MemdeckError(f"store path {tmp_path} is a file, not a directory")

    app = MemdeckApp(opener=opener)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
    assert app.return_code == 1
    assert app.open_error is not None and "is a file" in app.open_error


async def test_opener_opens_the_store_in_the_background(store: Store) -> None:
    fill(store, 3)
    app = MemdeckApp(opener=lambda: (store, Scope.everyone()))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert isinstance(app.screen, BrowseScreen) and table_of(app).count == 3


async def test_detail_reveals_redacted_values_on_request(tmp_path):
    from textual.widgets import Static

    from memdeck.core.embed import HashEmbedder
    from memdeck.core.filters import Scope
    from memdeck.core.store import Store
    from memdeck.tui.app import MemdeckApp
    from memdeck.tui.screens.detail import DetailScreen

    s = Store.open(tmp_path / "r", embedder=HashEmbedder())
    m = s.remember("Call Dana at dana.k@example.com", tier="semantic", principal="alice").memory
    app = MemdeckApp(store=s, scope=Scope.everyone())
    async with app.run_test(size=(120, 40)) as pilot:
        await app.workers.wait_for_complete()
        await app.push_screen(DetailScreen(m.id))
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        shown = str(app.screen.query_one("#detail-text", Static).render())
        assert "<EMAIL_1>" in shown and "dana.k@example.com" not in shown
        await pilot.press("v")
        await app.workers.wait_for_complete()
        await pilot.pause()
        shown = str(app.screen.query_one("#detail-text", Static).render())
        assert "dana.k@example.com" in shown
    s.close()


async def test_the_edit_dialog_sets_and_clears_a_memorys_own_expiry(store: Store) -> None:
    fill(store, 6)
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        memory = table_of(app).cursor_memory
        assert memory.expires_at is None

        async def edit_expiry(value: str) -> None:
            await pilot.press("e")
            await pilot.pause()
            assert isinstance(app.screen, EditDialog)
            app.screen.query_one("#edit-expiry", Input).value = value
            await pilot.press("ctrl+s")
            await settle(app, pilot)

        await edit_expiry("7d")
        assert isinstance(app.screen, BrowseScreen)
        left = store.get(memory.id).expires_at - datetime.now(UTC)
        assert timedelta(days=6, hours=23) < left <= timedelta(days=7)
        assert store.get(memory.id).text == memory.text and store.get(memory.id).version == memory.version

        await edit_expiry("2099-01-01")
        assert store.get(memory.id).expires_at == datetime(2099, 1, 1, tzinfo=UTC)

        await pilot.press("e")
        await pilot.pause()
        field = app.screen.query_one("#edit-expiry", Input)
        assert field.value == "2099-01-01T00:00:00Z"  # the dialog shows the expiry it has
        field.value = "soon"
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert isinstance(app.screen, EditDialog) and field.has_class("-invalid")  # refused, dialog stays
        assert store.get(memory.id).expires_at == datetime(2099, 1, 1, tzinfo=UTC)
        field.value = ""
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert isinstance(app.screen, BrowseScreen)
        assert store.get(memory.id).expires_at is None
