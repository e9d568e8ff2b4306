"""The review queue: what a person should look at, and the one-key actions on it.

:func:`review_queue` lists, for a scope, in this order:

- ``contradiction``: two active facts flagged by consolidation as contradicting (left and right);
- ``near_duplicate``: two active facts with cosine >= the merge threshold that consolidation did not
  merge (a blocker held, or it has not run since);
- ``ttl_due``: memories past, or within :data:`TTL_WARNING_DAYS` of, their tier's TTL;
- ``stale``: memories never recalled and not reinforced for two recency half-lives of their tier;
- ``low_trust``: memories written by an agent whose trust (feedback) is below :data:`LOW_TRUST`.

Actions (:func:`keep`, :func:`merge`, :func:`dismiss`) are reversible: keeping one side deprecates the
other with ``superseded_by`` (undone by :func:`undo`, which undeprecates), a merge deprecates the newer into
the older the way consolidation does, and a dismissal is remembered in ``review-dismissed.json`` in the
store directory (undone by removing it) so the item does not come back.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import numpy as np

from memdeck.core import filters as F
from memdeck.core.config import DEFAULT_HALF_LIFE_DAYS, expiry_rules
from memdeck.core.consolidate import NEAR_DUPLICATE, _meta, _rows, contradictions
from memdeck.core.errors import MemdeckError, NotFound
from memdeck.core.files import write_atomic_text
from memdeck.core.filters import Scope
from memdeck.core.records import STORED_TIERS, now, parse_time

if TYPE_CHECKING:
    from memdeck.core.store import Store

TTL_WARNING_DAYS = 7.0
LOW_TRUST = 0.35
MAX_ITEMS_PER_KIND = 200
DISMISSED_FILE = "review-dismissed.json"
KINDS = ("contradiction", "near_duplicate", "ttl_due", "stale", "low_trust")


@dataclass
class ReviewItem:
    """One thing to review. Pairs have ``left`` and ``right``; single memories only ``left``."""

    kind: str
    key: str
    principal: str
    reason: str
    left: dict[str, Any]
    right: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _card(row: dict[str, Any]) -> dict[str, Any]:
    created = row.get("created_at")
    return {
        "id": row["id"], "text": row.get("text") or "", "agent": row.get("agent"),
        "created_at": created.isoformat() if isinstance(created, datetime) else created,
    }


def _pair_key(kind: str, a: str, b: str) -> str:
    return f"{kind}:{':'.join(sorted((a, b)))}"


def dismissed(store: Store) -> set[str]:
    path = store.root / DISMISSED_FILE
    if not path.exists():
        return set()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set()
    return {str(k) for k in data} if isinstance(data, list) else set()


def _save_dismissed(store: Store, keys: set[str]) -> None:
    write_atomic_text(store.root / DISMISSED_FILE, json.dumps(sorted(keys), indent=0) + "\n", 0o600)


def _due(row: dict[str, Any], created: datetime, days: float, start: str) -> datetime | None:
    """When a row stops being recalled: its tier's TTL from creation or last use (never for a pinned
    memory), or its own ``expires_at``, whichever comes first."""
    due = None
    if days > 0 and not row.get("pinned"):
        base = (parse_time(row.get("last_accessed")) or created) if start == "last_used" else created
        due = base + timedelta(days=days)
    own = parse_time(row.get("expires_at"))
    return own if own is not None and (due is None or own < due) else due


def review_queue(store: Store, scope: Scope, kinds: tuple[str, ...] = KINDS) -> list[ReviewItem]:
    """Everything in ``scope`` worth a person's look (see the module docstring), dismissed items left out."""
    for kind in kinds:
        if kind not in KINDS:
            raise MemdeckError(f"unknown review kind {kind!r}; known: {', '.join(KINDS)}")
    skip = dismissed(store)
    items: list[ReviewItem] = []
    active = F.all_of(scope.where(), F.eq("state", "active"))
    cols = ["id", "principal", "text", "agent", "created_at", "meta", "access_count", "last_accessed",
            "last_reinforced_at", "pinned", "expires_at"]
    facts = _rows(store, "semantic", active, [*cols, "vector"])
    by_id = {f["id"]: f for f in facts}
    if "contradiction" in kinds:
        for c in contradictions(store, scope):
            key = _pair_key("contradiction", c.a_id, c.b_id)
            if key in skip or c.a_id not in by_id or c.b_id not in by_id:
                continue
            items.append(ReviewItem("contradiction", key, c.principal,
                                    f"{c.a_value or 'one value'} vs {c.b_value or 'another'}",
                                    _card(by_id[c.a_id]), _card(by_id[c.b_id])))
    if "near_duplicate" in kinds or "contradiction" in kinds:
        items += _near_duplicates(facts, skip, kinds, {i.key for i in items})
    stamp = now()
    rules = expiry_rules(store.config)  # the same rules the store's reads and maintenance apply
    trust = store.agent_trust() if "low_trust" in kinds else {}
    for tier in STORED_TIERS:
        rows = facts if tier == "semantic" else _rows(store, tier, active, cols)
        days, start = rules[tier]
        half = DEFAULT_HALF_LIFE_DAYS[tier]
        counts = dict.fromkeys(KINDS, 0)
        for row in sorted(rows, key=lambda r: (r.get("created_at") or stamp, r["id"])):
            created = parse_time(row.get("created_at")) or stamp
            single: list[tuple[str, str]] = []
            due = _due(row, created, days, start)
            if "ttl_due" in kinds and due is not None and (due - stamp).total_seconds() < TTL_WARNING_DAYS * 86400:
                why = f"TTL {days:g} days from {start.replace('_', ' ')}" if days > 0 else "its own expiry"
                single.append(("ttl_due", f"{why}: {'expired' if due <= stamp else 'expires'} {due.date()}"))
            last = parse_time(row.get("last_accessed")) or parse_time(row.get("last_reinforced_at")) or created
            if "stale" in kinds and not row.get("access_count") and (stamp - last).days >= 2 * half:
                single.append(("stale", f"never recalled, untouched for {(stamp - last).days} days"))
            agent_trust = trust.get(row.get("agent") or "")
            if "low_trust" in kinds and agent_trust is not None and agent_trust < LOW_TRUST:
                single.append(("low_trust", f"written by {row.get('agent')} (trust {agent_trust:.2f})"))
            for kind, reason in single:
                key = f"{kind}:{row['id']}"
                if key in skip or counts[kind] >= MAX_ITEMS_PER_KIND:
                    continue
                counts[kind] += 1
                items.append(ReviewItem(kind, key, row["principal"], reason, {**_card(row), "tier": tier}))
    order = {k: i for i, k in enumerate(KINDS)}
    return sorted(items, key=lambda i: (order[i.kind], i.principal, i.key))


def _near_duplicates(
    facts: list[dict[str, Any]], skip: set[str], kinds: tuple[str, ...], listed: set[str]
) -> list[ReviewItem]:
    """Pairs of facts close enough to merge. A pair the merge check calls a contradiction is listed as one
    (a store need not have run consolidation for it to show); a pair of values that can coexist is two
    distinct facts and is left out."""
    from memdeck.core.consolidate import merge_blocker

    usable = [f for f in facts if f.get("vector") is not None and not _meta(f).get("unembedded")]
    out: list[ReviewItem] = []
    if len(usable) < 2:
        return out
    vectors = np.asarray([f["vector"] for f in usable], dtype=np.float32)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    sims = vectors @ vectors.T
    rows, cols = np.nonzero(np.triu(sims, 1) >= NEAR_DUPLICATE)
    for i, j in zip(rows.tolist(), cols.tolist(), strict=True):
        a, b = usable[i], usable[j]
        if a["principal"] != b["principal"]:
            continue
        blocker = merge_blocker(a["text"] or "", b["text"] or "")
        if blocker and "can coexist" in blocker:
            continue
        kind = "contradiction" if blocker and blocker.startswith("contradiction") else "near_duplicate"
        key = _pair_key(kind, a["id"], b["id"])
        if kind not in kinds or key in skip or key in listed:
            continue
        reason = f"cosine {float(sims[i, j]):.3f}" + (f"; not merged: {blocker}" if blocker else "")
        out.append(ReviewItem(kind, key, a["principal"], reason, _card(a), _card(b),
                              {"similarity": round(float(sims[i, j]), 4), "blocker": blocker}))
        if len(out) >= MAX_ITEMS_PER_KIND:
            break
    return out


def keep(store: Store, item: ReviewItem, side: str, scope: Scope) -> dict[str, Any]:
    """Keep ``side`` ("left" or "right") of a pair; the other is deprecated with superseded_by the kept one."""
    if item.right is None:
        raise MemdeckError(f"a {item.kind} item has one memory: nothing to keep it over")
    if side not in ("left", "right"):
        raise MemdeckError(f"side must be left or right, got {side!r}")
    kept, other = (item.left, item.right) if side == "left" else (item.right, item.left)
    store.deprecate(other["id"], f"review: {item.kind}, kept {kept['id']}", superseded_by=kept["id"], scope=scope)
    return {"action": "keep", "kept": kept["id"], "deprecated": other["id"]}


def merge(store: Store, item: ReviewItem, scope: Scope) -> dict[str, Any]:
    """Merge a pair into its older memory: the newer is deprecated with superseded_by the older."""
    if item.right is None:
        raise MemdeckError(f"a {item.kind} item has one memory: nothing to merge it with")
    left, right = item.left, item.right
    older, newer = (left, right) if (left.get("created_at") or "", left["id"]) <= (right.get("created_at") or "", right["id"]) else (right, left)
    store.deprecate(newer["id"], f"review: merged into {older['id']}", superseded_by=older["id"], scope=scope)
    return {"action": "merge", "kept": older["id"], "deprecated": newer["id"]}


def dismiss(store: Store, item: ReviewItem) -> dict[str, Any]:
    """Remember that this item was looked at; it is left out of the queue from now on."""
    keys = dismissed(store)
    keys.add(item.key)
    _save_dismissed(store, keys)
    return {"action": "dismiss", "key": item.key}


def decide(store: Store, key: str, action: str, scope: Scope) -> dict[str, Any]:
    """Find the queued item with ``key`` in ``scope`` and act on it: ``keep-left``, ``keep-right``, ``merge``
    or ``dismiss`` (the decisions the Review screen makes). Returns what was done, with the item's key and
    kind; a key that is not in the queue (decided already, dismissed, or never listed) raises NotFound."""
    if action not in ("keep-left", "keep-right", "merge", "dismiss"):
        raise MemdeckError(f"unknown review action {action!r}; use keep-left, keep-right, merge or dismiss")
    kind = key.split(":", 1)[0]
    if kind not in KINDS or ":" not in key:
        raise MemdeckError(f"{key!r} is not a review item key; `memdeck review --json` lists them (e.g. stale:epi_...)")
    item = next((i for i in review_queue(store, scope, (kind,)) if i.key == key), None)
    if item is None:
        raise NotFound(f"no review item {key!r} in the queue (decided, dismissed or gone); `memdeck review` lists it")
    if action == "merge":
        done = merge(store, item, scope)
    elif action == "dismiss":
        done = dismiss(store, item)
    else:
        done = keep(store, item, action.removeprefix("keep-"), scope)
    return {**done, "key": item.key, "kind": item.kind}


def undo(store: Store, done: dict[str, Any], scope: Scope) -> None:
    """Reverse one action's result (from keep, merge or dismiss)."""
    if done.get("action") in ("keep", "merge"):
        store.undeprecate(done["deprecated"], scope)
    elif done.get("action") == "dismiss":
        keys = dismissed(store)
        keys.discard(done["key"])
        _save_dismissed(store, keys)
    else:
        raise MemdeckError(f"nothing to undo in {done!r}")


__all__ = ["KINDS", "ReviewItem", "decide", "dismiss", "dismissed", "keep", "merge", "review_queue", "undo"]
