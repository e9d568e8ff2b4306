"""A table over any number of memories: only the pages on screen are ever fetched.

The widget draws with the Line API, so a store of a million rows costs it one scrollbar and a handful of
cached pages. Pages come from a :class:`RowSource` in a thread worker; until one arrives its rows show
as placeholders, so a keypress repaints at once and the data follows.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, ClassVar, Protocol

from rich.segment import Segment
from rich.style import Style
from textual import events, on, work
from textual.binding import Binding, BindingType
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.worker import Worker, WorkerState, get_current_worker

from ..failures import failure_text, report_failure
from ..format import age, fit, left, one_line

PAGE = 64
MAX_PAGES = 32  # ~2,000 rows kept; a page is re-read from the store when it scrolls back in


class RowSource(Protocol):
    """Where rows come from. ``count`` and ``page`` may block (they run in a worker unless ``instant``)."""

    instant: bool

    def count(self) -> int: ...

    def page(self, offset: int, limit: int) -> list[Any]: ...


class BrowseSource:
    """Pages of a browse query, from ``memdeck.core.storage.browse.Browser`` (ordering cached per table version)."""

    instant = False

    def __init__(self, browser: Any, query: Any) -> None:
        self.browser = browser
        self.query = query

    def count(self) -> int:
        return int(self.browser.count(self.query))

    def page(self, offset: int, limit: int) -> list[Any]:
        return list(self.browser.page(self.query, offset, limit))


class ListSource:
    """A list already in memory (search results)."""

    instant = True

    def __init__(self, items: list[Any]) -> None:
        self.items = items

    def count(self) -> int:
        return len(self.items)

    def page(self, offset: int, limit: int) -> list[Any]:
        return self.items[offset : offset + limit]


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    width: int  # 0: takes what the other columns leave
    sort: str | None = None  # the browse ordering a click on the header asks for
    right: bool = False


def _state(m: Any) -> str:
    return "deprec." if m.state == "deprecated" else m.state


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


# A memory type in the five characters of its column.
TYPE_ABBREV = {
    "preference": "pref",
    "decision": "decis",
    "fact": "fact",
    "error": "error",
    "observation": "obs",
    "event": "event",
    "instruction": "instr",
}

CELLS: dict[str, Callable[[Any, datetime], str]] = {
    "tier": lambda m, now: m.tier[:3],
    "type": lambda m, now: TYPE_ABBREV.get(m.type or "", "—"),
    "text": lambda m, now: one_line(m.text),
    "name": lambda m, now: one_line(m.name),
    "ver": lambda m, now: f"v{m.proc_version or 1}",
    "session": lambda m, now: one_line(m.session) or "—",
    "principal": lambda m, now: one_line(m.principal),
    "agent": lambda m, now: one_line(m.agent),
    "importance": lambda m, now: _num(m.importance),
    "pinned": lambda m, now: "●" if m.pinned else "",
    "state": lambda m, now: _state(m),
    "access": lambda m, now: f"{m.access_count or 0:,}",
    "evidence": lambda m, now: f"{m.evidence_count or 1:,}",
    "confidence": lambda m, now: _num(m.confidence),
    "age": lambda m, now: "⚠ ?" if "created_at" in m.unreadable_times else age(m.created_at, now),
    "expires": lambda m, now: (
        "" if m.expires_at is None else left(m.expires_at, now).replace("expired", "exp.")
    ),
}


def _cell(key: str, memory: Any, now: datetime) -> str:
    text = CELLS[key](memory, now)
    if key == "text" and memory.unreadable_times:
        # Written by an older memdeck with a time out of range: shown, marked, and `memdeck doctor` names it.
        return f"⚠ unreadable {', '.join(memory.unreadable_times)}: {text}"
    return text


_COMMON_TAIL = [
    Column("type", "type", 5),
    Column("principal", "principal", 12),
    Column("agent", "agent", 11),
    Column("importance", "imp", 4, sort="importance", right=True),
    Column("pinned", "pin", 3),
    Column("state", "state", 7),
]
COLUMNS: dict[str | None, list[Column]] = {
    None: [
        Column("tier", "tier", 4),
        Column("text", "text", 0),
        *_COMMON_TAIL,
        Column("access", "recalls", 7, sort="access_count", right=True),
        Column("age", "age", 5, sort="created_at", right=True),
        Column("expires", "ends", 5, right=True),
    ],
    "episodic": [
        Column("text", "summary", 0),
        Column("session", "session", 14),
        *_COMMON_TAIL,
        Column("access", "recalls", 7, sort="access_count", right=True),
        Column("age", "age", 5, sort="created_at", right=True),
        Column("expires", "ends", 5, right=True),
    ],
    "semantic": [
        Column("text", "fact", 0),
        *_COMMON_TAIL,
        Column("evidence", "evid.", 5, right=True),
        Column("confidence", "conf", 4, right=True),
        Column("access", "recalls", 7, sort="access_count", right=True),
        Column("age", "age", 5, sort="created_at", right=True),
        Column("expires", "ends", 5, right=True),
    ],
    "procedural": [
        Column("name", "name", 22),
        Column("ver", "ver", 4),
        Column("text", "steps", 0),
        *_COMMON_TAIL,
        Column("access", "recalls", 7, sort="access_count", right=True),
        Column("age", "age", 5, sort="created_at", right=True),
        Column("expires", "ends", 5, right=True),
    ],
}


class MemoryTable(ScrollView, can_focus=True):
    """Memories in rows, paged from a :class:`RowSource`; space selects, enter opens."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "cursor(-1)", "Up", show=False, id="table.up"),
        Binding("down", "cursor(1)", "Down", show=False, id="table.down"),
        Binding("pageup", "page(-1)", "Page up", show=False, id="table.page_up"),
        Binding("pagedown", "page(1)", "Page down", show=False, id="table.page_down"),
        Binding("home", "jump(0)", "First", show=False, id="table.first"),
        Binding("end", "jump(-1)", "Last", show=False, id="table.last"),
        Binding(
            "space",
            "toggle_select",
            "Select",
            id="table.select",
            tooltip="Add or remove the row from the selection",
        ),
        Binding("enter", "open", "Open", id="table.open", tooltip="Open the memory's detail"),
    ]

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "memory-table--header",
        "memory-table--cursor",
        "memory-table--cursor-blurred",
        "memory-table--selected",
        "memory-table--pinned",
        "memory-table--deprecated",
        "memory-table--bad-time",
        "memory-table--placeholder",
        "memory-table--sorted",
    }

    @dataclass
    class CursorMoved(Message):
        """The row under the cursor changed (or its data arrived)."""

        table: MemoryTable
        memory: Any | None
        row: int

        def can_replace(self, message: Message) -> bool:
            return isinstance(message, MemoryTable.CursorMoved)

        @property
        def control(self) -> MemoryTable:
            return self.table

    @dataclass
    class Opened(Message):
        """Enter or a double click on a row."""

        table: MemoryTable
        memory: Any

        @property
        def control(self) -> MemoryTable:
            return self.table

    @dataclass
    class SelectionChanged(Message):
        """Rows were added to or removed from the multi-selection."""

        table: MemoryTable
        count: int

        @property
        def control(self) -> MemoryTable:
            return self.table

    @dataclass
    class Counted(Message):
        """The source's row count is known (after a new source or a reload)."""

        table: MemoryTable
        count: int

        @property
        def control(self) -> MemoryTable:
            return self.table

    @dataclass
    class SortClicked(Message):
        """A sortable column header was clicked."""

        table: MemoryTable
        order_by: str

        @property
        def control(self) -> MemoryTable:
            return self.table

    @dataclass
    class _Counted(Message):
        """A count from the source arrived (stale if its generation is old)."""

        generation: int
        count: int

    @dataclass
    class _PageLoaded(Message):
        """A page of rows from the source arrived (stale if its generation is old)."""

        generation: int
        page: int
        rows: list[Any]

    def __init__(self, *, clock: Callable[[], datetime] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.clock = clock or (lambda: datetime.now(UTC))
        self.columns: list[Column] = COLUMNS[None]
        self.sort: tuple[str, bool] | None = ("created_at", True)
        self.cursor = 0
        self.selected: dict[str, Any] = {}
        self.empty_text = "No memories match."
        self._source: RowSource | None = None
        self._generation = 0
        self._count: int | None = None
        self._pages: OrderedDict[int, list[Any]] = OrderedDict()
        self._stale: dict[int, list[Any]] = {}
        self._pending: set[int] = set()
        self._error: str | None = None
        self._frame: _Frame | None = None
        self._counted = False

    # --- public API ---------------------------------------------------------------------------------

    @property
    def count(self) -> int | None:
        """Rows in the source, or None while counting."""
        return self._count

    @property
    def source(self) -> RowSource | None:
        return self._source

    @property
    def cursor_memory(self) -> Any | None:
        return self.row(self.cursor)

    def row(self, index: int) -> Any | None:
        """The memory at ``index`` if its page is loaded."""
        rows = self._pages.get(index // PAGE) or self._stale.get(index // PAGE)
        if rows is None or index % PAGE >= len(rows):
            return None
        return rows[index % PAGE]

    def visible_loaded(self) -> bool:
        """Every row on screen has its data (what a benchmark waits for)."""
        if self._count is None:
            return False
        first, last = self._visible_rows()
        return (
            all(p in self._pages for p in range(first // PAGE, last // PAGE + 1)) if last >= first else True
        )

    def set_source(self, source: RowSource, columns: list[Column], *, keep_cursor: bool = False) -> None:
        """Show another source (a new filter, tier or search); the cursor goes to the top."""
        self._source = source
        self.columns = columns
        self._stale = dict(self._pages) if keep_cursor else {}
        if not keep_cursor:
            self.cursor = 0
        self._restart()
        if not keep_cursor:
            self.scroll_to(y=0, animate=False, immediate=True)

    def reload(self) -> None:
        """Read the source again (after a change), keeping the cursor and showing old rows meanwhile."""
        if self._source is not None:
            self._stale = dict(self._pages)
            self._restart()

    def clear_selection(self) -> None:
        if self.selected:
            self.selected.clear()
            self.refresh()
            self.post_message(self.SelectionChanged(self, 0))

    # --- loading ------------------------------------------------------------------------------------

    def _restart(self) -> None:
        self._generation += 1
        self._pages.clear()
        self._pending.clear()
        self._error = None
        # No page is read before the count: the count computes the ordering that every page needs,
        # and two workers computing it at once would scan a million rows twice.
        self._counted = False
        source = self._source
        if source is None:
            return
        if source.instant:
            self._apply_count(source.count())
        else:
            self._count = None if not self._stale else self._count
            self._load_count(self._generation, source)
        self.refresh()

    @work(
        thread=True, exclusive=True, exit_on_error=False, group="table-count", description="Counting memories"
    )
    def _load_count(self, generation: int, source: RowSource) -> None:
        count = source.count()
        if not get_current_worker().is_cancelled:
            self.post_message(self._Counted(generation, count))

    @work(thread=True, exit_on_error=False, group="table-pages", description="Loading rows")
    def _load_pages(self, generation: int, source: RowSource, pages: list[int]) -> None:
        for page in pages:
            if generation != self._generation:
                return
            rows = source.page(page * PAGE, PAGE)
            self.post_message(self._PageLoaded(generation, page, rows))

    @on(_Counted)
    def _on_counted(self, message: _Counted) -> None:
        if message.generation == self._generation:
            self._apply_count(message.count)

    def _apply_count(self, count: int) -> None:
        self._count = count
        self._counted = True
        self.cursor = max(0, min(self.cursor, count - 1))
        self.virtual_size = Size(0, count + 1)
        self._request_visible()
        self.refresh()
        self.post_message(self.Counted(self, count))
        self.post_message(self.CursorMoved(self, self.cursor_memory, self.cursor))

    @on(_PageLoaded)
    def _on_page_loaded(self, message: _PageLoaded) -> None:
        if message.generation != self._generation:
            return
        self._pending.discard(message.page)
        self._pages[message.page] = message.rows
        self._stale.pop(message.page, None)
        while len(self._pages) > MAX_PAGES:
            self._pages.popitem(last=False)
        self.refresh()
        if message.page == self.cursor // PAGE:
            self.post_message(self.CursorMoved(self, self.cursor_memory, self.cursor))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR:
            self._error = failure_text(event.worker.error)
            self._pending.clear()
            self.refresh()
            report_failure(self, event.worker)

    def _visible_rows(self) -> tuple[int, int]:
        top = int(self.scroll_offset.y)
        body = max(self.size.height - 1, 1)
        last = min(top + body, self._count or 0) - 1
        return top, last

    def _request_visible(self) -> None:
        if self._source is None or self._count is None or not self._counted:
            return
        first, last = self._visible_rows()
        if last < first:
            return
        wanted = range(first // PAGE, last // PAGE + 1)
        if self._source.instant:
            for page in wanted:
                if page not in self._pages:
                    self._pages[page] = self._source.page(page * PAGE, PAGE)
            return
        for page in wanted:
            if page in self._pages:
                self._pages.move_to_end(page)
        # The pages just above and below are read too (after the visible ones), so that paging
        # through the table mostly finds its rows already loaded.
        last_page = (self._count - 1) // PAGE
        around = [p for p in (wanted[-1] + 1, wanted[0] - 1) if 0 <= p <= last_page]
        missing = [p for p in [*wanted, *around] if p not in self._pages and p not in self._pending]
        if missing:
            self._pending.update(missing)
            self._load_pages(self._generation, self._source, missing)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self._request_visible()

    def on_resize(self, event: events.Resize) -> None:
        if self._count is not None:
            self.virtual_size = Size(0, self._count + 1)
        self._request_visible()

    # --- cursor and selection -----------------------------------------------------------------------

    def _move_to(self, row: int) -> None:
        if not self._count:
            return
        row = max(0, min(row, self._count - 1))
        if row == self.cursor:
            return
        old, self.cursor = self.cursor, row
        top = int(self.scroll_offset.y)
        body = max(self.size.height - 1, 1)
        if row < top:
            self.scroll_to(y=row, animate=False, immediate=True)
        elif row >= top + body:
            self.scroll_to(y=row - body + 1, animate=False, immediate=True)
        if int(self.scroll_offset.y) == top:  # no scroll: only the two rows' lines change
            self.refresh_line(old + 1)
            self.refresh_line(row + 1)
        else:
            self.refresh()
        self._request_visible()
        self.post_message(self.CursorMoved(self, self.cursor_memory, self.cursor))

    def action_cursor(self, delta: int) -> None:
        self._move_to(self.cursor + delta)

    def action_page(self, direction: int) -> None:
        body = max(self.size.height - 1, 1)
        if self._count:
            top = int(self.scroll_offset.y) + direction * body
            self.scroll_to(y=max(top, 0), animate=False, immediate=True)
        self._move_to(self.cursor + direction * body)

    def action_jump(self, row: int) -> None:
        if self._count:
            self._move_to(row if row >= 0 else self._count - 1)

    def action_toggle_select(self) -> None:
        memory = self.cursor_memory
        if memory is None:
            return
        if memory.id in self.selected:
            del self.selected[memory.id]
        else:
            self.selected[memory.id] = memory
        self.post_message(self.SelectionChanged(self, len(self.selected)))
        self._move_to(self.cursor + 1)
        self.refresh()

    def on_focus(self) -> None:
        self.refresh()  # the cursor row's colour depends on focus

    def on_blur(self) -> None:
        self.refresh()

    def action_open(self) -> None:
        memory = self.cursor_memory
        if memory is not None:
            self.post_message(self.Opened(self, memory))

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        if offset.y == 0:
            column = self._column_at(offset.x)
            if column is not None and column.sort:
                self.post_message(self.SortClicked(self, column.sort))
            return
        row = int(self.scroll_offset.y) + offset.y - 1
        if self._count and row < self._count:
            self._move_to(row)
            if event.chain >= 2:
                self.action_open()

    # --- drawing ------------------------------------------------------------------------------------

    def render_lines(self, crop: Region) -> list[Strip]:
        # Styles and widths are looked up once per frame, not once per line.
        width = self.scrollable_content_region.width
        comp = self.get_component_rich_style
        base = self.rich_style
        self._frame = _Frame(
            width=width,
            widths=self._widths(width),
            now=self.clock(),
            base=base,
            header=base + comp("memory-table--header"),
            sorted=base + comp("memory-table--header") + comp("memory-table--sorted"),
            cursor=comp("memory-table--cursor" if self.has_focus else "memory-table--cursor-blurred"),
            selected=comp("memory-table--selected"),
            deprecated=comp("memory-table--deprecated"),
            bad_time=comp("memory-table--bad-time"),
            placeholder=base + comp("memory-table--placeholder"),
            pin_color=Style(color=comp("memory-table--pinned").color),
        )
        return super().render_lines(crop)

    def _widths(self, width: int) -> list[int]:
        fixed = sum(c.width + 1 for c in self.columns if c.width) + 2  # +2: the selection mark
        flexible = [c for c in self.columns if not c.width]
        spare = max(width - fixed - len(flexible), 8)
        return [c.width or spare // max(len(flexible), 1) for c in self.columns]

    def _column_at(self, x: int) -> Column | None:
        pos = 2
        for column, width in zip(
            self.columns, self._widths(self.scrollable_content_region.width), strict=True
        ):
            if pos <= x < pos + width:
                return column
            pos += width + 1
        return None

    def render_line(self, y: int) -> Strip:
        f = self._frame
        if f is None:
            return Strip.blank(self.size.width)
        if y == 0:
            return self._header(f)
        row = int(self.scroll_offset.y) + y - 1
        if self._count is None:
            return self._message_line("loading…" if y == 1 else "", f)
        if self._count == 0:
            return self._message_line(self.empty_text if y == 1 else "", f)
        if row >= self._count:
            return Strip.blank(f.width, f.base)
        memory = self.row(row)
        if memory is None:
            text = "" if self._error is None else f"cannot load rows: {self._error}"
            style = f.placeholder + f.cursor if row == self.cursor else f.placeholder
            return Strip([Segment(fit(f"  ···  {text}", f.width), style)], f.width)
        return self._row_strip(memory, row, f)

    def _message_line(self, text: str, f: _Frame) -> Strip:
        return Strip([Segment(fit(f"  {text}", f.width), f.placeholder)], f.width)

    def _header(self, f: _Frame) -> Strip:
        segments = [Segment("  ", f.header)]
        for column, w in zip(self.columns, f.widths, strict=True):
            label = column.label
            is_sorted = self.sort is not None and column.sort == self.sort[0]
            if is_sorted:
                label += " ▼" if self.sort and self.sort[1] else " ▲"
            segments.append(Segment(fit(label, w, right=column.right), f.sorted if is_sorted else f.header))
            segments.append(Segment(" ", f.header))
        return Strip(segments).adjust_cell_length(f.width, f.header)

    def _row_strip(self, memory: Any, row: int, f: _Frame) -> Strip:
        style = f.base
        if memory.state == "deprecated":
            style += f.deprecated
        selected = memory.id in self.selected
        if selected:
            style += f.selected
        if memory.unreadable_times:
            style += f.bad_time
        if row == self.cursor:
            style += f.cursor
        # Only the colour for the pin: the component's background would hide the cursor row's.
        pin_style = style + f.pin_color
        segments = [Segment("▌ " if selected else "  ", style)]
        for column, w in zip(self.columns, f.widths, strict=True):
            text = fit(_cell(column.key, memory, f.now), w, right=column.right)
            segments.append(Segment(text + " ", pin_style if column.key == "pinned" else style))
        return Strip(segments).adjust_cell_length(f.width, style)


@dataclass
class _Frame:
    """What every line of one frame shares."""

    width: int
    widths: list[int]
    now: datetime
    base: Style
    header: Style
    sorted: Style
    cursor: Style
    selected: Style
    deprecated: Style
    bad_time: Style
    placeholder: Style
    pin_color: Style
