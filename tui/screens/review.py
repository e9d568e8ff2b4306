"""The review queue: contradictions side by side, near-duplicates, memories due for TTL eviction, stale
memories and memories from low-trust agents (built by :func:`memdeck.core.consolidate.review.build_queue`).

Each row says what the item is without moving onto it: a pair shows how its two facts clash and the
values that differ, then both texts shortened; the status line counts every kind in all (the same
contradictions ``memdeck contradictions`` and the Analytics screen count).

One key per decision: keep the left or the right memory (the other is deprecated with ``superseded_by``),
merge a pair into its older memory, or dismiss the item (remembered, so it does not come back). ``u``
undoes the last decision on this screen; each is reversible (undeprecate, or forget the dismissal).
Reading the queue runs in a thread worker; decisions are single small writes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.coordinate import Coordinate
from textual.message import Message
from textual.widgets import DataTable, Header, Static
from textual.widgets.data_table import CellDoesNotExist

from memdeck.core.consolidate.review import (
    MemoryCard,
    ReviewDecision,
    ReviewItem,
    ReviewQueue,
    build_queue,
    dismiss,
    keep,
    merge,
    undo,
)
from memdeck.core.errors import MemdeckError

from ..widgets.key_footer import KeyFooter
from .base import MemdeckScreen

if TYPE_CHECKING:
    from memdeck.core.filters import Scope
    from memdeck.core.store import Store

KIND_LABELS = {
    "contradiction": "contradiction",
    "near_duplicate": "near-duplicate",
    "ttl_due": "TTL due",
    "stale": "stale",
    "low_trust": "low trust",
    "failing_procedure": "failing routine",
    "routine": "routine seen",
}
WHY_WIDTH = 36
TEXT_WIDTH = 52
# How a contradiction clashes, in a word or two for the list (the full reason is under the left side).
CONFLICT_LABELS = {
    "different values of one attribute": "values differ",
    "different counts": "counts differ",
    "opposites": "opposites",
    "negated on one side": "one side negated",
}


class ReviewScreen(MemdeckScreen):
    """What needs a person's decision, one key per decision."""

    TITLE = "Review queue"
    COMMAND_PREFIX = "Review"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "left_square_bracket",
            "keep('left')",
            "Keep left",
            id="review.keep_left",
            tooltip="Keep the left memory; the right one is deprecated, superseded by the left",
        ),
        Binding(
            "right_square_bracket",
            "keep('right')",
            "Keep right",
            id="review.keep_right",
            tooltip="Keep the right memory; the left one is deprecated, superseded by the right",
        ),
        Binding(
            "m",
            "merge",
            "Merge",
            id="review.merge",
            tooltip="Merge the pair into its older memory (the newer is deprecated, superseded by it)",
        ),
        Binding(
            "x",
            "dismiss_item",
            "Dismiss",
            id="review.dismiss",
            tooltip="Nothing to do: leave both as they are and do not show this item again",
        ),
        Binding("u", "undo", "Undo", id="review.undo", tooltip="Undo the last decision made here"),
        Binding("ctrl+r", "refresh", "Refresh", id="review.refresh", tooltip="Build the queue again"),
    ]

    @dataclass
    class Loaded(Message):
        queue: ReviewQueue

    def __init__(self, store: Store | None = None, scope: Scope | None = None, **kwargs: Any) -> None:
        super().__init__(store, scope, **kwargs)
        self.items: list[ReviewItem] = []
        self.totals: dict[str, int] = {}
        self.flagged_only: list[str] = []
        self.done: list[ReviewDecision] = []
        self.note = ""  # what the last decision did, shown beside the counts

    def compose(self) -> ComposeResult:
        yield Header(icon="≡")
        with Vertical(id="review-body"):
            yield DataTable(id="review-list", cursor_type="row", zebra_stripes=True)
            with Horizontal(id="review-pair"):
                yield Static("", id="review-left", classes="review-side")
                yield Static("", id="review-right", classes="review-side")
            yield Static("", id="review-status")
        yield KeyFooter()

    def on_mount(self) -> None:
        table = self.query_one("#review-list", DataTable)
        table.add_columns("kind", "principal", "what", "left", "right")
        self.action_refresh()

    def data_changed(self) -> None:
        self.action_refresh()

    def action_refresh(self) -> None:
        self.note = ""
        self.query_one("#review-status", Static).update("Building the review queue...")
        self._load()

    @work(
        thread=True,
        exclusive=True,
        exit_on_error=False,
        group="review-load",
        description="Building the review queue",
    )
    def _load(self) -> None:
        self.post_message(self.Loaded(build_queue(self.store.engine, self.scope)))

    def on_review_screen_loaded(self, message: Loaded) -> None:
        self.items = message.queue.items
        self.totals = message.queue.totals
        self.flagged_only = message.queue.flagged_only
        table = self.query_one("#review-list", DataTable)
        row = table.cursor_row
        table.clear()
        for item in self.items:
            table.add_row(*_row(item), key=item.key)
        if self.items:
            table.move_cursor(row=min(row, len(self.items) - 1))
        self._update_status()
        self._show(self.current())

    def counts_line(self) -> str:
        """Every kind in the queue with how many there are ("12 contradictions, 744 stale (200 listed)")."""
        line = ReviewQueue(self.items, self.totals, self.flagged_only).counts_line()
        return f"To review: {line}" if line else "Nothing to review."

    def _update_status(self) -> None:
        line = self.counts_line()
        self.query_one("#review-status", Static).update(Text(f"{self.note} · {line}" if self.note else line))

    def current(self) -> ReviewItem | None:
        table = self.query_one("#review-list", DataTable)
        if not self.items or table.row_count == 0:
            return None
        try:
            key = table.coordinate_to_cell_key(Coordinate(table.cursor_row, 0)).row_key.value
        except CellDoesNotExist:
            return None
        return next((i for i in self.items if i.key == key), None)

    @on(DataTable.RowHighlighted, "#review-list")
    def _highlighted(self, _event: DataTable.RowHighlighted) -> None:
        self._show(self.current())

    def _show(self, item: ReviewItem | None) -> None:
        left = self.query_one("#review-left", Static)
        right = self.query_one("#review-right", Static)
        if item is None:
            left.update("")
            right.update("")
            return
        left.update(_side("Left", item.left, item.reason))
        right.update(_side("Right", item.right, item.reason) if item.right else "")

    def _decide(self, action: str, side: str | None = None) -> None:
        item = self.current()
        status = self.query_one("#review-status", Static)
        if item is None:
            status.update("Nothing selected.")
            return
        try:
            if action == "keep":
                result = keep(self.store.engine, item, side or "left", self.scope)
            elif action == "merge":
                result = merge(self.store.engine, item, self.scope)
            else:
                result = dismiss(self.store.engine, item)
        except MemdeckError as exc:
            status.update(Text(str(exc)))
            return
        self.done.append(result)
        self.note_change()
        self.note = _said(result) + " (u undoes it)"
        self._update_status()
        self._load()

    def action_keep(self, side: str) -> None:
        self._decide("keep", side)

    def action_merge(self) -> None:
        self._decide("merge")

    def action_dismiss_item(self) -> None:
        self._decide("dismiss")

    def action_undo(self) -> None:
        status = self.query_one("#review-status", Static)
        if not self.done:
            status.update("Nothing to undo.")
            return
        last = self.done.pop()
        undo(self.store.engine, last, self.scope)
        self.note_change()
        self.note = "Undone: " + _said(last)
        self._update_status()
        self._load()


def _short(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _row(item: ReviewItem) -> tuple[Text, Text, Text, Text, Text]:
    """A row that says what the item is: for a pair, how it clashes and both texts; stored text is never
    read as markup."""
    right = item.right.get("text", "") if item.right else ""
    return (
        Text(KIND_LABELS.get(item.kind, item.kind)),
        Text(item.principal),
        Text(_short(_what(item), WHY_WIDTH)),
        Text(_short(item.left.get("text", ""), TEXT_WIDTH)),
        Text(_short(right, TEXT_WIDTH)),
    )


def _what(item: ReviewItem) -> str:
    """The list's short account of an item: for a contradiction the values that differ and how."""
    if item.kind == "contradiction":
        conflict = str(item.extra.get("conflict") or "")
        label = CONFLICT_LABELS.get(conflict, conflict or "contradiction")
        values = [str(v) for v in item.extra.get("values") or [] if v]
        return f"{' vs '.join(values)} ({label})" if len(values) == 2 else label
    if item.kind == "near_duplicate":
        blocker = item.extra.get("blocker")
        return f"cosine {float(item.extra.get('similarity') or 0):.2f}" + (
            f", {blocker}" if blocker else ", not merged yet"
        )
    return item.reason


def _side(title: str, card: MemoryCard, reason: str) -> Text:
    when = str(card.get("created_at") or "")[:10]
    text = Text()
    text.append(title, style="bold")
    text.append(f"  {card['id']}\n")
    text.append(str(card.get("text", "")))
    text.append(f"\n{card.get('agent') or ''} · {when}", style="dim")
    if title == "Left":
        text.append(f"\n{reason}", style="italic")
    return text


def _said(result: ReviewDecision) -> str:
    if result["action"] == "dismiss":
        return "Dismissed."
    verb = "Kept" if result["action"] == "keep" else "Merged into"
    return f"{verb} {result['kept']}; {result['deprecated']} deprecated."
