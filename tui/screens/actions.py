"""The actions on memories (pin, edit, deprecate, undeprecate, forget), shared by browse and detail.

A screen that subclasses :class:`MemoryActionsScreen` says which memories an action applies to
(``action_targets``) and what to refresh afterwards (``after_change``); the store calls run in workers.
The dialogs (and the forget machinery, receipts and redaction rules behind them) are imported when one is
first opened, not with the screen: the browse screen is the app's first, and its rows come first.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from textual import on, work
from textual.app import SystemCommand
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.worker import Worker

from .base import MemdeckScreen

if TYPE_CHECKING:
    from memdeck.core.receipts import Receipt

    from .dialogs import Edited

MEMORY_ACTIONS = {"pin", "edit", "deprecate", "undeprecate", "forget"}


def _plural(n: int) -> str:
    return f"{n} memor{'y' if n == 1 else 'ies'}"


class MemoryActionsScreen(MemdeckScreen):
    """A screen whose memories can be pinned, edited, deprecated and forgotten."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "p",
            "pin",
            "Pin/unpin",
            id="memory.pin",
            tooltip="Pin the selected memories (unpin if they are all pinned)",
        ),
        Binding(
            "e",
            "edit",
            "Edit",
            id="memory.edit",
            tooltip="Edit the text; the old text is kept in the history",
        ),
        Binding(
            "d",
            "deprecate",
            "Deprecate",
            id="memory.deprecate",
            tooltip="Mark as deprecated with a reason (and what supersedes it)",
        ),
        Binding("u", "undeprecate", "Undeprecate", show=False, id="memory.undeprecate"),
        Binding(
            "x,delete",
            "forget",
            "Forget",
            id="memory.forget",
            tooltip="Remove for good, with everything that depends on it, and get a receipt",
        ),
    ]

    @dataclass
    class Changed(Message):
        """An action changed these memories."""

        ids: list[str]
        summary: str
        removed: bool = False

    @dataclass
    class Progress(Message):
        """A step of a running forget finished."""

        step: str

    @dataclass
    class Forgotten(Message):
        """A forget finished and produced a receipt."""

        ids: list[str]
        receipt: Receipt

    # --- what subclasses provide --------------------------------------------------------------------

    def action_targets(self) -> list[Any]:
        """The memories an action applies to: the selection, else the one under the cursor."""
        return []

    def after_change(self, ids: list[str], removed: bool) -> None:
        """Refresh what shows these memories."""

    # --- bindings, palette --------------------------------------------------------------------------

    def has_targets(self) -> bool:
        """Whether the actions apply now (cheap: the footer asks on every binding refresh)."""
        return bool(self.action_targets())

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in MEMORY_ACTIONS and not self.has_targets():
            return None  # shown dimmed in the footer
        return True

    def palette_commands(self) -> Iterable[SystemCommand]:
        yield SystemCommand(
            "Pin / unpin", "Pin the selected memories, or unpin them if all are pinned", self.action_pin
        )
        yield SystemCommand("Edit memory", "Edit the text of the memory under the cursor", self.action_edit)
        yield SystemCommand(
            "Deprecate", "Deprecate the selected memories with a reason", self.action_deprecate
        )
        yield SystemCommand("Undeprecate", "Make deprecated memories active again", self.action_undeprecate)
        yield SystemCommand(
            "Forget",
            "Remove the selected memories for good (shows what depends on them first)",
            self.action_forget,
        )

    def _targets_or_say(self) -> list[Any]:
        targets = self.action_targets()
        if not targets:
            self.notify("No memory under the cursor or selected.", severity="warning")
        return targets

    # --- actions ------------------------------------------------------------------------------------

    def action_pin(self) -> None:
        targets = self._targets_or_say()
        if targets:
            self._pin([m.id for m in targets], not all(m.pinned for m in targets))

    def action_edit(self) -> None:
        from .dialogs import EditDialog

        targets = self._targets_or_say()
        if not targets:
            return
        memory = targets[0]
        if len(targets) > 1:
            self.notify("Edit works on one memory: editing the one under the cursor.")

        def saved(edited: Edited | None) -> None:
            if edited is not None:
                self._edit(memory.id, edited)

        self.app.push_screen(EditDialog(memory), saved)

    def action_deprecate(self) -> None:
        from .dialogs import DeprecateDialog

        targets = self._targets_or_say()
        if not targets:
            return

        def chosen(answer: tuple[str, str | None] | None) -> None:
            if answer:
                self._deprecate([m.id for m in targets], *answer)

        self.app.push_screen(DeprecateDialog(targets), chosen)

    def action_undeprecate(self) -> None:
        targets = [m for m in self._targets_or_say() if m.state == "deprecated"]
        if targets:
            self._undeprecate([m.id for m in targets])
        elif self.action_targets():
            self.notify("None of these memories is deprecated.")

    def action_forget(self) -> None:
        from .dialogs import ForgetDialog

        targets = self._targets_or_say()
        if not targets:
            return
        ids = [m.id for m in targets]

        def confirmed(reason: str | None) -> None:
            if reason:
                self.notify(f"Forgetting {_plural(len(ids))}: rewriting the data files…", timeout=4)
                self._forget(ids, reason)

        self.app.push_screen(ForgetDialog(ids), confirmed)

    # --- workers ------------------------------------------------------------------------------------

    @work(thread=True, exit_on_error=False, group="memory-actions", description="Pinning")
    def _pin(self, ids: list[str], pin: bool) -> None:
        for memory_id in ids:
            self.store.pin(memory_id, self.scope, pinned=pin)
        self.post_message(self.Changed(ids, f"{'Pinned' if pin else 'Unpinned'} {_plural(len(ids))}."))

    @work(thread=True, exit_on_error=False, group="memory-actions", description="Saving the edit")
    def _edit(self, memory_id: str, edited: Edited) -> None:
        said = []
        if edited.text is not None:
            memory = self.store.edit(memory_id, edited.text, agent="user", scope=self.scope)
            said.append(f"Saved version {memory.version} of {memory_id}.")
        if edited.expiry_changed:
            memory = self.store.set_expiry(memory_id, edited.expires_at, self.scope)
            when = memory.expires_at
            said.append(f"Expires {when:%Y-%m-%d %H:%M} UTC." if when else "No expiry of its own.")
        self.post_message(self.Changed([memory_id], " ".join(said)))

    @work(thread=True, exit_on_error=False, group="memory-actions", description="Deprecating")
    def _deprecate(self, ids: list[str], reason: str, superseded_by: str | None) -> None:
        for memory_id in ids:
            self.store.deprecate(memory_id, reason, superseded_by=superseded_by, scope=self.scope)
        self.post_message(self.Changed(ids, f"Deprecated {_plural(len(ids))}."))

    @work(thread=True, exit_on_error=False, group="memory-actions", description="Undeprecating")
    def _undeprecate(self, ids: list[str]) -> None:
        for memory_id in ids:
            self.store.undeprecate(memory_id, self.scope)
        self.post_message(self.Changed(ids, f"{_plural(len(ids))} active again."))

    @work(thread=True, exclusive=True, exit_on_error=False, group="forget", description="Forgetting")
    def _forget(self, ids: list[str], reason: str) -> None:
        def progress(step: str) -> None:
            self.post_message(self.Progress(step))

        receipt = self.store.forget(ids, reason, scope=self.scope, progress=progress)
        self.post_message(self.Forgotten(ids, receipt))

    @on(Changed)
    def _changed(self, message: Changed) -> None:
        self.notify(message.summary, timeout=3)
        self.note_change()
        self.after_change(message.ids, message.removed)
        self.refresh_bindings()

    @on(Progress)
    def _progress(self, message: Progress) -> None:
        self.notify(f"Forgetting: {message.step}", timeout=2)

    @on(Forgotten)
    def _forgotten(self, message: Forgotten) -> None:
        from .dialogs import ReceiptDialog

        self.note_change()
        self.after_change(message.ids, True)
        self.refresh_bindings()
        self.app.push_screen(ReceiptDialog(message.receipt))

    def worker_failed(self, worker: Worker[Any], text: str) -> None:
        if worker.group in ("memory-actions", "forget"):
            # A batch may have failed half way: show what the store holds now.
            self.note_change()
            self.after_change([], False)
