"""The recall trace log: every recall's query, scope, profile, candidates and result.

The log is two tables of the store's log database (:mod:`memdeck.core.storage.logdb`, one DuckDB file that
also holds the judgments, the feedback and the injection ledger). Traces are written from a background
thread so a recall never waits on the file, several recalls in one transaction; :func:`flush` (and
``Store.close``, which joins the thread) writes what is pending. A forget deletes through
:func:`memdeck.core.storage.logdb.scrub`, which flushes this writer first.

Tables (all keyed by opaque ids; memory text is never written here, queries are):

- ``traces``: trace_id, recalled_at, principals (NULL: the whole store), agent, query, source, tiers, k,
  profile_name, profile (JSON), keyword_only, returned (memory ids, best first)
- ``trace_candidates``: one row per candidate of a trace with its components, raw channel values and
  channel ranks, and ``returned_rank`` (NULL when it was not returned)
- ``judgments`` and ``feedback``: see :mod:`memdeck.core.tuning.evaluate` and :mod:`memdeck.core.recall.feedback`
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from memdeck.core.config import COMPONENTS, Profile, TracesSettings
from memdeck.core.filters import Scope
from memdeck.core.records import STORED_TIERS, now
from memdeck.core.storage.access import Background
from memdeck.core.storage.forgotten import forgotten_ids
from memdeck.core.storage.logdb import (
    aware_utc,
    connection,
    log_path,
    naive_utc,
    on_rewrite,
    path_lock,
    scrub_epoch,
    scrub_time,
    turn_wanted,
    wait_for_turns,
)

if TYPE_CHECKING:
    from memdeck.core.storage.engine import Engine

log = logging.getLogger("memdeck.traces")

# The components in the order of the log's columns; graph, added later, is at the end with its rank.
_LOGGED = tuple(c for c in COMPONENTS if c != "graph")
CANDIDATE_COLUMNS = (
    "trace_id",
    "memory_id",
    "tier",
    "principal",
    "agent",
    "returned_rank",
    "score",
    *_LOGGED,
    "similarity",
    "keyword",
    "vector_rank",
    "keyword_rank",
    "age_days",
    "graph",
    "graph_rank",
)

TRACE_FLUSH_DELAY = 1.0  # seconds a queued trace waits for others before the writer opens the log
PRUNE_EVERY_S = 60.0


# --- writing ----------------------------------------------------------------------------------------


@dataclass
class _Pending:
    trace: dict[str, Any] | None
    candidates: list[tuple[Any, ...]]
    epoch: tuple[int, int] | None = None  # the scrub marker when it was queued (see scrub_epoch)
    injections: list[tuple[Any, ...]] = field(default_factory=list)
    build: Callable[[], list[tuple[Any, ...]]] | None = None  # makes ``candidates`` (in the writer's thread)

    def built(self) -> _Pending | None:
        """This record with its rows made; None when they cannot be (a query the redactor failed on): the
        trace is then lost, never written unredacted or half made."""
        if self.build is not None:
            try:
                self.candidates, self.build = self.build(), None
            except Exception as exc:  # noqa: BLE001 - a lost trace never fails anything else
                log.warning("a trace was not written: %s", exc)
                return None
        return self

    def recorded_at(self) -> datetime | None:
        """When the recall (or the injection) this record logs happened (naive UTC)."""
        if self.trace is not None:
            return cast("datetime | None", self.trace.get("recalled_at"))
        return cast("datetime | None", self.injections[0][1]) if self.injections else None

    def ids(self) -> set[str]:
        """Every memory id this record would write (candidates, returned, injected)."""
        returned = (self.trace or {}).get("returned") or []
        given = {str(r[7]) for r in self.injections if r[7] is not None}
        return {str(c[1]) for c in self.candidates} | {str(i) for i in returned} | given


class TraceWriter:
    """Queues trace records of one store file and writes them from a short-lived background thread."""

    def __init__(
        self, path: Path, settings: TracesSettings, background: Background, root: Path | None = None
    ) -> None:
        self.path = path
        self.root = root if root is not None else path.parent  # the store, whose tombstones are checked
        self.settings = settings
        # Set by Store.close: a writer waiting out its delay writes at once.
        self.background = background
        self._pending: list[_Pending] = []
        self._lock = threading.Lock()
        self._running = False  # a writer thread is on its way; it re-checks the queue before it ends
        self._last_prune = 0.0

    def submit(self, record: _Pending) -> None:
        if record.epoch is None:
            record.epoch = scrub_epoch(self.path)
        with self._lock:
            self._pending.append(record)
            if self._running:
                return
            self._running = True
        # Store.close joins the store's background threads, which is what flushes traces when a store closes.
        self.background.start(self._run, "memdeck-traces")

    def _run(self) -> None:
        # Recalls in quick succession share one DuckDB transaction: opening, writing and checkpointing the
        # file for each recall would cost an agent's loop more CPU than the recall itself.
        self.background.wake.wait(TRACE_FLUSH_DELAY)
        while True:
            try:
                wait_for_turns(self.path)  # a scrub waiting for the file goes first
                self.flush(give_way=True)
            except Exception as exc:  # noqa: BLE001 - a lost trace never fails anything else
                log.warning("trace write failed: %s", exc)
                with self._lock:
                    dropped, self._pending = len(self._pending), []
                    self._running = False
                if dropped:
                    log.warning("%d queued traces dropped", dropped)
                return
            with self._lock:  # decided under the lock, so a record queued meanwhile is never stranded
                if not self._pending:
                    self._running = False
                    return

    def flush(self, *, give_way: bool = False) -> int:
        """Write everything pending now, in the calling thread. Returns the number of traces written.

        ``give_way`` (the background writer): stop after a batch when a scrub is waiting for the file, so a
        busy agent's stream of recalls cannot keep a forget waiting; what is left is written after it."""
        written = 0
        with path_lock(self.path):
            while True:
                with self._lock:
                    batch, self._pending = self._pending, []
                if not batch:
                    return written
                if give_way and written and turn_wanted(self.path):
                    with self._lock:
                        self._pending = batch + self._pending
                    return written
                batch = [b for b in (p.built() for p in batch) if b is not None]
                try:
                    with connection(self.path) as con:
                        # Decided under the file lock a purge's scrub also takes: a trace queued before a
                        # scrub, or naming a memory forgotten since, is dropped rather than written back.
                        # A record made before the scrub began but queued after it is dropped too: its query
                        # was asked before the forget, so the scrub would have taken it.
                        epoch, gone = scrub_epoch(self.path), forgotten_ids(self.root)
                        began = scrub_time(self.path)
                        kept = [
                            p
                            for p in batch
                            if p.epoch == epoch
                            and not (gone and p.ids() & gone)
                            and not (began is not None and (p.recorded_at() or began) < began)
                        ]
                        if len(kept) < len(batch):
                            log.info(
                                "%d queued traces dropped: a purge ran since they were queued",
                                len(batch) - len(kept),
                            )
                        if kept:
                            _insert(con, kept)
                        written += len(kept)
                        if time.monotonic() - self._last_prune > PRUNE_EVERY_S:
                            _prune(con, self.settings)
                            self._last_prune = time.monotonic()
                except Exception:
                    with self._lock:  # put the batch back: a later flush may succeed
                        self._pending = batch + self._pending
                    raise


def _insert(con: Any, batch: list[_Pending]) -> None:
    import pyarrow as pa

    traces = pa.Table.from_pylist([p.trace for p in batch if p.trace is not None], schema=_TRACE_SCHEMA())
    given = [r for p in batch for r in p.injections]
    rows = [c for p in batch for c in p.candidates]
    cands = pa.Table.from_arrays(
        [pa.array([r[i] for r in rows], type=t) for i, t in enumerate(_CAND_TYPES())],
        names=list(CANDIDATE_COLUMNS),
    )
    con.execute("BEGIN")
    try:
        con.register("_new_traces", traces)
        con.register("_new_cands", cands)
        con.execute("INSERT INTO traces SELECT * FROM _new_traces")
        con.execute("INSERT INTO trace_candidates SELECT * FROM _new_cands")
        if given:
            con.executemany(
                "INSERT INTO injections VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", [list(r) for r in given]
            )
        con.execute("COMMIT")
    except Exception:
        con.execute("ROLLBACK")
        raise
    finally:
        con.unregister("_new_traces")
        con.unregister("_new_cands")


def _TRACE_SCHEMA() -> Any:
    import pyarrow as pa

    return pa.schema(
        [
            ("trace_id", pa.string()),
            ("recalled_at", pa.timestamp("us")),
            ("principals", pa.list_(pa.string())),
            ("agent", pa.string()),
            ("query", pa.string()),
            ("source", pa.string()),
            ("tiers", pa.list_(pa.string())),
            ("k", pa.int32()),
            ("profile_name", pa.string()),
            ("profile", pa.string()),
            ("keyword_only", pa.bool_()),
            ("returned", pa.list_(pa.string())),
        ]
    )


def _CAND_TYPES() -> list[Any]:
    import pyarrow as pa

    s, f, i = pa.string(), pa.float64(), pa.int32()
    return [s, s, s, s, s, i, f, *([f] * len(_LOGGED)), f, f, i, i, f, f, i]


def _prune(con: Any, settings: TracesSettings) -> None:
    """Apply the retention settings: age first, then the newest ``max_traces``."""
    days = settings.retention_days
    if days > 0:
        con.execute("DELETE FROM traces WHERE recalled_at < ?", [naive_utc(now() - timedelta(days=days))])
        con.execute("DELETE FROM injections WHERE given_at < ?", [naive_utc(now() - timedelta(days=days))])
    most = settings.max_traces
    if most > 0:
        con.execute(
            "DELETE FROM traces WHERE trace_id IN (SELECT trace_id FROM traces ORDER BY recalled_at DESC OFFSET ?)",
            [most],
        )
    con.execute("DELETE FROM trace_candidates WHERE trace_id NOT IN (SELECT trace_id FROM traces)")


_writers: weakref.WeakKeyDictionary[Any, TraceWriter] = weakref.WeakKeyDictionary()


def settings_of(store: Engine) -> TracesSettings:
    return store.settings.traces


def install(store: Engine) -> None:
    """Log every recall of ``store`` (the store calls this when it opens). Idempotent."""
    if any(getattr(h, "__memdeck_trace_hook__", False) for h in store.recall_hooks):
        return

    def hook(result: Any) -> None:
        if not settings_of(store).enabled:
            return
        log_recall(store, result)

    hook.__memdeck_trace_hook__ = True  # type: ignore[attr-defined]
    store.recall_hooks.append(hook)


def writer(store: Engine) -> TraceWriter:
    w = _writers.get(store)
    if w is None:
        w = TraceWriter(log_path(store), settings_of(store), store.background, root=store.root)
        _writers[store] = w
        on_rewrite(store, w.flush)  # a scrub writes the queued traces first, then deletes with the rest
    return w


def new_trace_id() -> str:
    return f"trc_{uuid.uuid4().hex[:20]}"


def log_recall(store: Engine, result: Any) -> str:
    """Queue one recall for the log and set ``result.trace_id``. Cheap: the record is made and written in
    the writer's thread."""
    result.trace_id = result.trace_id or new_trace_id()
    # The query is written to disk, so it is redacted like any memory text (the caller keeps the original).
    # A whole-store recall has no principal: its values go into the operator's own vault.
    principals = [] if result.scope.is_everyone else list(result.scope.principals)
    principal = principals[0] if principals else None

    def redact(query: str) -> str:
        # In the writer's thread, after the answer: the privacy package (its redaction rules) loads there.
        from memdeck.core.privacy.vault import OPERATOR_VAULT

        return store.redact(query, OPERATOR_VAULT if principal is None else principal)

    writer(store).submit(trace_record(result, redact, settings_of(store).max_candidates))
    return str(result.trace_id)


def trace_record(result: Any, redact: Callable[[str], str], max_candidates: int = 0) -> _Pending:
    """The rows one recall adds to the log: its trace (the query passed through ``redact``) and one row per
    candidate. What the recall's thread must fix is taken now (the ids returned, the profile as it was:
    the app tunes weights on the result's profile afterwards); the rows are made when the record is
    written, in the writer's thread (``_Pending.build``)."""
    trace_id = result.trace_id or new_trace_id()
    returned = [item.memory.id for item in result.items]
    profile = result.profile
    as_recalled = profile.with_weights()
    trace = {
        "trace_id": trace_id,
        "recalled_at": naive_utc(result.at),
        "principals": None if result.scope.is_everyone else list(result.scope.principals),
        "agent": result.agent,
        "query": None,
        "source": result.source,
        "tiers": list(result.tiers),
        "k": int(result.k),
        "profile_name": profile.name,
        "profile": None,
        "keyword_only": bool(result.keyword_only),
        "returned": returned,
    }
    cset, keyword_only, query = result.candidates, bool(result.keyword_only), result.query

    def build() -> list[tuple[Any, ...]]:
        trace["query"] = redact(query)
        trace["profile"] = json.dumps(as_recalled.to_dict(), sort_keys=True)
        return candidate_rows(trace_id, cset, as_recalled, keyword_only, returned, max_candidates)

    return _Pending(trace, [], build=build)


def logged_positions(cset: Any, total: Any, returned: Sequence[str], max_candidates: int) -> Any:
    """Which candidates a trace logs when there are more than ``max_candidates`` (None: every one): the
    results, every memory a search channel returned (a vector, keyword or graph rank), then the best others by
    score (ties as a recall breaks them) until ``max_candidates`` are logged. A replay re-ranks what was
    logged: the memories left out are those no channel found that scored below all of these."""
    import numpy as np

    n = len(cset)
    if not max_candidates or n <= max_candidates:
        return None
    keep = (cset.columns.ranks != 0).any(axis=0)
    wanted = set(returned)
    keep[[i for i, mem_id in enumerate(cset.columns.ids) if mem_id in wanted]] = True
    room = max_candidates - int(keep.sum())
    if room > 0:
        others = np.flatnonzero(~keep)
        keep[others[np.lexsort((others, -cset.similarity[others], -total[others]))[:room]]] = True
    return np.flatnonzero(keep)


def candidate_rows(
    trace_id: str,
    cset: Any,
    profile: Profile,
    keyword_only: bool,
    returned: list[str],
    max_candidates: int = 0,
) -> list[tuple[Any, ...]]:
    """One row per logged candidate of a recall (``logged_positions``): its scores under ``profile``, its
    channels' ranks, its result rank."""
    if not len(cset):
        return []
    rank_of = {mem_id: n for n, mem_id in enumerate(returned, start=1)}
    total, comps = cset.scores(profile, keyword_only)
    at = logged_positions(cset, total, returned, max_candidates)
    cols = cset.columns
    ids, principals, agents = list(cols.ids), list(cols.principals), list(cols.agents)
    similarity, keyword, age_days, ranks, tier = (
        cset.similarity,
        cset.keyword,
        cset.age_days,
        cols.ranks,
        cols.tier,
    )
    if at is not None:
        positions = at.tolist()
        ids, principals, agents = ([v[i] for i in positions] for v in (ids, principals, agents))
        total, comps, similarity, keyword, age_days = (
            total[at],
            comps[:, at],
            similarity[at],
            keyword[at],
            age_days[at],
        )
        ranks, tier = ranks[:, at], tier[at]
    # Column by column, converted once (a recall as agents call it logs its candidates).
    logged = comps[[COMPONENTS.index(c) for c in _LOGGED]].T.tolist()
    graph = comps[COMPONENTS.index("graph")].tolist()
    vec_rank, kw_rank, graph_rank = ([r or None for r in channel] for channel in ranks.tolist())
    tiers = [STORED_TIERS[t] for t in tier.tolist()]
    return [
        (
            trace_id,
            mem_id,
            tier,
            principal,
            agent,
            rank_of.get(mem_id),
            score,
            *parts,
            sim,
            kw,
            vr,
            kr,
            age,
            g,
            gr,
        )
        for mem_id, tier, principal, agent, score, parts, sim, kw, vr, kr, age, g, gr in zip(
            ids,
            tiers,
            principals,
            agents,
            total.tolist(),
            logged,
            similarity.tolist(),
            keyword.tolist(),
            vec_rank,
            kw_rank,
            age_days.tolist(),
            graph,
            graph_rank,
            strict=True,
        )
    ]


# --- the injection ledger: what each agent was given, in which session ---------------------------------


def log_injection(
    store: Engine,
    *,
    principal: str,
    agent: str | None,
    session: str | None,
    kind: str,
    ids: Sequence[str],
    trace_id: str | None = None,
) -> str:
    """Record that ``agent`` was given these memory ids (a context pack, an MCP recall) in ``session``.
    Only ids are written, never text. Queued like a trace; returns the injection id."""
    injection_id = f"inj_{uuid.uuid4().hex[:20]}"
    at = naive_utc(now())
    rows: list[tuple[Any, ...]] = [
        (injection_id, at, trace_id, principal, agent, session, kind, str(mem_id), n)
        for n, mem_id in enumerate(ids, start=1)
    ]
    if not rows:  # an empty pack is worth recording too: the agent asked and got nothing
        rows = [(injection_id, at, trace_id, principal, agent, session, kind, None, 0)]
    if settings_of(store).enabled:
        writer(store).submit(_Pending(None, [], injections=rows))
    return injection_id


def injections(
    store: Engine,
    *,
    scope: Scope = Scope.everyone(),
    agent: str | None = None,
    session: str | None = None,
    memory_id: str | None = None,
    limit: int = 1000,
) -> list[dict[str, Any]]:
    """What was given, newest first: one dict per injection with its ids in order. Filters: the agent, the
    session, or the injections that included ``memory_id`` ("which sessions used this memory")."""
    flush(store)
    conds, params = ["1 = 1"], []
    if not scope.is_everyone:
        conds.append(f"principal IN ({', '.join('?' for _ in scope.principals or ())})")
        params += list(scope.principals or ())
    for column, value in (("agent", agent), ("session", session)):
        if value is not None:
            conds.append(f"{column} = ?")
            params.append(value)
    if memory_id is not None:
        conds.append("injection_id IN (SELECT injection_id FROM injections WHERE memory_id = ?)")
        params.append(memory_id)
    sql = (
        "SELECT injection_id, min(given_at), any_value(trace_id), any_value(principal), any_value(agent), "
        "any_value(session), any_value(kind), list(memory_id ORDER BY position) FILTER (WHERE memory_id IS NOT NULL) "
        f"FROM injections WHERE {' AND '.join(conds)} GROUP BY injection_id ORDER BY min(given_at) DESC LIMIT ?"
    )
    with connection(log_path(store), create=False) as con:
        if con is None:
            return []
        rows = con.execute(sql, [*params, int(limit)]).fetchall()
    return [
        {
            "injection_id": r[0],
            "given_at": aware_utc(r[1]).isoformat().replace("+00:00", "Z"),
            "trace_id": r[2],
            "principal": r[3],
            "agent": r[4],
            "session": r[5],
            "kind": r[6],
            "ids": list(r[7] or []),
        }
        for r in rows
    ]


def sessions_using(store: Engine, memory_id: str, scope: Scope = Scope.everyone()) -> list[dict[str, Any]]:
    """The (agent, session) pairs that were given ``memory_id``, with how often and when last."""
    out: dict[tuple[Any, Any], dict[str, Any]] = {}
    for inj in injections(store, scope=scope, memory_id=memory_id, limit=100_000):
        key = (inj["agent"], inj["session"])
        entry = out.setdefault(
            key, {"agent": inj["agent"], "session": inj["session"], "times": 0, "last": inj["given_at"]}
        )
        entry["times"] += 1
    return list(out.values())


def sessions_using_any(
    store: Engine, memory_ids: Sequence[str], scope: Scope = Scope.everyone()
) -> list[dict[str, Any]]:
    """The (agent, session) pairs that were given any of ``memory_ids`` (one query, for a forget's
    preview): how many injections, when last, and which of the ids; most recent first."""
    ids = sorted({str(i) for i in memory_ids})
    if not ids:
        return []
    flush(store)
    conds = [f"memory_id IN ({', '.join('?' for _ in ids)})"]
    params: list[Any] = list(ids)
    if not scope.is_everyone:
        conds.append(f"principal IN ({', '.join('?' for _ in scope.principals or ())})")
        params += list(scope.principals or ())
    sql = (
        "SELECT agent, session, count(DISTINCT injection_id), max(given_at), list(DISTINCT memory_id ORDER BY memory_id) "
        f"FROM injections WHERE {' AND '.join(conds)} GROUP BY agent, session ORDER BY max(given_at) DESC"
    )
    with connection(log_path(store), create=False) as con:
        if con is None:
            return []
        rows = con.execute(sql, params).fetchall()
    return [
        {
            "agent": r[0],
            "session": r[1],
            "times": int(r[2]),
            "last": aware_utc(r[3]).isoformat().replace("+00:00", "Z"),
            "ids": list(r[4] or []),
        }
        for r in rows
    ]


def prune(store: Engine) -> None:
    """Apply the retention settings now (the writer also does so about once a minute)."""
    flush(store)
    path = log_path(store)
    with connection(path, create=False) as con:
        if con is not None:
            _prune(con, settings_of(store))


def flush(store: Engine) -> int:
    """Write this store's pending traces now (the app and tests call this before reading the log)."""
    w = _writers.get(store)
    return w.flush() if w is not None else 0


# --- reading ----------------------------------------------------------------------------------------


@dataclass
class TraceCandidate:
    memory_id: str
    tier: str
    principal: str
    agent: str | None
    returned_rank: int | None
    score: float
    components: dict[str, float]
    similarity: float
    keyword: float
    ranks: dict[str, int | None]
    age_days: float

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.memory_id,
            "tier": self.tier,
            "principal": self.principal,
            "agent": self.agent,
            "returned_rank": self.returned_rank,
            "score": round(self.score, 6),
            "components": {k: round(v, 6) for k, v in self.components.items()},
            "channels": {"similarity": round(self.similarity, 6), "keyword": round(self.keyword, 6)},
            "ranks": dict(self.ranks),
            "age_days": round(self.age_days, 4),
        }


@dataclass
class Trace:
    """One logged recall."""

    trace_id: str
    at: datetime
    principals: list[str] | None
    agent: str | None
    query: str
    source: str
    tiers: list[str]
    k: int
    profile: dict[str, Any]
    keyword_only: bool
    returned: list[str]
    candidates: list[TraceCandidate]

    def to_json(self, with_candidates: bool = True) -> dict[str, Any]:
        from memdeck.core.records import iso

        out: dict[str, Any] = {
            "trace_id": self.trace_id,
            "at": iso(self.at),
            "principals": self.principals,
            "agent": self.agent,
            "query": self.query,
            "source": self.source,
            "tiers": self.tiers,
            "k": self.k,
            "profile": self.profile,
            "keyword_only": self.keyword_only,
            "returned": self.returned,
        }
        if with_candidates:
            out["candidates"] = [c.to_json() for c in self.candidates]
        return out


def _visible_sql(scope: Scope) -> tuple[str, list[Any]]:
    """Traces a scope may read: those whose recall scope lay inside it (the whole store sees all)."""
    if scope.is_everyone:
        return "TRUE", []
    return "principals IS NOT NULL AND list_has_all(?, principals)", [list(scope.principals or ())]


def list_traces(
    store: Engine,
    *,
    scope: Scope = Scope.everyone(),
    agent: str | None = None,
    since: datetime | None = None,
    limit: int = 50,
    offset: int = 0,
) -> list[Trace]:
    """The newest traces first, without their candidates (see :func:`get_trace`)."""
    flush(store)
    where, params = _visible_sql(scope)
    if agent is not None:
        where += " AND agent = ?"
        params.append(agent)
    if since is not None:
        where += " AND recalled_at >= ?"
        params.append(naive_utc(since))
    with connection(log_path(store), create=False) as con:
        if con is None:
            return []
        rows = con.execute(
            f"SELECT trace_id, recalled_at, principals, agent, query, source, tiers, k, profile, keyword_only, returned "
            f"FROM traces WHERE {where} ORDER BY recalled_at DESC, trace_id LIMIT ? OFFSET ?",
            [*params, int(limit), int(offset)],
        ).fetchall()
    return [_trace_from_row(r, []) for r in rows]


def count_traces(store: Engine, *, scope: Scope = Scope.everyone(), agent: str | None = None) -> int:
    flush(store)
    where, params = _visible_sql(scope)
    if agent is not None:
        where += " AND agent = ?"
        params.append(agent)
    with connection(log_path(store), create=False) as con:
        if con is None:
            return 0
        return int(con.execute(f"SELECT count(*) FROM traces WHERE {where}", params).fetchone()[0])


def get_trace(store: Engine, trace_id: str, scope: Scope = Scope.everyone()) -> Trace:
    """One trace with its candidates (best score first). NotFound if it is not visible in ``scope``."""
    from memdeck.core.errors import NotFound

    flush(store)
    where, params = _visible_sql(scope)
    with connection(log_path(store), create=False) as con:
        row = None
        if con is not None:
            row = con.execute(
                f"SELECT trace_id, recalled_at, principals, agent, query, source, tiers, k, profile, keyword_only, returned "
                f"FROM traces WHERE trace_id = ? AND {where}",
                [trace_id, *params],
            ).fetchone()
        if row is None:
            raise NotFound(f"no trace with id {trace_id!r}")
        cands = con.execute(
            f"SELECT {', '.join(CANDIDATE_COLUMNS[1:])} FROM trace_candidates WHERE trace_id = ? "
            f"ORDER BY score DESC, memory_id",
            [trace_id],
        ).fetchall()
    return _trace_from_row(row, [_candidate_from_row(c) for c in cands])


def traces_of_agent(
    store: Engine, agent: str, scope: Scope = Scope.everyone(), limit: int = 1000
) -> list[Trace]:
    """Every trace of an agent (newest first, up to ``limit``), with candidates."""
    return [
        get_trace(store, t.trace_id, scope) for t in list_traces(store, scope=scope, agent=agent, limit=limit)
    ]


def _trace_from_row(row: Sequence[Any], cands: list[TraceCandidate]) -> Trace:
    trace_id, at, principals, agent, query, source, tiers, k, profile, keyword_only, returned = row
    return Trace(
        trace_id=trace_id,
        at=aware_utc(at),
        principals=list(principals) if principals is not None else None,
        agent=agent,
        query=query,
        source=source,
        tiers=list(tiers or []),
        k=int(k),
        profile=json.loads(profile or "{}"),
        keyword_only=bool(keyword_only),
        returned=list(returned or []),
        candidates=cands,
    )


def _candidate_from_row(row: Sequence[Any]) -> TraceCandidate:
    memory_id, tier, principal, agent, returned_rank, score, *rest = row
    comps = dict(zip(_LOGGED, (float(v) for v in rest[: len(_LOGGED)]), strict=True))
    similarity, keyword, vector_rank, keyword_rank, age_days, graph, graph_rank = rest[len(_LOGGED) :]
    comps["graph"] = float(graph or 0.0)
    return TraceCandidate(
        memory_id=memory_id,
        tier=tier if tier in STORED_TIERS else str(tier),
        principal=principal,
        agent=agent,
        returned_rank=returned_rank,
        score=float(score),
        components=comps,
        similarity=float(similarity or 0),
        keyword=float(keyword or 0),
        ranks={"vector": vector_rank, "keyword": keyword_rank, "graph": graph_rank},
        age_days=float(age_days or 0),
    )
