"""The row of filters above the memory table: principal, agent, state, memory type, tag and a date range."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.message import Message
from textual.timer import Timer
from textual.widget import AwaitMount, Widget
from textual.widgets import Input, Select

from memdeck.core.names import MEMORY_TYPES

from ..format import parse_date

STATES = [("active", "active"), ("deprecated", "deprecated"), ("pinned", "pinned")]


@dataclass(frozen=True)
class Filters:
    principal: str | None = None
    agent: str | None = None
    tag: str | None = None
    state: str | None = None  # active, deprecated, pinned; None for all but forgotten
    since: datetime | None = None
    until: datetime | None = None
    type: str | None = None  # a memory type (memdeck.core.memtypes)

    @property
    def active(self) -> bool:
        return any(
            v is not None
            for v in (self.principal, self.agent, self.tag, self.state, self.since, self.until, self.type)
        )

    def describe(self) -> str:
        parts = [
            f"{k}={v}"
            for k, v in (
                ("principal", self.principal),
                ("agent", self.agent),
                ("tag", self.tag),
                ("state", self.state),
                ("type", self.type),
            )
            if v
        ]
        if self.since:
            parts.append(f"since {self.since:%Y-%m-%d}")
        if self.until:
            parts.append(f"until {self.until:%Y-%m-%d}")
        return ", ".join(parts)

    def matches(self, m: Any) -> bool:
        """For search results, which come back unfiltered except by scope."""
        if self.principal and m.principal != self.principal:
            return False
        if self.agent and m.agent != self.agent:
            return False
        if self.tag and self.tag not in (m.tags or []):
            return False
        if self.type and m.type != self.type:
            return False
        if self.state == "pinned" and not m.pinned:
            return False
        if self.state in ("active", "deprecated") and m.state != self.state:
            return False
        created = m.created_at
        if self.since and (created is None or created < self.since):
            return False
        return not (self.until and (created is None or created > self.until))


class SearchSelect(Select[str]):
    """A Select that keeps the letters typed while it has the focus: closed, a printable key opens its list
    and searches it (as the open list does), so typing a name picks it instead of firing the screen's keys."""

    def check_consume_key(self, key: str, character: str | None = None) -> bool:
        return character is not None and character.isprintable()

    def on_key(self, event: events.Key) -> None:
        if self.expanded or event.character is None or not event.is_printable:
            return
        event.stop()
        event.prevent_default()
        self.action_show_overlay()
        self.query_one("SelectOverlay").post_message(events.Key(event.key, event.character))  # the open list


class FilterBar(Horizontal):
    """Filters; posts :class:`FilterBar.Changed` whenever the effective filters change, and
    :class:`FilterBar.Invalid` when a date field cannot be read (and again once it can)."""

    @dataclass
    class Changed(Message):
        """The filters changed."""

        bar: FilterBar
        filters: Filters

        @property
        def control(self) -> FilterBar:
            return self.bar

    @dataclass
    class Invalid(Message):
        """What is wrong with the date fields (one line each), or None once they read again."""

        bar: FilterBar
        error: str | None

        @property
        def control(self) -> FilterBar:
            return self.bar

    def __init__(
        self, *, clock: Callable[[], datetime] | None = None, deferred: bool = False, **kwargs: Any
    ) -> None:
        """``deferred``: the fields are mounted by :meth:`fill`, not with the bar (the browse screen's first
        frame leaves them out, so that its first rows come sooner; the bar keeps its line meanwhile)."""
        super().__init__(**kwargs)
        self.clock = clock or (lambda: datetime.now(UTC))
        self.filters = Filters()
        self.error: str | None = None  # why a date field cannot be read; None when both read
        self._debounce: Timer | None = None
        self._deferred = deferred
        self._choices: dict[str, list[str]] = {}  # choices given before the fields were mounted

    @property
    def filled(self) -> bool:
        """Whether the fields are mounted (always, unless the bar was made ``deferred`` and not yet filled)."""
        return not self._deferred

    def fill(self) -> AwaitMount | None:
        """Mount the fields of a deferred bar (None if they are there already)."""
        if not self._deferred:
            return None
        self._deferred = False
        return self.mount_all(self._fields())

    def compose(self) -> ComposeResult:
        if not self._deferred:
            yield from self._fields()

    def _options(self, select_id: str) -> list[tuple[Text, str]]:
        return [(Text(v), v) for v in self._choices.get(select_id, [])]  # names as written, never markup

    def _fields(self) -> list[Widget]:
        return [*self._selects(), *self._inputs()]

    def _inputs(self) -> list[Widget]:
        return [
            Input(placeholder="tag", compact=True, id="filter-tag"),
            Input(placeholder="since: 2025-03-01 or 7d", compact=True, id="filter-since"),
            Input(placeholder="until", compact=True, id="filter-until"),
        ]

    def _selects(self) -> list[Widget]:
        return [
            SearchSelect(
                self._options("filter-principal"),
                prompt="principal: any",
                compact=True,
                id="filter-principal",
                tooltip="Only this principal's memories",
            ),
            SearchSelect(
                self._options("filter-agent"),
                prompt="agent: any",
                compact=True,
                id="filter-agent",
                tooltip="Only memories written by this agent",
            ),
            SearchSelect(
                STATES,
                prompt="state: any",
                compact=True,
                id="filter-state",
                tooltip="active, deprecated or pinned",
            ),
            SearchSelect(
                [(t, t) for t in MEMORY_TYPES],
                prompt="type: any",
                compact=True,
                id="filter-type",
                tooltip="Only memories of this type (preference, decision, fact, ...)",
            ),
        ]

    def set_choices(self, select_id: str, values: list[str]) -> None:
        if self._deferred:
            self._choices[select_id] = values  # the field is made with them
            return
        select: Select[str] = self.query_one(f"#{select_id}", Select)
        current = select.value
        select.set_options([(Text(v), v) for v in values])  # names as written, never markup
        if current in values:
            select.value = current

    def clear(self) -> None:
        if self._deferred:
            return  # no field yet: nothing was chosen or typed
        for select in self.query(Select):
            select.clear()
        for field in self.query(Input):
            field.value = ""
        self._emit()

    @on(Select.Changed)
    def _select_changed(self, event: Select.Changed) -> None:
        event.stop()
        self._emit()

    @on(Input.Changed)
    def _input_changed(self, event: Input.Changed) -> None:
        event.stop()
        # Typing a date or tag re-queries once the typing pauses, not on every character.
        if self._debounce is not None:
            self._debounce.stop()
        self._debounce = self.set_timer(0.4, self._emit)

    @on(Input.Submitted)
    def _input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._emit()

    def _value(self, select_id: str) -> str | None:
        value = self.query_one(f"#{select_id}", Select).value
        return value if isinstance(value, str) else None

    def _read(self) -> Filters | None:
        now = self.clock()
        dates: dict[str, datetime | None] = {}
        errors = []
        for name in ("since", "until"):
            field = self.query_one(f"#filter-{name}", Input)
            try:
                dates[name] = parse_date(field.value, now, end_of_day=name == "until")
                field.remove_class("-invalid")
                field.tooltip = None
            except ValueError as exc:
                field.add_class("-invalid")
                field.tooltip = Text(str(exc))  # it quotes what was typed: never markup
                errors.append(f"{name}: {exc}")
        since, until = dates.get("since"), dates.get("until")
        if not errors and since is not None and until is not None and since > until:
            errors.append(f"since ({since:%Y-%m-%d}) is after until ({until:%Y-%m-%d}): nothing can match")
            for name in ("since", "until"):
                self.query_one(f"#filter-{name}", Input).add_class("-invalid")
        error = "; ".join(errors) or None
        if error != self.error:
            self.error = error
            self.post_message(self.Invalid(self, error))
        if errors:
            return None
        tag = self.query_one("#filter-tag", Input).value.strip() or None
        return Filters(
            self._value("filter-principal"),
            self._value("filter-agent"),
            tag,
            self._value("filter-state"),
            dates["since"],
            dates["until"],
            self._value("filter-type"),
        )

    def _emit(self) -> None:
        filters = self._read()
        if filters is None or filters == self.filters:
            return
        self.filters = filters
        self.post_message(self.Changed(self, filters))
