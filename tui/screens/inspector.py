"""The recall inspector: run a recall, see why each result ranked where it did, tune the weights live.

A recall runs once, in a worker; every weight or half-life change re-ranks its cached candidates
(``RecallResult.rerank``) on the spot, with no new search, and shows how each result moved. The panes are
widgets (results, context pack, explanation, weights, profile, trust); this screen runs the workers and
keeps the recall they share.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Button, DataTable, Header, Input, Select, Static, TabbedContent, TabPane
from textual.worker import Worker, get_current_worker

from memdeck.core.config import Profile, load_profile, load_profiles, save_profile
from memdeck.core.errors import MemdeckError
from memdeck.core.filters import Scope
from memdeck.core.recall.context import (
    ContextPack,
    PackEntry,
    build_context_pack,
    estimate_tokens,
    render_entry,
)
from memdeck.core.recall.explain import Explanation, explain
from memdeck.core.recall.feedback import feedback
from memdeck.core.recall.scoring import Scored
from memdeck.core.recall.search import RecallResult
from memdeck.core.records import Memory
from memdeck.core.tuning.evaluate import judge

from .. import model
from ..widgets.context_pack import ContextPackPane
from ..widgets.explain_pane import ExplainPane
from ..widgets.inspector_results import ResultsPane, rank_moves
from ..widgets.inspector_side import ProfileBar, TrustTable
from ..widgets.inspector_weights import WeightsPanel, WeightStepper  # noqa: F401 - listed so its keys can be remapped
from ..widgets.key_footer import KeyFooter
from ..widgets.recall_form import FormError, RecallForm, RecallRequest
from .base import MemdeckScreen
from .dialogs import MemoryIdPrompt

if TYPE_CHECKING:
    from memdeck.core.store import Store

MAX_PINNED = 500
TABS = ("inspector-tab-results", "inspector-tab-pack", "inspector-tab-explain")


def _copy(profile: Profile) -> Profile:
    return Profile(profile.name, dict(profile.weights), dict(profile.half_life_days))


def _filters_summary(request: RecallRequest) -> str:
    f = request.filters
    if f.empty:
        return ""
    parts = [
        f"since {f.since:%Y-%m-%d %H:%M}" if f.since else "",
        f"until {f.until:%Y-%m-%d %H:%M}" if f.until else "",
        *(f"tag {t}" for t in f.tags),
        f"written by {f.written_by}" if f.written_by else "",
        f"importance >= {f.min_importance:g}" if f.min_importance is not None else "",
    ]
    return " · filtered: " + ", ".join(p for p in parts if p)


class InspectorScreen(MemdeckScreen):
    """Recall inspector: ranked results with score components, live weights, the context pack."""

    TITLE = "Recall inspector"
    COMMAND_PREFIX = "Inspector"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "ctrl+r",
            "recall",
            "Recall",
            id="inspector.recall",
            tooltip="Run the query (a new search); weight changes re-rank without one",
        ),
        Binding("slash", "focus_query", "Query", id="inspector.focus_query", tooltip="Edit the query"),
        Binding(
            "f",
            "focus_filters",
            "Filters",
            id="inspector.focus_filters",
            tooltip="Narrow the recall: since, until, tag, written by, minimum importance (Enter recalls)",
        ),
        Binding(
            "y",
            "judge(True)",
            "Relevant",
            id="inspector.relevant",
            tooltip="Judge the highlighted result relevant to this query (kept for evaluating recall)",
        ),
        Binding(
            "n",
            "judge(False)",
            "Not relevant",
            id="inspector.not_relevant",
            tooltip="Judge the highlighted result not relevant to this query (kept for evaluating recall)",
        ),
        Binding(
            "plus",
            "feedback(True)",
            "Useful",
            id="inspector.useful",
            tooltip="Feedback: the highlighted memory was useful (raises its writer's trust)",
        ),
        Binding(
            "minus",
            "feedback(False)",
            "Wrong",
            id="inspector.wrong",
            tooltip="Feedback: the highlighted memory was wrong or useless (lowers its writer's trust)",
        ),
        Binding(
            "w",
            "explain",
            "Why not?",
            id="inspector.explain",
            tooltip="Explain why a memory id you type was not recalled for this query",
        ),
        Binding(
            "a",
            "apply_suggestion",
            "Apply suggestion",
            id="inspector.apply_suggestion",
            tooltip="Set the smallest weight change the last explanation found, and re-rank",
        ),
        Binding(
            "escape",
            "focus_results",
            "Results",
            show=False,
            id="inspector.focus_results",
            tooltip="Leave the field you are typing in and move to the results",
        ),
        Binding(
            "ctrl+s",
            "save_profile",
            "Save profile",
            id="inspector.save_profile",
            tooltip="Save these weights and half-lives under the name in the profile field",
        ),
        Binding(
            "ctrl+o",
            "load_profile",
            "Load profile",
            id="inspector.load_profile",
            tooltip="Choose a saved weight profile",
        ),
        Binding(
            "ctrl+t",
            "reset_weights",
            "Reset weights",
            id="inspector.reset_weights",
            tooltip="Back to the default weights and half-lives",
        ),
        Binding(
            "ctrl+n",
            "next_tab",
            "Next tab",
            id="inspector.next_tab",
            tooltip="Results, context pack, explanation",
        ),
    ]

    @dataclass
    class RecallFinished(Message):
        """A recall worker finished."""

        request: RecallRequest
        result: RecallResult
        pinned: list[Memory]

    @dataclass
    class Reranked(Message):
        """The ranking changed after a weight change (for tests and the shell's status)."""

        ids: list[str]
        moves: dict[str, str]
        elapsed_ms: float

    @dataclass
    class ApplyWeights(Message):
        """Re-rank under the weights now shown; a burst of these (a held arrow key) collapses into one."""

        def can_replace(self, message: Message) -> bool:
            return isinstance(message, InspectorScreen.ApplyWeights)

    @dataclass
    class Judged(Message):
        """A relevance judgment was saved."""

        memory_id: str
        relevant: bool

    @dataclass
    class FeedbackGiven(Message):
        """Feedback on a memory was saved (the writer's trust changed)."""

        memory_id: str
        useful: bool
        agents: list[str]

    @dataclass
    class Explained(Message):
        """An explanation of one memory's place in the recall is ready."""

        memory_id: str
        report: Explanation

    @dataclass
    class ModelLoaded(Message):
        """The embedding model finished loading (or failed: ``error``)."""

        error: str | None

    def __init__(
        self,
        store: Store | None = None,
        scope: Scope | None = None,
        *,
        query: str = "",
        principal: str | None = None,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(store, scope, name=name, id=id, classes=classes)
        self._initial_query = query
        principals = self.scope.principals
        if principal is None and principals and len(principals) == 1:
            principal = principals[0]
        self._initial_principal = principal or ""
        self._profile = self._configured_profile()
        self._request: RecallRequest | None = None
        self._result: RecallResult | None = None
        self._pinned: list[Memory] = []
        self._ranked: list[Scored] = []
        self._moves: dict[str, str] = {}
        self.last_rerank_ms: float | None = None
        self.judgments: dict[str, bool] = {}
        self._suggestion: list[dict[str, Any]] = []
        self.explanation: Explanation | None = None

    # -- layout --

    def compose(self) -> ComposeResult:
        yield Header(icon="≡")
        yield RecallForm(
            self._initial_query,
            self._initial_principal,
            self.store.settings.recall.k,
            id="inspector-recall-form",
        )
        yield Static("Type a query and press Enter.", id="inspector-status")
        with Horizontal(id="inspector-body"):
            with TabbedContent(id="inspector-tabs", initial="inspector-tab-results"):
                with TabPane("Results", id="inspector-tab-results"):
                    yield ResultsPane(id="inspector-results-pane")
                with TabPane("Context pack", id="inspector-tab-pack"):
                    yield ContextPackPane(id="inspector-pack-pane")
                with TabPane("Explain", id="inspector-tab-explain"):
                    yield ExplainPane(id="inspector-explain-pane")
            # Its fields take the focus; the panel itself does not (it scrolls to the focused one).
            with VerticalScroll(id="inspector-side", can_focus=False):
                yield WeightsPanel(self._profile, id="inspector-weights")
                yield ProfileBar(
                    self._profile.name if self._profile.name != "default" else "", id="inspector-profile"
                )
                yield Static("Agent trust", classes="inspector-heading")
                yield TrustTable(id="inspector-trust")
        yield KeyFooter()

    @property
    def focus_chain(self) -> list[Widget]:
        """Tab goes form → weights and profile → tabs and results → back to the form: from the results, the
        next stops are the query and the principal (on screen the side panel is right of the results, which
        would put all its fields between the results and the form)."""
        chain = super().focus_chain
        side = self.query_one("#inspector-side")
        body = self.query_one("#inspector-tabs")

        def group(w: Widget) -> int:
            if side in w.ancestors_with_self:
                return 1
            return 2 if body in w.ancestors_with_self else 0

        return sorted(chain, key=group)  # stable: each group keeps its own order

    @property
    def results(self) -> ResultsPane:
        return self.query_one(ResultsPane)

    @property
    def pack_pane(self) -> ContextPackPane:
        return self.query_one(ContextPackPane)

    @property
    def tabs(self) -> TabbedContent:
        return self.query_one("#inspector-tabs", TabbedContent)

    def on_mount(self) -> None:
        self._refresh_profiles()
        self.load_trust()
        self.load_principals()
        if not model.is_loaded(self.store.engine.embedder):
            self.load_model()
        # The results hold the focus, so the app's keys (1-4, ?, q) work at once; / or a click edits the query.
        self.results.focus_table()
        if self._initial_query and self._initial_principal:
            self.action_recall()

    def data_changed(self) -> None:
        # Fresh trust and principals; the last recall stays as it was (re-run it with ctrl+r), so a
        # comparison in progress is not lost.
        self.load_trust()
        self.load_principals()

    # -- state --

    def _configured_profile(self) -> Profile:
        try:
            return load_profile(self.store.settings.recall.profile)
        except MemdeckError:
            return Profile()

    @property
    def profile(self) -> Profile:
        """The weights and half-lives now shown (a copy)."""
        return _copy(self._profile)

    @property
    def ranked(self) -> list[Scored]:
        """The results as now ranked."""
        return list(self._ranked)

    @property
    def ranked_ids(self) -> list[str]:
        return [s.memory.id for s in self._ranked]

    @property
    def moves(self) -> dict[str, str]:
        return dict(self._moves)

    @property
    def context_pack(self) -> ContextPack | None:
        return self.pack_pane.pack

    @property
    def suggestion(self) -> list[dict[str, Any]]:
        """The weight change the last explanation proposed (empty when there is none to apply)."""
        return [dict(c) for c in self._suggestion]

    @property
    def result(self) -> RecallResult | None:
        return self._result

    # -- status --

    def _status(self, text: str | Text, level: str = "") -> None:
        status = self.query_one("#inspector-status", Static)
        status.update(
            Text(text) if isinstance(text, str) else text
        )  # messages quote stored text: never markup
        status.set_class(level == "warning", "-warning")
        status.set_class(level == "error", "-error")

    def _error(self, message: str) -> None:
        self._status(message, "error")
        self.notify(message, severity="error", title="Inspector")

    def worker_failed(self, worker: Worker[Any], text: str) -> None:
        self._status(f"{worker.description or worker.name} failed: {text}", "error")

    # -- recall --

    def action_recall(self) -> bool:
        """Recall what the form asks (False, with the message shown and the cursor on the field to fix,
        when the form holds something wrong)."""
        form = self.query_one(RecallForm)
        try:
            request = form.request(
                self.scope, self.profile, keyword_only=not model.is_loaded(self.store.engine.embedder)
            )
        except MemdeckError as exc:
            self._error(str(exc))
            if isinstance(exc, FormError):
                form.query_one(f"#{exc.field_id}").focus()
            return False
        self._status(
            "Recalling…"
            + (
                "  (keyword search only: the embedding model is still loading)"
                if request.keyword_only
                else ""
            )
        )
        self.run_recall(request)
        return True

    @on(Input.Submitted, "RecallForm Input")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self.action_recall():
            self.action_focus_results()  # so y/n, +/- and the app's keys act on the results

    @work(thread=True, exclusive=True, group="inspector-recall", exit_on_error=False, description="recall")
    def run_recall(self, request: RecallRequest) -> None:
        """Search in a thread; post the result back. Keyword-only while the model is still loading."""
        worker = get_current_worker()
        scope = Scope.of(request.principal)
        # The inspector is a diagnostic: its recalls must not inflate the access counts they rank by.
        result = model.recall(
            self.store,
            request.query,
            semantic=not request.keyword_only,
            scope=scope,
            agent=request.agent,
            tiers=list(request.tiers),
            k=request.k,
            profile=request.profile,
            source="app",
            record_access=False,
            filters=None if request.filters.empty else request.filters,
        )
        pinned = [
            m
            for m in self.store.list(scope, pinned=True, state="active", limit=MAX_PINNED)
            if m.tier in request.tiers
        ]
        self.store.engine.embedder.count_tokens(
            ""
        )  # loads the tokenizer here, not on the first redraw of the pack
        if not worker.is_cancelled:
            self.post_message(self.RecallFinished(request, result, pinned))

    @on(RecallFinished)
    def _recall_finished(self, message: RecallFinished) -> None:
        at = datetime.now(UTC)
        self.pack_pane.count = self.store.engine.embedder.count_tokens
        self.pack_pane.render_entry = lambda m: render_entry(m, at)
        self._request, self._result, self._pinned = message.request, message.result, message.pinned
        # The weights may have moved while the search ran: rank by what is shown now.
        self._ranked = self._rerank_now(self._profile)
        self._moves = {}
        self._show_ranking()
        result = message.result
        text = Text(
            f"{len(result.candidates)} candidates from {', '.join(result.tiers) or 'no tiers'} · "
            f"{len(self._ranked)} shown · {sum(result.timings_ms.values()):.0f} ms · "
            f"principal {message.request.principal}" + _filters_summary(message.request)
        )
        if result.keyword_only:
            text.append("  ·  ")
            text.append(
                result.notice or "semantic search unavailable; results are from keyword search only",
                style="bold",
            )
            self._status(text, "warning")
        else:
            self._status(text)

    def _rerank_now(self, profile: Profile) -> list[Scored]:
        if self._result is None:
            return []
        t0 = time.perf_counter()
        ranked = list(self._result.rerank(profile))
        self.last_rerank_ms = (time.perf_counter() - t0) * 1000
        return ranked

    def _show_ranking(self) -> None:
        self.results.show(self._ranked, self._moves, self._profile.weights, self.judgments)
        self.pack_pane.set_recall(
            self._pinned,
            None if self._result is None else self._ranked,
            draw=self.tabs.active == "inspector-tab-pack",
        )

    @on(WeightsPanel.Changed)
    def _weights_changed(self, message: WeightsPanel.Changed) -> None:
        self._profile = message.profile
        self.post_message(self.ApplyWeights())

    @on(ApplyWeights)
    def _apply_weights(self, message: ApplyWeights) -> None:
        self._apply_profile()

    def _apply_profile(self) -> None:
        """Re-rank the cached candidates under the shown profile and show the moves."""
        if self._result is None:
            return
        before = self.ranked_ids
        self._ranked = self._rerank_now(self._profile)
        self._moves = rank_moves(before, self.ranked_ids)
        self._show_ranking()
        moved = sum(1 for m in self._moves.values() if m)
        dropped = len(set(before) - set(self.ranked_ids))
        self._status(
            f"Re-ranked {len(self._result.candidates)} cached candidates in {self.last_rerank_ms:.2f} ms "
            f"(no new search) · {moved} moved" + (f" · {dropped} dropped out" if dropped else "")
        )
        self.post_message(self.Reranked(self.ranked_ids, dict(self._moves), self.last_rerank_ms or 0.0))

    @on(TabbedContent.TabActivated, "#inspector-tabs")
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.pane.id == "inspector-tab-pack":
            self.pack_pane.draw_if_stale()

    # -- profiles --

    def _refresh_profiles(self) -> None:
        try:
            names = sorted(load_profiles())
        except MemdeckError as exc:
            self._error(str(exc))
            names = ["default"]
        self.query_one(ProfileBar).set_names(names)

    def action_save_profile(self) -> None:
        name_field = self.query_one(ProfileBar).name_field
        name = name_field.value.strip()
        if not name:
            self._error("type a name for the profile in the profile field, then save")
            name_field.focus()
            return
        try:
            path = save_profile(
                Profile(name, dict(self._profile.weights), dict(self._profile.half_life_days))
            )
        except MemdeckError as exc:
            self._error(str(exc))
            return
        self._profile.name = name
        self._refresh_profiles()
        self._status(f"Saved profile {name!r} to {path}")
        self.notify(f"Saved profile {name!r}", title="Inspector")

    def action_load_profile(self) -> None:
        self.query_one(ProfileBar).open_list()

    @on(Select.Changed, "#inspector-profile-select")
    def _profile_chosen(self, event: Select.Changed) -> None:
        if event.value is not Select.NULL:
            self.load_named_profile(str(event.value))

    def load_named_profile(self, name: str) -> None:
        """Show a saved profile's weights and re-rank under them."""
        try:
            profile = load_profile(name)
        except MemdeckError as exc:
            self._error(str(exc))
            return
        self._set_profile(profile)
        self.query_one(ProfileBar).name_field.value = "" if name == "default" else name

    def action_reset_weights(self) -> None:
        self._set_profile(Profile())
        self.query_one(ProfileBar).name_field.value = ""

    def _set_profile(self, profile: Profile) -> None:
        self._profile = _copy(profile)
        self.query_one(WeightsPanel).set_profile(self._profile)
        if self._result is not None:
            self._apply_profile()
        else:
            self._status(f"Profile {profile.name!r}")

    @on(Button.Pressed, "#inspector-profile-save")
    def _save_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_save_profile()

    @on(Button.Pressed, "#inspector-profile-reset")
    def _reset_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_reset_weights()

    # -- judgments, feedback and explanations --

    def action_judge(self, relevant: bool) -> None:
        scored = self.results.highlighted
        if scored is None or self._request is None or self._result is None:
            self._error("highlight a result first")
            return
        self.run_judge(
            self._request.query, scored.memory.principal, scored.memory.id, relevant, self._result.trace_id
        )

    @work(thread=True, group="inspector-judge", exit_on_error=False, description="record a judgment")
    def run_judge(
        self, query: str, principal: str, memory_id: str, relevant: bool, trace_id: str | None
    ) -> None:
        judge(self.store.engine, query, principal, memory_id, relevant, trace_id=trace_id, by_agent="user")
        self.post_message(self.Judged(memory_id, relevant))

    @on(Judged)
    def _judged(self, message: Judged) -> None:
        self.judgments[message.memory_id] = message.relevant
        self.results.mark_judged(message.memory_id, message.relevant)
        word = "relevant" if message.relevant else "not relevant"
        self._status(f"Marked {message.memory_id} {word} for this query (saved for evaluation)")
        self.notify(f"Marked {message.memory_id} {word}", title="Inspector")

    def action_feedback(self, useful: bool) -> None:
        scored = self.results.highlighted
        if scored is None:
            self._error("highlight a result first")
            return
        self.run_feedback(scored.memory.id, scored.memory.principal, useful)

    @work(thread=True, group="inspector-feedback", exit_on_error=False, description="record feedback")
    def run_feedback(self, memory_id: str, principal: str, useful: bool) -> None:
        result = feedback(self.store.engine, memory_id, "user", useful, scope=Scope.of(principal))
        self.post_message(self.FeedbackGiven(memory_id, useful, list(result.agents)))

    @on(FeedbackGiven)
    def _feedback_given(self, message: FeedbackGiven) -> None:
        word = "useful" if message.useful else "wrong"
        who = ", ".join(message.agents) or "its writer"
        self._status(
            f"Feedback: {message.memory_id} was {word}; trust of {who} updated "
            "(re-run the recall to score with it)"
        )
        self.notify(f"{message.memory_id}: {word}", title="Inspector")
        self.load_trust()

    def action_explain(self) -> None:
        if self._request is None:
            self._error("run a recall first; then ask why a memory was not in it")
            return
        self.app.push_screen(MemoryIdPrompt("Why was this memory not recalled? Memory id:"), self._explain_id)

    def _explain_id(self, memory_id: str | None) -> None:
        if not memory_id or self._request is None:
            return
        self.tabs.active = "inspector-tab-explain"
        self.query_one(ExplainPane).waiting(memory_id)
        self.run_explain(self._request, memory_id, self.profile)

    @work(thread=True, exclusive=True, group="inspector-explain", exit_on_error=False, description="explain")
    def run_explain(self, request: RecallRequest, memory_id: str, profile: Profile) -> None:
        worker = get_current_worker()
        report = explain(
            self.store.engine,
            request.query,
            memory_id,
            Scope.of(request.principal),
            request.k,
            profile,
            tiers=list(request.tiers),
        )
        if not worker.is_cancelled:
            self.post_message(self.Explained(memory_id, report))

    @on(Explained)
    def _show_explanation(self, message: Explained) -> None:
        query = self._request.query if self._request else ""
        self._suggestion = self.query_one(ExplainPane).show(message.memory_id, query, message.report)
        self.explanation = message.report

    def action_apply_suggestion(self) -> None:
        """Set the weights the last explanation suggested and re-rank (no new search)."""
        if not self._suggestion:
            self._error("no suggested weight change: press w to explain a memory that was not returned")
            return
        profile = self.profile
        for change in self._suggestion:
            profile.weights[change["weight"]] = float(change["to"])
        self._set_profile(profile)
        self.tabs.active = "inspector-tab-results"

    # -- side panel data and the model --

    @work(
        thread=True, exclusive=True, group="inspector-trust", exit_on_error=False, description="agent trust"
    )
    def load_trust(self) -> None:
        rows = self.store.analytics(self.scope).agent_trust()
        self.app.call_from_thread(self.query_one(TrustTable).show, rows)

    @work(
        thread=True,
        exclusive=True,
        group="inspector-principals",
        exit_on_error=False,
        description="principals",
    )
    def load_principals(self) -> None:
        principals = [p for p in self.store.principals() if self.scope.allows(p)]
        self.app.call_from_thread(self.query_one(RecallForm).offer_principals, principals)

    @work(
        thread=True,
        exclusive=True,
        group="inspector-model",
        exit_on_error=False,
        description="load the embedding model",
    )
    def load_model(self) -> None:
        self.post_message(self.ModelLoaded(model.load(self.store.engine.embedder)))

    @on(ModelLoaded)
    def _model_loaded(self, message: ModelLoaded) -> None:
        if message.error:
            self._status(f"Keyword search only: {message.error}", "warning")
            return
        if self._request is not None and self._request.keyword_only:
            self.notify("Embedding model loaded: recalling again with semantic search", title="Inspector")
            self.run_recall(self._request.semantic(self.profile))

    # -- navigation --

    def home_focus(self) -> DataTable[Any]:
        return self.results.table

    def action_focus_query(self) -> None:
        self.query_one(RecallForm).focus_query()

    def action_focus_filters(self) -> None:
        self.query_one(RecallForm).focus_filters()

    def action_focus_results(self) -> None:
        self.results.focus_table()

    def action_next_tab(self) -> None:
        tabs = self.tabs
        index = TABS.index(tabs.active) if tabs.active in TABS else -1
        tabs.active = TABS[(index + 1) % len(TABS)]
        # The focus moves with the tab (it would otherwise stay on a table the switch just hid).
        self.call_after_refresh(self._focus_tab, tabs.active)

    def _focus_tab(self, tab: str) -> None:
        if tab == "inspector-tab-results":
            self.results.focus_table()
        elif tab == "inspector-tab-pack":
            self.query_one("#inspector-pack", DataTable).focus()
        else:
            self.query_one(ExplainPane).focus()


__all__ = [
    "ContextPack",
    "InspectorScreen",
    "MemoryIdPrompt",
    "PackEntry",
    "build_context_pack",
    "estimate_tokens",
    "rank_moves",
]
