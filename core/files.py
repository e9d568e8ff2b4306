"""Small durable file writes and file locks shared by receipts, the vault, the purge journal, the trace log
and the store's metadata. The one place that writes atomically and the one place that takes an flock."""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
import stat
import time
from collections.abc import Iterator
from pathlib import Path

from memdeck.core.errors import FileBusy, MemdeckError


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
    fd = create_private(tmp, mode)
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


def make_private_tree(root: Path) -> int:
    """Tighten a store directory an older memdeck left open (0755 folders, 0644 files): every folder 0700,
    every file 0600, where the owner is this user (another's files are left as they are; links are not
    followed). Only walks when the root itself is open to others, so a private store costs one stat.
    Returns how many modes were changed."""
    try:
        st = os.lstat(root)
    except OSError:
        return 0
    uid = os.getuid()
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != uid or not stat.S_IMODE(st.st_mode) & 0o077:
        return 0
    changed = 0

    def tighten(path: Path, want: int) -> None:
        nonlocal changed
        try:
            info = os.lstat(path)
            if info.st_uid != uid or stat.S_ISLNK(info.st_mode) or stat.S_IMODE(info.st_mode) == want:
                return
            if stat.S_ISDIR(info.st_mode) or stat.S_ISREG(info.st_mode):
                os.chmod(path, want, follow_symlinks=False)
                changed += 1
        except (OSError, NotImplementedError):
            pass  # a file removed meanwhile, or a filesystem without modes: nothing to tighten

    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        for name in filenames:
            tighten(here / name, 0o600)
        for name in dirnames:
            tighten(here / name, 0o700)
    tighten(root, 0o700)  # last: while it is open the walk can still read every folder
    return changed


def create_private(path: Path, mode: int = 0o600) -> int:
    """A new file, opened for writing: never an existing one, never through a symbolic link."""
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), mode)


def check_output_file(path: Path) -> None:
    """Refuse, with one line, to write over anything but a regular file (or nothing) at ``path``.

    An export renamed over a FIFO, a device node or a symbolic link would replace it; the user meant to
    write into it or through it, and neither is what an export does.
    """
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise MemdeckError(f"cannot write {path}: {exc.strerror or exc}") from None
    if stat.S_ISREG(st.st_mode):
        return
    kind = (
        "a symbolic link"
        if stat.S_ISLNK(st.st_mode)
        else "a directory"
        if stat.S_ISDIR(st.st_mode)
        else "a FIFO"
        if stat.S_ISFIFO(st.st_mode)
        else "a socket"
        if stat.S_ISSOCK(st.st_mode)
        else "a device"
    )
    raise MemdeckError(f"refusing to write {path}: it is {kind}, not a regular file (use - for stdout)")


def write_atomic_text(path: Path, text: str, mode: int = 0o600) -> None:
    """:func:`write_atomic_bytes` for UTF-8 text."""
    write_atomic_bytes(path, text.encode("utf-8"), mode)


@contextlib.contextmanager
def flock(path: Path, *, exclusive: bool, timeout: float | None = None, busy: str = "") -> Iterator[None]:
    """Hold an flock on ``path`` (created 0600). Works between processes, and between threads of one
    process since each call opens its own descriptor. ``timeout`` None waits for ever; otherwise a
    :class:`FileBusy` saying ``busy`` is raised once it runs out. Closing the descriptor releases it."""
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
                        raise FileBusy(busy or f"{path} is locked by another process; try again") from None
                    time.sleep(delay)
                    delay = min(delay * 2, 0.2)
        yield
    finally:
        os.close(fd)
