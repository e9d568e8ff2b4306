"""What a forget would remove: the memories asked for, what depends on them only, what merely cites them."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, TypedDict

from memdeck.core import filters as F
from memdeck.core.errors import MemdeckError, NotFound
from memdeck.core.filters import Scope
from memdeck.core.graph.memory.forget import GraphCascade, plan_graph
from memdeck.core.privacy.vault import Vault
from memdeck.core.records import (
    HISTORY,
    LIST_COLUMNS,
    TIER_LIST_COLUMNS,
    Memory,
    check_principal,
    iso,
    row_to_memory,
)

if TYPE_CHECKING:
    from memdeck.core.storage.engine import Engine

log = logging.getLogger("memdeck.forget")

ID_CHUNK = 1000


# --- the plan -----------------------------------------------------------------------------------------


@dataclass
class ForgetPlan:
    """What a forget would remove and change. Built under no lock; :func:`forget` rebuilds it under one."""

    principal: str
    deleted: list[Memory]
    cascade_delete: list[tuple[Memory, str]] = field(default_factory=list)
    cascade_update: list[tuple[Memory, str]] = field(default_factory=list)
    updates: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> {"tier", "values"}
    history_versions: int = 0
    whole_principal: bool = False
    graph: GraphCascade = field(default_factory=GraphCascade)  # entities and relations that go or shrink

    @property
    def ids(self) -> list[str]:
        """Every id that will be gone: the memories asked for and the cascade."""
        return [m.id for m in self.deleted] + [m.id for m, _ in self.cascade_delete]

    def to_json(self) -> ForgetPlanJSON:
        return {
            "principal": self.principal,
            "whole_principal": self.whole_principal,
            "deleted": [_brief(m) for m in self.deleted],
            "cascade_delete": [{**_brief(m), "why": why} for m, why in self.cascade_delete],
            "cascade_update": [{**_brief(m), "why": why} for m, why in self.cascade_update],
            "history_versions": self.history_versions,
            "graph_cascade": self.graph.receipt_items(),
        }


class PlannedMemory(TypedDict):
    """A memory in a forget's preview (``memdeck forget --dry-run``): the person sees its text."""

    id: str
    tier: str
    text: str
    created_at: str | None


class PlannedCascade(PlannedMemory):
    why: str


class ForgetPlanJSON(TypedDict):
    """What a forget would remove and change, as ``memdeck forget --dry-run --json`` prints it."""

    principal: str
    whole_principal: bool
    deleted: list[PlannedMemory]
    cascade_delete: list[PlannedCascade]
    cascade_update: list[PlannedCascade]
    history_versions: int
    graph_cascade: list[dict[str, Any]]


def _brief(m: Memory) -> PlannedMemory:
    return {"id": m.id, "tier": m.tier, "text": m.text, "created_at": iso(m.created_at)}


def plan_forget(store: Engine, ids: Sequence[str], scope: Scope = Scope.everyone()) -> ForgetPlan:
    """The memories ``ids`` (all visible in ``scope``, all of one principal) and what depends on them."""
    wanted = list(dict.fromkeys(str(i).strip() for i in ids if str(i).strip()))
    if not wanted:
        raise MemdeckError("give at least one memory id to forget")
    found = _fetch(store, wanted, scope)
    missing = [i for i in wanted if i not in found]
    if missing:
        raise NotFound(
            f"no memory with id {missing[0]!r}"
            + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else "")
        )
    memories = [found[i] for i in wanted]
    principals = sorted({m.principal for m in memories})
    if len(principals) > 1:
        raise MemdeckError(
            f"these memories belong to {len(principals)} principals ({', '.join(principals)}); "
            "forget one principal's memories at a time"
        )
    plan = ForgetPlan(principal=principals[0], deleted=memories)
    _plan_cascade(store, plan)
    plan.history_versions = _count_history(store, plan.ids)
    plan.graph = plan_graph(store, plan.principal, plan.ids)
    return plan


def _fetch(store: Engine, ids: list[str], scope: Scope = Scope.everyone()) -> dict[str, Memory]:
    """The memories with these ids that the scope may see, by id, in a few queries however many ids."""
    found: dict[str, Memory] = {}
    prefixes = {i[:3] for i in ids}
    # The tier an id names first (epi_/sem_/pro_), then the others for ids made elsewhere.
    tiers = sorted(store.tiers_present(), key=lambda t: t[:3] not in prefixes)
    for tier in tiers:
        cols = LIST_COLUMNS + TIER_LIST_COLUMNS[tier]
        for chunk in chunks([i for i in ids if i not in found]):
            where = F.all_of(F.is_in("id", chunk), scope.where())
            tbl = store.scan(tier, cols, where)
            found.update((row["id"], row_to_memory(row)) for row in tbl.to_pylist())
    return found


def plan_principal(store: Engine, principal: str) -> ForgetPlan:
    """Everything stored for one principal."""
    principal = check_principal(principal)
    memories: list[Memory] = []
    for tier in store.tiers_present():
        cols = LIST_COLUMNS + TIER_LIST_COLUMNS[tier]
        tbl = store.scan(tier, cols, F.eq("principal", principal))
        memories.extend(row_to_memory(row) for row in tbl.to_pylist())
    history = 0
    if store.has_table(HISTORY):
        history = int(store.read_retry(lambda: store.table(HISTORY).count_rows(F.eq("principal", principal))))
    graph = plan_graph(store, principal, [], whole=True)
    if not memories and not history and not _has_vault(store, principal) and graph.empty:
        raise NotFound(f"no memories of principal {principal!r} in this store")
    return ForgetPlan(
        principal=principal, deleted=memories, history_versions=history, whole_principal=True, graph=graph
    )


def _has_vault(store: Engine, principal: str) -> bool:
    """Whether redacted originals of this principal are kept (they outlive their memories until shredded)."""
    try:
        return bool(Vault(store.layout.vault).exists(principal))
    except MemdeckError:
        return False


def _plan_cascade(store: Engine, plan: ForgetPlan) -> None:
    """Facts and procedures derived only from forgotten memories go too; those that merely cite one lose
    the citation (and, for facts, one count of evidence per lost source). Only the same principal's
    records are touched: a forget never changes another principal's data."""
    gone = {m.id for m in plan.deleted}
    refs: dict[str, tuple[str, list[str], int | None]] = {}  # id -> (tier, sources, evidence_count)
    for tier, column in (("semantic", "sources"), ("procedural", "learned_from")):
        if not store.has_table(tier):
            continue
        extra = ["evidence_count"] if tier == "semantic" else []
        tbl = store.scan(tier, ["id", column, *extra], F.eq("principal", plan.principal))
        counts = tbl["evidence_count"].to_pylist() if extra else [None] * tbl.num_rows
        for mem_id, sources, count in zip(
            tbl["id"].to_pylist(), tbl[column].to_pylist(), counts, strict=True
        ):
            if sources:
                refs[mem_id] = (tier, list(sources), count)
    deleted_why: dict[str, str] = {}
    changed = True
    while changed:  # a fact derived only from a cascaded fact goes as well
        changed = False
        for mem_id, (_tier, sources, _count) in refs.items():
            if mem_id in gone or not set(sources) & gone:
                continue
            if set(sources) <= gone:
                gone.add(mem_id)
                lost = sorted(set(sources))
                deleted_why[mem_id] = (
                    f"only source was {lost[0]}"
                    if len(lost) == 1
                    else f"all sources forgotten: {', '.join(lost)}"
                )
                changed = True
    updates: dict[str, dict[str, Any]] = {}
    update_why: dict[str, str] = {}
    for mem_id, (tier, sources, count) in refs.items():
        lost = [s for s in sources if s in gone]
        if mem_id in gone or not lost:
            continue
        kept = [s for s in sources if s not in gone]
        column = "sources" if tier == "semantic" else "learned_from"
        values: dict[str, Any] = {column: kept}
        why = f"lost source {', '.join(lost)}"
        if tier == "semantic":
            before = int(count or 1)
            values["evidence_count"] = max(1, before - len(lost))
            why += f"; evidence {before} -> {values['evidence_count']}"
        updates[mem_id] = {"tier": tier, "values": values}
        update_why[mem_id] = why
    # A memory superseded by a forgotten one keeps its deprecation but no longer points at it.
    for tier in store.tiers_present():
        for chunk in chunks(sorted(gone)):
            where = F.all_of(F.eq("principal", plan.principal), F.is_in("superseded_by", chunk))
            tbl = store.scan(tier, ["id"], where)
            for mem_id in tbl["id"].to_pylist():
                if mem_id in gone:
                    continue
                updates.setdefault(mem_id, {"tier": tier, "values": {}})["values"]["superseded_by"] = None
                update_why[mem_id] = "; ".join(
                    filter(None, [update_why.get(mem_id), "superseded by a forgotten memory"])
                )
    # An episode that lists a forgotten fact among its derived_facts no longer does: the fact's text would
    # otherwise stay readable in a kept row.
    cascaded = _fetch(store, list(deleted_why))
    fact_texts = {
        _folded(m.text) for m in [*plan.deleted, *cascaded.values()] if m.tier == "semantic" and m.text
    }
    if fact_texts and store.has_table("episodic"):
        tbl = store.scan("episodic", ["id", "derived_facts"], F.eq("principal", plan.principal))
        for mem_id, facts in zip(tbl["id"].to_pylist(), tbl["derived_facts"].to_pylist(), strict=True):
            if mem_id in gone or not facts:
                continue
            kept_facts = [f for f in facts if _folded(f) not in fact_texts]
            if len(kept_facts) == len(facts):
                continue
            # None for none left: LanceDB's update cannot write an empty list literal; a null reads as [].
            updates.setdefault(mem_id, {"tier": "episodic", "values": {}})["values"]["derived_facts"] = (
                kept_facts or None
            )
            update_why[mem_id] = "; ".join(
                filter(None, [update_why.get(mem_id), "a derived fact was forgotten"])
            )
    memories = {**cascaded, **_fetch(store, [i for i in update_why if i not in cascaded])}
    plan.cascade_delete.extend((memories[i], why) for i, why in deleted_why.items() if i in memories)
    plan.cascade_update.extend((memories[i], why) for i, why in update_why.items() if i in memories)
    plan.updates = {i: u for i, u in updates.items() if i in memories}


def _folded(text: str) -> str:
    return " ".join(str(text).split()).casefold()


def _count_history(store: Engine, ids: list[str]) -> int:
    if not store.has_table(HISTORY) or not ids:
        return 0
    tbl = store.table(HISTORY)
    return sum(int(store.read_retry(partial(tbl.count_rows, F.is_in("memory_id", c)))) for c in chunks(ids))


# --- public entry points ------------------------------------------------------------------------------


def chunks(items: Sequence[str], size: int = ID_CHUNK) -> Iterator[list[str]]:
    items = list(items)
    for start in range(0, len(items), size):
        yield items[start : start + size]
