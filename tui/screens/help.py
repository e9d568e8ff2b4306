"""The help screen: every key of the screen below it and of the app, with the binding ids to remap them."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Label, Static

from .base import MemdeckModal


def _own_bindings(cls: type) -> list[Binding]:
    """Bindings declared by memdeck's own classes (Textual's are listed by the palette's Keys command)."""
    out: list[Binding] = []
    for klass in reversed(cls.__mro__):
        if klass.__module__.startswith("memdeck.") and "BINDINGS" in klass.__dict__:
            out += [b for b in klass.__dict__["BINDINGS"] if isinstance(b, Binding)]
    return out


def binding_rows(
    app: App[Any], screen: Screen[Any], keymap: dict[str, str]
) -> list[tuple[str, str, str, str]]:
    """(keys, what it does, where, binding id) for the screen, its widgets and the app."""
    rows: list[tuple[str, str, str, str]] = []
    seen: set[str] = set()

    def add(where: str, bindings: list[Binding]) -> None:
        for b in bindings:
            if not b.id or b.id in seen:
                continue
            seen.add(b.id)
            keys = keymap.get(b.id, b.key)
            shown = ", ".join(
                app.get_key_display(b.with_key(k.strip(), key_display=None)) for k in keys.split(",")
            )
            rows.append((shown, b.description or b.action, where, b.id))

    add("this screen", _own_bindings(type(screen)))
    for widget in screen.query("*"):
        bindings = _own_bindings(type(widget))
        if bindings:
            add(f"{type(widget).__name__}", bindings)
    if not screen.is_modal:  # a dialog keeps the keys to itself: the app's own do nothing there
        add("everywhere", _own_bindings(type(app)))
    palette = app.COMMAND_PALETTE_BINDING
    rows.append(
        (
            app.get_key_display(Binding(palette, "")),
            "Command palette: every action by name",
            "everywhere",
            "command_palette",
        )
    )
    return rows


class HelpScreen(MemdeckModal):
    """Keys for the screen you came from; escape closes."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark,q", "close", "Close", id="help.close"),
    ]

    def __init__(self, title: str, rows: list[tuple[str, str, str, str]], config_path: str) -> None:
        super().__init__()
        self.title_text, self.rows, self.config_path = title, rows, config_path

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide", id="help-dialog"):
            yield Label(Text(f"Keys: {self.title_text}"), classes="dialog-title")
            yield DataTable(id="help-table", cursor_type="row", zebra_stripes=True)
            yield Static(
                Text.assemble(
                    ("Remap any key in ", "dim"),
                    (self.config_path, "bold"),
                    (" under ", "dim"),
                    ("[keys]", "bold"),
                    (", by binding id, e.g. ", "dim"),
                    ('"memory.pin" = "ctrl+t"', "bold"),
                    (". Every action is also in the command palette.", "dim"),
                ),
                id="help-note",
            )

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("key", "does", "where", "binding id")
        for row in self.rows:
            table.add_row(*(Text(cell) for cell in row))  # keys come from the config file: never markup
        table.focus()

    def action_close(self) -> None:
        self.dismiss(None)
