"""Dialogs: edit, deprecate, forget (with its plan), receipt, confirm, and the inspector's memory-id prompt."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar

from rich.json import JSON
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Button, Input, Label, Static, TextArea
from textual.worker import Worker

from memdeck.core.errors import MemdeckError
from memdeck.core.forget import ForgetPlan
from memdeck.core.recall.traces import sessions_using_any
from memdeck.core.receipts import Receipt
from memdeck.core.records import iso
from memdeck.core.storage.expiry import parse_expiry

from ..format import one_line
from .base import MemdeckModal


def _memory_line(m: Any, width: int = 70) -> Text:
    line = Text(no_wrap=True, overflow="ellipsis")
    line.append(f"{m.tier:<10}", style="bold")
    line.append(f" {m.id}  ", style="dim")
    line.append(f"{m.principal}  ", style="italic")
    text = one_line(m.text)
    line.append(text if len(text) <= width else text[: width - 1] + "…")
    return line


class ConfirmDialog(MemdeckModal):
    """A yes/no question; dismisses with True or False."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "answer(False)", "No", id="confirm.no"),
        Binding("y", "answer(True)", "Yes", id="confirm.yes"),
    ]

    def __init__(self, question: str, yes: str = "Yes", no: str = "No") -> None:
        super().__init__()
        self.question, self.yes, self.no = question, yes, no

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog small"):
            yield Label(Text(self.question), classes="dialog-title")
            with Horizontal(classes="dialog-buttons"):
                yield Button(self.yes, variant="error", id="yes")
                yield Button(self.no, id="no")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)


@dataclass(frozen=True)
class Edited:
    """What the edit dialog changed: the new text (None: unchanged) and, when ``expiry_changed``, the new
    expiry (None: no expiry of its own)."""

    text: str | None
    expiry_changed: bool = False
    expires_at: datetime | None = None


class EditDialog(MemdeckModal):
    """Edit a memory's text and its own expiry; dismisses with :class:`Edited`, or None."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "save", "Save", priority=True, id="edit.save"),
        Binding("escape", "cancel", "Cancel", id="edit.cancel"),
    ]

    def __init__(self, memory: Any) -> None:
        super().__init__()
        self.memory = memory
        self.expiry_text = iso(memory.expires_at) or ""

    def compose(self) -> ComposeResult:
        m = self.memory
        with Vertical(classes="dialog wide"):
            yield Label(Text(f"Edit {m.tier} memory {m.id}"), classes="dialog-title")
            yield Label(
                Text(
                    f"version {m.version} → {m.version + 1}: the old text goes to the history and the "
                    "memory is embedded again"
                ),
                classes="dialog-help",
            )
            yield TextArea(m.text, id="edit-text", soft_wrap=True)
            yield Label(
                "Expires (7d, 12h, an ISO date or time; empty: only its tier's TTL)", classes="dialog-field"
            )
            yield Input(self.expiry_text, placeholder="e.g. 7d, 12h, 2027-01-01", id="edit-expiry")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Save (ctrl+s)", variant="primary", id="save")
                yield Button("Cancel (esc)", id="cancel")

    def on_mount(self) -> None:
        area = self.query_one(TextArea)
        area.move_cursor(area.document.end)  # most edits append or fix the end
        area.focus()

    def _changed(self) -> bool:
        expiry = self.query_one("#edit-expiry", Input).value
        return self.query_one(TextArea).text != self.memory.text or expiry.strip() != self.expiry_text

    @on(Input.Submitted, "#edit-expiry")
    @on(Button.Pressed, "#save")
    def action_save(self) -> None:
        text = self.query_one(TextArea).text
        if not text.strip():
            self.notify("The text is empty; use forget to remove a memory.", severity="warning")
            return
        field = self.query_one("#edit-expiry", Input)
        typed = field.value.strip()
        expires_at = None
        if typed != self.expiry_text:
            try:
                expires_at = parse_expiry(typed)
            except MemdeckError as exc:
                field.add_class("-invalid")
                field.focus()
                self.notify(str(exc), severity="error")
                return
        new_text = None if text == self.memory.text else text
        if new_text is None and typed == self.expiry_text:
            self.dismiss(None)
            return
        self.dismiss(Edited(new_text, typed != self.expiry_text, expires_at))

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        if not self._changed():
            self.dismiss(None)
            return

        def answered(discard: bool | None) -> None:
            if discard:
                self.dismiss(None)

        self.app.push_screen(
            ConfirmDialog("Discard your changes?", yes="Discard", no="Keep editing"), answered
        )


class DeprecateDialog(MemdeckModal):
    """Ask for a reason and an optional superseding memory; dismisses with (reason, id or None), or None."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel", id="deprecate.cancel")]

    def __init__(self, memories: list[Any]) -> None:
        super().__init__()
        self.memories = memories

    def compose(self) -> ComposeResult:
        n = len(self.memories)
        with Vertical(classes="dialog"):
            yield Label(Text(f"Deprecate {n} memor{'y' if n == 1 else 'ies'}"), classes="dialog-title")
            for m in self.memories[:5]:
                yield Label(_memory_line(m, 60), classes="dialog-item")
            if n > 5:
                yield Label(Text(f"… and {n - 5} more"), classes="dialog-item")
            yield Label("Reason (required)", classes="dialog-field")
            yield Input(placeholder="e.g. outdated, wrong, replaced", id="reason")
            yield Label("Superseded by (optional memory id of the same principal)", classes="dialog-field")
            yield Input(placeholder="sem_…", id="superseded")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Deprecate", variant="warning", id="ok")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#reason", Input).focus()

    @on(Input.Submitted)
    @on(Button.Pressed, "#ok")
    def _ok(self) -> None:
        reason = self.query_one("#reason", Input).value.strip()
        if not reason:
            self.query_one("#reason", Input).add_class("-invalid")
            self.notify("A reason is required.", severity="warning")
            return
        superseded = self.query_one("#superseded", Input).value.strip() or None
        self.dismiss((reason, superseded))

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)


_MAX_SESSIONS = 20  # sessions listed in a forget's preview; the rest are counted


class ForgetDialog(MemdeckModal):
    """Shows everything a forget removes (and what depends on it); dismisses with the reason, or None."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel", id="forget.cancel")]

    @dataclass
    class Planned(Message):
        """The forget plan is ready."""

        plan: ForgetPlan
        sessions: list[dict[str, Any]]  # the sessions that were given any of the memories

    def __init__(self, ids: list[str]) -> None:
        super().__init__()
        self.ids = ids
        self.plan: ForgetPlan | None = None
        self.sessions: list[dict[str, Any]] = []

    def compose(self) -> ComposeResult:
        n = len(self.ids)
        with Vertical(classes="dialog wide", id="forget-dialog"):
            yield Label(Text(f"Forget {n} memor{'y' if n == 1 else 'ies'} for good"), classes="dialog-title")
            yield Label("Working out what will be removed…", id="forget-summary", classes="dialog-help")
            yield VerticalScroll(id="forget-plan")
            yield Label(
                "Reason (recorded in the signed deletion receipt; type to replace)", classes="dialog-field"
            )
            # Focused at once with its text selected, so typing replaces it; Enter in it never forgets.
            yield Input(value="user request", id="reason", select_on_focus=True)
            with Horizontal(classes="dialog-buttons"):
                yield Button("Forget", variant="error", id="ok", disabled=True)
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#reason", Input).focus()
        self._plan(self.ids)

    @work(
        thread=True,
        exclusive=True,
        exit_on_error=False,
        group="forget-plan",
        description="Planning the forget",
    )
    def _plan(self, ids: list[str]) -> None:
        plan = self.store.plan_forget(ids, self.scope)
        removed = [m.id for m in plan.deleted] + [m.id for m, _ in plan.cascade_delete]
        self.post_message(self.Planned(plan, sessions_using_any(self.store.engine, removed, self.scope)))

    def worker_failed(self, worker: Worker[Any], text: str) -> None:
        # The dialog stays open (only Cancel works) and says why nothing can be forgotten.
        self.query_one("#forget-summary", Label).update(
            Text(f"cannot plan the forget: {text}", style="bold red")
        )
        self.query_one("#forget-plan").display = False
        self.query_one("#reason", Input).disabled = True
        self.query_one("#cancel", Button).focus()

    @on(Planned)
    def _planned(self, message: Planned) -> None:
        summary = self.query_one("#forget-summary", Label)
        self.plan = plan = message.plan
        body = self.query_one("#forget-plan", VerticalScroll)
        sections = [
            ("Deleted", [(m, "") for m in plan.deleted]),
            ("Also deleted: depends only on what is forgotten", list(plan.cascade_delete)),
            ("Updated: loses a source, keeps the rest", list(plan.cascade_update)),
        ]
        for title, entries in sections:
            body.mount(Label(Text(f"{title} ({len(entries)})", style="bold"), classes="plan-heading"))
            for memory, why in entries:
                body.mount(Label(_memory_line(memory, 60), classes="plan-item"))
                if why:
                    body.mount(Label(Text(f"    {why}", style="italic"), classes="plan-item"))
        self.sessions = used = message.sessions
        body.mount(Label(Text(f"Used in sessions ({len(used)})", style="bold"), classes="plan-heading"))
        for entry in used[:_MAX_SESSIONS]:
            line = Text(no_wrap=True, overflow="ellipsis")
            line.append(f"{entry['agent'] or '(no agent)'}", style="bold")
            line.append(f"  session {entry['session'] or '(none)'}  ")
            line.append(
                f"given {entry['times']} time{'s' if entry['times'] != 1 else ''}, last {entry['last'][:16]}"
                f" UTC, {len(entry['ids'])} of these memories",
                style="dim",
            )
            body.mount(Label(line, classes="plan-item"))
        if len(used) > _MAX_SESSIONS:
            body.mount(
                Label(Text(f"    and {len(used) - _MAX_SESSIONS} more", style="italic"), classes="plan-item")
            )
        if not used:
            body.mount(Label(Text("    no agent was given these memories", style="dim"), classes="plan-item"))
        history = plan.history_versions
        history_text = (
            f"{history} earlier version{'s' if history != 1 else ''} in the edit history, " if history else ""
        )
        body.mount(
            Label(
                Text(
                    f"Also purged: {history_text}older table versions, index entries, recall traces and "
                    "analytics rows that mention them. A signed receipt is written.",
                    style="dim",
                ),
                classes="plan-note",
            )
        )
        total = len(plan.deleted) + len(plan.cascade_delete)
        summary.update(
            Text(
                f"{total} memor{'y' if total == 1 else 'ies'} will be removed, "
                f"{len(plan.cascade_update)} updated. This cannot be undone."
            )
        )
        self.query_one("#ok", Button).disabled = not plan.deleted

    @on(Input.Submitted, "#reason")
    def _enter(self, event: Input.Submitted) -> None:
        # The safe default: Enter alone never forgets; the Forget button (or tab to it) does.
        event.stop()
        self.notify("Press the Forget button to forget (Enter alone never does).", timeout=4)

    @on(Button.Pressed, "#ok")
    def _ok(self) -> None:
        reason = self.query_one("#reason", Input).value.strip()
        if not reason:
            self.query_one("#reason", Input).add_class("-invalid")
            self.notify("A reason is required.", severity="warning")
            return
        if self.plan is not None:
            self.dismiss(reason)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)


class ReceiptDialog(MemdeckModal):
    """The signed deletion receipt a forget produced."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,enter", "close", "Close", id="receipt.close"),
    ]

    def __init__(self, receipt: Receipt) -> None:
        super().__init__()
        self.receipt = receipt

    def compose(self) -> ComposeResult:
        r = self.receipt
        checks = r.get("checks") or []
        passed = sum(1 for c in checks if c.get("passed"))
        with Vertical(classes="dialog wide", id="receipt-dialog"):
            yield Label(Text(f"Deletion receipt {r.get('receipt_id', '?')}"), classes="dialog-title")
            yield Label(
                Text(
                    f"{len(r.get('deleted') or [])} deleted, {len(r.get('cascade') or [])} cascaded · "
                    f"checks {passed}/{len(checks)} passed · issued {r.get('issued_at', '?')}"
                ),
                classes="dialog-help",
            )
            failed = [str(c.get("name", "?")) for c in checks if not c.get("passed")]
            if failed or r.get("outcome") == "checks_failed":
                yield Label(
                    Text(f"Not verified: failed checks: {', '.join(failed) or '?'}", style="bold red"),
                    id="receipt-failed",
                )
            with VerticalScroll(id="receipt-body"):
                yield Static(JSON(json.dumps(r, ensure_ascii=False, default=str)), id="receipt-json")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Close", variant="primary", id="close")

    @on(Button.Pressed, "#close")
    def action_close(self) -> None:
        self.dismiss(None)


class MemoryIdPrompt(MemdeckModal):
    """Ask for a memory id (the inspector's "why was this not recalled?"); dismisses with it, or None."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="inspector.prompt_cancel"),
    ]

    def __init__(self, title: str, value: str = "") -> None:
        super().__init__()
        self.title_text, self.value = title, value

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog", id="prompt-dialog"):
            yield Label(Text(self.title_text), classes="dialog-title")
            yield Input(self.value, placeholder="memory id, e.g. sem_0123abcd…", id="inspector-prompt-input")

    @on(Input.Submitted)
    def _submit(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)
