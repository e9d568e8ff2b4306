"""A failed check is never silent: every door that forgets reports it, `receipts verify` and `doctor` name the
receipt, and `forget --recheck` settles it once the person removed what the checks found.

Each test makes a check fail the way a person would: a copy of the memory's text in a file of their own inside
the store folder (``notes.txt``), which the purge does not know of and the checks find.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from memdeck.cli import main as cli_main
from memdeck.core.errors import IntegrityError
from memdeck.core.forget import forget
from memdeck.core.maintenance.doctor import diagnose
from memdeck.core.receipts import ReceiptBook

TEXT = "Aurelio stores the spare key for the Brackwater cabin under the third flowerpot, code 77Q4X"


@pytest.fixture(autouse=True)
def hash_model(memdeck_home: Path) -> None:
    (memdeck_home / "config.toml").write_text('[embedding]\nmodel = "hash-384"\n')


def _copy_by_hand(store, text: str = TEXT) -> Path:
    notes = Path(store.root) / "notes.txt"
    notes.write_text(f"copied by hand: {text}\n")
    return notes


def _failed_receipt(store) -> dict:
    m = store.remember(TEXT, tier="episodic", principal="alice").memory
    notes = _copy_by_hand(store)
    receipt = forget(store.engine, [m.id], "user request")
    assert receipt["outcome"] == "checks_failed"
    return {"receipt": receipt, "notes": notes}


def test_receipts_verify_prints_the_outcome_and_fails_on_a_failed_purge(store, capsys):
    failed = _failed_receipt(store)["receipt"]
    rid = failed["receipt_id"]
    code = cli_main(["--store", str(store.root), "receipts", "verify", rid])
    out = capsys.readouterr()
    assert code == 5
    assert "signature ok" in out.out and "checks_failed" in out.out and "store_files_clean" in out.out
    assert "not verified" in out.err and len(out.err.strip().splitlines()) == 1
    code = cli_main(["--store", str(store.root), "receipts", "verify", "--all"])
    out = capsys.readouterr()
    assert code == 5 and rid[:12] in out.err


def test_doctor_lists_a_receipt_whose_checks_failed(store):
    rid = _failed_receipt(store)["receipt"]["receipt_id"]
    report = diagnose(store.engine, quiet=True)
    outcome = [p for p in report.problems if p.check == "receipt_outcome"]
    assert len(outcome) == 1 and rid in outcome[0].message and "--recheck" in outcome[0].message
    assert not report.ok


def test_recheck_after_the_copy_is_removed_signs_a_verified_follow_up(store, capsys):
    got = _failed_receipt(store)
    rid = got["receipt"]["receipt_id"]
    # Still there: the recheck fails again, with the same text searched for, and exits 5.
    code = cli_main(["--store", str(store.root), "forget", "--recheck", rid[:12]])
    out = capsys.readouterr()
    assert code == 5 and "store_files_clean" in out.err
    got["notes"].unlink()
    code = cli_main(["--store", str(store.root), "forget", "--recheck", rid[:12], "--json"])
    out = capsys.readouterr()
    follow = json.loads(out.out)
    assert code == 0, out.err
    assert follow["outcome"] == "verified" and follow["trigger"] == "recheck" and follow["rechecks"] == rid
    names = {c["name"] for c in follow["checks"]}
    assert {"store_files_clean", "no_row_in_any_data_file"} <= names
    assert "needles_available" not in names  # the kept texts were searched for (the check appears when lost)
    assert not (Path(store.root) / "keys" / "recheck" / f"{rid}.secret").exists()  # the kept texts are gone
    # The chain holds both; the first is settled; verify and doctor are content.
    code = cli_main(["--store", str(store.root), "receipts", "verify", "--all"])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "settled by verified recheck" in out.out
    assert not [p for p in diagnose(store.engine, quiet=True).problems if p.check.startswith("receipt")]
    book = ReceiptBook(store.root)
    rows = book.list()  # the purge, the recheck that failed, the recheck that verified
    assert [r["outcome"] for r in rows] == ["checks_failed", "checks_failed", "verified"]
    assert rows[0]["settled_by"] == rows[1]["settled_by"] == rows[2]["receipt_id"]


def test_a_recheck_finds_text_put_back_after_a_verified_purge_only_by_id_when_no_text_was_kept(store):
    # A verified purge keeps no texts; a recheck of it still checks ids and says the texts are not available.
    m = store.remember(TEXT, tier="episodic", principal="alice").memory
    receipt = forget(store.engine, [m.id], "user request")
    assert receipt["outcome"] == "verified"
    from memdeck.core.forget.recheck import recheck

    follow = recheck(store.engine, receipt["receipt_id"])
    failed = [c["name"] for c in follow["checks"] if not c["passed"]]
    assert failed == ["needles_available"]


def test_sync_that_forgets_with_a_failed_check_exits_non_zero(store, tmp_path, capsys):
    notes = tmp_path / "notes"
    notes.mkdir()
    page = notes / "cabin.md"
    page.write_text(f"# Cabin\n\n## Key\n\n{TEXT}\n\n## Garden\n\nWater the tomatoes on Sundays.\n")
    args = ["--store", str(store.root), "sync", str(notes), "--principal", "alice"]
    assert cli_main(args) == 0
    capsys.readouterr()
    _copy_by_hand(store)
    page.write_text("# Cabin\n\n## Garden\n\nWater the tomatoes on Sundays.\n")
    code = cli_main(args)
    out = capsys.readouterr()
    assert code == 5, out
    assert "failed checks" in out.err and "--recheck" in out.err
    assert "NOT verified" in out.out


def test_mcp_forget_with_a_failed_check_is_a_tool_error(store):
    from memdeck.cli.mcp import build_server

    m = store.remember(TEXT, tier="episodic", principal="alice").memory
    _copy_by_hand(store)
    root = store.root
    store.close()
    server = build_server("alice", "agent", root, preload=False)

    async def call() -> object:
        return await server.call_tool("forget", {"ids": [m.id], "reason": "user asked"})

    with pytest.raises(Exception, match="not verified") as err:
        asyncio.run(call())
    assert "store_files_clean" in str(err.value)


def test_the_langgraph_store_raises_when_a_delete_is_not_verified(store):
    from memdeck.integrations.langgraph import MemdeckStore

    lg = MemdeckStore(store)
    lg.put(("alice", "notes"), "cabin", {"text": TEXT})
    _copy_by_hand(store)
    with pytest.raises(IntegrityError, match="not verified"):
        lg.delete(("alice", "notes"), "cabin")
    assert (
        lg.get(("alice", "notes"), "cabin") is None
    )  # deleted all the same: the error says it is not proven


def test_maintain_that_evicts_with_a_failed_check_exits_non_zero(store, capsys):
    from datetime import UTC, datetime, timedelta

    store.remember(
        TEXT, tier="episodic", principal="alice", expires_at=datetime.now(UTC) + timedelta(seconds=1)
    )
    _copy_by_hand(store)
    import time

    time.sleep(1.5)
    code = cli_main(["--store", str(store.root), "maintain"])
    out = capsys.readouterr()
    assert code != 0, out
    assert "failed checks" in out.err and "checks_failed" in out.out


def test_the_agents_sdk_session_raises_when_clearing_is_not_verified(store):
    from memdeck.integrations.openai_agents import MemdeckSession

    session = MemdeckSession(store, "chat-1", principal="alice")
    session.add_items_sync([{"role": "user", "content": TEXT}])
    _copy_by_hand(store)
    with pytest.raises(IntegrityError, match="not verified"):
        session.clear_session_sync()
    assert session.get_items_sync() == []


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_the_app_shows_a_forget_that_is_not_verified(store, anyio_backend):
    from memdeck.core.filters import Scope
    from memdeck.tui.app import MemdeckApp
    from memdeck.tui.screens.dialogs import ReceiptDialog

    m = store.remember(TEXT, tier="episodic", principal="alice").memory
    _copy_by_hand(store)
    app = MemdeckApp(store=store, scope=Scope.everyone())
    async with app.run_test(size=(140, 42)) as pilot:
        for _ in range(4):
            await app.workers.wait_for_complete()
            await pilot.pause()
        await pilot.press("x")
        for _ in range(4):
            await app.workers.wait_for_complete()
            await pilot.pause()
        await pilot.click("#ok")
        for _ in range(6):
            await app.workers.wait_for_complete()
            await pilot.pause()
        assert isinstance(app.screen, ReceiptDialog)
        shown = str(app.screen.query_one("#receipt-failed").render())
        assert "Not verified" in shown and "store_files_clean" in shown
    with pytest.raises(Exception, match="no memory"):
        store.get(m.id)
