"""The store lock gives a waiting purge its turn, however busy the writers are.

Writers hold the lock shared and overlap; a file lock has no queue, so without a gate a purge asking for
the exclusive lock can wait until its timeout while commits follow one another with no gap between them.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from memdeck.core.errors import StoreLocked
from memdeck.core.storage.locking import StoreLock


def _relay(
    lock: StoreLock, stop: threading.Event, granted: list[float], runners: int = 3
) -> list[threading.Thread]:
    """Writers that hand the shared lock on: each lets go only once the next holds it (or after 0.5 s), so
    from the first hold on there is never a moment with no commit under way."""
    holding = [threading.Event() for _ in range(runners)]
    holding[0].set()

    def run(i: int) -> None:
        nxt = (i + 1) % runners
        while not stop.is_set():
            holding[i].wait(0.1)
            if not holding[i].is_set():
                continue
            holding[i].clear()
            try:
                with lock.shared(timeout=30):
                    granted.append(time.monotonic())
                    holding[nxt].set()  # the next writer starts its commit while this one is still in its
                    time.sleep(0.05)
                    waited = time.monotonic() + 0.5
                    while holding[nxt].is_set() and time.monotonic() < waited and not stop.is_set():
                        time.sleep(0.005)  # ... and this one ends only once the next one holds it
            except StoreLocked:
                holding[nxt].set()

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(runners)]
    for t in threads:
        t.start()
    return threads


def test_a_purge_gets_the_lock_while_writers_keep_it_busy(tmp_path: Path) -> None:
    lock = StoreLock(tmp_path / "store.lock")
    stop = threading.Event()
    granted: list[float] = []
    threads = _relay(lock, stop, granted)
    try:
        time.sleep(0.5)
        assert len(granted) >= 5, "the writers did not get going"
        asked = time.monotonic()
        with lock.exclusive(timeout=10):
            got = time.monotonic()
            time.sleep(0.3)
            during = [t for t in granted if t >= got]
            done = time.monotonic()
        time.sleep(0.5)
    finally:
        stop.set()
        for t in threads:
            t.join(5)
    assert got - asked < 2.0, f"the purge waited {got - asked:.2f} s behind the writers"
    assert during == [], "a writer got in while the purge held the lock"
    assert any(t > done for t in granted), "the writers did not go on after the purge"


def test_without_the_gate_the_same_writers_starve_a_purge(tmp_path: Path) -> None:
    """The relay above does keep the lock busy: a purge that only polls the store lock never gets it."""
    import fcntl

    lock = StoreLock(tmp_path / "store.lock")
    stop = threading.Event()
    granted: list[float] = []
    threads = _relay(lock, stop, granted)
    fd = open(tmp_path / "store.lock", "rb+")  # noqa: SIM115 - held for the loop below
    try:
        time.sleep(0.5)
        deadline = time.monotonic() + 2.0
        got = False
        while time.monotonic() < deadline and not got:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                got = True
            except BlockingIOError:
                time.sleep(0.02)
    finally:
        stop.set()
        for t in threads:
            t.join(5)
        fd.close()
    assert not got


def test_a_writer_that_times_out_at_the_gate_leaves_nothing_held(tmp_path: Path) -> None:
    purge = StoreLock(tmp_path / "store.lock")
    writer = StoreLock(tmp_path / "store.lock")
    entered = threading.Event()
    release = threading.Event()

    def hold() -> None:
        with purge.exclusive():
            entered.set()
            release.wait(10)

    t = threading.Thread(target=hold)
    t.start()
    assert entered.wait(5)
    with pytest.raises(StoreLocked, match="a purge"):
        with writer.shared(timeout=0.1):
            pass
    release.set()
    t.join(5)
    with writer.shared(timeout=1):  # neither file is left held by the writer that gave up
        pass
    with purge.exclusive(timeout=1):
        pass


def test_a_killed_purge_leaves_the_gate_open(tmp_path: Path) -> None:
    script = (
        "import os, sys, time\n"
        "from pathlib import Path\n"
        "from memdeck.core.storage.locking import StoreLock\n"
        "with StoreLock(Path(sys.argv[1])).exclusive():\n"
        "    print('held', flush=True)\n"
        "    time.sleep(60)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script, str(tmp_path / "store.lock")], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        with pytest.raises(StoreLocked):
            with StoreLock(tmp_path / "store.lock").shared(timeout=0.1):
                pass
        proc.kill()
        proc.wait(10)
        with StoreLock(tmp_path / "store.lock").shared(timeout=2):
            pass
    finally:
        proc.kill()
        proc.wait(10)


def test_threads_that_took_the_lock_leave_no_descriptor_open(tmp_path: Path) -> None:
    """Agents' servers start a thread for each background write; each thread opens the lock's files for
    itself, and they must be closed when it ends (they were not: two descriptors a thread, until the
    process ran out)."""
    lock = StoreLock(tmp_path / "store.lock")

    def write_and_forget() -> None:
        with lock.shared():
            pass
        with lock.exclusive():
            pass

    def open_files() -> int:
        return (
            len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else len(os.listdir("/dev/fd"))
        )

    write_and_forget()  # this thread's own files, kept while it lives
    before = open_files()
    for _ in range(100):
        t = threading.Thread(target=write_and_forget)
        t.start()
        t.join()
    assert open_files() - before < 5
    with lock.exclusive(timeout=1):  # and the lock still works from this thread
        pass
