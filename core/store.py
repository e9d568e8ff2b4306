"""The memory store: one LanceDB table per stored tier in a local directory (or an object-store URI).

All writes go through :meth:`Store.remember` / :meth:`Store.remember_many`; all reads take a
:class:`~memdeck.core.filters.Scope` and filter by principal before anything is scored.
"""

from __future__ import annotations

import atexit
import builtins
import json
import logging
import os
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from memdeck.core import filters as F
from memdeck.core.config import Profile, Settings, as_settings, load_profile
from memdeck.core.embed import Embedder
from memdeck.core.errors import MemdeckError
from memdeck.core.files import make_private_tree
from memdeck.core.filters import RecallFilter, Scope
from memdeck.core.paths import check_store_folder
from memdeck.core.records import (
    HISTORY,
    Memory,
    MemoryInput,
    WriteResult,
    check_principal,
    check_text,
    check_tier,
    neutralise_tokens,
    normalise_text,
    now,
    sha256_text,
    tokens_in,
)
from memdeck.core.storage.engine import Engine
from memdeck.core.storage.objectstore import write_errors
from memdeck.core.storage.teamlock import TeamLock

if TYPE_CHECKING:
    from memdeck.core.analytics import Analytics
    from memdeck.core.forget.journal import Progress
    from memdeck.core.forget.plan import ForgetPlan
    from memdeck.core.graph.memory.model import Edge, EntityNode
    from memdeck.core.graph.types import EntityBrief, EntityDescription, EntityListing, GraphPath, Related
    from memdeck.core.recall.context import ContextPack
    from memdeck.core.recall.search import RecallResult
    from memdeck.core.receipts.types import Receipt
    from memdeck.core.storage.sessions import SessionClosed

log = logging.getLogger("memdeck.store")

# A signed deletion receipt (docs/receipts.md), as :func:`memdeck.core.forget.forget` returns it.


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
        self.engine = Engine(
            root,
            embedder=embedder,
            config=config,
            read_consistency=read_consistency,
            uri=uri,
            storage_options=storage_options,
            upgrade=_upgrade_rows,
        )
        if isinstance(self.engine.lock, TeamLock):
            self.engine.purged_hooks.append(partial(_catch_up_bucket, self.engine))
        if (
            self.engine.graph_enabled
        ):  # committed memories are queued for the graph, indexed in the background
            self.engine.write_hooks.append(partial(_index_graph, self.engine))
        atexit.register(self.close)

    @property
    def root(self) -> Path:
        """The store's directory (its tables may live on object storage: ``engine.uri``)."""
        return self.engine.root

    @property
    def settings(self) -> Settings:
        """The store's settings (config.toml, typed and checked when the store opened)."""
        return self.engine.settings

    @settings.setter
    def settings(self, value: Settings) -> None:
        """Change settings while the store is open (the app's weight tuning, tests, evaluation runs)."""
        self.engine.settings = value

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
            # A folder holding other things (the default store's folder, or a path given by mistake) is
            # refused before a file in it is created or its modes change: by every door, not the CLI alone.
            check_store_folder(root)
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
        storage.bind(store.engine, location)
        if location.remote and create:
            store.engine.create_tables()
        store._after_open()
        return store

    def _after_open(self) -> None:
        """Finish work an earlier process left half done (e.g. a purge killed mid-way)."""
        from memdeck.core.recall.traces import install as install_traces
        from memdeck.core.reembed import recover as finish_model_switch

        finish_model_switch(self.engine)  # a `memdeck model use` killed while swapping tables in
        install_traces(
            self.engine
        )  # log every recall ([traces] in the settings); writes happen off the recall path
        if self.engine.graph_enabled and _graph_queue_left(self.engine):
            from memdeck.core.graph.memory.indexer import indexer_for

            indexer_for(self.engine).recover()  # memories a killed process committed but had not indexed
        if _recovery_may_be_due(self.engine):
            from memdeck.core.forget import recover_pending
            from memdeck.core.forget.rescan import recover_rescans

            recover_pending(self.engine)
            recover_rescans(self.engine)

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
        from memdeck.core.graph.memory.write import remember_many

        return remember_many(self.engine, items)

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

        return add_entity(self.engine, principal, name, kind=kind, aliases=aliases, mentions=mentions)

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
            self.engine,
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

        return list_entities(self.engine, scope)

    def entity(self, principal: str, name: str) -> EntityDescription:
        from memdeck.core.graph.memory.query import describe

        return describe(self.engine, principal, name)

    def memory_entities(self, principal: str, memory_id: str) -> builtins.list[EntityBrief]:
        """The entities a memory of ``principal`` mentions."""
        from memdeck.core.graph.memory.query import entities_of

        return entities_of(self.engine, principal, memory_id)

    def related(self, principal: str, name: str, depth: int = 1) -> Related:
        from memdeck.core.graph.memory.query import related

        return related(self.engine, principal, name, depth)

    def path(self, principal: str, a: str, b: str) -> GraphPath:
        from memdeck.core.graph.memory.query import path

        return path(self.engine, principal, a, b)

    def get(self, memory_id: str, scope: Scope = Scope.everyone()) -> Memory:
        """One memory by id, within ``scope`` (NotFound when there is none the scope may see)."""
        return self.engine.get(memory_id, scope)

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
        return self.engine.read_retry(
            lambda: Browser(self.engine, scope).page(query, offset, limit, with_meta=with_meta)
        )

    def count(
        self, scope: Scope = Scope.everyone(), tier: str | None = None, state: str | None = None
    ) -> int:
        tiers = [check_tier(tier)] if tier else self.engine.tiers_present()
        where = F.all_of(scope.where(), F.eq("state", state) if state else None)
        return self.engine.read_retry(
            lambda: sum(self.engine.table(t).count_rows(where) for t in tiers if self.engine.has_table(t))
        )

    def analytics(self, scope: Scope = Scope.everyone()) -> Analytics:
        """Read-only statistics over this store within ``scope`` (the analytics screen's queries)."""
        from memdeck.core.analytics import Analytics

        return Analytics(self.engine, scope)

    def principals(self) -> builtins.list[str]:
        """Every principal with memories, sorted."""
        from memdeck.core.storage.browse import principals

        return principals(self.engine)

    def agents(self, scope: Scope = Scope.everyone()) -> builtins.list[str]:
        """Every agent that wrote a memory within ``scope``, sorted."""
        from memdeck.core.storage.browse import agents

        return agents(self.engine, scope)

    def history(self, memory_id: str, scope: Scope = Scope.everyone()) -> builtins.list[dict[str, Any]]:
        """Earlier texts of a memory, oldest first (what an edit replaced)."""
        current = self.get(memory_id, scope)
        if not self.engine.has_table(HISTORY):
            return []
        where = F.all_of(F.eq("memory_id", memory_id), F.eq("principal", current.principal))
        rows = self.engine.read_retry(
            lambda: self.engine.table(HISTORY).search().where(where).limit(10_000).to_list()
        )
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
            profile = load_profile(profile or self.engine.settings.recall.profile)
        result = self.engine.read_retry(
            lambda: recall(
                self.engine,
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
            self.engine.record_access([(m.memory.tier, m.memory.id) for m in result.items])
        if trace:
            for hook in self.engine.recall_hooks:
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
            count=self.engine.embedder.count_tokens,
            render=lambda m: render_entry(m, at),
        )
        if ledger:
            from memdeck.core.recall.traces import log_injection

            log_injection(
                self.engine,
                principal=principal,
                agent=agent,
                session=session,
                kind=source,
                ids=[e.memory.id for e in pack.included],
                trace_id=result.trace_id,
            )
        return pack

    def close_session(self, session: str, principal: str) -> SessionClosed:
        """Mark a session's episodes closed and queue its consolidation (the maintenance scheduler runs it)."""
        from memdeck.core.storage.sessions import close_session

        return close_session(self.engine, session, principal)

    def close(self) -> None:
        """Finish background work now: memories queued for the graph are indexed, delayed access counts and
        queued traces are written. An indexing that fails is logged and left for the next open."""
        from memdeck.core.graph.memory.queue import indexer_of

        indexer = indexer_of(self.engine)
        if indexer is not None:
            indexer.close()
        self.engine.close()

    # --- lifecycle ------------------------------------------------------------------------------------

    def pin(self, memory_id: str, scope: Scope = Scope.everyone(), pinned: bool = True) -> Memory:
        memory = self.get(memory_id, scope)
        self.engine._update_one(memory, {"pinned": pinned, "updated_at": now()})
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
        self.engine._update_one(memory, {"expires_at": when, "updated_at": now()})
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
        """Mark a memory deprecated (kept, left out of recall), with a reason and what supersedes it."""
        from memdeck.core.storage.lifecycle import deprecate

        return deprecate(self.engine, memory_id, reason, superseded_by=superseded_by, scope=scope)

    def undeprecate(self, memory_id: str, scope: Scope = Scope.everyone()) -> Memory:
        from memdeck.core.storage.lifecycle import undeprecate

        return undeprecate(self.engine, memory_id, scope)

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
        text = self.engine.redact(neutralise_tokens(text, tokens_in(memory.text)), memory.principal)
        if memory.tier == "semantic":
            text = normalise_text(text)
        if text == memory.text:
            return memory
        vectors, embedded = self.engine.embed([text])
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
        with self.engine.lock.shared(), write_errors():
            hist = self.engine.table(HISTORY)
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
            self.engine.table(memory.tier).update(where=F.eq("id", memory.id), values=values)
        memory.text, memory.version, memory.updated_at = text, memory.version + 1, stamp
        memory.content_sha256 = values["content_sha256"]
        if self.engine.graph_enabled:
            # The graph follows the new text, through the indexing queue in order: what only the old text
            # named goes, then the new text is indexed.
            from memdeck.core.graph.memory.indexer import indexer_for

            indexer_for(self.engine).submit([memory], reindex=True)
        return memory

    # --- forgetting (see memdeck.core.forget) --------------------------------------------------------

    def plan_forget(self, ids: Sequence[str], scope: Scope = Scope.everyone()) -> ForgetPlan:
        """What forgetting these ids would remove and change (nothing is written)."""
        from memdeck.core.forget import plan_forget

        return plan_forget(self.engine, ids, scope)

    def plan_forget_principal(self, principal: str) -> ForgetPlan:
        """What forgetting everything of one principal would remove (nothing is written)."""
        from memdeck.core.forget import plan_principal

        return plan_principal(self.engine, principal)

    def forget(
        self,
        ids: Sequence[str],
        reason: str,
        scope: Scope = Scope.everyone(),
        *,
        progress: Progress | None = None,
    ) -> Receipt:
        """Purge these memories from every file of the store; returns the signed deletion receipt.
        ``progress`` is told each step as it starts (a purge of a large store takes a while)."""
        from memdeck.core.forget import forget

        return forget(self.engine, ids, reason, scope, progress=progress)

    def forget_principal(self, principal: str, reason: str, *, progress: Progress | None = None) -> Receipt:
        """Purge everything of one principal and destroy their redaction vault; returns the receipt."""
        from memdeck.core.forget import forget_principal

        return forget_principal(self.engine, principal, reason, progress=progress)


def _recovery_may_be_due(engine: Engine) -> bool:
    """Whether opening the store must look for interrupted purges and re-scans: always for a store shared
    through a bucket (its journals live there), else when the store's journal folder holds anything (a
    purge or re-scan journal, or a half-written one). A store without one is opened without loading the
    forget machinery, which a command that only reads never needs."""
    if isinstance(engine.lock, TeamLock):
        return True
    directory = engine.layout.journal
    try:
        return any(directory.iterdir())
    except FileNotFoundError:
        return False
    except OSError:
        return True  # unreadable: let recovery look (and log what it finds)


def _upgrade_rows(engine: Engine, old: int) -> None:
    """The rows' own part of a schema migration (run by the engine under its exclusive lock)."""
    if old < 3:
        from memdeck.core.forget.principals import normalise_principals

        normalise_principals(engine)


def _catch_up_bucket(engine: Engine) -> None:
    """After a purge on another machine of a shared bucket: scrub this machine's trace log (in the background)."""
    from memdeck.core.forget.bucket import catch_up_later

    catch_up_later(engine)


def _index_graph(engine: Engine, memories: builtins.list[Memory]) -> None:
    """A write hook: queue the committed memories for the graph (indexed in the background)."""
    from memdeck.core.graph.memory.indexer import indexer_for

    indexer_for(engine).submit(memories)


def _graph_queue_left(engine: Engine) -> bool:
    """Whether the store's graph queue folder holds a file (of this store's writers, live or killed)."""
    from memdeck.core.graph.memory.queue import QUEUE_DIR

    try:
        with os.scandir(engine.root / QUEUE_DIR) as entries:
            return any(True for _ in entries)
    except FileNotFoundError:
        return False
    except OSError:
        return True  # unreadable: let the indexer say what it finds


def open_store(path: str | Path | None = None, **kwargs: Any) -> Store:
    return Store.open(path, **kwargs)
