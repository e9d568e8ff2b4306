"""Paged browsing over a large store without loading it.

A query's ordering (one sort column plus row ids, filtered by scope first) is computed once per table
version and cached; each page then takes only its rows by row id. At 1M rows the ordering costs one
column scan, and a page costs a take of 50 rows.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from memdeck.core import filters as F
from memdeck.core.errors import MemdeckError
from memdeck.core.filters import Scope
from memdeck.core.records import (
    LIST_COLUMNS,
    STATES,
    STORED_TIERS,
    TIER_LIST_COLUMNS,
    Memory,
    check_tier,
    now,
    readable_rows,
    row_to_memory,
)
from memdeck.core.storage.expiry import live_where, ttl_cutoff

if TYPE_CHECKING:
    from memdeck.core.storage.engine import Engine

SORTABLE = ("created_at", "updated_at", "importance", "access_count", "last_accessed")


@dataclass(frozen=True)
class BrowseQuery:
    tier: str | None = None
    state: str | None = None  # active, deprecated, or None for all but forgotten-pending
    agent: str | None = None
    tag: str | None = None
    pinned: bool | None = None
    since: datetime | None = None
    until: datetime | None = None
    principal: str | None = None  # narrows the scope; never widens it
    order_by: str = "created_at"
    descending: bool = True
    include_expired: bool = False  # memories past their expiry, until maintenance purges them
    type: str | None = None  # a memory type (memdeck.core.memtypes)

    def where(self, scope: Scope) -> str | None:
        if self.state is not None and self.state not in STATES:
            raise MemdeckError(f"unknown state {self.state!r}; use one of: {', '.join(STATES)}")
        effective = scope.narrowed([self.principal] if self.principal else None)
        return F.all_of(
            effective.where(),
            F.eq("state", self.state) if self.state else F.ne("state", "forgotten-pending"),
            F.eq("agent", self.agent) if self.agent else None,
            F.tag_contains(self.tag) if self.tag else None,
            F.eq("pinned", self.pinned) if self.pinned is not None else None,
            F.ge("created_at", self.since) if self.since else None,
            F.le("created_at", self.until) if self.until else None,
            F.eq("type", self.type) if self.type else None,
        )


_EXPIRY_COLUMNS = ("expires_at", "created_at", "last_accessed", "pinned")


def _micros(col: Any) -> np.ndarray:
    return np.nan_to_num(
        pc.cast(col, pa.int64()).to_numpy(zero_copy_only=False).astype(np.float64), nan=np.inf
    )


def _first_expiry(store: Engine, tier: str, tbl: pa.Table, at: datetime) -> float:
    """The first moment (epoch µs) one of these live rows expires: the cached ordering is good until then."""
    if tbl.num_rows == 0:
        return float(np.inf)
    first = float(np.min(_micros(tbl["expires_at"])))
    cutoff, start = ttl_cutoff(store, tier, at)
    if cutoff is not None:
        anchor = _micros(tbl["created_at"])
        if start == "last_used":
            used = _micros(tbl["last_accessed"])
            anchor = np.where(np.isfinite(used), used, anchor)
        pinned = tbl["pinned"].fill_null(False).to_numpy(zero_copy_only=False)
        anchors = anchor[~pinned]
        if len(anchors):
            first = min(first, float(np.min(anchors)) + (at - cutoff).total_seconds() * 1e6)
    return first


class Browser:
    """Pages of memories for one scope. Thread-safe; the app keeps one per screen."""

    def __init__(self, store: Engine, scope: Scope) -> None:
        self.store = store
        self.scope = scope
        self._cache: dict[Any, tuple[list[str], np.ndarray, np.ndarray, list[Any]]] = {}
        self._valid_until: dict[Any, float] = {}  # the first moment a cached row expires (epoch µs)
        self._lock = threading.Lock()

    def _tiers(self, query: BrowseQuery) -> list[str]:
        tiers = [check_tier(query.tier)] if query.tier else list(STORED_TIERS)
        return [t for t in tiers if self.store.has_table(t)]

    def _ordering(self, query: BrowseQuery) -> tuple[list[str], np.ndarray, np.ndarray, list[Any]]:
        """(tiers, tier index per row, row id per row, the dataset of each tier) in display order.

        Row ids are addresses within one table version (compaction and deletes change them), so a page
        takes its rows from the very datasets the ordering was scanned from, never from a newer version.
        """
        if query.order_by not in SORTABLE:
            raise MemdeckError(f"cannot sort by {query.order_by!r}; use one of: {', '.join(SORTABLE)}")
        tiers = self._tiers(query)
        versions = tuple(self.store.table(t).version for t in tiers)
        key = (query, versions)
        at = now()
        stamp = at.timestamp() * 1e6
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None and stamp < self._valid_until.get(key, np.inf):
                return hit
        where = query.where(self.scope)
        parts_key, parts_tier, parts_rowid, datasets = [], [], [], []
        valid_until = np.inf
        for n, tier in enumerate(tiers):
            ds = self.store.table(tier).to_lance()
            datasets.append(ds)
            columns = [query.order_by]
            tier_where = where
            if not query.include_expired:
                tier_where = F.all_of(where, live_where(self.store, tier, at))
                columns = list(dict.fromkeys([*columns, *_EXPIRY_COLUMNS]))
            tbl = ds.to_table(columns=columns, filter=tier_where, with_row_id=True)
            if not query.include_expired:
                valid_until = min(valid_until, _first_expiry(self.store, tier, tbl, at))
            col = tbl[query.order_by]
            if pa.types.is_timestamp(col.type):
                col = pc.cast(col, pa.int64())
            parts_key.append(
                np.nan_to_num(col.to_numpy(zero_copy_only=False).astype(np.float64), nan=-np.inf)
            )
            parts_rowid.append(tbl["_rowid"].to_numpy())
            parts_tier.append(np.full(tbl.num_rows, n, dtype=np.int8))
        if parts_key:
            keys = np.concatenate(parts_key)
            order = np.argsort(-keys if query.descending else keys, kind="stable")
            result = (tiers, np.concatenate(parts_tier)[order], np.concatenate(parts_rowid)[order], datasets)
        else:
            result = (tiers, np.zeros(0, np.int8), np.zeros(0, np.uint64), datasets)
        with self._lock:
            self._cache = {k: v for k, v in self._cache.items() if k[0] != query}
            self._valid_until = {k: v for k, v in self._valid_until.items() if k in self._cache}
            self._cache[key] = result
            self._valid_until[key] = valid_until
        return result

    def count(self, query: BrowseQuery) -> int:
        return len(self._ordering(query)[2])

    def page(
        self, query: BrowseQuery, offset: int = 0, limit: int = 50, *, with_meta: bool = False
    ) -> list[Memory]:
        """A page of memories; ``with_meta`` takes each whole record (its ``meta``, deprecation reason, an
        episode's events, a procedure's steps: what ``Store.get`` reads), which a listing leaves out by default
        because it can be large and a listing rarely shows it."""
        if offset < 0 or limit < 0:
            raise MemdeckError("offset and limit must not be negative")
        try:
            return self._page(query, offset, limit, with_meta)
        except (OSError, ValueError):
            # A purge cleaned up the version the cached ordering was read from (its files are gone):
            # order again from the current version, once.
            with self._lock:
                self._cache = {k: v for k, v in self._cache.items() if k[0] != query}
            return self._page(query, offset, limit, with_meta)

    def _page(self, query: BrowseQuery, offset: int, limit: int, with_meta: bool = False) -> list[Memory]:
        tiers, tier_of, rowids, datasets = self._ordering(query)
        sel_tier = tier_of[offset : offset + limit]
        sel_rows = rowids[offset : offset + limit]
        out: list[Memory | None] = [None] * len(sel_rows)
        for n, tier in enumerate(tiers):
            mask = np.nonzero(sel_tier == n)[0]
            if not len(mask):
                continue
            ds = datasets[n]
            cols = LIST_COLUMNS + TIER_LIST_COLUMNS[tier]
            if with_meta:  # every stored column but the vector, as Store.get reads a memory
                cols = cols + [c for c in ds.schema.names if c not in cols and c != "vector"]
            # A time an older memdeck stored out of range is shown as unreadable, never a failed page.
            taken = readable_rows(ds._take_rows(sel_rows[mask].tolist(), columns=cols))
            for pos, row in zip(mask, taken, strict=True):
                out[int(pos)] = row_to_memory(row)
        return [m for m in out if m is not None]


def page_with_total(
    store: Engine,
    scope: Scope,
    query: BrowseQuery,
    offset: int = 0,
    limit: int = 50,
    *,
    with_meta: bool = False,
) -> tuple[list[Memory], int]:
    """A page of memories and how many the query matches in all (one ordering serves both)."""

    def read() -> tuple[list[Memory], int]:
        browser = Browser(store, scope)
        page = browser.page(query, offset, limit, with_meta=with_meta)
        return page, browser.count(query)

    return store.read_retry(read)


def principals(engine: Engine) -> list[str]:
    """Every principal with memories, sorted."""
    seen: set[str] = set()
    for tier in engine.tiers_present():
        seen.update(pc.unique(engine.scan(tier, ["principal"])["principal"]).to_pylist())
    return sorted(seen)


def agents(engine: Engine, scope: Scope = Scope.everyone()) -> list[str]:
    """Every agent that wrote a memory within ``scope``, sorted."""
    seen: set[str] = set()
    for tier in engine.tiers_present():
        tbl = engine.scan(tier, ["agent"], scope.where())
        seen.update(v for v in pc.unique(tbl["agent"]).to_pylist() if v)
    return sorted(seen)
