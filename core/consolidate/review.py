"""The review queue: what a person should look at, and the one-key actions on it.

:func:`review_queue` lists, for a scope, in this order:

- ``contradiction``: two active facts that cannot both hold (left and right);
- ``near_duplicate``: two active facts with cosine >= the merge threshold that consolidation did not
  merge (a blocker held, or it has not run since);
- ``ttl_due``: memories past, or within :data:`TTL_WARNING_DAYS` of, their tier's TTL;
- ``stale``: memories never recalled and not reinforced for two recency half-lives of their tier;
- ``low_trust``: memories written by an agent whose trust (feedback) is below :data:`LOW_TRUST`;
- ``failing_procedure``: procedures that failed at least :data:`FAILING_MIN` times when followed, and more
  often than they worked (feedback on the procedure's id: ``memdeck feedback ID --wrong``, MCP ``feedback``);
- ``routine``: the same actions in the same order in two or more closed sessions, not yet held by a
  procedure (:mod:`memdeck.core.consolidate.routines`); keeping it stores it as a procedure.

The two kinds of pair are :func:`memdeck.core.consolidate.open_pairs`, the same pairs ``memdeck
contradictions`` and the analytics count, all of them. Each kind of single memory lists at most
:data:`MAX_ITEMS_PER_KIND` per tier; :func:`build_queue` says how many there are in all.

Actions (:func:`keep`, :func:`merge`, :func:`dismiss`) are reversible: keeping one side deprecates the
other with ``superseded_by`` (undone by :func:`undo`, which undeprecates), a merge deprecates the newer into
the older the way consolidation does, and a dismissal is remembered in ``review-dismissed.json`` in the
store directory (undone by removing it) so the item does not come back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal, NotRequired, TypedDict, cast

from memdeck.core import filters as F
from memdeck.core.config import DEFAULT_HALF_LIFE_DAYS, expiry_rules
from memdeck.core.consolidate import NearDuplicate, _rows, open_pairs
from memdeck.core.consolidate.decisions import DISMISSED_FILE, dismissed, save_dismissed
from memdeck.core.errors import MemdeckError, NotFound
from memdeck.core.filters import Scope
from memdeck.core.recall import feedback
from memdeck.core.records import STORED_TIERS, now, parse_time
from memdeck.core.storage import lifecycle

if TYPE_CHECKING:
    from memdeck.core.storage.engine import Engine

TTL_WARNING_DAYS = 7.0
LOW_TRUST = 0.35
MAX_ITEMS_PER_KIND = 200  # single memories of one kind listed per tier; pairs are all listed
KINDS = ("contradiction", "near_duplicate", "ttl_due", "stale", "low_trust", "failing_procedure", "routine")
FAILING_MIN = 2  # failures before a procedure is worth a look
PAIR_KINDS = ("contradiction", "near_duplicate")
COUNTED_AS = {  # how a count of each kind reads: "12 contradictions", "3 due for TTL"
    "contradiction": "contradictions",
    "near_duplicate": "near-duplicates",
    "ttl_due": "due for TTL",
    "stale": "stale",
    "low_trust": "from low-trust agents",
    "failing_procedure": "failing procedures",
    "routine": "routines seen in several sessions",
}
_COLUMNS = [
    "id",
    "principal",
    "text",
    "agent",
    "created_at",
    "meta",
    "access_count",
    "last_accessed",
    "last_reinforced_at",
    "pinned",
    "expires_at",
]


class MemoryCard(TypedDict):
    """A memory as a review item shows it (a single memory's card also names its tier)."""

    id: str
    text: str
    agent: str | None
    created_at: str | None
    tier: NotRequired[str]


class ReviewItemJSON(TypedDict):
    """A review item as ``memdeck review --json`` and the MCP server give it."""

    kind: str
    key: str
    principal: str
    reason: str
    left: MemoryCard
    right: MemoryCard | None
    extra: dict[str, Any]


class ReviewDecision(TypedDict):
    """What a decision did: the kept and deprecated ids of a keep or merge (a kept routine: the procedure it
    became, as kept and created), the key of a dismiss; from :func:`decide` also the item's key and kind."""

    action: Literal["keep", "merge", "dismiss"]
    kept: NotRequired[str]
    deprecated: NotRequired[str]
    key: NotRequired[str]
    kind: NotRequired[str]
    created: NotRequired[str]  # the procedure a kept routine became


@dataclass
class ReviewItem:
    """One thing to review. Pairs have ``left`` and ``right``; single memories only ``left``."""

    kind: str
    key: str
    principal: str
    reason: str
    left: MemoryCard
    right: MemoryCard | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> ReviewItemJSON:
        return cast(ReviewItemJSON, asdict(self))  # the fields, as declared above


@dataclass
class ReviewQueue:
    """The listed items and, per kind, how many there are in all (more than listed for single memories
    past :data:`MAX_ITEMS_PER_KIND`)."""

    items: list[ReviewItem]
    totals: dict[str, int]
    flagged_only: list[str] = field(default_factory=list)  # principals whose pairs are consolidation's flags

    def listed(self, kind: str) -> int:
        return sum(1 for i in self.items if i.kind == kind)

    def counts_line(self) -> str:
        """Every kind with how many there are, and how many are listed when fewer ("12 contradictions,
        200 of 812 stale listed"); empty when there is nothing to review."""
        parts = []
        for kind, n in self.totals.items():
            if not n:
                continue
            listed = self.listed(kind)
            label = COUNTED_AS[kind] if n != 1 else COUNTED_AS[kind].removesuffix("s")
            parts.append(f"{n} {label}" + ("" if listed == n else f" ({listed} listed)"))
        if parts and self.flagged_only:
            parts.append(f"pairs of {', '.join(self.flagged_only)} as the last consolidation flagged them")
        return ", ".join(parts)


def _card(row: dict[str, Any]) -> MemoryCard:
    created = row.get("created_at")
    return {
        "id": row["id"],
        "text": row.get("text") or "",
        "agent": row.get("agent"),
        "created_at": created.isoformat() if isinstance(created, datetime) else created,
    }


def near_duplicate_reason(n: NearDuplicate) -> str:
    """What a near-duplicate is at a glance: how close, and why consolidation did not merge it."""
    why = f"not merged: {n.blocker}" if n.blocker else "not merged yet (consolidation merges it)"
    return f"same fact twice? cosine {n.similarity:.2f}; {why}"


def _due(row: dict[str, Any], created: datetime, days: float, start: str) -> datetime | None:
    """When a row stops being recalled: its tier's TTL from creation or last use (never for a pinned
    memory), or its own ``expires_at``, whichever comes first."""
    due = None
    if days > 0 and not row.get("pinned"):
        base = (parse_time(row.get("last_accessed")) or created) if start == "last_used" else created
        due = base + timedelta(days=days)
    own = parse_time(row.get("expires_at"))
    return own if own is not None and (due is None or own < due) else due


def review_queue(store: Engine, scope: Scope, kinds: tuple[str, ...] = KINDS) -> list[ReviewItem]:
    """Everything in ``scope`` worth a person's look (see the module docstring), dismissed items left out."""
    return build_queue(store, scope, kinds).items


def build_queue(store: Engine, scope: Scope, kinds: tuple[str, ...] = KINDS) -> ReviewQueue:
    """The review queue of ``scope`` with the number of items of each kind in all."""
    for kind in kinds:
        if kind not in KINDS:
            raise MemdeckError(f"unknown review kind {kind!r}; known: {', '.join(KINDS)}")
    skip = dismissed(store)
    items: list[ReviewItem] = []
    totals = dict.fromkeys(kinds, 0)
    active = F.all_of(scope.where(), F.eq("state", "active"))
    if "routine" in kinds:
        items += _routines(store, scope, skip, totals)
    if not any(k in PAIR_KINDS for k in kinds):
        facts = _rows(store, "semantic", active, _COLUMNS)
        items += _singles(store, active, facts, kinds, skip, totals)
        return ReviewQueue(sorted(items, key=lambda i: (KINDS.index(i.kind), i.principal, i.key)), totals)
    pairs = open_pairs(store, scope, _COLUMNS)
    facts = list(pairs.facts.values())
    by_id = pairs.facts
    if "contradiction" in kinds:
        for c in pairs.contradictions:
            items.append(
                ReviewItem(
                    "contradiction",
                    c.key,
                    c.principal,
                    c.summary,
                    _card(by_id[c.a_id]),
                    _card(by_id[c.b_id]),
                    {"conflict": c.conflict, "values": [c.a_value, c.b_value], "similarity": c.similarity},
                )
            )
        totals["contradiction"] = len(pairs.contradictions)
    if "near_duplicate" in kinds:
        for n in pairs.near_duplicates:
            items.append(
                ReviewItem(
                    "near_duplicate",
                    n.key,
                    n.principal,
                    near_duplicate_reason(n),
                    _card(by_id[n.a_id]),
                    _card(by_id[n.b_id]),
                    {"similarity": n.similarity, "blocker": n.blocker},
                )
            )
        totals["near_duplicate"] = len(pairs.near_duplicates)
    if any(k not in PAIR_KINDS for k in kinds):
        items += _singles(store, active, facts, kinds, skip, totals)
    return ReviewQueue(
        sorted(items, key=lambda i: (KINDS.index(i.kind), i.principal, i.key)), totals, pairs.flagged_only
    )


def _routines(store: Engine, scope: Scope, skip: set[str], totals: dict[str, int]) -> list[ReviewItem]:
    """Routines seen in two or more closed sessions of a principal in scope and held by no procedure yet."""
    from memdeck.core.consolidate.routines import routine_candidates
    from memdeck.core.storage.browse import principals as all_principals

    principals = list(scope.principals) if scope.principals is not None else all_principals(store)
    items: list[ReviewItem] = []
    for principal in principals:
        for c in routine_candidates(store, principal):
            if c.key in skip:
                continue
            totals["routine"] += 1
            if len(items) >= MAX_ITEMS_PER_KIND:
                continue
            card: MemoryCard = {
                "id": c.key,
                "text": "\n".join(s.text for s in c.steps),
                "agent": None,
                "created_at": None,  # not a memory yet: keeping it writes one
                "tier": "procedural",
            }
            reason = f"the same {len(c.steps)} steps, in order, in {len(c.sessions)} sessions"
            items.append(ReviewItem("routine", c.key, principal, reason, card, None, c.to_json()))
    return items


def _singles(
    store: Engine,
    active: str | None,
    facts: list[dict[str, Any]],
    kinds: tuple[str, ...],
    skip: set[str],
    totals: dict[str, int],
) -> list[ReviewItem]:
    """Single memories due for TTL, stale, or from a low-trust writer; at most MAX_ITEMS_PER_KIND per tier."""
    items: list[ReviewItem] = []
    stamp = now()
    rules = expiry_rules(store.settings)  # the same rules the store's reads and maintenance apply
    trust = feedback.agent_trust(store) if "low_trust" in kinds else {}
    for tier in STORED_TIERS:
        rows = facts if tier == "semantic" else _rows(store, tier, active, _COLUMNS)
        used: dict[str, tuple[int, int]] = {}
        if tier == "procedural" and "failing_procedure" in kinds and rows:
            from memdeck.core.recall.feedback import outcomes

            used = outcomes(store, [r["id"] for r in rows])
        days, start = rules[tier]
        half = DEFAULT_HALF_LIFE_DAYS[tier]
        counts = dict.fromkeys(KINDS, 0)
        for row in sorted(rows, key=lambda r: (r.get("created_at") or stamp, r["id"])):
            created = parse_time(row.get("created_at")) or stamp
            single: list[tuple[str, str]] = []
            due = _due(row, created, days, start)
            if (
                "ttl_due" in kinds
                and due is not None
                and (due - stamp).total_seconds() < TTL_WARNING_DAYS * 86400
            ):
                why = f"TTL {days:g} days from {start.replace('_', ' ')}" if days > 0 else "its own expiry"
                single.append(("ttl_due", f"{why}: {'expired' if due <= stamp else 'expires'} {due.date()}"))
            last = (
                parse_time(row.get("last_accessed")) or parse_time(row.get("last_reinforced_at")) or created
            )
            if "stale" in kinds and not row.get("access_count") and (stamp - last).days >= 2 * half:
                single.append(("stale", f"never recalled, untouched for {(stamp - last).days} days"))
            agent_trust = trust.get(row.get("agent") or "")
            if "low_trust" in kinds and agent_trust is not None and agent_trust < LOW_TRUST:
                single.append(("low_trust", f"written by {row.get('agent')} (trust {agent_trust:.2f})"))
            worked, failed = used.get(row["id"], (0, 0))
            if failed >= FAILING_MIN and failed > worked:
                single.append(
                    ("failing_procedure", f"failed {failed} of {worked + failed} times it was followed")
                )
            for kind, reason in single:
                key = f"{kind}:{row['id']}"
                if key in skip:
                    continue
                totals[kind] += 1
                if counts[kind] >= MAX_ITEMS_PER_KIND:
                    continue
                counts[kind] += 1
                items.append(ReviewItem(kind, key, row["principal"], reason, {**_card(row), "tier": tier}))
    return items


def keep(store: Engine, item: ReviewItem, side: str, scope: Scope) -> ReviewDecision:
    """Keep ``side`` ("left" or "right") of a pair; the other is deprecated with superseded_by the kept one.
    Keeping a routine stores it as a procedure of its principal."""
    if item.kind == "routine":
        return _keep_routine(store, item, scope)
    if item.right is None:
        raise MemdeckError(f"a {item.kind} item has one memory: nothing to keep it over")
    if side not in ("left", "right"):
        raise MemdeckError(f"side must be left or right, got {side!r}")
    kept, other = (item.left, item.right) if side == "left" else (item.right, item.left)
    lifecycle.deprecate(
        store, other["id"], f"review: {item.kind}, kept {kept['id']}", superseded_by=kept["id"], scope=scope
    )
    return {"action": "keep", "kept": kept["id"], "deprecated": other["id"]}


def _keep_routine(store: Engine, item: ReviewItem, scope: Scope) -> ReviewDecision:
    from memdeck.core.consolidate.routines import accept_routine, routine_candidates

    if not scope.allows(item.principal):
        raise NotFound(f"no review item {item.key!r} in this scope")
    candidate = next((c for c in routine_candidates(store, item.principal) if c.key == item.key), None)
    if candidate is None:
        raise NotFound(f"the routine {item.key!r} is no longer in the queue")
    created = accept_routine(store, candidate)
    return {"action": "keep", "kept": created, "created": created}


def merge(store: Engine, item: ReviewItem, scope: Scope) -> ReviewDecision:
    """Merge a pair into its older memory: the newer is deprecated with superseded_by the older."""
    if item.right is None:
        raise MemdeckError(f"a {item.kind} item has one memory: nothing to merge it with")
    left, right = item.left, item.right
    older, newer = (
        (left, right)
        if (left.get("created_at") or "", left["id"]) <= (right.get("created_at") or "", right["id"])
        else (right, left)
    )
    lifecycle.deprecate(
        store, newer["id"], f"review: merged into {older['id']}", superseded_by=older["id"], scope=scope
    )
    return {"action": "merge", "kept": older["id"], "deprecated": newer["id"]}


def dismiss(store: Engine, item: ReviewItem) -> ReviewDecision:
    """Remember that this item was looked at; it is left out of the queue from now on."""
    keys = dismissed(store)
    keys.add(item.key)
    save_dismissed(store, keys)
    return {"action": "dismiss", "key": item.key}


def decide(store: Engine, key: str, action: str, scope: Scope) -> ReviewDecision:
    """Find the queued item with ``key`` in ``scope`` and act on it: ``keep-left``, ``keep-right``, ``merge``
    or ``dismiss`` (the decisions the Review screen makes). Returns what was done, with the item's key and
    kind; a key that is not in the queue (decided already, dismissed, or never listed) raises NotFound."""
    if action not in ("keep-left", "keep-right", "merge", "dismiss"):
        raise MemdeckError(f"unknown review action {action!r}; use keep-left, keep-right, merge or dismiss")
    kind = key.split(":", 1)[0]
    if kind not in KINDS or ":" not in key:
        raise MemdeckError(
            f"{key!r} is not a review item key; `memdeck review --json` lists them (e.g. stale:epi_...)"
        )
    item = next((i for i in review_queue(store, scope, (kind,)) if i.key == key), None)
    if item is None:
        raise NotFound(
            f"no review item {key!r} in the queue (decided, dismissed or gone); `memdeck review` lists it"
        )
    if action == "merge":
        done = merge(store, item, scope)
    elif action == "dismiss":
        done = dismiss(store, item)
    else:
        done = keep(store, item, action.removeprefix("keep-"), scope)
    return {**done, "key": item.key, "kind": item.kind}


def undo(store: Engine, done: Mapping[str, Any], scope: Scope) -> None:
    """Reverse one action's result (from keep, merge or dismiss)."""
    if done.get("action") == "keep" and "created" in done:
        lifecycle.deprecate(store, done["created"], "review: keeping the routine was undone", scope=scope)
    elif done.get("action") in ("keep", "merge"):
        lifecycle.undeprecate(store, done["deprecated"], scope)
    elif done.get("action") == "dismiss":
        keys = dismissed(store)
        keys.discard(done["key"])
        save_dismissed(store, keys)
    else:
        raise MemdeckError(f"nothing to undo in {done!r}")


__all__ = [
    "COUNTED_AS",
    "DISMISSED_FILE",
    "KINDS",
    "MemoryCard",
    "ReviewDecision",
    "ReviewItem",
    "ReviewItemJSON",
    "ReviewQueue",
    "build_queue",
    "decide",
    "dismiss",
    "dismissed",
    "keep",
    "merge",
    "near_duplicate_reason",
    "review_queue",
    "undo",
]
