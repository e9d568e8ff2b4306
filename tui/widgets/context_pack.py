"""The inspector's context-pack pane: what a recall would inject under a token budget, built by
:func:`memdeck.core.recall.context.build_context_pack`."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import DataTable, Input, Label, Static

from memdeck.core.recall.context import CHARS_PER_TOKEN, DEFAULT_BUDGET, ContextPack, build_context_pack
from memdeck.core.recall.scoring import Scored
from memdeck.core.records import Memory

from .inspector_results import preview
from .score_bars import bar


class ContextPackPane(Vertical):
    """The pack's budget, a summary bar and the entries in the order they would be injected."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.budget = DEFAULT_BUDGET
        # What an agent's `memdeck context` would count and write: set by the screen from its store.
        self.count: Callable[[str], int] | None = None
        # Named so as not to shadow Widget.render, which draws the pane.
        self.render_entry: Callable[[Memory], str] | None = None
        self.pack: ContextPack | None = None
        self._pinned: list[Memory] = []
        self._ranked: list[Scored] | None = None  # None: no recall yet
        self._drawn = False

    def compose(self) -> ComposeResult:
        with Horizontal(id="inspector-budget-row"):
            yield Label("token budget")
            yield Input(
                str(DEFAULT_BUDGET),
                type="integer",
                id="inspector-budget",
                compact=True,
                tooltip="Tokens the pack may use, counted as `memdeck context` counts them",
            )
        yield Static(id="inspector-pack-summary")
        yield DataTable(id="inspector-pack", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        self.query_one("#inspector-pack", DataTable).add_columns(
            "#", "from", "tokens", "total", "in pack", "tier", "text"
        )

    def set_recall(self, pinned: Sequence[Memory], ranked: Sequence[Scored] | None, *, draw: bool) -> None:
        """Rebuild the pack for a recall (or a re-ranking); draw it now only if ``draw`` (drawing costs more)."""
        self._pinned, self._ranked = list(pinned), None if ranked is None else list(ranked)
        self._rebuild(draw)

    def _rebuild(self, draw: bool) -> None:
        self.pack = (
            None
            if self._ranked is None
            else build_context_pack(
                self._pinned, self._ranked, self.budget, count=self.count, render=self.render_entry
            )
        )
        self._drawn = False
        if draw:
            self.draw()

    def draw_if_stale(self) -> None:
        if not self._drawn:
            self.draw()

    @on(Input.Changed, "#inspector-budget")
    def _budget_changed(self, event: Input.Changed) -> None:
        event.stop()
        try:
            budget = int(event.value)
        except ValueError:
            return
        if budget >= 0:
            self.budget = budget
            self._rebuild(draw=True)

    def _how_counted(self) -> str:
        return (
            "the embedding model's tokenizer"
            if self.count is not None
            else f"estimated: characters / {CHARS_PER_TOKEN}"
        )

    def draw(self) -> None:
        self._drawn = True
        table = self.query_one("#inspector-pack", DataTable)
        summary = self.query_one("#inspector-pack-summary", Static)
        table.clear()
        pack = self.pack
        if pack is None:
            summary.update(Text("Run a recall to see its context pack.", style="dim"))
            return
        for i, e in enumerate(pack.entries, start=1):
            table.add_row(
                str(i),
                e.source,
                str(e.tokens),
                str(e.running_total) if e.included else "",
                Text("yes", style="green") if e.included else Text("no: does not fit", style="red"),
                e.memory.tier,
                preview(e.memory.text, 60),
                key=e.memory.id,
            )
        left_out = len(pack.left_out)
        text = Text()
        text.append_text(bar(pack.used / pack.budget if pack.budget else 0.0, 24, "#4ea1ff"))
        text.append(
            f"  {pack.used} of {pack.budget} tokens ({self._how_counted()}) · "
            f"{len(pack.included)} memories ({pack.pinned_included} pinned)"
            + (f" · {left_out} did not fit" if left_out else "")
        )
        summary.update(text)
