"""Access counting: each recall bumps ``access_count`` and ``last_accessed`` of what it returned.

The counts are applied by a background thread after a short delay, so recalls in quick succession share
one update commit and a read is never slowed by a write. :class:`Background` holds the store's background
threads (access counts here, trace writes in :mod:`memdeck.core.recall.traces`) and the event that makes
them finish at once when the store closes.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from memdeck.core import filters as F
from memdeck.core.records import now

if TYPE_CHECKING:
    from memdeck.core.storage.base import Tables

log = logging.getLogger("memdeck.store")

ACCESS_FLUSH_DELAY = 1.0  # seconds: recalls within it share one access-count commit


class Background:
    """The store's background threads and the event that hurries them (set at close)."""

    def __init__(self) -> None:
        self.wake = threading.Event()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    def start(self, target: Callable[[], None], name: str) -> None:
        thread = threading.Thread(target=target, name=name, daemon=True)
        thread.start()
        with self._lock:
            self._threads = [t for t in self._threads if t.is_alive()]
            self._threads.append(thread)

    def join(self, timeout: float = 30.0) -> None:
        """Wake every delayed thread and wait for it (what closing a store does)."""
        self.wake.set()
        with self._lock:
            threads, self._threads = self._threads, []
        for thread in threads:
            thread.join(timeout=timeout)
        self.wake.clear()


class AccessCounter:
    """Pending access counts of one store, flushed in one commit per tier."""

    def __init__(self, store: Tables, background: Background) -> None:
        self.store = store
        self.background = background
        self._pending: dict[str, dict[str, int]] = {}
        self._lock = threading.Lock()
        self._scheduled = False
        # Table versions this counter committed: they only move access counts and last-use times later,
        # which can make nothing expire sooner (the scheduler's expiry check looks past them).
        self.versions: dict[str, set[int]] = {}

    def record(self, items: Sequence[tuple[str, str]]) -> None:
        """Count a recall of these (tier, id) pairs; the commit follows in the background."""
        with self._lock:
            for tier, mem_id in items:
                bucket = self._pending.setdefault(tier, {})
                bucket[mem_id] = bucket.get(mem_id, 0) + 1
            start = not self._scheduled
            self._scheduled = True
        if start:  # otherwise a flush is already due: this recall's counts ride along with it
            self.background.start(self._delayed_flush, "memdeck-access")

    def _delayed_flush(self) -> None:
        self.background.wake.wait(ACCESS_FLUSH_DELAY)
        with self._lock:
            self._scheduled = False
        self.flush()

    def flush(self) -> None:
        with self._lock:
            pending, self._pending = self._pending, {}
        if not pending:
            return
        store = self.store
        stamp = F.literal(now())
        try:
            with store.lock.shared(timeout=30):
                for tier, counts in pending.items():
                    tbl = store.table(tier)
                    by_count: dict[int, list[str]] = {}
                    for mem_id, n in counts.items():
                        by_count.setdefault(n, []).append(mem_id)
                    for n, ids in by_count.items():
                        result = tbl.update(
                            where=F.all_of(F.is_in("id", ids), F.ne("state", "forgotten-pending")),
                            values_sql={
                                "access_count": f"coalesce(access_count, 0) + {int(n)}",
                                "last_accessed": stamp,
                            },
                        )
                        mine = self.versions.setdefault(tier, set())
                        if len(mine) > 10_000:
                            mine.clear()  # only an optimisation: forgetting them costs one more scan
                        mine.add(int(result.version))
                    # Each update writes a fragment: without this, recalls alone pile them up (and slow every
                    # search) until the next write compacts.
                    store.maybe_compact(tier)
            store.catch_up_recall(list(pending))  # the next recall finds its index current
        except Exception as exc:  # noqa: BLE001 - losing a count is better than failing a read
            log.info("access update skipped: %s", exc)
