"""Issue #14 item 7: exports write only regular files, created 0600; a FIFO, device or link is refused."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from memdeck.cli import main
from memdeck.core.errors import MemdeckError
from memdeck.core.exchange import export_jsonl
from memdeck.core.filters import Scope
from memdeck.core.forget import forget
from memdeck.core.receipts import ReceiptBook
from memdeck.core.store import Store


@pytest.fixture
def receipt_id(store: Store) -> str:
    m = store.remember("something to forget", tier="semantic", principal="alice").memory
    return str(forget(store.engine, [m.id], reason="test", scope=Scope.of("alice"))["receipt_id"])


def _specials(tmp_path: Path) -> dict[str, Path]:
    target = tmp_path / "victim.txt"
    target.write_text("keep me\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    return {"a symbolic link": link, "a FIFO": fifo, "a device": Path("/dev/null")}


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_memory_export_is_created_0600(store: Store, tmp_path: Path) -> None:
    store.remember("private note", tier="semantic", principal="alice")
    out = tmp_path / "out.jsonl"
    assert export_jsonl(store.engine, out) == 1
    assert _mode(out) == 0o600 and out.is_file()
    out.chmod(0o644)
    export_jsonl(store.engine, out)  # replacing a regular file is fine, and it is private again
    assert _mode(out) == 0o600


def test_memory_export_refuses_links_fifos_and_devices(store: Store, tmp_path: Path) -> None:
    store.remember("private note", tier="semantic", principal="alice")
    for kind, path in _specials(tmp_path).items():
        before = os.lstat(path)
        with pytest.raises(MemdeckError, match=f"it is {kind}"):
            export_jsonl(store.engine, path)
        after = os.lstat(path)
        assert stat.S_IFMT(after.st_mode) == stat.S_IFMT(before.st_mode) and after.st_ino == before.st_ino
    assert (tmp_path / "victim.txt").read_text() == "keep me\n"
    assert not [p for p in tmp_path.iterdir() if ".tmp" in p.name]


def test_receipt_export_is_0600_and_refuses_specials(store: Store, receipt_id: str, tmp_path: Path) -> None:
    book = ReceiptBook(store.root)
    out = book.export(receipt_id, tmp_path / "r.json")
    assert _mode(out) == 0o600
    for kind, path in _specials(tmp_path).items():
        with pytest.raises(MemdeckError, match=f"it is {kind}"):
            book.export(receipt_id, path)
        assert not path.is_file() or path.is_symlink() or path == Path("/dev/null")
    assert (tmp_path / "victim.txt").read_text() == "keep me\n"
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_the_cli_refuses_a_fifo_with_one_line_and_stdout_still_works(
    store: Store, tmp_path: Path, capsys
) -> None:
    store.remember("private note", tier="semantic", principal="alice")
    store.close()
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    assert main(["--store", str(store.root), "export", str(fifo)]) != 0
    out, err = capsys.readouterr()
    assert err.startswith("memdeck: error: refusing to write") and err.count("\n") == 1
    assert main(["--store", str(store.root), "export", "-"]) == 0
    out, _ = capsys.readouterr()
    assert "private note" in out
