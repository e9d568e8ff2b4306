"""Keeping a store healthy: TTL eviction (each eviction a forget with reason ``ttl`` and a receipt) and the
maintenance run (recovery of interrupted purges, eviction, compaction, index upkeep)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from memdeck.core import filters as F
from memdeck.core.forget import forget, recover_pending
from memdeck.core.records import HISTORY, STORED_TIERS, parse_time
from memdeck.core.records import now as utc_now
from memdeck.core.storage.expiry import expired_where
from memdeck.core.storage.tables import compact_table

if TYPE_CHECKING:
    from memdeck.core.store import Store

log = logging.getLogger("memdeck.maintenance")


# --- TTL eviction -------------------------------------------------------------------------------------


def ttl_days(store: Store) -> dict[str, float]:
    """Days a memory of each tier lives; 0 (or absent) means forever."""
    raw = store.config.get("ttl_days", {}) or {}
    out: dict[str, float] = {}
    for tier in STORED_TIERS:
        try:
            out[tier] = max(0.0, float(raw.get(tier, 0) or 0))
        except (TypeError, ValueError):
            log.warning("ttl_days.%s is not a number (%r); treating it as no TTL", tier, raw.get(tier))
            out[tier] = 0.0
    return out


def expired(store: Store, at: datetime | None = None) -> dict[str, list[str]]:
    """Ids past their own ``expires_at`` or their tier's TTL (from the write or the last use, per
    ``ttl_from``), per principal: exactly what every read already hides. Pinned memories never expire by TTL."""
    at = parse_time(at) or utc_now()
    found: dict[str, list[str]] = {}
    for tier in STORED_TIERS:
        if not store.has_table(tier):
            continue
        where = F.all_of(expired_where(store, tier, at), F.ne("state", "forgotten-pending"))
        tbl = store.scan(tier, ["id", "principal"], where)
        for mem_id, principal in zip(tbl["id"].to_pylist(), tbl["principal"].to_pylist(), strict=True):
            found.setdefault(principal, []).append(mem_id)
    return found


def evict_expired(store: Store, now: datetime | None = None) -> list[dict[str, Any]]:
    """Forget every memory past its tier's TTL: one purge and one receipt (reason ``ttl``) per principal."""
    receipts = []
    for principal, ids in sorted(expired(store, now).items()):
        receipts.append(forget(store, ids, "ttl", trigger="ttl"))
        log.info("evicted %d expired memories of %s", len(ids), principal)
    return receipts


# --- maintenance --------------------------------------------------------------------------------------


def maintain(
    store: Store, *, evict: bool = True, now: datetime | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """What `memdeck maintain` and the app's background do: finish interrupted purges, evict expired
    memories, compact every table to bounded fragments and keep its indices up to date.
    """
    say = progress or (lambda _msg: None)
    started = time.perf_counter()
    report: dict[str, Any] = {"recovered": [], "evicted": [], "tables": {}, "errors": []}
    say("finishing interrupted purges")
    report["recovered"] = [_receipt_summary(r) for r in recover_pending(store)]
    if evict:
        say("evicting expired memories")
        report["evicted"] = [_receipt_summary(r) for r in evict_expired(store, now)]
    names = [*store.tiers_present(), *([HISTORY] if store.has_table(HISTORY) else [])]
    for name in names:
        say(f"compacting {name}")
        entry: dict[str, Any] = {}
        try:
            with store.lock.shared():
                entry["compaction"] = compact_table(store, name)
            if name != HISTORY:
                entry["indexes"] = store.ensure_indexes(name)
            entry["rows"] = int(store.table(name).count_rows())
            entry["fragments"] = len(store.table(name).to_lance().get_fragments())
        except Exception as exc:  # noqa: BLE001 - one table failing must not stop the others
            log.warning("maintenance of %s failed: %s", name, exc)
            report["errors"].append(f"{name}: {type(exc).__name__}: {exc}")
        report["tables"][name] = entry
    report["seconds"] = round(time.perf_counter() - started, 3)
    return report


def _receipt_summary(receipt: dict[str, Any]) -> dict[str, Any]:
    return {
        "receipt_id": receipt.get("receipt_id"),
        "principal": receipt.get("principal"),
        "reason": receipt.get("reason"),
        "deleted": len(receipt.get("deleted") or []),
        "cascade": len(receipt.get("cascade") or []),
        "outcome": receipt.get("outcome"),
    }
