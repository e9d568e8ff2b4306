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

A store shared through a bucket (its lock is a :class:`~memdeck.core.storage.teamlock.TeamLock`) also keeps
its tombstones with the shared data, so that what one machine forgot is refused on every machine: each purge
(and each adopted export's tombstones) writes one object ``_memdeck/tombstones/<purge id>.json``, created
with ``If-None-Match`` and never changed, holding for one principal (``p``, as above)

- ``ids``: each forgotten id, HMAC-SHA256-keyed with the store-wide salt (not in clear: outside the receipt
  chain no object in the bucket names a forgotten memory);
- ``hashes``: each content hash, keyed with the same salt, so another machine matches a re-created text;
- ``vault_tokens``: the redaction tokens (``<SSN_1>``) the forgotten memories held, keyed the same way, so
  each machine can drop those values from its own vault when it sees the purge.

The store-wide salt is ``_memdeck/tombstone-salt.json``, created once with ``If-None-Match`` by the first
machine that needs it; a machine's local ``keys/receipt_salt`` cannot serve, since no other machine has it.
Every machine reads the objects into a per-process cache, lists the prefix again when it opens the store,
when it sees a new receipt in the bucket's chain and, while it asks, every :data:`SHARED_REFRESH_S` seconds.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdeck.core.errors import MemdeckError
from memdeck.core.files import fsync_dir
from memdeck.core.receipts import ReceiptBook
from memdeck.core.receipts.format import salted_hash
from memdeck.core.storage.forgotten import FILE
from memdeck.core.storage.lease import ConditionalObjects, create_once
from memdeck.core.storage.teamlock import TeamLock

if TYPE_CHECKING:
    from memdeck.core.storage.engine import Engine

SHARED = "_memdeck/tombstones/"
SALT_KEY = "_memdeck/tombstone-salt.json"
SHARED_FORMAT = "memdeck.team-tombstones/1"
SALT_FORMAT = "memdeck.tombstone-salt/1"
SHARED_REFRESH_S = 2.0  # how stale a machine's copy of the bucket's tombstones may get while it asks

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


def _path(store: Engine) -> Path:
    return Path(store.layout.tombstones) / FILE


def _signature(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _index(store: Engine) -> _Index:
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


def _append(store: Engine, lines: list[str]) -> None:
    """Append lines to the local tombstone file (folder 0700, file 0600), with ``O_APPEND`` and an fsync."""
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


def _line(mem_id: str | None, p: str, h: str | None) -> str:
    return json.dumps({"id": mem_id, "p": p, "h": h}, sort_keys=True, separators=(",", ":"))


def record(
    store: Engine,
    principal: str,
    entries: Iterable[tuple[str | None, str | None]],
    *,
    purge_id: str | None = None,
    vault_tokens: Iterable[str] = (),
) -> int:
    """Add tombstones for ``(id, content_sha256)`` pairs of one principal (either may be None).

    On a store shared through a bucket they are also written there (as the object of ``purge_id``, once),
    with the keyed names of the ``vault_tokens`` the forgotten memories held."""
    entries = list(entries)
    book = ReceiptBook(store.root)
    p = principal_key(principal)
    lines = []
    for mem_id, sha in entries:
        h = book.salted_hash(sha) if sha else None
        if mem_id or h:
            lines.append(_line(mem_id, p, h))
    _share(store, p, entries, purge_id=purge_id, vault_tokens=vault_tokens)
    if not lines:
        return 0
    _append(store, lines)
    return len(lines)


def is_forgotten(
    store: Engine, principal: str, *, content_sha256: str | None = None, id: str | None = None
) -> bool:
    """True when a memory of ``principal`` with this id or this content hash was forgotten (on this machine,
    or on any machine sharing the store's bucket)."""
    index = _index(store)
    p = principal_key(principal)
    if index.ids or index.hashes:
        if id is not None and (p, id) in index.ids:
            return True
        if content_sha256 and (p, ReceiptBook(store.root).salted_hash(str(content_sha256))) in index.hashes:
            return True
    shared = _shared(store)
    if shared is None or not (shared.ids or shared.hashes):
        return False
    if id is not None and (p, _keyed(shared.salt, "id", id)) in shared.ids:
        return True
    return bool(content_sha256) and (p, salted_hash(shared.salt, str(content_sha256))) in shared.hashes


def forgotten_ids(store: Engine, principals: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """The forgotten ids (with the principal's hashed name) of some principals, or of all: what an export
    carries so that a store it is imported into forgets them too. (On a shared store this machine's file
    also holds the ids other machines forgot, once it has seen their receipts: see :func:`localise`.)"""
    index = _index(store)
    keys = None if principals is None else {principal_key(p) for p in principals}
    return [{"id": i, "p": p} for p, i in sorted(index.ids) if keys is None or p in keys]


def adopt(store: Engine, entries: Any) -> int:
    """Add an export's tombstones (``[{"id", "p"}]``) to this store's (and to the bucket's, when shared)."""
    if entries is None:
        return 0
    if not isinstance(entries, list):
        raise MemdeckError("the export's tombstones must be a list")
    have = _index(store).ids
    lines = []
    for e in entries:
        if (
            isinstance(e, dict)
            and isinstance(e.get("id"), str)
            and isinstance(e.get("p"), str)
            and len(e["id"]) <= 128
            and len(e["p"]) == 64
            and (e["p"], e["id"]) not in have
        ):
            lines.append((e["p"], e["id"]))
    if not lines:
        return 0
    by_principal: dict[str, list[tuple[str | None, str | None]]] = {}
    for p, i in lines:
        by_principal.setdefault(p, []).append((i, None))
    for p, ids in sorted(by_principal.items()):
        _share(store, p, ids)
    _append(store, [_line(i, p, None) for p, i in lines])
    return len(lines)


def localise(store: Engine, principal: str, ids: Iterable[str]) -> int:
    """Copy into this machine's tombstone file the ids of ``principal`` that the bucket's tombstones name
    (ids read from another machine's receipt): this machine's exports then carry them, and its trace log
    drops a queued recall that names one. Ids the bucket does not name (a receipt's cascade also lists
    records that were only updated) are left out."""
    shared = _shared(store)
    if shared is None:
        return 0
    p = principal_key(principal)
    have = _index(store).ids
    lines = [
        _line(i, p, None)
        for i in dict.fromkeys(ids)
        if (p, i) not in have and (p, _keyed(shared.salt, "id", i)) in shared.ids
    ]
    if lines:
        _append(store, lines)
    return len(lines)


# --- the bucket's tombstones ----------------------------------------------------------------------------


def objects_of(store: Engine) -> ConditionalObjects | None:
    """The store's bucket objects when its tables are shared through a bucket with a lease, else None."""
    return store.lock.objects if isinstance(store.lock, TeamLock) else None


def _keyed(salt: bytes, kind: str, value: str) -> str:
    return hmac.new(salt, f"{kind}\0{value}".encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()


def _new_salt() -> bytes:
    return json.dumps({"format": SALT_FORMAT, "salt": secrets.token_hex(32)}).encode()


def _parse_salt(body: bytes) -> bytes:
    try:
        salt = bytes.fromhex(json.loads(body)["salt"])
    except (ValueError, KeyError, TypeError):
        raise MemdeckError(f"the store's tombstone salt {SALT_KEY} in the bucket is damaged") from None
    if len(salt) != 32:
        raise MemdeckError(f"the store's tombstone salt {SALT_KEY} in the bucket is damaged")
    return salt


@dataclass
class Shared:
    """What this process has read of the bucket's tombstones."""

    salt: bytes
    listed_at: float = 0.0
    read: set[str] = field(default_factory=set)  # object keys read
    ids: set[tuple[str, str]] = field(default_factory=set)  # (principal key, keyed id)
    hashes: set[tuple[str, str]] = field(default_factory=set)  # (principal key, keyed content hash)
    tokens: dict[str, tuple[str, frozenset[str]]] = field(default_factory=dict)  # name -> (p, keyed tokens)

    def names(self, keyed_tokens: frozenset[str]) -> Callable[[str], bool]:
        """A test of a vault token against the keyed token names of one tombstone object."""
        salt = self.salt
        return lambda token: _keyed(salt, "token", token) in keyed_tokens


_shared_cache: dict[tuple[Path, str], Shared] = {}


def _cache_key(store: Engine) -> tuple[Path, str]:
    return (Path(store.root).resolve(), str(getattr(store, "uri", "")))


def _shared(store: Engine, *, refresh: bool = False) -> Shared | None:
    """The bucket's tombstones as this process last read them; listed again when older than
    :data:`SHARED_REFRESH_S` or when ``refresh``. None for a store not shared through a bucket."""
    objects = objects_of(store)
    if objects is None:
        return None
    key = _cache_key(store)
    with _lock:
        cached = _shared_cache.get(key)
        if cached is not None and not refresh and time.monotonic() - cached.listed_at < SHARED_REFRESH_S:
            return cached
        listed_at = time.monotonic()
        names = [k for k in objects.list(SHARED) if k.endswith(".json")]
        if cached is None:
            cached = Shared(salt=b"")
        if names and not cached.salt:  # nothing forgotten until now: no salt was needed, none created
            got = objects.get(SALT_KEY)
            if got is None:
                raise MemdeckError(f"the bucket holds tombstones but no {SALT_KEY}: they cannot be matched")
            cached.salt = _parse_salt(got[0])
        for name in names:
            if name not in cached.read:
                _read_shared(objects, name, cached)
        cached.listed_at = listed_at
        _shared_cache[key] = cached
        return cached


def _read_shared(objects: ConditionalObjects, name: str, into: Shared) -> None:
    got = objects.get(name)
    if got is None:
        return
    try:
        data = json.loads(got[0])
        p = str(data["p"])
        ids = [str(i) for i in data.get("ids") or []]
        hashes = [str(h) for h in data.get("hashes") or []]
        tokens = frozenset(str(t) for t in data.get("vault_tokens") or [])
    except (ValueError, KeyError, TypeError, AttributeError):
        raise MemdeckError(f"the tombstone object {name} in the store's bucket is damaged") from None
    into.ids.update((p, i) for i in ids)
    into.hashes.update((p, h) for h in hashes)
    into.tokens[name] = (p, tokens)
    into.read.add(name)


def shared_key(name: str) -> str:
    return f"{SHARED}{name}.json"


def refresh_shared(store: Engine) -> Shared | None:
    """List the bucket's tombstones again now (a new receipt appeared in the chain, or the store opened)."""
    return _shared(store, refresh=True)


def _share(
    store: Engine,
    p: str,
    entries: list[tuple[str | None, str | None]],
    *,
    purge_id: str | None = None,
    vault_tokens: Iterable[str] = (),
) -> None:
    """Write one principal's tombstones to the bucket, when the store is shared through one."""
    objects = objects_of(store)
    if objects is None:
        return
    tokens = sorted(set(vault_tokens))
    if not entries and not tokens:
        return
    salt = _parse_salt(create_once(objects, SALT_KEY, _new_salt))
    body = {
        "format": SHARED_FORMAT,
        "p": p,
        "ids": sorted({_keyed(salt, "id", i) for i, _ in entries if i}),
        "hashes": sorted({salted_hash(salt, h) for _, h in entries if h}),
        "vault_tokens": sorted({_keyed(salt, "token", t) for t in tokens}),
    }
    name = shared_key(purge_id or f"adopted-{uuid.uuid4().hex}")
    # A purge resumed after a crash writes the same object again: the first one stands.
    objects.create(name, json.dumps(body, sort_keys=True).encode())
    with _lock:
        _shared_cache.pop(_cache_key(store), None)  # read back with the next question
