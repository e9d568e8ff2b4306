"""The receipt format's byte-level rules: canonical JSON, hashes, salted content hashes, parsing (docs/receipts.md)."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from memdeck.core.errors import MemdeckError

FORMAT = "memdeck.deletion-receipt/1"
KEY_FILE = "receipt_ed25519.key"
SALT_FILE = "receipt_salt"
HEAD_FILE = "HEAD"
HEAD_FORMAT = "memdeck.receipts-head/1"
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


def receipt_sha256(receipt: Mapping[str, Any]) -> str:
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


def _is_canonical_file(raw: bytes, receipt: Mapping[str, Any]) -> bool:
    try:
        canon = canonical_json(receipt)
    except (TypeError, ValueError):
        return False
    return raw == canon + b"\n" or raw == canon
