"""The store's log database: one DuckDB file (``StoreLayout.analytics``, ``analytics.duckdb``) that holds
the recall trace log (``traces``, ``trace_candidates``), the relevance ``judgments``, agents' ``feedback`` and
the ``injections`` ledger. Not to be confused with :mod:`memdeck.core.analytics`, the in-memory DuckDB that
scans the Lance tables for the analytics screen and keeps no file.

DuckDB lets one process write a file at a time and a second writer fails at once with a lock error, while the
app, the command line and agents may all write at the same moment. So nothing keeps a connection open: each
use connects, works, closes (:func:`connection`), under a lock per file in this process and an flock across
processes, and retries briefly on DuckDB's own lock error (another program, e.g. a notebook, may hold it).

A forget must leave no readable copy, and DuckDB keeps deleted rows in its file, so :func:`scrub` and
:func:`scrub_principal` delete, then copy the database into a fresh file and swap it in. Writers that queue
rows for the file (the trace writer) register a flush with :func:`on_rewrite`: a scrub writes what they hold
first, so it is deleted with the rest, and bumps the scrub epoch (:func:`scrub_epoch`) so that rows queued in
other processes before it are dropped rather than written back.

Memory text is never written here; queries are, and judgments quote them.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
import uuid
import weakref
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from memdeck.core.errors import FileBusy, MemdeckError
from memdeck.core.files import flock, fsync_dir, write_atomic_text
from memdeck.core.paths import StoreLayout

if TYPE_CHECKING:
    from memdeck.core.storage.engine import Engine

SCHEMA = [
    """CREATE TABLE IF NOT EXISTS traces (
        trace_id VARCHAR, recalled_at TIMESTAMP, principals VARCHAR[], agent VARCHAR, query VARCHAR,
        source VARCHAR, tiers VARCHAR[], k INTEGER, profile_name VARCHAR, profile VARCHAR,
        keyword_only BOOLEAN, returned VARCHAR[])""",
    """CREATE TABLE IF NOT EXISTS trace_candidates (
        trace_id VARCHAR, memory_id VARCHAR, tier VARCHAR, principal VARCHAR, agent VARCHAR,
        returned_rank INTEGER, score DOUBLE, relevance DOUBLE, recency DOUBLE, frequency DOUBLE,
        importance DOUBLE, pinned DOUBLE, trust DOUBLE, similarity DOUBLE, keyword DOUBLE,
        vector_rank INTEGER, keyword_rank INTEGER, age_days DOUBLE, graph DOUBLE, graph_rank INTEGER)""",
    # Logs written before the graph channel: its two columns go last, as in a new log.
    "ALTER TABLE trace_candidates ADD COLUMN IF NOT EXISTS graph DOUBLE",
    "ALTER TABLE trace_candidates ADD COLUMN IF NOT EXISTS graph_rank INTEGER",
    """CREATE TABLE IF NOT EXISTS judgments (
        judgment_id VARCHAR, judged_at TIMESTAMP, trace_id VARCHAR, query VARCHAR, principal VARCHAR,
        memory_id VARCHAR, relevant BOOLEAN, by_agent VARCHAR)""",
    """CREATE TABLE IF NOT EXISTS feedback (
        feedback_id VARCHAR, given_at TIMESTAMP, trace_id VARCHAR, memory_id VARCHAR, principal VARCHAR,
        agent VARCHAR, by_agent VARCHAR, useful BOOLEAN)""",
    """CREATE TABLE IF NOT EXISTS injections (
        injection_id VARCHAR, given_at TIMESTAMP, trace_id VARCHAR, principal VARCHAR, agent VARCHAR,
        session VARCHAR, kind VARCHAR, memory_id VARCHAR, position INTEGER)""",
]
LOCK_WAIT_S = 10.0  # how long a use waits for another process's DuckDB connection to go away
# A forget's scrub waits longer: other processes' trace writes come and go, and a forget must not fail on them.
SCRUB_WAIT_S = 120.0

_path_locks: dict[str, threading.RLock] = {}
_path_locks_guard = threading.Lock()
# Per store: the flush of a writer that queues rows for its file (see on_rewrite).
_pending: weakref.WeakKeyDictionary[Any, Callable[[], object]] = weakref.WeakKeyDictionary()


def log_path(store: Engine) -> Path:
    """The log database file of a store."""
    return StoreLayout(store.root).analytics


def naive_utc(value: datetime) -> datetime:
    """Times are stored as UTC TIMESTAMP (no zone): DuckDB's zoned type needs pytz to read back."""
    if value.tzinfo is not None:
        value = value.astimezone(UTC).replace(tzinfo=None)
    return value


@overload
def aware_utc(value: datetime) -> datetime: ...
@overload
def aware_utc(value: None) -> None: ...
def aware_utc(value: datetime | None) -> datetime | None:
    """A time read back from DuckDB (naive UTC) as an aware UTC datetime."""
    return value.replace(tzinfo=UTC) if value is not None and value.tzinfo is None else value


def path_lock(path: Path) -> threading.RLock:
    with _path_locks_guard:
        return _path_locks.setdefault(str(path), threading.RLock())


# Scrubs and damage checks waiting for a file's path lock. The trace writer keeps the lock while recalls keep
# queueing traces, and a thread lock has no queue, so it lets go and waits while one of these is waiting.
_turns_wanted: dict[str, int] = {}
_turns = threading.Condition(_path_locks_guard)


@contextlib.contextmanager
def path_lock_first(path: Path) -> Iterator[None]:
    """The file's path lock, taken ahead of the background trace writer (see :func:`wait_for_turns`)."""
    key, lock = str(path), path_lock(path)
    with _turns:
        _turns_wanted[key] = _turns_wanted.get(key, 0) + 1
    try:
        lock.acquire()
    finally:
        with _turns:
            _turns_wanted[key] -= 1
            if not _turns_wanted[key]:
                del _turns_wanted[key]
                _turns.notify_all()
    try:
        yield
    finally:
        lock.release()


def turn_wanted(path: Path) -> bool:
    """Whether a scrub or a damage check is waiting for this file's path lock."""
    with _turns:
        return str(path) in _turns_wanted


def wait_for_turns(path: Path) -> None:
    """Until no scrub or damage check is waiting for this file's path lock (it then holds it, or is done)."""
    with _turns:
        _turns.wait_for(lambda: str(path) not in _turns_wanted)


def is_lock_error(exc: BaseException) -> bool:
    text = str(exc).lower()
    return "lock" in text or "conflicting" in text


@contextlib.contextmanager
def file_lock(path: Path, timeout: float = LOCK_WAIT_S) -> Iterator[None]:
    """Exclusive use of the DuckDB file among memdeck threads and processes.

    One lock per file within this process and an flock on a sibling ``.lock`` file across processes, so a
    scrub's delete-copy-swap is never interleaved with a trace write.
    """
    with path_lock(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        busy = f"the log database {path} is busy in another process; try again"
        with flock(path.with_name(path.name + ".lock"), exclusive=True, timeout=timeout, busy=busy):
            yield


def connect(path: Path, timeout: float = LOCK_WAIT_S) -> Any:
    """Open ``path`` read-write with the schema in place, retrying DuckDB's lock error for a while
    (another program, e.g. a notebook, may hold the file)."""
    import duckdb

    deadline = time.monotonic() + timeout
    delay = 0.01
    while True:
        try:
            con = duckdb.connect(str(path))
            with contextlib.suppress(OSError):
                os.chmod(path, 0o600)  # it holds queries: private like the rest of the store
            break
        except duckdb.Error as exc:
            if not is_lock_error(exc) or time.monotonic() >= deadline:
                raise MemdeckError(f"cannot open the log database {path}: {exc}") from None
            time.sleep(delay)
            delay = min(delay * 2, 0.2)
    try:
        for ddl in SCHEMA:
            con.execute(ddl)
    except Exception:
        con.close()
        raise
    return con


@contextlib.contextmanager
def connection(path: Path, *, create: bool = True, timeout: float = LOCK_WAIT_S) -> Iterator[Any]:
    """A short-lived read-write DuckDB connection to ``path``, closed on exit; never held open.

    Yields None when ``create`` is false and the file does not exist yet.
    """
    if not create and not path.exists():
        yield None
        return
    with file_lock(path, timeout):
        con = connect(path, timeout)
        try:
            yield con
        finally:
            con.close()


def epoch_path(path: Path) -> Path:
    """A marker beside the log that every scrub rewrites: a trace queued before a scrub is dropped."""
    return path.with_name(path.name + ".scrubbed")


def scrub_epoch(path: Path) -> tuple[int, int] | None:
    try:
        st = epoch_path(path).stat()
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_mtime_ns)


def scrub_time(path: Path) -> datetime | None:
    """When the last scrub began (naive UTC, the log's own clock): a row recorded before it and written
    after it is dropped, and a purge's check judges the log as of it. None before any scrub, or for a marker
    an older memdeck wrote (its epoch alone then decides)."""
    try:
        parts = epoch_path(path).read_text(encoding="utf-8").split()
    except FileNotFoundError:
        return None
    if len(parts) < 2:
        return None
    try:
        return datetime.fromisoformat(parts[1])
    except ValueError:
        return None


def on_rewrite(store: Engine, flush: Callable[[], object]) -> None:
    """Have ``flush`` write what a writer queued for this store's file before a scrub or a damage check
    opens it (one writer per store; a second registration replaces the first)."""
    _pending[store] = flush


def _flush_pending(store: Engine) -> None:
    flush = _pending.get(store)
    if flush is not None:
        flush()


# --- erasure ----------------------------------------------------------------------------------------


def damage(store: Engine) -> str | None:
    """Why the log database cannot be opened (damaged), or None when it opens or is absent. Opened as a scrub
    opens it (this process's queued traces written first), so a log busy in another process is not damage."""
    import duckdb

    path = log_path(store)
    if not path.exists():
        return None
    with path_lock_first(path):
        _flush_pending(store)
        try:
            with file_lock(path, timeout=1.0):
                connect(path, timeout=1.0).close()
        except FileBusy:
            return None  # held by a reader or writer elsewhere: the scrub waits for it, nothing is damaged
        except MemdeckError as exc:
            return None if is_lock_error(exc) else str(exc)
        except duckdb.Error as exc:
            return str(exc)
    return None


def scrub(
    store: Engine,
    ids: Sequence[str],
    matches: Callable[[str], bool] | None = None,
    *,
    principal: str | None = None,
) -> dict[str, Any]:
    """Remove every logged row that mentions these memory ids, then rewrite the file.

    Whole traces go when they returned or had as a candidate one of the ids (their query may quote the
    memory), with their judgments; judgments and feedback about the ids go too. ``matches`` finds the
    queries that quote the forgotten text; with ``principal``, only queries that principal (or the
    operator, over the whole store) could have asked are tested: another principal's own words stay. The
    database is then copied into a fresh file and swapped in, because DuckDB keeps deleted rows readable in
    its file.
    """
    ids = sorted({str(i) for i in ids})
    return _scrub(store, "ids", ids, matches, principal)


def scrub_principal(store: Engine, principal: str) -> dict[str, Any]:
    """Remove every trace, judgment and feedback row of a principal, then rewrite the file."""
    return _scrub(store, "principal", [principal])


def _scrub(
    store: Engine,
    how: str,
    values: list[str],
    matches: Callable[[str], bool] | None = None,
    principal: str | None = None,
) -> dict[str, Any]:
    """``matches``: a test of a logged query (a trace that searched for a forgotten text goes too)."""
    path = log_path(store)
    counts = {"traces": 0, "trace_candidates": 0, "judgments": 0, "feedback": 0, "injections": 0}
    with path_lock_first(path):
        _flush_pending(store)  # a queued trace may mention the ids: write it so it is deleted with the rest
        # Other processes' queued traces were recorded before this scrub: they are dropped, not written.
        began = _bump_epoch(path)
        if not path.exists():
            return {"path": str(path), "deleted": counts, "rewritten": False, "scrubbed_at": began}
        with file_lock(path, SCRUB_WAIT_S):
            con = connect(path, SCRUB_WAIT_S)
            try:
                counts = _delete_matching(con, how, values, matches, principal)
                fresh = _copy_to_fresh(con, path)
            finally:
                con.close()
            # Swap only after the old connection is closed: it must not touch the new file's WAL name.
            os.chmod(fresh, 0o600)
            os.replace(fresh, path)
            path.with_name(path.name + ".wal").unlink(missing_ok=True)
            fsync_dir(path.parent)
    return {"path": str(path), "deleted": counts, "rewritten": True, "scrubbed_at": began}


def _bump_epoch(path: Path) -> str:
    """A new epoch, stamped with the time the scrub began (ISO, naive UTC, as the log's rows are)."""
    marker = epoch_path(path)
    marker.parent.mkdir(parents=True, exist_ok=True)
    began = naive_utc(datetime.now(UTC)).isoformat()
    write_atomic_text(marker, f"{uuid.uuid4().hex} {began}\n", mode=0o600)
    return began


def _delete_matching(
    con: Any,
    how: str,
    values: list[str],
    matches: Callable[[str], bool] | None = None,
    principal: str | None = None,
) -> dict[str, int]:
    # Imported here: the privacy package loads the redaction rules, which a recall's trace log never needs
    # before its answer.
    from memdeck.core.privacy.vault import OPERATOR_VAULT

    con.execute("CREATE TEMP TABLE _gone (v VARCHAR)")
    con.executemany("INSERT INTO _gone VALUES (?)", [[v] for v in values])
    con.execute("CREATE TEMP TABLE _quoted (q VARCHAR)")
    if matches is not None:
        # The queries the principal could have asked: theirs, and the operator's over the whole store.
        trace_scope, judgment_scope, params = "", "", []
        if principal is not None:
            trace_scope = " AND (principals IS NULL OR list_contains(principals, ?))"
            judgment_scope = " AND (principal IS NULL OR principal IN (?, ?))"
            params = [principal, principal, OPERATOR_VAULT]
        queries = {
            r[0]
            for r in con.execute(
                f"SELECT DISTINCT query FROM traces WHERE query IS NOT NULL{trace_scope}", params[:1]
            ).fetchall()
        }
        queries |= {
            r[0]
            for r in con.execute(
                f"SELECT DISTINCT query FROM judgments WHERE query IS NOT NULL{judgment_scope}", params[1:]
            ).fetchall()
        }
        bad = [q for q in queries if matches(q)]
        if bad:
            con.executemany("INSERT INTO _quoted VALUES (?)", [[q] for q in bad])
    if how == "ids":
        doomed = (
            "SELECT trace_id FROM trace_candidates WHERE memory_id IN (SELECT v FROM _gone) "
            "UNION SELECT trace_id FROM traces WHERE list_has_any(returned, (SELECT list(v) FROM _gone))"
        )
        own_rows = "(memory_id IN (SELECT v FROM _gone) OR query IN (SELECT q FROM _quoted))"
        doomed += " UNION SELECT trace_id FROM traces WHERE query IN (SELECT q FROM _quoted)"
        if principal is not None:  # the same words asked by another principal are theirs
            p = _sql_literal(principal)
            own_rows = (
                f"(memory_id IN (SELECT v FROM _gone) OR (query IN (SELECT q FROM _quoted) AND (principal IS NULL "
                f"OR principal IN ({p}, {_sql_literal(OPERATOR_VAULT)}))))"
            )
            doomed += f" AND (principals IS NULL OR list_contains(principals, {p}))"
    else:
        doomed = (
            "SELECT trace_id FROM traces WHERE list_has_any(principals, (SELECT list(v) FROM _gone)) "
            "UNION SELECT trace_id FROM trace_candidates WHERE principal IN (SELECT v FROM _gone)"
        )
        own_rows = "principal IN (SELECT v FROM _gone)"
    con.execute(f"CREATE TEMP TABLE _doomed AS {doomed}")
    # A judgment made on a dropped trace, or on the same query as a dropped judgment, may quote the memory.
    con.execute(
        "CREATE TEMP TABLE _doomed_queries AS SELECT DISTINCT query, principal FROM judgments "
        f"WHERE {own_rows} OR trace_id IN (SELECT trace_id FROM _doomed)"
    )
    id_rows = (
        "memory_id IN (SELECT v FROM _gone)" if how == "ids" else own_rows
    )  # tables without a query column
    counts = {
        "judgments": _delete(
            con,
            "judgments",
            f"{own_rows} OR trace_id IN (SELECT trace_id FROM _doomed) OR EXISTS (SELECT 1 FROM _doomed_queries d "
            "WHERE d.query = judgments.query AND d.principal IS NOT DISTINCT FROM judgments.principal)",
        ),
        "feedback": _delete(con, "feedback", id_rows),
        "trace_candidates": _delete(con, "trace_candidates", "trace_id IN (SELECT trace_id FROM _doomed)"),
        # The ledger holds ids only; the forgotten ids go (an injection that gave nothing else is then empty).
        "injections": _delete(con, "injections", f"{id_rows} OR trace_id IN (SELECT trace_id FROM _doomed)"),
        "traces": _delete(con, "traces", "trace_id IN (SELECT trace_id FROM _doomed)"),
    }
    for table in ("_gone", "_quoted", "_doomed", "_doomed_queries"):
        con.execute(f"DROP TABLE {table}")
    return counts


def _sql_literal(value: str) -> str:
    """A string literal for DuckDB SQL (single quotes doubled; NUL is refused in principal names upstream)."""
    return "'" + value.replace("'", "''") + "'"


def _delete(con: Any, table: str, where: str) -> int:
    n = int(con.execute(f"SELECT count(*) FROM {table} WHERE {where}").fetchone()[0])
    if n:
        con.execute(f"DELETE FROM {table} WHERE {where}")
    return n


def _copy_to_fresh(con: Any, path: Path) -> Path:
    """Copy the open database into a new file beside it (deleted rows are not copied); returns its path."""
    fresh = path.with_name(path.name + ".rewrite")
    for leftover in (fresh, fresh.with_name(fresh.name + ".wal")):
        leftover.unlink(missing_ok=True)
    con.execute("CHECKPOINT")
    name = con.execute("SELECT current_database()").fetchone()[0]
    con.execute(f"ATTACH {_sql_literal(str(fresh))} AS memdeck_fresh")
    try:
        con.execute(f"COPY FROM DATABASE {_sql_ident(name)} TO memdeck_fresh")
    finally:
        con.execute("DETACH memdeck_fresh")
    return fresh


def _sql_ident(value: str) -> str:
    return '"' + value.replace('"', '""') + '"'
