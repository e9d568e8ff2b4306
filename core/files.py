"""Small durable file writes and file locks shared by receipts, the vault, the purge journal, the trace log
and the store's metadata. The one place that writes atomically and the one place that takes an flock."""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
import time
from collections.abc import Iterator
from pathlib import Path

from memdeck.core.errors import MemdeckError


def fsync_dir(path: Path) -> None:
    """Make a rename or unlink in ``path`` durable; a filesystem that cannot fsync a directory is ignored."""
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_atomic_bytes(path: Path, data: bytes, mode: int = 0o600, *, sync_dir: bool = True) -> None:
    """Write via a unique temporary file and a rename, so readers never see a partial file. With
    ``sync_dir`` the directory is fsynced too; a caller with its own stricter directory sync passes False."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # ``<name>.tmp<pid>.<random>``: a crash leaves a file that recovery can find by its name's prefix.
    tmp = path.with_name(f"{path.name}.tmp{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)  # the umask may have narrowed it; never widened
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if sync_dir:
        fsync_dir(path.parent)


def write_atomic_text(path: Path, text: str, mode: int = 0o600) -> None:
    """:func:`write_atomic_bytes` for UTF-8 text."""
    write_atomic_bytes(path, text.encode("utf-8"), mode)


@contextlib.contextmanager
def flock(path: Path, *, exclusive: bool, timeout: float | None = None, busy: str = "") -> Iterator[None]:
    """Hold an flock on ``path`` (created 0600). Works between processes, and between threads of one
    process since each call opens its own descriptor. ``timeout`` None waits for ever; otherwise a
    :class:`MemdeckError` saying ``busy`` is raised once it runs out. Closing the descriptor releases it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
        if timeout is None:
            fcntl.flock(fd, mode)
        else:
            deadline = time.monotonic() + timeout
            delay = 0.01
            while True:
                try:
                    fcntl.flock(fd, mode | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise MemdeckError(busy or f"{path} is locked by another process; try again") from None
                    time.sleep(delay)
                    delay = min(delay * 2, 0.2)
        yield
    finally:
        os.close(fd)
