"""What screens need of the app that shows them: the store, the scope, the clock, the model's state and a
change counter. The app (tui/app.py) builds on it; screens import this, never the app, so no cycle forms."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from textual.app import App
from textual.reactive import reactive

if TYPE_CHECKING:
    from memdeck.core.filters import Scope
    from memdeck.core.store import Store


class MemdeckHost(App[int]):
    """The memdeck app as its screens see it."""

    model_state: reactive[str] = reactive("loading")
    maintenance: reactive[str] = reactive("")  # one line about the maintenance scheduler; "" when it is off

    def __init__(self, store: Store | None, scope: Scope | None, clock: Callable[[], datetime] | None) -> None:
        super().__init__()
        self.store = store
        self.scope = scope
        self.clock: Callable[[], datetime] = clock or (lambda: datetime.now(UTC))
        self.model_error: str | None = None
        self.maintenance_ok = True
        self.maintenance_detail: str | None = None  # every task's last run, for the tooltip
        self.data_version = 0  # bumped by every change, so a screen coming back knows to re-read

    def note_change(self) -> None:
        self.data_version += 1
