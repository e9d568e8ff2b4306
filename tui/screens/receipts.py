"""Deletion receipts: the list, one receipt in full, its signature and chain checked, exported as JSON or Markdown.

All reading and checking goes through :class:`memdeck.core.receipts.ReceiptBook`, in thread workers.
A view limited to some principals lists only their receipts.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.coordinate import Coordinate
from textual.message import Message
from textual.widgets import Button, DataTable, Header, Input, Label, Markdown, Static
from textual.widgets.data_table import CellDoesNotExist
from textual.worker import Worker, get_current_worker

from memdeck.core.errors import MemdeckError
from memdeck.core.filters import Scope
from memdeck.core.receipts import ReceiptBook, VerifyReport

from ..widgets.key_footer import KeyFooter
from .base import MemdeckScreen

if TYPE_CHECKING:
    from memdeck.core.receipts import Receipt, ReceiptRow
    from memdeck.core.store import Store

OK_MARK = "✓"
BAD_MARK = "✗"


class ReceiptsScreen(MemdeckScreen):
    """Signed deletion receipts: list, open, verify, export."""

    TITLE = "Deletion receipts"
    COMMAND_PREFIX = "Receipts"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "v",
            "verify",
            "Verify",
            id="receipts.verify",
            tooltip="Check the highlighted receipt's signature, key and link to the receipt before it",
        ),
        Binding(
            "c",
            "verify_chain",
            "Verify chain",
            id="receipts.verify_chain",
            tooltip="Check every receipt and the chain between them (gaps, forks, HEAD)",
        ),
        Binding(
            "j",
            "export('json')",
            "Export JSON",
            id="receipts.export_json",
            tooltip="Write the signed receipt (exact bytes) to the export folder",
        ),
        Binding(
            "m",
            "export('md')",
            "Export Markdown",
            id="receipts.export_md",
            tooltip="Write a readable summary of the receipt to the export folder",
        ),
        Binding("ctrl+r", "refresh", "Refresh", id="receipts.refresh", tooltip="Read the receipts again"),
    ]

    @dataclass
    class Loaded(Message):
        """The receipt list (in scope), each receipt's signature check and the chain check."""

        rows: list[ReceiptRow]
        receipts: dict[str, Receipt]
        problems: dict[str, list[str]]
        chain: VerifyReport

    @dataclass
    class Verified(Message):
        """One receipt file was verified in full."""

        receipt_id: str
        report: VerifyReport

    @dataclass
    class Exported(Message):
        """A receipt was written to a file."""

        receipt_id: str
        path: Path
        fmt: str

    def __init__(
        self,
        store: Store | None = None,
        scope: Scope | None = None,
        *,
        export_dir: Path | str | None = None,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(store, scope, name=name, id=id, classes=classes)
        self.book = ReceiptBook(Path(self.store.root))
        self._export_dir = Path(export_dir) if export_dir is not None else Path.cwd()
        self.rows: list[ReceiptRow] = []
        self.receipts: dict[str, Receipt] = {}
        self.problems: dict[str, list[str]] = {}
        self.verified: dict[str, VerifyReport] = {}
        self.chain: VerifyReport | None = None
        self.exported: list[Path] = []

    def compose(self) -> ComposeResult:
        yield Header(icon="≡")
        with Horizontal(id="receipts-body"):
            with Vertical(id="receipts-left"):
                yield Static("Reading receipts…", id="receipts-chain")
                yield DataTable(id="receipts-list", cursor_type="row", zebra_stripes=True)
            with VerticalScroll(id="receipts-right"):
                yield Static(id="receipts-verify")
                yield Markdown("Highlight a receipt to read it.", id="receipts-markdown")
        with Horizontal(id="receipts-export-row"):
            yield Label("export to")
            yield Input(str(self._export_dir), placeholder="folder", id="receipts-export-dir", compact=True)
            yield Button("JSON", id="receipts-export-json", compact=True)
            yield Button("Markdown", id="receipts-export-md", compact=True)
        yield Static(id="receipts-status")
        yield KeyFooter()

    def data_changed(self) -> None:
        # A forget elsewhere in the app writes a receipt: read the list again.
        self.action_refresh()

    def on_mount(self) -> None:
        table = self.query_one("#receipts-list", DataTable)
        table.add_column("signed", key="signed")
        table.add_column("receipt", key="receipt")
        table.add_column("issued (UTC)", key="issued")
        table.add_column("principal", key="principal")
        table.add_column("reason", key="reason")
        table.add_column("erased", key="erased")
        table.add_column("derived", key="derived")
        table.add_column("checks", key="checks")
        self.action_refresh()
        table.focus()

    # -- loading --

    def action_refresh(self) -> None:
        self.load_receipts()

    @work(
        thread=True, exclusive=True, group="receipts-load", exit_on_error=False, description="read receipts"
    )
    def load_receipts(self) -> None:
        worker = get_current_worker()
        rows = [
            r
            for r in self.book.list()
            if isinstance(r["principal"], str) and self.scope.allows(r["principal"])
        ]
        receipts: dict[str, Receipt] = {}
        problems: dict[str, list[str]] = {}
        for row in rows:
            rid = str(row["receipt_id"])
            try:
                receipt = self.book.get(rid)
            except MemdeckError as exc:
                problems[rid] = [str(exc)]
                continue
            receipts[rid] = receipt
            problems[rid] = self.book.verify_receipt(receipt)
        chain = self.book.verify_chain()
        if not worker.is_cancelled:
            self.post_message(self.Loaded(rows, receipts, problems, chain))

    @on(Loaded)
    def _loaded(self, message: Loaded) -> None:
        self.rows, self.receipts, self.problems, self.chain = (
            message.rows,
            message.receipts,
            message.problems,
            message.chain,
        )
        self.verified = {}  # a refresh re-reads the files; earlier full checks may be out of date
        table = self.query_one("#receipts-list", DataTable)
        keep = self.highlighted_id
        table.clear()
        # Newest first: the chain order reversed.
        for row in reversed(self.rows):
            rid = str(row["receipt_id"])
            table.add_row(
                self._mark(rid),
                rid[:12],
                str(row.get("issued_at") or "")[:19].replace("T", " "),
                Text(row.get("principal") or ""),
                _short(row.get("reason")),
                str(row.get("n_deleted", 0)),
                str(row.get("n_cascade", 0)),
                Text("all passed", style="green")
                if row.get("all_checks_passed")
                else Text("FAILED", style="red"),
                key=rid,
            )
        ids = [str(r["receipt_id"]) for r in reversed(self.rows)]
        if keep in ids:
            table.move_cursor(row=ids.index(keep))
        self._show_chain()
        if not self.rows:
            self.query_one("#receipts-markdown", Markdown).update(
                "No deletion receipts yet. Each forget writes one, signed and chained to the one before."
            )
        self._show_detail()

    def _mark(self, receipt_id: str) -> Text:
        report = self.verified.get(receipt_id)
        bad = (not report.ok) if report is not None else bool(self.problems.get(receipt_id))
        return Text(BAD_MARK, style="bold red") if bad else Text(OK_MARK, style="bold green")

    def _show_chain(self) -> None:
        chain = self.chain
        widget = self.query_one("#receipts-chain", Static)
        if chain is None:
            return
        shown = len(self.rows)
        scope_note = "" if self.scope.is_everyone else f" ({shown} in this view)"
        if chain.ok:
            receipts = f"{chain.checked} receipt{'' if chain.checked == 1 else 's'}"
            widget.update(
                Text(
                    f"{OK_MARK} chain intact: {receipts}, every signature and link checks out{scope_note}",
                    style="green",
                )
            )
        else:
            text = Text(
                f"{BAD_MARK} chain has {len(chain.problems)} problem(s) across {chain.checked} "
                f"receipts{scope_note}",
                style="bold red",
            )
            if self.scope.is_everyone:
                for problem in chain.problems[:8]:
                    text.append(f"\n  • {problem}", style="red")
                if len(chain.problems) > 8:
                    text.append(f"\n  … and {len(chain.problems) - 8} more (memdeck receipts verify --all)")
            widget.update(text)
        widget.set_class(chain.ok, "-ok")
        widget.set_class(not chain.ok, "-bad")

    # -- one receipt --

    @property
    def highlighted_id(self) -> str | None:
        table = self.query_one("#receipts-list", DataTable)
        if table.row_count == 0:
            return None
        row = table.cursor_row
        if not 0 <= row < table.row_count:
            return None
        key = table.coordinate_to_cell_key(Coordinate(row, 0)).row_key.value
        return str(key) if key is not None else None

    @on(DataTable.RowHighlighted, "#receipts-list")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_detail()

    @on(DataTable.RowSelected, "#receipts-list")
    def _selected(self, event: DataTable.RowSelected) -> None:
        self.action_verify()

    def _show_detail(self) -> None:
        rid = self.highlighted_id
        verdict = self.query_one("#receipts-verify", Static)
        if rid is None:
            verdict.update("")
            return
        receipt = self.receipts.get(rid)
        if receipt is None:
            verdict.update(Text("\n".join(self.problems.get(rid, ["cannot read this receipt"])), style="red"))
            return
        self.query_one("#receipts-markdown", Markdown).update(self.book.to_markdown(receipt))
        report = self.verified.get(rid)
        problems = report.problems if report is not None else self.problems.get(rid, [])
        if problems:
            text = Text(f"{BAD_MARK} does not verify", style="bold red")
            for p in problems:
                text.append(f"\n  • {p}", style="red")
        elif report is not None:
            text = Text(
                f"{OK_MARK} verified: signature, store key and link to the previous receipt", style="green"
            )
            for w in report.warnings:
                text.append(f"\n  ! {w}", style="yellow")
        else:
            text = Text(f"{OK_MARK} signature valid (press v to check its chain link too)", style="green")
        verdict.update(text)

    def action_verify(self) -> None:
        rid = self.highlighted_id
        if rid is None:
            self._status("no receipt to verify", error=True)
            return
        self.verify_one(rid)

    @work(thread=True, group="receipts-verify", exit_on_error=False, description="verify a receipt")
    def verify_one(self, receipt_id: str) -> None:
        report = self.book.verify_file(self.book.path_of(receipt_id))
        self.post_message(self.Verified(receipt_id, report))

    @on(Verified)
    def _verified(self, message: Verified) -> None:
        self.verified[message.receipt_id] = message.report
        table = self.query_one("#receipts-list", DataTable)
        try:
            table.update_cell(message.receipt_id, "signed", self._mark(message.receipt_id))
        except CellDoesNotExist:  # the row went away with a refresh
            pass
        if message.receipt_id == self.highlighted_id:
            self._show_detail()
        word = "verified" if message.report.ok else "does NOT verify"
        self._status(f"receipt {message.receipt_id[:12]} {word}", error=not message.report.ok)

    def action_verify_chain(self) -> None:
        self._status("verifying the chain…")
        self.load_receipts()

    # -- export --

    def action_export(self, fmt: str) -> None:
        rid = self.highlighted_id
        if rid is None:
            self._status("no receipt to export", error=True)
            return
        folder = self.query_one("#receipts-export-dir", Input).value.strip()
        if not folder:
            self._status("type a folder to export to", error=True)
            return
        self.export_one(rid, Path(folder).expanduser(), fmt)

    @work(thread=True, group="receipts-export", exit_on_error=False, description="export a receipt")
    def export_one(self, receipt_id: str, folder: Path, fmt: str) -> None:
        if folder.exists() and not folder.is_dir():
            raise MemdeckError(f"{folder} is a file; give a folder to export to")
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise MemdeckError(f"cannot create {folder}: {exc.strerror}") from None
        path = self.book.export(receipt_id, folder, fmt)
        self.post_message(self.Exported(receipt_id, path, fmt))

    @on(Exported)
    def _exported(self, message: Exported) -> None:
        self.exported.append(message.path)
        kind = "signed JSON" if message.fmt == "json" else "Markdown summary"
        self._status(f"wrote the {kind} to {message.path}")
        self.notify(f"Wrote {message.path}", title="Receipts")

    @on(Button.Pressed, "#receipts-export-json")
    def _export_json(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_export("json")

    @on(Button.Pressed, "#receipts-export-md")
    def _export_md(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_export("md")

    # -- status --

    def _status(self, text: str, error: bool = False) -> None:
        status = self.query_one("#receipts-status", Static)
        status.update(Text(text))  # messages can quote stored text: never markup
        status.set_class(error, "-bad")

    def worker_failed(self, worker: Worker[Any], text: str) -> None:
        self._status(text, error=True)


def _short(text: Any, width: int = 40) -> Text:
    """A table cell of a stored reason, as plain text: brackets in it are never read as markup."""
    flat = " ".join(str(text or "").split())
    return Text(flat if len(flat) <= width else flat[: width - 1] + "…")


__all__ = ["ReceiptsScreen"]
