"""A journaled run, the shape a purge and a re-scan share: a JSON journal in ``<store>/journal/`` records each
step before the next starts, so a process killed at any point leaves a run that the next open finishes."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, NotRequired, Self, TypedDict, TypeVar, cast

from memdeck.core.errors import MemdeckError, StoreLocked
from memdeck.core.files import fsync_dir, write_atomic_text

if TYPE_CHECKING:
    from memdeck.core.receipts.types import CascadeItem, Check, ReceiptExtra
    from memdeck.core.storage.engine import Engine

log = logging.getLogger("memdeck.forget")

RECOVERY_WAIT_S = 10.0  # how long an open waits for writers before finishing an interrupted run
CRASH_ENV = "MEMDECK_TEST_CRASH_AT"  # tests: os._exit(137) right after this journal step is recorded
STALL_ENV = "MEMDECK_TEST_STALL_AT"  # tests: the process stops itself (SIGSTOP) there, as a paused machine
Progress = Callable[[str], None]

PURGE_JOURNAL_FORMAT = "memdeck.purge-journal/1"


class PlannedDeletion(TypedDict):
    """A memory the purge was asked for, as planned: its hash is salted only when the receipt is signed
    (a journal copied from elsewhere may hold the salted hash instead)."""

    id: str
    tier: str | None
    content_sha256: NotRequired[str | None]
    content_sha256_salted: NotRequired[str]
    created_at: str | None


class PlannedUpdate(TypedDict):
    """A record the cascade updates: absolute values computed at planning time, so a resumed purge applies
    them once."""

    tier: str
    values: dict[str, Any]


@dataclass
class PurgeJournal:
    """What ``<store>/journal/purge-<id>.json`` records of one purge (format ``memdeck.purge-journal/1``):
    the plan, then each step done, the actions taken and the checks' results. Ids and hashes only: the
    texts the checks search for sit beside it, encrypted."""

    purge_id: str
    started_at: str | None
    trigger: str
    principal: str
    reason: str
    whole_principal: bool
    deleted: list[PlannedDeletion]
    cascade: list[CascadeItem]
    cascade_delete_ids: list[str]
    tiers: dict[str, str]
    tombstones: list[list[str]] = field(default_factory=list)  # [id, content_sha256] pairs
    updates: dict[str, PlannedUpdate] = field(default_factory=dict)
    history_versions: int = 0
    actions: list[str] = field(default_factory=list)
    extra: ReceiptExtra = field(
        default_factory=lambda: cast("ReceiptExtra", {})
    )  # the receipt's added fields
    checks: list[Check] = field(default_factory=list)
    steps: list[str] = field(default_factory=list)

    @property
    def ids(self) -> list[str]:
        """Every memory the purge removes: those asked for, then the cascade's."""
        return [d["id"] for d in self.deleted] + list(self.cascade_delete_ids)

    def to_dict(self) -> dict[str, Any]:
        """The journal as JSON holds it (the bucket's copy too)."""
        return {
            "format": PURGE_JOURNAL_FORMAT,
            "purge_id": self.purge_id,
            "started_at": self.started_at,
            "trigger": self.trigger,
            "principal": self.principal,
            "reason": self.reason,
            "whole_principal": self.whole_principal,
            "deleted": self.deleted,
            "cascade": self.cascade,
            "cascade_delete_ids": self.cascade_delete_ids,
            "tombstones": self.tombstones,
            "tiers": self.tiers,
            "updates": self.updates,
            "history_versions": self.history_versions,
            "actions": self.actions,
            "extra": self.extra,
            "checks": self.checks,
            "steps": self.steps,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_dict(cls, obj: Any) -> PurgeJournal:
        """A journal as :meth:`to_dict` (or any memdeck since format 1) wrote it; MemdeckError otherwise."""
        if not isinstance(obj, dict) or obj.get("format") != PURGE_JOURNAL_FORMAT:
            raise MemdeckError("not a memdeck purge journal")
        try:
            return cls(
                purge_id=str(obj["purge_id"]),
                started_at=obj["started_at"],
                trigger=str(obj["trigger"]),
                principal=str(obj["principal"]),
                reason=str(obj["reason"]),
                whole_principal=bool(obj["whole_principal"]),
                deleted=list(obj["deleted"]),
                cascade=list(obj["cascade"]),
                cascade_delete_ids=[str(i) for i in obj["cascade_delete_ids"]],
                tiers=dict(obj["tiers"]),
                tombstones=[[i, h] for i, h in obj.get("tombstones") or []],
                updates=dict(obj.get("updates") or {}),
                history_versions=int(obj.get("history_versions") or 0),
                actions=list(obj.get("actions") or []),
                extra=cast("ReceiptExtra", dict(obj.get("extra") or {})),
                checks=list(obj.get("checks") or []),
                steps=list(obj.get("steps") or []),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise MemdeckError(
                f"the purge journal is incomplete or damaged ({type(exc).__name__}: {exc})"
            ) from None

    @classmethod
    def from_json(cls, text: str) -> PurgeJournal:
        try:
            obj = json.loads(text)
        except ValueError as exc:
            raise MemdeckError(f"the purge journal is not JSON: {exc}") from None
        return cls.from_dict(obj)


J = TypeVar("J")  # a run's journal: a PurgeJournal, or the re-scan's plain JSON object


class JournaledRun(Generic[J]):
    """The journal of one run: where it lives, its steps, and resuming it."""

    FORMAT: ClassVar[str]  # the journal's "format" field
    LABEL: ClassVar[str]  # what the run is called in messages
    PREFIX: ClassVar[str]  # journal files are <PREFIX>-<id>.json
    CRASH_PREFIX: ClassVar[str] = ""  # CRASH_ENV names a step of this kind of run as CRASH_PREFIX + step

    def __init__(self, store: Engine, path: Path, journal: J, progress: Progress | None = None) -> None:
        self.store = store
        self.path = path
        self.journal = journal
        self.progress = progress or (lambda _msg: None)

    @classmethod
    def load(cls, store: Engine, path: Path) -> Self:
        """A run a killed process left, to be finished (its journal says which steps are done)."""
        try:
            obj = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise MemdeckError(f"{cls.LABEL} journal {path} is unreadable: {exc}") from None
        if not isinstance(obj, dict) or obj.get("format") != cls.FORMAT:
            raise MemdeckError(f"{path} is not a memdeck {cls.LABEL} journal")
        try:
            journal = cls._decode(obj)
        except MemdeckError as exc:
            raise MemdeckError(f"{cls.LABEL} journal {path}: {exc}") from None
        run = cls(store, path, journal)
        run._resumed()
        return run

    @classmethod
    def _decode(cls, obj: dict[str, Any]) -> J:
        """The journal from its JSON object (whose format is checked)."""
        raise NotImplementedError

    def _encode(self) -> str:
        """The journal's JSON text."""
        raise NotImplementedError

    def _resumed(self) -> None:
        """Record in the journal that this run was resumed (its receipt says so)."""
        raise NotImplementedError

    def run(self) -> Any:
        """Do every step the journal does not record as done; what the run returns (receipts)."""
        raise NotImplementedError

    def _saved(self) -> None:
        """After a step is recorded on disk, before the next starts (a purge also records it in the bucket)."""

    def _steps_done(self) -> list[str]:
        raise NotImplementedError

    def _mark(self, step: str) -> None:
        """Record ``step`` as done, durably, before the next one starts."""
        steps = self._steps_done()
        if step not in steps:
            steps.append(step)
        write_atomic_text(self.path, self._encode(), mode=0o600)
        self._saved()
        if os.environ.get(CRASH_ENV) == f"{self.CRASH_PREFIX}{step}":
            os._exit(137)
        if os.environ.get(STALL_ENV) == f"{self.CRASH_PREFIX}{step}":
            os.kill(os.getpid(), signal.SIGSTOP)


def journal_files(store: Engine, prefix: str, suffix: str = ".json") -> list[Path]:
    """Journals (or, with ``suffix=".tmp*"``, half-written temporaries) of runs of one kind."""
    directory = store.layout.journal
    return sorted(directory.glob(f"{prefix}-*{suffix}")) if directory.is_dir() else []


def remove_stale_temp_files(directory: Path, pattern: str = "purge-*.tmp*") -> None:
    """Delete half-written journal or secret files. A run writes them only under the exclusive store lock,
    so under that lock no temporary file is still being written: any there is a killed process's, and it may
    hold the very texts the run is removing."""
    removed = False
    for path in directory.glob(pattern):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
            removed = True
    if removed:
        fsync_dir(directory)


def recover(store: Engine, kind: type[JournaledRun[Any]], *, wait: float = RECOVERY_WAIT_S) -> list[Any]:
    """Finish the runs of ``kind`` a killed process left half done; what each returned, in journal order.

    A run holds the store lock exclusively from start to receipt, so a journal whose lock can be had is
    stale. If another process holds the lock exclusively (it is running one now) the journal is left alone;
    writers hold it shared only for a commit, so recovery waits up to ``wait`` s for them. Failures are
    logged and leave the journal for the next open: opening a store never fails on them.
    """
    if not journal_files(store, kind.PREFIX) and not journal_files(store, kind.PREFIX, ".tmp*"):
        return []
    try:
        with store.lock.shared(timeout=0):
            pass
    except StoreLocked:
        return []  # a run is going on right now
    results = []
    try:
        with store.lock.exclusive(timeout=wait):
            store.refresh()
            remove_stale_temp_files(store.layout.journal, f"{kind.PREFIX}-*.tmp*")
            for path in journal_files(store, kind.PREFIX):
                try:
                    run = kind.load(store, path)
                    log.info("resuming interrupted %s %s", kind.LABEL, path.stem)
                    results.append(run.run())
                except Exception as exc:  # noqa: BLE001 - opening the store must not fail: next open tries again
                    log.warning("could not finish the interrupted %s %s: %s", kind.LABEL, path.name, exc)
    except StoreLocked:
        log.info("interrupted %s left for later: the store stayed busy for %.0f s", kind.LABEL, wait)
    return results
