"""Entities: each principal's entities with how many memories mention them and relations touch them; the
selected entity's relations and the memories that mention it; the shortest path between two entities.

Reading the graph runs in thread workers. Enter on a memory opens it; ``p`` asks for a path from the
selected entity to another (typed as written, case-insensitive).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Header, Input, Label, OptionList, Static
from textual.widgets.data_table import CellDoesNotExist
from textual.widgets.option_list import Option

from ..format import one_line
from ..keys import is_text_field
from ..widgets.key_footer import KeyFooter
from .base import MemdeckScreen

if TYPE_CHECKING:
    from memdeck.core.filters import Scope
    from memdeck.core.graph.types import EntityDescription, EntityListing, RelationJSON
    from memdeck.core.store import Store

MAX_MEMORIES = 200


def _relation_text(rel: RelationJSON) -> str:
    when = " ".join(
        w
        for w in (
            f"from {rel['valid_from']}" if rel.get("valid_from") else "",
            f"until {rel['valid_until']}" if rel.get("valid_until") else "",
        )
        if w
    )
    verb = ("not " if rel.get("negated") else "") + str(rel.get("predicate") or "")
    return f"{rel.get('subject')} {verb} {rel.get('object')}" + (f" ({when})" if when else "")


class EntitiesScreen(MemdeckScreen):
    """Entities per principal, one entity's relations and memories, and paths between entities."""

    TITLE = "Entities"
    COMMAND_PREFIX = "Entities"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "p", "path", "Path", id="entities.path", tooltip="The shortest path from this entity to another"
        ),
        Binding(
            "m",
            "memories",
            "Memories",
            id="entities.memories",
            tooltip="Move to the memories that mention it",
        ),
        Binding("ctrl+r", "refresh", "Refresh", id="entities.refresh", tooltip="Read the graph again"),
        Binding("escape", "back", "Back", id="entities.back", show=False),
    ]

    @dataclass
    class Listed(Message):
        """The entities in scope were read."""

        rows: list[EntityListing]

    @dataclass
    class Described(Message):
        """One entity, its relations and the memories that mention it."""

        entity: EntityDescription
        memories: list[Any]

    @dataclass
    class PathFound(Message):
        """A path between two entities (or why there is none)."""

        text: Text

    def __init__(
        self,
        store: Store | None = None,
        scope: Scope | None = None,
        *,
        focus: tuple[str, str] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(store, scope, **kwargs)
        self.rows: list[EntityListing] = []
        self.focus_on = focus  # (principal, entity id) to select once listed
        self.current: EntityDescription | None = None

    def compose(self) -> ComposeResult:
        yield Header(icon="≡")
        with Horizontal(id="entities-body"):
            yield DataTable(id="entities-list", cursor_type="row", zebra_stripes=True)
            with VerticalScroll(id="entities-side"):
                yield Static("", id="entities-title")
                yield Label("Relations", classes="section")
                yield Static("", id="entities-relations")
                yield Label("Memories", classes="section")
                yield OptionList(id="entities-memories")
                with Vertical(id="entities-path-box"):
                    yield Input(placeholder="path to… (an entity name, Enter)", id="entities-path")
                    yield Static("", id="entities-path-result")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one("#entities-list", DataTable).add_columns(
            "principal", "entity", "kind", "memories", "relations"
        )
        self.action_refresh()

    def data_changed(self) -> None:
        self.action_refresh()

    def action_refresh(self) -> None:
        self._list()

    @work(thread=True, exclusive=True, exit_on_error=False, group="entities", description="Reading entities")
    def _list(self) -> None:
        self.post_message(self.Listed(self.store.entities(self.scope)))

    @on(Listed)
    def _listed(self, message: Listed) -> None:
        self.rows = message.rows
        table = self.query_one("#entities-list", DataTable)
        table.clear()
        for row in self.rows:
            # Names are as written (an MCP client may send "[/b]"): cells are Text, never markup.
            table.add_row(
                Text(row["principal"]),
                Text(row["name"]),
                Text(row["kind"]),
                row["mentions"],
                row["relations"],
                key=f"{row['principal']}\x00{row['id']}",
            )
        if not self.rows:
            self.query_one("#entities-title", Static).update(
                Text("No entities in this scope yet.", style="dim")
            )
            return
        index = 0
        if self.focus_on is not None:
            index = next(
                (i for i, r in enumerate(self.rows) if (r["principal"], r["id"]) == self.focus_on), 0
            )
            self.focus_on = None
        table.move_cursor(row=index)
        self._describe_row(index)

    @on(DataTable.RowHighlighted, "#entities-list")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._describe_row(event.cursor_row)

    def _describe_row(self, index: int) -> None:
        if 0 <= index < len(self.rows):
            row = self.rows[index]
            self._describe(row["principal"], row["name"])

    @work(thread=True, exclusive=True, exit_on_error=False, group="entity", description="Reading an entity")
    def _describe(self, principal: str, name: str) -> None:
        from memdeck.core.filters import Scope

        entity = self.store.entity(principal, name)
        memories = []
        for memory_id in entity["mentions"][:MAX_MEMORIES]:
            try:
                memories.append(self.store.get(memory_id, Scope.of(principal)))
            except Exception:  # noqa: BLE001 - a memory being forgotten is left out, not an error
                continue
        self.post_message(self.Described(entity, memories))

    @on(Described)
    def _described(self, message: Described) -> None:
        entity = self.current = message.entity
        title = Text()
        title.append(entity["name"], style="bold")
        title.append(f"   {entity['kind']} · {entity['principal']} · {len(entity['mentions'])} memories")
        if entity["aliases"]:
            title.append(f"\nalso: {', '.join(entity['aliases'])}", style="italic")
        self.query_one("#entities-title", Static).update(title)
        rels = entity["relations"]
        self.query_one("#entities-relations", Static).update(
            Text("\n".join(_relation_text(r) for r in rels)) if rels else Text("none", style="dim")
        )
        options = self.query_one("#entities-memories", OptionList)
        options.clear_options()
        for m in message.memories:
            options.add_option(Option(Text(f"{m.tier[:3]} {one_line(m.text)[:90]}"), id=m.id))

    @on(OptionList.OptionSelected, "#entities-memories")
    def _open_memory(self, event: OptionList.OptionSelected) -> None:
        from .detail import DetailScreen

        if event.option.id:
            self.app.push_screen(DetailScreen(event.option.id))

    def action_memories(self) -> None:
        self.query_one("#entities-memories", OptionList).focus()

    def action_path(self) -> None:
        self.query_one("#entities-path", Input).focus()

    @on(Input.Submitted, "#entities-path")
    def _path_submitted(self, event: Input.Submitted) -> None:
        if self.current is not None and event.value.strip():
            self._path(self.current["principal"], self.current["name"], event.value.strip())

    @work(thread=True, exclusive=True, exit_on_error=False, group="path", description="Finding a path")
    def _path(self, principal: str, a: str, b: str) -> None:
        from memdeck.core.errors import MemdeckError

        try:
            found = self.store.path(principal, a, b)
        except MemdeckError as exc:
            self.post_message(self.PathFound(Text(str(exc), style="yellow")))
            return
        if not found["found"]:
            self.post_message(self.PathFound(Text(f"no path from {a} to {b}", style="dim")))
            return
        text = Text()
        for step in found["path"]:
            if step["via"]:
                text.append(f"  ↳ {_relation_text(step['via'])}\n", style="italic")
            text.append(f"{step['entity']['name']}\n", style="bold")
        self.post_message(self.PathFound(text))

    @on(PathFound)
    def _path_found(self, message: PathFound) -> None:
        self.query_one("#entities-path-result", Static).update(message.text)

    def home_focus(self) -> DataTable[Any]:
        return self.query_one("#entities-list", DataTable)

    def action_back(self) -> None:
        if is_text_field(self.focused):  # Escape leaves the path field first
            self.leave_field()
        elif len(self.app.screen_stack) > 1:
            self.dismiss()

    def selected(self) -> EntityListing | None:
        table = self.query_one("#entities-list", DataTable)
        try:
            return self.rows[table.cursor_row]
        except (IndexError, CellDoesNotExist):
            return None
