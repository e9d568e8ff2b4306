"""Deletion receipts: signatures checked by hand, tampering, chain gaps, concurrency, CLI exit codes."""

from __future__ import annotations

import argparse
import base64
import hashlib
import itertools
import json
import multiprocessing
import os
import stat
import sys
from pathlib import Path

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from memdeck.cli import receipts as cli_receipts
from memdeck.core.errors import IntegrityError, MemdeckError, NotFound
from memdeck.core.receipts import ReceiptBook, verify_file

RAW_A = hashlib.sha256(b"alice's phone number is 555-0100").hexdigest()
RAW_B = hashlib.sha256(b"bob likes green tea").hexdigest()
RAW_C = hashlib.sha256(b"carol was in Lisbon").hexdigest()


def issue(book: ReceiptBook, raw: str, n: int = 0, **kw) -> dict:
    return book.issue(
        principal="alice",
        reason=f"user request {n}",
        deleted=[
            {
                "id": f"m{n}",
                "tier": "episodic",
                "content_sha256": raw,
                "created_at": "2025-01-02T03:04:05Z",
                "text": "must never be copied",
            }
        ],
        cascade=[{"id": f"f{n}", "tier": "semantic", "why": f"only source was m{n}"}],
        actions=["delete", "compact", "reindex"],
        checks=[
            {"name": "no_row_in_any_data_file", "passed": True},
            {"name": "trace_scrubbed", "passed": True, "detail": "0 rows"},
        ],
        **kw,
    )


def plain_verify(receipt: dict) -> bool:
    """An independent Ed25519 check: strip signature, canonical JSON by hand, verify."""
    body = {k: v for k, v in receipt.items() if k != "signature"}
    message = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    key = Ed25519PublicKey.from_public_bytes(base64.b64decode(receipt["public_key"]))
    try:
        key.verify(base64.b64decode(receipt["signature"]), message)
    except InvalidSignature:
        return False
    return True


def files(book: ReceiptBook) -> list[Path]:
    return sorted(book.dir.glob("*.json"))


@pytest.fixture
def book(tmp_path: Path) -> ReceiptBook:
    return ReceiptBook(tmp_path / "store")


def test_two_receipts_verify_with_plain_ed25519_and_chain(book: ReceiptBook) -> None:
    r1 = issue(book, RAW_A, 1)
    r2 = issue(book, RAW_B, 2)
    assert r1["format"] == "memdeck.deletion-receipt/1"
    assert r1["issued_at"].endswith("Z")
    assert r1["previous_receipt_sha256"] is None
    assert len(base64.b64decode(r1["public_key"])) == 32
    assert set(r1["deleted"][0]) == {"id", "tier", "content_sha256_salted", "created_at"}
    assert set(r1["cascade"][0]) == {"id", "tier", "why"}

    on_disk = [json.loads(p.read_text(encoding="utf-8")) for p in files(book)]
    assert len(on_disk) == 2
    for receipt in on_disk:
        assert plain_verify(receipt)
        tampered = dict(receipt, reason="something else")
        assert not plain_verify(tampered)

    # The chain link is the SHA-256 of the previous receipt's canonical JSON, computed here by hand.
    first = json.loads(book.path_of(r1["receipt_id"]).read_text(encoding="utf-8"))
    canon = json.dumps(first, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    assert r2["previous_receipt_sha256"] == hashlib.sha256(canon).hexdigest()

    report = book.verify_chain()
    assert report.ok, report.problems
    assert report.checked == 2
    assert [row["receipt_id"] for row in book.list()] == [r1["receipt_id"], r2["receipt_id"]]
    assert book.list()[0]["n_deleted"] == 1 and book.list()[0]["all_checks_passed"] is True
    assert verify_file(book.path_of(r2["receipt_id"])).ok
    assert book.get(r2["receipt_id"][:10]) == r2
    assert book.verify_receipt(r2) == []


def test_receipt_never_holds_raw_hash_or_text(book: ReceiptBook) -> None:
    r = issue(book, RAW_A, extra={"vault": {"key_destroyed": True}})
    raw_file = book.path_of(r["receipt_id"]).read_text(encoding="utf-8")
    assert RAW_A not in raw_file
    assert RAW_A.upper() not in raw_file
    assert 'content_sha256"' not in raw_file
    assert "must never be copied" not in raw_file
    assert (
        hashlib.sha256(RAW_A.encode()).hexdigest() not in raw_file
    )  # not an unkeyed hash of the hash either
    salted = r["deleted"][0]["content_sha256_salted"]
    assert salted == book.salted_hash(RAW_A) and salted != RAW_A
    assert r["vault"] == {"key_destroyed": True} and plain_verify(r)
    with pytest.raises(MemdeckError):
        issue(book, RAW_A, extra={"signature": "x"})


def test_key_and_salt_files_are_private(book: ReceiptBook) -> None:
    issue(book, RAW_A)
    assert stat.S_IMODE(os.stat(book.key_path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(book.salt_path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(book.keys_dir).st_mode) == 0o700
    assert len(book.salt_path.read_bytes()) == 32
    # A second book on the same store uses the same key pair and salt.
    other = ReceiptBook(book.root)
    assert other.public_key() == book.public_key()
    assert other.salted_hash(RAW_A) == book.salted_hash(RAW_A)


def test_every_changed_byte_fails(book: ReceiptBook) -> None:
    issue(book, RAW_A, 1)
    r2 = issue(book, RAW_B, 2)
    path = book.path_of(r2["receipt_id"])
    original = path.read_bytes()
    for i in range(len(original)):
        changed = bytearray(original)
        changed[i] ^= 0x01
        path.write_bytes(bytes(changed))
        assert not verify_file(path).ok, f"byte {i} ({chr(original[i])!r}) changed without detection"
        if i % 97 == 0:  # the chain walk is slower; sample it
            assert not book.verify_chain().ok
    path.write_bytes(original)
    assert verify_file(path).ok and book.verify_chain().ok


def test_changed_first_receipt_breaks_the_link_from_the_second(book: ReceiptBook) -> None:
    r1 = issue(book, RAW_A, 1)
    r2 = issue(book, RAW_B, 2)
    p1 = book.path_of(r1["receipt_id"])
    p1.write_bytes(p1.read_bytes().replace(b"user request 1", b"user request 9"))
    report = book.verify_chain()
    assert not report.ok
    assert any("signature" in p for p in report.problems)
    assert any(r2["receipt_id"] in p and "before it" in p for p in report.problems)
    assert not verify_file(book.path_of(r2["receipt_id"])).ok  # its predecessor no longer matches


def test_deleting_middle_receipt_is_detected(book: ReceiptBook) -> None:
    ids = [issue(book, raw, n)["receipt_id"] for n, raw in enumerate((RAW_A, RAW_B, RAW_C))]
    book.path_of(ids[1]).unlink()
    report = book.verify_chain()
    assert not report.ok
    assert any(ids[2] in p and "missing" in p for p in report.problems)
    assert not verify_file(book.path_of(ids[2])).ok


def test_deleting_last_receipt_is_detected(book: ReceiptBook) -> None:
    ids = [issue(book, raw, n)["receipt_id"] for n, raw in enumerate((RAW_A, RAW_B, RAW_C))]
    book.path_of(ids[2]).unlink()
    report = book.verify_chain()
    assert not report.ok
    assert any(ids[2] in p and "HEAD" in p for p in report.problems)
    # The gap stays visible after the next receipt: it links to the missing one.
    issue(book, RAW_A, 4)
    assert not book.verify_chain().ok


def test_deleting_first_receipt_and_head_are_detected(book: ReceiptBook) -> None:
    ids = [issue(book, raw, n)["receipt_id"] for n, raw in enumerate((RAW_A, RAW_B))]
    (book.dir / "HEAD").unlink()
    assert not book.verify_chain().ok
    book.path_of(ids[0]).unlink()
    assert not book.verify_chain().ok


def test_resumed_receipt_id_is_idempotent(book: ReceiptBook) -> None:
    r1 = issue(book, RAW_A, receipt_id="purge-0001")
    again = issue(book, RAW_A, receipt_id="purge-0001")
    assert again == r1
    assert len(files(book)) == 1 and book.verify_chain().ok
    with pytest.raises(MemdeckError):
        issue(book, RAW_A, receipt_id="../escape")


def test_crash_between_receipt_and_head_is_repaired(book: ReceiptBook) -> None:
    issue(book, RAW_A, 1)
    head = (book.dir / "HEAD").read_bytes()
    r2 = issue(book, RAW_B, 2)
    (book.dir / "HEAD").write_bytes(head)  # as if the process died before moving HEAD
    r3 = issue(book, RAW_C, 3)
    assert r3["previous_receipt_sha256"] != json.loads(head)["sha256"]
    assert book.verify_chain().ok
    assert [r["receipt_id"] for r in book.list()][1:] == [r2["receipt_id"], r3["receipt_id"]]


def test_get_not_found_and_ambiguous(book: ReceiptBook) -> None:
    issue(book, RAW_A, receipt_id="abc1")
    issue(book, RAW_B, receipt_id="abc2")
    with pytest.raises(NotFound):
        book.get("zzz")
    with pytest.raises(MemdeckError):
        book.get("abc")
    assert book.get("abc2")["receipt_id"] == "abc2"


def test_markdown_and_export(book: ReceiptBook, tmp_path: Path) -> None:
    r = issue(book, RAW_A)
    md = book.to_markdown(r)
    assert r["receipt_id"] in md
    assert RAW_A not in md and r["deleted"][0]["content_sha256_salted"] not in md
    assert "must never be copied" not in md
    assert r["public_key"] in md and "user request" in md
    out = book.export(r["receipt_id"], tmp_path, "json")
    assert out.read_bytes() == book.path_of(r["receipt_id"]).read_bytes()
    assert verify_file(out).ok  # a copy outside the store still verifies on its own
    md_out = book.export(r["receipt_id"], tmp_path / "receipt.md", "md")
    assert md_out.read_text(encoding="utf-8") == md


def _worker(root: str, start, n: int, tag: str) -> None:
    start.wait()
    book = ReceiptBook(Path(root))
    for i in range(n):
        book.issue(
            principal=tag,
            reason=f"{tag}-{i}",
            deleted=[{"id": f"{tag}{i}", "tier": "episodic", "content_sha256": RAW_A, "created_at": None}],
            cascade=[],
            actions=["delete"],
            checks=[{"name": "gone", "passed": True}],
        )


def test_two_processes_make_one_linear_chain(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("fork")
    start = ctx.Event()
    root = tmp_path / "store"
    procs = [ctx.Process(target=_worker, args=(str(root), start, 10, tag)) for tag in ("p", "q")]
    for p in procs:
        p.start()
    start.set()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    book = ReceiptBook(root)
    report = book.verify_chain()
    assert report.ok, report.problems
    assert report.checked == 20
    rows = book.list()
    assert len(rows) == 20 and len({r["receipt_id"] for r in rows}) == 20
    chain = [book.get(r["receipt_id"]) for r in rows]
    assert chain[0]["previous_receipt_sha256"] is None
    assert len({r["public_key"] for r in chain}) == 1
    for prev, cur in itertools.pairwise(chain):
        canon = json.dumps(prev, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        assert cur["previous_receipt_sha256"] == hashlib.sha256(canon).hexdigest()
        assert plain_verify(cur)


def _run_cli(argv: list[str], capsys) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser(prog="memdeck")
    parser.add_argument("--store")
    cli_receipts.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    try:
        code = args.func(args)
    except MemdeckError as exc:  # what the main wrapper does
        print(f"memdeck: error: {exc}", file=sys.stderr)
        code = exc.exit_code
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_handlers(book: ReceiptBook, tmp_path: Path, capsys) -> None:
    r1 = issue(book, RAW_A, 1)
    r2 = issue(book, RAW_B, 2)
    store = str(book.root)
    code, out, _ = _run_cli(["--store", store, "receipts", "list", "--json"], capsys)
    assert code == 0 and [r["receipt_id"] for r in json.loads(out)] == [r1["receipt_id"], r2["receipt_id"]]
    code, out, _ = _run_cli(["--store", store, "receipts", "show", r1["receipt_id"][:8], "--json"], capsys)
    assert code == 0 and json.loads(out) == r1
    code, out, _ = _run_cli(["--store", store, "receipts", "show", r1["receipt_id"], "--markdown"], capsys)
    assert code == 0 and r1["receipt_id"] in out
    path = book.path_of(r2["receipt_id"])
    assert _run_cli(["--store", store, "receipts", "verify", str(path)], capsys)[0] == 0
    assert _run_cli(["--store", store, "receipts", "verify", r2["receipt_id"]], capsys)[0] == 0
    assert _run_cli(["--store", store, "receipts", "verify", "--all"], capsys)[0] == 0
    dest = tmp_path / "out.md"
    assert _run_cli(["--store", store, "receipts", "export", r2["receipt_id"], str(dest)], capsys)[0] == 0
    assert r2["receipt_id"] in dest.read_text(encoding="utf-8")

    path.write_bytes(path.read_bytes().replace(b'"passed":true', b'"passed":false', 1))
    code, _, err = _run_cli(["--store", store, "receipts", "verify", str(path)], capsys)
    assert code == IntegrityError.exit_code != 0
    assert "signature" in err
    code, out, err = _run_cli(["--store", store, "receipts", "verify", "--all", "--json"], capsys)
    assert code == IntegrityError.exit_code and json.loads(out)["ok"] is False
    code, _, err = _run_cli(["--store", store, "receipts", "verify", "nope"], capsys)
    assert code == NotFound.exit_code and "memdeck: error:" in err
