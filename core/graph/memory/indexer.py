"""Graph indexing off the write path: memories a write committed are queued and indexed in a background
thread, so ``remember`` / ``remember_many`` return without waiting for entity extraction, name resolution
(which embeds new names), kind refinement and the graph's commits.

Consistency. Every reader of the graph drains the queue first (:func:`~.queue.drain`, called by
:func:`~.model.load_graph`, :func:`~.model.graph_principals` and the graph analytics), indexing what is
still queued in the reader's own thread, so a caller that writes and then reads sees what it wrote. An
edit's re-index (the memory's old mentions removed, its new text indexed) goes through the same queue, in
order. :meth:`Store.close` (and the process's exit) drains it.

Forgetting. A forget plans under the exclusive lock and reads the graph there: that drain indexes what is
queued before the cascade is computed, so the purge removes it with the rest. A job that was queued
before a purge (in this process or another) and is indexed after it reads its memories' rows again
first: a memory that is gone, or is being forgotten, is not indexed, and an indexed text is the one the
store holds now (a re-scan may have redacted it).

Crashes. Before a job is queued, the ids it covers are appended to this process's file in
``<store>/graph-queue/`` (ids and tiers only, never text), and a line marks each job done once its graph
commit returned. The process holds an ``flock`` on its file while it lives; a store opened later finds
files whose owner is gone (killed with SIGKILL, say) and indexes what they left undone. Indexing is
idempotent, so a job that committed but was not yet marked done is indexed again harmlessly.

Errors. An indexing that raises is logged (``memdeck.graph``: one line, at warning level, or at info level
for a store error such as a full disk, which the writes meet and report too; the traceback at debug
level); its ids stay undone in the queue file, so the next open of the store indexes them again, and the
next :meth:`GraphIndexer.flush` (the next read of the graph) raises :class:`GraphIndexError` once, naming
how many memories were not indexed and why, unless the error was the store's own (a full or read-only
disk): reads then answer from the graph as it stands. :meth:`GraphIndexer.close` never raises.
"""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import json
import logging
import os
import threading
import time
import uuid
import weakref
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from memdeck.core import filters as F
from memdeck.core.errors import MemdeckError, StoreLocked
from memdeck.core.graph.memory.forget import apply_graph
from memdeck.core.graph.memory.queue import QUEUE_DIR, graph_lock, indexer_of, inside, register
from memdeck.core.graph.memory.write import index_memories
from memdeck.core.records import Memory

if TYPE_CHECKING:
    from memdeck.core.storage.engine import Engine

log = logging.getLogger("memdeck.graph")

SETTLE_S = 0.05  # the background thread waits this long after a write for more to batch with it
STORE_RETRY_S = 30.0  # after a store condition (a full disk) the background thread waits this long
MAX_BATCH = 64  # jobs indexed and committed together: a long queue is worked off in bounded steps
RETRY_S = 0.5  # after the store lock could not be had (a long purge), the background thread tries again
CHUNK = 1000  # ids per read when a job's memories are read again


class GraphIndexError(MemdeckError):
    """Indexing memories into the graph failed in the background; they are indexed again at the next open."""


@dataclass
class _Job:
    seq: int
    refs: list[tuple[str, str]]  # (tier, id)
    memories: list[Memory] | None  # None: read the rows when indexing (a recovered job)
    reindex: bool  # an edit: the memory's mentions go first, then its text is indexed again
    purges: int  # purges seen when it was queued


class GraphIndexer:
    """The graph queue of one open store (see the module's docstring)."""

    def __init__(self, store: Engine) -> None:
        self._store = weakref.ref(store)
        self.directory = Path(store.root) / QUEUE_DIR
        self._cv = threading.Condition()
        self._queue: deque[_Job] = deque()
        self._seq = 0
        self._purges = 0
        self._thread: threading.Thread | None = None
        self._stopping = False
        self._errors: list[str] = []
        self._failed = 0  # jobs whose ids stay undone in the file
        self._fd: int | None = None
        self._path: Path | None = None
        self._no_file = False
        store.purged_hooks.append(self._purged)
        register(store, self)

    # --- queueing -----------------------------------------------------------------------------------

    def _purged(self) -> None:
        """A purge ran (here or in another process): jobs queued before it read their rows again."""
        self._purges += 1

    def submit(self, memories: Sequence[Memory], *, reindex: bool = False) -> None:
        """Queue memories just committed for indexing; returns at once."""
        mems = [
            Memory(id=m.id, tier=m.tier, principal=m.principal, text=m.text, agent=m.agent)
            for m in memories
            if m is not None and m.text
        ]
        if mems:
            self._enqueue([(m.tier, m.id) for m in mems], mems, reindex)

    def _enqueue(self, refs: list[tuple[str, str]], mems: list[Memory] | None, reindex: bool) -> None:
        with self._cv:
            self._seq += 1
            job = _Job(self._seq, refs, mems, reindex, self._purges if mems is not None else -1)
            self._record({"seq": job.seq, "op": "reindex" if reindex else "index", "refs": refs})
            self._queue.append(job)
            self._start()
            self._cv.notify_all()

    @property
    def pending(self) -> int:
        """Memories queued and not yet indexed."""
        with self._cv:
            return sum(len(j.refs) for j in self._queue)

    # --- the queue file -----------------------------------------------------------------------------

    def _record(self, entry: dict[str, object]) -> None:
        """Append one line to this process's queue file (made, and locked, at the first job)."""
        if self._no_file:
            return
        try:
            if self._fd is None:
                self.directory.mkdir(mode=0o700, exist_ok=True)
                path = self.directory / f"{os.getpid()}-{uuid.uuid4().hex[:12]}.jsonl"
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a fresh name: never held by another
                self._fd, self._path = fd, path
            os.write(self._fd, (json.dumps(entry, separators=(",", ":")) + "\n").encode("utf-8"))
        except OSError as exc:  # a read-only store: the queue works, a crash just loses its catch-up
            log.warning(
                "graph queue file not written (%s): a crash before indexing would leave it undone", exc
            )
            self._no_file = True

    def _settled(self) -> None:
        """Everything queued was indexed: the file starts empty again (kept while a job failed)."""
        if self._fd is not None and not self._failed:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, 0)

    # --- indexing -----------------------------------------------------------------------------------

    def flush(self) -> None:
        """Index everything queued now, in this thread (waiting for a batch the background thread is
        committing), then raise the error of any indexing that failed since the last flush."""
        if self._queue:
            store = self._store()
            if store is not None:
                self._work(store)
        self._raise_errors()

    def _raise_errors(self) -> None:
        with self._cv:
            errors, self._errors = self._errors, []
        if errors:
            raise GraphIndexError(
                "indexing the graph failed: "
                + "; ".join(errors[:3])
                + (f" (and {len(errors) - 3} more)" if len(errors) > 3 else "")
                + "; those memories are indexed again the next time the store is opened"
            )

    def _work(self, store: Engine) -> bool:
        """Index every queued job: under the store lock (shared), then the graph lock, in order. False when
        it stopped at a store condition (a full disk) with jobs left."""
        with store.lock.shared(), graph_lock(store), inside():
            while True:
                with self._cv:
                    jobs = list(itertools.islice(self._queue, MAX_BATCH))
                if not jobs:
                    return True
                stop = False
                try:
                    self._index(store, jobs)
                except Exception as exc:  # noqa: BLE001 - reported by the next flush, retried at open
                    self._failed_jobs(jobs, exc)
                    # A store condition (a full disk) fails every batch after this one too: the rest waits
                    # for the next drain or the next open instead of paying a failed commit each.
                    stop = isinstance(exc, MemdeckError)
                else:
                    for job in jobs:
                        self._record({"done": job.seq})
                with self._cv:
                    for _ in jobs:
                        self._queue.popleft()
                    if not self._queue:
                        self._settled()
                        self._cv.notify_all()
                if stop:
                    return False

    def _failed_jobs(self, jobs: list[_Job], exc: Exception) -> None:
        """Log a failed indexing (one line; the traceback at debug level, or with MEMDECK_DEBUG set) and keep
        it for the next flush to raise; its ids stay undone in the queue file."""
        count = sum(len(j.refs) for j in jobs)
        # A store error (a full or read-only disk) is what the writes meet too and report themselves.
        level = logging.INFO if isinstance(exc, MemdeckError) else logging.WARNING
        log.log(
            level,
            "indexing %d memories into the graph failed (%s: %s); they are indexed again at the next open",
            count,
            type(exc).__name__,
            exc,
            exc_info=bool(os.environ.get("MEMDECK_DEBUG")),
        )
        log.debug("graph indexing failure", exc_info=exc)
        with self._cv:
            if not isinstance(exc, MemdeckError):
                # A store condition (a full or read-only disk) is the writes' to report, and a read must
                # still answer on such a store: the graph is read as it is, and the next open tries again.
                self._errors.append(f"{count} memories: {exc}")
            self._failed += len(jobs)

    def _index(self, store: Engine, jobs: list[_Job]) -> None:
        run: list[Memory] = []
        for job in jobs:
            mems = job.memories
            if mems is None or job.purges != self._purges:
                mems = read_memories(store, job.refs)
            if not job.reindex:
                run.extend(mems)
                continue
            index_memories(store, run)
            run = []
            for principal in sorted({m.principal for m in mems}):
                apply_graph(store, principal, [m.id for m in mems if m.principal == principal])
            index_memories(store, mems)
        index_memories(store, run)

    # --- the background thread ----------------------------------------------------------------------

    def _start(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._stopping = False
            self._thread = threading.Thread(target=self._loop, name="memdeck-graph-indexer", daemon=True)
            self._thread.start()

    def _loop(self) -> None:
        while True:
            with self._cv:
                while not self._queue and not self._stopping:
                    self._cv.wait()
                # Let a burst of writes arrive (one batch costs less than many), then index it all.
                deadline = time.monotonic() + SETTLE_S
                while not self._stopping and (left := deadline - time.monotonic()) > 0:
                    self._cv.wait(left)
                if self._stopping:
                    return
            store = self._store()
            if store is None:
                return
            try:
                if not self._work(store):
                    # A full disk: try again after a while or when a write queues more, not in a loop.
                    self._wait_for_more(STORE_RETRY_S)
            except StoreLocked:
                time.sleep(RETRY_S)  # a purge holds the store: its own drain may index the queue meanwhile
            except Exception:  # the thread lives on; _work already reported indexing errors
                log.exception("the graph indexer could not take the store lock")
                time.sleep(RETRY_S)
            del store

    def _wait_for_more(self, seconds: float) -> None:
        """Wait until a write queues another job, the indexer stops, or ``seconds`` pass."""
        with self._cv:
            waiting = len(self._queue)
            self._cv.wait_for(lambda: self._stopping or len(self._queue) > waiting, seconds)

    def close(self) -> None:
        """Index what is queued, stop the thread, and remove this process's queue file when nothing failed
        (else leave it, unlocked, for the next open to index). Never raises: it runs as a command ends, maybe
        while another error is on its way to the user; a failure not yet raised by a flush was logged when it
        happened, and the next read of the graph after the next open meets it again if it lasts."""
        try:
            store = self._store()
            if self._queue and store is not None:
                self._work(store)
        except Exception as exc:  # noqa: BLE001 - left to the next open like a failed job
            log.info("the graph queue was not drained at close: %s", exc)
        finally:
            with self._cv:
                self._errors = []
            with self._cv:
                self._stopping = True
                self._cv.notify_all()
            thread = self._thread
            if thread is not None and thread is not threading.current_thread():
                thread.join(timeout=10)
            self._thread = None
            if self._fd is not None:
                with contextlib.suppress(OSError):
                    if self._path is not None and not self._failed and not self._queue:
                        self._path.unlink()
                    os.close(self._fd)  # what is left undone is the next open's to index
                self._fd = self._path = None
                self._failed = 0

    # --- catching up after a crash ------------------------------------------------------------------

    def recover(self) -> int:
        """Queue what processes that died left undone in their queue files; returns how many memories."""
        try:
            names = sorted(os.listdir(self.directory))
        except FileNotFoundError:
            return 0
        except OSError as exc:
            log.warning("cannot read the graph queue %s: %s", self.directory, exc)
            return 0
        found = 0
        for name in names:
            path = self.directory / name
            if not name.endswith(".jsonl") or path == self._path:
                continue
            found += self._take_over(path)
        return found

    def _take_over(self, path: Path) -> int:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return 0  # removed meanwhile by the process that owned it, or by another recovery
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return 0  # its process lives and indexes it
            if os.fstat(fd).st_nlink == 0:
                return 0  # another process recovered it while we waited
            with os.fdopen(os.dup(fd), "r", encoding="utf-8", errors="replace") as fh:
                jobs, done = _parse(fh.read())
            undone = [jobs[s] for s in sorted(jobs) if s not in done]
            for op, refs in undone:
                self._enqueue(refs, None, op == "reindex")  # recorded in this process's file first
            with contextlib.suppress(OSError):
                path.unlink()
            if undone:
                log.info(
                    "graph: %d memories a stopped process left unindexed are queued",
                    sum(len(r) for _, r in undone),
                )
            return sum(len(r) for _, r in undone)
        finally:
            os.close(fd)


def _parse(text: str) -> tuple[dict[int, tuple[str, list[tuple[str, str]]]], set[int]]:
    jobs: dict[int, tuple[str, list[tuple[str, str]]]] = {}
    done: set[int] = set()
    for line in text.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # a line cut short by the kill
        if not isinstance(entry, dict):
            continue
        if isinstance(entry.get("done"), int):
            done.add(entry["done"])
        elif isinstance(entry.get("seq"), int) and isinstance(entry.get("refs"), list):
            refs = [(str(r[0]), str(r[1])) for r in entry["refs"] if isinstance(r, list) and len(r) == 2]
            jobs[entry["seq"]] = (str(entry.get("op") or "index"), refs)
    return jobs, done


def read_memories(store: Engine, refs: Sequence[tuple[str, str]]) -> list[Memory]:
    """The memories these (tier, id) pairs name as the store holds them now: gone or being forgotten ones
    left out."""
    by_tier: dict[str, list[str]] = {}
    for tier, memory_id in refs:
        by_tier.setdefault(tier, []).append(memory_id)
    out: list[Memory] = []
    for tier, ids in sorted(by_tier.items()):
        if not store.has_table(tier):
            continue
        for start in range(0, len(ids), CHUNK):
            where = F.all_of(F.is_in("id", ids[start : start + CHUNK]), F.ne("state", "forgotten-pending"))
            rows = store.scan(tier, ["id", "principal", "agent", "text"], where).to_pylist()
            out.extend(
                Memory(
                    id=r["id"], tier=tier, principal=r["principal"], agent=r["agent"], text=r["text"] or ""
                )
                for r in rows
                if r["text"]
            )
    return out


def indexer_for(store: Engine) -> GraphIndexer:
    """The store's indexer, made at the first call."""
    found = indexer_of(store)
    if isinstance(found, GraphIndexer):
        return found
    return GraphIndexer(store)
