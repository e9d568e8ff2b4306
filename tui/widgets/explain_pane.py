"""The inspector's explain pane: why one memory ranked where it did (or was not returned), from
:func:`memdeck.core.recall.explain.explain`, and the smallest weight change that would return it."""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.pretty import Pretty
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from memdeck.core.recall.explain import Explanation, render

HINT = (
    "Press w and type a memory id to see why it was (or was not) recalled, "
    "and the smallest weight change that would return it."
)


def applicable_change(report: Explanation) -> list[dict[str, Any]]:
    """The weight changes an explanation proposes for a candidate below k (else nothing to apply)."""
    change = report.get("weight_change")
    if report["status"] != "below_k" or not change or change["kind"] == "none":
        return []
    return [dict(c) for c in change["change"]]


class ExplainPane(VerticalScroll):
    """One explanation: a readable account, the change to apply with ``a``, then the full report."""

    def compose(self) -> ComposeResult:
        yield Static(HINT, id="inspector-explain")

    def waiting(self, memory_id: str) -> None:
        self.query_one("#inspector-explain", Static).update(Text(f"Explaining {memory_id}…"))

    def show(self, memory_id: str, query: str, report: Explanation) -> list[dict[str, Any]]:
        """Show ``report``; returns the weight change it suggests (empty when there is none to apply)."""
        text = Text(f"Why {memory_id} ranked where it did for “{query}”\n\n", style="bold")
        text.append(render(report) + "\n", style="not bold")
        suggestion = applicable_change(report)
        if suggestion:
            parts = ", ".join(f"{c['weight']} {c['from']:g} → {c['to']:g}" for c in suggestion)
            text.append(f"\nPress a to apply: {parts}\n", style="bold green")
        self.query_one("#inspector-explain", Static).update(Group(text, Pretty(report, expand_all=True)))
        return suggestion
