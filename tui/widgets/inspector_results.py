"""The inspector's results pane: the ranked results with their moves and component bars, and the source
(file, heading, line range) and score breakdown of the highlighted one."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.coordinate import Coordinate
from textual.widgets import DataTable, Static

from memdeck.core.recall.scoring import Scored, source_label

from ..format import one_line
from .score_bars import ScoreBars, contribution_bar, legend

# The text comes before the details, so a narrow pane still shows what each result says.
COLUMNS = (
    ("#", "rank"),
    ("move", "move"),
    ("score", "score"),
    ("components", "bar"),
    ("judged", "judged"),
    ("pin", "pin"),
    ("text", "text"),
    ("tier", "tier"),
    ("agent", "agent"),
    ("vec", "vec"),
    ("kw", "kw"),
)
TEXT_WIDTH = 44


def rank_moves(before: Sequence[str], after: Sequence[str]) -> dict[str, str]:
    """How each id in ``after`` moved relative to ``before``: "▲3", "▼2", "new" or "" (same place)."""
    old = {mem_id: i for i, mem_id in enumerate(before)}
    moves = {}
    for i, mem_id in enumerate(after):
        if mem_id not in old:
            moves[mem_id] = "new"
        elif old[mem_id] > i:
            moves[mem_id] = f"▲{old[mem_id] - i}"
        elif old[mem_id] < i:
            moves[mem_id] = f"▼{i - old[mem_id]}"
        else:
            moves[mem_id] = ""
    return moves


def preview(text: str, width: int = 70) -> Text:
    """A one-line preview of memory text, as plain text: brackets in it are never read as markup."""
    flat = one_line(" ".join(text.split()))
    return Text(flat if len(flat) <= width else flat[: width - 1] + "…")


def judged_mark(relevant: bool | None) -> Text:
    if relevant is None:
        return Text("")
    return Text("✓", style="bold green") if relevant else Text("✗", style="bold red")


def move_text(move: str) -> Text:
    return Text(move, style="green" if move.startswith("▲") else "red" if move.startswith("▼") else "cyan")


class ResultsPane(Vertical):
    """Ranked results (a table keyed by memory id) over the score components of the highlighted one."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._ranked: list[Scored] = []
        self._weights: dict[str, float] = {}

    def compose(self) -> ComposeResult:
        yield DataTable(id="inspector-results", cursor_type="row", zebra_stripes=True)
        yield Static(legend(), id="inspector-legend")
        yield Static("", id="inspector-source")
        yield ScoreBars(id="inspector-bars")

    @property
    def table(self) -> DataTable[object]:
        return self.query_one("#inspector-results", DataTable)

    def on_mount(self) -> None:
        for label, key in COLUMNS:
            self.table.add_column(label, key=key)

    def show(
        self,
        ranked: Sequence[Scored],
        moves: Mapping[str, str],
        weights: Mapping[str, float],
        judgments: Mapping[str, bool],
    ) -> None:
        """Draw the ranking; the cursor stays on the memory it was on if that is still ranked."""
        table = self.table
        keep = self.highlighted_id
        self._ranked, self._weights = list(ranked), dict(weights)
        table.clear()
        for i, s in enumerate(self._ranked, start=1):
            m = s.memory
            vec, kw = s.ranks.get("vector"), s.ranks.get("keyword")
            table.add_row(
                str(i),
                move_text(moves.get(m.id, "")),
                f"{s.score:.3f}",
                contribution_bar(s.components, weights),
                judged_mark(judgments.get(m.id)),
                "●" if m.pinned else "",
                preview(m.text, TEXT_WIDTH),
                m.tier,
                Text(m.agent),
                "—" if vec is None else str(vec),
                "—" if kw is None else str(kw),
                key=m.id,
            )
        ids = [s.memory.id for s in self._ranked]
        if keep is not None and keep in ids:
            table.move_cursor(row=ids.index(keep))
        self._show_bars()

    @property
    def highlighted_id(self) -> str | None:
        table = self.table
        if not self._ranked or table.row_count == 0 or not 0 <= table.cursor_row < table.row_count:
            return None
        key = table.coordinate_to_cell_key(Coordinate(table.cursor_row, 0)).row_key.value
        return str(key) if key is not None else None

    @property
    def highlighted(self) -> Scored | None:
        mem_id = self.highlighted_id
        return next((s for s in self._ranked if s.memory.id == mem_id), None)

    def mark_judged(self, memory_id: str, relevant: bool) -> None:
        if any(s.memory.id == memory_id for s in self._ranked):
            self.table.update_cell(memory_id, "judged", judged_mark(relevant))

    def _show_bars(self) -> None:
        scored = self.highlighted
        bars = self.query_one("#inspector-bars", ScoreBars)
        source = self.query_one("#inspector-source", Static)
        if scored is None:
            bars.clear()
            source.update("")
        else:
            bars.show(scored, self._weights)
            where = source_label(scored.memory)
            # Plain Text: a file name or heading is stored text, never markup.
            source.update(Text.assemble(("source ", "bold"), where or "none (not imported from a file)"))

    @on(DataTable.RowHighlighted, "#inspector-results")
    def _row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_bars()

    def focus_table(self) -> None:
        self.table.focus()
