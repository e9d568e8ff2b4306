"""Store analytics: counts over time, distributions, recall statistics, stale memories, near-duplicates.

Every number comes from :mod:`memdeck.core.analytics` (DuckDB over the Lance datasets, scoped to the
principals this view may show), each section in its own thread worker, so a slow section never blocks
the others or the keyboard.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Header, Input, Label, Select, Static, TabbedContent, TabPane
from textual.worker import Worker, get_current_worker
from textual_plotext import PlotextPlot

from memdeck.core.analytics import GROUPS, Series
from memdeck.core.filters import Scope

from ..widgets.key_footer import KeyFooter
from ..widgets.score_bars import bar
from .base import MemdeckScreen

if TYPE_CHECKING:
    from memdeck.core.store import Store

PERIOD_CHOICES = ("week", "month")
DEFAULT_STALE_DAYS = 90
MAX_PLOTTED_BUCKETS = 48
LIST_LIMIT = 50
CONTRADICTION_COLUMNS = ("principal", "conflict", "a_value", "b_value", "a_text", "b_text", "a_id", "b_id")


def _fmt(n: int) -> str:
    return f"{n:,}"


def _short(text: str | None, width: int = 60) -> Text:
    """A table cell of stored text, as plain text: brackets in it are never read as markup."""
    flat = " ".join((text or "").split())
    return Text(flat if len(flat) <= width else flat[: width - 1] + "…")


def _day(stamp: str | None) -> str:
    return stamp[:10] if stamp else "never"


class AnalyticsScreen(MemdeckScreen):
    """What is in the store: volumes, distributions, what gets recalled, what has gone stale."""

    TITLE = "Analytics"
    COMMAND_PREFIX = "Analytics"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+r", "refresh", "Refresh", id="analytics.refresh", tooltip="Recompute every section"),
        Binding("ctrl+n", "next_tab", "Next tab", id="analytics.next_tab"),
        Binding(
            "p",
            "cycle_period",
            "Week/month",
            id="analytics.period",
            tooltip="Count new memories per week or per month",
        ),
        Binding(
            "g",
            "cycle_group",
            "Split by",
            id="analytics.group",
            tooltip="Split counts by tier, principal or agent",
        ),
    ]

    TABS = (
        "analytics-tab-overview",
        "analytics-tab-distributions",
        "analytics-tab-recall",
        "analytics-tab-stale",
        "analytics-tab-duplicates",
        "analytics-tab-contradictions",
        "analytics-tab-trust",
    )

    @dataclass
    class Loaded(Message):
        """One section's numbers are ready."""

        section: str
        data: Any
        elapsed_ms: float

    def __init__(
        self,
        store: Store | None = None,
        scope: Scope | None = None,
        *,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(store, scope, name=name, id=id, classes=classes)
        self.analytics = self.store.analytics(self.scope)
        self.period = "month"
        self.group = "tier"
        self.stale_days = float(DEFAULT_STALE_DAYS)
        self.data: dict[str, Any] = {}
        self.timings_ms: dict[str, float] = {}

    # -- layout --

    def compose(self) -> ComposeResult:
        yield Header(icon="≡")
        with Horizontal(id="analytics-controls"):
            yield Label("per")
            yield Select(
                [(p, p) for p in PERIOD_CHOICES],
                value=self.period,
                allow_blank=False,
                id="analytics-period",
                compact=True,
            )
            yield Label("split by")
            yield Select(
                [(g, g) for g in GROUPS],
                value=self.group,
                allow_blank=False,
                id="analytics-group",
                compact=True,
            )
            yield Label("stale after (days)")
            yield Input(
                str(DEFAULT_STALE_DAYS),
                type="integer",
                id="analytics-stale-days",
                compact=True,
                tooltip="Active memories not recalled for this many days count as stale",
            )
        yield Static("Computing…", id="analytics-status")
        with TabbedContent(id="analytics-tabs", initial="analytics-tab-overview"):
            with TabPane("Overview", id="analytics-tab-overview"):
                yield Static(id="analytics-summary")
                yield PlotextPlot(id="analytics-time-plot")
                yield DataTable(id="analytics-breakdown", cursor_type="row", zebra_stripes=True)
            with TabPane("Distributions", id="analytics-tab-distributions"):
                with Horizontal(id="analytics-distributions"):
                    yield PlotextPlot(id="analytics-importance-plot")
                    yield PlotextPlot(id="analytics-age-plot")
            with TabPane("Recall", id="analytics-tab-recall"):
                with Vertical(classes="analytics-half"):
                    yield Static("Most recalled", classes="analytics-heading")
                    yield DataTable(id="analytics-most", cursor_type="row", zebra_stripes=True)
                with Vertical(classes="analytics-half"):
                    yield Static("Least recalled (active)", classes="analytics-heading")
                    yield DataTable(id="analytics-least", cursor_type="row", zebra_stripes=True)
            with TabPane("Stale", id="analytics-tab-stale"):
                yield Static(id="analytics-stale-summary", classes="analytics-note")
                yield DataTable(id="analytics-stale", cursor_type="row", zebra_stripes=True)
            with TabPane("Duplicates", id="analytics-tab-duplicates"):
                yield Static(id="analytics-duplicates-summary", classes="analytics-note")
                yield DataTable(id="analytics-duplicates", cursor_type="row", zebra_stripes=True)
            with TabPane("Contradictions", id="analytics-tab-contradictions"):
                yield Static(id="analytics-contradictions-summary", classes="analytics-note")
                yield DataTable(id="analytics-contradictions", cursor_type="row", zebra_stripes=True)
            with TabPane("Trust", id="analytics-tab-trust"):
                with VerticalScroll():
                    yield Static(
                        "Trust per agent from relevance feedback (0.5 until an agent has some).",
                        classes="analytics-note",
                    )
                    yield DataTable(id="analytics-trust", cursor_type="row", zebra_stripes=True)
        yield KeyFooter()

    def data_changed(self) -> None:
        self.action_refresh()  # coming back to a stale view recomputes it

    def on_mount(self) -> None:
        columns = {
            "#analytics-most": ("recalls", "last recalled", "tier", "principal", "agent", "id", "text"),
            "#analytics-least": ("recalls", "created", "tier", "principal", "agent", "id", "text"),
            "#analytics-stale": (
                "last recalled",
                "created",
                "recalls",
                "tier",
                "principal",
                "pin",
                "id",
                "text",
            ),
            "#analytics-duplicates": ("cluster", "size", "similarity", "tier", "principal", "id", "text"),
            "#analytics-trust": ("agent", "memories", "trust", "feedback"),
        }
        for selector, labels in columns.items():
            self.query_one(selector, DataTable).add_columns(*labels)
        self.action_refresh()

    # -- loading --

    def action_refresh(self) -> None:
        """Recompute every section, each in its own worker."""
        self._status("Computing…")
        for section in (
            "summary",
            "over_time",
            "breakdown",
            "importance",
            "age",
            "recall",
            "stale",
            "duplicates",
            "contradictions",
            "trust",
        ):
            self.load(section)

    def _job(self, section: str) -> Callable[[], Any]:
        a = self.analytics
        period, group, days = self.period, self.group, self.stale_days
        jobs: dict[str, Callable[[], Any]] = {
            "summary": a.summary,
            "over_time": lambda: a.over_time(by=group, period=period),
            "breakdown": lambda: a.breakdown(by=group),
            "importance": a.importance_histogram,
            "age": a.age_histogram,
            "recall": lambda: self._with_previews(
                {"most": a.most_recalled(LIST_LIMIT), "least": a.least_recalled(LIST_LIMIT)}
            ),
            "stale": lambda: self._with_previews({"stale": a.stale(days, limit=LIST_LIMIT * 2)}),
            "duplicates": lambda: self._duplicates(),
            "contradictions": a.contradictions,
            "trust": a.agent_trust,
        }
        return jobs[section]

    def _with_previews(self, data: dict[str, Any]) -> dict[str, Any]:
        ids: list[str] = []
        for value in data.values():
            rows = value["rows"] if isinstance(value, dict) else value
            ids += [r["id"] for r in rows]
        data["previews"] = self.analytics.previews(ids)
        return data

    def _duplicates(self) -> dict[str, Any]:
        clusters = self.analytics.near_duplicates()
        ids = [i for c in clusters for i in c.ids]
        return {"clusters": clusters, "previews": self.analytics.previews(ids)}

    def load(self, section: str) -> None:
        job = self._job(section)
        self.run_worker(
            lambda: self._compute(section, job),
            thread=True,
            exclusive=True,
            exit_on_error=False,
            group=f"analytics-{section}",
            name=f"analytics-{section}",
            description=f"analytics: {section}",
        )

    def _compute(self, section: str, job: Callable[[], Any]) -> None:
        worker = get_current_worker()
        t0 = time.perf_counter()
        data = job()
        elapsed = (time.perf_counter() - t0) * 1000
        if not worker.is_cancelled:
            self.post_message(self.Loaded(section, data, elapsed))

    @on(Loaded)
    def _loaded(self, message: Loaded) -> None:
        self.data[message.section] = message.data
        self.timings_ms[message.section] = message.elapsed_ms
        self._renderers()[message.section](message.data)
        slowest = max(self.timings_ms.items(), key=lambda kv: kv[1])
        self._status(
            f"{len(self.timings_ms)} sections computed with DuckDB over the Lance tables · slowest: "
            f"{slowest[0]} {slowest[1]:.0f} ms"
            + ("" if self.scope.is_everyone else f" · principals: {', '.join(self.scope.principals or ())}")
        )

    # -- rendering --

    def _renderers(self) -> dict[str, Callable[[Any], None]]:
        return {
            "summary": self._show_summary,
            "over_time": self._show_over_time,
            "breakdown": self._show_breakdown,
            "importance": self._show_importance,
            "age": self._show_age,
            "recall": self._show_recall,
            "stale": self._show_stale,
            "duplicates": self._show_duplicates,
            "contradictions": self._show_contradictions,
            "trust": self._show_trust,
        }

    def _status(self, text: str, error: bool = False) -> None:
        status = self.query_one("#analytics-status", Static)
        status.update(text)
        status.set_class(error, "-error")

    def _show_summary(self, s: dict[str, Any]) -> None:
        text = Text()
        text.append(f"{_fmt(s['total'])} memories", style="bold")
        for tier, n in s["per_tier"].items():
            text.append(f" · {tier} {_fmt(n)}")
        text.append(f" · pinned {_fmt(s['pinned'])} · never recalled {_fmt(s['never_recalled'])}")
        for state, n in sorted(s["per_state"].items()):
            if state != "active":
                text.append(f" · {state} {_fmt(n)}")
        text.append(f" · {_fmt(s['principals'])} principals · {_fmt(s['agents'])} agents", style="dim")
        self.query_one("#analytics-summary", Static).update(text)

    def _show_over_time(self, series: Series) -> None:
        widget = self.query_one("#analytics-time-plot", PlotextPlot)
        plt = widget.plt
        plt.clear_data()
        plt.clear_figure()
        buckets = series.buckets[-MAX_PLOTTED_BUCKETS:]
        cut = len(series.buckets) - len(buckets)
        title = f"New memories per {series.period}, by {series.by}"
        if cut:
            title += f" (last {len(buckets)} {series.period}s)"
        plt.title(title)
        if buckets:
            names = list(series.counts)
            plt.stacked_bar(
                [b[:7] if series.period == "month" else b for b in buckets],
                [series.counts[n][cut:] for n in names],
                labels=names,  # type: ignore[call-arg]  # plotext takes labels=; the stub says label=
            )
        widget.refresh()

    def _show_breakdown(self, rows: list[dict[str, Any]]) -> None:
        table = self.query_one("#analytics-breakdown", DataTable)
        table.clear(columns=True)
        table.add_columns(self.group, "memories", "pinned", "deprecated", "avg importance", "recalls")
        for r in rows:
            table.add_row(
                Text(str(r["key"])),
                _fmt(r["n"]),
                _fmt(r["pinned"]),
                _fmt(r["deprecated"]),
                f"{r['importance']:.2f}",
                _fmt(r["recalls"]),
            )

    def _bar_plot(self, selector: str, title: str, labels: list[str], values: list[int]) -> None:
        widget = self.query_one(selector, PlotextPlot)
        plt = widget.plt
        plt.clear_data()
        plt.clear_figure()
        plt.title(title)
        plt.bar(labels, values)
        widget.refresh()

    def _show_importance(self, rows: list[dict[str, Any]]) -> None:
        self._bar_plot(
            "#analytics-importance-plot",
            "Importance",
            [f"{r['lo']:.1f}" for r in rows],
            [r["n"] for r in rows],
        )

    def _show_age(self, rows: list[dict[str, Any]]) -> None:
        self._bar_plot("#analytics-age-plot", "Age", [r["label"] for r in rows], [r["n"] for r in rows])

    def _show_recall(self, data: dict[str, Any]) -> None:
        previews = data["previews"]
        most = self.query_one("#analytics-most", DataTable)
        most.clear()
        for r in data["most"]:
            most.add_row(
                _fmt(r["recalls"]),
                _day(r["last_recalled"]),
                r["tier"],
                Text(r["principal"]),
                Text(r["agent"] or ""),
                r["id"],
                _short(previews.get(r["id"])),
                key=r["id"],
            )
        least = self.query_one("#analytics-least", DataTable)
        least.clear()
        for r in data["least"]:
            least.add_row(
                _fmt(r["recalls"]),
                _day(r["created"]),
                r["tier"],
                Text(r["principal"]),
                Text(r["agent"] or ""),
                r["id"],
                _short(previews.get(r["id"])),
                key=r["id"],
            )

    def _show_stale(self, data: dict[str, Any]) -> None:
        stale = data["stale"]
        previews = data["previews"]
        share = stale["count"] / stale["active"] if stale["active"] else 0.0
        text = Text()
        text.append_text(bar(share, 20, "#ffaf5f"))
        text.append(
            f"  {_fmt(stale['count'])} of {_fmt(stale['active'])} active memories not recalled in "
            f"{stale['days']:g} days"
        )
        if stale["per_tier"]:
            text.append(
                " (" + ", ".join(f"{t} {_fmt(n)}" for t, n in sorted(stale["per_tier"].items())) + ")"
            )
        if stale["count"] > len(stale["rows"]):
            text.append(f"; the {len(stale['rows'])} longest unrecalled are listed", style="dim")
        self.query_one("#analytics-stale-summary", Static).update(text)
        table = self.query_one("#analytics-stale", DataTable)
        table.clear()
        for r in stale["rows"]:
            table.add_row(
                _day(r["last_recalled"]),
                _day(r["created"]),
                _fmt(r["recalls"]),
                r["tier"],
                Text(r["principal"]),
                "●" if r["pinned"] else "",
                r["id"],
                _short(previews.get(r["id"])),
                key=r["id"],
            )

    def _show_duplicates(self, data: dict[str, Any]) -> None:
        clusters = data["clusters"]
        previews = data["previews"]
        n_members = sum(c.size for c in clusters)
        self.query_one("#analytics-duplicates-summary", Static).update(
            f"{len(clusters)} clusters ({n_members} memories) with cosine similarity ≥ 0.92 within one "
            "principal and tier, among the newest 2,000 active memories per tier"
            if clusters
            else "No near-duplicates among the newest 2,000 active memories per tier."
        )
        table = self.query_one("#analytics-duplicates", DataTable)
        table.clear()
        for n, c in enumerate(clusters, start=1):
            for i, mem_id in enumerate(c.ids):
                table.add_row(
                    str(n) if i == 0 else "",
                    str(c.size) if i == 0 else "",
                    f"{c.min_similarity:.3f}–{c.max_similarity:.3f}" if i == 0 else "",
                    c.tier,
                    Text(c.principal),
                    mem_id,
                    _short(previews.get(mem_id)),
                    key=f"{n}:{mem_id}",
                )

    def _show_contradictions(self, rows: list[dict[str, Any]]) -> None:
        summary = self.query_one("#analytics-contradictions-summary", Static)
        table = self.query_one("#analytics-contradictions", DataTable)
        table.clear(columns=True)
        n = len(rows)
        summary.update(
            f"{n} contradiction{'s' if n != 1 else ''} to review: pairs of one principal's active facts that "
            "cannot both hold (decide them on the Review screen, or with memdeck review)"
            if rows
            else "No contradictions: no two active facts of one principal clash."
        )
        table.add_columns(*CONTRADICTION_COLUMNS)
        for r in rows:
            table.add_row(
                *[_short(str(r.get(k) or ""), 50) for k in CONTRADICTION_COLUMNS], key=r.get("key") or None
            )

    def _show_trust(self, rows: list[dict[str, Any]]) -> None:
        table = self.query_one("#analytics-trust", DataTable)
        table.clear()
        for r in sorted(rows, key=lambda r: (-r["trust"], r["agent"])):
            table.add_row(
                Text(r["agent"]),
                _fmt(r["memories"]),
                Text.assemble(bar(r["trust"], 16, "#5fd7d7"), f" {r['trust']:.2f}"),
                f"{r['useful']} of {r['verdicts']} useful" if r["rated"] else Text("none yet", style="dim"),
                key=r["agent"],
            )

    # -- controls --

    @on(Select.Changed, "#analytics-period")
    def _period_changed(self, event: Select.Changed) -> None:
        if event.value is not Select.NULL and event.value != self.period:
            self.period = str(event.value)
            self.load("over_time")

    @on(Select.Changed, "#analytics-group")
    def _group_changed(self, event: Select.Changed) -> None:
        if event.value is not Select.NULL and event.value != self.group:
            self.group = str(event.value)
            self.load("over_time")
            self.load("breakdown")

    @on(Input.Submitted, "#analytics-stale-days")
    def _stale_days(self, event: Input.Submitted) -> None:
        event.stop()
        try:
            days = float(event.value)
        except ValueError:
            days = -1
        if days < 0:
            self._status("stale after: give a whole number of days, 0 or more", error=True)
            return
        self.stale_days = days
        self.load("stale")

    def action_cycle_period(self) -> None:
        select = self.query_one("#analytics-period", Select)
        select.value = PERIOD_CHOICES[(PERIOD_CHOICES.index(self.period) + 1) % len(PERIOD_CHOICES)]

    def action_cycle_group(self) -> None:
        select = self.query_one("#analytics-group", Select)
        select.value = GROUPS[(GROUPS.index(self.group) + 1) % len(GROUPS)]

    def action_next_tab(self) -> None:
        tabs = self.query_one("#analytics-tabs", TabbedContent)
        index = self.TABS.index(tabs.active) if tabs.active in self.TABS else -1
        tabs.active = self.TABS[(index + 1) % len(self.TABS)]

    def worker_failed(self, worker: Worker[Any], text: str) -> None:
        self._status(f"{worker.description or worker.name} failed: {text}", error=True)


__all__ = ["AnalyticsScreen"]
