"""The store lock of a store whose tables live in a bucket: the local file lock plus the bucket's lease.

:class:`TeamLock` keeps :class:`~memdeck.core.storage.locking.StoreLock`'s interface (``shared`` for a
commit, ``exclusive`` for a purge) and adds, at the outermost hold of each thread:

- ``shared``: announce a writer object in the bucket, then read the lease; while another machine's purge
  holds it, withdraw and wait (``StoreLocked``, retryable, after ``timeout``). The lease's token is the
  store's purge epoch: when it moved since this process last looked, ``on_purge`` refreshes the table
  handles before the writer reads or commits anything.
- ``exclusive``: take the lease (waiting up to ``timeout``), then wait until no writer object is left.
- ``fence()``: before each destructive step of a purge; refuses (``LeaseLost``) if the lease was lost.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from memdeck.core.errors import StoreLocked
from memdeck.core.storage.lease import POLL_S, ConditionalObjects, Lease, Writers
from memdeck.core.storage.locking import StoreLock


class TeamLock(StoreLock):
    def __init__(
        self,
        path: Path,
        objects: ConditionalObjects,
        *,
        on_purge: Callable[[], None] | None = None,
        ttl: float = 30.0,
    ) -> None:
        super().__init__(path, on_purge=on_purge)
        self.objects = objects
        self.lease = Lease(objects, ttl=ttl)
        self.writers = Writers(objects, ttl=ttl, holder=self.lease.holder)
        self._team = threading.local()
        self._seen_token: int | None = None

    def _depth(self) -> int:
        return int(getattr(self._team, "depth", 0))

    @contextmanager
    def _nested(self) -> Iterator[None]:
        self._team.depth = self._depth() + 1
        try:
            yield
        finally:
            self._team.depth -= 1

    def bucket_epoch(self) -> int:
        """The lease's token: how many purges have started on this store, on any machine."""
        return self.lease.view().token

    def shared(self, timeout: float = 60.0) -> AbstractContextManager[None]:
        return self._shared(timeout)

    def exclusive(self, timeout: float = 120.0) -> AbstractContextManager[None]:
        return self._exclusive(timeout)

    @contextmanager
    def _shared(self, timeout: float) -> Iterator[None]:
        with super().shared(timeout):
            if self._depth():
                with self._nested():
                    yield
                return
            deadline = time.monotonic() + timeout
            while True:
                # While a purge holds the lease, only the lease is read (one GET a poll); the writer object is
                # written when the lease looks free, and the lease read once more after it (see lease.py).
                view = self.lease.view()
                if view.held and view.holder != self.lease.holder and self.lease.expired(view):
                    broken = self.lease.break_expired(view)  # its purge's journal waits for the next open
                    view = broken if broken is not None else self.lease.view()
                if not self.lease.busy(view):
                    key = self.writers.announce()
                    view = self.lease.view()
                    if not self.lease.busy(view):
                        break
                    self.writers.withdraw(key)
                if time.monotonic() >= deadline:
                    raise StoreLocked(
                        f"the store is busy: a forget on {view.holder} holds its lease (token {view.token}); "
                        "nothing was written, try again"
                    )
                time.sleep(POLL_S)
            stop = threading.Event()
            beat = threading.Thread(target=self._keep, args=(key, stop), name="memdeck-writer", daemon=True)
            beat.start()
            try:
                if view.token != self._seen_token:
                    self._seen_token = view.token
                    if self.on_purge is not None:
                        self.on_purge()  # a purge ran elsewhere: catch up before reading or committing
                with self._nested():
                    yield
            finally:
                stop.set()
                beat.join(timeout=5)
                self.writers.withdraw(key)

    def _keep(self, key: str, stop: threading.Event) -> None:
        """Renew a writer object while a long commit runs, so a purge never takes it for a crashed writer's."""
        while not stop.wait(self.writers.ttl / 3):
            try:
                self.writers.renew(key)
            except Exception:  # noqa: BLE001 - a failed request: the next beat tries again
                continue

    @contextmanager
    def _exclusive(self, timeout: float) -> Iterator[None]:
        with super().exclusive(timeout):
            if self._depth():
                with self._nested():
                    yield
                return
            deadline = time.monotonic() + timeout
            token = self.lease.acquire(timeout)
            try:
                while writers := self.writers.active():
                    if time.monotonic() >= deadline:
                        raise StoreLocked(
                            f"the store is busy: {len(writers)} writers on other machines are committing; try again"
                        )
                    time.sleep(POLL_S)
                self._seen_token = token
                self._team.exclusive = True
                with self._nested():
                    yield
            finally:
                self._team.exclusive = False
                self.lease.release()

    def fence(self) -> int | None:
        if not getattr(self._team, "exclusive", False):
            return None  # not in a purge (a shared hold): nothing to fence
        return self.lease.fence()  # LeaseLost once the lease was taken by another machine


LEASED_SCHEMES = ("s3", "s3+ddb")


def lock_for(
    path: Path,
    uri: str | None,
    options: dict[str, str] | None,
    config: dict[str, object],
    on_purge: Callable[[], None],
) -> StoreLock:
    """A :class:`TeamLock` for tables in an S3 bucket (``[storage] lease_seconds``, 30 by default), else the
    file lock alone (local tables; ``memory://``; ``gs://`` and ``az://``, which have no lease yet)."""
    from urllib.parse import urlparse

    from memdeck.core.storage.lease import DEFAULT_TTL_S, S3Objects

    if uri is None or urlparse(uri).scheme.lower() not in LEASED_SCHEMES:
        return StoreLock(path, on_purge=on_purge)
    section = config.get("storage")
    raw = section.get("lease_seconds", DEFAULT_TTL_S) if isinstance(section, dict) else DEFAULT_TTL_S
    try:
        ttl = max(1.0, float(raw))
    except (TypeError, ValueError):
        ttl = DEFAULT_TTL_S
    return TeamLock(path, S3Objects(uri, options), on_purge=on_purge, ttl=ttl)
