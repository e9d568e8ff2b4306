"""The inspector's side panel below the weights: the profile (name, save, reset, load) and agent trust."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, DataTable, Input, Select, Static

from .score_bars import bar


class ProfileBar(Vertical):
    """A profile name with Save and Reset (their ``Button.Pressed`` bubble to the screen), and a list to load."""

    def __init__(self, name: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._name = name

    def compose(self) -> ComposeResult:
        yield Static("Profile", classes="inspector-heading")
        with Horizontal(id="inspector-profile-row"):
            yield Input(self._name, placeholder="profile name", id="inspector-profile-name", compact=True)
            yield Button("Save", id="inspector-profile-save", compact=True)
            yield Button("Reset", id="inspector-profile-reset", compact=True)
        yield Select[str]([], prompt="load a profile", id="inspector-profile-select", compact=True)

    @property
    def name_field(self) -> Input:
        return self.query_one("#inspector-profile-name", Input)

    def set_names(self, names: Sequence[str]) -> None:
        """The saved profiles to offer (without announcing a choice)."""
        select: Select[str] = self.query_one("#inspector-profile-select", Select)
        with select.prevent(Select.Changed):
            select.set_options([(name, name) for name in names])

    def open_list(self) -> None:
        select: Select[str] = self.query_one("#inspector-profile-select", Select)
        select.focus()
        select.action_show_overlay()


class TrustTable(DataTable[Any]):
    """Trust per agent, from feedback (rows of :meth:`memdeck.core.analytics.Analytics.agent_trust`)."""

    def on_mount(self) -> None:
        self.cursor_type = "row"
        self.show_cursor = False
        self.add_columns("agent", "memories", "trust", "feedback")

    def show(self, rows: Sequence[dict[str, Any]]) -> None:
        self.clear()
        for row in sorted(rows, key=lambda r: (-r["trust"], r["agent"])):
            self.add_row(
                Text(row["agent"]),
                str(row["memories"]),  # an agent's name as written, never markup
                Text.assemble(bar(row["trust"], 10, "#5fd7d7"), f" {row['trust']:.2f}"),
                f"{row['useful']}/{row['verdicts']} useful" if row["rated"] else Text("none", style="dim"),
                key=row["agent"],
            )
