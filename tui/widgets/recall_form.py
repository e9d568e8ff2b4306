"""The inspector's query form: query, principal, agent, k, tiers and the recall filters (since, until, tag,
written by, minimum importance), read into one :class:`RecallRequest`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.suggester import SuggestFromList
from textual.widgets import Checkbox, Input, Label

from memdeck.core.config import Profile
from memdeck.core.errors import MemdeckError
from memdeck.core.filters import RecallFilter, Scope
from memdeck.core.records import STORED_TIERS, check_principal, parse_time

MAX_K = 1000
FILTER_FIELDS = (
    ("inspector-since", "since (YYYY-MM-DD)", "Only memories written at or after this date or time"),
    (
        "inspector-until",
        "until (YYYY-MM-DD)",
        "Only memories written up to this date (through its end) or time",
    ),
    ("inspector-tag", "tag (a,b: all of them)", "Only memories with every one of these tags"),
    ("inspector-written-by", "written by (agent)", "Only memories this agent wrote"),
    ("inspector-min-importance", "min importance (0-1)", "Only memories at least this important"),
)


@dataclass(frozen=True)
class RecallRequest:
    """One recall as the form asked for it."""

    query: str
    principal: str
    agent: str | None
    tiers: tuple[str, ...]
    k: int
    profile: Profile
    keyword_only: bool
    filters: RecallFilter = field(default_factory=RecallFilter)

    def semantic(self, profile: Profile) -> RecallRequest:
        """The same recall with the model, under ``profile`` (once the model has loaded)."""
        return replace(self, profile=profile, keyword_only=False)


class FormError(MemdeckError):
    """What a field of the form holds wrong, and the field (its id), so the screen can put the cursor there."""

    def __init__(self, message: str, field_id: str) -> None:
        super().__init__(message)
        self.field_id = field_id


class RecallForm(Vertical):
    """The fields of a recall; Enter in any of them asks the screen to recall (``Input.Submitted``)."""

    def __init__(self, query: str, principal: str, k: int, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._query, self._principal, self._k = query, principal, k

    def compose(self) -> ComposeResult:
        with Horizontal(id="inspector-form"):
            yield Input(
                self._query,
                placeholder="query: press / to type, Enter to recall",
                id="inspector-query",
                compact=True,
            )
            yield Input(self._principal, placeholder="principal", id="inspector-principal", compact=True)
            yield Input(placeholder="agent asking (optional)", id="inspector-agent", compact=True)
            yield Input(
                str(self._k),
                placeholder="k",
                type="integer",
                id="inspector-k",
                tooltip="How many results (k)",
                compact=True,
            )
        with Horizontal(id="inspector-tiers"):
            yield Label("tiers")
            for tier in STORED_TIERS:
                yield Checkbox(tier, True, id=f"inspector-tier-{tier}", compact=True)
        # The same filters as `memdeck recall --since --until --tag --written-by --min-importance`, applied
        # inside the LanceDB query; Enter in any of them recalls again.
        with Horizontal(id="inspector-filters"):
            yield Label("filters")
            for field_id, hint, tip in FILTER_FIELDS:
                yield Input(placeholder=hint, id=field_id, tooltip=tip, compact=True)

    def _value(self, field_id: str) -> str:
        return self.query_one(f"#{field_id}", Input).value.strip()

    def request(self, scope: Scope, profile: Profile, *, keyword_only: bool) -> RecallRequest:
        """The recall the fields describe; a MemdeckError that says what to fix otherwise."""
        query = self._value("inspector-query")
        if not query:
            raise FormError("type a query first", "inspector-query")
        principal = self._value("inspector-principal")
        if not principal:
            raise FormError(
                "type a principal: whose memories should the recall search?", "inspector-principal"
            )
        try:
            check_principal(principal)
        except MemdeckError as exc:
            raise FormError(str(exc), "inspector-principal") from None
        if not scope.allows(principal):
            raise FormError(
                f"principal {principal!r} is outside what this view may show", "inspector-principal"
            )
        tiers = tuple(t for t in STORED_TIERS if self.query_one(f"#inspector-tier-{t}", Checkbox).value)
        if not tiers:
            raise FormError("choose at least one tier", f"inspector-tier-{STORED_TIERS[0]}")
        k_text = self._value("inspector-k") or "10"
        try:
            k = int(k_text)
        except ValueError:
            raise FormError(f"k must be a whole number, got {k_text!r}", "inspector-k") from None
        if not 1 <= k <= MAX_K:
            raise FormError(f"k must be between 1 and {MAX_K}, got {k}", "inspector-k")
        return RecallRequest(
            query=query,
            principal=principal,
            agent=self._value("inspector-agent") or None,
            tiers=tiers,
            k=k,
            profile=profile,
            keyword_only=keyword_only,
            filters=self.filters(),
        )

    def filters(self) -> RecallFilter:
        """The filter fields as one :class:`RecallFilter` (checked; a MemdeckError says what to fix)."""
        for field_id, label in (("inspector-since", "since"), ("inspector-until", "until")):
            try:
                parse_time(self._value(field_id) or None)
            except MemdeckError as exc:
                raise FormError(
                    f"filter {label}: {exc} (e.g. 2024-06-01 or 2024-06-01T09:30)", field_id
                ) from None
        try:
            return RecallFilter.of(
                since=self._value("inspector-since") or None,
                until=self._value("inspector-until") or None,
                tags=[t.strip() for t in self._value("inspector-tag").split(",") if t.strip()],
                written_by=self._value("inspector-written-by") or None,
                min_importance=self._value("inspector-min-importance") or None,
            )
        except MemdeckError as exc:  # the core speaks in CLI flags; here they are fields
            raise MemdeckError(f"filter: {str(exc).replace('--', '')}") from None

    def offer_principals(self, principals: Sequence[str]) -> None:
        """Suggest these principals as one types; fill the field in when there is only one."""
        field = self.query_one("#inspector-principal", Input)
        field.suggester = SuggestFromList(principals, case_sensitive=True)
        if not field.value and len(principals) == 1:
            field.value = principals[0]
        if principals and not field.value:
            shown = ", ".join(principals[:3]) + ("…" if len(principals) > 3 else "")
            field.placeholder = f"principal ({shown})"

    def focus_query(self) -> None:
        self.query_one("#inspector-query", Input).focus()

    def focus_filters(self) -> None:
        self.query_one("#inspector-since", Input).focus()
