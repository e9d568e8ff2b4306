"""Tombstones: what was forgotten stays forgotten.

A purge records, for every memory it removes, its id and its content hash salted with the store's receipt
salt (the same ``content_sha256_salted`` a receipt holds), under the principal's hashed name. Import,
restore, sync and consolidation ask :func:`is_forgotten` before they write, and refuse a record that
matches, so an old export or a source episode cannot bring a forgotten memory back.

Layout: ``<store>/tombstones/tombstones.jsonl`` (folder 0700, file 0600), one JSON object a line,
``{"id": ..., "p": sha256(principal), "h": salted content hash or null}``, appended with ``O_APPEND``.
Nothing in it is text: an id, a hash of a name, and a hash nobody can test a guess against without the
store's salt. An export carries the ids (not the hashes: they are keyed with this store's salt), and an
import of that export adds them to the importing store's tombstones.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdeck.core.errors import MemdeckError
from memdeck.core.files import fsync_dir
from memdeck.core.receipts import ReceiptBook

if TYPE_CHECKING:
    from memdeck.core.store import Store

from memdeck.core.storage.forgotten import FILE

_lock = threading.Lock()
_suppressed: ContextVar[bool] = ContextVar("memdeck_tombstones_suppressed", default=False)


@contextlib.contextmanager
def housekeeping() -> Iterator[None]:
    """Forgets inside this block leave no tombstone: a Markdown section that changed or left its folder
    is replaced, not erased for good, and may come back with the file."""
    token = _suppressed.set(True)
    try:
        yield
    finally:
        _suppressed.reset(token)


def wanted() -> bool:
    """Whether a forget starting now records tombstones."""
    return not _suppressed.get()


def principal_key(principal: str) -> str:
    return hashlib.sha256(principal.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass
class _Index:
    sig: tuple[int, int, int] | None = None
    ids: set[tuple[str, str]] = field(default_factory=set)  # (principal key, id)
    hashes: set[tuple[str, str]] = field(default_factory=set)  # (principal key, salted hash)


_cache: dict[Path, _Index] = {}


def _path(store: Store) -> Path:
    return Path(store.layout.tombstones) / FILE


def _signature(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _index(store: Store) -> _Index:
    path = _path(store)
    with _lock:
        sig = _signature(path)
        cached = _cache.get(path)
        if cached is not None and cached.sig == sig:
            return cached
        index = _Index(sig)
        if sig is not None:
            with open(path, encoding="utf-8") as fh:
                for line in fh:
                    try:
                        entry = json.loads(line)
                    except ValueError:
                        continue  # a torn last line of a killed append: the next append repeats it
                    if not isinstance(entry, dict) or not isinstance(entry.get("p"), str):
                        continue
                    if isinstance(entry.get("id"), str):
                        index.ids.add((entry["p"], entry["id"]))
                    if isinstance(entry.get("h"), str):
                        index.hashes.add((entry["p"], entry["h"]))
        _cache[path] = index
        return index


def record(store: Store, principal: str, entries: Iterable[tuple[str | None, str | None]]) -> int:
    """Add tombstones for ``(id, content_sha256)`` pairs of one principal (either may be None)."""
    book = ReceiptBook(store.root)
    p = principal_key(principal)
    lines = []
    for mem_id, sha in entries:
        h = book.salted_hash(sha) if sha else None
        if mem_id or h:
            lines.append(json.dumps({"id": mem_id, "p": p, "h": h}, sort_keys=True, separators=(",", ":")))
    if not lines:
        return 0
    path = _path(store)
    directory = path.parent
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(directory, 0o700)
    data = ("\n" + "\n".join(lines) + "\n").encode("utf-8")  # leading newline: never glue onto a torn line
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    fsync_dir(directory)
    return len(lines)


def is_forgotten(
    store: Store, principal: str, *, content_sha256: str | None = None, id: str | None = None
) -> bool:
    """True when a memory of ``principal`` with this id or this content hash was forgotten."""
    index = _index(store)
    if not index.ids and not index.hashes:
        return False
    p = principal_key(principal)
    if id is not None and (p, id) in index.ids:
        return True
    return bool(content_sha256) and (p, ReceiptBook(store.root).salted_hash(str(content_sha256))) in index.hashes


def forgotten_ids(store: Store, principals: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """The forgotten ids (with the principal's hashed name) of some principals, or of all: what an export
    carries so that a store it is imported into forgets them too."""
    index = _index(store)
    keys = None if principals is None else {principal_key(p) for p in principals}
    return [{"id": i, "p": p} for p, i in sorted(index.ids) if keys is None or p in keys]


def adopt(store: Store, entries: Any) -> int:
    """Add an export's tombstones (``[{"id", "p"}]``) to this store's."""
    if entries is None:
        return 0
    if not isinstance(entries, list):
        raise MemdeckError("the export's tombstones must be a list")
    have = _index(store).ids
    lines = []
    for e in entries:
        if (isinstance(e, dict) and isinstance(e.get("id"), str) and isinstance(e.get("p"), str)
                and len(e["id"]) <= 128 and len(e["p"]) == 64 and (e["p"], e["id"]) not in have):
            lines.append((e["p"], e["id"]))
    if not lines:
        return 0
    path = _path(store)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    data = "\n" + "\n".join(json.dumps({"id": i, "p": p, "h": None}, sort_keys=True) for p, i in lines) + "\n"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        os.write(fd, data.encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)
    return len(lines)
