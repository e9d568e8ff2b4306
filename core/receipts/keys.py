"""The store's receipt signing key and salt on disk, and the locks around the receipts folder."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from memdeck.core.errors import IntegrityError, MemdeckError
from memdeck.core.files import flock
from memdeck.core.paths import StoreLayout
from memdeck.core.receipts.format import KEY_FILE, LOCK_FILE, _b64

# --- files and locks ----------------------------------------------------------------------------------


def _make_private_dir(path: Path) -> None:
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    with contextlib.suppress(OSError):
        os.chmod(path, 0o700)


@contextlib.contextmanager
def maybe_shared_lock(directory: Path) -> Iterator[None]:
    """A shared lock for readers; a missing or read-only folder is read unlocked."""
    lock_path = directory / LOCK_FILE
    try:
        os.close(os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600))
    except OSError:
        yield
        return
    with flock(lock_path, exclusive=False):
        yield


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
