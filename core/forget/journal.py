"""A journaled run, the shape a purge and a re-scan share: a JSON journal in ``<store>/journal/`` records each
step before the next starts, so a process killed at any point leaves a run that the next open finishes."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Self

from memdeck.core.errors import MemdeckError, StoreLocked
from memdeck.core.files import fsync_dir, write_atomic_text

if TYPE_CHECKING:
    from memdeck.core.storage.engine import Engine

log = logging.getLogger("memdeck.forget")

RECOVERY_WAIT_S = 10.0  # how long an open waits for writers before finishing an interrupted run
CRASH_ENV = "MEMDECK_TEST_CRASH_AT"  # tests: os._exit(137) right after this journal step is recorded
STALL_ENV = "MEMDECK_TEST_STALL_AT"  # tests: the process stops itself (SIGSTOP) there, as a paused machine
Progress = Callable[[str], None]


class JournaledRun:
    """The journal of one run: where it lives, its steps, and resuming it."""

    FORMAT: ClassVar[str]  # the journal's "format" field
    LABEL: ClassVar[str]  # what the run is called in messages
    PREFIX: ClassVar[str]  # journal files are <PREFIX>-<id>.json
    CRASH_PREFIX: ClassVar[str] = ""  # CRASH_ENV names a step of this kind of run as CRASH_PREFIX + step

    def __init__(
        self, store: Engine, path: Path, journal: dict[str, Any], progress: Progress | None = None
    ) -> None:
        self.store = store
        self.path = path
        self.journal = journal
        self.progress = progress or (lambda _msg: None)

    @classmethod
    def load(cls, store: Engine, path: Path) -> Self:
        """A run a killed process left, to be finished (its journal says which steps are done)."""
        try:
            journal = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise MemdeckError(f"{cls.LABEL} journal {path} is unreadable: {exc}") from None
        if not isinstance(journal, dict) or journal.get("format") != cls.FORMAT:
            raise MemdeckError(f"{path} is not a memdeck {cls.LABEL} journal")
        journal.setdefault("extra", {})["resumed"] = True
        return cls(store, path, journal)

    def run(self) -> Any:
        """Do every step the journal does not record as done; what the run returns (receipts)."""
        raise NotImplementedError

    def _saved(self) -> None:
        """After a step is recorded on disk, before the next starts (a purge also records it in the bucket)."""

    def _mark(self, step: str) -> None:
        """Record ``step`` as done, durably, before the next one starts."""
        if step not in self.journal["steps"]:
            self.journal["steps"].append(step)
        write_atomic_text(self.path, json.dumps(self.journal, ensure_ascii=False, sort_keys=True), mode=0o600)
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


def recover(store: Engine, kind: type[JournaledRun], *, wait: float = RECOVERY_WAIT_S) -> list[Any]:
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
