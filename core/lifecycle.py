"""The memory lifecycle below the API: bounded fragments, compaction, TTL eviction, maintenance.

Fragments are kept at most ``store.max_rows_per_fragment`` rows (config ``store.max_rows_per_fragment``,
8,192 by default) so that a purge, which must rewrite every fragment holding a forgotten row, rewrites a
bounded amount of data however large the table grows. LanceDB's own ``add`` and ``optimize`` write and merge
up to a million rows per fragment, so large appends and routine compaction go through pylance here.

Pin/unpin, edit (with history), deprecate with a reason and ``superseded_by`` live on :class:`Store`;
this module adds what runs in the background: :func:`evict_expired` (TTL per tier, each eviction a forget
with reason ``ttl`` and a receipt) and :func:`maintain` (eviction, compaction, index upkeep, recovery of
interrupted purges).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pyarrow as pa

from .records import STORED_TIERS, parse_time
from .records import now as utc_now

log = logging.getLogger("memdeck.lifecycle")

DEFAULT_ROWS_PER_FRAGMENT = 8192
HISTORY = "history"


# --- table layout -------------------------------------------------------------------------------------


def rows_per_fragment(store: Any) -> int:
    value = store.config.get("store", {}).get("max_rows_per_fragment", DEFAULT_ROWS_PER_FRAGMENT)
    try:
        return max(256, int(value))
    except (TypeError, ValueError):
        return DEFAULT_ROWS_PER_FRAGMENT


def table_uri(store: Any, name: str) -> str:
    return f"{str(store._uri).rstrip('/')}/{name}.lance"


def dataset(store: Any, name: str) -> Any:
    """A fresh pylance handle on the latest version (a stale handle commits against an old one)."""
    import lance

    return lance.dataset(table_uri(store, name), storage_options=store._storage_options)


def append_rows(store: Any, tbl: Any, data: pa.Table) -> None:
    """Append in one commit, split into fragments of at most ``rows_per_fragment`` rows."""
    limit = rows_per_fragment(store)

    def append() -> None:
        if data.num_rows <= limit:
            tbl.add(data)
            return
        import lance

        lance.write_dataset(
            data, tbl.to_lance(), mode="append", max_rows_per_file=limit,
            storage_options=store._storage_options,
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


def small_fragment_count(store: Any, tier: str) -> int:
    """Fragments under half the target size: what compaction can still merge."""
    half = rows_per_fragment(store) // 2
    return sum(1 for f in store.table(tier).to_lance().get_fragments() if f.metadata.physical_rows < half)


def compact_table(store: Any, name: str, *, cleanup_older_than: timedelta = timedelta(hours=1)) -> dict[str, Any]:
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


# --- TTL eviction -------------------------------------------------------------------------------------


def ttl_days(store: Any) -> dict[str, float]:
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


def expired(store: Any, at: datetime | None = None) -> dict[str, list[str]]:
    """Ids past their tier's TTL, per principal. Pinned memories never expire."""
    from . import filters as F

    at = parse_time(at) or utc_now()
    found: dict[str, list[str]] = {}
    for tier, days in ttl_days(store).items():
        if days <= 0 or not store.has_table(tier):
            continue
        cutoff = at - timedelta(days=days)
        where = F.all_of(F.le("created_at", cutoff), F.ne("state", "forgotten-pending"))
        tbl = store.read_retry(
            lambda tier=tier, where=where: store.table(tier).to_lance().to_table(
                columns=["id", "principal", "pinned"], filter=where
            )
        )
        for mem_id, principal, pinned in zip(
            tbl["id"].to_pylist(), tbl["principal"].to_pylist(), tbl["pinned"].to_pylist(), strict=True
        ):
            if not pinned:
                found.setdefault(principal, []).append(mem_id)
    return found


def evict_expired(store: Any, now: datetime | None = None) -> list[dict[str, Any]]:
    """Forget every memory past its tier's TTL: one purge and one receipt (reason ``ttl``) per principal."""
    from .forget import forget

    receipts = []
    for principal, ids in sorted(expired(store, now).items()):
        receipts.append(forget(store, ids, "ttl", trigger="ttl"))
        log.info("evicted %d expired memories of %s", len(ids), principal)
    return receipts


# --- maintenance --------------------------------------------------------------------------------------


def maintain(
    store: Any, *, evict: bool = True, now: datetime | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """What `memdeck maintain` and the app's background do: finish interrupted purges, evict expired
    memories, compact every table to bounded fragments and keep its indices up to date.
    """
    from .forget import recover_pending

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
