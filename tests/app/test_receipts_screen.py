"""The receipts screen: lists receipts issued through ReceiptBook, verifies them, exports JSON and Markdown."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from textual.app import App
from textual.widgets import DataTable, Input

from memdeck.core.filters import Scope
from memdeck.core.receipts import ReceiptBook, verify_file
from memdeck.core.store import Store
from memdeck.tui.screens.receipts import ReceiptsScreen
from tests.appwait import settle as wait

pytestmark = pytest.mark.anyio  # the anyio plugin runs these coroutines on asyncio

SECRET = "alice's door code is 4711"


def issue(book: ReceiptBook, principal: str, n: int) -> dict[str, Any]:
    return book.issue(
        principal=principal,
        reason=f"user request {n}",
        deleted=[
            {
                "id": f"sem_{n}",
                "tier": "semantic",
                "content_sha256": hashlib.sha256(SECRET.encode()).hexdigest(),
                "created_at": "2025-01-02T03:04:05Z",
            }
        ],
        cascade=[{"id": f"sem_derived_{n}", "tier": "semantic", "why": f"only source was sem_{n}"}],
        actions=["delete", "compact", "cleanup_old_versions"],
        checks=[{"name": "no_row_in_any_data_file", "passed": True}],
    )


async def settle(app: App[None], pilot: Any) -> None:
    await wait(app, pilot, 3)


def row_ids(screen: ReceiptsScreen) -> list[str]:
    table = screen.query_one("#receipts-list", DataTable)
    return [str(table.coordinate_to_cell_key((i, 0)).row_key.value) for i in range(table.row_count)]


async def test_lists_verifies_and_exports(store: Store, tmp_path: Path, host) -> None:
    book = ReceiptBook(store.root)
    first = issue(book, "alice", 1)
    second = issue(book, "bob", 2)
    out = tmp_path / "exports"
    screen = ReceiptsScreen(store, Scope.everyone(), export_dir=out)
    app = host(screen)
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(app, pilot)
        assert row_ids(screen) == [second["receipt_id"], first["receipt_id"]]  # newest first
        assert screen.chain is not None and screen.chain.ok
        assert "chain intact" in str(screen.query_one("#receipts-chain").render())

        await pilot.press("v")  # verify the highlighted (newest) receipt, including its link to the first
        await settle(app, pilot)
        report = screen.verified[second["receipt_id"]]
        assert report.ok and report.problems == []
        assert "verified" in str(screen.query_one("#receipts-verify").render())

        await pilot.press("j")
        await pilot.press("m")
        await settle(app, pilot)
        by_suffix = {p.suffix: p for p in screen.exported}
        src = book.path_of(second["receipt_id"])
        assert by_suffix[".json"].read_bytes() == src.read_bytes()  # the exact signed bytes
        assert verify_file(by_suffix[".json"], expected_public_key=book.public_key()).ok
        md = by_suffix[".md"].read_text(encoding="utf-8")
        assert second["receipt_id"] in md and "bob" in md
        assert SECRET not in md and hashlib.sha256(SECRET.encode()).hexdigest() not in md
        assert second["deleted"][0]["content_sha256_salted"] not in md


async def test_a_tampered_receipt_shows_as_failing(store: Store, tmp_path: Path, host) -> None:
    book = ReceiptBook(store.root)
    first = issue(book, "alice", 1)
    issue(book, "alice", 2)
    path = book.path_of(first["receipt_id"])
    receipt = json.loads(path.read_text(encoding="utf-8"))
    receipt["reason"] = "nothing to see here"
    path.write_text(
        json.dumps(receipt, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n",
        encoding="utf-8",
    )
    screen = ReceiptsScreen(store, Scope.everyone(), export_dir=tmp_path)
    app = host(screen)
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(app, pilot)
        assert screen.chain is not None and not screen.chain.ok
        assert screen.problems[first["receipt_id"]]  # its signature no longer matches
        table = screen.query_one("#receipts-list", DataTable)
        assert str(table.get_cell(first["receipt_id"], "signed")) == "✗"
        await pilot.press("down")
        await pilot.press("v")
        await settle(app, pilot)
        assert not screen.verified[first["receipt_id"]].ok
        assert "does not verify" in str(screen.query_one("#receipts-verify").render())


async def test_a_scoped_view_lists_only_its_principals_receipts(store: Store, tmp_path: Path, host) -> None:
    book = ReceiptBook(store.root)
    mine = issue(book, "alice", 1)
    issue(book, "bob", 2)
    issue(book, "x' OR '1'='1", 3)
    screen = ReceiptsScreen(store, Scope.of("alice"), export_dir=tmp_path)
    app = host(screen)
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(app, pilot)
        assert row_ids(screen) == [mine["receipt_id"]]
        assert set(screen.receipts) == {mine["receipt_id"]}


async def test_no_receipts_and_a_bad_export_folder(store: Store, tmp_path: Path, host) -> None:
    screen = ReceiptsScreen(store, Scope.everyone(), export_dir=tmp_path)
    app = host(screen)
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(app, pilot)
        assert row_ids(screen) == []
        await pilot.press("j")  # nothing to export: a message, no crash
        await pilot.pause()
        assert "no receipt" in str(screen.query_one("#receipts-status").render())

    book = ReceiptBook(store.root)
    issue(book, "alice", 1)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    screen = ReceiptsScreen(store, Scope.everyone(), export_dir=blocker)
    app = host(screen)
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(app, pilot)
        assert screen.query_one("#receipts-export-dir", Input).value == str(blocker)
        await pilot.press("j")
        for _ in range(300):  # the export fails in its worker; the failure comes back as a message
            if "is a file" in str(screen.query_one("#receipts-status").render()):
                break
            await pilot.pause(0.01)
        assert "is a file" in str(screen.query_one("#receipts-status").render())
        assert screen.exported == []
        assert blocker.read_text(encoding="utf-8") == "not a folder"


async def test_every_key_is_also_a_palette_command(store: Store, tmp_path: Path, host) -> None:
    screen = ReceiptsScreen(store, Scope.everyone(), export_dir=tmp_path)
    app = host(screen)
    async with app.run_test(size=(150, 40)) as pilot:
        await pilot.pause()
        names = {c.title for c in screen.palette_commands()}
        assert {
            "Receipts: Verify",
            "Receipts: Verify chain",
            "Receipts: Export JSON",
            "Receipts: Export Markdown",
        } <= names
