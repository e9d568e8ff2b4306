"""The maintenance scheduler: maintenance that runs on its own inside the long-running processes (the MCP
server, the app, ``memdeck maintain --watch``).

Tasks, each on its own interval from ``[maintenance]`` and ``[sync]`` in the config:

- ``expiry``: purge memories past their expiry (each a forget with reason ``ttl`` and a receipt), then
  those past a tier's size limit (``[limits]``); its scans are skipped while no table changed (the store's
  own access-count commits aside) and the earliest expiry the last scan found is still ahead;
- ``sessions``: close sessions idle for ``session_idle_minutes`` and consolidate every closed session
  waiting in the queue;
- ``sync``: re-sync the configured MEMORY.md folders whose files changed;
- ``indexes``: finish interrupted purges, compact tables and keep their indices up to date, each table only
  once small fragments, deleted rows or unindexed fragments pile up (``compact_fragment_threshold``).

It runs in one daemon thread, so a recall or a keypress never waits on it. Reads are never blocked either:
a purge takes the store's exclusive lock only for its own duration, and compaction the shared one. A task
that fails is logged, shown in :meth:`Scheduler.status` with its error, and retried after ``retry_s``.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdeck.core.errors import MemdeckError
from memdeck.core.records import iso, now

if TYPE_CHECKING:
    from memdeck.core.receipts.types import Receipt
    from memdeck.core.storage.engine import Engine

log = logging.getLogger("memdeck.scheduler")

TASKS = ("expiry", "sessions", "sync", "indexes")
EXPIRY_FULL_SCAN_S = 600.0  # the expiry task scans at least this often even when no table changed


@dataclass
class TaskStatus:
    """What one task did last, for the app's status bar and ``maintain --watch``."""

    name: str
    interval_s: float
    last_run: datetime | None = None
    ok: bool | None = None
    summary: str = "not run yet"
    error: str | None = None
    runs: int = 0
    failures: int = 0
    detail: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "interval_s": self.interval_s,
            "last_run": iso(self.last_run),
            "ok": self.ok,
            "summary": self.summary,
            "error": self.error,
            "runs": self.runs,
            "failures": self.failures,
        }


def sync_folders(store: Engine) -> list[tuple[Path, str]]:
    """The configured ``[sync] folders``: paths (with ``[sync] principal``) or {path, principal} tables."""
    settings = store.settings.sync
    out = []
    for folder in settings.folders:
        principal = folder.principal or settings.principal
        if not principal:
            raise MemdeckError(
                f"sync.folders: {folder.path} needs a principal (sync.principal or principal = ...)"
            )
        out.append((Path(folder.path).expanduser(), principal))
    return out


def folder_fingerprint(folder: Path) -> str:
    """Changes when a Markdown file in ``folder`` is added, removed, or changed (name, size, mtime)."""
    digest = hashlib.sha256()
    for file in sorted(folder.rglob("*.md")) if folder.is_dir() else []:
        try:
            st = file.stat()
        except OSError:
            continue
        digest.update(f"{file}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return digest.hexdigest()


class Scheduler:
    """Runs the maintenance tasks of one store on their intervals, in a background thread."""

    def __init__(
        self,
        store: Engine,
        *,
        clock: Callable[[], float] = time.monotonic,
        on_change: Callable[[TaskStatus], None] | None = None,
        start_delay_s: float = 0.0,
    ) -> None:
        """``start_delay_s``: nothing runs before this many seconds have passed (a server answers its first
        requests first). The thread runs at the process's priority: at a lower one, starved under load, it
        could hold the store's lock while a foreground command waited for it (the graph indexer, the same
        case, made a command's exit wait 155 s)."""
        self.store = store
        settings = store.settings.maintenance
        self.enabled = settings.enabled
        self.retry_s = settings.retry_s
        self.idle = timedelta(minutes=settings.session_idle_minutes)
        self.folders = sync_folders(store)
        intervals = {
            "expiry": settings.evict_interval_s,
            "sessions": settings.consolidate_interval_s,
            "sync": store.settings.sync.interval_s if self.folders else 0.0,
            "indexes": settings.index_interval_s,
        }
        self.tasks = {name: TaskStatus(name, intervals[name]) for name in TASKS}
        self.clock = clock
        self.on_change = on_change
        # Index upkeep waits one interval (a fresh process need not compact at once); the rest run at start,
        # or once start_delay_s has passed.
        start = clock()
        self._due = {
            name: start + max(start_delay_s, intervals[name] if name == "indexes" else 0.0) for name in TASKS
        }
        self._fingerprints: dict[Path, str] = {}
        self._expiry_seen: dict[str, int] | None = None  # table versions at the last expiry scan
        self._next_expiry: datetime | None = None  # the earliest expiry that scan found
        self._expiry_full_due = 0.0  # a full scan at least this often, whatever the versions say
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._run_lock = threading.Lock()

    # --- running ----------------------------------------------------------------------------------------

    def start(self) -> Scheduler:
        """Start the background thread (idempotent). Does nothing when ``maintenance.enabled`` is false."""
        if not self.enabled or (self._thread is not None and self._thread.is_alive()):
            return self
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name="memdeck-maintenance", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 30.0) -> None:
        """Stop after the task running now (if any) finishes."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def wake(self) -> None:
        """Run what is due now rather than at the next tick (e.g. after a session was closed)."""
        self._wake.set()

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.run_due()
            active = [self._due[n] for n, t in self.tasks.items() if t.interval_s > 0]
            wait = max(0.05, min(active, default=self.clock() + 60) - self.clock())
            self._wake.wait(min(wait, 60.0))
            self._wake.clear()

    def run_due(self) -> list[str]:
        """Run every task that is due now, in this thread. Returns the names run."""
        ran = []
        for name, task in self.tasks.items():
            if self._stop.is_set() and self._thread is not None:
                break
            if task.interval_s > 0 and self.clock() >= self._due[name]:
                self.run(name)
                ran.append(name)
        return ran

    def _task(self, name: str) -> Callable[[], tuple[str, dict[str, Any]]]:
        """What each of TASKS runs (looked up when it runs)."""
        return {
            "expiry": self._task_expiry,
            "sessions": self._task_sessions,
            "sync": self._task_sync,
            "indexes": self._task_indexes,
        }[name]

    def run(self, name: str) -> TaskStatus:
        """Run one task now. A failure is logged, recorded in its status and retried after ``retry_s``."""
        task = self.tasks[name]
        with self._run_lock:
            try:
                summary, detail = self._task(name)()
            except Exception as exc:  # noqa: BLE001 - shown and retried, never silent, never fatal
                log.warning("maintenance task %s failed (retrying in %.0fs): %s", name, self.retry_s, exc)
                task.ok, task.error, task.failures = False, f"{type(exc).__name__}: {exc}", task.failures + 1
                task.summary = f"failed: {exc}"
                self._due[name] = self.clock() + self.retry_s
            else:
                task.ok, task.error, task.summary, task.detail = True, None, summary, detail
                # The interval is the pause after a run: a task that took longer than its interval (a big
                # consolidation, a purge) does not run again at once.
                self._due[name] = self.clock() + task.interval_s
                log.info("maintenance task %s: %s", name, summary)
            task.last_run = now()
            task.runs += 1
        if self.on_change is not None:
            try:
                self.on_change(task)
            except Exception as exc:  # noqa: BLE001 - a display callback never stops maintenance
                log.warning("maintenance status callback failed: %s", exc)
        return task

    def status(self) -> list[TaskStatus]:
        return list(self.tasks.values())

    # --- the tasks --------------------------------------------------------------------------------------

    def _evict(self, due: Callable[[], dict[str, list[str]]], reason: str, trigger: str) -> list[Receipt]:
        from memdeck.core.maintenance.maintain import forget_due

        return forget_due(self.store, due, reason, trigger)

    def _task_expiry(self) -> tuple[str, dict[str, Any]]:
        from memdeck.core.maintenance import maintain
        from memdeck.core.maintenance.limits import over_limit
        from memdeck.core.maintenance.maintain import next_expiry, table_versions

        # Nothing can have expired (or gone over a limit) when no table changed since the last scan and
        # the earliest expiry it found is still ahead: skip the scans.
        at = now()
        if (
            self._expiry_seen is not None
            and self._only_access_counts(self._expiry_seen, table_versions(self.store))
            and (self._next_expiry is None or at < self._next_expiry)
            and self.clock() < self._expiry_full_due
        ):
            upcoming = iso(self._next_expiry) if self._next_expiry else "none"
            return (
                f"evicted 0 expired (no scan: nothing changed, next expiry {upcoming})",
                {"skipped": True, "expired": 0, "over_limit": 0},
            )
        expired = self._evict(lambda: maintain.expired(self.store), "ttl", "ttl")
        limited = self._evict(lambda: over_limit(self.store), "size limit", "limit")
        n_exp = sum(len(r.get("deleted") or []) for r in expired)
        n_lim = sum(len(r.get("deleted") or []) for r in limited)
        failed = [r["receipt_id"] for r in expired + limited if r.get("outcome") != "verified"]
        if failed:
            raise MemdeckError(f"purge checks failed for receipts {', '.join(failed)}")
        # Versions first, then the scan: a write in between changes the versions, so the next run scans.
        self._expiry_seen = table_versions(self.store)
        self._next_expiry = next_expiry(self.store, at)
        self._expiry_full_due = self.clock() + EXPIRY_FULL_SCAN_S
        summary = f"evicted {n_exp} expired" + (f", {n_lim} over the size limit" if n_lim else "")
        return summary, {
            "receipts": [r["receipt_id"] for r in expired + limited],
            "expired": n_exp,
            "over_limit": n_lim,
        }

    def _only_access_counts(self, seen: dict[str, int], current: dict[str, int]) -> bool:
        """Whether every commit since ``seen`` was one of this store's access-count updates."""
        if seen.keys() != current.keys():
            return False
        mine = self.store.access.versions
        return all(
            current[name] == seen[name]
            or set(range(seen[name] + 1, current[name] + 1)) <= mine.get(name, set())
            for name in current
        )

    def _task_sessions(self) -> tuple[str, dict[str, Any]]:
        from memdeck.core.consolidate import consolidate
        from memdeck.core.storage.sessions import (
            close_session,
            done_consolidating,
            idle_sessions,
            pending_consolidation,
        )

        idle = idle_sessions(self.store, self.idle) if self.idle.total_seconds() > 0 else []
        for principal, session in idle:
            close_session(self.store, session, principal, why="idle")
        queue = pending_consolidation(self.store)
        facts = 0
        for principal in sorted({q["principal"] for q in queue}):
            report = consolidate(self.store, principal)
            facts += len(report.facts_added)
            done_consolidating(self.store, [q for q in queue if q["principal"] == principal])
        summary = f"consolidated {len(queue)} session(s), {facts} new fact(s)" + (
            f", closed {len(idle)} idle" if idle else ""
        )
        return summary, {"consolidated": [q["session"] for q in queue], "idle_closed": [s for _, s in idle]}

    def _task_sync(self) -> tuple[str, dict[str, Any]]:
        from memdeck.core.exchange import SyncRefused, sync_markdown

        synced = []
        refused = []
        for folder, principal in self.folders:
            fingerprint = folder_fingerprint(folder)
            if self._fingerprints.get(folder) == fingerprint:
                continue
            # Never confirmed here: a folder that emptied (or was unmounted) past the removal limit is a
            # failure to show, with nothing forgotten, until someone runs `memdeck sync DIR --yes`.
            try:
                sync_markdown(self.store, folder, principal)
            except SyncRefused as exc:
                refused.append(str(exc))
                continue
            self._fingerprints[folder] = fingerprint
            synced.append(str(folder))
        if refused:
            raise MemdeckError("; ".join(refused))
        return f"synced {len(synced)} of {len(self.folders)} folder(s)", {"synced": synced}

    def _task_indexes(self) -> tuple[str, dict[str, Any]]:
        from memdeck.core.maintenance.maintain import maintain

        report = maintain(self.store, evict=False, only_when_due=True)
        if report["errors"]:
            raise MemdeckError("; ".join(report["errors"]))
        done = [name for name, entry in report["tables"].items() if "compaction" in entry]
        return f"compacted {len(done)} of {len(report['tables'])} table(s)", {
            "seconds": report["seconds"],
            "compacted": done,
        }


__all__ = ["TASKS", "Scheduler", "TaskStatus", "folder_fingerprint", "sync_folders"]
