"""Browse: every memory in the scope, per tier or across tiers, filtered, sorted and searchable.

Rows are paged from ``memdeck.core.storage.browse.Browser`` (never all loaded); a search runs a recall in a
worker and shows its results, by keyword only until the embedding model has loaded.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar

from textual import on, work
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Header, Input, Label, Tab, Tabs

from memdeck.core.filters import Scope
from memdeck.core.storage.browse import BrowseQuery, Browser

from .. import model
from ..widgets.filter_bar import FilterBar, Filters
from ..widgets.key_footer import KeyFooter
from ..widgets.memory_table import COLUMNS, BrowseSource, ListSource, MemoryTable
from ..widgets.status_bar import StatusBar
from .actions import MemoryActionsScreen

TIERS: list[tuple[str | None, str]] = [
    (None, "All tiers"),
    ("episodic", "Episodic"),
    ("semantic", "Semantic"),
    ("procedural", "Procedural"),
]
SORTS = [
    ("created_at", "created"),
    ("updated_at", "updated"),
    ("importance", "importance"),
    ("access_count", "recalls"),
    ("last_accessed", "last recalled"),
]
FILTERS_AT_LATEST_S = 2.0  # the filter fields are mounted after the first rows, or at the latest this late
SEARCH_K = 100  # results a search shows; recall reads 4x as many candidates per channel and tier
MAX_BROWSERS = 4  # each caches one ordering (16 bytes a row): a few at 1M rows stay well under 100 MB


class BrowseScreen(MemoryActionsScreen):
    """The main screen: a table of memories with tiers, filters, search and sorting."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "search", "Search", id="browse.search", tooltip="Search by keyword and meaning"),
        Binding(
            "f",
            "filters",
            "Filter",
            id="browse.filters",
            tooltip="Filter by principal, agent, state, tag, date",
        ),
        Binding("t", "tier(1)", "Tier", id="browse.next_tier", tooltip="Next tier view"),
        Binding("T", "tier(-1)", "Previous tier", show=False, id="browse.prev_tier"),
        Binding("s", "sort", "Sort", id="browse.sort", tooltip="Sort by the next column"),
        Binding("r", "reverse", "Reverse", show=False, id="browse.reverse"),
        Binding("ctrl+r,f5", "reload", "Reload", show=False, id="browse.reload"),
        Binding("escape", "clear", "Clear", show=False, id="browse.clear"),
    ]

    @dataclass
    class _Choices(Message):
        """The principals and agents the filter bar offers."""

        principals: list[str]
        agents: list[str]

    @dataclass
    class _Searched(Message):
        """A search finished."""

        query: str
        items: list[Any]
        keyword_only: bool
        notice: str | None

    @dataclass
    class _Fresh(Message):
        """Selected memories read again after a change."""

        memories: dict[str, Any]

    def __init__(self, store: Any = None, scope: Scope | None = None) -> None:
        super().__init__(store, scope)
        self.tier: str | None = None
        self.filters = Filters()
        self.sort_index = 0
        self.descending = True
        self.search_query: str | None = None
        self.search_items: list[Any] = []
        self.search_keyword_only = False
        self.search_waiting_for_model = False
        self._browsers: OrderedDict[BrowseQuery, Browser] = OrderedDict()
        self._had_targets = True  # what has_targets() says while the table counts
        self._told_first_rows = False

    def compose(self) -> ComposeResult:
        clock = self.now
        yield Header(icon="≡")
        yield Tabs(*[Tab(label, id=f"tier-{key or 'all'}") for key, label in TIERS], id="tiers")
        # The filter fields are mounted once the first rows are on screen (or at once when asked for).
        yield FilterBar(clock=clock, id="filters", deferred=True)
        with Horizontal(id="search-row"):
            yield Input(
                placeholder="/ search by keyword and meaning, enter to run", id="search", compact=True
            )
            yield Label("", id="search-mode")
        yield MemoryTable(clock=clock, id="table")
        yield StatusBar(id="status")
        yield KeyFooter()

    @property
    def table(self) -> MemoryTable:
        return self.query_one(MemoryTable)

    def on_mount(self) -> None:
        self.watch(self.app, "model_state", self._model_state_changed, init=True)
        if self.host is not None:
            self.watch(self.app, "maintenance", self._maintenance_changed, init=True)
        self._apply()
        self.table.focus()
        self._load_choices()
        self.set_timer(FILTERS_AT_LATEST_S, self._fill_filters)  # if no rows ever come (a failed count)

    def data_changed(self) -> None:
        self.after_change([], False)

    # --- the query ----------------------------------------------------------------------------------

    def browse_query(self) -> BrowseQuery:
        f = self.filters
        state = f.state if f.state in ("active", "deprecated") else None
        return BrowseQuery(
            tier=self.tier,
            state=state,
            agent=f.agent,
            tag=f.tag,
            pinned=True if f.state == "pinned" else None,
            since=f.since,
            until=f.until,
            principal=f.principal,
            type=f.type,
            order_by=SORTS[self.sort_index][0],
            descending=self.descending,
        )

    def _browser(self, query: BrowseQuery) -> Browser:
        browser = self._browsers.get(query)
        if browser is None:
            browser = self._browsers[query] = Browser(self.store.engine, self.scope)
            while len(self._browsers) > MAX_BROWSERS:
                self._browsers.popitem(last=False)
        self._browsers.move_to_end(query)
        return browser

    def _apply(self, *, keep_cursor: bool = False) -> None:
        table = self.table
        columns = COLUMNS[self.tier]
        if self.search_query is not None:
            items = [
                m
                for m in self.search_items
                if self.filters.matches(m) and (not self.tier or m.tier == self.tier)
            ]
            if self.sort_index >= 0:
                key = SORTS[self.sort_index][0]
                items.sort(key=lambda m: _sort_key(m, key), reverse=self.descending)
            table.sort = None if self.sort_index < 0 else (SORTS[self.sort_index][0], self.descending)
            table.empty_text = "No results. Try other words, or clear the filters."
            table.set_source(ListSource(items), columns, keep_cursor=keep_cursor)
        else:
            query = self.browse_query()
            table.sort = (query.order_by, query.descending)
            table.empty_text = (
                "No memories match these filters."
                if self.filters.active
                else "No memories yet: agents add them through the API, `memdeck add` or `memdeck mcp`; "
                "`memdeck demo` builds a store to look around in."
            )
            table.set_source(BrowseSource(self._browser(query), query), columns, keep_cursor=keep_cursor)
        self._show_status()

    def _show_status(self) -> None:
        tier = dict(TIERS)[self.tier].lower()
        count = self.table.count
        if self.search_query is not None:
            n = "…" if count is None else f"{count:,}"
            how = "keyword only" if self.search_keyword_only else "keyword + meaning"
            order = "by score" if self.sort_index < 0 else f"sorted by {SORTS[self.sort_index][1]}"
            text = f"search “{self.search_query}”: {n} results in {tier} ({how}), {order} · esc clears"
        else:
            n = "counting…" if count is None else f"{count:,} memories"
            arrow = "↓" if self.descending else "↑"
            text = f"{n} · {tier} · sorted by {SORTS[self.sort_index][1]} {arrow}"
        if self.filters.active:
            text += f" · {self.filters.describe()}"
        self.query_one(StatusBar).show_view(text)

    # --- events -------------------------------------------------------------------------------------

    @on(Tabs.TabActivated, "#tiers")
    def _tier_chosen(self, event: Tabs.TabActivated) -> None:
        key = (event.tab.id or "tier-all").removeprefix("tier-")
        tier = None if key == "all" else key
        if tier != self.tier:
            self.tier = tier
            self._apply()

    @on(FilterBar.Changed)
    def _filters_changed(self, event: FilterBar.Changed) -> None:
        self.filters = event.filters
        self._apply()

    @on(FilterBar.Invalid)
    def _filters_invalid(self, event: FilterBar.Invalid) -> None:
        # The table keeps the last filters that could be read; the message says why the new ones are not used.
        self.query_one(StatusBar).show_error(
            f"{event.error} · the table still shows the previous filters" if event.error else None
        )

    @on(Input.Submitted, "#search")
    def _search_submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if not text:
            self._clear_search()
            return
        self.table.focus()
        self._run_search(text)

    @on(MemoryTable.Counted)
    def _counted(self) -> None:
        self._show_status()
        self._sync_bindings()

    @on(MemoryTable.CursorMoved)
    def _cursor_moved(self) -> None:
        self._sync_bindings()
        if not self._told_first_rows and (self.table.count == 0 or self.table.visible_loaded()):
            self._told_first_rows = True
            self.call_after_refresh(self._fill_filters)
            host = self.host
            if host is not None:
                host.first_rows_shown()

    async def _fill_filters(self) -> None:
        mounting = self.query_one(FilterBar).fill()
        if mounting is not None:
            await mounting

    def _sync_bindings(self) -> None:
        # Re-evaluating bindings recomposes the footer: only when the actions become (un)available.
        has_targets = self.has_targets()
        if has_targets != self._had_targets:
            self._had_targets = has_targets
            self.refresh_bindings()

    @on(MemoryTable.SelectionChanged)
    def _selection_changed(self, event: MemoryTable.SelectionChanged) -> None:
        self.query_one(StatusBar).show_selection(event.count)
        self._sync_bindings()

    @on(MemoryTable.Opened)
    def _opened(self, event: MemoryTable.Opened) -> None:
        from .detail import DetailScreen

        self.app.push_screen(DetailScreen(event.memory.id))

    @on(MemoryTable.SortClicked)
    def _sort_clicked(self, event: MemoryTable.SortClicked) -> None:
        index = next(i for i, (key, _) in enumerate(SORTS) if key == event.order_by)
        if index == self.sort_index:
            self.descending = not self.descending
        else:
            self.sort_index, self.descending = index, True
        self._apply()

    def _maintenance_changed(self, text: str) -> None:
        host = self.host
        assert host is not None
        self.query_one(StatusBar).show_maintenance(text, host.maintenance_ok, host.maintenance_detail)

    def _model_state_changed(self, state: str) -> None:
        host = self.host
        self.query_one(StatusBar).show_model(
            state,
            host.model_error if host is not None else None,
            host.store.engine.embedding_model if host is not None and host.store is not None else None,
        )
        mode = self.query_one("#search-mode", Label)
        mode.update(
            {
                "loading": "semantic search: model loading — keyword only",
                "ready": "keyword + semantic",
                "unavailable": "semantic search unavailable — keyword only",
            }.get(state, "")
        )
        if state == "ready" and self.search_waiting_for_model and self.search_query:
            self._run_search(self.search_query)

    # --- search -------------------------------------------------------------------------------------

    def _run_search(self, text: str) -> None:
        host = self.host
        semantic = host is None or host.model_state != "loading"
        self.search_waiting_for_model = not semantic
        self.query_one(StatusBar).show_view(f"searching “{text}”…")
        self._search(text, semantic)

    @work(thread=True, exclusive=True, exit_on_error=False, group="search", description="Searching")
    def _search(self, text: str, semantic: bool) -> None:
        scope = self.scope.narrowed([self.filters.principal] if self.filters.principal else None)
        result = model.recall(
            self.store,
            text,
            semantic=semantic,
            scope=scope,
            tiers=[self.tier] if self.tier else None,
            k=SEARCH_K,
            include_deprecated=self.filters.state != "active",
            record_access=False,
            trace=False,
        )
        items = [scored.memory for scored in result.items]
        self.post_message(self._Searched(text, items, result.keyword_only, result.notice))

    @on(_Searched)
    def _searched(self, message: _Searched) -> None:
        self.search_query = message.query
        self.search_items = message.items
        self.search_keyword_only = message.keyword_only
        self.sort_index = -1  # results come ranked by score until a sort is asked for
        self.descending = True
        self.table.clear_selection()
        self._apply()

    def _clear_search(self) -> None:
        if self.search_query is None:
            return
        self.search_query, self.search_items = None, []
        self.search_waiting_for_model = False
        self.query_one("#search", Input).value = ""
        self.sort_index, self.descending = 0, True
        self._apply()

    # --- choices for the filter bar -----------------------------------------------------------------

    @work(thread=True, exit_on_error=False, group="choices", description="Listing principals and agents")
    def _load_choices(self) -> None:
        scope = self.scope
        principals = list(scope.principals) if scope.principals is not None else self.store.principals()
        self.post_message(self._Choices(sorted(principals), self.store.agents(scope)))

    @on(_Choices)
    def _choices(self, message: _Choices) -> None:
        bar = self.query_one(FilterBar)
        bar.set_choices("filter-principal", message.principals)
        bar.set_choices("filter-agent", message.agents)

    # --- actions ------------------------------------------------------------------------------------

    def action_targets(self) -> list[Any]:
        if not self.is_mounted:
            return []
        table = self.table
        if table.selected:
            return list(table.selected.values())
        memory = table.cursor_memory
        return [memory] if memory is not None else []

    def has_targets(self) -> bool:
        # Rows on screen whose page is still loading count: the footer must not flicker while paging. So does
        # a table still counting (it mostly has rows): the footer is not rebuilt when the first count arrives.
        if not self.is_mounted:
            return False
        table = self.table
        return bool(table.selected or table.count or table.count is None)

    def after_change(self, ids: list[str], removed: bool) -> None:
        table = self.table
        for memory_id in ids:
            if removed:
                table.selected.pop(memory_id, None)
        if ids and not removed:
            stale = [i for i in ids if i in table.selected]
            if stale:
                self._refresh_selected(stale)
        self.query_one(StatusBar).show_selection(len(table.selected))
        if self.search_query is not None:
            self._run_search(self.search_query)
        else:
            table.reload()

    @work(thread=True, exit_on_error=False, group="selection", description="Refreshing the selection")
    def _refresh_selected(self, ids: list[str]) -> None:
        self.post_message(self._Fresh({i: self.store.get(i, self.scope) for i in ids}))

    @on(_Fresh)
    def _fresh(self, message: _Fresh) -> None:
        selected = self.table.selected
        selected.update({k: v for k, v in message.memories.items() if k in selected})
        self.refresh_bindings()

    def home_focus(self) -> MemoryTable:
        return self.table

    def action_search(self) -> None:
        self.query_one("#search", Input).focus()

    async def action_filters(self) -> None:
        await self._fill_filters()
        self.query_one("#filter-principal").focus()

    def action_tier(self, delta: int) -> None:
        tabs = self.query_one(Tabs)
        if delta > 0:
            tabs.action_next_tab()
        else:
            tabs.action_previous_tab()

    def show_tier(self, tier: str | None) -> None:
        self.query_one(Tabs).active = f"tier-{tier or 'all'}"

    def action_sort(self) -> None:
        if self.search_query is not None:  # search results cycle through "by score" too (index -1)
            self.sort_index = (self.sort_index + 2) % (len(SORTS) + 1) - 1
        else:
            self.sort_index = (self.sort_index + 1) % len(SORTS)
        self.descending = True
        self._apply()

    def action_reverse(self) -> None:
        if self.sort_index < 0:
            self.sort_index = 0
        self.descending = not self.descending
        self._apply()

    def action_reload(self) -> None:
        self.store.engine.refresh()
        self._browsers.clear()
        self._apply(keep_cursor=True)
        self._load_choices()

    def action_clear(self) -> None:
        focused = self.focused
        if focused is not None and focused is not self.table:
            self.table.focus()
        elif self.table.selected:
            self.table.clear_selection()
            self.query_one(StatusBar).show_selection(0)
        elif self.search_query is not None:
            self._clear_search()
        self.refresh_bindings()

    def palette_commands(self) -> Any:
        yield SystemCommand("Search", "Search memories by keyword and meaning", self.action_search)
        yield SystemCommand("Filter", "Filter by principal, agent, state, tag and date", self.action_filters)
        for key, label in TIERS:
            yield SystemCommand(
                f"Show {label.lower()}", f"Browse {label.lower()}", lambda key=key: self.show_tier(key)
            )
        for index, (_key, label) in enumerate(SORTS):
            yield SystemCommand(
                f"Sort by {label}",
                f"Order the table by {label}, newest or largest first",
                lambda index=index: self._sort_by(index),
            )
        yield SystemCommand("Reverse sort order", "Flip the current ordering", self.action_reverse)
        yield SystemCommand(
            "Reload", "Read the store again (other processes may have written)", self.action_reload
        )
        yield SystemCommand("Clear selection", "Unselect every row", self.table.clear_selection)
        yield SystemCommand(
            "Clear filters", "Show every memory in the scope", self.query_one(FilterBar).clear
        )
        yield from super().palette_commands()

    def _sort_by(self, index: int) -> None:
        self.sort_index, self.descending = index, True
        self._apply()


def _sort_key(memory: Any, key: str) -> Any:
    value = getattr(memory, key)  # a column of SORTS
    if value is None:
        return (0, 0)
    return (1, value.timestamp() if isinstance(value, datetime) else value)
