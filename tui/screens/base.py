"""What every memdeck screen and dialog shares: one constructor, the store and scope, one worker-failure
hook, the app's change counter, and commands for the palette.

A screen gets its store and scope from the constructor (a mode screen, or a screen shown alone in a test)
or else from the app that shows it (a detail screen or a dialog). When a worker fails, the failure is
reported once (:func:`~memdeck.tui.failures.report_failure`) and the screen's ``worker_failed`` hook
shows it where it belongs (a status line, a dialog's summary).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, ClassVar

from textual.app import SystemCommand
from textual.binding import ActiveBinding
from textual.screen import ModalScreen, Screen
from textual.widget import Widget
from textual.worker import Worker, WorkerState

from memdeck.core.filters import Scope

from ..failures import report_failure
from ..host import MemdeckHost
from ..keys import is_text_field, shown_bindings
from ..widgets.binding_commands import binding_system_commands

if TYPE_CHECKING:
    from memdeck.core.store import Store


class MemdeckNode:
    """The parts screens and dialogs share (mixed into :class:`Screen` and :class:`ModalScreen`)."""

    _store: Store | None
    _scope: Scope | None

    def _init_memdeck(self, store: Store | None, scope: Scope | None) -> None:
        self._store = store
        # A store given without a scope shows everything, as `memdeck ui` without --principal does.
        self._scope = scope if scope is not None or store is None else Scope.everyone()

    @property
    def host(self) -> MemdeckHost | None:
        """The memdeck app showing this screen; None when another app shows it alone (tests)."""
        app = self.app  # type: ignore[attr-defined]
        return app if isinstance(app, MemdeckHost) else None

    @property
    def store(self) -> Store:
        if self._store is not None:
            return self._store
        host = self.host
        assert host is not None and host.store is not None, "a screen without a store needs the memdeck app"
        return host.store

    @property
    def scope(self) -> Scope:
        if self._scope is not None:
            return self._scope
        host = self.host
        return host.scope if host is not None and host.scope is not None else Scope.everyone()

    @property
    def data_version(self) -> int:
        """The app's change counter: it moves whenever a screen changes the store."""
        host = self.host
        return host.data_version if host is not None else 0

    def note_change(self) -> None:
        """Tell the app the store changed, so other screens re-read when shown again."""
        host = self.host
        if host is not None:
            host.note_change()

    def now(self) -> datetime:
        host = self.host
        return host.clock() if host is not None else datetime.now(UTC)

    def worker_failed(self, worker: Worker[Any], text: str) -> None:
        """Show a failed worker's message where this screen shows such things (it is already notified)."""

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        # Worker.StateChanged goes to the node that started the worker and does not bubble.
        if event.state == WorkerState.ERROR:
            text = report_failure(self, event.worker)  # type: ignore[arg-type]
            self.worker_failed(event.worker, text)


class MemdeckScreen(MemdeckNode, Screen[None]):
    """A full screen of the app."""

    COMMAND_PREFIX: ClassVar[str] = ""  # "Inspector: Recall" in the palette; defaults to the class name

    def __init__(
        self,
        store: Store | None = None,
        scope: Scope | None = None,
        *,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._init_memdeck(store, scope)
        self._seen_version: int | None = None

    def palette_commands(self) -> Iterable[SystemCommand]:
        """Commands this screen adds to the command palette: by default, each of its described keys."""
        return binding_system_commands(self, self.COMMAND_PREFIX)

    @property
    def active_bindings(self) -> dict[str, ActiveBinding]:
        # The footer offers no key that the focused text field would type instead.
        return shown_bindings(super().active_bindings, self.focused)

    def home_focus(self) -> Widget | None:
        """Where Escape takes the focus from a text field: the screen's main list, by default the first
        focusable widget that is not a text field."""
        return next((w for w in self.focus_chain if not is_text_field(w)), None)

    def leave_field(self) -> None:
        """Leave the text field being typed in (Escape), so that the screen's keys act again."""
        target = self.home_focus()
        if target is not None and target is not self.focused:
            target.focus()
        elif is_text_field(self.focused):
            self.set_focus(None)

    def on_screen_resume(self) -> None:
        version = self.data_version
        if self._seen_version is not None and version != self._seen_version:
            self.data_changed()
        self._seen_version = version

    def data_changed(self) -> None:
        """The store changed elsewhere in the app since this screen was last shown: re-read what is stale."""


class MemdeckModal(MemdeckNode, ModalScreen[Any]):
    """A dialog over another screen; its store and scope are the app's."""

    def __init__(self, *, classes: str = "dialog-screen") -> None:
        super().__init__(classes=classes)
        self._init_memdeck(None, None)

    @property
    def active_bindings(self) -> dict[str, ActiveBinding]:
        return shown_bindings(super().active_bindings, self.focused)
