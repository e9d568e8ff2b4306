"""Forget that really forgets: purge memories from every file of the store, check, and sign a receipt.

A LanceDB ``delete()`` only hides a row: its bytes stay in the data file, in every older version, in the
indices, and an ``update()`` leaves the old row behind the same way. A purge therefore

1. plans under the store's exclusive lock: the memories, the derived records that depend on them only
   (semantic facts whose ``sources``, procedures whose ``learned_from``, are all forgotten ids) and the
   records that merely cite them (which lose that source and one count of evidence);
2. deletes by opaque id (a delete predicate is written to ``_transactions/`` and the manifest), from the tier
   tables and the edit history, and applies the cascade updates;
3. rewrites only the fragments that hold deletions (bounded in size, see :mod:`memdeck.core.storage.tables`),
   which also remaps every index, then removes every older version at once;
4. scrubs the recall trace log and, for a whole principal, destroys the principal's redaction vault;
5. checks, by reading every file of the store, that nothing of the forgotten memories remains;
6. signs a receipt (:mod:`memdeck.core.receipts`).

Each step is recorded in a journal (``<store>/journal/purge-<id>.json``) before the next starts; a process
killed at any point leaves a journal that the next :meth:`Store.open` finishes (:func:`recover_pending`),
ending with the same receipt id. The texts the checks search for sit beside the journal in a 0600 file that
is removed before the receipt is signed; the journal itself holds ids and hashes only.

A receipt whose checks did not all pass is still signed (it records what was done) but carries
``"outcome": "checks_failed"`` instead of ``"verified"``; the CLI then exits non-zero.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from memdeck.core import filters as F
from memdeck.core.config import write_atomic
from memdeck.core.errors import MemdeckError, NotFound, StoreLocked
from memdeck.core.files import fsync_dir
from memdeck.core.filters import Scope
from memdeck.core.records import (
    HISTORY,
    LIST_COLUMNS,
    TIER_LIST_COLUMNS,
    Memory,
    check_principal,
    check_text,
    iso,
    now,
    row_to_memory,
)
from memdeck.core.storage.tables import dataset, rows_per_fragment, table_uri

log = logging.getLogger("memdeck.forget")

JOURNAL_FORMAT = "memdeck.purge-journal/1"
STEPS = ("planned", "deleted", "compacted", "reindexed", "scrubbed", "shredded", "checked", "receipted")
CRASH_ENV = "MEMDECK_TEST_CRASH_AT"  # tests: os._exit(137) right after this journal step is recorded
ID_CHUNK = 1000
RECOVERY_WAIT_S = 10.0  # how long an open waits for writers before finishing an interrupted purge
MAX_TEXT_NEEDLES = 64  # substring searches per column; tokens have no limit (one vectorised pass)
MAX_VECTOR_PROBES = 16
ROWID_COLUMNS = ("_rowid", "ids", "row_id", "__rowid")
# Written by memdeck itself (opaque ids, hashes, enums): searched for ids, never for text.
SYSTEM_COLUMNS = frozenset({"id", "memory_id", "tier", "state", "content_sha256"})
_TOKEN_SPLIT = r"[^\pL\pN_]+"
_DUCKDB_MAGIC = b"DUCK"

Progress = Callable[[str], None]


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

    @property
    def ids(self) -> list[str]:
        """Every id that will be gone: the memories asked for and the cascade."""
        return [m.id for m in self.deleted] + [m.id for m, _ in self.cascade_delete]

    def to_json(self) -> dict[str, Any]:
        return {
            "principal": self.principal,
            "whole_principal": self.whole_principal,
            "deleted": [_brief(m) for m in self.deleted],
            "cascade_delete": [{**_brief(m), "why": why} for m, why in self.cascade_delete],
            "cascade_update": [{**_brief(m), "why": why} for m, why in self.cascade_update],
            "history_versions": self.history_versions,
        }


def _brief(m: Memory) -> dict[str, Any]:
    return {"id": m.id, "tier": m.tier, "text": m.text, "created_at": iso(m.created_at)}


def plan_forget(store: Any, ids: Sequence[str], scope: Scope = Scope.everyone()) -> ForgetPlan:  # noqa: B008
    """The memories ``ids`` (all visible in ``scope``, all of one principal) and what depends on them."""
    wanted = list(dict.fromkeys(str(i).strip() for i in ids if str(i).strip()))
    if not wanted:
        raise MemdeckError("give at least one memory id to forget")
    found = _fetch(store, wanted, scope)
    missing = [i for i in wanted if i not in found]
    if missing:
        raise NotFound(f"no memory with id {missing[0]!r}" + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""))
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
    return plan


def _fetch(store: Any, ids: list[str], scope: Scope = Scope.everyone()) -> dict[str, Memory]:  # noqa: B008
    """The memories with these ids that the scope may see, by id, in a few queries however many ids."""
    found: dict[str, Memory] = {}
    prefixes = {i[:3] for i in ids}
    # The tier an id names first (epi_/sem_/pro_), then the others for ids made elsewhere.
    tiers = sorted(store.tiers_present(), key=lambda t: t[:3] not in prefixes)
    for tier in tiers:
        cols = LIST_COLUMNS + TIER_LIST_COLUMNS[tier]
        for chunk in _chunks([i for i in ids if i not in found]):
            where = F.all_of(F.is_in("id", chunk), scope.where())
            tbl = store.read_retry(
                lambda tier=tier, cols=cols, where=where: store.table(tier).to_lance().to_table(columns=cols, filter=where)
            )
            found.update((row["id"], row_to_memory(row)) for row in tbl.to_pylist())
    return found


def plan_principal(store: Any, principal: str) -> ForgetPlan:
    """Everything stored for one principal."""
    principal = check_principal(principal)
    memories: list[Memory] = []
    for tier in store.tiers_present():
        cols = LIST_COLUMNS + TIER_LIST_COLUMNS[tier]
        tbl = store.read_retry(
            lambda tier=tier, cols=cols: store.table(tier).to_lance().to_table(
                columns=cols, filter=F.eq("principal", principal)
            )
        )
        memories.extend(row_to_memory(row) for row in tbl.to_pylist())
    history = 0
    if store.has_table(HISTORY):
        history = int(store.read_retry(lambda: store.table(HISTORY).count_rows(F.eq("principal", principal))))
    if not memories and not history and not _has_vault(store, principal):
        raise NotFound(f"no memories of principal {principal!r} in this store")
    return ForgetPlan(principal=principal, deleted=memories, history_versions=history, whole_principal=True)


def _has_vault(store: Any, principal: str) -> bool:
    """Whether redacted originals of this principal are kept (they outlive their memories until shredded)."""
    try:
        from memdeck.core.privacy.vault import Vault
    except ImportError:
        return False
    try:
        return bool(Vault(store.layout.vault).exists(principal))
    except MemdeckError:
        return False


def _plan_cascade(store: Any, plan: ForgetPlan) -> None:
    """Facts and procedures derived only from forgotten memories go too; those that merely cite one lose
    the citation (and, for facts, one count of evidence per lost source). Only the same principal's
    records are touched: a forget never changes another principal's data."""
    gone = {m.id for m in plan.deleted}
    refs: dict[str, tuple[str, list[str], int | None]] = {}  # id -> (tier, sources, evidence_count)
    for tier, column in (("semantic", "sources"), ("procedural", "learned_from")):
        if not store.has_table(tier):
            continue
        extra = ["evidence_count"] if tier == "semantic" else []
        tbl = store.read_retry(
            lambda tier=tier, column=column, extra=extra: store.table(tier).to_lance().to_table(
                columns=["id", column, *extra], filter=F.eq("principal", plan.principal)
            )
        )
        counts = tbl["evidence_count"].to_pylist() if extra else [None] * tbl.num_rows
        for mem_id, sources, count in zip(tbl["id"].to_pylist(), tbl[column].to_pylist(), counts, strict=True):
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
                    f"only source was {lost[0]}" if len(lost) == 1 else f"all sources forgotten: {', '.join(lost)}"
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
        for chunk in _chunks(sorted(gone)):
            where = F.all_of(F.eq("principal", plan.principal), F.is_in("superseded_by", chunk))
            tbl = store.read_retry(
                lambda tier=tier, where=where: store.table(tier).to_lance().to_table(columns=["id"], filter=where)
            )
            for mem_id in tbl["id"].to_pylist():
                if mem_id in gone:
                    continue
                updates.setdefault(mem_id, {"tier": tier, "values": {}})["values"]["superseded_by"] = None
                update_why[mem_id] = "; ".join(
                    filter(None, [update_why.get(mem_id), "superseded by a forgotten memory"])
                )
    memories = _fetch(store, [*deleted_why, *update_why])
    plan.cascade_delete.extend((memories[i], why) for i, why in deleted_why.items() if i in memories)
    plan.cascade_update.extend((memories[i], why) for i, why in update_why.items() if i in memories)
    plan.updates = {i: u for i, u in updates.items() if i in memories}


def _count_history(store: Any, ids: list[str]) -> int:
    if not store.has_table(HISTORY) or not ids:
        return 0
    tbl = store.table(HISTORY)
    return sum(int(store.read_retry(lambda c=c: tbl.count_rows(F.is_in("memory_id", c)))) for c in _chunks(ids))


# --- public entry points ------------------------------------------------------------------------------


def forget(
    store: Any, ids: Sequence[str], reason: str, scope: Scope = Scope.everyone(), *,  # noqa: B008
    trigger: str = "request", progress: Progress | None = None,
) -> dict[str, Any]:
    """Purge these memories (and what derives only from them) and return the signed receipt."""
    reason = check_text(reason, "reason")
    with store.lock.exclusive():
        store.refresh()
        plan = plan_forget(store, ids, scope)
        return _Purge.start(store, plan, reason, trigger=trigger, progress=progress).run()


def forget_principal(store: Any, principal: str, reason: str, *, progress: Progress | None = None) -> dict[str, Any]:
    """Purge everything stored for a principal, destroy their redaction vault, return the receipt."""
    reason = check_text(reason, "reason")
    with store.lock.exclusive():
        store.refresh()
        plan = plan_principal(store, principal)
        return _Purge.start(store, plan, reason, trigger="principal", progress=progress).run()


def pending(store: Any) -> list[Path]:
    """Journals of purges that have not finished."""
    directory = store.layout.journal
    if not directory.is_dir():
        return []
    return sorted(directory.glob("purge-*.json"))


def stale_temp_files(store: Any) -> list[Path]:
    """Half-written journal or secret files (``write_atomic`` temporaries) a killed purge left behind."""
    directory = store.layout.journal
    return sorted(directory.glob("purge-*.tmp*")) if directory.is_dir() else []


def _remove_stale_temp_files(directory: Path, pattern: str = "purge-*.tmp*") -> None:
    """Delete them. A purge writes its journal and secret only under the exclusive store lock, so under that
    lock no temporary file is still being written: any there is a killed process's, and it may hold the very
    texts the purge is removing."""
    removed = False
    for path in directory.glob(pattern):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
            removed = True
    if removed:
        fsync_dir(directory)


def recover_pending(store: Any, *, wait: float = RECOVERY_WAIT_S) -> list[dict[str, Any]]:
    """Finish purges a killed process left half done; returns their receipts.

    A purge holds the store lock exclusively from start to receipt, so a journal whose lock can be had is
    stale. If another process holds the lock exclusively (it is purging right now) the journal is left
    alone; writers hold it shared only for a commit, so recovery waits up to ``wait`` s for them.
    Failures are logged and leave the journal for the next open: opening a store never fails on them.
    """
    if not pending(store) and not stale_temp_files(store):
        return []
    try:
        with store.lock.shared(timeout=0):
            pass
    except StoreLocked:
        return []  # a purge is running
    receipts = []
    try:
        with store.lock.exclusive(timeout=wait):
            store.refresh()
            _remove_stale_temp_files(store.layout.journal)
            for path in pending(store):
                try:
                    purge = _Purge.load(store, path)
                    log.info("resuming interrupted purge %s", purge.purge_id)
                    receipts.append(purge.run())
                except Exception as exc:  # noqa: BLE001 - opening the store must not fail: next open tries again
                    log.warning("could not finish the interrupted purge %s: %s", path.name, exc)
    except StoreLocked:
        log.info("interrupted purge left for later: the store stayed busy for %.0f s", wait)
    return receipts


# --- the purge ----------------------------------------------------------------------------------------


class _Purge:
    def __init__(self, store: Any, path: Path, journal: dict[str, Any], progress: Progress | None = None) -> None:
        self.store = store
        self.path = path
        self.journal = journal
        self.progress = progress or (lambda _msg: None)

    @property
    def purge_id(self) -> str:
        return str(self.journal["purge_id"])

    @property
    def secret_path(self) -> Path:
        return self.path.with_name(f"purge-{self.purge_id}.secret")

    @property
    def ids(self) -> list[str]:
        return [d["id"] for d in self.journal["deleted"]] + list(self.journal["cascade_delete_ids"])

    @classmethod
    def start(
        cls, store: Any, plan: ForgetPlan, reason: str, *, trigger: str, progress: Progress | None
    ) -> _Purge:
        purge_id = uuid.uuid4().hex
        directory = store.layout.journal
        directory.mkdir(parents=True, exist_ok=True)
        os.chmod(directory, 0o700)
        tiers = {m.id: m.tier for m in plan.deleted} | {m.id: m.tier for m, _ in plan.cascade_delete}
        journal = {
            "format": JOURNAL_FORMAT,
            "purge_id": purge_id,
            "started_at": iso(now()),
            "trigger": trigger,
            "principal": plan.principal,
            "reason": reason,
            "whole_principal": plan.whole_principal,
            "deleted": [
                {"id": m.id, "tier": m.tier, "content_sha256": m.content_sha256, "created_at": iso(m.created_at)}
                for m in plan.deleted
            ],
            "cascade": [{"id": m.id, "tier": m.tier, "why": why} for m, why in plan.cascade_delete]
            + [{"id": m.id, "tier": m.tier, "why": why} for m, why in plan.cascade_update],
            "cascade_delete_ids": [m.id for m, _ in plan.cascade_delete],
            "tiers": tiers,
            "updates": {k: {"tier": v["tier"], "values": v["values"]} for k, v in plan.updates.items()},
            "history_versions": plan.history_versions,
            "actions": [],
            "extra": {},
            "checks": [],
            "steps": [],
        }
        purge = cls(store, directory / f"purge-{purge_id}.json", journal, progress)
        purge.progress(f"planning: {len(plan.deleted)} memories, {len(plan.cascade_delete)} cascaded")
        secret = _collect_secret(store, purge.ids, tiers, plan.principal, plan.whole_principal)
        # The secret first: a journal on disk always has its needles beside it until the checks have run.
        write_atomic(purge.secret_path, json.dumps(secret, ensure_ascii=False), mode=0o600)
        purge._mark("planned")
        return purge

    @classmethod
    def load(cls, store: Any, path: Path) -> _Purge:
        try:
            journal = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise MemdeckError(f"purge journal {path} is unreadable: {exc}") from None
        if not isinstance(journal, dict) or journal.get("format") != JOURNAL_FORMAT:
            raise MemdeckError(f"{path} is not a memdeck purge journal")
        journal.setdefault("extra", {})["resumed"] = True
        return cls(store, path, journal)

    def _mark(self, step: str) -> None:
        if step not in self.journal["steps"]:
            self.journal["steps"].append(step)
        write_atomic(self.path, json.dumps(self.journal, ensure_ascii=False, sort_keys=True), mode=0o600)
        if os.environ.get(CRASH_ENV) == step:
            os._exit(137)

    def _act(self, *actions: str) -> None:
        for action in actions:
            if action not in self.journal["actions"]:
                self.journal["actions"].append(action)

    def run(self) -> dict[str, Any]:
        with self.store.lock.exclusive():
            for step in STEPS[1:-1]:
                if step in self.journal["steps"]:
                    continue
                getattr(self, f"_{step}")()
                self._mark(step)
            # Always: issuing is idempotent by receipt id, so a purge killed after signing ends the same way.
            self._receipted()
        return self.receipt

    # -- steps --

    def _deleted(self) -> None:
        self.progress("deleting rows")
        store = self.store
        store.refresh()
        by_tier: dict[str, list[str]] = {}
        for mem_id in self.ids:
            by_tier.setdefault(self.journal["tiers"][mem_id], []).append(mem_id)
        for tier, ids in by_tier.items():
            if store.has_table(tier):
                tbl = store.table(tier)
                for chunk in _chunks(ids):
                    tbl.delete(F.is_in("id", chunk))
        self._act("delete")
        stamp = now()
        for mem_id, update in self.journal["updates"].items():
            # Absolute values computed at planning time, so a resumed purge applies them once, not twice.
            values = {**update["values"], "updated_at": stamp}
            store.table(update["tier"]).update(where=F.eq("id", mem_id), values=values)
            self._act("cascade_update")
        if self.journal["cascade_delete_ids"]:
            self._act("cascade_delete")
        if store.has_table(HISTORY):
            hist = store.table(HISTORY)
            if self.journal["whole_principal"]:
                hist.delete(F.eq("principal", self.journal["principal"]))
            else:
                for chunk in _chunks(self.ids):
                    hist.delete(F.is_in("memory_id", chunk))
            if self.journal.get("history_versions"):
                self._act("history_purge")

    def _compacted(self) -> None:
        self.progress("rewriting fragments")
        store = self.store
        rewritten = 0
        for name in _table_names(store):
            rewritten += _rewrite_dirty_fragments(store, name)
        self.journal["extra"]["fragments_rewritten"] = self.journal["extra"].get("fragments_rewritten", 0) + rewritten
        self._act("compact", "cleanup_old_versions")
        store.refresh()

    def _reindexed(self) -> None:
        self.progress("checking indices")
        store = self.store
        for name in _table_names(store):
            if _repair_indices(store, name):
                self._act("reindex")
        store.refresh()

    def _scrubbed(self) -> None:
        self.progress("scrubbing the trace log")
        try:
            from memdeck.core.recall import traces
        except ImportError:
            traces = None  # type: ignore[assignment]
        if traces is None or not hasattr(traces, "scrub"):
            self.journal["extra"]["trace_scrub"] = {"available": False}
            return
        results = [traces.scrub(self.store, self.ids)]
        if self.journal["whole_principal"] and hasattr(traces, "scrub_principal"):
            results.append(traces.scrub_principal(self.store, self.journal["principal"]))
        kept = [{k: v for k, v in r.items() if k != "path"} if isinstance(r, dict) else r for r in results]
        self.journal["extra"]["trace_scrub"] = _plain(kept[0] if len(kept) == 1 else kept)
        self._act("trace_scrub")
        if any(isinstance(r, dict) and r.get("rewritten") for r in results):
            self._act("analytics_rewrite")

    def _shredded(self) -> None:
        if not self.journal["whole_principal"]:
            return
        self.progress("destroying the redaction vault")
        try:
            from memdeck.core.privacy.vault import Vault
        except ImportError:
            self.journal["extra"]["vault"] = {"available": False}
            return
        result = Vault(self.store.layout.vault).destroy(self.journal["principal"])
        self.journal["extra"]["vault"] = _plain(result)
        self.store._redactor = None  # it may hold the destroyed key in memory
        self._act("crypto_shred")

    def _checked(self) -> None:
        if self.journal["extra"].get("resumed"):
            # Between the kill and this recovery other processes may have written (each update leaves a
            # deleted row and a version behind): settle the tables again before they are checked.
            self._compacted()
            self._reindexed()
        self.progress("checking that nothing remains")
        _remove_stale_temp_files(self.path.parent, f"purge-{self.purge_id}.*.tmp*")
        secret = _read_secret(self.secret_path)
        checks = Verifier(self.store, self.journal, secret, exclude={self.path, self.secret_path}).run()
        # Recorded (by run) before the needles are removed: a crash after this resumes at the receipt.
        self.journal["checks"] = checks

    def _remove_secret(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.secret_path.unlink()
        fsync_dir(self.secret_path.parent)

    def _receipted(self) -> None:
        self._remove_secret()
        checks = [c for c in self.journal["checks"] if c.get("name") != "journal_secret_removed"]
        checks.append({
            "name": "journal_secret_removed", "passed": not self.secret_path.exists(),
            "detail": "the texts the checks searched for were deleted before signing",
        })
        self.journal["checks"] = checks
        ok = all(c.get("passed") for c in checks)
        extra = {
            **{k: v for k, v in self.journal["extra"].items() if v is not None},
            "outcome": "verified" if ok else "checks_failed",
            "trigger": self.journal["trigger"],
            "whole_principal": bool(self.journal["whole_principal"]),
            "history_versions": int(self.journal.get("history_versions") or 0),
            "cascade_deleted": len(self.journal["cascade_delete_ids"]),
            "cascade_updated": len(self.journal["updates"]),
        }
        from memdeck.core.receipts import ReceiptBook

        self.receipt = ReceiptBook(self.store.root).issue(
            principal=self.journal["principal"],
            reason=self.journal["reason"],
            deleted=self.journal["deleted"],
            cascade=self.journal["cascade"],
            actions=self.journal["actions"],
            checks=checks,
            extra=extra,
            receipt_id=self.purge_id,
        )
        self._mark("receipted")
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        fsync_dir(self.path.parent)
        if not ok:
            failed = ", ".join(c["name"] for c in checks if not c.get("passed"))
            log.warning("purge %s finished but checks failed: %s", self.purge_id, failed)

    receipt: dict[str, Any]


def _table_names(store: Any) -> list[str]:
    return [*store.tiers_present(), *([HISTORY] if store.has_table(HISTORY) else [])]


def _rewrite_dirty_fragments(store: Any, name: str) -> int:
    """Rewrite only the fragments that hold deleted rows, then drop every older version.

    Fresh dataset handles for each step: a stale one commits against an old version and conflicts.
    """
    ds = dataset(store, name)
    fragments = ds.get_fragments()
    dirty = [f.fragment_id for f in fragments if f.metadata.deletion_file is not None]
    if dirty:
        ds.optimize.compact_files(
            materialize_deletions=True,
            materialize_deletions_threshold=0.0,
            target_rows_per_fragment=rows_per_fragment(store),
            excluded_fragment_ids=[f.fragment_id for f in fragments if f.fragment_id not in dirty],
        )
    if not dirty:
        # The manifest of a delete (or update) commit holds its predicate, ids included. When no rewrite
        # followed it (the deleted rows filled whole fragments), a content-free commit takes its place.
        latest = dataset(store, name)
        try:
            txn = latest.read_transaction(latest.version)
            operation = type(txn.operation).__name__ if txn is not None else None
        except Exception:  # noqa: BLE001 - some operations cannot be read back from Python
            operation = None
        if operation not in ("Rewrite", "UpdateConfig"):
            latest.update_config({"memdeck.purged": "1"})
    dataset(store, name).cleanup_old_versions(
        older_than=timedelta(0), delete_unverified=True, error_if_tagged_old_versions=False
    )
    return len(dirty)


def _repair_indices(store: Any, name: str) -> bool:
    """Make every index forget the purged rows. Returns whether the table has indices.

    Compaction remaps the indices of the fragments it rewrites. A delete that empties whole fragments
    rewrites nothing, and the indices keep those rows: a vector or scalar index drops them when optimized;
    the full-text index keeps their postings and tokens even then, so it is built again.
    """
    ds = dataset(store, name)
    indices = ds.list_indices()
    if not indices:
        return False
    live = {f.fragment_id for f in ds.get_fragments()}
    stale = [idx for idx in indices if set(idx.get("fragment_ids") or ()) - live]
    if not stale:
        return True
    full_text = [idx["name"] for idx in stale if str(idx.get("type", "")).lower() in ("inverted", "fts")]
    others = [idx["name"] for idx in stale if idx["name"] not in full_text]
    if others:
        ds.optimize.optimize_indices(index_names=others)
    if full_text:
        from memdeck.core.storage.indexing import ensure_fts

        tbl = store.table(name)
        tbl.checkout_latest()
        for index_name in full_text:
            tbl.drop_index(index_name)
        ensure_fts(tbl)
    dataset(store, name).cleanup_old_versions(older_than=timedelta(0), delete_unverified=True)
    return True


def _collect_secret(store: Any, ids: list[str], tiers: dict[str, str], principal: str, whole: bool) -> dict[str, Any]:
    """The texts (and a few vectors) the checks search for: every string of the memories and of their
    edit history."""
    strings: list[str] = []
    vectors: dict[str, list[float]] = {}
    by_tier: dict[str, list[str]] = {}
    for mem_id in ids:
        by_tier.setdefault(tiers[mem_id], []).append(mem_id)
    for tier, tier_ids in by_tier.items():
        if not store.has_table(tier):
            continue
        ds = store.table(tier).to_lance()
        for chunk in _chunks(tier_ids):
            tbl = ds.to_table(filter=F.is_in("id", chunk))
            for row in tbl.drop_columns(["vector"]).to_pylist():
                strings.extend(_content_strings(row))
            for mem_id, vec in zip(tbl["id"].to_pylist(), tbl["vector"].to_pylist(), strict=True):
                if len(vectors) < MAX_VECTOR_PROBES and vec is not None:
                    vectors[mem_id] = [float(x) for x in vec]
    if store.has_table(HISTORY):
        ds = store.table(HISTORY).to_lance()
        if whole:
            tbl = ds.to_table(columns=["text"], filter=F.eq("principal", principal))
            strings.extend(t for t in tbl["text"].to_pylist() if t)
        else:
            for chunk in _chunks(ids):
                tbl = ds.to_table(columns=["text"], filter=F.is_in("memory_id", chunk))
                strings.extend(t for t in tbl["text"].to_pylist() if t)
    texts, tokens = needles_of(strings)
    return {"texts": texts, "tokens": tokens, "vectors": vectors, "principal": principal}


def _content_strings(row: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for key in ("text", "name", "deprecation_reason"):
        if row.get(key):
            out.append(str(row[key]))
    for key in ("tags", "derived_facts", "steps"):
        out.extend(str(v) for v in row.get(key) or [] if v)
    for key in ("events", "meta"):
        raw = row.get(key)
        if raw:
            try:
                out.extend(_json_strings(json.loads(raw)))
            except ValueError:
                out.append(str(raw))
    return out


def _json_strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _json_strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _json_strings(v)


def needles_of(strings: Iterable[str]) -> tuple[list[str], list[str]]:
    """Lower-cased search strings for some texts: each whole text, three 24-character pieces of a long one
    (a preview or a truncated copy still shows), and its distinctive tokens (words of five or more
    characters, or numbers of six or more digits)."""
    texts: list[str] = []
    tokens: set[str] = set()
    for s in strings:
        low = s.lower()
        if len(low.strip()) >= 8:
            texts.append(low)
        if len(low) >= 40:
            mid = len(low) // 2
            texts.extend([low[:24], low[mid - 12 : mid + 12], low[-24:]])
        for tok in re.findall(r"\w+", low):
            if (len(tok) >= 5 and not tok.isdigit()) or (tok.isdigit() and len(tok) >= 6):
                tokens.add(tok)
    return list(dict.fromkeys(texts)), sorted(tokens)


def _read_secret(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        log.warning("purge needles %s unreadable: %s", path, exc)
        return None


def _plain(value: Any, depth: int = 0) -> Any:
    """A JSON-safe, bounded copy of what another module returned, for the receipt."""
    if depth > 4:
        return None
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        return value[:200]
    if isinstance(value, dict):
        return {str(k)[:64]: _plain(v, depth + 1) for k, v in list(value.items())[:32]}
    if isinstance(value, (list, tuple)):
        return [_plain(v, depth + 1) for v in list(value)[:32]]
    return str(value)[:200]


def _chunks(items: Sequence[str], size: int = ID_CHUNK) -> Iterator[list[str]]:
    items = list(items)
    for start in range(0, len(items), size):
        yield items[start : start + size]


# --- the checks ---------------------------------------------------------------------------------------


class _Needles:
    """What the checks look for, lower-cased: ids, whole texts and pieces, tokens."""

    def __init__(self, ids: Iterable[str], texts: Iterable[str], tokens: Iterable[str]) -> None:
        self.ids = sorted(set(ids))
        self.texts = list(dict.fromkeys(texts))
        self.tokens = sorted(set(tokens))
        self._token_set = pa.array(self.tokens, pa.string())
        self._id_set = pa.array(self.ids, pa.string())
        self._token_bytes = [t.encode("utf-8") for t in self.tokens]
        self._id_bytes = {i.lower().encode("utf-8") for i in self.ids}

    def without(self, texts: set[str], tokens: set[str]) -> _Needles:
        return _Needles(self.ids, [t for t in self.texts if t not in texts], [t for t in self.tokens if t not in tokens])

    def search_texts(self) -> list[str]:
        return self.texts[:MAX_TEXT_NEEDLES]

    def hits_in_strings(self, arr: pa.Array, *, with_ids: bool) -> tuple[set[str], set[str], set[str]]:
        """(texts, tokens, ids) found in a string array."""
        texts: set[str] = set()
        tokens: set[str] = set()
        ids: set[str] = set()
        if len(arr) == 0:
            return texts, tokens, ids
        if with_ids and self.ids:
            ids = set(pc.unique(arr.filter(pc.is_in(arr, value_set=self._id_set))).to_pylist())
        lower = pc.utf8_lower(arr)
        wanted = self.search_texts()
        # One pass for all texts; only when something matched, one more per text to name it.
        if wanted and pc.any(pc.match_substring_regex(lower, "|".join(_re2_literal(t) for t in wanted))).as_py():
            hit = lower.filter(pc.match_substring_regex(lower, "|".join(_re2_literal(t) for t in wanted)))
            texts = {t for t in wanted if pc.any(pc.match_substring(hit, t)).as_py()}
        if self.tokens:
            if len(self.tokens) <= 500:
                # One regex pass picks the strings that contain a token at all; only those are split.
                lower = lower.filter(pc.match_substring_regex(lower, "|".join(self.tokens)))
            if len(lower):
                flat = pc.list_flatten(pc.split_pattern_regex(lower, _TOKEN_SPLIT))
                tokens = set(pc.unique(flat.filter(pc.is_in(flat, value_set=self._token_set))).to_pylist())
        return texts, tokens, ids

    def hits_in_bytes(self, data: bytes, *, with_ids: bool) -> list[str]:
        """Kinds of needle found in raw bytes (ASCII case folded)."""
        low = data.lower()
        found = []
        if any(t.encode("utf-8") in low for t in self.search_texts()):
            found.append("text")
        ids = self._id_bytes if with_ids else set()
        if not self.tokens and not ids:
            return found
        if len(self.tokens) + len(ids) <= 64:  # few needles: a substring search each (C speed)
            words = None
        else:  # many: every ASCII word of the bytes once, then set lookups
            words = set(_ASCII_WORDS.findall(low))
        if self.tokens and _has_token(low, words, self._token_bytes):
            found.append("token")
        if ids and (_has_token(low, None, list(ids)) if words is None else not words.isdisjoint(ids)):
            found.append("id")
        return found


_WORD = frozenset(b"abcdefghijklmnopqrstuvwxyz0123456789_")
_ASCII_WORDS = re.compile(rb"[a-z0-9_]+")


def _has_token(data: bytes, words: set[bytes] | None, tokens: list[bytes]) -> bool:
    """Whether a whole-word token occurs in lower-cased bytes (whose ASCII words are ``words``, if given)."""
    for token in tokens:
        if words is not None and token.isascii():
            if token in words:
                return True
            continue
        at = data.find(token)  # the substring search, then a word-boundary check
        while at >= 0:
            end = at + len(token)
            if (at == 0 or data[at - 1] not in _WORD) and (end == len(data) or data[end] not in _WORD):
                return True
            at = data.find(token, at + 1)
    return False


def _string_arrays(table: pa.Table) -> Iterator[tuple[str, pa.Array]]:
    for name in table.column_names:
        yield from _strings_of(name, table[name].combine_chunks())


def _strings_of(name: str, arr: pa.Array) -> Iterator[tuple[str, pa.Array]]:
    t = arr.type
    if pa.types.is_dictionary(t):
        yield from _strings_of(name, arr.dictionary_decode())
    elif pa.types.is_string(t) or pa.types.is_large_string(t):
        yield name, arr
    elif pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        if pa.types.is_floating(t.value_type) or pa.types.is_integer(t.value_type):
            return
        yield from _strings_of(name, arr.flatten())
    elif pa.types.is_struct(t):
        for i in range(t.num_fields):
            yield from _strings_of(f"{name}.{t.field(i).name}", arr.field(i))


def _may_hold_text(t: pa.DataType) -> bool:
    if pa.types.is_dictionary(t):
        return _may_hold_text(t.value_type)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return _may_hold_text(t.value_type)
    if pa.types.is_struct(t):
        return any(_may_hold_text(t.field(i).type) for i in range(t.num_fields))
    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t) or pa.types.is_large_binary(t)


def _read_lance_file(path: Path, columns: list[str] | None = None) -> pa.Table:
    from lance.file import LanceFileReader

    if columns:
        try:
            return LanceFileReader(str(path), columns=columns).read_all(batch_size=65536).to_table()
        except Exception as exc:  # noqa: BLE001 - this file lacks one of the columns: read it whole
            log.debug("reading all of %s: %s", path.name, exc)
    return LanceFileReader(str(path)).read_all(batch_size=65536).to_table()


def _re2_literal(text: str) -> str:
    """A literal for an RE2 pattern: every regex metacharacter escaped (RE2 has no re.escape)."""
    return re.sub(r"([\\.^$|?*+()\[\]{}])", r"\\\1", text)


def _all_strings(table: pa.Table, skip: frozenset[str] = frozenset()) -> pa.Array:
    parts = [arr.cast(pa.large_string()) for name, arr in _string_arrays(table) if len(arr) and name not in skip]
    return pa.concat_arrays(parts) if parts else pa.array([], pa.large_string())


def _binary_arrays(table: pa.Table) -> Iterator[tuple[str, pa.Array]]:
    for name in table.column_names:
        arr = table[name].combine_chunks()
        t = arr.type
        if (pa.types.is_list(t) or pa.types.is_large_list(t)) and (
            pa.types.is_binary(t.value_type) or pa.types.is_large_binary(t.value_type)
        ):
            arr = arr.flatten()
            t = arr.type
        if pa.types.is_binary(t) or pa.types.is_large_binary(t):
            yield name, arr


def _binary_bytes(arr: pa.Array) -> bytes:
    buffers = arr.buffers()
    data = buffers[2] if len(buffers) > 2 and buffers[2] is not None else None
    return data.to_pybytes() if data is not None else b""


def _metadata_words(store: Any, name: str) -> set[str]:
    """Lower-cased words that a table's manifest holds of itself: field names (and their parts), index
    names and the schema's metadata keys and values."""
    words: set[str] = set()
    try:
        tbl = store.table(name)
        parts: list[str] = list(tbl.schema.names)
        parts += [k.decode() if isinstance(k, bytes) else str(k) for k in (tbl.schema.metadata or {})]
        parts += [v.decode() if isinstance(v, bytes) else str(v) for v in (tbl.schema.metadata or {}).values()]
        for idx in tbl.list_indices():
            parts.append(str(idx.name))
            parts.append(str(getattr(idx, "index_type", "")))
    except Exception:  # noqa: BLE001 - without the schema every token stays a needle (stricter)
        return words
    for part in parts:
        low = part.lower()
        words.add(low)
        words.update(w for w in re.split(r"[^a-z0-9]+", low) if w)
    return words


class Verifier:
    """Reads every file of the store and reports, as receipt checks, whether anything forgotten remains."""

    def __init__(
        self, store: Any, journal: dict[str, Any], secret: dict[str, Any] | None, *, exclude: set[Path] = frozenset()
    ) -> None:
        self.store = store
        self.journal = journal
        self.principal = journal["principal"]
        self.whole = bool(journal["whole_principal"])
        self.ids = [d["id"] for d in journal["deleted"]] + list(journal["cascade_delete_ids"])
        self.tiers: dict[str, str] = journal["tiers"]
        self.secret = secret
        texts, tokens = (secret.get("texts", []), secret.get("tokens", [])) if secret else ([], [])
        self.needles = _Needles(self.ids, texts, tokens)
        self.vectors: dict[str, list[float]] = dict(secret.get("vectors", {})) if secret else {}
        self.exclude = {Path(p).resolve() for p in exclude}
        self.checks: list[dict[str, Any]] = []
        self._live_rowids: dict[str, pa.Array] = {}

    def add(self, name: str, passed: bool, detail: str) -> None:
        self.checks.append({"name": name, "passed": bool(passed), "detail": detail})

    def run(self) -> list[dict[str, Any]]:
        lance_dir = Path(self.store.layout.lance)
        if not lance_dir.is_dir():
            self.add("local_store", False, "the store is not on a local disk; its files cannot be read back")
            return self.checks
        if self.secret is None:
            self.add(
                "needles_available", False,
                "the texts to search for were lost with an interrupted purge; ids were checked, texts not",
            )
        self._check_versions()
        self._check_data_files()
        self._check_index_files()
        self._check_table_metadata()
        self._check_queries()
        self._check_vector_search()
        self._check_keyword_search()
        self._check_duckdb_files()
        self._check_other_files()
        if self.whole:
            vault = self.journal.get("extra", {}).get("vault")
            if isinstance(vault, dict) and vault.get("available") is False:
                self.add("vault_destroyed", True, "no redaction vault module in this installation")
            else:
                self.add("vault_destroyed", "crypto_shred" in self.journal["actions"],
                         "the principal's vault key was destroyed" if "crypto_shred" in self.journal["actions"]
                         else "the vault was not destroyed")
        return self.checks

    # -- table layout --

    def _tables(self) -> list[str]:
        return _table_names(self.store)

    def _check_versions(self) -> None:
        problems = []
        deletion_files = 0
        unreferenced = []
        for name in self._tables():
            ds = dataset(self.store, name)
            versions = ds.versions()
            if len(versions) != 1:
                problems.append(f"{name} keeps {len(versions)} versions")
            # Time travel: every version the dataset still lists is opened and searched by id.
            for v in versions:
                if v["version"] == ds.version:
                    continue
                old = dataset(self.store, name).checkout_version(v["version"])
                column = "memory_id" if name == HISTORY else "id"
                for chunk in _chunks(self.ids):
                    if old.count_rows(filter=F.is_in(column, chunk)):
                        problems.append(f"{name} version {v['version']} still holds forgotten rows")
                        break
            fragments = ds.get_fragments()
            deletion_files += sum(1 for f in fragments if f.metadata.deletion_file is not None)
            root = Path(table_uri(self.store, name))
            referenced = {Path(df.path).name for f in fragments for df in f.data_files()}
            for path in (root / "data").glob("*"):
                if path.name not in referenced:
                    unreferenced.append(f"{name}/data/{path.name}")
            index_dirs = {str(idx["uuid"]) for idx in ds.list_indices()}
            for path in (root / "_indices").glob("*"):
                if path.name not in index_dirs:
                    unreferenced.append(f"{name}/_indices/{path.name}")
            unreferenced.extend(f"{name}/_deletions/{p.name}" for p in (root / "_deletions").glob("*"))
            manifests = list((root / "_versions").glob("*.manifest"))
            if len(manifests) > 1:
                unreferenced.append(f"{name}/_versions: {len(manifests) - 1} older manifests")
        self.add(
            "no_older_version_holds_it", not problems,
            "; ".join(problems) or f"each of {len(self._tables())} tables keeps only its current version",
        )
        self.add(
            "deletions_materialized", deletion_files == 0,
            "no fragment keeps deleted rows" if not deletion_files else f"{deletion_files} fragments keep deleted rows",
        )
        self.add(
            "no_unreferenced_files", not unreferenced,
            "every data, index and deletion file belongs to the current version"
            if not unreferenced else f"{len(unreferenced)} files outside the current version: {', '.join(unreferenced[:5])}",
        )

    def _live_rowid_set(self, name: str) -> pa.Array:
        cached = self._live_rowids.get(name)
        if cached is None:
            cached = dataset(self.store, name).to_table(columns=[], with_row_id=True)["_rowid"].combine_chunks()
            self._live_rowids[name] = cached
        return cached

    # -- data files --

    def _check_data_files(self) -> None:
        leaks: list[str] = []
        refs: list[str] = []
        shared_texts: set[str] = set()
        shared_tokens: set[str] = set()
        files = rows = 0
        for name in self._tables():
            id_column = "memory_id" if name == HISTORY else "id"
            # Every column that can hold text; vectors are skipped (floats hold no text, and are 90 % of
            # the bytes). A file that lacks one of these columns is read whole.
            text_columns = [f.name for f in dataset(self.store, name).schema if _may_hold_text(f.type)]
            for path in sorted((Path(table_uri(self.store, name)) / "data").glob("*.lance")):
                table = _read_lance_file(path, text_columns)
                files += 1
                rows += table.num_rows
                label = f"{name}/data/{path.name[:12]}…"
                if id_column in table.column_names:
                    gone_mask = pc.is_in(table[id_column], value_set=pa.array(self.ids, pa.string()))
                    n = pc.sum(gone_mask.cast(pa.int64())).as_py() or 0
                    if n:
                        leaks.append(f"{n} forgotten rows in {label}")
                    live = table.filter(pc.invert(gone_mask)) if n else table
                else:  # a file without ids (added columns): any hit counts as a leak
                    live = None
                if self.whole and "principal" in table.column_names:
                    n = pc.sum(pc.equal(table["principal"], self.principal).cast(pa.int64())).as_py() or 0
                    if n:
                        leaks.append(f"{n} rows of {self.principal!r} in {label}")
                scan = live if live is not None else table
                # Every string of the file in one array: one pass per needle instead of one per column.
                texts, tokens, _ = self.needles.hits_in_strings(_all_strings(scan, SYSTEM_COLUMNS), with_ids=False)
                if live is None and (texts or tokens):
                    leaks.append(f"forgotten text in {label}, a file without ids")
                shared_texts |= texts
                shared_tokens |= tokens
                for column in ("sources", "learned_from", "superseded_by"):
                    if column in scan.column_names:
                        _, _, ids = self.needles.hits_in_strings(_all_strings(scan.select([column])), with_ids=True)
                        same = self._rows_citing(scan, column, ids) if ids else 0
                        if same:
                            refs.append(f"{same} rows of {self.principal!r} in {label} still cite a forgotten id")
        skipped = len(shared_texts) + len(shared_tokens)
        self.needles = self.needles.without(shared_texts, shared_tokens)
        searched = f"{len(self.needles.texts)} texts/pieces and {len(self.needles.tokens)} tokens"
        detail = (
            f"read {files} data files ({rows} rows) with LanceFileReader: no row of the {len(self.ids)} "
            f"forgotten ids; the other rows hold none of {searched} ({skipped} needles also occur in kept "
            "memories and are not searched for elsewhere)"
        )
        self.add("no_row_in_any_data_file", not leaks, "; ".join(leaks) or detail)
        self.add(
            "no_reference_to_forgotten_ids", not refs,
            "; ".join(refs) or "no kept memory of the principal cites a forgotten id",
        )

    def _rows_citing(self, table: pa.Table, column: str, ids: set[str]) -> int:
        if "principal" not in table.column_names:
            return 0
        own = table.filter(pc.equal(table["principal"], self.principal))
        count = 0
        for value in own[column].to_pylist():
            values = value if isinstance(value, list) else [value]
            if any(v in ids for v in values if v):
                count += 1
        return count

    # -- index files --

    def _check_index_files(self) -> None:
        from lance.file import LanceFileReader

        leaks: list[str] = []
        files = 0
        for name in self._tables():
            root = Path(table_uri(self.store, name)) / "_indices"
            for path in sorted(p for p in root.rglob("*") if p.is_file()):
                files += 1
                label = f"{name}/_indices/{path.parent.name[:8]}…/{path.name}"
                try:
                    table = LanceFileReader(str(path)).read_all(batch_size=65536).to_table()
                except Exception:  # noqa: BLE001 - not a Lance file: read its bytes
                    found = self.needles.hits_in_bytes(path.read_bytes(), with_ids=True)
                    if found:
                        leaks.append(f"{'/'.join(found)} in {label}")
                    continue
                texts, tokens, ids = self.needles.hits_in_strings(_all_strings(table), with_ids=True)
                if texts or tokens or ids:
                    leaks.append(f"forgotten {'text' if texts or tokens else 'id'} in {label}")
                for column, arr in _binary_arrays(table):
                    found = self.needles.hits_in_bytes(_binary_bytes(arr), with_ids=True)
                    if found:
                        leaks.append(f"{'/'.join(found)} in {label} ({column})")
                for column in ROWID_COLUMNS:
                    if column in table.column_names and pa.types.is_uint64(table[column].type):
                        col = table[column].combine_chunks()
                        unknown = pc.invert(pc.is_in(col, value_set=self._live_rowid_set(name)))
                        unknown = pc.and_(unknown, pc.not_equal(col, pa.scalar(2**64 - 1, pa.uint64())))  # "no row"
                        stale = pc.sum(unknown.cast(pa.int64())).as_py() or 0
                        if stale:
                            leaks.append(f"{stale} index entries in {label} point at rows that no longer exist")
        self.add(
            "index_files_clean", not leaks,
            "; ".join(leaks[:8]) or (
                f"read {files} index files (full-text, vector, scalar): no forgotten text, token or id, and every "
                "row they point at exists (the full-text token dictionary is FST-encoded: it is covered by the "
                "posting row check and by keyword_search_misses_it)"
            ),
        )

    def _check_table_metadata(self) -> None:
        """Manifests, transaction files and deletion vectors as raw bytes: a delete predicate lands there."""
        leaks = []
        files = 0
        for name in self._tables():
            root = Path(table_uri(self.store, name))
            # A manifest spells out the schema and the index names: a memory whose text says "agent" or
            # "session" must not count as a leak there, so words of the table's own metadata are not needles.
            needles = self.needles.without(set(), _metadata_words(self.store, name))
            for sub in ("_versions", "_transactions", "_deletions"):
                for path in (root / sub).glob("*"):
                    if not path.is_file():
                        continue
                    files += 1
                    found = needles.hits_in_bytes(path.read_bytes(), with_ids=True)
                    if found:
                        leaks.append(f"{'/'.join(found)} in {name}/{sub}/{path.name}")
        self.add(
            "table_metadata_clean", not leaks,
            "; ".join(leaks[:8]) or f"{files} manifests and transaction files hold no forgotten id or text",
        )

    # -- queries --

    def _check_queries(self) -> None:
        problems = []
        for tier in self.store.tiers_present():
            tbl = self.store.table(tier)
            ids = [i for i in self.ids if self.tiers.get(i) == tier]
            for chunk in _chunks(ids):
                n = tbl.count_rows(F.is_in("id", chunk))
                if n:
                    problems.append(f"{n} rows still in {tier}")
            if self.whole:
                n = tbl.count_rows(F.eq("principal", self.principal))
                if n:
                    problems.append(f"{n} rows of the principal still in {tier}")
        self.add("no_row_by_query", not problems, "; ".join(problems) or "no query returns a forgotten id")
        history_left = 0
        if self.store.has_table(HISTORY):
            hist = self.store.table(HISTORY)
            for chunk in _chunks(self.ids):
                history_left += hist.count_rows(F.is_in("memory_id", chunk))
            if self.whole:
                history_left += hist.count_rows(F.eq("principal", self.principal))
        self.add(
            "edit_history_purged", history_left == 0,
            f"{self.journal.get('history_versions', 0)} earlier versions purged; none left"
            if not history_left else f"{history_left} history rows left",
        )

    def _check_vector_search(self) -> None:
        problems = []
        probes = 0
        for mem_id, vec in self.vectors.items():
            tier = self.tiers.get(mem_id)
            if not tier or not self.store.has_table(tier):
                continue
            tbl = self.store.table(tier)
            query = np.asarray(vec, dtype=np.float32)

            def search(tbl: Any = tbl, query: np.ndarray = query) -> Any:
                return tbl.search(query, vector_column_name="vector").distance_type("cosine").limit(10).select(["id", "_distance"])

            # As recall searches: the principal's rows only (prefiltered), through the ANN index when there is
            # one, exhaustively when not (the data files were read row by row above). A memory still there
            # would be its own nearest neighbour; after a whole-principal forget nothing may come back.
            found = {r["id"] for r in search().where(F.eq("principal", self.principal), prefilter=True).to_list()}
            if found & set(self.ids):
                problems.append(f"vector search in {tier} returns a forgotten memory")
            elif self.whole and found:
                problems.append(f"vector search in {tier} still finds {len(found)} memories of the principal")
            probes += 1
        self.add(
            "vector_search_misses_it", not problems,
            "; ".join(problems) or f"searched with {probes} forgotten memories' own vectors: none came back",
        )

    def _check_keyword_search(self) -> None:
        from memdeck.core.recall.search import keyword_search

        problems = []
        queries = 0
        # Words found nowhere else first: a kept memory sharing common words could outrank a leftover.
        all_words = self.secret.get("tokens", []) if self.secret else []
        active = set(self.needles.tokens)
        words = self.needles.tokens + [w for w in all_words if w not in active]
        batches = [words[i : i + 12] for i in range(0, min(len(words), 12 * 8), 12)]
        for tier in {self.tiers[i] for i in self.ids if i in self.tiers}:
            if not self.store.has_table(tier):
                continue
            tbl = self.store.table(tier)
            for batch in batches:
                queries += 1
                rows = keyword_search(tbl, " ".join(batch), None, 50, ["id"])
                if {r["id"] for r in rows} & set(self.ids):
                    problems.append(f"keyword search in {tier} returns a forgotten memory")
                    break
        self.add(
            "keyword_search_misses_it", not problems,
            "; ".join(problems) or f"{queries} full-text queries with the forgotten words: none came back",
        )

    # -- DuckDB and other files --

    def _store_files(self) -> Iterator[Path]:
        root = Path(self.store.root)
        for dirpath, dirnames, filenames in os.walk(root):
            here = Path(dirpath)
            if here == Path(self.store.layout.lance) or Path(self.store.layout.lance) in here.parents:
                dirnames[:] = []
                continue
            for fn in filenames:
                yield here / fn

    def _duckdb_files(self) -> list[Path]:
        out = []
        for path in self._store_files():
            try:
                with path.open("rb") as fh:
                    head = fh.read(16)
            except OSError:
                continue
            if head[8:12] == _DUCKDB_MAGIC:
                out.append(path)
        return out

    def _check_duckdb_files(self) -> None:
        files = self._duckdb_files()
        if not files:
            self.add("analytics_clean", True, "no DuckDB file in the store")
            return
        leaks = []
        rows = 0
        for path in files:
            for extra in (path, path.with_name(path.name + ".wal")):
                if extra.exists():
                    found = self.needles.hits_in_bytes(extra.read_bytes(), with_ids=True)
                    if found:
                        leaks.append(f"{'/'.join(found)} in the bytes of {extra.name}")
            try:
                n, found_tables = self._query_duckdb(path)
            except Exception as exc:  # noqa: BLE001 - an unreadable analytics file is a failed check
                leaks.append(f"{path.name} could not be queried: {type(exc).__name__}: {exc}")
                continue
            rows += n
            leaks.extend(f"forgotten {what} in {path.name} table {table}" for table, what in found_tables)
        self.add(
            "analytics_clean", not leaks,
            "; ".join(leaks[:8]) or f"{len(files)} DuckDB files: raw bytes and every table ({rows} rows) hold no "
            "forgotten id or text",
        )

    def _query_duckdb(self, path: Path) -> tuple[int, list[tuple[str, str]]]:
        import duckdb

        with contextlib.ExitStack() as stack:
            try:
                con = duckdb.connect(str(path), read_only=True)
            except duckdb.Error:
                # Another process holds it for writing: read a copy instead.
                tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="memdeck-check-")))
                shutil.copy2(path, tmp / path.name)
                wal = path.with_name(path.name + ".wal")
                if wal.exists():
                    shutil.copy2(wal, tmp / wal.name)
                con = duckdb.connect(str(tmp / path.name), read_only=True)
            stack.callback(con.close)
            tables = con.execute(
                "select database_name, schema_name, table_name from duckdb_tables() where not internal"
            ).fetchall()
            rows = 0
            found: list[tuple[str, str]] = []
            for db, schema, table in tables:
                ident = ".".join('"' + part.replace('"', '""') + '"' for part in (db, schema, table))
                data = con.sql(f"select * from {ident}").to_arrow_table()
                rows += data.num_rows
                texts, tokens, ids = self.needles.hits_in_strings(_all_strings(data), with_ids=True)
                if texts or tokens:
                    found.append((table, "text"))
                elif ids:
                    found.append((table, "id"))
            return rows, found

    def _check_other_files(self) -> None:
        """Every other file of the store, raw: journals, vault, configuration, anything an analytics
        feature wrote. Receipts are left out: they hold ids and hashes by construction, and the reason a
        person typed."""
        skip_dirs = {Path(self.store.layout.receipts).resolve()}
        duck = {p.resolve() for p in self._duckdb_files()}
        duck |= {p.with_name(p.name + ".wal") for p in duck}
        leaks = []
        files = 0
        for path in self._store_files():
            resolved = path.resolve()
            if resolved in self.exclude or resolved in duck or any(d in resolved.parents for d in skip_dirs):
                continue
            if resolved == Path(self.store.layout.lock).resolve():
                continue
            try:
                data = path.read_bytes()
            except OSError:
                continue
            files += 1
            found = self.needles.hits_in_bytes(data, with_ids=False)
            if found:
                leaks.append(f"{'/'.join(found)} in {path.relative_to(self.store.root)}")
        self.add(
            "store_files_clean", not leaks,
            "; ".join(leaks[:8]) or f"{files} other files of the store, read raw, hold none of the forgotten text",
        )


__all__ = [
    "ForgetPlan",
    "forget",
    "forget_principal",
    "needles_of",
    "pending",
    "plan_forget",
    "plan_principal",
    "recover_pending",
]

