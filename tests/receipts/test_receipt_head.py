"""Issue #14 item 13: a receipt outside a store is checked against a pinned key, and HEAD is signed."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from memdeck.cli import main
from memdeck.core.receipts import ReceiptBook, canonical_json, verify_file
from memdeck.core.receipts.format import _b64, sha256_hex
from memdeck.core.receipts.keys import _public_b64


def _issue(book: ReceiptBook, n: int) -> dict:
    return book.issue(
        principal="alice",
        reason=f"user request {n}",
        deleted=[
            {
                "id": f"m{n}",
                "tier": "episodic",
                "content_sha256": hashlib.sha256(str(n).encode()).hexdigest(),
                "created_at": "2025-01-02T03:04:05Z",
            }
        ],
        cascade=[],
        actions=["delete"],
        checks=[{"name": "no_row_in_any_data_file", "passed": True}],
    )


@pytest.fixture
def book(tmp_path: Path) -> ReceiptBook:
    return ReceiptBook(tmp_path / "store")


def _forged_copy(tmp_path: Path, receipt: dict) -> tuple[Path, str]:
    """The same receipt re-signed with someone else's key, copied outside any store."""
    key = Ed25519PrivateKey.generate()
    body = {k: v for k, v in receipt.items() if k != "signature"}
    body["public_key"] = _public_b64(key)
    forged = {**body, "signature": _b64(key.sign(canonical_json(body)))}
    out = tmp_path / "elsewhere" / "r.json"
    out.parent.mkdir()
    out.write_bytes(canonical_json(forged) + b"\n")
    return out, body["public_key"]


def test_a_receipt_outside_a_store_is_checked_against_the_pinned_key(
    book: ReceiptBook, tmp_path: Path, capsys
) -> None:
    genuine = _issue(book, 1)
    forged, forged_key = _forged_copy(tmp_path, genuine)
    assert verify_file(forged).ok  # only the embedded key: fine on its own, so the key is printed
    assert verify_file(forged).key_source == "embedded"
    assert not verify_file(forged, book.public_key()).ok

    assert main(["receipts", "verify", str(forged), "--public-key", book.public_key()]) != 0
    _, err = capsys.readouterr()
    assert "not this store's receipt key" in err

    copy = tmp_path / "elsewhere" / "genuine.json"
    shutil.copy(book.path_of(genuine["receipt_id"]), copy)
    assert main(["receipts", "verify", str(copy), "--public-key", book.public_key()]) == 0
    out, _ = capsys.readouterr()
    assert f"key checked: {book.public_key()} (the key given with --public-key)" in out

    assert main(["receipts", "verify", str(forged)]) == 0
    out, err = capsys.readouterr()
    assert f"key checked: {forged_key} (the key embedded in the receipt only)" in out
    assert "pin it with --public-key" in err

    assert main(["receipts", "verify", str(copy), "--public-key", "not base64!"]) != 0
    _, err = capsys.readouterr()
    assert err.startswith("memdeck: error: --public-key") and err.count("\n") == 1


def test_deleting_the_newest_receipt_and_rewriting_head_unsigned_is_detected(book: ReceiptBook) -> None:
    _issue(book, 1)
    second = _issue(book, 2)
    third = _issue(book, 3)
    assert book.verify_chain().ok and book.verify_chain().head_count == 3
    head = json.loads((book.dir / "HEAD").read_text())
    assert head["count"] == 3 and head["sha256"] == sha256_hex(canonical_json(third)) and "signature" in head
    book.path_of(third["receipt_id"]).unlink()
    forged = {
        "receipt_id": second["receipt_id"],
        "sha256": sha256_hex(canonical_json(second)),
        "file": book.path_of(second["receipt_id"]).name,
        "count": 2,
    }
    (book.dir / "HEAD").write_bytes(canonical_json(forged) + b"\n")
    report = book.verify_chain()
    assert not report.ok
    assert any("HEAD is not signed" in p for p in report.problems)


def test_a_head_edited_after_signing_is_detected(book: ReceiptBook) -> None:
    _issue(book, 1)
    second = _issue(book, 2)
    third = _issue(book, 3)
    book.path_of(third["receipt_id"]).unlink()
    head = json.loads((book.dir / "HEAD").read_text())
    head.update(
        receipt_id=second["receipt_id"],
        sha256=sha256_hex(canonical_json(second)),
        count=2,
        file=book.path_of(second["receipt_id"]).name,
    )
    (book.dir / "HEAD").write_bytes(canonical_json(head) + b"\n")
    report = book.verify_chain()
    assert not report.ok and any("signature does not match" in p for p in report.problems)


def test_verify_all_prints_the_key_and_the_signed_head(book: ReceiptBook, capsys) -> None:
    _issue(book, 1)
    _issue(book, 2)
    assert main(["--store", str(book.root), "receipts", "verify", "--all"]) == 0
    out, _ = capsys.readouterr()
    assert f"key checked: {book.public_key()} (the store's receipt key)" in out
    assert "signed HEAD: 2 receipts in the chain" in out
    assert (
        main(
            [
                "--store",
                str(book.root),
                "receipts",
                "verify",
                "--all",
                "--public-key",
                _public_b64(Ed25519PrivateKey.generate()),
            ]
        )
        != 0
    )
