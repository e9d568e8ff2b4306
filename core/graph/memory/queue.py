"""Who may change a store's graph, and when a reader must wait for queued indexing.

Memories are indexed into the graph after their write commits, by the store's
:class:`~memdeck.core.graph.memory.indexer.GraphIndexer`. Every reader of the graph tables first calls
:func:`drain`, which indexes whatever is still queued, so a caller that wrote and then reads never sees a
graph without what it wrote. Every change to the graph tables (the indexer's, an explicit entity or
relation, a forget's or an edit's) runs inside :func:`graph_work`: the store lock shared (or the
exclusive lock its caller holds), then the store's graph lock. One change at a time per process, each
reading the graph after the previous one committed, so no two batches overwrite each other's mentions.
Lock order is always store lock, then graph lock, so a purge holding the exclusive lock can index what is
queued itself while the background thread waits for the shared lock.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol

from memdeck.core.storage.objectstore import write_errors

if TYPE_CHECKING:
    from memdeck.core.storage.engine import Engine


QUEUE_DIR = "graph-queue"  # <store>/graph-queue: each writing process's file of ids still to index


class Drains(Protocol):
    """What a store's indexer offers: index everything queued now; that, then stop (the store closes)."""

    def flush(self) -> None: ...

    def close(self) -> None: ...


_REGISTRY_LOCK = threading.Lock()
_INDEXERS: weakref.WeakKeyDictionary[Any, Drains] = weakref.WeakKeyDictionary()
_LOCKS: dict[str, threading.RLock] = {}  # by the store's tables, so two handles on one store share it
_local = threading.local()  # how deep this thread is inside graph work


def register(store: Engine, indexer: Drains) -> None:
    with _REGISTRY_LOCK:
        _INDEXERS[store] = indexer


def indexer_of(store: Engine) -> Drains | None:
    with _REGISTRY_LOCK:
        return _INDEXERS.get(store)


def graph_lock(store: Engine) -> threading.RLock:
    """The lock every change to this store's graph holds in this process (one per store location, however
    many times the process opened it)."""
    key = str(store.uri)
    with _REGISTRY_LOCK:
        lock = _LOCKS.get(key)
        if lock is None:
            lock = _LOCKS[key] = threading.RLock()
        return lock


def in_graph_work() -> bool:
    return bool(getattr(_local, "depth", 0))


def drain(store: Engine) -> None:
    """Index every memory still queued for this store before the caller reads the graph. Inside graph work
    (the indexer itself, or a change that already drained) it does nothing: that work reads what it needs.
    Raises the error of an indexing that failed since the last drain (see the indexer)."""
    if in_graph_work():
        return
    indexer = indexer_of(store)
    if indexer is not None:
        indexer.flush()


@contextmanager
def graph_work(store: Engine, *, timeout: float = 60.0) -> Iterator[None]:
    """Hold what a change to the graph needs: queued indexing done first, the store lock shared, the
    graph lock. Re-entrant within a thread."""
    drain(store)
    with store.lock.shared(timeout), write_errors(), graph_lock(store), inside():
        yield


@contextmanager
def inside() -> Iterator[None]:
    """Mark this thread as doing graph work: :func:`drain` does nothing until it ends."""
    _local.depth = getattr(_local, "depth", 0) + 1
    try:
        yield
    finally:
        _local.depth -= 1
