"""Sessions: an agent's episodes grouped by ``session``. Closing one marks its episodes closed and queues
the principal for consolidation (facts from the episodes); the maintenance scheduler runs the queue, and
closes sessions that went idle.

The queue is a small JSON file in the store directory (``consolidation-queue.json``), written atomically
under a file lock, so the MCP server that closes a session and the app's scheduler that consolidates it
can be different processes.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

from memdeck.core import filters as F
from memdeck.core.errors import MemdeckError, NotFound
from memdeck.core.files import flock, write_atomic_text
from memdeck.core.records import check_principal, iso, now
from memdeck.core.storage.objectstore import write_errors

if TYPE_CHECKING:
    from memdeck.core.storage.engine import Engine

QUEUE_FILE = "consolidation-queue.json"


def _queue_path(store: Engine) -> Path:
    return store.root / QUEUE_FILE


def _read_queue(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [d for d in data if isinstance(d, dict)] if isinstance(data, list) else []


def queue_consolidation(store: Engine, principal: str, session: str, why: str) -> None:
    path = _queue_path(store)
    with flock(path.with_name(path.name + ".lock"), exclusive=True, timeout=30):
        queue = _read_queue(path)
        if not any(q.get("principal") == principal and q.get("session") == session for q in queue):
            queue.append({"principal": principal, "session": session, "why": why, "queued_at": iso(now())})
            write_atomic_text(path, json.dumps(queue, indent=1) + "\n", 0o600)


def pending_consolidation(store: Engine) -> list[dict[str, Any]]:
    """Sessions closed (or gone idle) whose consolidation has not run yet, oldest first."""
    return _read_queue(_queue_path(store))


def done_consolidating(store: Engine, entries: list[dict[str, Any]]) -> None:
    """Take these entries off the queue (after their principal was consolidated)."""
    path = _queue_path(store)
    keys = {(e.get("principal"), e.get("session")) for e in entries}
    with flock(path.with_name(path.name + ".lock"), exclusive=True, timeout=30):
        queue = [q for q in _read_queue(path) if (q.get("principal"), q.get("session")) not in keys]
        write_atomic_text(path, json.dumps(queue, indent=1) + "\n", 0o600)


class SessionClosed(TypedDict):
    """The answer to closing a session: its episodes, how many were still open, whether its consolidation
    is queued and why it closed (``closed``, ``idle``); ``message`` when there was nothing to close, and
    ``digest`` with what an agent handed over (:meth:`memdeck.core.sessions.AgentSession.close_with_digest`)."""

    session: str
    principal: str
    episodes: int
    closed: int
    queued: bool
    why: str
    message: NotRequired[str]
    digest: NotRequired[dict[str, Any]]


def close_session(store: Engine, session: str, principal: str, *, why: str = "closed") -> SessionClosed:
    """Mark every open episode of ``session`` (of ``principal``) closed and queue its consolidation."""
    principal = check_principal(principal)
    if not isinstance(session, str) or not session.strip() or "\x00" in session:
        raise MemdeckError("a session id is required")
    if not store.has_table("episodic"):
        raise NotFound(f"no session {session!r}")
    where = F.all_of(
        F.eq("principal", principal), F.eq("session", session), F.ne("state", "forgotten-pending")
    )
    rows = store.scan("episodic", ["id", "closed"], where)
    if rows.num_rows == 0:
        raise NotFound(f"no session {session!r}")
    still_open = [
        i for i, c in zip(rows["id"].to_pylist(), rows["closed"].to_pylist(), strict=True) if c is False
    ]
    if still_open:
        with store.lock.shared(), write_errors():
            store.read_retry(
                lambda: store.table("episodic").update(
                    where=F.is_in("id", still_open), values={"closed": True, "updated_at": now()}
                )
            )
    queue_consolidation(store, principal, session, why)
    return {
        "session": session,
        "principal": principal,
        "episodes": rows.num_rows,
        "closed": len(still_open),
        "queued": True,
        "why": why,
    }


def idle_sessions(store: Engine, idle: timedelta, at: datetime | None = None) -> list[tuple[str, str]]:
    """(principal, session) of sessions with open episodes and no new episode for ``idle``."""
    if not store.has_table("episodic"):
        return []
    at = at or now()
    where = F.all_of(F.eq("closed", False), F.ne("state", "forgotten-pending"))
    rows = store.scan("episodic", ["principal", "session", "created_at"], where)
    if rows.num_rows == 0:
        return []
    latest: dict[tuple[str, str], datetime] = {}
    for p, s, c in zip(
        rows["principal"].to_pylist(),
        rows["session"].to_pylist(),
        rows["created_at"].to_pylist(),
        strict=True,
    ):
        if s:
            latest[(p, s)] = max(latest.get((p, s), c), c)
    return sorted(k for k, last in latest.items() if last <= at - idle)


__all__ = [
    "close_session",
    "done_consolidating",
    "idle_sessions",
    "pending_consolidation",
    "queue_consolidation",
]
