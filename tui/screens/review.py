"""The review queue: contradictions side by side, near-duplicates, memories due for TTL eviction, stale
memories and memories from low-trust agents (built by :func:`memdeck.core.consolidate.review.review_queue`).

One key per decision: keep the left or the right memory (the other is deprecated with ``superseded_by``),
merge a pair into its older memory, or dismiss the item (remembered, so it does not come back). ``u``
undoes the last decision on this screen; each is reversible (undeprecate, or forget the dismissal).
Reading the queue runs in a thread worker; decisions are single small writes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.coordinate import Coordinate
from textual.message import Message
from textual.widgets import DataTable, Footer, Header, Static
from textual.widgets.data_table import CellDoesNotExist

from memdeck.core.consolidate.review import ReviewItem, dismiss, keep, merge, review_queue, undo
from memdeck.core.errors import MemdeckError

from .base import MemdeckScreen

if TYPE_CHECKING:
    from memdeck.core.filters import Scope
    from memdeck.core.store import Store

KIND_LABELS = {
    "contradiction": "contradiction", "near_duplicate": "near-duplicate", "ttl_due": "TTL due",
    "stale": "stale", "low_trust": "low trust",
}


class ReviewScreen(MemdeckScreen):
    """What needs a person's decision, one key per decision."""

    TITLE = "Review queue"
    COMMAND_PREFIX = "Review"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left_square_bracket", "keep('left')", "Keep left", id="review.keep_left",
                tooltip="Keep the left memory; the right one is deprecated, superseded by the left"),
        Binding("right_square_bracket", "keep('right')", "Keep right", id="review.keep_right",
                tooltip="Keep the right memory; the left one is deprecated, superseded by the right"),
        Binding("m", "merge", "Merge", id="review.merge",
                tooltip="Merge the pair into its older memory (the newer is deprecated, superseded by it)"),
        Binding("x", "dismiss_item", "Dismiss", id="review.dismiss",
                tooltip="Nothing to do: leave both as they are and do not show this item again"),
        Binding("u", "undo", "Undo", id="review.undo", tooltip="Undo the last decision made here"),
        Binding("ctrl+r", "refresh", "Refresh", id="review.refresh", tooltip="Build the queue again"),
    ]

    @dataclass
    class Loaded(Message):
        items: list[ReviewItem]

    def __init__(self, store: Store | None = None, scope: Scope | None = None, **kwargs: Any) -> None:
        super().__init__(store, scope, **kwargs)
        self.items: list[ReviewItem] = []
        self.done: list[dict[str, Any]] = []

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="review-body"):
            yield DataTable(id="review-list", cursor_type="row", zebra_stripes=True)
            with Horizontal(id="review-pair"):
                yield Static("", id="review-left", classes="review-side")
                yield Static("", id="review-right", classes="review-side")
            yield Static("", id="review-status")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#review-list", DataTable)
        table.add_columns("kind", "principal", "why")
        self.action_refresh()

    def data_changed(self) -> None:
        self.action_refresh()

    def action_refresh(self) -> None:
        self.query_one("#review-status", Static).update("Building the review queue...")
        self._load()

    @work(thread=True, exclusive=True, exit_on_error=False, group="review-load", description="Building the review queue")
    def _load(self) -> None:
        self.post_message(self.Loaded(review_queue(self.store, self.scope)))

    def on_review_screen_loaded(self, message: Loaded) -> None:
        self.items = message.items
        table = self.query_one("#review-list", DataTable)
        table.clear()
        for item in self.items:
            table.add_row(KIND_LABELS.get(item.kind, item.kind), item.principal, item.reason, key=item.key)
        status = f"{len(self.items)} to review" if self.items else "Nothing to review."
        self.query_one("#review-status", Static).update(status)
        self._show(self.current())

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
        left.update(_side("Left", item.left))
        right.update(_side("Right", item.right) if item.right else "")

    def _decide(self, action: str, side: str | None = None) -> None:
        item = self.current()
        status = self.query_one("#review-status", Static)
        if item is None:
            status.update("Nothing selected.")
            return
        try:
            if action == "keep":
                result = keep(self.store, item, side or "left", self.scope)
            elif action == "merge":
                result = merge(self.store, item, self.scope)
            else:
                result = dismiss(self.store, item)
        except MemdeckError as exc:
            status.update(str(exc))
            return
        self.done.append(result)
        self.note_change()
        status.update(_said(result) + " (u undoes it)")
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
        undo(self.store, last, self.scope)
        self.note_change()
        status.update("Undone: " + _said(last))
        self._load()


def _side(title: str, card: dict[str, Any]) -> str:
    when = str(card.get("created_at") or "")[:10]
    return f"[b]{title}[/b]  {card['id']}\n{card.get('text', '')}\n[dim]{card.get('agent') or ''} · {when}[/dim]"


def _said(result: dict[str, Any]) -> str:
    if result["action"] == "dismiss":
        return "Dismissed."
    verb = "Kept" if result["action"] == "keep" else "Merged into"
    return f"{verb} {result['kept']}; {result['deprecated']} deprecated."
