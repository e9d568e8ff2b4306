"""Per-principal encrypted token vault: ``<EMAIL_1>`` -> the original value, never stored in clear.

Layout under ``root`` (``<store>/vault``)::

    root/                         0700
      .locks/<sha256>.lock        fcntl lock, one per principal (empty file)
      <sha256(principal)>/        0700 - the principal's name never appears on disk
        key                       32 random bytes, 0600
        vault.bin                 b"MDV1" + 12-byte nonce + AES-256-GCM(JSON token map),
                                  associated data = the principal's name

Every write re-encrypts the whole map with a fresh nonce and replaces the file atomically (temporary file,
fsync, ``os.replace``, fsync of the directory) while holding the principal's lock, so two processes adding
tokens at the same time never lose one. Decrypted maps are cached per process and re-read whenever the
file changed (inode, size, mtime and nonce are compared).

``destroy`` is crypto-shredding: the key file is overwritten with zeros and fsynced before the key, the
vault and the directory are removed; without the key any copy of ``vault.bin`` (backups, snapshots) is
unreadable.

The key lives in a 0600 file next to the vault. The OS keyring is not used: ``keyring`` is not a
dependency of memdeck and headless machines (CI, servers) rarely have a usable backend.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import re
import stat
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from memdeck.core.errors import IntegrityError, MemdeckError
from memdeck.core.files import write_atomic_bytes

MAGIC = b"MDV1"
NONCE_LEN = 12
KEY_LEN = 32
_AAD_PREFIX = b"memdeck-vault-v1\x00"
# a kind is one or two upper-case words: EMAIL, NATIONAL_ID
_KIND_RE = re.compile(r"^[A-Z][A-Z0-9]{0,15}(?:_[A-Z][A-Z0-9]{0,15})?$")
_TOKEN_RE = re.compile(r"<([A-Z][A-Z0-9]{0,15}(?:_[A-Z][A-Z0-9]{0,15})?)_(\d{1,9})>")
# The vault of values redacted from what the store's operator (every principal in scope) typed: a name no
# principal can have (check_principal refuses NUL).
OPERATOR_VAULT = "\x00operator"


def principal_dirname(principal: str) -> str:
    """The on-disk name for a principal's vault directory."""
    return hashlib.sha256(principal.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass
class _Entry:
    sig: tuple | None
    key: bytes
    tokens: dict[str, str] = field(default_factory=dict)  # token -> value
    reverse: dict[tuple[str, str], str] = field(default_factory=dict)  # (kind, value) -> token
    counters: dict[str, int] = field(default_factory=dict)  # kind -> highest number used

    @classmethod
    def build(
        cls, sig: tuple | None, key: bytes, tokens: dict[str, str], counters: dict[str, int] | None = None
    ) -> _Entry:
        entry = cls(sig, key)
        for tok, value in tokens.items():
            entry._index(tok, value)
        for kind, num in (counters or {}).items():
            # numbers of pruned tokens are never issued again: an old copy of a forgotten text that still
            # holds ``<SSN_1>`` must not come to name a new value
            if _KIND_RE.match(kind) and num > entry.counters.get(kind, 0):
                entry.counters[kind] = num
        return entry

    def drop(self, tokens: set[str]) -> int:
        gone = [t for t in self.tokens if t in tokens]
        for tok in gone:
            value = self.tokens.pop(tok)
            m = _TOKEN_RE.fullmatch(tok)
            if m and self.reverse.get((m.group(1), value)) == tok:
                del self.reverse[(m.group(1), value)]
        return len(gone)

    def _index(self, token: str, value: str) -> None:
        m = _TOKEN_RE.fullmatch(token)
        if not m:
            return
        kind, num = m.group(1), int(m.group(2))
        self.tokens[token] = value
        self.reverse.setdefault((kind, value), token)
        if num > self.counters.get(kind, 0):
            self.counters[kind] = num

    def add(self, kind: str, value: str) -> str:
        num = self.counters.get(kind, 0) + 1
        token = f"<{kind}_{num}>"
        self._index(token, value)
        return token


class Vault:
    """Encrypted token -> value maps, one per principal, under ``root``."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        self._cache: dict[str, _Entry] = {}
        self._tlock = threading.RLock()

    # ------------------------------------------------------------------ paths

    def _dir(self, principal: str) -> Path:
        return self.root / principal_dirname(principal)

    def _lock_path(self, principal: str) -> Path:
        return self.root / ".locks" / f"{principal_dirname(principal)}.lock"

    @staticmethod
    def _check_principal(principal: str) -> None:
        if not isinstance(principal, str) or not principal:
            raise MemdeckError("a vault principal must be a non-empty string")

    # ------------------------------------------------------------------ public API

    def exists(self, principal: str) -> bool:
        self._check_principal(principal)
        return (self._dir(principal) / "key").exists()

    def token_for(self, principal: str, kind: str, value: str) -> str:
        """The stable token for value (created and persisted if it is new)."""
        return self.tokens_for(principal, [(kind, value)])[0]

    def tokens_for(self, principal: str, items: Sequence[tuple[str, str]]) -> list[str]:
        """Tokens for many (kind, value) pairs with at most one vault write."""
        self._check_principal(principal)
        for kind, value in items:
            if not isinstance(kind, str) or not _KIND_RE.match(kind):
                raise MemdeckError(f"invalid token kind {kind!r}: use upper-case letters, e.g. EMAIL")
            if not isinstance(value, str):
                raise MemdeckError(f"vault values must be strings, got {type(value).__name__}")
        if not items:
            return []
        with self._tlock:
            entry = self._load(principal)
            if entry is not None and all((k, v) in entry.reverse for k, v in items):
                return [entry.reverse[(k, v)] for k, v in items]
            with self._locked(principal):
                entry = self._load(principal, create=True)
                assert entry is not None
                out = []
                changed = False
                for kind, value in items:
                    tok = entry.reverse.get((kind, value))
                    if tok is None:
                        tok = entry.add(kind, value)
                        changed = True
                    out.append(tok)
                if changed:
                    self._write(principal, entry)
                return out

    def lookup(self, principal: str, token: str) -> str | None:
        self._check_principal(principal)
        with self._tlock:
            entry = self._load(principal)
            return None if entry is None else entry.tokens.get(token)

    def tokens(self, principal: str) -> dict[str, str]:
        """A copy of the principal's whole token -> value map (empty when there is no vault)."""
        self._check_principal(principal)
        with self._tlock:
            entry = self._load(principal)
            return {} if entry is None else dict(entry.tokens)

    def reveal(self, principal: str, text: str) -> str:
        """Replace this principal's tokens in text with their values; leave every other token alone."""
        self._check_principal(principal)
        if "<" not in text:
            return text
        with self._tlock:
            entry = self._load(principal)
        if entry is None or not entry.tokens:
            return text
        table = entry.tokens
        return _TOKEN_RE.sub(lambda m: table.get(m.group(0), m.group(0)), text)

    def prune(self, principal: str, tokens: set[str]) -> int:
        """Remove these tokens' values from the principal's vault (a forget's leftovers); returns how many.

        Their numbers are kept as used, so no later value is ever given a pruned token."""
        self._check_principal(principal)
        if not tokens:
            return 0
        with self._tlock:
            if self._load(principal) is None:
                return 0
            with self._locked(principal):
                entry = self._load(principal)
                if entry is None:
                    return 0
                removed = entry.drop(tokens)
                if removed:
                    self._write(principal, entry)
                return removed

    def rename(self, old: str, new: str) -> bool:
        """Move the vault written under ``old`` (another spelling of a principal's name) to ``new``: the same
        tokens and counters under a fresh key, encrypted for the new name; the old one is crypto-shredded.
        Only when ``new`` has no vault of its own (two maps could give one token two values): False then."""
        self._check_principal(old)
        self._check_principal(new)
        with self._tlock:
            if old == new or not self.exists(old) or self.exists(new):
                return False
            with self._locked(new):
                with self._locked(old):
                    entry = self._load(old)
                    if entry is None:
                        return False
                    moved = _Entry.build(
                        None, self._create_key(new), dict(entry.tokens), dict(entry.counters)
                    )
                    self._write(new, moved)
                    self._cache[new] = moved
        self.destroy(old)
        return True

    def destroy(self, principal: str) -> dict:
        """Crypto-shred the principal's vault: zero the key, fsync, delete key, vault and directory."""
        self._check_principal(principal)
        d = self._dir(principal)
        with self._tlock:
            if not d.exists():
                self._cache.pop(principal, None)
                return {"principal_vault_destroyed": False, "tokens": 0}
            with self._locked(principal, remove_after=True):
                count = 0
                try:
                    entry = self._load(principal)
                    count = 0 if entry is None else len(entry.tokens)
                except (IntegrityError, MemdeckError):
                    count = 0  # unreadable: shred it anyway
                key_path = d / "key"
                if key_path.exists():
                    _shred(key_path)
                for child in d.iterdir():
                    try:
                        child.unlink()
                    except IsADirectoryError:  # pragma: no cover - nothing creates sub-directories
                        pass
                try:
                    d.rmdir()
                except OSError as exc:  # pragma: no cover
                    raise MemdeckError(f"could not remove vault directory {d}: {exc}") from None
                _fsync_dir(self.root)
                self._cache.pop(principal, None)
        return {"principal_vault_destroyed": True, "tokens": count}

    # ------------------------------------------------------------------ internals

    @contextmanager
    def _locked(self, principal: str, remove_after: bool = False) -> Iterator[None]:
        path = self._lock_path(principal)
        _mkdir_private(self.root)
        _mkdir_private(path.parent)
        while True:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                try:
                    same = os.stat(path).st_ino == os.fstat(fd).st_ino
                except FileNotFoundError:
                    same = False
            except BaseException:
                os.close(fd)
                raise
            if same:
                break
            os.close(fd)  # the lock file was removed (destroy) while we waited: take the new one
        try:
            yield
        finally:
            if remove_after:
                try:
                    path.unlink()
                except FileNotFoundError:  # pragma: no cover
                    pass
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def _signature(self, path: Path) -> tuple | None:
        try:
            with open(path, "rb") as fh:
                st = os.fstat(fh.fileno())
                head = fh.read(len(MAGIC) + NONCE_LEN)
        except FileNotFoundError:
            return None
        return (st.st_ino, st.st_size, st.st_mtime_ns, head)

    def _read_key(self, principal: str) -> bytes | None:
        path = self._dir(principal) / "key"
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            return None
        try:
            if stat.S_IMODE(os.fstat(fd).st_mode) & 0o077:
                os.fchmod(fd, 0o600)  # someone widened it: the key is for this user only
            key = os.read(fd, KEY_LEN + 1)
        finally:
            os.close(fd)
        if len(key) != KEY_LEN or key == bytes(KEY_LEN):
            raise IntegrityError("vault key file is damaged or was shredded; its tokens cannot be revealed")
        return key

    def _load(self, principal: str, create: bool = False) -> _Entry | None:
        """The principal's map (cached while the file is unchanged); None when there is no vault."""
        d = self._dir(principal)
        vault_path = d / "vault.bin"
        sig = self._signature(vault_path)
        cached = self._cache.get(principal)
        if cached is not None and sig is not None and cached.sig == sig:
            return cached
        key = self._read_key(principal)
        if key is None:
            self._cache.pop(principal, None)
            if not create:
                return None
            key = self._create_key(principal)
        if sig is None:
            entry = _Entry.build(None, key, {})
        else:
            tokens, counters = self._decrypt(principal, key, vault_path.read_bytes())
            entry = _Entry.build(sig, key, tokens, counters)
            # the file may have been replaced between the signature and the read: re-sign what we read
            entry.sig = sig if self._signature(vault_path) == sig else None
        self._cache[principal] = entry
        return entry

    def _create_key(self, principal: str) -> bytes:
        """Create the principal's directory and key (caller holds the lock)."""
        d = self._dir(principal)
        _mkdir_private(self.root)
        _mkdir_private(d)
        key = os.urandom(KEY_LEN)
        write_atomic_bytes(d / "key", key, 0o600, sync_dir=False)
        _fsync_dir(self.root)
        return key

    def _decrypt(self, principal: str, key: bytes, blob: bytes) -> tuple[dict[str, str], dict[str, int]]:
        from cryptography.exceptions import InvalidTag
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        if not blob.startswith(MAGIC) or len(blob) < len(MAGIC) + NONCE_LEN + 16:
            raise IntegrityError("vault file is not a memdeck vault or is truncated")
        nonce = blob[len(MAGIC) : len(MAGIC) + NONCE_LEN]
        try:
            plain = AESGCM(key).decrypt(nonce, blob[len(MAGIC) + NONCE_LEN :], _aad(principal))
        except InvalidTag:
            raise IntegrityError(
                "vault cannot be decrypted: wrong key, wrong principal or tampered file"
            ) from None
        data = json.loads(plain.decode("utf-8"))
        tokens = data.get("tokens", {})
        counters = data.get("counters", {})
        if not isinstance(tokens, dict) or not isinstance(counters, dict):
            raise IntegrityError("vault content is malformed")
        used = {str(k): int(v) for k, v in counters.items() if isinstance(v, int) and not isinstance(v, bool)}
        return {str(k): str(v) for k, v in tokens.items()}, used

    def _write(self, principal: str, entry: _Entry) -> None:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        payload = json.dumps(
            {"v": 1, "tokens": entry.tokens, "counters": entry.counters}, separators=(",", ":")
        ).encode("utf-8")
        nonce = os.urandom(NONCE_LEN)
        blob = MAGIC + nonce + AESGCM(entry.key).encrypt(nonce, payload, _aad(principal))
        path = self._dir(principal) / "vault.bin"
        write_atomic_bytes(path, blob, 0o600, sync_dir=False)
        _fsync_dir(path.parent)
        entry.sig = self._signature(path)


# ----------------------------------------------------------------------------------------------------


def _aad(principal: str) -> bytes:
    return _AAD_PREFIX + principal.encode("utf-8", "surrogatepass")


def _mkdir_private(path: Path) -> None:
    try:
        path.mkdir(mode=0o700, parents=True)
    except FileExistsError:
        return
    os.chmod(path, 0o700)


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:  # pragma: no cover
        return
    try:
        os.fsync(fd)
    except OSError as exc:  # pragma: no cover - some filesystems refuse fsync on directories
        if exc.errno not in (errno.EINVAL, errno.EBADF):
            raise
    finally:
        os.close(fd)


def _shred(path: Path) -> None:
    """Overwrite a file with zeros and flush it to disk before it is unlinked."""
    size = path.stat().st_size
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, bytes(max(size, KEY_LEN)))
        os.fsync(fd)
    finally:
        os.close(fd)
    path.unlink()
