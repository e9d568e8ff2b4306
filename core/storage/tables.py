"""Table layout below the API: table handles on fresh versions, bounded fragments, compaction.

Fragments are kept at most ``store.max_rows_per_fragment`` rows (config ``store.max_rows_per_fragment``,
8,192 by default) so that a purge, which must rewrite every fragment holding a forgotten row, rewrites a
bounded amount of data however large the table grows. LanceDB's own ``add`` and ``optimize`` write and merge
up to a million rows per fragment, so large appends and routine compaction go through pylance here.

TTL eviction and the maintenance run that uses these helpers live in :mod:`memdeck.core.maintenance`.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from memdeck.core.records import GRAPH_TABLES, HISTORY

if TYPE_CHECKING:
    from memdeck.core.storage.base import Tables

log = logging.getLogger("memdeck.storage")

# --- table layout -------------------------------------------------------------------------------------


def rows_per_fragment(store: Tables) -> int:
    return store.settings.store.max_rows_per_fragment


def table_uri(store: Tables, name: str) -> str:
    return f"{str(store.uri).rstrip('/')}/{name}.lance"


def dataset(store: Tables, name: str) -> Any:
    """A fresh pylance handle on the latest version (a stale handle commits against an old one)."""
    import lance

    return lance.dataset(table_uri(store, name), storage_options=store.storage_options)


@dataclass
class HeldDataset:
    """A pylance handle kept between reads, and the stamp of its table's ``_versions`` directory when the
    handle was last known to be at the latest version (None: not to be trusted, ask Lance)."""

    ds: Any
    stamp: tuple[int, int, int, int] | None = None


# A directory changed this recently may change again within its file system's clock granularity (a few
# milliseconds on Linux) without its times moving, so its stamp is trusted only once it is this old.
SETTLED_NS = 1_000_000_000


def versions_stamp(uri: str) -> tuple[int, int, int, int] | None:
    """The ``_versions`` directory's inode, size, mtime and ctime, or None when it changed within
    ``SETTLED_NS`` (or cannot be read). Every commit, this process's or another's, writes a manifest into
    that directory, which moves its times: while the stamp holds, no version was added or removed."""
    try:
        st = os.stat(os.path.join(uri, "_versions"))
    except OSError:
        return None
    if time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) < SETTLED_NS:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def latest_dataset(store: Tables, name: str, held: dict[str, HeldDataset]) -> Any | None:
    """The table's pylance dataset at its latest version, from the handle kept in ``held`` (by name).

    On a local disk every reader sees every commit, this process's and others': when the ``_versions``
    directory's stamp (``versions_stamp``, one ``stat``, about 2 us) is the one seen when the handle was
    last found latest, no commit came since; else Lance lists the directory for the latest version. That
    listing costs about 15 us in a tight loop but 100 us and more of wall and CPU time once per recall, as
    it wakes Lance's runtime threads; asking the LanceDB table instead costs a hop to its event loop thread
    (0.1-6 ms on a busy machine). None on object storage, where a listing is a request: there the table's
    own handle, refreshed every ``read_consistency`` seconds, answers.
    """
    if not store.local_tables:
        return None
    uri = table_uri(store, name)
    stamp = versions_stamp(uri)  # before Lance reads the directory: a commit after it changes the stamp
    kept = held.get(name)
    if kept is None:
        import lance

        ds = lance.dataset(uri)
    elif stamp is not None and stamp == kept.stamp:
        return kept.ds
    else:
        ds = kept.ds
        latest = int(ds.latest_version)
        if latest != int(ds.version):
            ds = ds.checkout_version(latest)
    held[name] = HeldDataset(ds, stamp)
    return ds


class LocalTable:
    """A table of a store on the local disk, read through pylance; LanceDB's handle opens on first need.

    Reads (``version``, ``to_lance``, ``count_rows``, ``schema``) go to the table's Lance
    dataset at its latest version (:func:`latest_dataset`, one directory listing), which is what LanceDB's
    own handle would read, only never staler. Anything else (writes, updates, searches through the query
    builder, index creation) goes to the LanceDB table, opened the first time it is asked for: a command that
    only reads never imports LanceDB, whose import costs more than the read (bench/bench_startup.py).
    """

    def __init__(self, store: Tables, name: str, ds: Any, opener: Callable[[str], Any]) -> None:
        self.name = name
        self._store = store
        self._held: dict[str, HeldDataset] = {name: HeldDataset(ds)}
        self._opener = opener
        self._real: Any = None
        self._lock = threading.Lock()

    @classmethod
    def open(cls, store: Tables, name: str, opener: Callable[[str], Any]) -> LocalTable | None:
        """The table, or None when it has no readable version (absent, or its manifests are lost)."""
        import lance

        try:
            ds = lance.dataset(table_uri(store, name))
        except (ValueError, FileNotFoundError, OSError):
            return None
        return cls(store, name, ds, opener)

    def lancedb_table(self) -> Any:
        """The LanceDB table (opened now if it was not yet)."""
        with self._lock:
            if self._real is None:
                self._real = self._opener(self.name)
            return self._real

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        return getattr(self.lancedb_table(), attr)

    def _dataset(self) -> Any:
        ds = latest_dataset(self._store, self.name, self._held)
        assert ds is not None  # a LocalTable is only made for local tables
        return ds

    @property
    def version(self) -> int:
        return int(self._dataset().version)

    @property
    def schema(self) -> pa.Schema:
        return self._dataset().schema

    def to_lance(self) -> Any:
        """A dataset object of the caller's own at the latest version, as LanceDB's ``to_lance`` gives: one a
        caller writes through (an append, an update) is never one another thread is reading."""
        ds = self._dataset()
        return ds.checkout_version(int(ds.version))

    def count_rows(self, filter: str | None = None) -> int:
        return int(self._dataset().count_rows(filter=filter))

    def indexed_columns(self) -> set[str]:
        """The columns some index of the table covers."""
        return {field for index in self._dataset().describe_indices() for field in index.field_names}

    def checkout_latest(self) -> None:
        if self._real is not None:
            self._real.checkout_latest()

    def update(
        self,
        where: str | None = None,
        values: dict[str, Any] | None = None,
        *,
        values_sql: dict[str, str] | None = None,
    ) -> Any:
        """LanceDB's ``update``. One given only SQL expressions (a recall's access counts) is committed by
        pylance, as LanceDB commits it, without importing LanceDB; one with Python values goes to LanceDB,
        which turns them into SQL."""
        if values is not None or not values_sql:
            return self.lancedb_table().update(where=where, values=values, values_sql=values_sql)
        ds = self.to_lance()  # its own object: an update holds it mutably, while readers use the held one
        result = ds.update(dict(values_sql), where=where)
        self._held[self.name] = HeldDataset(ds)  # its stamp unknown: the next read asks Lance once
        return _Updated(int(result.get("num_rows_updated", 0)), int(ds.version))


class _Updated:
    """What an update through pylance reports, as LanceDB's ``UpdateResult`` does."""

    def __init__(self, rows_updated: int, version: int) -> None:
        self.rows_updated = rows_updated
        self.version = version


def append_rows(store: Tables, tbl: Any, data: pa.Table) -> None:
    """Append in one commit, split into fragments of at most ``rows_per_fragment`` rows."""
    limit = rows_per_fragment(store)

    def append() -> None:
        if data.num_rows <= limit:
            tbl.add(data)
            return
        import lance

        lance.write_dataset(
            data,
            tbl.to_lance(),
            mode="append",
            max_rows_per_file=limit,
            storage_options=store.storage_options,
        )

    try:
        append()
    except Exception as exc:
        # Another machine created the same (empty) table at the same moment; LanceDB committed its creation
        # as an overwrite, and this append, made against the first creation, was refused, not written.
        if "incompatible with concurrent transaction overwrite" not in str(exc).lower():
            raise
        log.info("append met a concurrent creation of the table; appending again: %s", exc)
        tbl.checkout_latest()
        append()
    tbl.checkout_latest()


def small_fragment_count(store: Tables, tier: str) -> int:
    """Fragments under half the target size: what compaction can still merge."""
    half = rows_per_fragment(store) // 2
    return sum(1 for f in store.table(tier).to_lance().get_fragments() if f.metadata.physical_rows < half)


def compact_table(
    store: Tables, name: str, *, cleanup_older_than: timedelta = timedelta(hours=1)
) -> dict[str, Any]:
    """Merge small fragments up to the bounded size, fold new rows into the indices, drop old versions.

    Old versions younger than ``cleanup_older_than`` stay, so a reader in another process that still holds
    one keeps working; only a purge (under the exclusive lock) removes them at once.
    """
    limit = rows_per_fragment(store)
    out: dict[str, Any] = {"table": name}
    metrics = dataset(store, name).optimize.compact_files(target_rows_per_fragment=limit)
    out["fragments_removed"] = int(metrics.fragments_removed)
    out["fragments_added"] = int(metrics.fragments_added)
    ds = dataset(store, name)
    if ds.list_indices():
        ds.optimize.optimize_indices()
        out["indices_optimized"] = True
    stats = dataset(store, name).cleanup_old_versions(older_than=cleanup_older_than)
    out["old_versions_removed"] = int(stats.old_versions)
    try:
        store.table(name).checkout_latest()
    except Exception as exc:  # noqa: BLE001 - the next read catches up
        log.debug("refresh of %s after compaction failed: %s", name, exc)
    return out


def table_names(store: Tables) -> list[str]:
    """Every table the store has: the tier tables present, the edit history and the graph tables."""
    extra = [name for name in (HISTORY, *GRAPH_TABLES) if store.has_table(name)]
    return [*store.tiers_present(), *extra]
