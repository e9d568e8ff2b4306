"""The receipts of one store: issue (signed, chained), list, read, verify the chain, export."""

from __future__ import annotations

import builtins
import json
import secrets
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from memdeck.core.errors import IntegrityError, MemdeckError, NotFound
from memdeck.core.files import check_output_file, flock, write_atomic_bytes
from memdeck.core.paths import StoreLayout
from memdeck.core.receipts.format import (
    _HEX64,
    _RECEIPT_ID,
    _RECEIPT_NAME,
    FORMAT,
    HEAD_FILE,
    HEAD_FORMAT,
    KEY_FILE,
    LOCK_FILE,
    RESERVED_KEYS,
    SALT_BYTES,
    SALT_FILE,
    _b64,
    _compact,
    _now_rfc3339,
    _rfc3339,
    canonical_json,
    salted_hash,
    sha256_hex,
)
from memdeck.core.receipts.keys import (
    _load_private_key,
    _make_private_dir,
    _public_b64,
    maybe_shared_lock,
    store_public_key,
)
from memdeck.core.receipts.markdown import to_markdown
from memdeck.core.receipts.types import CascadeItem, Check, DeletedItem, Receipt, ReceiptExtra, ReceiptRow
from memdeck.core.receipts.verify import (
    VerifyReport,
    _Entry,
    _file_problems,
    _read_entry,
    _receipt_files,
    check_head,
    outcomes_of,
    verify_file,
    verify_receipt,
)

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
            with flock(self.keys_dir / ".receipt-keys.lock", exclusive=True):
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

    def sign(self, data: bytes) -> bytes:
        """Sign bytes with this store's receipt key (the links of a bucket's receipt chain)."""
        self._ensure_keys()
        assert self._key is not None
        return self._key.sign(data)

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
        deleted: Sequence[Mapping[str, Any]],
        cascade: Sequence[Mapping[str, Any]],
        actions: Sequence[str],
        checks: Sequence[Mapping[str, Any]],
        extra: ReceiptExtra | None = None,
        receipt_id: str | None = None,
    ) -> Receipt:
        """Sign and store a receipt, appended to the chain. Idempotent for a caller-supplied receipt_id."""
        if receipt_id is None:
            receipt_id = uuid.uuid4().hex
        elif not isinstance(receipt_id, str) or not _RECEIPT_ID.fullmatch(receipt_id):
            raise MemdeckError(
                "receipt_id must be 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit"
            )
        added: dict[str, Any] = dict(extra or {})
        clash = sorted(RESERVED_KEYS & added.keys())
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
            **added,
        }
        try:
            canonical_json(body)
        except (TypeError, ValueError) as exc:
            raise MemdeckError(f"receipt content is not plain JSON: {exc}") from None

        _make_private_dir(self.dir)
        with flock(self.dir / LOCK_FILE, exclusive=True):
            existing = self._find_exact(receipt_id)
            if existing is not None:
                entry = _read_entry(existing)
                if entry.receipt is None:
                    raise IntegrityError(f"receipt {receipt_id} exists but cannot be read: {entry.error}")
                head = self._head()
                if head is None or head.get("count") != len(_receipt_files(self.dir)):
                    # A purge killed between writing this receipt and moving HEAD: repair HEAD now.
                    tip, count = self._tip()
                    if entry.sha is not None and tip == entry.sha:
                        self._write_head(receipt_id, entry.sha, existing.name, count)
                return entry.receipt
            previous, count = self._tip()
            body["issued_at"] = _now_rfc3339()
            body["previous_receipt_sha256"] = previous
            body["public_key"] = _public_b64(self._key)
            signature = self._key.sign(canonical_json(body))
            # Every reserved field is set above; the extra fields are typed by ReceiptExtra.
            receipt = cast(Receipt, {**body, "signature": _b64(signature)})
            data = canonical_json(receipt)
            name = f"{_compact(body['issued_at'])}_{receipt_id}.json"
            write_atomic_bytes(self.dir / name, data + b"\n", 0o600)
            self._write_head(receipt_id, sha256_hex(data), name, count + 1)
        return receipt

    def _deleted_item(self, item: Mapping[str, Any]) -> DeletedItem:
        assert self._salt is not None
        if not isinstance(item, Mapping) or "id" not in item:
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
    def _cascade_item(item: Mapping[str, Any]) -> CascadeItem:
        if not isinstance(item, Mapping) or "id" not in item:
            raise MemdeckError("each cascade entry needs an id, a tier and a why")
        return {
            "id": str(item["id"]),
            "tier": None if item.get("tier") is None else str(item["tier"]),
            "why": str(item.get("why", "")),
        }

    @staticmethod
    def _check_item(item: Mapping[str, Any]) -> Check:
        if not isinstance(item, Mapping) or "name" not in item:
            raise MemdeckError("each check needs a name and passed")
        out: Check = {"name": str(item["name"]), "passed": bool(item.get("passed"))}
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
        # Signed, so a newest receipt deleted with HEAD rewritten to the one before shows (docs/receipts.md).
        self._ensure_keys()
        assert self._key is not None
        head: dict[str, Any] = {
            "format": HEAD_FORMAT,
            "receipt_id": receipt_id,
            "sha256": sha,
            "file": name,
            "count": count,
            "public_key": _public_b64(self._key),
        }
        head["signature"] = _b64(self._key.sign(canonical_json(head)))
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
            count = int(head["count"]) if isinstance(head.get("count"), int) else len(files)
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

    def get(self, receipt_id: str) -> Receipt:
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

    def list(self) -> builtins.list[ReceiptRow]:
        """Summary rows in chain order (unreadable files are left out; `verify_chain` reports them)."""
        with maybe_shared_lock(self.dir):
            entries = self._scan()
        order, _ = self._chain_order(entries)
        outcomes = {
            o["receipt_id"]: o for o in outcomes_of([e.receipt for e in order if e.receipt is not None])
        }
        rows: builtins.list[ReceiptRow] = []
        for e in order:
            r: Mapping[str, Any] = e.receipt or {}
            raw_checks = r.get("checks")
            checks: builtins.list[Any] = raw_checks if isinstance(raw_checks, builtins.list) else []
            rows.append(
                {
                    "receipt_id": r.get("receipt_id"),
                    "issued_at": r.get("issued_at"),
                    "principal": r.get("principal"),
                    "reason": r.get("reason"),
                    "n_deleted": len(r.get("deleted") or []),
                    "n_cascade": len(r.get("cascade") or []),
                    "all_checks_passed": all(isinstance(c, dict) and c.get("passed") is True for c in checks),
                    "outcome": outcomes[str(r.get("receipt_id"))]["outcome"],
                    "settled_by": outcomes[str(r.get("receipt_id"))]["settled_by"],
                    "path": str(e.path),
                }
            )
        return rows

    # -- verifying --

    def verify_receipt(self, receipt: Mapping[str, Any]) -> builtins.list[str]:
        """:func:`verify_receipt` plus: the receipt was signed with this store's key."""
        problems = verify_receipt(receipt)
        key = store_public_key(self.root)
        if key is not None and isinstance(receipt, Mapping) and receipt.get("public_key") != key:
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
        with maybe_shared_lock(self.dir):
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
            problems.extend(check_head(head, store_key))
        key = store_key or next((k for k in keys if isinstance(k, str)), None)
        return VerifyReport(
            ok=not problems,
            problems=problems,
            checked=len(entries),
            warnings=warnings,
            public_key=key,
            key_source="store" if store_key else "embedded",
            head_count=head.get("count") if head is not None and isinstance(head.get("count"), int) else None,
            outcomes=outcomes_of([e.receipt for e in order if e.receipt is not None]),
        )

    # -- presenting --

    def to_markdown(self, receipt: Receipt) -> str:
        return to_markdown(receipt)

    def export(self, receipt_id: str, dest: Path, fmt: str = "json") -> Path:
        """Write the receipt (exact signed bytes for json, a summary for md) to ``dest`` (file or folder)."""
        if fmt not in ("json", "md"):
            raise MemdeckError(f"unknown export format {fmt!r}; use json or md")
        src = self.path_of(receipt_id)
        if fmt == "json":
            return _write_export(dest, src.stem, fmt, src.read_bytes())
        entry = _read_entry(src)
        if entry.receipt is None:
            raise IntegrityError(f"receipt file {src.name} cannot be read: {entry.error}")
        return _write_export(dest, src.stem, fmt, to_markdown(entry.receipt).encode("utf-8"))


def export_receipt(receipt: Receipt, dest: Path, fmt: str = "json") -> Path:
    """Write a receipt read from elsewhere (the bucket's chain) as :meth:`ReceiptBook.export` writes one:
    its canonical signed bytes for json, the summary for md."""
    if fmt not in ("json", "md"):
        raise MemdeckError(f"unknown export format {fmt!r}; use json or md")
    stem = f"{_compact(str(receipt.get('issued_at', '')))}_{receipt.get('receipt_id')}"
    data = canonical_json(receipt) + b"\n" if fmt == "json" else to_markdown(receipt).encode("utf-8")
    return _write_export(dest, stem, fmt, data)


def _write_export(dest: Path, stem: str, fmt: str, data: bytes) -> Path:
    dest = Path(dest).expanduser()
    if dest.is_dir():
        dest = dest / (stem + (".json" if fmt == "json" else ".md"))
    check_output_file(dest)  # a FIFO, device or symbolic link is refused, never replaced
    try:
        write_atomic_bytes(dest, data, 0o600)
    except OSError as exc:
        raise MemdeckError(f"cannot write {dest}: {exc.strerror}") from None
    return dest
