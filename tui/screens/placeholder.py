"""Stand-in screens: the one shown while the store opens, and one for a mode whose module is missing."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Center, Middle
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

from .base import MemdeckScreen


class OpeningScreen(Screen[None]):
    """What the first frame shows: the app is up and the store is being opened in the background."""

    def __init__(self, text: str = "Opening the store…") -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        yield Header(icon="≡")
        with Middle(), Center():
            yield Static(Text(self.text), id="opening-text", classes="placeholder-text")
        yield Footer()

    def show(self, text: str) -> None:
        self.query_one("#opening-text", Static).update(Text(text))


class PlaceholderScreen(MemdeckScreen):
    """A mode whose screen is not part of this build (or failed to import)."""

    def __init__(self, title: str, reason: str) -> None:
        super().__init__()
        self.title_text, self.reason = title, reason

    def compose(self) -> ComposeResult:
        yield Header(icon="≡")
        with Middle(), Center():
            yield Static(
                Text.assemble(
                    (f"{self.title_text}\n\n", "bold"),
                    (self.reason, ""),
                    ("\n\nPress 1 to go back to browsing.", "dim"),
                ),
                classes="placeholder-text",
            )
        yield Footer()
