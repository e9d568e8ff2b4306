"""Small durable file writes shared by receipts, the vault, the purge journal and the trace log."""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path


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
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
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
