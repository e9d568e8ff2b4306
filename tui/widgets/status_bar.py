"""One line under the table: what is shown, what is selected, and whether semantic search is ready."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.widgets import Label

MODEL_TEXT = {
    "loading": "semantic search: model loading",
    "ready": "semantic search: ready",
    "unavailable": "semantic search unavailable: keyword only",
}


class StatusBar(Horizontal):
    """Three parts: a summary of the view, the selection, and the embedding model's state."""

    def compose(self) -> ComposeResult:
        yield Label("", id="status-view")
        yield Label("", id="status-selection")
        yield Label("", id="status-model")

    def show_view(self, text: str) -> None:
        self.query_one("#status-view", Label).update(Content(text))

    def show_selection(self, count: int) -> None:
        label = self.query_one("#status-selection", Label)
        label.update(Content(f"{count:,} selected (esc clears)" if count else ""))
        label.set_class(bool(count), "-active")

    def show_model(self, state: str, detail: str | None = None) -> None:
        label = self.query_one("#status-model", Label)
        label.update(Content(MODEL_TEXT.get(state, state)))
        label.tooltip = detail
        for name in MODEL_TEXT:
            label.set_class(name == state, f"-{name}")
