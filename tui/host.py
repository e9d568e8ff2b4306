"""What screens need of the app that shows them: the store, the scope, the clock, the model's state and a
change counter. The app (tui/app.py) builds on it; screens import this, never the app, so no cycle forms."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from textual.app import App
from textual.notifications import SeverityLevel
from textual.reactive import reactive

if TYPE_CHECKING:
    from memdeck.core.filters import Scope
    from memdeck.core.store import Store


class MemdeckHost(App[int]):
    """The memdeck app as its screens see it."""

    model_state: reactive[str] = reactive("loading")
    maintenance: reactive[str] = reactive("")  # one line about the maintenance scheduler; "" when it is off

    def __init__(
        self, store: Store | None, scope: Scope | None, clock: Callable[[], datetime] | None
    ) -> None:
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

    def first_rows_shown(self) -> None:
        """Told once by the first screen when its first rows (or its empty message) are on screen: what
        waited for them (the model's load) starts then."""

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """A notification, always as plain text: messages quote what people and agents wrote (names, reasons,
        typed values), which must never be read as markup."""
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=False)

    def action_help_quit(self) -> None:
        # Textual's own hint (ctrl+c) is written in markup; notifications here are plain text.
        for active in self.active_bindings.values():
            if active.binding.action in ("quit", "app.quit"):
                self.notify(
                    f"Press {self.get_key_display(active.binding)} to quit the app",
                    title="Do you want to quit?",
                )
                return
