"""Per-tier size limits (``[limits] episodic = 50000``, memories per principal and tier; off by default).
Past a limit the least valuable memories, lowest importance x recency and never pinned, are forgotten with
a receipt (reason ``size limit``)."""

from __future__ import annotations

import logging
from datetime import datetime
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from memdeck.core import filters as F
from memdeck.core.config import DEFAULT_HALF_LIFE_DAYS
from memdeck.core.forget import forget
from memdeck.core.records import STORED_TIERS, now
from memdeck.core.storage.expiry import live_where

if TYPE_CHECKING:
    from memdeck.core.receipts.types import Receipt
    from memdeck.core.storage.engine import Engine

log = logging.getLogger("memdeck.maintenance")


def tier_limits(store: Engine) -> dict[str, int]:
    """Per tier with a limit (``[limits]``; 0 is none): the memories a principal may hold."""
    limits = store.settings.limits
    return {tier: getattr(limits, tier) for tier in STORED_TIERS if getattr(limits, tier)}


def over_limit(store: Engine, at: datetime | None = None) -> dict[str, list[str]]:
    """Ids to evict per principal so that no principal holds more than its tier's limit."""
    at = at or now()
    found: dict[str, list[str]] = {}
    for tier, limit in tier_limits(store).items():
        if not store.has_table(tier):
            continue
        where = F.all_of(F.ne("state", "forgotten-pending"), live_where(store, tier, at))
        tbl = store.scan(
            tier, ["id", "principal", "importance", "pinned", "created_at", "last_accessed"], where
        )
        if tbl.num_rows == 0:
            continue
        half_life = DEFAULT_HALF_LIFE_DAYS[tier]
        for principal in pc.unique(tbl["principal"]).to_pylist():
            rows = tbl.filter(pc.equal(tbl["principal"], principal))
            excess = rows.num_rows - limit
            if excess <= 0:
                continue
            value = _value(rows, at, half_life)
            pinned = rows["pinned"].fill_null(False).to_numpy(zero_copy_only=False)
            order = [i for i in np.lexsort((np.arange(rows.num_rows), value)) if not pinned[i]]
            ids = rows["id"].to_pylist()
            found.setdefault(principal, []).extend(ids[i] for i in order[:excess])
    return found


def _value(rows: pa.Table, at: datetime, half_life: float) -> np.ndarray:
    """importance x recency, recency halving every ``half_life`` days since the last use (else the write)."""
    created = pc.cast(rows["created_at"], pa.int64()).to_numpy(zero_copy_only=False).astype(np.float64)
    used = (
        pc.cast(rows["last_accessed"], pa.int64())
        .fill_null(-1)
        .to_numpy(zero_copy_only=False)
        .astype(np.float64)
    )
    anchor = np.where(used >= 0, used, created)
    age_days = np.maximum(0.0, (at.timestamp() * 1e6 - anchor) / 86_400e6)
    importance = rows["importance"].fill_null(0.5).to_numpy(zero_copy_only=False).astype(np.float64)
    return importance * np.power(0.5, age_days / half_life)


def evict_over_limit(store: Engine, at: datetime | None = None) -> list[Receipt]:
    receipts = []
    for principal, ids in sorted(over_limit(store, at).items()):
        receipts.append(forget(store, ids, "size limit", trigger="limit"))
        log.info("evicted %d memories of %s past the size limit", len(ids), principal)
    return receipts
