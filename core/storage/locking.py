"""The store lock: writers share it, a purge takes it exclusively.

A purge cleans up old table versions with ``older_than=0``, which would break a writer committing against
one of them, so writers hold the lock shared for the length of a commit and the purge waits for them.

A writer in another process may still hold table handles at a version the purge removed. So the lock file
carries a purge epoch: releasing the exclusive lock bumps it, and taking the shared lock calls
``on_purge`` when the epoch moved since this lock last looked, before the writer reads anything.

Shared holders overlap, and a file lock has no queue: with a few busy writers there is always one commit
under way, so a purge asking for the exclusive lock could wait until its timeout. A second file, the gate
(``store.lock.gate``), gives the purge its turn: a purge takes the gate exclusively before it waits for the
store lock and keeps it until it is done; a writer passes the gate (takes it shared for a moment) before it
takes the store lock. Once a purge is waiting, no new commit starts; the ones under way finish, and the purge
goes next. Both are kernel locks on open files, so a killed process leaves neither held.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import struct
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from memdeck.core.errors import StoreLocked


class StoreLock:
    def __init__(self, path: Path, on_purge: Callable[[], None] | None = None) -> None:
        self.path = path
        self.gate = path.with_name(path.name + ".gate")
        self.on_purge = on_purge
        self._local = threading.local()
        try:
            self._seen_epoch: int | None = self.epoch()
        except OSError:  # a store on a read-only path: no lock file yet, reads still work
            self._seen_epoch = None

    def epoch(self) -> int:
        """How many times the exclusive lock has been released over this store's life."""
        return _read_epoch(self._fd())

    def _bump_epoch(self, fd: int) -> None:
        os.pwrite(fd, struct.pack("<Q", _read_epoch(fd) + 1), 0)

    def _check_epoch(self) -> None:
        epoch = self.epoch()
        if epoch != self._seen_epoch:  # also when it could not be read at first: catching up is cheap
            self._seen_epoch = epoch
            if self.on_purge is not None:
                self.on_purge()

    def _fd(self) -> int:
        held = getattr(self._local, "fd", None)
        if held is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            held = _OpenFile(os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600))
            self._local.fd = held
            self._local.depth = 0
            self._local.mode = None
        return held.fd

    def _gate_fd(self) -> int:
        held = getattr(self._local, "gate_fd", None)
        if held is None:
            held = _OpenFile(os.open(self.gate, os.O_RDWR | os.O_CREAT, 0o600))
            self._local.gate_fd = held
        return held.fd

    @contextmanager
    def _hold(self, mode: int, timeout: float) -> Iterator[None]:
        fd = self._fd()
        depth = self._local.depth
        if depth and (self._local.mode == fcntl.LOCK_EX or mode == self._local.mode):
            self._local.depth += 1
            try:
                yield
            finally:
                self._local.depth -= 1
            return
        deadline = time.monotonic() + timeout
        what = "a purge" if mode == fcntl.LOCK_SH else "another writer"
        gate = self._gate_fd()
        # A purge waiting or under way holds the gate: wait for its turn to pass.
        _take(gate, mode, deadline, what, self.path)
        try:
            _take(fd, mode, deadline, what, self.path)
        except BaseException:
            fcntl.flock(gate, fcntl.LOCK_UN)
            raise
        if mode == fcntl.LOCK_SH:
            fcntl.flock(gate, fcntl.LOCK_UN)  # through: a purge that comes now waits for this commit alone
        previous = self._local.mode
        self._local.mode = mode
        self._local.depth = depth + 1
        try:
            if mode == fcntl.LOCK_SH:
                self._check_epoch()
            yield
        finally:
            self._local.depth -= 1
            if mode == fcntl.LOCK_EX:
                self._bump_epoch(fd)
            if self._local.depth == 0:
                fcntl.flock(fd, fcntl.LOCK_UN)
                self._local.mode = None
            else:
                self._local.mode = previous
                fcntl.flock(fd, previous)
            if mode == fcntl.LOCK_EX:
                fcntl.flock(gate, fcntl.LOCK_UN)

    def shared(self, timeout: float = 60.0) -> AbstractContextManager[None]:
        """Held by writers for the length of a commit (and by readers that must not see a purge)."""
        return self._hold(fcntl.LOCK_SH, timeout)

    def exclusive(self, timeout: float = 120.0) -> AbstractContextManager[None]:
        """Held by a purge from plan to receipt."""
        return self._hold(fcntl.LOCK_EX, timeout)

    def fence(self) -> int | None:
        """Before a destructive step of a purge: the fencing token, or refuse (a store shared through a
        bucket, :class:`~memdeck.core.storage.teamlock.TeamLock`). A file lock cannot be lost: None."""
        return None


class _OpenFile:
    """A descriptor kept by one thread, closed when the thread ends (its thread-local values are dropped) or
    the lock is. Each thread needs its own (a file lock belongs to the open file), and agents' servers start
    a thread for every background write: an int kept there was never closed, two descriptors a thread."""

    __slots__ = ("fd",)

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def __del__(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)


def _take(fd: int, mode: int, deadline: float, what: str, path: Path) -> None:
    """flock ``fd`` in ``mode``, trying until ``deadline``; StoreLocked after it."""
    while True:
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise StoreLocked(f"the store is busy ({what} holds {path}); try again") from None
            time.sleep(0.02)


def _read_epoch(fd: int) -> int:
    raw = os.pread(fd, 8, 0)
    return struct.unpack("<Q", raw)[0] if len(raw) == 8 else 0
