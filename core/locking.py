"""The store lock: writers share it, a purge takes it exclusively.

A purge cleans up old table versions with ``older_than=0``, which would break a writer committing against
one of them, so writers hold the lock shared for the length of a commit and the purge waits for them.
"""

from __future__ import annotations

import fcntl
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .errors import StoreLocked


class StoreLock:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()

    def _fd(self) -> int:
        fd = getattr(self._local, "fd", None)
        if fd is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
            self._local.fd = fd
            self._local.depth = 0
            self._local.mode = None
        return fd

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
        while True:
            try:
                fcntl.flock(fd, mode | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    what = "a purge" if mode == fcntl.LOCK_SH else "another writer"
                    raise StoreLocked(f"the store is busy ({what} holds {self.path}); try again") from None
                time.sleep(0.02)
        previous = self._local.mode
        self._local.mode = mode
        self._local.depth = depth + 1
        try:
            yield
        finally:
            self._local.depth -= 1
            if self._local.depth == 0:
                fcntl.flock(fd, fcntl.LOCK_UN)
                self._local.mode = None
            else:
                self._local.mode = previous
                fcntl.flock(fd, previous)

    def shared(self, timeout: float = 60.0) -> contextmanager:  # type: ignore[valid-type]
        return self._hold(fcntl.LOCK_SH, timeout)

    def exclusive(self, timeout: float = 120.0) -> contextmanager:  # type: ignore[valid-type]
        return self._hold(fcntl.LOCK_EX, timeout)
