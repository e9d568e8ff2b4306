"""Keeping a store healthy: TTL eviction (each eviction a forget with reason ``ttl`` and a receipt) and the
maintenance run (recovery of interrupted purges, eviction, compaction, index upkeep)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import pyarrow.compute as pc

from memdeck.core import filters as F
from memdeck.core.config import expiry_rules
from memdeck.core.forget import forget, recover_pending
from memdeck.core.records import HISTORY, STORED_TIERS, parse_time
from memdeck.core.records import now as utc_now
from memdeck.core.storage.expiry import expired_where, live_where
from memdeck.core.storage.tables import compact_table, dataset, rows_per_fragment, table_names

if TYPE_CHECKING:
    from memdeck.core.receipts.types import Receipt
    from memdeck.core.storage.engine import Engine

log = logging.getLogger("memdeck.maintenance")


# --- TTL eviction -------------------------------------------------------------------------------------


def ttl_days(store: Engine) -> dict[str, float]:
    """Days a memory of each tier lives; 0 (or absent) means forever."""
    return {tier: float(getattr(store.settings.ttl_days, tier)) for tier in STORED_TIERS}


def expired(store: Engine, at: datetime | None = None) -> dict[str, list[str]]:
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


def next_expiry(store: Engine, at: datetime | None = None) -> datetime | None:
    """The earliest moment a memory live at ``at`` can expire (its own ``expires_at``, or its TTL anchor
    plus the tier's TTL), or None when none can. Only a write can bring it sooner (a new memory, a new
    expiry, an unpin): a recall only moves a ``last_used`` anchor later."""
    at = parse_time(at) or utc_now()
    rules = expiry_rules(store.settings)
    earliest: datetime | None = None

    def consider(value: Any) -> None:
        nonlocal earliest
        if value is not None and (earliest is None or value < earliest):
            earliest = value

    for tier in STORED_TIERS:
        if not store.has_table(tier):
            continue
        days, start = rules[tier]
        live = F.all_of(live_where(store, tier, at), F.ne("state", "forgotten-pending"))
        if days <= 0:
            tbl = store.scan(tier, ["expires_at"], F.all_of(live, "expires_at IS NOT NULL"))
            consider(pc.min(tbl["expires_at"]).as_py())
            continue
        tbl = store.scan(tier, ["expires_at", "created_at", "last_accessed", "pinned"], live)
        consider(pc.min(tbl["expires_at"]).as_py())
        unpinned = tbl.filter(pc.invert(tbl["pinned"].fill_null(False)))
        anchor = unpinned["created_at"]
        if start == "last_used":
            anchor = pc.coalesce(unpinned["last_accessed"], unpinned["created_at"])
        first = pc.min(anchor).as_py()
        consider(None if first is None else first + timedelta(days=days))
    return earliest


def table_versions(store: Engine) -> dict[str, int]:
    """The latest committed version of every memory table (read fresh: other processes' commits count). The
    graph's tables are left out: an entity indexed in the background changes no expiry and no size."""
    return {name: int(dataset(store, name).version) for name in table_names(store) if name in STORED_TIERS}


def upkeep_due(store: Engine, name: str) -> dict[str, Any]:
    """What index upkeep would change in a table: small fragments or fragments with deleted rows piling
    up (``[store] compact_fragment_threshold``), or as many fragments outside an index. Compacting and
    re-indexing moves the table to a new version (cooling every reader's caches), so below these it waits:
    unindexed rows are still found, by a scan of their fragments."""
    threshold = store.settings.store.compact_fragment_threshold
    ds = dataset(store, name)
    fragments = ds.get_fragments()
    half = rows_per_fragment(store) // 2
    small = sum(1 for f in fragments if f.metadata.physical_rows < half)
    deleted = sum(1 for f in fragments if f.metadata.deletion_file is not None)
    ids = {f.fragment_id for f in fragments}
    unindexed = max((len(ids - set(idx.get("fragment_ids") or ())) for idx in ds.list_indices()), default=0)
    return {
        "small_fragments": small,
        "fragments_with_deletions": deleted,
        "unindexed_fragments": unindexed,
        "due": small >= threshold or deleted >= threshold or unindexed >= threshold,
    }


EVICT_RESCANS = 5  # times a purge is planned again when another process forgot some of its memories first


def forget_due(
    store: Engine, due: Callable[[], dict[str, list[str]]], reason: str, trigger: str
) -> list[Receipt]:
    """Forget what ``due`` finds, one purge and one receipt per principal. Another process may be doing the
    same (the MCP server's scheduler beside ``maintain --watch`` or a one-shot ``maintain``): a memory it
    purged between the scan and the purge is gone, as wanted, not an error; what is still due is found again
    and forgotten."""
    from memdeck.core.errors import NotFound

    receipts = []
    for principal, ids in sorted(due().items()):
        for attempt in range(EVICT_RESCANS + 1):
            try:
                receipts.append(forget(store, ids, reason, trigger=trigger))
                log.info("forgot %d memories of %s (%s)", len(ids), principal, reason)
                break
            except NotFound:
                if attempt == EVICT_RESCANS:
                    raise
                ids = due().get(principal, [])
                if not ids:
                    break
    return receipts


def evict_expired(store: Engine, now: datetime | None = None) -> list[Receipt]:
    """Forget every memory past its tier's TTL: one purge and one receipt (reason ``ttl``) per principal."""
    return forget_due(store, lambda: expired(store, now), "ttl", "ttl")


# --- maintenance --------------------------------------------------------------------------------------


def maintain(
    store: Engine,
    *,
    evict: bool = True,
    now: datetime | None = None,
    progress: Callable[[str], None] | None = None,
    only_when_due: bool = False,
) -> dict[str, Any]:
    """What `memdeck maintain` and the scheduler do: finish interrupted purges, evict expired memories,
    compact every table to bounded fragments and keep its indices up to date. With ``only_when_due`` (the
    scheduler) a table is left alone until :func:`upkeep_due` says fragments have piled up.
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
            if only_when_due:
                entry["due"] = upkeep_due(store, name)
                if not entry["due"]["due"]:
                    report["tables"][name] = entry
                    continue
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


def _receipt_summary(receipt: Receipt) -> dict[str, Any]:
    return {
        "receipt_id": receipt.get("receipt_id"),
        "principal": receipt.get("principal"),
        "reason": receipt.get("reason"),
        "deleted": len(receipt.get("deleted") or []),
        "cascade": len(receipt.get("cascade") or []),
        "outcome": receipt.get("outcome"),
    }
