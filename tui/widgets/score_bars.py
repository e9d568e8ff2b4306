"""Score components as bars: one line per component for a result, and a stacked mini bar for a table cell."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.text import Text
from textual.widgets import Static

from memdeck.core.config import COMPONENTS

COMPONENT_COLORS: dict[str, str] = {
    "relevance": "#4ea1ff",
    "recency": "#5fd787",
    "frequency": "#ffaf5f",
    "importance": "#d787ff",
    "pinned": "#ffd75f",
    "trust": "#5fd7d7",
    "graph": "#ff87af",
}
FULL, EMPTY = "█", "·"
PARTIAL = " ▏▎▍▌▋▊▉"


def bar(value: float, width: int, color: str) -> Text:
    """A horizontal bar for a value in [0, 1], with eighth-cell resolution."""
    value = min(max(float(value), 0.0), 1.0)
    eighths = round(value * width * 8)
    full, rest = divmod(eighths, 8)
    text = Text(FULL * full, style=color)
    if rest and full < width:
        text.append(PARTIAL[rest], style=color)
        full += 1
    text.append(EMPTY * (width - full), style="dim")
    return text


def contribution_bar(components: Mapping[str, float], weights: Mapping[str, float], width: int = 16) -> Text:
    """Each component's weighted contribution as a coloured segment, scaled to the sum of the weights."""
    total_weight = sum(max(w, 0.0) for w in weights.values()) or 1.0
    text = Text()
    used = 0
    carry = 0.0
    for name in COMPONENTS:
        share = max(weights.get(name, 0.0), 0.0) * max(components.get(name, 0.0), 0.0) / total_weight * width
        carry += share
        cells = int(carry) - used
        if cells > 0:
            text.append(FULL * cells, style=COMPONENT_COLORS[name])
            used += cells
    text.append(EMPTY * max(width - used, 0), style="dim")
    return text


def legend() -> Text:
    text = Text()
    for name in COMPONENTS:
        text.append(FULL, style=COMPONENT_COLORS[name])
        text.append(f" {name}  ")
    return text


class ScoreBars(Static):
    """Why one result scored what it did: each component, its weight and its contribution."""

    def on_mount(self) -> None:
        self.border_title = "Score components"
        self._shown: tuple[Any, Mapping[str, float]] | None = None
        self.clear()

    def clear(self) -> None:
        self._shown = None
        self.update(Text("Highlight a result to see its score components.", style="dim"))

    def on_resize(self) -> None:
        if self._shown is not None:
            self.show(*self._shown)

    def _bar_width(self) -> int:
        # name (11) + bar + " 0.703 × 0.60 = 0.422" (22) + padding and border (4)
        width = self.size.width or 80
        return max(4, min(24, width - 37))

    def show(self, scored: Any, weights: Mapping[str, float]) -> None:
        """Render a :class:`~memdeck.core.recall.scoring.Scored` under the given weights."""
        self._shown = (scored, dict(weights))
        bar_width = self._bar_width()
        lines = Text()
        for name in COMPONENTS:
            value = float(scored.components.get(name, 0.0))
            weight = float(weights.get(name, 0.0))
            lines.append(f"{name:<11}", style="bold" if weight else "dim")
            lines.append_text(bar(value, bar_width, COMPONENT_COLORS[name]))
            lines.append(f" {value:5.3f} × {weight:4.2f} = ")
            lines.append(f"{value * weight:5.3f}\n", style="bold" if weight else "dim")
        ranks = scored.ranks or {}
        channels = scored.channels or {}
        vec = ranks.get("vector")
        kw = ranks.get("keyword")
        graph = ranks.get("graph")
        lines.append(f"{'score':<11}", style="bold")
        lines.append(f"{scored.score:.4f}", style="bold")
        lines.append(
            f"  vector #{vec if vec is not None else '—'}  keyword #{kw if kw is not None else '—'}"
            f"  graph #{graph if graph is not None else '—'}"
        )
        lines.append(
            f"  cosine {channels.get('similarity', 0.0):.3f}  bm25 {channels.get('keyword', 0.0):.3f}",
            style="dim",
        )
        self.update(lines)
