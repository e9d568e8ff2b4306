"""One line under the table: what is shown, what is selected, and whether semantic search is ready."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.widgets import Label

from ..format import age

if TYPE_CHECKING:
    from memdeck.core.maintenance.scheduler import TaskStatus

MODEL_TEXT = {
    "loading": "semantic search: model loading",
    "ready": "semantic search: ready",
    "unavailable": "semantic search unavailable: keyword only",
}


class StatusBar(Horizontal):
    """A summary of the view (or what is wrong with the filters), the selection, background maintenance and
    the model's state."""

    def compose(self) -> ComposeResult:
        yield Label("", id="status-error")
        yield Label("", id="status-view")
        yield Label("", id="status-selection")
        yield Label("", id="status-maintenance")
        yield Label("", id="status-model")

    def show_maintenance(self, text: str, ok: bool, detail: str | None) -> None:
        label = self.query_one("#status-maintenance", Label)
        label.display = bool(text)  # hidden while no scheduler runs (tests, screenshots)
        label.update(Content(text))
        label.tooltip = None if detail is None else Content(detail)  # task summaries quote errors: not markup
        label.set_class(not ok, "-failed")

    def show_view(self, text: str) -> None:
        self.query_one("#status-view", Label).update(Content(text))

    def show_error(self, text: str | None) -> None:
        """A problem the person must fix (a date filter that cannot be read), shown until it is fixed."""
        label = self.query_one("#status-error", Label)
        label.update(Content(f"⚠ {text}" if text else ""))
        label.display = bool(text)

    def show_selection(self, count: int) -> None:
        label = self.query_one("#status-selection", Label)
        label.update(Content(f"{count:,} selected (esc clears)" if count else ""))
        label.set_class(bool(count), "-active")

    def show_model(self, state: str, detail: str | None = None, model: str | None = None) -> None:
        """The model's state, and the model the store's vectors were made with (`memdeck model use`)."""
        label = self.query_one("#status-model", Label)
        text = MODEL_TEXT.get(state, state)
        label.update(Content(f"{text} · {model}" if model else text))
        label.tooltip = None if detail is None else Content(detail)
        for name in MODEL_TEXT:
            label.set_class(name == state, f"-{name}")


def maintenance_line(tasks: Sequence[TaskStatus], at: datetime) -> tuple[str, bool, str]:
    """(the status bar's text, whether every task is well, one line per task for the tooltip).

    A failing task is named first (it is retried, never silent); otherwise the task that ran last."""

    def ago(when: datetime | None) -> str:
        text = age(when, at)
        return "just now" if text == "now" else f"{text} ago"

    ran = [t for t in tasks if t.last_run is not None]
    detail = "\n".join(
        f"{t.name}: {'never run' if t.last_run is None else ago(t.last_run)} - {t.summary}" for t in tasks
    )
    failed = [t for t in ran if t.ok is False]
    if failed:
        return f"maintenance: {failed[0].name} failed, retrying", False, detail
    if not ran:
        return "maintenance: starting", True, detail
    last = max(ran, key=lambda t: t.last_run or at)
    return f"maintenance: {last.name} {ago(last.last_run)}", True, detail
