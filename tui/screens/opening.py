"""The first frame: the app is up and the store is being opened in the background."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Center, Middle
from textual.screen import Screen
from textual.widgets import Header, Static

from ..widgets.key_footer import KeyFooter


class OpeningScreen(Screen[None]):
    """Shown until the store has opened (then the app switches to browsing)."""

    def compose(self) -> ComposeResult:
        yield Header(icon="≡")
        with Middle(), Center():
            yield Static(Text("Opening the store…"), id="opening-text")
        yield KeyFooter()
