"""The storage engine under a :class:`~memdeck.core.store.Store`: its LanceDB tables (opened, created,
migrated), its settings, redactor and embedder, its locks and background work, table upkeep (fragments,
compaction, indices) and the row reads the capabilities share.

Capabilities (forget, recall, graph, consolidate, exchange, ...) take an :class:`Engine`; the agent- and
person-facing acts are :class:`~memdeck.core.store.Store`'s, which composes one (``store.engine``).
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import pyarrow as pa

from memdeck.core import filters as F
from memdeck.core.config import Settings, as_settings
from memdeck.core.embed import Embedder, EmbeddingUnavailable, make_embedder
from memdeck.core.errors import MemdeckError, NotFound
from memdeck.core.filters import Scope
from memdeck.core.models import chosen_model
from memdeck.core.paths import StoreLayout
from memdeck.core.records import (
    ADDED_COLUMNS,
    GRAPH_TABLES,
    HISTORY,
    SCHEMA_VERSION,
    STORED_TIERS,
    Memory,
    check_tier,
    history_schema,
    now,
    row_to_memory,
    tier_schema,
)
from memdeck.core.storage.access import AccessCounter, Background
from memdeck.core.storage.locking import StoreLock
from memdeck.core.storage.objectstore import write_errors
from memdeck.core.storage.tables import LocalTable
from memdeck.core.storage.teamlock import lock_for
from memdeck.core.storage.writes import Writer, fail_closed

if TYPE_CHECKING:
    from memdeck.core.privacy import Redactor

log = logging.getLogger("memdeck.store")

T = TypeVar("T")

# LanceDB answers a filtered full-text search by scoring every row the filter allows, one by one, when that
# is at most LANCE_FLAT_SEARCH_PERCENT_THRESHOLD percent of the table (default 10), and otherwise walks the
# posting lists with the filter as a mask. One principal among ten sits just under 10 %: at 1M memories the
# row-by-row scoring compared 98,000 documents and took 28 ms against 8 ms for the posting-list walk, with
# identical results (`bench_core.py ftsfilter`, bench/RESULTS.md). At 1 % the row-by-row path stays for small principals, where it
# is the faster one. Read by LanceDB at its first full-text search; a value set by the user wins.
os.environ.setdefault("LANCE_FLAT_SEARCH_PERCENT_THRESHOLD", "1")

# An upgrade of a store's rows that a schema migration runs under the exclusive lock: (engine, old version).
Upgrade = Callable[["Engine", int], None]


class Engine:
    """The tables, settings and upkeep of one store directory (or object-store URI)."""

    def __init__(
        self,
        root: Path,
        *,
        embedder: Embedder | None = None,
        config: Settings | Mapping[str, Any] | None = None,
        read_consistency: float = 1.0,
        uri: str | None = None,
        storage_options: dict[str, str] | None = None,
        upgrade: Upgrade | None = None,
    ) -> None:
        self.root = root
        self.layout = StoreLayout(root)
        self.settings: Settings = as_settings(config)  # a mapping is checked here, once
        self.embedder: Embedder = (
            embedder
            if embedder is not None
            else make_embedder(self.settings.embedding, chosen_model(self.layout.meta))  # `memdeck model use`
        )
        self.uri = uri or str(self.layout.lance)
        self.storage_options = storage_options
        # Tables in this store's own lance/ directory: has_table and version checks ask the disk (every recall asks).
        self.local_tables = storage_options is None and self.uri == str(self.layout.lance)
        # Run after a purge here or elsewhere (refresh_hooks), after a purge in another process
        # (purged_hooks), and when this process's background commits should reach recall (catch_up_hooks).
        self.refresh_hooks: list[Callable[[], None]] = []
        self.purged_hooks: list[Callable[[], None]] = []
        self.catch_up_hooks: list[Callable[[str], None]] = []
        self.lock: StoreLock = lock_for(
            self.layout.lock, uri, storage_options, self.settings.to_dict(), self._purged_elsewhere
        )
        self.read_consistency = read_consistency
        self._db: Any = None
        self._tables: dict[str, Any] = {}
        self._tables_lock = threading.RLock()
        self._upgrade = upgrade
        self.meta = self._load_meta()
        self.background = Background()
        self.access = AccessCounter(self, self.background)
        self.writer = Writer(self)
        self._redactor: Redactor | None = None
        self._fts_ready: set[str] = set()
        self._indexed_cache: dict[tuple[str, int], bool] = {}
        # A scope past recall.index_sync_rows is loaded in a background thread; a one-shot command sets False.
        self.index_loads_in_background = True
        self.write_hooks: list[Callable[[list[Memory]], None]] = []
        self.recall_hooks: list[Callable[[Any], None]] = []

    @property
    def db(self) -> Any:
        """The LanceDB connection, made on first use: a command that only reads local tables reads them
        through pylance (:class:`~memdeck.core.storage.tables.LocalTable`) and never imports LanceDB."""
        with self._tables_lock:
            if self._db is None:
                import lancedb

                self._db = lancedb.connect(
                    self.uri,
                    read_consistency_interval=timedelta(seconds=self.read_consistency),
                    storage_options=self.storage_options,
                )
            return self._db

    def create_tables(self) -> None:
        """Create every table now, before the first write. There is no lock across machines, and LanceDB
        commits a second machine's concurrent creation of the same table as an overwrite of it: done at
        open, the two creations race each other, never a creation against the other machine's rows."""
        for tier in (*STORED_TIERS, HISTORY, *GRAPH_TABLES):
            self.table(tier)

    def _load_meta(self) -> dict[str, Any]:
        path = self.layout.meta
        if path.exists():
            try:
                meta = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise MemdeckError(f"store metadata {path} is unreadable: {exc}") from None
            if int(meta.get("schema_version", 0)) > SCHEMA_VERSION:
                raise MemdeckError(
                    f"store {self.root} has schema {meta['schema_version']}, newer than this memdeck "
                    f"({SCHEMA_VERSION}); upgrade memdeck"
                )
            if meta.get("schema_version", 1) < SCHEMA_VERSION:
                meta = self._migrate(meta)
            return meta
        meta = {
            "schema_version": SCHEMA_VERSION,
            "created_at": now().isoformat(),
            "embedding_model": self.embedder.name,
            "dim": int(self.embedder.dim or 384),
        }
        from memdeck.core.files import write_atomic_text

        write_atomic_text(path, json.dumps(meta, indent=2) + "\n", 0o600)
        return meta

    def _migrate(self, meta: dict[str, Any]) -> dict[str, Any]:
        """Bring a store written by an older memdeck up to this schema, table by table (columns added
        since, all empty), then record the new version. Each step is idempotent: a process killed midway
        finishes on the next open."""
        from memdeck.core.files import write_atomic_text

        old = int(meta.get("schema_version", 1))
        added = [f for since, f in ADDED_COLUMNS.values() if since > old]
        with self.lock.exclusive():
            for tier in STORED_TIERS:
                if not self.has_table(tier):
                    continue
                tbl = self.db.open_table(tier)
                missing = [f for f in added if f.name not in tbl.schema.names]
                if missing:
                    try:
                        tbl.add_columns(missing)
                    except Exception as exc:  # noqa: BLE001 - one line for the person, not a traceback
                        raise MemdeckError(
                            f"cannot upgrade store {self.root} to schema {SCHEMA_VERSION}: {exc}"
                        ) from None
            if self._upgrade is not None:
                self._upgrade(self, old)  # the rows' own upgrades (e.g. principal names, schema 3)
            meta["schema_version"] = SCHEMA_VERSION
            write_atomic_text(self.layout.meta, json.dumps(meta, indent=2) + "\n", 0o600)
        log.info("store %s upgraded from schema %d to %d", self.root, old, SCHEMA_VERSION)
        return meta

    @property
    def dim(self) -> int:
        return int(self.meta.get("dim", 384))

    @property
    def embedding_model(self) -> str:
        return str(self.meta.get("embedding_model", ""))

    def table(self, tier: str) -> Any:
        """The LanceDB table of a stored tier (or the edit history), created on first use."""
        with self._tables_lock:
            tbl = self._tables.get(tier)
            if tbl is not None:
                return tbl
            if self.local_tables:
                local = LocalTable.open(self, tier, self._open_lancedb_table)
                if local is not None:
                    self._tables[tier] = local
                    return local
            if tier in GRAPH_TABLES:
                from memdeck.core.storage.graph_tables import graph_schema

                schema = graph_schema(tier, self.dim)
            else:
                schema = history_schema() if tier == HISTORY else tier_schema(check_tier(tier), self.dim)
            try:
                tbl = self.db.open_table(tier)
            except (ValueError, FileNotFoundError, RuntimeError):
                self._refuse_to_recreate(tier)
                try:
                    tbl = self.db.create_table(tier, schema=schema)
                except (ValueError, OSError, RuntimeError):  # another process created it first
                    tbl = self.db.open_table(tier)
            self._tables[tier] = tbl
            return tbl

    def _open_lancedb_table(self, tier: str) -> Any:
        """LanceDB's handle on a table that exists (a :class:`LocalTable` opens it on first need)."""
        return self.db.open_table(tier)

    def _refuse_to_recreate(self, tier: str) -> None:
        """A table folder that holds data files but no version manifest lost its manifests (deleted or
        damaged): creating the table anew would hide its rows behind an empty table, so it is refused."""
        if not self.local_tables:
            return
        data = os.path.join(self.uri, tier + ".lance", "data")
        if os.path.isdir(data) and any(n.endswith(".lance") for n in os.listdir(data)):
            raise MemdeckError(
                f"the table {tier} has data files but no readable version manifest ({tier}.lance/_versions is "
                "missing or damaged): its rows cannot be read, and nothing was changed. Restore the store's "
                "lance folder from a backup (`memdeck doctor` checks every table)"
            )

    def has_table(self, tier: str) -> bool:
        if tier in self._tables:
            return True
        if not self.local_tables:
            from memdeck.core.storage.objectstore import (
                RemoteTables,  # tables on object storage: ask the bucket, not the disk
            )

            if getattr(self, "_remote_tables", None) is None:
                self._remote_tables = RemoteTables(self.db)
            return self._remote_tables.exists(tier)
        return os.path.exists(os.path.join(self.uri, tier + ".lance"))

    def _purged_elsewhere(self) -> None:
        """A purge ran in another process: catch the table handles up, then run :attr:`purged_hooks` (on a
        bucket shared with other machines, the trace log is scrubbed of what was forgotten there)."""
        self.refresh()
        for hook in list(self.purged_hooks):
            hook()

    def refresh(self) -> None:
        """See other processes' commits now rather than after the consistency interval.

        Called after a purge, here or in another process: :attr:`refresh_hooks` run first (recall's in-memory
        partitions are dropped with whatever they held of the forgotten rows, and rebuilt from the tables on
        the next recall)."""
        for hook in list(self.refresh_hooks):
            hook()
        for tbl in list(self._tables.values()):
            try:
                tbl.checkout_latest()
            except Exception:  # noqa: BLE001 - a table being rewritten is caught up next time
                pass

    def read_retry(self, read: Callable[[], T]) -> T:
        """Run a read; if it failed because a purge in another process removed the files of the version
        this handle still saw, catch up with :meth:`refresh` and run it once more."""
        try:
            return read()
        except Exception as exc:
            if not _vanished_file(exc):
                raise
            log.info("read hit a file removed by a purge; refreshing: %s", exc)
        # Under the shared lock no other purge can clean up the version between the refresh and the read.
        with self.lock.shared():
            self.refresh()
            return read()

    def scan(self, tier: str, columns: Sequence[str], where: str | None = None) -> pa.Table:
        """Some columns of every row of a table that match ``where`` (a filter from
        :mod:`memdeck.core.filters`), read again after a purge in another process (:meth:`read_retry`)."""
        return self.read_retry(
            lambda: self.table(tier).to_lance().to_table(columns=list(columns), filter=where)
        )

    # --- settings, redaction and embedding ---------------------------------------------------------

    @property
    def graph_enabled(self) -> bool:
        return self.settings.graph.enabled

    @property
    def redactor(self) -> Redactor:
        """Write-time redaction with this store's vault. Never optional: a write is not stored unredacted."""
        if self._redactor is None:
            from memdeck.core.privacy import Redactor, Vault

            self._redactor = Redactor.from_settings(self.settings.redaction, Vault(self.layout.vault))
        return self._redactor

    def reset_redactor(self) -> None:
        """Drop the cached redactor (after a vault was destroyed it may hold the key in memory)."""
        self._redactor = None

    def redact(self, text: str, principal: str) -> str:
        """``text`` with personal data and secrets replaced by this principal's tokens."""
        with fail_closed():
            return self.redactor.redact(text, principal).text

    def redact_value(self, value: Any, principal: str) -> Any:
        """:meth:`redact` over every string inside a JSON-like value."""
        with fail_closed():
            return self.redactor.redact_value(value, principal)

    def embed(self, texts: list[str]) -> tuple[np.ndarray, bool]:
        """Vectors for ``texts`` and whether they are real (False: zeros, the model is unavailable)."""
        try:
            vectors = self.embedder.encode(texts)
        except EmbeddingUnavailable:
            return np.zeros((len(texts), self.dim), dtype=np.float32), False
        if vectors.shape[1] != self.dim:
            raise MemdeckError(self.dim_mismatch(int(vectors.shape[1])))
        return vectors, True

    def dim_mismatch(self, dim: int) -> str:
        return (
            f"embedding model {self.embedder.name!r} gives {dim} dimensions but this store was built with "
            f"{self.dim} ({self.embedding_model}); set embedding.model to match"
        )

    def query_vector(self, query: str) -> np.ndarray:
        """The embedding of a query, refused with one line when the model does not match the store's
        dimensions (raises EmbeddingUnavailable when the model cannot run)."""
        vector = self.embedder.encode([query])[0]
        if vector.shape[0] != self.dim:
            raise MemdeckError(self.dim_mismatch(int(vector.shape[0])))
        return vector

    # --- maintenance of table layout ----------------------------------------------------------------

    def fragment_count(self, tier: str) -> int:
        return len(self.table(tier).to_lance().get_fragments())

    def after_write(self, tier: str) -> None:
        """Keep a table healthy after rows were added: its full-text index exists, small fragments merge."""
        if tier not in self._fts_ready:
            from memdeck.core.storage.indexing import ensure_fts

            try:
                ensure_fts(self.table(tier))
            except Exception as exc:  # noqa: BLE001 - another process may be creating it
                log.info("full-text index on %s not created: %s", tier, exc)
            self._fts_ready.add(tier)
        self.maybe_compact(tier)

    def vector_indexed(self, tier: str) -> bool:
        tbl = self.table(tier)
        key = (tier, tbl.version)
        cached = self._indexed_cache.get(key)
        if cached is None:
            if isinstance(tbl, LocalTable):
                cached = "vector" in tbl.indexed_columns()
            else:
                from memdeck.core.storage.indexing import has_index_on

                cached = has_index_on(tbl, "vector")
            self._indexed_cache = {
                key: cached,
                **{k: v for k, v in self._indexed_cache.items() if k[0] != tier},
            }
        return cached

    def maybe_compact(self, tier: str) -> None:
        from memdeck.core.storage.tables import small_fragment_count

        threshold = self.settings.store.compact_fragment_threshold
        try:
            if small_fragment_count(self, tier) < threshold:  # full fragments stay as they are
                return
        except Exception:  # noqa: BLE001
            return
        self.compact(tier)

    def compact(self, tier: str) -> bool:
        """Merge small fragments and fold new rows into the indices. Returns False if it lost a race."""
        from memdeck.core.storage.tables import compact_table

        try:
            compact_table(self, tier, cleanup_older_than=timedelta(hours=1))
        except Exception as exc:  # noqa: BLE001 - a concurrent commit wins; compaction runs again later
            log.info("compaction of %s skipped: %s", tier, exc)
            return False
        return True

    def ensure_indexes(self, tier: str, *, force_ann: bool = False) -> dict[str, Any]:
        """Full-text index always; ANN index once brute force would be slow. Safe to call repeatedly."""
        from memdeck.core.storage.indexing import ensure_indexes

        return ensure_indexes(self, tier, force_ann=force_ann)

    # --- rows read by capabilities ------------------------------------------------------------------------------------

    def tiers_present(self) -> list[str]:
        return [t for t in STORED_TIERS if self.has_table(t)]

    def get(self, memory_id: str, scope: Scope = Scope.everyone()) -> Memory:
        for tier in self._tiers_for_id(memory_id):
            where = F.all_of(F.eq("id", memory_id), scope.where())
            rows = self.read_retry(partial(self._first_row, tier, where))
            if rows:
                row = rows[0]
                row.pop("vector", None)
                return row_to_memory(row)
        raise NotFound(f"no memory with id {memory_id!r}")

    def get_vector(self, memory: Memory) -> np.ndarray | None:
        tbl = self.table(memory.tier)
        where = F.eq("id", memory.id)
        rows = self.read_retry(lambda: tbl.search().where(where).select(["vector"]).limit(1).to_list())
        return np.asarray(rows[0]["vector"], dtype=np.float32) if rows else None

    def _tiers_for_id(self, memory_id: str) -> list[str]:
        prefix = {"epi": "episodic", "sem": "semantic", "pro": "procedural"}.get(memory_id[:3])
        tiers = self.tiers_present()
        if prefix and prefix in tiers:
            return [prefix] + [t for t in tiers if t != prefix]
        return tiers

    def _first_row(self, tier: str, where: str | None) -> list[dict[str, Any]]:
        """The first row of a table that matches ``where``, every column but the vector."""
        tbl = self.table(tier)
        if isinstance(tbl, LocalTable):
            ds = tbl.to_lance()
            columns = [name for name in ds.schema.names if name != "vector"]
            return list(ds.to_table(columns=columns, filter=where, limit=1).to_pylist())
        return _first_row(tbl, where)

    def _update_one(self, memory: Memory, values: dict[str, Any]) -> None:
        with self.lock.shared(), write_errors():
            # An update reads the old row first: a handle left stale by a purge needs the same retry as a read.
            self.read_retry(
                lambda: self.table(memory.tier).update(where=F.eq("id", memory.id), values=values)
            )

    # --- access statistics and closing ----------------------------------------------------------------

    def record_access(self, items: Sequence[tuple[str, str]]) -> None:
        """Count a recall of these (tier, id) pairs; applied in the background so a read is never slowed."""
        self.access.record(items)

    def catch_up_recall(self, tiers: Sequence[str]) -> None:
        """Bring recall's in-memory partitions of these tiers to the tables' latest version now (after this
        process's own background commits), so the next recall does not spend its time on it."""
        for hook in list(self.catch_up_hooks):
            for tier in tiers:
                hook(tier)

    def flush_access(self) -> None:
        self.access.flush()

    def close(self) -> None:
        """Finish background work now: delayed access counts and queued traces are written."""
        self.background.join()
        self.access.flush()


def _vanished_file(exc: BaseException) -> bool:
    """A read failed because a purge (compaction + cleanup of old versions) removed a file of the version
    this table handle still pointed at."""
    if isinstance(exc, FileNotFoundError):
        return True
    text = str(exc).lower()
    parts = (".lance", "_deletions", "_indices", "_versions", ".idx", ".manifest", ".arrow")
    return ("not found" in text or "no such file" in text) and any(part in text for part in parts)


def _first_row(tbl: Any, where: str | None) -> list[dict[str, Any]]:
    return tbl.search().where(where).limit(1).to_list()
