"""The recall inspector: run a recall, see why each result ranked where it did, tune the weights live.

A recall runs once, in a worker; every weight or half-life change re-ranks its cached candidates
(``RecallResult.rerank``) on the spot, with no new search, and shows how each result moved. The context
pack tab shows what a recall would inject under a token budget: the principal's pinned memories first,
then the ranked results.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from memdeck.core.config import Profile, load_profile, load_profiles, save_profile
from memdeck.core.errors import MemdeckError
from memdeck.core.filters import Scope
from memdeck.core.records import STORED_TIERS, Memory, check_principal
from memdeck.tui.screens.base import forward_worker_failure
from memdeck.tui.widgets.binding_commands import BindingCommands, binding_system_commands
from memdeck.tui.widgets.inspector_weights import WeightsPanel, WeightStepper  # noqa: F401 - listed so its keys can be remapped
from memdeck.tui.widgets.score_bars import ScoreBars, bar, contribution_bar, legend
from rich.console import Group
from rich.pretty import Pretty
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.suggester import SuggestFromList
from textual.widgets import (
    Button,
    Checkbox,
    DataTable,
    Footer,
    Header,
    Input,
    Label,
    Select,
    Static,
    TabbedContent,
    TabPane,
)
from textual.worker import Worker, WorkerState, get_current_worker

DEFAULT_BUDGET = 1000
CHARS_PER_TOKEN = 4  # the usual rule of thumb for English text and BPE tokenizers
MAX_PINNED = 500

# --- pure helpers (no widgets) ------------------------------------------------------------------------


def estimate_tokens(text: str) -> int:
    """Tokens a text costs in a prompt, estimated as ceil(characters / 4), at least 1."""
    return max(1, math.ceil(len(text) / CHARS_PER_TOKEN))


@dataclass
class PackEntry:
    memory: Memory
    source: str  # "pinned" or "rank N"
    tokens: int
    included: bool
    running_total: int


@dataclass
class ContextPack:
    """What a recall would inject, in order, and what did not fit the budget."""

    budget: int
    entries: list[PackEntry] = field(default_factory=list)

    @property
    def used(self) -> int:
        return sum(e.tokens for e in self.entries if e.included)

    @property
    def included(self) -> list[PackEntry]:
        return [e for e in self.entries if e.included]


def build_context_pack(pinned: Sequence[Memory], ranked: Sequence[Any], budget: int) -> ContextPack:
    """Pinned memories first (most important, then newest), then ranked results, within ``budget`` tokens.

    A memory that does not fit what is left is skipped rather than ending the pack, so one long memory
    does not crowd out shorter ones after it. A ranked result that is also pinned appears once, as pinned.
    """
    pack = ContextPack(budget=max(int(budget), 0))
    used = 0
    seen: set[str] = set()
    ordered_pins = sorted(
        pinned, key=lambda m: (-(m.importance or 0.0), -(m.created_at.timestamp() if m.created_at else 0.0))
    )
    candidates: list[tuple[Memory, str]] = [(m, "pinned") for m in ordered_pins]
    candidates += [(s.memory, f"rank {i}") for i, s in enumerate(ranked, start=1)]
    for memory, source in candidates:
        if memory.id in seen:
            continue
        seen.add(memory.id)
        tokens = estimate_tokens(memory.text)
        fits = used + tokens <= pack.budget
        if fits:
            used += tokens
        pack.entries.append(PackEntry(memory, source, tokens, fits, used))
    return pack


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


def _judged_mark(relevant: bool | None) -> Text:
    if relevant is None:
        return Text("")
    return Text("✓", style="bold green") if relevant else Text("✗", style="bold red")


def _preview(text: str, width: int = 70) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


class _LoadingEmbedder:
    """Stands in while the real model loads, so a recall now is keyword-only instead of waiting."""

    name = "loading"
    error = "the embedding model is still loading"

    def __init__(self, dim: int) -> None:
        self.dim = dim

    @property
    def available(self) -> bool:
        return False

    def encode(self, texts: list[str]) -> Any:
        from memdeck.core.embed import EmbeddingUnavailable

        raise EmbeddingUnavailable(self.error)


class _KeywordOnlyStore:
    """The store as retrieval sees it, with the embedder swapped for :class:`_LoadingEmbedder`."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self.embedder = _LoadingEmbedder(store.dim)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


def _judge_function() -> Any:
    """``judge(store, query, principal, memory_id, relevant, ...)`` from wherever this build has it."""
    for module in ("memdeck.core.tuning.evaluate", "memdeck.core.recall.traces"):
        try:
            found = getattr(__import__(module, fromlist=["judge"]), "judge", None)
        except ImportError:
            continue
        if callable(found):
            return found
    return None


def _applicable_change(report: Any) -> list[dict[str, Any]]:
    """The weight changes an explanation proposes for a candidate below k (else nothing to apply)."""
    if not isinstance(report, dict) or report.get("status") != "below_k":
        return []
    change = report.get("weight_change") or {}
    steps = change.get("change") if isinstance(change, dict) else None
    if not isinstance(steps, list):
        return []
    return [c for c in steps if isinstance(c, dict) and "weight" in c and "to" in c and "from" in c]


def model_loaded(store: Any) -> bool:
    """Whether a recall now would use the embedding model without first waiting seconds to load it."""
    return bool(getattr(store.embedder, "loaded", True))


@dataclass(frozen=True)
class RecallRequest:
    query: str
    principal: str
    agent: str | None
    tiers: tuple[str, ...]
    k: int
    profile: Profile
    keyword_only: bool


# --- a small prompt -----------------------------------------------------------------------------------


class MemoryIdPrompt(ModalScreen[str | None]):
    """Ask for a memory id (for "why was this not recalled?")."""

    DEFAULT_CSS = """
    MemoryIdPrompt {
        align: center middle;
    }
    MemoryIdPrompt > Vertical {
        width: 70;
        height: auto;
        padding: 1 2;
        border: thick $primary;
        background: $surface;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="inspector.prompt_cancel"),
    ]

    def __init__(self, title: str, value: str = "") -> None:
        super().__init__()
        self._title = title
        self._value = value

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self._title)
            yield Input(self._value, placeholder="memory id, e.g. sem_0123abcd…", id="inspector-prompt-input")

    @on(Input.Submitted)
    def _submit(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)


# --- the screen ---------------------------------------------------------------------------------------


class InspectorScreen(Screen[None]):
    """Recall inspector: ranked results with score components, live weights, the context pack."""

    TITLE = "Recall inspector"
    COMMAND_PREFIX = "Inspector"

    DEFAULT_CSS = """
    InspectorScreen #inspector-form {
        height: auto;
        padding: 0 1;
        margin: 1 0 0 0;
    }
    InspectorScreen #inspector-form > Input {
        width: 1fr;
        margin: 0 1 0 0;
    }
    InspectorScreen #inspector-query {
        width: 3fr;
    }
    InspectorScreen #inspector-k {
        width: 8;
    }
    InspectorScreen #inspector-tiers {
        height: auto;
        padding: 0 1;
    }
    InspectorScreen #inspector-tiers > Checkbox {
        width: auto;
        margin: 0 2 0 0;
    }
    InspectorScreen #inspector-tiers > Label {
        padding: 0 1;
        color: $text-muted;
    }
    InspectorScreen #inspector-status {
        height: auto;
        padding: 0 1;
        color: $text-muted;
    }
    InspectorScreen #inspector-status.-warning {
        color: $warning;
    }
    InspectorScreen #inspector-status.-error {
        color: $error;
    }
    InspectorScreen #inspector-body {
        height: 1fr;
    }
    InspectorScreen #inspector-tabs {
        width: 2fr;
        height: 1fr;
    }
    InspectorScreen #inspector-tabs > ContentSwitcher, InspectorScreen #inspector-tabs TabPane {
        height: 1fr;
    }
    InspectorScreen #inspector-results {
        height: 1fr;
        min-height: 6;
    }
    InspectorScreen #inspector-bars {
        max-height: 12;
        overflow-y: auto;
    }
    InspectorScreen #inspector-legend {
        max-height: 2;
    }
    InspectorScreen #inspector-side {
        width: 1fr;
        min-width: 40;
        max-width: 60;
        border-left: solid $primary 30%;
    }
    InspectorScreen #inspector-profile-row {
        height: auto;
        padding: 0 1;
    }
    InspectorScreen #inspector-profile-row > Input {
        width: 1fr;
        margin: 0 1 0 0;
    }
    InspectorScreen #inspector-profile-row > Button {
        margin: 0 1 0 0;
        width: auto;
        min-width: 7;
    }
    InspectorScreen #inspector-profile-select {
        width: 1fr;
        margin: 1 1 0 1;
    }
    InspectorScreen #inspector-budget-row {
        height: auto;
        margin: 1 0;
    }
    InspectorScreen #inspector-budget-row > Label {
        padding: 0 1;
    }
    InspectorScreen #inspector-budget {
        width: 14;
    }
    InspectorScreen #inspector-pack-summary, InspectorScreen #inspector-legend {
        height: auto;
        padding: 0 1;
    }
    InspectorScreen #inspector-trust {
        height: auto;
        max-height: 14;
    }
    InspectorScreen .inspector-heading {
        color: $text-muted;
        text-style: bold;
        padding: 1 1 0 1;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+r", "recall", "Recall", id="inspector.recall",
                tooltip="Run the query (a new search); weight changes re-rank without one"),
        Binding("slash", "focus_query", "Query", id="inspector.focus_query", tooltip="Edit the query"),
        Binding("y", "judge(True)", "Relevant", id="inspector.relevant",
                tooltip="Judge the highlighted result relevant to this query (kept for evaluating recall)"),
        Binding("n", "judge(False)", "Not relevant", id="inspector.not_relevant",
                tooltip="Judge the highlighted result not relevant to this query (kept for evaluating recall)"),
        Binding("plus", "feedback(True)", "Useful", id="inspector.useful",
                tooltip="Feedback: the highlighted memory was useful (raises its writer's trust)"),
        Binding("minus", "feedback(False)", "Wrong", id="inspector.wrong",
                tooltip="Feedback: the highlighted memory was wrong or useless (lowers its writer's trust)"),
        Binding("w", "explain", "Why not?", id="inspector.explain",
                tooltip="Explain why a memory id you type was not recalled for this query"),
        Binding("a", "apply_suggestion", "Apply suggestion", id="inspector.apply_suggestion",
                tooltip="Set the smallest weight change the last explanation found, and re-rank"),
        Binding("escape", "focus_results", "Results", show=False, id="inspector.focus_results",
                tooltip="Leave the field you are typing in and move to the results"),
        Binding("ctrl+s", "save_profile", "Save profile", id="inspector.save_profile",
                tooltip="Save these weights and half-lives under the name in the profile field"),
        Binding("ctrl+o", "load_profile", "Load profile", id="inspector.load_profile",
                tooltip="Choose a saved weight profile"),
        Binding("ctrl+t", "reset_weights", "Reset weights", id="inspector.reset_weights",
                tooltip="Back to the default weights and half-lives"),
        Binding("ctrl+n", "next_tab", "Next tab", id="inspector.next_tab",
                tooltip="Results, context pack, explanation"),
    ]

    TABS = ("inspector-tab-results", "inspector-tab-pack", "inspector-tab-explain")

    class RecallFinished(Message):
        """A recall worker finished."""

        def __init__(self, request: RecallRequest, result: Any, pinned: list[Memory]) -> None:
            super().__init__()
            self.request = request
            self.result = result
            self.pinned = pinned

    class Reranked(Message):
        """The ranking changed after a weight change (for tests and the shell's status)."""

        def __init__(self, ids: list[str], moves: dict[str, str], elapsed_ms: float) -> None:
            super().__init__()
            self.ids = ids
            self.moves = moves
            self.elapsed_ms = elapsed_ms

    class ApplyWeights(Message):
        """Re-rank under the weights now shown; a burst of these (a held arrow key) collapses into one."""

        def can_replace(self, message: Message) -> bool:
            return isinstance(message, InspectorScreen.ApplyWeights)

    class Judged(Message):
        """A relevance judgment was saved."""

        def __init__(self, memory_id: str, relevant: bool) -> None:
            super().__init__()
            self.memory_id = memory_id
            self.relevant = relevant

    class FeedbackGiven(Message):
        """Feedback on a memory was saved (the writer's trust changed)."""

        def __init__(self, memory_id: str, useful: bool, agents: list[str]) -> None:
            super().__init__()
            self.memory_id = memory_id
            self.useful = useful
            self.agents = agents

    class Explained(Message):
        """An explanation of one memory's place in the recall is ready."""

        def __init__(self, memory_id: str, report: Any) -> None:
            super().__init__()
            self.memory_id = memory_id
            self.report = report

    class ModelLoaded(Message):
        """The embedding model finished loading (or failed: ``error``)."""

        def __init__(self, error: str | None) -> None:
            super().__init__()
            self.error = error

    def __init__(
        self,
        store: Any,
        scope: Scope | None = None,
        *,
        query: str = "",
        principal: str | None = None,
        name: str | None = None,
        id: str | None = None,  # noqa: A002
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.store = store
        self.scope = scope if scope is not None else Scope.everyone()
        self._initial_query = query
        if principal is None and self.scope.principals and len(self.scope.principals) == 1:
            principal = self.scope.principals[0]
        self._initial_principal = principal or ""
        self._profile = self._configured_profile()
        self._request: RecallRequest | None = None
        self._result: Any = None
        self._pinned: list[Memory] = []
        self._ranked: list[Any] = []
        self._moves: dict[str, str] = {}
        self._pack: ContextPack | None = None
        self._budget = DEFAULT_BUDGET
        self._pack_drawn = False
        self.last_rerank_ms: float | None = None
        self.judgments: dict[str, bool] = {}
        self._seen_version: Any = None
        self._suggestion: list[dict[str, Any]] = []
        self.explanation: Any = None

    # -- layout --

    def compose(self) -> ComposeResult:
        yield Header(icon="≡")
        with Horizontal(id="inspector-form"):
            yield Input(self._initial_query, placeholder="query: press / to type, Enter to recall",
                        id="inspector-query", compact=True)
            yield Input(self._initial_principal, placeholder="principal", id="inspector-principal", compact=True)
            yield Input(placeholder="agent asking (optional)", id="inspector-agent", compact=True)
            yield Input(str(self.store.config.get("recall", {}).get("k", 10)), placeholder="k", type="integer",
                        id="inspector-k", tooltip="How many results (k)", compact=True)
        with Horizontal(id="inspector-tiers"):
            yield Label("tiers")
            for tier in STORED_TIERS:
                yield Checkbox(tier, True, id=f"inspector-tier-{tier}", compact=True)
        yield Static("Type a query and press Enter.", id="inspector-status")
        with Horizontal(id="inspector-body"):
            with TabbedContent(id="inspector-tabs", initial="inspector-tab-results"):
                with TabPane("Results", id="inspector-tab-results"):
                    yield DataTable(id="inspector-results", cursor_type="row", zebra_stripes=True)
                    yield Static(legend(), id="inspector-legend")
                    yield ScoreBars(id="inspector-bars")
                with TabPane("Context pack", id="inspector-tab-pack"):
                    with Horizontal(id="inspector-budget-row"):
                        yield Label("token budget")
                        yield Input(str(DEFAULT_BUDGET), type="integer", id="inspector-budget", compact=True,
                                    tooltip="Tokens the pack may use (estimated as characters / 4)")
                    yield Static(id="inspector-pack-summary")
                    yield DataTable(id="inspector-pack", cursor_type="row", zebra_stripes=True)
                with TabPane("Explain", id="inspector-tab-explain"):
                    with VerticalScroll():
                        yield Static("Press w and type a memory id to see why it was (or was not) recalled, "
                                     "and the smallest weight change that would return it.",
                                     id="inspector-explain")
            with VerticalScroll(id="inspector-side"):
                yield WeightsPanel(self._profile, id="inspector-weights")
                yield Static("Profile", classes="inspector-heading")
                with Horizontal(id="inspector-profile-row"):
                    yield Input(self._profile.name if self._profile.name != "default" else "",
                                placeholder="profile name", id="inspector-profile-name", compact=True)
                    yield Button("Save", id="inspector-profile-save", compact=True)
                    yield Button("Reset", id="inspector-profile-reset", compact=True)
                yield Select[str]([], prompt="load a profile", id="inspector-profile-select", compact=True)
                yield Static("Agent trust", classes="inspector-heading")
                yield DataTable(id="inspector-trust", cursor_type="row", show_cursor=False)
        yield Footer()

    def on_mount(self) -> None:
        results = self.query_one("#inspector-results", DataTable)
        results.add_column("#", key="rank")
        results.add_column("move", key="move")
        results.add_column("score", key="score")
        results.add_column("components", key="bar")
        results.add_column("vec", key="vec")
        results.add_column("kw", key="kw")
        results.add_column("tier", key="tier")
        results.add_column("pin", key="pin")
        results.add_column("judged", key="judged")
        results.add_column("agent", key="agent")
        results.add_column("text", key="text")
        pack = self.query_one("#inspector-pack", DataTable)
        for label in ("#", "from", "tokens", "total", "in pack", "tier", "text"):
            pack.add_column(label)
        trust = self.query_one("#inspector-trust", DataTable)
        for label in ("agent", "memories", "trust", "feedback"):
            trust.add_column(label)
        self._refresh_profiles()
        self.load_trust()
        self.load_principals()
        if not model_loaded(self.store) and hasattr(self.store.embedder, "load"):
            self.load_model()
        # The results hold the focus, so the app's keys (1-4, ?, q) work at once; / or a click edits the query.
        self.query_one("#inspector-results", DataTable).focus()
        if self._initial_query and self._initial_principal:
            self.action_recall()

    def on_screen_resume(self) -> None:
        # Coming back after changes elsewhere: fresh trust and principals; the last recall stays as it was
        # (re-run it with ctrl+r), so a comparison in progress is not lost.
        version = getattr(self.app, "data_version", None)
        if self._seen_version is not None and version != self._seen_version:
            self.load_trust()
            self.load_principals()
        self._seen_version = version

    # -- reading the form --

    def _configured_profile(self) -> Profile:
        try:
            return load_profile(self.store.config.get("recall", {}).get("profile"))
        except MemdeckError:
            return Profile()

    @property
    def profile(self) -> Profile:
        """The weights and half-lives now shown (a copy)."""
        return Profile(self._profile.name, dict(self._profile.weights), dict(self._profile.half_life_days))

    @property
    def ranked(self) -> list[Any]:
        """The results as now ranked (``Scored`` items)."""
        return list(self._ranked)

    @property
    def ranked_ids(self) -> list[str]:
        return [s.memory.id for s in self._ranked]

    @property
    def moves(self) -> dict[str, str]:
        return dict(self._moves)

    @property
    def context_pack(self) -> ContextPack | None:
        return self._pack

    @property
    def suggestion(self) -> list[dict[str, Any]]:
        """The weight change the last explanation proposed (empty when there is none to apply)."""
        return [dict(c) for c in self._suggestion]

    @property
    def result(self) -> Any:
        return self._result

    def _value(self, selector: str) -> str:
        return self.query_one(selector, Input).value.strip()

    def _build_request(self) -> RecallRequest:
        query = self._value("#inspector-query")
        if not query:
            raise MemdeckError("type a query first")
        principal = self._value("#inspector-principal")
        if not principal:
            raise MemdeckError("type a principal: whose memories should the recall search?")
        check_principal(principal)
        if not self.scope.allows(principal):
            raise MemdeckError(f"principal {principal!r} is outside what this view may show")
        tiers = tuple(t for t in STORED_TIERS if self.query_one(f"#inspector-tier-{t}", Checkbox).value)
        if not tiers:
            raise MemdeckError("choose at least one tier")
        k_text = self._value("#inspector-k") or "10"
        try:
            k = int(k_text)
        except ValueError:
            raise MemdeckError(f"k must be a whole number, got {k_text!r}") from None
        if not 1 <= k <= 1000:
            raise MemdeckError(f"k must be between 1 and 1000, got {k}")
        return RecallRequest(
            query=query, principal=principal, agent=self._value("#inspector-agent") or None, tiers=tiers, k=k,
            profile=self.profile, keyword_only=not model_loaded(self.store),
        )

    # -- status --

    def _status(self, text: str | Text, level: str = "") -> None:
        status = self.query_one("#inspector-status", Static)
        status.update(text)
        status.set_class(level == "warning", "-warning")
        status.set_class(level == "error", "-error")

    def _error(self, message: str) -> None:
        self._status(message, "error")
        self.notify(message, severity="error", title="Inspector")

    # -- recall --

    def action_recall(self) -> None:
        try:
            request = self._build_request()
        except MemdeckError as exc:
            self._error(str(exc))
            return
        self._status("Recalling…" + ("  (keyword search only: the embedding model is still loading)"
                                     if request.keyword_only else ""))
        self.run_recall(request)

    @on(Input.Submitted, "#inspector-query, #inspector-principal, #inspector-agent, #inspector-k")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_recall()
        self.action_focus_results()  # so y/n, +/- and the app's keys act on the results

    @work(thread=True, exclusive=True, group="inspector-recall", exit_on_error=False, description="recall")
    def run_recall(self, request: RecallRequest) -> None:
        """Search in a thread; post the result back. Keyword-only while the model is still loading."""
        worker = get_current_worker()
        scope = Scope.of(request.principal)
        if request.keyword_only:
            from memdeck.core.recall.search import recall

            result = recall(
                _KeywordOnlyStore(self.store), request.query, scope=scope, agent=request.agent,
                tiers=list(request.tiers), k=request.k, profile=request.profile,
            )
            result.source = "app"
        else:
            # The inspector is a diagnostic: its recalls must not inflate the access counts they rank by.
            result = self.store.recall(
                request.query, scope=scope, agent=request.agent, tiers=list(request.tiers), k=request.k,
                profile=request.profile, source="app", record_access=False,
            )
        pinned = [
            m for m in self.store.list(scope, pinned=True, state="active", limit=MAX_PINNED)
            if m.tier in request.tiers
        ]
        if not worker.is_cancelled:
            self.post_message(self.RecallFinished(request, result, pinned))

    @on(RecallFinished)
    def _recall_finished(self, message: RecallFinished) -> None:
        self._request = message.request
        self._result = message.result
        self._pinned = message.pinned
        # The weights may have moved while the search ran: rank by what is shown now.
        self._ranked = self._rerank_now(self._profile)
        self._moves = {}
        self._render_results()
        self._render_pack()
        result = message.result
        timings = getattr(result, "timings_ms", {}) or {}
        total_ms = sum(timings.values())
        text = Text(
            f"{len(result.candidates)} candidates from {', '.join(result.tiers) or 'no tiers'} · "
            f"{len(self._ranked)} shown · {total_ms:.0f} ms · principal {message.request.principal}"
        )
        if result.keyword_only:
            text.append("  ·  ")
            notice = result.notice or "semantic search unavailable; results are from keyword search only"
            text.append(notice, style="bold")
            self._status(text, "warning")
        else:
            self._status(text)
        if not self._ranked:
            self.query_one("#inspector-bars", ScoreBars).clear()

    def _rerank_now(self, profile: Profile) -> list[Any]:
        if self._result is None:
            return []
        t0 = time.perf_counter()
        ranked = list(self._result.rerank(profile))
        self.last_rerank_ms = (time.perf_counter() - t0) * 1000
        return ranked

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
        self._render_results()
        self._render_pack()
        moved = sum(1 for m in self._moves.values() if m)
        dropped = len(set(before) - set(self.ranked_ids))
        self._status(
            f"Re-ranked {len(self._result.candidates)} cached candidates in {self.last_rerank_ms:.2f} ms "
            f"(no new search) · {moved} moved" + (f" · {dropped} dropped out" if dropped else "")
        )
        self.post_message(self.Reranked(self.ranked_ids, dict(self._moves), self.last_rerank_ms or 0.0))

    # -- rendering --

    def _render_results(self) -> None:
        table = self.query_one("#inspector-results", DataTable)
        keep = self._highlighted_id()
        table.clear()
        weights = self._profile.weights
        for i, s in enumerate(self._ranked, start=1):
            m = s.memory
            move = self._moves.get(m.id, "")
            style = "green" if move.startswith("▲") else "red" if move.startswith("▼") else "cyan"
            vec, kw = s.ranks.get("vector"), s.ranks.get("keyword")
            table.add_row(
                str(i), Text(move, style=style), f"{s.score:.3f}", contribution_bar(s.components, weights),
                "—" if vec is None else str(vec), "—" if kw is None else str(kw), m.tier,
                "●" if m.pinned else "", _judged_mark(self.judgments.get(m.id)), m.agent, _preview(m.text),
                key=m.id,
            )
        if keep is not None and keep in self.ranked_ids:
            table.move_cursor(row=self.ranked_ids.index(keep))
        self._show_bars()

    def _highlighted_id(self) -> str | None:
        table = self.query_one("#inspector-results", DataTable)
        if not self._ranked or table.row_count == 0:
            return None
        row = table.cursor_row
        if 0 <= row < table.row_count:
            key = table.coordinate_to_cell_key((row, 0)).row_key.value
            return str(key) if key is not None else None
        return None

    def _highlighted(self) -> Any:
        mem_id = self._highlighted_id()
        return next((s for s in self._ranked if s.memory.id == mem_id), None)

    def _show_bars(self) -> None:
        scored = self._highlighted()
        bars = self.query_one("#inspector-bars", ScoreBars)
        if scored is None:
            bars.clear()
        else:
            bars.show(scored, self._profile.weights)

    @on(DataTable.RowHighlighted, "#inspector-results")
    def _row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_bars()

    @on(Input.Changed, "#inspector-budget")
    def _budget_changed(self, event: Input.Changed) -> None:
        try:
            budget = int(event.value)
        except ValueError:
            return
        if budget >= 0:
            self._budget = budget
            self._render_pack()

    def _render_pack(self) -> None:
        """Rebuild the context pack; draw its table now only if its tab is showing (drawing costs more)."""
        self._pack = None if self._result is None else build_context_pack(self._pinned, self._ranked, self._budget)
        self._pack_drawn = False
        if self.query_one("#inspector-tabs", TabbedContent).active == "inspector-tab-pack":
            self._draw_pack()

    @on(TabbedContent.TabActivated, "#inspector-tabs")
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.pane.id == "inspector-tab-pack" and not self._pack_drawn:
            self._draw_pack()

    def _draw_pack(self) -> None:
        self._pack_drawn = True
        table = self.query_one("#inspector-pack", DataTable)
        summary = self.query_one("#inspector-pack-summary", Static)
        table.clear()
        pack = self._pack
        if pack is None:
            summary.update(Text("Run a recall to see its context pack.", style="dim"))
            return
        for i, e in enumerate(pack.entries, start=1):
            table.add_row(
                str(i), e.source, str(e.tokens), str(e.running_total) if e.included else "",
                Text("yes", style="green") if e.included else Text("no: does not fit", style="red"),
                e.memory.tier, _preview(e.memory.text, 60), key=e.memory.id,
            )
        left_out = len(pack.entries) - len(pack.included)
        n_pinned = sum(1 for e in pack.included if e.source == "pinned")
        text = Text()
        text.append_text(bar(pack.used / pack.budget if pack.budget else 0.0, 24, "#4ea1ff"))
        text.append(
            f"  {pack.used} of {pack.budget} tokens (estimated: characters / {CHARS_PER_TOKEN}) · "
            f"{len(pack.included)} memories ({n_pinned} pinned)"
            + (f" · {left_out} did not fit" if left_out else "")
        )
        summary.update(text)

    # -- profiles --

    def _refresh_profiles(self) -> None:
        select = self.query_one("#inspector-profile-select", Select)
        try:
            names = sorted(load_profiles())
        except MemdeckError as exc:
            self._error(str(exc))
            names = ["default"]
        with select.prevent(Select.Changed):
            select.set_options([(name, name) for name in names])

    def action_save_profile(self) -> None:
        name = self._value("#inspector-profile-name")
        if not name:
            self._error("type a name for the profile in the profile field, then save")
            self.query_one("#inspector-profile-name", Input).focus()
            return
        profile = Profile(name, dict(self._profile.weights), dict(self._profile.half_life_days))
        try:
            path = save_profile(profile)
        except MemdeckError as exc:
            self._error(str(exc))
            return
        self._profile.name = name
        self._refresh_profiles()
        self._status(f"Saved profile {name!r} to {path}")
        self.notify(f"Saved profile {name!r}", title="Inspector")

    def action_load_profile(self) -> None:
        select = self.query_one("#inspector-profile-select", Select)
        select.focus()
        select.action_show_overlay()

    @on(Select.Changed, "#inspector-profile-select")
    def _profile_chosen(self, event: Select.Changed) -> None:
        if event.value is Select.NULL:
            return
        self.load_named_profile(str(event.value))

    def load_named_profile(self, name: str) -> None:
        """Show a saved profile's weights and re-rank under them."""
        try:
            profile = load_profile(name)
        except MemdeckError as exc:
            self._error(str(exc))
            return
        self._set_profile(profile)
        self.query_one("#inspector-profile-name", Input).value = "" if name == "default" else name

    def action_reset_weights(self) -> None:
        self._set_profile(Profile())
        self.query_one("#inspector-profile-name", Input).value = ""

    def _set_profile(self, profile: Profile) -> None:
        self._profile = Profile(profile.name, dict(profile.weights), dict(profile.half_life_days))
        self.query_one("#inspector-weights", WeightsPanel).set_profile(self._profile)
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

    # -- judgments and explanations --

    def action_judge(self, relevant: bool) -> None:
        scored = self._highlighted()
        if scored is None or self._request is None:
            self._error("highlight a result first")
            return
        if _judge_function() is None:
            self._error("relevance judgments are not available in this installation (memdeck.core.tuning.evaluate)")
            return
        trace_id = getattr(self._result, "trace_id", None)
        self.run_judge(self._request.query, scored.memory.principal, scored.memory.id, relevant, trace_id)

    @work(thread=True, group="inspector-judge", exit_on_error=False, description="record a judgment")
    def run_judge(self, query: str, principal: str, memory_id: str, relevant: bool, trace_id: str | None) -> None:
        judge = _judge_function()
        assert judge is not None
        try:
            judge(self.store, query, principal, memory_id, relevant, trace_id=trace_id, by_agent="user")
        except TypeError:  # an older signature without the keywords
            judge(self.store, query, principal, memory_id, relevant)
        self.post_message(self.Judged(memory_id, relevant))

    @on(Judged)
    def _judged(self, message: Judged) -> None:
        self.judgments[message.memory_id] = message.relevant
        if message.memory_id in self.ranked_ids:
            self.query_one("#inspector-results", DataTable).update_cell(
                message.memory_id, "judged", _judged_mark(message.relevant)
            )
        word = "relevant" if message.relevant else "not relevant"
        self._status(f"Marked {message.memory_id} {word} for this query (saved for evaluation)")
        self.notify(f"Marked {message.memory_id} {word}", title="Inspector")

    def action_feedback(self, useful: bool) -> None:
        scored = self._highlighted()
        if scored is None:
            self._error("highlight a result first")
            return
        try:
            from memdeck.core.recall.feedback import feedback  # noqa: F401 - optional module
        except ImportError:
            self._error("feedback is not available in this installation (memdeck.core.recall.feedback)")
            return
        self.run_feedback(scored.memory.id, scored.memory.principal, useful)

    @work(thread=True, group="inspector-feedback", exit_on_error=False, description="record feedback")
    def run_feedback(self, memory_id: str, principal: str, useful: bool) -> None:
        from memdeck.core.recall.feedback import feedback

        result = feedback(self.store, memory_id, "user", useful, scope=Scope.of(principal))
        invalidate = getattr(self.store, "invalidate_trust", None)
        if callable(invalidate):
            invalidate()
        self.post_message(self.FeedbackGiven(memory_id, useful, list(getattr(result, "agents", []))))

    @on(FeedbackGiven)
    def _feedback_given(self, message: FeedbackGiven) -> None:
        word = "useful" if message.useful else "wrong"
        who = ", ".join(message.agents) or "its writer"
        self._status(f"Feedback: {message.memory_id} was {word}; trust of {who} updated "
                     "(re-run the recall to score with it)")
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
        try:
            from memdeck.core.recall.explain import explain  # noqa: F401 - optional until the module lands
        except ImportError:
            self._error("explanations need memdeck.core.recall.explain, which this installation does not have")
            return
        self.query_one("#inspector-tabs", TabbedContent).active = "inspector-tab-explain"
        self.query_one("#inspector-explain", Static).update(f"Explaining {memory_id}…")
        self.run_explain(self._request, memory_id, self.profile)

    @work(thread=True, exclusive=True, group="inspector-explain", exit_on_error=False, description="explain")
    def run_explain(self, request: RecallRequest, memory_id: str, profile: Profile) -> None:
        from memdeck.core.recall.explain import explain

        worker = get_current_worker()
        scope = Scope.of(request.principal)
        try:
            report = explain(self.store, request.query, memory_id, scope, request.k, profile, tiers=list(request.tiers))
        except TypeError:  # a version without the tiers keyword
            report = explain(self.store, request.query, memory_id, scope, request.k, profile)
        if not worker.is_cancelled:
            self.post_message(self.Explained(memory_id, report))

    @on(Explained)
    def _show_explanation(self, message: Explained) -> None:
        report = message.report
        query = self._request.query if self._request else ""
        header = Text(f"Why {message.memory_id} ranked where it did for “{query}”\n\n", style="bold")
        try:
            from memdeck.core.recall.explain import render

            header.append(render(report) + "\n", style="not bold")
        except Exception:  # noqa: BLE001 - no renderer, or a report it does not know: the raw report follows
            if isinstance(report, dict) and isinstance(report.get("reason"), str):
                header.append(report["reason"] + "\n", style="not bold")
        self._suggestion = _applicable_change(report)
        if self._suggestion:
            parts = ", ".join(f"{c['weight']} {c['from']:g} → {c['to']:g}" for c in self._suggestion)
            header.append(f"\nPress a to apply: {parts}\n", style="bold green")
        self.explanation = report
        self.query_one("#inspector-explain", Static).update(Group(header, Pretty(report, expand_all=True)))

    def action_apply_suggestion(self) -> None:
        """Set the weights the last explanation suggested and re-rank (no new search)."""
        if not self._suggestion:
            self._error("no suggested weight change: press w to explain a memory that was not returned")
            return
        profile = self.profile
        for change in self._suggestion:
            profile.weights[change["weight"]] = float(change["to"])
        self._set_profile(profile)
        self.query_one("#inspector-tabs", TabbedContent).active = "inspector-tab-results"

    # -- side panel data --

    @work(thread=True, exclusive=True, group="inspector-trust", exit_on_error=False, description="agent trust")
    def load_trust(self) -> None:
        from memdeck.core.analytics import Analytics

        rows = Analytics(self.store, self.scope).agent_trust()
        self.app.call_from_thread(self._show_trust, rows)

    def _show_trust(self, rows: list[dict[str, Any]]) -> None:
        table = self.query_one("#inspector-trust", DataTable)
        table.clear()
        for row in sorted(rows, key=lambda r: (-r["trust"], r["agent"])):
            table.add_row(
                row["agent"], str(row["memories"]),
                Text.assemble(bar(row["trust"], 10, "#5fd7d7"), f" {row['trust']:.2f}"),
                f"{row['useful']}/{row['verdicts']} useful" if row["rated"] else Text("none", style="dim"),
                key=row["agent"],
            )

    @work(thread=True, exclusive=True, group="inspector-principals", exit_on_error=False,
          description="principals")
    def load_principals(self) -> None:
        principals = [p for p in self.store.principals() if self.scope.allows(p)]
        self.app.call_from_thread(self._show_principals, principals)

    def _show_principals(self, principals: list[str]) -> None:
        field_ = self.query_one("#inspector-principal", Input)
        field_.suggester = SuggestFromList(principals, case_sensitive=True)
        if not field_.value and len(principals) == 1:
            field_.value = principals[0]
        if principals and not field_.value:
            shown = ", ".join(principals[:3]) + ("…" if len(principals) > 3 else "")
            field_.placeholder = f"principal ({shown})"

    @work(thread=True, exclusive=True, group="inspector-model", exit_on_error=False,
          description="load the embedding model")
    def load_model(self) -> None:
        try:
            self.store.embedder.load()
        except Exception as exc:  # noqa: BLE001 - any failure means keyword-only, which the screen says
            self.post_message(self.ModelLoaded(str(exc)))
        else:
            self.post_message(self.ModelLoaded(None))

    @on(ModelLoaded)
    def _model_loaded(self, message: ModelLoaded) -> None:
        if message.error:
            self._status(f"Keyword search only: {message.error}", "warning")
            return
        if self._request is not None and self._request.keyword_only:
            self.notify("Embedding model loaded: recalling again with semantic search", title="Inspector")
            self.run_recall(RecallRequest(**{**self._request.__dict__, "profile": self.profile,
                                             "keyword_only": False}))

    # -- navigation --

    def action_focus_query(self) -> None:
        self.query_one("#inspector-query", Input).focus()

    def action_focus_results(self) -> None:
        self.query_one("#inspector-results", DataTable).focus()

    def action_next_tab(self) -> None:
        tabs = self.query_one("#inspector-tabs", TabbedContent)
        index = self.TABS.index(tabs.active) if tabs.active in self.TABS else -1
        tabs.active = self.TABS[(index + 1) % len(self.TABS)]

    # -- failures --

    def palette_commands(self) -> Iterator[SystemCommand]:
        """This screen's keys as palette commands (the app's ``get_system_commands`` asks for them)."""
        return binding_system_commands(self)

    @on(Worker.StateChanged)
    def _worker_failed(self, event: Worker.StateChanged) -> None:
        if event.state != WorkerState.ERROR:
            return
        error = event.worker.error
        what = event.worker.description or event.worker.name
        message = str(error) if isinstance(error, MemdeckError) else f"{what} failed: {type(error).__name__}: {error}"
        self._status(message, "error")
        forward_worker_failure(self, event)  # the app's one place that turns failures into a notification


PROVIDERS = (BindingCommands,)
__all__ = [
    "PROVIDERS", "ContextPack", "InspectorScreen", "MemoryIdPrompt", "PackEntry", "build_context_pack",
    "estimate_tokens", "rank_moves",
]
