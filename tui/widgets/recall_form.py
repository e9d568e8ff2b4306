"""The inspector's query form: query, principal, agent, k and tiers, read into one :class:`RecallRequest`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.suggester import SuggestFromList
from textual.widgets import Checkbox, Input, Label

from memdeck.core.config import Profile
from memdeck.core.errors import MemdeckError
from memdeck.core.filters import Scope
from memdeck.core.records import STORED_TIERS, check_principal

MAX_K = 1000


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

    def semantic(self, profile: Profile) -> RecallRequest:
        """The same recall with the model, under ``profile`` (once the model has loaded)."""
        return replace(self, profile=profile, keyword_only=False)


class RecallForm(Vertical):
    """The fields of a recall; Enter in any of them asks the screen to recall (``Input.Submitted``)."""

    def __init__(self, query: str, principal: str, k: int, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._query, self._principal, self._k = query, principal, k

    def compose(self) -> ComposeResult:
        with Horizontal(id="inspector-form"):
            yield Input(self._query, placeholder="query: press / to type, Enter to recall",
                        id="inspector-query", compact=True)
            yield Input(self._principal, placeholder="principal", id="inspector-principal", compact=True)
            yield Input(placeholder="agent asking (optional)", id="inspector-agent", compact=True)
            yield Input(str(self._k), placeholder="k", type="integer", id="inspector-k",
                        tooltip="How many results (k)", compact=True)
        with Horizontal(id="inspector-tiers"):
            yield Label("tiers")
            for tier in STORED_TIERS:
                yield Checkbox(tier, True, id=f"inspector-tier-{tier}", compact=True)

    def _value(self, field_id: str) -> str:
        return self.query_one(f"#{field_id}", Input).value.strip()

    def request(self, scope: Scope, profile: Profile, *, keyword_only: bool) -> RecallRequest:
        """The recall the fields describe; a MemdeckError that says what to fix otherwise."""
        query = self._value("inspector-query")
        if not query:
            raise MemdeckError("type a query first")
        principal = self._value("inspector-principal")
        if not principal:
            raise MemdeckError("type a principal: whose memories should the recall search?")
        check_principal(principal)
        if not scope.allows(principal):
            raise MemdeckError(f"principal {principal!r} is outside what this view may show")
        tiers = tuple(t for t in STORED_TIERS if self.query_one(f"#inspector-tier-{t}", Checkbox).value)
        if not tiers:
            raise MemdeckError("choose at least one tier")
        k_text = self._value("inspector-k") or "10"
        try:
            k = int(k_text)
        except ValueError:
            raise MemdeckError(f"k must be a whole number, got {k_text!r}") from None
        if not 1 <= k <= MAX_K:
            raise MemdeckError(f"k must be between 1 and {MAX_K}, got {k}")
        return RecallRequest(query=query, principal=principal, agent=self._value("inspector-agent") or None,
                             tiers=tiers, k=k, profile=profile, keyword_only=keyword_only)

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
