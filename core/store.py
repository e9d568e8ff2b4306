"""The memory store: one LanceDB table per stored tier in a local directory (or an object-store URI).

All writes go through :meth:`Store.remember` / :meth:`Store.remember_many`; all reads take a
:class:`~memdeck.core.filters.Scope` and filter by principal before anything is scored.
"""

from __future__ import annotations

import atexit
import builtins
import dataclasses
import json
import logging
import os
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import lancedb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from memdeck.core import filters as F
from memdeck.core.config import Profile, Settings, as_settings, load_profile
from memdeck.core.embed import Embedder, EmbeddingUnavailable, make_embedder
from memdeck.core.errors import MemdeckError, NotFound
from memdeck.core.files import make_private_tree
from memdeck.core.filters import RecallFilter, Scope
from memdeck.core.models import chosen_model
from memdeck.core.paths import StoreLayout
from memdeck.core.privacy import Redactor, Vault
from memdeck.core.records import (
    ADDED_COLUMNS,
    GRAPH_TABLES,
    HISTORY,
    SCHEMA_VERSION,
    STORED_TIERS,
    Memory,
    MemoryInput,
    WriteResult,
    check_principal,
    check_text,
    check_tier,
    history_schema,
    neutralise_tokens,
    normalise_text,
    now,
    row_to_memory,
    sha256_text,
    tier_schema,
    tokens_in,
)
from memdeck.core.storage.access import AccessCounter, Background
from memdeck.core.storage.locking import StoreLock
from memdeck.core.storage.objectstore import write_errors
from memdeck.core.storage.teamlock import TeamLock, lock_for
from memdeck.core.storage.writes import Writer, fail_closed

if TYPE_CHECKING:
    from memdeck.core.forget.plan import ForgetPlan
    from memdeck.core.graph.memory.model import Edge, EntityNode
    from memdeck.core.graph.types import EntityBrief, EntityDescription, EntityListing, GraphPath, Related
    from memdeck.core.recall.context import ContextPack
    from memdeck.core.recall.index import RecallIndex
    from memdeck.core.recall.search import RecallResult
    from memdeck.core.receipts.types import Receipt

log = logging.getLogger("memdeck.store")

T = TypeVar("T")

# LanceDB answers a filtered full-text search by scoring every row the filter allows, one by one, when that
# is at most LANCE_FLAT_SEARCH_PERCENT_THRESHOLD percent of the table (default 10), and otherwise walks the
# posting lists with the filter as a mask. One principal among ten sits just under 10 %: at 1M memories the
# row-by-row scoring compared 98,000 documents and took 28 ms against 8 ms for the posting-list walk, with
# identical results (`bench_core.py ftsfilter`, bench/RESULTS.md). At 1 % the row-by-row path stays for small principals, where it
# is the faster one. Read by LanceDB at its first full-text search; a value set by the user wins.
os.environ.setdefault("LANCE_FLAT_SEARCH_PERCENT_THRESHOLD", "1")


class Store:
    """A memdeck store directory. Open with :meth:`Store.open`."""

    def __init__(
        self,
        root: Path,
        *,
        embedder: Embedder | None = None,
        config: Settings | Mapping[str, Any] | None = None,
        read_consistency: float = 1.0,
        uri: str | None = None,
        storage_options: dict[str, str] | None = None,
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
        self.lock: StoreLock = lock_for(
            self.layout.lock, uri, storage_options, self.settings.to_dict(), self._purged_elsewhere
        )
        self.db = lancedb.connect(
            self.uri,
            read_consistency_interval=timedelta(seconds=read_consistency),
            storage_options=storage_options,
        )
        self._tables: dict[str, Any] = {}
        self._tables_lock = threading.RLock()
        self.meta = self._load_meta()
        self.background = Background()
        self.access = AccessCounter(self, self.background)
        self.writer = Writer(self)
        self._redactor: Redactor | None = None
        self._trust: dict[str, float] | None = None
        self._fts_ready: set[str] = set()
        self._indexed_cache: dict[tuple[str, int], bool] = {}
        self.recall_index: RecallIndex | None = (
            None  # recall's in-memory partitions (memdeck.core.recall.index)
        )
        # A scope past recall.index_sync_rows is loaded in a background thread; a one-shot command sets False.
        self.index_loads_in_background = True
        self.write_hooks: list[Callable[[list[Memory]], None]] = []
        self.recall_hooks: list[Callable[[Any], None]] = []
        if self.graph_enabled:
            self.write_hooks.append(self._index_graph)
        atexit.register(self.close)

    # --- opening ------------------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: str | Path | None = None,
        *,
        embedder: Embedder | None = None,
        config: Settings | Mapping[str, Any] | None = None,
        create: bool = True,
        read_consistency: float = 1.0,
        storage_uri: str | None = None,
        storage_options: dict[str, str] | None = None,
    ) -> Store:
        """Open (or create) a store. Its tables live in ``<store>/lance`` unless ``storage_uri``, a path
        such as ``s3://bucket/prefix`` or the config's ``[storage] uri`` puts them on object storage (see
        :func:`memdeck.core.storage.objectstore.resolve`)."""
        from memdeck.core.storage import objectstore as storage

        settings = as_settings(config)
        root, location = storage.resolve(settings.to_dict(), path, storage_uri, storage_options)
        if root.exists() and not root.is_dir():
            raise MemdeckError(f"store path {root} is a file, not a directory")
        if not (root / "memdeck.json").exists():
            # On object storage the tables may well exist already (another machine made them): this
            # machine only needs its local companion directory.
            if not create and not location.remote:
                raise MemdeckError(
                    f"no memdeck store at {root} (create one with `memdeck add` or `memdeck demo`)"
                )
            try:
                root.mkdir(parents=True, exist_ok=True, mode=0o700)
                os.chmod(root, 0o700)  # a new store is private: memories, vault, keys, receipts, traces
            except OSError as exc:
                raise MemdeckError(f"cannot create store at {root}: {exc.strerror}") from None
        make_private_tree(root)  # a store an older memdeck created 0755 becomes private too
        try:
            store = cls(
                root,
                embedder=embedder,
                config=settings,
                read_consistency=read_consistency,
                uri=location.uri,
                storage_options=location.options or None,
            )
        except PermissionError as exc:
            raise MemdeckError(f"cannot open store at {root}: {exc.strerror or exc}") from None
        storage.bind(store, location)
        if location.remote and create:
            store._create_tables()
        store._after_open()
        return store

    def _create_tables(self) -> None:
        """Create every table now, before the first write. There is no lock across machines, and LanceDB
        commits a second machine's concurrent creation of the same table as an overwrite of it: done at
        open, the two creations race each other, never a creation against the other machine's rows."""
        for tier in (*STORED_TIERS, HISTORY, *GRAPH_TABLES):
            self.table(tier)

    def _after_open(self) -> None:
        """Finish work an earlier process left half done (e.g. a purge killed mid-way)."""
        from memdeck.core.forget import recover_pending
        from memdeck.core.forget.rescan import recover_rescans
        from memdeck.core.recall.traces import install as install_traces
        from memdeck.core.reembed import recover as finish_model_switch

        finish_model_switch(self)  # a `memdeck model use` killed while swapping tables in
        install_traces(self)  # log every recall ([traces] in the settings); writes happen off the recall path
        recover_pending(self)
        recover_rescans(self)

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
            if old < 3:
                from memdeck.core.forget.principals import normalise_principals

                normalise_principals(self)
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
            if tier in GRAPH_TABLES:
                from memdeck.core.graph.memory.tables import graph_schema

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
        """A purge ran in another process: catch the table handles up. On a bucket shared with other machines,
        also scrub this machine's trace log of what was forgotten there (in the background)."""
        self.refresh()
        if isinstance(self.lock, TeamLock):
            from memdeck.core.forget.bucket import catch_up_later

            catch_up_later(self)

    def refresh(self) -> None:
        """See other processes' commits now rather than after the consistency interval.

        Called after a purge, here or in another process: recall's in-memory partitions are dropped with
        whatever they held of the forgotten rows, and rebuilt from the tables on the next recall."""
        if self.recall_index is not None:
            self.recall_index.clear()
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

    # --- writing ------------------------------------------------------------------------------------

    @property
    def redactor(self) -> Redactor:
        """Write-time redaction with this store's vault. Never optional: a write is not stored unredacted."""
        if self._redactor is None:
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

    def remember(
        self,
        text: str,
        *,
        tier: str = "semantic",
        principal: str,
        agent: str = "user",
        tags: Sequence[str] | str = (),
        importance: float = 0.5,
        pinned: bool = False,
        meta: dict[str, Any] | None = None,
        created_at: datetime | str | None = None,
        force: bool = False,
        expires_at: datetime | str | None = None,
        key: str | None = None,
        screen: bool | None = None,
        **extra: Any,
    ) -> WriteResult:
        """Write one memory. Semantic facts upsert by content hash; procedures get the next version.
        ``expires_at``: the moment it stops being recalled (and is purged by the next maintenance).

        ``key``: a caller's own key for the memory, kept as one of its tags. If a live, active memory of the
        principal in the tier already holds it, nothing is written and the result is ``exists`` with that
        memory, meta included: the caller decides whether to replace it (:meth:`forget` it, then write
        again). The check is part of the write's own read, so a keyed write costs what an unkeyed one does.

        ``screen``: whether the formation filter may skip it as noise (None: ``formation_filter.enabled``)."""
        item = MemoryInput(
            text=text,
            tier=tier,
            principal=principal,
            agent=agent,
            tags=tags if not isinstance(tags, str) else tags.split(","),
            importance=importance,
            pinned=pinned,
            meta=meta or {},
            created_at=created_at,
            extra=extra,
            force=force,
            expires_at=expires_at,
            key=key,
            screen=screen,
        )
        return self.remember_many([item])[0]

    def remember_many(self, items: Iterable[MemoryInput | dict[str, Any]]) -> list[WriteResult]:
        """Write many memories with one embedding batch and one commit per tier; bad input writes nothing.

        An item may name ``entities`` (names or {name, kind, aliases}) and ``relations`` ({subject,
        predicate, object[, negated, valid_from, valid_until]}) for the graph, beside what is extracted
        from its text; a relation's endpoints must be named there or be entities the principal has."""
        from memdeck.core.graph.memory.write import (
            add_explicit,
            check_endpoints,
            entity_specs,
            relation_specs,
        )
        from memdeck.core.storage.writes import input_from_dict

        inputs = []
        explicit = []
        for raw in items:
            item = raw if isinstance(raw, MemoryInput) else input_from_dict(raw)
            extra = dict(item.extra)
            ents, rels = (
                entity_specs(extra.pop("entities", None)),
                relation_specs(extra.pop("relations", None)),
            )
            inputs.append(dataclasses.replace(item, extra=extra))
            if rels:
                check_endpoints(self, item.principal, ents, rels)
            explicit.append((ents, rels))
        results = self.writer.write_many(inputs)
        if any(e or r for e, r in explicit) and len(results) == len(inputs):
            for result, (ents, rels) in zip(results, explicit, strict=True):
                if result.memory is not None and result.action != "skipped" and (ents or rels):
                    add_explicit(self, result.memory, ents, rels)
        return results

    # --- the graph (see memdeck.core.graph) ----------------------------------------------------------

    @property
    def graph_enabled(self) -> bool:
        return self.settings.graph.enabled

    def _index_graph(self, memories: builtins.list[Memory]) -> None:
        from memdeck.core.graph.memory.write import index_memories

        index_memories(self, memories)

    def add_entity(
        self,
        principal: str,
        name: str,
        *,
        kind: str = "other",
        aliases: Sequence[str] = (),
        mentions: Sequence[str] = (),
    ) -> EntityNode:
        """Add an entity (or an alias/mention to the one it resolves to) to a principal's graph."""
        from memdeck.core.graph.memory.write import add_entity

        return add_entity(self, principal, name, kind=kind, aliases=aliases, mentions=mentions)

    def add_relation(
        self,
        principal: str,
        subject: str,
        predicate: str,
        obj: str,
        *,
        negated: bool = False,
        valid_from: str | None = None,
        valid_until: str | None = None,
        sources: Sequence[str] = (),
    ) -> Edge:
        """Relate two existing entities of a principal (MemdeckError when either endpoint is missing)."""
        from memdeck.core.graph.memory.write import add_relation

        return add_relation(
            self,
            principal,
            subject,
            predicate,
            obj,
            negated=negated,
            valid_from=valid_from,
            valid_until=valid_until,
            sources=sources,
        )

    def entities(self, scope: Scope = Scope.everyone()) -> builtins.list[EntityListing]:
        from memdeck.core.graph.memory.query import list_entities

        return list_entities(self, scope)

    def entity(self, principal: str, name: str) -> EntityDescription:
        from memdeck.core.graph.memory.query import describe

        return describe(self, principal, name)

    def memory_entities(self, principal: str, memory_id: str) -> builtins.list[EntityBrief]:
        """The entities a memory of ``principal`` mentions."""
        from memdeck.core.graph.memory.query import entities_of

        return entities_of(self, principal, memory_id)

    def related(self, principal: str, name: str, depth: int = 1) -> Related:
        from memdeck.core.graph.memory.query import related

        return related(self, principal, name, depth)

    def path(self, principal: str, a: str, b: str) -> GraphPath:
        from memdeck.core.graph.memory.query import path

        return path(self, principal, a, b)

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

    # --- reading ------------------------------------------------------------------------------------

    def tiers_present(self) -> list[str]:
        return [t for t in STORED_TIERS if self.has_table(t)]

    def get(self, memory_id: str, scope: Scope = Scope.everyone()) -> Memory:
        for tier in self._tiers_for_id(memory_id):
            tbl = self.table(tier)
            where = F.all_of(F.eq("id", memory_id), scope.where())
            rows = self.read_retry(partial(_first_row, tbl, where))
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

    def list(
        self,
        scope: Scope = Scope.everyone(),
        *,
        tier: str | None = None,
        state: str | None = None,
        agent: str | None = None,
        tag: str | None = None,
        pinned: bool | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = 50,
        offset: int = 0,
        order_by: str = "created_at",
        descending: bool = True,
        with_meta: bool = False,
        type: str | None = None,
    ) -> list[Memory]:
        """A page of memories, newest first by default, across tiers or in one; ``with_meta`` reads each
        memory's ``meta`` in the same read (otherwise left out)."""
        from memdeck.core.storage.browse import BrowseQuery, Browser

        query = BrowseQuery(
            tier=tier,
            state=state,
            agent=agent,
            tag=tag,
            pinned=pinned,
            since=since,
            until=until,
            order_by=order_by,
            descending=descending,
            type=type,
        )
        return self.read_retry(lambda: Browser(self, scope).page(query, offset, limit, with_meta=with_meta))

    def count(
        self, scope: Scope = Scope.everyone(), tier: str | None = None, state: str | None = None
    ) -> int:
        tiers = [check_tier(tier)] if tier else self.tiers_present()
        where = F.all_of(scope.where(), F.eq("state", state) if state else None)
        return self.read_retry(
            lambda: sum(self.table(t).count_rows(where) for t in tiers if self.has_table(t))
        )

    def principals(self) -> builtins.list[str]:
        seen: set[str] = set()
        for tier in self.tiers_present():
            seen.update(pc.unique(self.scan(tier, ["principal"])["principal"]).to_pylist())
        return sorted(seen)

    def agents(self, scope: Scope = Scope.everyone()) -> builtins.list[str]:
        seen: set[str] = set()
        for tier in self.tiers_present():
            tbl = self.scan(tier, ["agent"], scope.where())
            seen.update(v for v in pc.unique(tbl["agent"]).to_pylist() if v)
        return sorted(seen)

    def history(self, memory_id: str, scope: Scope = Scope.everyone()) -> builtins.list[dict[str, Any]]:
        """Earlier texts of a memory, oldest first (what an edit replaced)."""
        current = self.get(memory_id, scope)
        if not self.has_table(HISTORY):
            return []
        where = F.all_of(F.eq("memory_id", memory_id), F.eq("principal", current.principal))
        rows = self.read_retry(lambda: self.table(HISTORY).search().where(where).limit(10_000).to_list())
        rows.sort(key=lambda r: r["version"])
        return rows

    # --- recall -------------------------------------------------------------------------------------

    def recall(
        self,
        query: str,
        *,
        principal: str | Sequence[str] | None = None,
        scope: Scope | None = None,
        agent: str | None = None,
        tiers: Sequence[str] | None = None,
        k: int = 10,
        profile: Profile | str | None = None,
        include_deprecated: bool = False,
        record_access: bool = True,
        trace: bool = True,
        source: str = "api",
        keyword_only: str | None = None,
        filters: RecallFilter | None = None,
        written_by: str | None = None,
    ) -> RecallResult:
        """Hybrid recall with explained scores. See :mod:`memdeck.core.recall.search`.

        ``filters`` (:class:`RecallFilter`: time range, tags, writing agent, minimum importance) and
        ``written_by`` narrow the candidates inside the LanceDB queries.
        """
        from memdeck.core.recall.search import recall

        if scope is None:
            if principal is None:
                raise MemdeckError("recall needs a principal (or an explicit scope)")
            principals = [principal] if isinstance(principal, str) else list(principal)
            scope = Scope.of(*[check_principal(p) for p in principals])
        if isinstance(profile, str) or profile is None:
            profile = load_profile(profile or self.settings.recall.profile)
        result = self.read_retry(
            lambda: recall(
                self,
                query,
                scope=scope,
                agent=agent,
                tiers=tiers,
                k=k,
                profile=profile,
                include_deprecated=include_deprecated,
                keyword_only=keyword_only,
                filters=filters,
                written_by=written_by,
            )
        )
        result.source = source
        if record_access and result.items:
            self.record_access([(m.memory.tier, m.memory.id) for m in result.items])
        if trace:
            for hook in self.recall_hooks:
                try:
                    hook(result)
                except Exception as exc:  # noqa: BLE001 - a trace failure never fails a recall
                    log.warning("recall hook failed: %s", exc)
        return result

    def context(
        self,
        query: str,
        *,
        principal: str,
        budget_tokens: int = 1000,
        agent: str | None = None,
        session: str | None = None,
        tiers: Sequence[str] | None = None,
        k: int = 20,
        source: str = "context",
        ledger: bool = True,
    ) -> ContextPack:
        """The working tier: what to put in a prompt for ``query`` within ``budget_tokens`` tokens of the
        embedding model's tokenizer. Pinned memories first, then recalled ones by score, deduplicated, each
        rendered with its id, tier, age and source; what did not fit is listed (``pack.left_out``). Recorded
        in the injection ledger (agent, session, ids) unless ``ledger`` is false."""
        from memdeck.core.recall.context import build_context_pack, render_entry

        if (
            isinstance(budget_tokens, bool)
            or not isinstance(budget_tokens, int)
            or not 0 <= budget_tokens <= 1_000_000
        ):
            raise MemdeckError(
                f"budget must be a whole number of tokens from 0 to 1,000,000, got {budget_tokens!r}"
            )
        scope = Scope.of(check_principal(principal))
        result = self.recall(query, scope=scope, agent=agent, tiers=tiers, k=k, source=source)
        pinned = [
            m
            for m in self.list(scope, pinned=True, state="active", limit=500)
            if not tiers or m.tier in tiers
        ]
        at = now()
        pack = build_context_pack(
            pinned,
            result.items,
            budget_tokens,
            count=self.embedder.count_tokens,
            render=lambda m: render_entry(m, at),
        )
        if ledger:
            from memdeck.core.recall.traces import log_injection

            log_injection(
                self,
                principal=principal,
                agent=agent,
                session=session,
                kind=source,
                ids=[e.memory.id for e in pack.included],
                trace_id=result.trace_id,
            )
        return pack

    def close_session(self, session: str, principal: str) -> dict[str, Any]:
        """Mark a session's episodes closed and queue its consolidation (the maintenance scheduler runs it)."""
        from memdeck.core.storage.sessions import close_session

        return close_session(self, session, principal)

    def agent_trust(self) -> dict[str, float]:
        """Trust per agent in [0, 1] from recall feedback; 0.5 for an agent with none."""
        if self._trust is None:
            from memdeck.core.recall.feedback import trust_by_agent

            self._trust = trust_by_agent(self)
        return self._trust

    def invalidate_trust(self) -> None:
        self._trust = None

    # --- access statistics --------------------------------------------------------------------------

    def record_access(self, items: Sequence[tuple[str, str]]) -> None:
        """Count a recall of these (tier, id) pairs; applied in the background so a read is never slowed."""
        self.access.record(items)

    def catch_up_recall(self, tiers: Sequence[str]) -> None:
        """Bring recall's in-memory partitions of these tiers to the tables' latest version now (after this
        process's own background commits), so the next recall does not spend its time on it."""
        if self.recall_index is not None:
            for tier in tiers:
                self.recall_index.catch_up(self, tier)

    def flush_access(self) -> None:
        self.access.flush()

    def close(self) -> None:
        """Finish background work now: delayed access counts and queued traces are written."""
        self.background.join()
        self.access.flush()

    # --- lifecycle ------------------------------------------------------------------------------------

    def _update_one(self, memory: Memory, values: dict[str, Any]) -> None:
        with self.lock.shared(), write_errors():
            # An update reads the old row first: a handle left stale by a purge needs the same retry as a read.
            self.read_retry(
                lambda: self.table(memory.tier).update(where=F.eq("id", memory.id), values=values)
            )

    def pin(self, memory_id: str, scope: Scope = Scope.everyone(), pinned: bool = True) -> Memory:
        memory = self.get(memory_id, scope)
        self._update_one(memory, {"pinned": pinned, "updated_at": now()})
        memory.pinned = pinned
        return memory

    def set_expiry(
        self, memory_id: str, expires_at: datetime | str | None, scope: Scope = Scope.everyone()
    ) -> Memory:
        """Set (or with None clear) a memory's own expiry. Past it, the memory is hidden from every read at
        once and purged, with a receipt, by the next maintenance run."""
        from memdeck.core.records import parse_time

        memory = self.get(memory_id, scope)
        when = parse_time(expires_at)
        self._update_one(memory, {"expires_at": when, "updated_at": now()})
        memory.expires_at = when
        return memory

    def unpin(self, memory_id: str, scope: Scope = Scope.everyone()) -> Memory:
        return self.pin(memory_id, scope, pinned=False)

    def deprecate(
        self,
        memory_id: str,
        reason: str,
        *,
        superseded_by: str | None = None,
        scope: Scope = Scope.everyone(),
    ) -> Memory:
        memory = self.get(memory_id, scope)
        reason = self.redact(neutralise_tokens(check_text(reason, "reason")), memory.principal)
        if superseded_by:
            other = self.get(superseded_by, scope)
            if other.principal != memory.principal:
                raise MemdeckError("a memory can only be superseded by one of the same principal")
            if other.id == memory.id:
                raise MemdeckError("a memory cannot supersede itself")
        values = {
            "state": "deprecated",
            "deprecation_reason": reason,
            "superseded_by": superseded_by,
            "updated_at": now(),
        }
        self._update_one(memory, values)
        memory.state, memory.deprecation_reason, memory.superseded_by = "deprecated", reason, superseded_by
        return memory

    def undeprecate(self, memory_id: str, scope: Scope = Scope.everyone()) -> Memory:
        memory = self.get(memory_id, scope)
        self._update_one(
            memory,
            {"state": "active", "deprecation_reason": None, "superseded_by": None, "updated_at": now()},
        )
        memory.state, memory.deprecation_reason, memory.superseded_by = "active", None, None
        return memory

    def edit(
        self, memory_id: str, text: str, *, agent: str = "user", scope: Scope = Scope.everyone()
    ) -> Memory:
        """Replace a memory's text: a new version, re-embedded; the old text moves to the history.

        A closed episode is a record of what happened and is never rewritten: editing one raises
        MemdeckError saying what to do instead (add a correcting episode, or deprecate it).
        """
        memory = self.get(memory_id, scope)
        if memory.tier == "episodic" and memory.closed:
            raise MemdeckError(
                f"episode {memory.id} is closed and cannot be edited; add a correcting episode, "
                f"or deprecate it (memdeck deprecate {memory.id} --reason ...)"
            )
        text = check_text(text)
        # tokens the memory already holds stay tokens; any other token-shaped text is neutralised
        text = self.redact(neutralise_tokens(text, tokens_in(memory.text)), memory.principal)
        if memory.tier == "semantic":
            text = normalise_text(text)
        if text == memory.text:
            return memory
        vectors, embedded = self.embed([text])
        stamp = now()
        history_row = {
            "memory_id": memory.id,
            "principal": memory.principal,
            "tier": memory.tier,
            "version": memory.version,
            "text": memory.text,
            "agent": memory.agent,
            "edited_at": stamp,
            "content_sha256": memory.content_sha256,
        }
        with self.lock.shared(), write_errors():
            hist = self.table(HISTORY)
            hist.add(pa.Table.from_pylist([history_row], schema=hist.schema))
            values: dict[str, Any] = {
                "text": text,
                "content_sha256": sha256_text(text),
                "version": memory.version + 1,
                "updated_at": stamp,
                "vector": vectors[0].tolist(),
                "agent": agent or memory.agent,
            }
            if not embedded:
                values["meta"] = json.dumps({**memory.meta, "unembedded": True}, sort_keys=True)
            self.table(memory.tier).update(where=F.eq("id", memory.id), values=values)
        memory.text, memory.version, memory.updated_at = text, memory.version + 1, stamp
        memory.content_sha256 = values["content_sha256"]
        if self.graph_enabled:  # the graph follows the new text: what only the old text named goes
            from memdeck.core.graph.memory.forget import apply_graph

            with self.lock.shared(), write_errors():
                apply_graph(self, memory.principal, [memory.id])
            self._index_graph([memory])
        return memory

    # --- forgetting (see memdeck.core.forget) --------------------------------------------------------

    def plan_forget(self, ids: Sequence[str], scope: Scope = Scope.everyone()) -> ForgetPlan:
        """What forgetting these ids would remove and change (nothing is written)."""
        from memdeck.core.forget import plan_forget

        return plan_forget(self, ids, scope)

    def forget(self, ids: Sequence[str], reason: str, scope: Scope = Scope.everyone()) -> Receipt:
        """Purge these memories from every file of the store; returns the signed deletion receipt."""
        from memdeck.core.forget import forget

        return forget(self, ids, reason, scope)

    def forget_principal(self, principal: str, reason: str) -> Receipt:
        """Purge everything of one principal and destroy their redaction vault; returns the receipt."""
        from memdeck.core.forget import forget_principal

        return forget_principal(self, principal, reason)


def _vanished_file(exc: BaseException) -> bool:
    """A read failed because a purge (compaction + cleanup of old versions) removed a file of the version
    this table handle still pointed at."""
    if isinstance(exc, FileNotFoundError):
        return True
    text = str(exc).lower()
    parts = (".lance", "_deletions", "_indices", "_versions", ".idx", ".manifest", ".arrow")
    return ("not found" in text or "no such file" in text) and any(part in text for part in parts)


def _first_row(tbl: Any, where: str | None) -> builtins.list[dict[str, Any]]:
    return tbl.search().where(where).limit(1).to_list()


def open_store(path: str | Path | None = None, **kwargs: Any) -> Store:
    return Store.open(path, **kwargs)
