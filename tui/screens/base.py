"""What every memdeck screen shares: the store and scope, worker failures reported in one place, and
commands for the palette."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from textual.app import SystemCommand
from textual.screen import ModalScreen, Screen
from textual.worker import Worker, WorkerState


def forward_worker_failure(node: Any, event: Worker.StateChanged) -> None:
    """Hand a failed worker to the app's one error handler (StateChanged does not bubble)."""
    if event.state == WorkerState.ERROR:
        report = getattr(node.app, "report_worker_error", None)
        if report is not None:
            report(event.worker)
        else:  # an app without the handler (a test harness): still say something
            node.notify(
                f"{event.worker.description or event.worker.name} failed: {event.worker.error}",
                severity="error",
                timeout=10,
            )


class MemdeckScreen(Screen[Any]):
    """A full screen of the app."""

    @property
    def store(self) -> Any:
        return self.app.store  # type: ignore[attr-defined]

    @property
    def scope(self) -> Any:
        return self.app.scope  # type: ignore[attr-defined]

    def palette_commands(self) -> Iterable[SystemCommand]:
        """Commands this screen adds to the command palette."""
        return ()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        forward_worker_failure(self, event)


class MemdeckModal(ModalScreen[Any]):
    """A dialog over another screen."""

    @property
    def store(self) -> Any:
        return self.app.store  # type: ignore[attr-defined]

    @property
    def scope(self) -> Any:
        return self.app.scope  # type: ignore[attr-defined]

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        forward_worker_failure(self, event)
