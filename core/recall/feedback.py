"""Feedback on recalls, and the trust it gives each agent.

An agent (or a person) says a recall, or one recalled memory, was useful or wrong. The verdict counts for
the agents that *wrote* the memories concerned: the trust component of a memory's score is the trust of
its writer. Trust is smoothed with a Beta(1, 1) prior, ``(useful + 1) / (n + 2)``, so an agent with no
feedback sits at 0.5 and one verdict moves it only a little.

Rows live in the ``feedback`` table of the store's log database (see :mod:`memdeck.core.storage.logdb`).
"""

from __future__ import annotations

import logging
import uuid
import weakref
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memdeck.core.errors import MemdeckError, NotFound
from memdeck.core.filters import Scope
from memdeck.core.recall.traces import get_trace
from memdeck.core.records import now
from memdeck.core.storage import browse
from memdeck.core.storage.logdb import connection, log_path, naive_utc

if TYPE_CHECKING:
    from memdeck.core.storage.engine import Engine

log = logging.getLogger("memdeck.feedback")

TRUST_READ_TIMEOUT_S = 1.0  # a recall waits at most this long for the file; then trust is neutral

# Trust per agent of each open store, read once and dropped when feedback is recorded.
_TRUST: weakref.WeakKeyDictionary[Engine, dict[str, float]] = weakref.WeakKeyDictionary()
# A read of it under way in a store's background thread (prefetch_trust), taken over by agent_trust.
_READING: weakref.WeakKeyDictionary[Engine, Future[dict[str, float]]] = weakref.WeakKeyDictionary()


@dataclass
class FeedbackResult:
    """What one feedback call recorded: one row per agent whose memories it concerns."""

    target: str
    useful: bool
    agents: list[str]
    memory_ids: list[str]

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "useful": self.useful,
            "agents": self.agents,
            "memory_ids": self.memory_ids,
        }


def feedback(
    store: Engine,
    target: str,
    agent: str | None = None,
    useful: bool = True,
    *,
    scope: Scope = Scope.everyone(),
) -> FeedbackResult:
    """Record that a recall (``target`` is a trace id) or one memory (a memory id) was useful or wrong.

    ``agent`` is who gives the verdict (kept for the record). For a trace, each distinct writer of the
    memories it returned gets one row; for a memory, its writer does. Raises NotFound when the target is
    not visible in ``scope``.
    """
    if not isinstance(target, str) or not target.strip():
        raise MemdeckError("feedback needs a trace id or a memory id")
    target = target.strip()
    rows: list[tuple[Any, ...]] = []
    stamp = naive_utc(now())
    if target.startswith("trc_"):
        trace = get_trace(store, target, scope)
        returned = [c for c in trace.candidates if c.returned_rank is not None]
        if not returned:
            raise MemdeckError(f"trace {target} returned nothing to give feedback on")
        by_agent: dict[str, list[str]] = {}
        for cand in sorted(returned, key=lambda c: c.returned_rank or 0):
            by_agent.setdefault(cand.agent or "user", []).append(cand.memory_id)
        principal = trace.principals[0] if trace.principals and len(trace.principals) == 1 else None
        for writer in by_agent:
            rows.append((_new_id(), stamp, target, None, principal, writer, agent, bool(useful)))
        memory_ids = [c.memory_id for c in returned]
        agents = list(by_agent)
    else:
        try:
            memory = store.get(target, scope)
        except NotFound:
            raise NotFound(f"no memory or trace with id {target!r}") from None
        rows.append((_new_id(), stamp, None, memory.id, memory.principal, memory.agent, agent, bool(useful)))
        memory_ids, agents = [memory.id], [memory.agent]
    with connection(log_path(store)) as con:
        con.executemany("INSERT INTO feedback VALUES (?, ?, ?, ?, ?, ?, ?, ?)", [list(r) for r in rows])
    invalidate_trust(store)
    return FeedbackResult(target, bool(useful), agents, memory_ids)


def _new_id() -> str:
    return f"fbk_{uuid.uuid4().hex[:20]}"


def _read(store: Engine, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
    """Rows of a query on the feedback log; none when there is no log yet or it stays busy past
    TRUST_READ_TIMEOUT_S (a read of feedback never holds up a recall or the review queue)."""
    try:
        with connection(log_path(store), create=False, timeout=TRUST_READ_TIMEOUT_S) as con:
            return [] if con is None else con.execute(sql, list(params)).fetchall()
    except MemdeckError as exc:
        log.info("feedback not read: %s", exc)
        return []


def feedback_counts(store: Engine) -> dict[str, dict[str, int]]:
    """Per writer agent: how many verdicts were useful and how many in all."""
    rows = _read(store, "SELECT agent, count(*) FILTER (WHERE useful), count(*) FROM feedback GROUP BY agent")
    return {str(a): {"useful": int(u), "total": int(n)} for a, u, n in rows if a is not None}


def outcomes(store: Engine, memory_ids: Sequence[str]) -> dict[str, tuple[int, int]]:
    """Per memory id: (useful, wrong) verdicts given on that memory itself (for a procedure, how often it
    worked and how often it failed when an agent followed it). Ids with no verdict are left out."""
    ids = sorted({str(i) for i in memory_ids})
    if not ids:
        return {}
    rows = _read(
        store,
        "SELECT memory_id, count(*) FILTER (WHERE useful), count(*) FILTER (WHERE NOT useful) "
        "FROM feedback WHERE memory_id IN (SELECT unnest(?)) GROUP BY memory_id",
        [ids],
    )
    return {str(m): (int(u), int(w)) for m, u, w in rows}


def trust(useful: int, total: int) -> float:
    """Beta(1, 1)-smoothed share of useful verdicts."""
    return (useful + 1.0) / (total + 2.0)


def agent_trust(store: Engine) -> dict[str, float]:
    """Trust per agent in [0, 1] from recall feedback (an agent with none is left out: 0.5), read once per
    store until feedback is recorded."""
    trust = _TRUST.get(store)
    if trust is None:
        reading = _READING.pop(store, None)
        trust = reading.result() if reading is not None else trust_by_agent(store)
        _TRUST[store] = trust
    return trust


def prefetch_trust(store: Engine) -> None:
    """Start reading trust in the store's background, unless it is known or already being read: a recall
    asks for it before it embeds its query and scans the tables, so that the log's DuckDB file is opened
    (and DuckDB imported) meanwhile rather than after them, when the answer waits for it."""
    if store in _TRUST or store in _READING:
        return
    reading: Future[dict[str, float]] = Future()
    _READING[store] = reading

    def read() -> None:
        try:
            reading.set_result(trust_by_agent(store))
        except BaseException as exc:  # noqa: BLE001 - handed to the recall that waits for it
            reading.set_exception(exc)

    store.background.start(read, "memdeck-trust")


def invalidate_trust(store: Engine) -> None:
    """Read trust again at its next use (after feedback was recorded)."""
    _TRUST.pop(store, None)
    _READING.pop(store, None)


def trust_by_agent(store: Engine) -> dict[str, float]:
    """Trust in [0, 1] for every agent with feedback (agents without any get 0.5 from the caller)."""
    return {agent: trust(c["useful"], c["total"]) for agent, c in feedback_counts(store).items()}


def trust_table(store: Engine) -> list[dict[str, Any]]:
    """Every agent of the store with its feedback counts and trust, for display (most trusted first)."""
    counts = feedback_counts(store)
    agents = set(counts)
    try:
        agents.update(browse.agents(store))
    except Exception:  # noqa: BLE001 - an empty or half-created store still shows its feedback
        pass
    out: list[dict[str, Any]] = []
    for agent in agents:
        c = counts.get(agent, {"useful": 0, "total": 0})
        out.append(
            {"agent": agent, "useful": c["useful"], "total": c["total"], "trust": round(trust(**c), 4)}
        )
    out.sort(key=lambda r: (-r["trust"], r["agent"]))
    return out
