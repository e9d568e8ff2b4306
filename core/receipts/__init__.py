"""Signed, chained deletion receipts (DESIGN.md, "Forget and deletion receipts").

A receipt is one JSON file in ``<store>/receipts/`` named ``<issued_at compact>_<receipt_id>.json``::

    {"format": "memdeck.deletion-receipt/1", "receipt_id": "...", "issued_at": "2025-01-02T03:04:05.123456Z",
     "principal": "alice", "reason": "user request",
     "deleted": [{"id": "...", "tier": "episodic", "content_sha256_salted": "...", "created_at": "..."}],
     "cascade": [{"id": "...", "tier": "semantic", "why": "only source was ..."}],
     "actions": ["delete", "compact", ...],
     "checks": [{"name": "no_row_in_any_data_file", "passed": true, "detail": "..."}],
     "previous_receipt_sha256": null, "public_key": "<base64 raw 32-byte Ed25519>", "signature": "<base64>"}

Decisions a verifier relies on:

* **Canonical JSON** (:func:`canonical_json`): keys sorted (by code point), separators ``","`` and ``":"``,
  no other whitespace, non-ASCII written as UTF-8 (``ensure_ascii=False``), no NaN/Infinity. Receipt files are
  stored as exactly these bytes plus one ``"\\n"``, so any changed byte shows: it either breaks the JSON, the
  canonical form, the signature or the chain.
* **Signature**: Ed25519 over ``canonical_json(receipt without "signature")``; ``public_key`` and
  ``signature`` are standard base64 (with padding) of the raw 32-byte key and the 64-byte signature.
* **Chain**: ``previous_receipt_sha256`` is the SHA-256 hex of ``canonical_json(previous receipt)``, the full
  previous receipt including its signature (which equals the previous file's bytes without the final newline).
  The first receipt of a store has ``previous_receipt_sha256: null``.
* ``receipts/HEAD`` (JSON: receipt_id, sha256, file, count) names the newest receipt, so deleting the last
  receipt shows too. HEAD is not signed: anyone who can rewrite the store can also truncate the chain; the
  chain proves order and completeness against edits that do not also rewrite HEAD and every later receipt.
* ``content_sha256_salted`` = HMAC-SHA256(key = the store's secret 32-byte salt ``keys/receipt_salt``,
  message = the memory's ``content_sha256`` as lowercase hex ASCII), hex. Without the salt nobody can test a
  guessed text against a receipt; the store owner can still match a known memory to its receipt.
* Keys: ``keys/receipt_ed25519.key`` (PKCS#8 PEM, unencrypted, mode 0600, folder 0700), created on first use.

Verifying a receipt without memdeck, with any Ed25519 library (Python shown)::

    import base64, json
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    receipt = json.load(open("receipt.json", encoding="utf-8"))
    signature = base64.b64decode(receipt.pop("signature"))
    message = json.dumps(receipt, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    Ed25519PublicKey.from_public_bytes(base64.b64decode(receipt["public_key"])).verify(signature, message)

(compare ``receipt["public_key"]`` with the key the store owner published; the embedded key alone only proves
the receipt was not changed after signing.)
"""

from __future__ import annotations

import base64
import binascii
import builtins
import contextlib
import fcntl
import hashlib
import hmac
import json
import os
import re
import secrets
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from memdeck.core.errors import IntegrityError, MemdeckError, NotFound
from memdeck.core.files import write_atomic_bytes
from memdeck.core.paths import StoreLayout

FORMAT = "memdeck.deletion-receipt/1"
KEY_FILE = "receipt_ed25519.key"
SALT_FILE = "receipt_salt"
HEAD_FILE = "HEAD"
LOCK_FILE = ".lock"
SALT_BYTES = 32

RESERVED_KEYS = frozenset(
    {
        "format",
        "receipt_id",
        "issued_at",
        "principal",
        "reason",
        "deleted",
        "cascade",
        "actions",
        "checks",
        "previous_receipt_sha256",
        "public_key",
        "signature",
    }
)
_REQUIRED_LISTS = ("deleted", "cascade", "actions", "checks")
_REQUIRED_STRINGS = ("receipt_id", "issued_at", "principal", "reason", "public_key", "signature")

_HEX64 = re.compile(r"[0-9a-f]{64}")
_RECEIPT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_RECEIPT_NAME = re.compile(r"(\d{8}T\d{6}(?:\.\d{6})?Z)_(.+)\.json")


# --- encoding helpers ---------------------------------------------------------------------------------


def canonical_json(obj: Any) -> bytes:
    """The signed byte form: sorted keys, no insignificant whitespace, UTF-8, no NaN/Infinity."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode(
        "utf-8"
    )


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def receipt_sha256(receipt: dict[str, Any]) -> str:
    """What the next receipt stores as ``previous_receipt_sha256``."""
    return sha256_hex(canonical_json(receipt))


def salted_hash(salt: bytes, content_sha256: str) -> str:
    """HMAC-SHA256 keyed with the store's salt over the memory's content_sha256 (lowercase hex ASCII)."""
    value = str(content_sha256).strip().lower()
    if not _HEX64.fullmatch(value):
        raise MemdeckError("content_sha256 must be 64 hex characters (the SHA-256 of the memory's content)")
    return hmac.new(bytes(salt), value.encode("ascii"), hashlib.sha256).hexdigest()


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _b64_strict(text: Any, length: int) -> bytes | None:
    """Decode standard base64 only if ``text`` is exactly the canonical encoding of ``length`` bytes."""
    if not isinstance(text, str):
        return None
    try:
        raw = base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        return None
    if len(raw) != length or _b64(raw) != text:  # no unused bits, no alternative spellings
        return None
    return raw


def _now_rfc3339() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _rfc3339(value: Any) -> Any:
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return value


def _compact(issued_at: str) -> str:
    """``2025-01-02T03:04:05.123456Z`` -> ``20250102T030405.123456Z`` (for file names)."""
    return issued_at.replace("-", "").replace(":", "")


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key!r}")
        out[key] = value
    return out


def _parse(raw: bytes) -> dict[str, Any]:
    """Parse a receipt file; ValueError on anything that is not one JSON object."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 ({exc.reason} at byte {exc.start})") from None
    try:
        obj = json.loads(text, object_pairs_hook=_no_duplicate_keys, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    if not isinstance(obj, dict):
        raise ValueError("not a JSON object")
    return obj


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not allowed")


def _is_canonical_file(raw: bytes, receipt: dict[str, Any]) -> bool:
    try:
        canon = canonical_json(receipt)
    except (TypeError, ValueError):
        return False
    return raw == canon + b"\n" or raw == canon


# --- files and locks ----------------------------------------------------------------------------------


def _make_private_dir(path: Path) -> None:
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    with contextlib.suppress(OSError):
        os.chmod(path, 0o700)


@contextlib.contextmanager
def _flock(lock_path: Path, exclusive: bool) -> Iterator[None]:
    """flock on a lock file; works between processes and between threads of one process."""
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        yield
    finally:
        os.close(fd)  # closing releases the lock


@contextlib.contextmanager
def _maybe_shared_lock(directory: Path) -> Iterator[None]:
    """A shared lock for readers; a missing or read-only folder is read unlocked."""
    try:
        fd = os.open(directory / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
        yield
    finally:
        os.close(fd)


def _load_private_key(path: Path) -> Ed25519PrivateKey:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise MemdeckError(f"cannot read the receipt signing key {path}: {exc.strerror}") from None
    try:
        if len(data) == 32:
            return Ed25519PrivateKey.from_private_bytes(data)
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError):
        raise IntegrityError(f"the receipt signing key {path} is corrupt") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise IntegrityError(f"the receipt signing key {path} is not an Ed25519 key")
    return key


def _public_b64(key: Ed25519PrivateKey) -> str:
    raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return _b64(raw)


def store_public_key(root: Path) -> str | None:
    """The base64 public key of the store at ``root``, or None when it has no signing key yet."""
    path = StoreLayout(Path(root)).keys / KEY_FILE
    if not path.exists():
        return None
    return _public_b64(_load_private_key(path))


# --- verification -------------------------------------------------------------------------------------


@dataclass
class VerifyReport:
    """The outcome of checking one receipt file or a whole chain."""

    ok: bool
    problems: list[str] = field(default_factory=list)
    checked: int = 0
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "problems": list(self.problems),
            "checked": self.checked,
            "warnings": list(self.warnings),
        }


def verify_receipt(receipt: dict[str, Any]) -> list[str]:
    """Problems with one receipt's structure and signature (with its embedded key); empty means valid."""
    if not isinstance(receipt, dict):
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
    receipt: dict[str, Any] | None = None
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
        entry.receipt = _parse(entry.raw)
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
    if isinstance(rid, str) and isinstance(issued, str) and match:
        if match.group(2) != rid or match.group(1) != _compact(issued):
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
    if root is not None and entry.receipt is not None:
        prev = entry.receipt.get("previous_receipt_sha256")
        if isinstance(prev, str):
            folder = path.resolve().parent
            with _maybe_shared_lock(folder):
                found = any(
                    other.resolve() != path.resolve() and _read_entry(other).sha == prev
                    for other in _receipt_files(folder)
                )
            if not found:
                problems.append(
                    f"{entry.label}: the receipt before it (sha256 {prev[:16]}...) is missing or was altered"
                )
    return VerifyReport(ok=not problems, problems=problems, checked=1, warnings=warnings)


# --- the book -----------------------------------------------------------------------------------------


class ReceiptBook:
    """The deletion receipts of one store: issue, list, read, verify, export."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        layout = StoreLayout(self.root)
        self.dir = layout.receipts
        self.keys_dir = layout.keys
        self._key: Ed25519PrivateKey | None = None
        self._salt: bytes | None = None

    # -- keys --

    @property
    def key_path(self) -> Path:
        return self.keys_dir / KEY_FILE

    @property
    def salt_path(self) -> Path:
        return self.keys_dir / SALT_FILE

    def _ensure_keys(self) -> None:
        """Create the signing key and the salt on first use; race-safe between processes."""
        if self._key is not None and self._salt is not None:
            return
        if not (self.key_path.exists() and self.salt_path.exists()):
            _make_private_dir(self.keys_dir)
            with _flock(self.keys_dir / ".receipt-keys.lock", exclusive=True):
                if not self.key_path.exists():
                    pem = Ed25519PrivateKey.generate().private_bytes(
                        serialization.Encoding.PEM,
                        serialization.PrivateFormat.PKCS8,
                        serialization.NoEncryption(),
                    )
                    write_atomic_bytes(self.key_path, pem, 0o600)
                if not self.salt_path.exists():
                    write_atomic_bytes(self.salt_path, secrets.token_bytes(SALT_BYTES), 0o600)
        self._key = _load_private_key(self.key_path)
        try:
            salt = self.salt_path.read_bytes()
        except OSError as exc:
            raise MemdeckError(f"cannot read the receipt salt {self.salt_path}: {exc.strerror}") from None
        if len(salt) != SALT_BYTES:
            raise IntegrityError(
                f"the receipt salt {self.salt_path} is corrupt (expected {SALT_BYTES} bytes)"
            )
        self._salt = salt

    def public_key(self) -> str:
        """The store's receipt public key, base64 of the raw 32 bytes (creates the key pair if needed)."""
        self._ensure_keys()
        assert self._key is not None
        return _public_b64(self._key)

    def salted_hash(self, content_sha256: str) -> str:
        """The ``content_sha256_salted`` a receipt would hold for a memory with this content hash."""
        self._ensure_keys()
        assert self._salt is not None
        return salted_hash(self._salt, content_sha256)

    # -- issuing --

    def issue(
        self,
        *,
        principal: str,
        reason: str,
        deleted: list[dict[str, Any]],
        cascade: list[dict[str, Any]],
        actions: list[str],
        checks: list[dict[str, Any]],
        extra: dict[str, Any] | None = None,
        receipt_id: str | None = None,
    ) -> dict[str, Any]:
        """Sign and store a receipt, appended to the chain. Idempotent for a caller-supplied receipt_id."""
        if receipt_id is None:
            receipt_id = uuid.uuid4().hex
        elif not isinstance(receipt_id, str) or not _RECEIPT_ID.fullmatch(receipt_id):
            raise MemdeckError(
                "receipt_id must be 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit"
            )
        extra = dict(extra or {})
        clash = sorted(RESERVED_KEYS & extra.keys())
        if clash:
            raise MemdeckError(f"extra receipt fields may not replace {', '.join(clash)}")
        self._ensure_keys()
        assert self._key is not None and self._salt is not None
        body: dict[str, Any] = {
            "format": FORMAT,
            "receipt_id": receipt_id,
            "principal": str(principal),
            "reason": str(reason),
            "deleted": [self._deleted_item(item) for item in deleted],
            "cascade": [self._cascade_item(item) for item in cascade],
            "actions": [str(a) for a in actions],
            "checks": [self._check_item(item) for item in checks],
            **extra,
        }
        try:
            canonical_json(body)
        except (TypeError, ValueError) as exc:
            raise MemdeckError(f"receipt content is not plain JSON: {exc}") from None

        _make_private_dir(self.dir)
        with _flock(self.dir / LOCK_FILE, exclusive=True):
            existing = self._find_exact(receipt_id)
            if existing is not None:
                entry = _read_entry(existing)
                if entry.receipt is None:
                    raise IntegrityError(f"receipt {receipt_id} exists but cannot be read: {entry.error}")
                head = self._head()
                if head is None or head.get("count") != len(_receipt_files(self.dir)):
                    # A purge killed between writing this receipt and moving HEAD: repair HEAD now.
                    tip, count = self._tip()
                    if tip == entry.sha:
                        self._write_head(receipt_id, entry.sha, existing.name, count)
                return entry.receipt
            previous, count = self._tip()
            body["issued_at"] = _now_rfc3339()
            body["previous_receipt_sha256"] = previous
            body["public_key"] = _public_b64(self._key)
            signature = self._key.sign(canonical_json(body))
            receipt = {**body, "signature": _b64(signature)}
            data = canonical_json(receipt)
            name = f"{_compact(body['issued_at'])}_{receipt_id}.json"
            write_atomic_bytes(self.dir / name, data + b"\n", 0o600)
            self._write_head(receipt_id, sha256_hex(data), name, count + 1)
        return receipt

    def _deleted_item(self, item: dict[str, Any]) -> dict[str, Any]:
        assert self._salt is not None
        if not isinstance(item, dict) or "id" not in item:
            raise MemdeckError("each deleted entry needs at least an id and a content_sha256")
        if item.get("content_sha256"):
            salted = salted_hash(self._salt, item["content_sha256"])
        elif isinstance(item.get("content_sha256_salted"), str) and _HEX64.fullmatch(
            item["content_sha256_salted"]
        ):
            salted = item["content_sha256_salted"]  # a resumed purge that journaled only the salted hash
        else:
            raise MemdeckError(f"deleted entry {item.get('id')} has no content_sha256")
        # A whitelist: whatever else the caller's record holds (text, embedding...) never reaches the receipt.
        return {
            "id": str(item["id"]),
            "tier": None if item.get("tier") is None else str(item["tier"]),
            "content_sha256_salted": salted,
            "created_at": _rfc3339(item.get("created_at")),
        }

    @staticmethod
    def _cascade_item(item: dict[str, Any]) -> dict[str, Any]:
        if not isinstance(item, dict) or "id" not in item:
            raise MemdeckError("each cascade entry needs an id, a tier and a why")
        return {
            "id": str(item["id"]),
            "tier": None if item.get("tier") is None else str(item["tier"]),
            "why": str(item.get("why", "")),
        }

    @staticmethod
    def _check_item(item: dict[str, Any]) -> dict[str, Any]:
        if not isinstance(item, dict) or "name" not in item:
            raise MemdeckError("each check needs a name and passed")
        out: dict[str, Any] = {"name": str(item["name"]), "passed": bool(item.get("passed"))}
        if item.get("detail") is not None:
            out["detail"] = item["detail"]
        return out

    def _head(self) -> dict[str, Any] | None:
        try:
            head = json.loads((self.dir / HEAD_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(head, dict) or not isinstance(head.get("sha256"), str):
            return None
        return head

    def _write_head(self, receipt_id: str, sha: str, name: str, count: int) -> None:
        head = {"receipt_id": receipt_id, "sha256": sha, "file": name, "count": count}
        write_atomic_bytes(self.dir / HEAD_FILE, canonical_json(head) + b"\n", 0o600)

    def _tip(self) -> tuple[str | None, int]:
        """(sha256 of the newest receipt, chain length). Call under the exclusive lock.

        HEAD is trusted for the predecessor even when its file is gone, so a deleted last receipt stays
        visible as a gap. A crash between writing a receipt and HEAD is repaired by following the chain
        past HEAD; a lost HEAD is rebuilt from the files.
        """
        head = self._head()
        files = _receipt_files(self.dir)
        if head is not None and head.get("count") == len(files):
            return head["sha256"], int(head["count"])
        entries = [e for e in map(_read_entry, files) if e.receipt is not None]
        successors: dict[Any, list[_Entry]] = {}
        for e in entries:
            successors.setdefault(e.receipt.get("previous_receipt_sha256"), []).append(e)  # type: ignore[union-attr]
        if head is not None:
            sha = head["sha256"]
            count = head.get("count") if isinstance(head.get("count"), int) else len(files)
            while len(successors.get(sha, [])) == 1:
                sha = successors[sha][0].sha
                count += 1
            return sha, count
        if not entries:
            return None, 0
        # No HEAD: follow the chain from the first receipt; on a fork take the later branch.
        sha, count = None, 0
        while successors.get(sha):
            nxt = max(successors[sha], key=lambda e: str(e.receipt.get("issued_at")))  # type: ignore[union-attr]
            sha, count = nxt.sha, count + 1
        if count == 0:  # no first receipt at all: chain onto the newest file
            newest = max(entries, key=lambda e: str(e.receipt.get("issued_at")))  # type: ignore[union-attr]
            return newest.sha, len(entries)
        return sha, count

    # -- reading --

    def _find_exact(self, receipt_id: str) -> Path | None:
        for path in _receipt_files(self.dir):
            match = _RECEIPT_NAME.fullmatch(path.name)
            if match and match.group(2) == receipt_id:
                return path
        return None

    def path_of(self, receipt_id: str) -> Path:
        """The file of the receipt with this id or unique id prefix."""
        wanted = str(receipt_id).strip()
        if not wanted:
            raise NotFound("give a receipt id (see `memdeck receipts list`)")
        candidates: list[tuple[str, Path]] = []
        for path in _receipt_files(self.dir):
            match = _RECEIPT_NAME.fullmatch(path.name)
            if match:
                candidates.append((match.group(2), path))
        exact = [p for rid, p in candidates if rid == wanted]
        if exact:
            return exact[0]
        matches = [(rid, p) for rid, p in candidates if rid.startswith(wanted)]
        if not matches:
            raise NotFound(f"no deletion receipt {wanted!r} in {self.dir} (see `memdeck receipts list`)")
        if len(matches) > 1:
            shown = ", ".join(rid for rid, _ in matches[:5])
            raise MemdeckError(f"receipt prefix {wanted!r} is ambiguous ({shown}); give more characters")
        return matches[0][1]

    def get(self, receipt_id: str) -> dict[str, Any]:
        """The receipt with this id or unique id prefix."""
        path = self.path_of(receipt_id)
        entry = _read_entry(path)
        if entry.receipt is None:
            raise IntegrityError(f"receipt file {path.name} cannot be read: {entry.error}")
        return entry.receipt

    def _scan(self) -> list[_Entry]:
        return [_read_entry(p) for p in _receipt_files(self.dir)]

    @staticmethod
    def _chain_order(entries: list[_Entry]) -> tuple[list[_Entry], dict[Any, list[_Entry]]]:
        """Receipts from the first along the links; whatever the links do not reach comes after, by time."""
        readable = [e for e in entries if e.receipt is not None]
        successors: dict[Any, list[_Entry]] = {}
        for e in readable:
            successors.setdefault(e.receipt.get("previous_receipt_sha256"), []).append(e)  # type: ignore[union-attr]
        for group in successors.values():
            group.sort(key=lambda e: (str(e.receipt.get("issued_at")), e.path.name))  # type: ignore[union-attr]
        order: list[_Entry] = []
        seen: set[int] = set()
        stack = list(reversed(successors.get(None, [])))
        while stack:
            e = stack.pop()
            if id(e) in seen:
                continue
            seen.add(id(e))
            order.append(e)
            stack.extend(reversed(successors.get(e.sha, [])))
        rest = [e for e in readable if id(e) not in seen]
        rest.sort(key=lambda e: (str(e.receipt.get("issued_at")), e.path.name))  # type: ignore[union-attr]
        # Receipts cut off from the start still keep their own order among themselves.
        while rest:
            first = rest.pop(0)
            stack = [first]
            while stack:
                e = stack.pop()
                if id(e) in seen:
                    continue
                seen.add(id(e))
                order.append(e)
                stack.extend(reversed(successors.get(e.sha, [])))
            rest = [e for e in rest if id(e) not in seen]
        return order, successors

    def list(self) -> builtins.list[dict[str, Any]]:
        """Summary rows in chain order (unreadable files are left out; `verify_chain` reports them)."""
        with _maybe_shared_lock(self.dir):
            entries = self._scan()
        order, _ = self._chain_order(entries)
        rows = []
        for e in order:
            r = e.receipt or {}
            checks = r.get("checks") if isinstance(r.get("checks"), list) else []
            rows.append(
                {
                    "receipt_id": r.get("receipt_id"),
                    "issued_at": r.get("issued_at"),
                    "principal": r.get("principal"),
                    "reason": r.get("reason"),
                    "n_deleted": len(r.get("deleted") or []),
                    "n_cascade": len(r.get("cascade") or []),
                    "all_checks_passed": all(isinstance(c, dict) and c.get("passed") is True for c in checks),
                    "path": str(e.path),
                }
            )
        return rows

    # -- verifying --

    def verify_receipt(self, receipt: dict[str, Any]) -> builtins.list[str]:
        """:func:`verify_receipt` plus: the receipt was signed with this store's key."""
        problems = verify_receipt(receipt)
        key = store_public_key(self.root)
        if key is not None and isinstance(receipt, dict) and receipt.get("public_key") != key:
            problems.append("signed with a key that is not this store's receipt key")
        return problems

    def verify_file(self, path: Path) -> VerifyReport:
        return verify_file(path)

    def verify_chain(self) -> VerifyReport:
        """Walk every receipt: signatures, canonical bytes, links, HEAD, one key, no gaps or forks."""
        problems: list[str] = []
        warnings: list[str] = []
        try:
            store_key = store_public_key(self.root)
        except MemdeckError as exc:
            store_key = None
            problems.append(str(exc))
        with _maybe_shared_lock(self.dir):
            entries = self._scan()
            head_exists = (self.dir / HEAD_FILE).exists()
            head = self._head()
        if entries and store_key is None and not problems:
            warnings.append(
                f"no receipt key in {self.keys_dir}; signatures were checked with the embedded keys"
            )
        for e in entries:
            problems.extend(_file_problems(e, store_key))

        readable = [e for e in entries if e.receipt is not None]
        keys = {e.receipt.get("public_key") for e in readable}  # type: ignore[union-attr]
        if store_key is None and len(keys) > 1:
            problems.append(f"receipts are signed with {len(keys)} different keys")
        ids: dict[Any, list[_Entry]] = {}
        for e in readable:
            ids.setdefault(e.receipt.get("receipt_id"), []).append(e)  # type: ignore[union-attr]
        for rid, group in ids.items():
            if len(group) > 1:
                problems.append(
                    f"receipt id {rid} appears in {len(group)} files: "
                    + ", ".join(g.path.name for g in group)
                )

        by_sha = {e.sha: e for e in readable}
        order, successors = self._chain_order(entries)
        firsts = successors.get(None, [])
        if len(firsts) > 1:
            problems.append(
                "more than one receipt claims to be the first: " + ", ".join(e.label for e in firsts)
            )
        for e in readable:
            prev = e.receipt.get("previous_receipt_sha256")  # type: ignore[union-attr]
            if isinstance(prev, str) and prev not in by_sha:
                problems.append(
                    f"{e.label}: the receipt before it (sha256 {prev[:16]}...) is missing or was altered"
                )
        for prev, group in successors.items():
            if prev is not None and len(group) > 1:
                problems.append(
                    "the chain forks: " + ", ".join(e.label for e in group) + " all follow the same receipt"
                )

        if not head_exists:
            if entries:
                problems.append(
                    f"{self.dir / HEAD_FILE} is missing: cannot tell whether the newest receipts were removed"
                )
        elif head is None:
            problems.append(f"{self.dir / HEAD_FILE} is unreadable")
        else:
            last = order[-1] if order else None
            named = by_sha.get(head["sha256"])
            if named is None:
                problems.append(
                    f"the newest receipt {head.get('receipt_id')} named by HEAD is missing or was altered"
                )
            elif last is not None and named is not last:
                problems.append(
                    f"HEAD names receipt {head.get('receipt_id')} but the chain ends at {last.label}"
                )
            if named is not None and named.receipt.get("receipt_id") != head.get("receipt_id"):  # type: ignore[union-attr]
                problems.append("HEAD's receipt_id does not match the receipt it names")
            if isinstance(head.get("count"), int) and head["count"] != len(entries):
                problems.append(f"HEAD records {head['count']} receipts but {len(entries)} files are present")
        return VerifyReport(ok=not problems, problems=problems, checked=len(entries), warnings=warnings)

    # -- presenting --

    def to_markdown(self, receipt: dict[str, Any]) -> str:
        return to_markdown(receipt)

    def export(self, receipt_id: str, dest: Path, fmt: str = "json") -> Path:
        """Write the receipt (exact signed bytes for json, a summary for md) to ``dest`` (file or folder)."""
        if fmt not in ("json", "md"):
            raise MemdeckError(f"unknown export format {fmt!r}; use json or md")
        src = self.path_of(receipt_id)
        dest = Path(dest).expanduser()
        if dest.is_dir():
            dest = dest / (src.stem + (".json" if fmt == "json" else ".md"))
        if fmt == "json":
            data = src.read_bytes()
        else:
            entry = _read_entry(src)
            if entry.receipt is None:
                raise IntegrityError(f"receipt file {src.name} cannot be read: {entry.error}")
            data = to_markdown(entry.receipt).encode("utf-8")
        try:
            write_atomic_bytes(dest, data, 0o644)
        except OSError as exc:
            raise MemdeckError(f"cannot write {dest}: {exc.strerror}") from None
        return dest


def _cell(value: Any) -> str:
    text = "" if value is None else str(value)
    return " ".join(text.split()).replace("|", "\\|") or "-"


def to_markdown(receipt: dict[str, Any]) -> str:
    """A short summary a person can email: what was erased, when, why, the checks, how to verify.

    It names memories by id only: no text and no content hash (salted or not).
    """
    r = receipt
    deleted = r.get("deleted") or []
    cascade = r.get("cascade") or []
    checks = r.get("checks") or []
    all_ok = bool(checks) and all(isinstance(c, dict) and c.get("passed") is True for c in checks)
    rid = _cell(r.get("receipt_id"))
    issued = _cell(r.get("issued_at"))
    lines = [
        f"# Deletion receipt {rid}",
        "",
        f"- **Issued:** {issued} (UTC)",
        f"- **Whose memories:** {_cell(r.get('principal'))}",
        f"- **Reason:** {_cell(r.get('reason'))}",
        f"- **Erased:** {len(deleted)} memor{'y' if len(deleted) == 1 else 'ies'}"
        + (
            f", plus {len(cascade)} derived record{'' if len(cascade) == 1 else 's'}"
            " that depended only on what was erased"
            if cascade
            else ""
        ),
        f"- **All checks passed:** {'yes' if all_ok else 'NO'}",
        "",
        "## Erased memories",
        "",
    ]
    if deleted:
        lines += ["| id | tier | created |", "|---|---|---|"]
        lines += [
            f"| {_cell(d.get('id'))} | {_cell(d.get('tier'))} | {_cell(d.get('created_at'))} |"
            for d in deleted
            if isinstance(d, dict)
        ]
    else:
        lines.append("None.")
    if cascade:
        lines += ["", "## Derived records removed with them", "", "| id | tier | why |", "|---|---|---|"]
        lines += [
            f"| {_cell(c.get('id'))} | {_cell(c.get('tier'))} | {_cell(c.get('why'))} |"
            for c in cascade
            if isinstance(c, dict)
        ]
    lines += ["", "## What was done", ""]
    actions = r.get("actions") or []
    lines.append(", ".join(_cell(a) for a in actions) if actions else "Nothing recorded.")
    lines += ["", "## Checks that nothing readable remains", ""]
    for c in checks:
        if not isinstance(c, dict):
            continue
        detail = f": {_cell(c.get('detail'))}" if c.get("detail") is not None else ""
        lines.append(
            f"- [{'x' if c.get('passed') is True else ' '}] {_cell(c.get('name'))}"
            f" ({'passed' if c.get('passed') is True else 'FAILED'}){detail}"
        )
    if not checks:
        lines.append("None recorded.")
    others = sorted(k for k in r if k not in RESERVED_KEYS)
    if others:
        lines += ["", "The signed receipt also records: " + ", ".join(others) + "."]
    issued_raw = r.get("issued_at")
    name = (
        f"{_compact(issued_raw)}_{r.get('receipt_id')}.json"
        if isinstance(issued_raw, str)
        else "the receipt JSON file"
    )
    lines += [
        "",
        "## How to verify",
        "",
        f"This summary is not signed; the signed receipt is the JSON file `{name}`.",
        "It carries an Ed25519 signature that anyone can check with any Ed25519 library:",
        "",
        "1. Parse the JSON and remove the `signature` field.",
        "2. Serialise the rest as canonical JSON: keys sorted, separators `,` and `:` with no spaces, UTF-8.",
        "3. Check the base64-decoded `signature` over those bytes with this public key "
        "(raw 32-byte Ed25519, base64):",
        "",
        f"    {_cell(r.get('public_key'))}",
        "",
        f"With memdeck: `memdeck receipts verify {name}`",
        "(in the store it also checks the link to the previous receipt).",
        "",
    ]
    return "\n".join(lines)
