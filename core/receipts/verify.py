"""Checking receipts: one receipt's structure and signature, one file with its store key and predecessor."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from memdeck.core.errors import MemdeckError
from memdeck.core.receipts.format import (
    _HEX64,
    _RECEIPT_NAME,
    _REQUIRED_LISTS,
    _REQUIRED_STRINGS,
    FORMAT,
    HEAD_FILE,
    _b64_strict,
    _compact,
    _is_canonical_file,
    _parse,
    canonical_json,
    receipt_sha256,
)
from memdeck.core.receipts.keys import maybe_shared_lock, store_public_key
from memdeck.core.receipts.types import Receipt, ReceiptOutcome, VerifyReportJSON

# --- verification -------------------------------------------------------------------------------------


@dataclass
class VerifyReport:
    """The outcome of checking one receipt file or a whole chain."""

    ok: bool
    problems: list[str] = field(default_factory=list)
    checked: int = 0
    warnings: list[str] = field(default_factory=list)
    public_key: str | None = None  # the key the signatures were checked against (base64)
    key_source: str = (
        "embedded"  # "pinned" (given by the caller), "store" (the store's key file) or "embedded"
    )
    head_count: int | None = None  # the signed HEAD's counter, for --all
    # What each receipt checked records (a valid signature on a failed purge is not a verified forget):
    # {"receipt_id", "outcome", "failed": [check names], "settled_by": a verified recheck's id or None,
    #  "machine": who issued it, in a store's bucket chain}
    outcomes: list[ReceiptOutcome] = field(default_factory=list)

    @property
    def unverified(self) -> list[ReceiptOutcome]:
        """The receipts whose purge did not verify and that no later verified recheck settled."""
        return [o for o in self.outcomes if o["outcome"] != "verified" and not o["settled_by"]]

    def to_dict(self) -> VerifyReportJSON:
        return {
            "ok": self.ok,
            "problems": list(self.problems),
            "checked": self.checked,
            "warnings": list(self.warnings),
            "public_key": self.public_key,
            "key_source": self.key_source,
            "head_count": self.head_count,
            "outcomes": [o.copy() for o in self.outcomes],
            "unverified": [o["receipt_id"] for o in self.unverified],
        }


def receipt_outcome(receipt: Mapping[str, Any]) -> tuple[str, list[str]]:
    """(outcome, names of failed checks) as a receipt records them. A receipt that says ``verified`` while a
    check failed, or that has no checks, is taken at its checks, not its word."""
    raw = receipt.get("checks")
    checks: list[Any] = raw if isinstance(raw, list) else []
    failed = [
        str(c.get("name", "?")) for c in checks if not (isinstance(c, dict) and c.get("passed") is True)
    ]
    outcome = receipt.get("outcome")
    if not isinstance(outcome, str):
        outcome = "verified" if checks and not failed else "checks_failed"
    if outcome == "verified" and (failed or not checks):
        outcome = "checks_failed"
    return outcome, failed


def outcomes_of(
    receipts: Sequence[Mapping[str, Any]], machines: dict[str, str] | None = None
) -> list[ReceiptOutcome]:
    """Each receipt's outcome, in the order given; a failed one is settled by a later verified recheck."""
    out = []
    # A verified recheck settles the receipt it rechecks, and that one's own target if it was a recheck too;
    # a failed recheck of a settled receipt is settled with it.
    target = {
        str(r.get("receipt_id")): r["rechecks"]
        for r in receipts
        if r.get("trigger") == "recheck" and isinstance(r.get("rechecks"), str)
    }
    settled: dict[str, str] = {}
    for r in receipts:
        rid = str(r.get("receipt_id"))
        if rid in target and receipt_outcome(r)[0] == "verified":
            at, seen = target[rid], {rid}
            while at not in seen:
                seen.add(at)
                settled.setdefault(at, rid)
                at = target.get(at, at)

    def settled_by(rid: str) -> str | None:
        seen = set()
        while rid not in seen:
            seen.add(rid)
            if rid in settled:
                return settled[rid]
            rid = target.get(rid, rid)
        return None

    for r in receipts:
        outcome, failed = receipt_outcome(r)
        rid = str(r.get("receipt_id"))
        entry: ReceiptOutcome = {
            "receipt_id": rid,
            "outcome": outcome,
            "failed": failed,
            "settled_by": settled_by(rid) if outcome != "verified" else None,
        }
        if machines is not None:
            entry["machine"] = machines.get(rid)
        out.append(entry)
    return out


def verify_receipt(receipt: Mapping[str, Any]) -> list[str]:
    """Problems with one receipt's structure and signature (with its embedded key); empty means valid."""
    if not isinstance(receipt, Mapping):
        return ["not a JSON object"]
    problems: list[str] = []
    if receipt.get("format") != FORMAT:
        problems.append(f"format is {receipt.get('format')!r}, expected {FORMAT!r}")
    for name in _REQUIRED_STRINGS:
        if not isinstance(receipt.get(name), str):
            problems.append(f"field {name!r} is missing or not a string")
    for name in _REQUIRED_LISTS:
        if not isinstance(receipt.get(name), list):
            problems.append(f"field {name!r} is missing or not a list")
    if "previous_receipt_sha256" not in receipt:
        problems.append("field 'previous_receipt_sha256' is missing")
    else:
        prev = receipt["previous_receipt_sha256"]
        if prev is not None and not (isinstance(prev, str) and _HEX64.fullmatch(prev)):
            problems.append("previous_receipt_sha256 is neither null nor 64 lowercase hex characters")
    for item in receipt.get("deleted") or []:
        if not isinstance(item, dict) or "content_sha256" in item or "text" in item:
            problems.append("a 'deleted' entry is malformed or carries unsalted content")
            break
    public = _b64_strict(receipt.get("public_key"), 32)
    signature = _b64_strict(receipt.get("signature"), 64)
    if public is None:
        problems.append("public_key is not base64 of a 32-byte Ed25519 key")
    if signature is None:
        problems.append("signature is not base64 of a 64-byte Ed25519 signature")
    if public is not None and signature is not None:
        body = {k: v for k, v in receipt.items() if k != "signature"}
        try:
            Ed25519PublicKey.from_public_bytes(public).verify(signature, canonical_json(body))
        except InvalidSignature:
            problems.append("signature does not match the content (the receipt was changed after signing)")
        except (TypeError, ValueError) as exc:
            problems.append(f"cannot check the signature: {exc}")
    return problems


@dataclass
class _Entry:
    path: Path
    raw: bytes = b""
    receipt: Receipt | None = None  # as parsed: its shape is what verify_receipt checks
    sha: str | None = None
    error: str | None = None

    @property
    def label(self) -> str:
        rid = self.receipt.get("receipt_id") if self.receipt else None
        return (
            f"receipt {rid} ({self.path.name})" if isinstance(rid, str) else f"receipt file {self.path.name}"
        )


def _read_entry(path: Path) -> _Entry:
    entry = _Entry(path)
    try:
        entry.raw = path.read_bytes()
    except OSError as exc:
        entry.error = f"cannot read: {exc.strerror}"
        return entry
    try:
        entry.receipt = cast(Receipt, _parse(entry.raw))
        entry.sha = receipt_sha256(entry.receipt)
    except (ValueError, TypeError) as exc:
        entry.receipt = None
        entry.error = str(exc)
    return entry


def _receipt_files(directory: Path) -> list[Path]:
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return []
    return sorted(directory / n for n in names if n.endswith(".json") and not n.startswith("."))


def _file_problems(entry: _Entry, store_key: str | None) -> list[str]:
    """Everything wrong with one file on its own (no chain)."""
    if entry.error is not None or entry.receipt is None:
        return [f"{entry.label}: {entry.error}"]
    problems = [f"{entry.label}: {p}" for p in verify_receipt(entry.receipt)]
    if not _is_canonical_file(entry.raw, entry.receipt):
        problems.append(
            f"{entry.label}: the file is not in canonical form (bytes were added, removed or reformatted)"
        )
    if store_key is not None and entry.receipt.get("public_key") != store_key:
        problems.append(f"{entry.label}: signed with a key that is not this store's receipt key")
    match = _RECEIPT_NAME.fullmatch(entry.path.name)
    rid, issued = entry.receipt.get("receipt_id"), entry.receipt.get("issued_at")
    if (
        isinstance(rid, str)
        and isinstance(issued, str)
        and match
        and (match.group(2) != rid or match.group(1) != _compact(issued))
    ):
        problems.append(f"{entry.label}: the file name does not match its receipt_id and issued_at")
    return problems


def _store_root_of(path: Path) -> Path | None:
    """The store directory when ``path`` sits in a store's receipts folder, else None."""
    folder = path.resolve().parent
    if folder.name != "receipts":
        return None
    if (folder / HEAD_FILE).exists() or (folder.parent / "keys").is_dir():
        return folder.parent
    return None


def check_head(head: dict[str, Any], store_key: str | None) -> list[str]:
    """Problems with the signature of ``receipts/HEAD`` (see docs/receipts.md); empty means it is signed."""
    if "signature" not in head:
        return [
            f"{HEAD_FILE} is not signed (rewritten, or written by an older memdeck before its next receipt)"
        ]
    public = _b64_strict(head.get("public_key"), 32)
    signature = _b64_strict(head.get("signature"), 64)
    if public is None or signature is None:
        return [f"{HEAD_FILE}'s public_key or signature is malformed"]
    if store_key is not None and head.get("public_key") != store_key:
        return [f"{HEAD_FILE} is signed with a key that is not this store's receipt key"]
    body = {k: v for k, v in head.items() if k != "signature"}
    try:
        Ed25519PublicKey.from_public_bytes(public).verify(signature, canonical_json(body))
    except InvalidSignature:
        return [f"{HEAD_FILE}'s signature does not match its content (it was rewritten)"]
    except (TypeError, ValueError) as exc:
        return [f"cannot check {HEAD_FILE}'s signature: {exc}"]
    return []


def check_public_key(text: str) -> str:
    """A base64 Ed25519 public key as given on a command line, or one clear error."""
    key = text.strip()
    if _b64_strict(key, 32) is None:
        raise MemdeckError(
            "--public-key must be the base64 of a raw 32-byte Ed25519 key (a receipt's public_key)"
        )
    return key


def verify_file(path: Path, expected_public_key: str | None = None) -> VerifyReport:
    """Check one receipt file: signature with its embedded key and canonical bytes.

    When the file sits in a store's receipts folder, also check that it was signed with that store's key
    and that the receipt it links to (``previous_receipt_sha256``) is present and unaltered.
    ``expected_public_key`` (base64) pins the key for a copy outside a store.
    """
    path = Path(path)
    entry = _read_entry(path)
    warnings: list[str] = []
    root = _store_root_of(path)
    store_key = expected_public_key
    if root is not None and store_key is None:
        try:
            store_key = store_public_key(root)
        except MemdeckError as exc:
            warnings.append(str(exc))
        if store_key is None and not warnings:
            warnings.append("the store has no receipt key file; only the embedded key was checked")
    problems = _file_problems(entry, store_key)
    checked_key = store_key or (entry.receipt.get("public_key") if entry.receipt is not None else None)
    source = "pinned" if expected_public_key is not None else "store" if store_key is not None else "embedded"
    if source == "embedded":
        warnings.append(
            "only the key embedded in the receipt was checked: anyone can sign with their own key; "
            "compare it with the key the store's owner published, or pin it with --public-key"
        )
    if root is not None and entry.receipt is not None:
        prev = entry.receipt.get("previous_receipt_sha256")
        if isinstance(prev, str):
            folder = path.resolve().parent
            with maybe_shared_lock(folder):
                found = any(
                    other.resolve() != path.resolve() and _read_entry(other).sha == prev
                    for other in _receipt_files(folder)
                )
            if not found:
                problems.append(
                    f"{entry.label}: the receipt before it (sha256 {prev[:16]}...) is missing or was altered"
                )
    outcomes: list[ReceiptOutcome] = []
    if entry.receipt is not None:
        # Its own outcome, settled by a verified recheck beside it in the same store's folder.
        later = (
            [_read_entry(p).receipt for p in _receipt_files(path.resolve().parent)]
            if root is not None
            else []
        )
        rechecks = [
            r for r in later if r is not None and r.get("rechecks") == entry.receipt.get("receipt_id")
        ]
        outcomes = outcomes_of([entry.receipt, *rechecks])[:1]
    return VerifyReport(
        ok=not problems,
        problems=problems,
        checked=1,
        warnings=warnings,
        public_key=checked_key if isinstance(checked_key, str) else None,
        key_source=source,
        outcomes=outcomes,
    )
