"""Crashes: `kill -9` in the middle of an import leaves whole records only, and a re-run completes the import
without duplicates.

The import commits one batch per tier at a time (Lance appends a data file, then commits a manifest); a
process killed anywhere in between leaves either the whole commit or none of it.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from memdeck.core.embed import HashEmbedder
from memdeck.core.exchange import import_path
from memdeck.core.maintenance.doctor import diagnose
from memdeck.core.store import Store

RECORDS = 3000  # 12 batches of 256: long enough to be killed part-way


def write_jsonl(path: Path, n: int = RECORDS) -> dict[str, tuple[str, str]]:
    """Hand-written JSONL (no ids, so re-runs dedupe on the import key); text -> (tier, principal)."""
    expected = {}
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(n):
            tier = "episodic" if i % 5 == 0 else "semantic"
            principal = "alice" if i % 2 else "bob"
            text = f"record {i} about topic {i % 17} with detail {i * 7919 % 10007}"
            fh.write(
                json.dumps({"text": text, "tier": tier, "principal": principal, "tags": [f"t{i % 3}"]}) + "\n"
            )
            expected[text] = (tier, principal)
    return expected


def start_import(home: Path, store: Path, src: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "MEMDECK_HOME": str(home)}
    return subprocess.Popen(
        [sys.executable, "-m", "memdeck.cli", "import", str(src), "--store", str(store)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def versions(store: Path, table: str) -> int:
    d = store / "lance" / f"{table}.lance" / "_versions"
    return len(list(d.glob("*.manifest"))) if d.is_dir() else 0


def kill_after(proc: subprocess.Popen[bytes], store: Path, commits: int, extra_delay: float) -> bool:
    """kill -9 once the semantic table has `commits` appends (plus a delay); False if it finished first."""
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and proc.poll() is None:
        if versions(store, "semantic") >= 1 + commits:
            time.sleep(extra_delay)
            break
        time.sleep(0.01)
    if proc.poll() is not None:
        return False
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)
    return True


def check_whole(store_path: Path, expected: dict[str, tuple[str, str]]) -> int:
    """Every stored row is an input record, whole and once; returns how many there are."""
    store = Store.open(store_path, embedder=HashEmbedder(), create=False)
    try:
        report = diagnose(store.engine)
        assert report.ok, report.lines()
        rows = []
        for tier in store.engine.tiers_present():
            table = (
                store.engine.table(tier)
                .to_lance()
                .to_table(columns=["text", "tier", "principal", "tags", "meta"])
            )
            rows += table.to_pylist()
        texts = Counter(r["text"] for r in rows)
        dupes = [t for t, n in texts.items() if n > 1]
        assert not dupes, dupes[:5]
        for r in rows:
            assert (r["tier"], r["principal"]) == expected[r["text"]]
            assert r["tags"] and json.loads(r["meta"])["import_key"]
        assert store.count() == len(rows)
        return len(rows)
    finally:
        store.close()


@pytest.fixture
def hash_home(memdeck_home: Path) -> Path:
    (memdeck_home / "config.toml").write_text('[embedding]\nmodel = "hash-384"\n')
    return memdeck_home


def crash_then_finish(
    tmp_path: Path, home: Path, kills: list[tuple[int, float]], *, in_process: bool
) -> None:
    src = tmp_path / "memories.jsonl"
    expected = write_jsonl(src)
    store = tmp_path / "store"
    seen = 0
    for commits, delay in kills:
        proc = start_import(home, store, src)
        killed = kill_after(proc, store, seen_commits(store) + commits, delay)
        if not killed:  # it won the race and finished: still must be whole and complete
            assert proc.returncode == 0, proc.stderr.read().decode() if proc.stderr else ""
        now = check_whole(store, expected)
        assert now >= seen  # a crash never takes back what an earlier run committed
        seen = now
    assert seen < RECORDS, "every run finished before the kill; nothing was tested"
    if in_process:  # the same import, without paying for another interpreter start
        store_obj = Store.open(store, embedder=HashEmbedder(), create=False)
        report = import_path(store_obj.engine, src).to_json()
        store_obj.close()
    else:
        env = {**os.environ, "MEMDECK_HOME": str(home)}
        done = subprocess.run(
            [sys.executable, "-m", "memdeck.cli", "import", str(src), "--store", str(store), "--json"],
            env=env,
            capture_output=True,
            timeout=600,
            check=False,
        )
        assert done.returncode == 0, done.stderr.decode()[-2000:]
        report = json.loads(done.stdout)
    assert report["imported"] == RECORDS - seen and report["malformed"] == 0
    assert check_whole(store, expected) == RECORDS


def seen_commits(store: Path) -> int:
    return max(0, versions(store, "semantic") - 1)


def test_kill_during_import_leaves_whole_records_and_rerun_completes(tmp_path, hash_home):
    crash_then_finish(tmp_path, hash_home, [(2, 0.0)], in_process=True)


@pytest.mark.slow
def test_repeated_kills_at_random_points_including_compaction(tmp_path, hash_home):
    # Compact after every few fragments so kills also land inside compaction and index commits.
    (hash_home / "config.toml").write_text(
        '[embedding]\nmodel = "hash-384"\n\n[store]\ncompact_fragment_threshold = 3\n'
    )
    rng = random.Random(7)
    crash_then_finish(tmp_path, hash_home, [(1, rng.uniform(0, 0.3)) for _ in range(4)], in_process=False)


# --- a purge killed at a random moment, with a reader recalling all the while ----------------------------
# tests/forget/test_forget_crash.py stops a purge right after each journal step; here it is SIGKILLed at arbitrary
# points inside the steps (mid-rewrite, mid-cleanup) while another process keeps reading.

CANARY = "quillfeather7713"
INTERVAL = 0.5

PURGE = """
import sys
from memdeck.core.embed import HashEmbedder
from memdeck.core.forget import forget
from memdeck.core.store import Store
store = Store.open(sys.argv[1], embedder=HashEmbedder())
forget(store.engine, [sys.argv[2]], "user request")
print("finished")
"""

# A pure reader (busy=0) only reads; a busy one (busy=1) is an agent as memdeck runs it by default, whose
# recalls also write access counts (under the shared store lock) and trace rows (under the trace-log lock).
READER = """
import json, os, sys, time, traceback
from memdeck.core import NotFound
from memdeck.core import Scope
from memdeck.core.embed import HashEmbedder
from memdeck.core.store import Store
root, stop, check, out, interval, busy = sys.argv[1:7]
interval, busy = float(interval), busy == "1"
store = Store.open(root, embedder=HashEmbedder(), read_consistency=interval)
store.count()
open(out + ".ready", "w").close()
errors, loops = [], 0
deadline = time.monotonic() + 300
while not os.path.exists(stop) and time.monotonic() < deadline:
    try:
        hits = store.recall("garden shed", principal="alice", k=5, record_access=busy, trace=busy)
        assert all(i.memory.principal == "alice" for i in hits.items)
        store.list(Scope.of("alice"), limit=10)
        store.count(Scope.of("bob"))
    except BaseException:  # a Rust panic is a BaseException: count it too
        errors.append(traceback.format_exc(limit=4)[-1500:])
    loops += 1
gone = None
while not os.path.exists(check) and time.monotonic() < deadline:
    time.sleep(0.02)
if os.path.exists(check):
    time.sleep(interval * 1.5)  # past the interval, without refresh(): the purge must be visible
    victim = open(check).read().strip()
    try:
        store.get(victim)
        gone = False
    except NotFound:
        gone = True
    hits = store.recall("shed", principal="alice", k=50, record_access=False, trace=False)
    gone = gone and victim not in [i.memory.id for i in hits.items]
store.close()
json.dump({"errors": errors, "loops": loops, "gone": gone}, open(out, "w"))
"""


def build_purge_store(root: Path) -> tuple[str, str]:
    store = Store.open(root, embedder=HashEmbedder())
    store.remember_many(
        [
            {"text": f"alice note {i} about the garden", "tier": "episodic", "principal": "alice"}
            for i in range(40)
        ]
    )
    secret = store.remember(
        f"alice keeps the {CANARY} in the shed", tier="episodic", principal="alice"
    ).memory
    bob = store.remember("bob waters the garden", tier="episodic", principal="bob").memory
    store.engine.ensure_indexes("episodic")
    store.close()
    return secret.id, bob.id


def journals(root: Path) -> list[Path]:
    d = root / "journal"
    return sorted(d.glob("purge-*.json")) if d.is_dir() else []


def kill_purge(root: Path, secret: str, delay: float) -> bool:
    """Start a purge, SIGKILL it `delay` s after its journal appears; True if it was left unfinished."""
    purge = subprocess.Popen(
        [sys.executable, "-c", PURGE, str(root), secret], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 180
    while not journals(root) and purge.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    time.sleep(delay)
    if purge.poll() is None:
        os.kill(purge.pid, signal.SIGKILL)
    _, err = purge.communicate(timeout=120)
    assert purge.returncode in (0, -signal.SIGKILL), err.decode()[-2000:]
    return bool(journals(root))


def killed_purge_with_reader(tmp_path: Path, delay: float, *, busy: bool) -> None:
    from memdeck.core.forget import recover_pending
    from memdeck.core.receipts import ReceiptBook

    for attempt in range(4):  # a purge that wins the race against the kill tests nothing: try again sooner
        root = tmp_path / f"store{attempt}"
        secret, bob = build_purge_store(root)
        stop, check, out = (tmp_path / f"{n}{attempt}" for n in ("stop", "check", "reader.json"))
        reader = subprocess.Popen(
            [
                sys.executable,
                "-c",
                READER,
                str(root),
                str(stop),
                str(check),
                str(out),
                str(INTERVAL),
                "1" if busy else "0",
            ],
            stderr=subprocess.PIPE,
        )
        try:
            ready = Path(str(out) + ".ready")  # the reader's own open must not be the one that recovers
            deadline = time.monotonic() + 180
            while not ready.exists() and reader.poll() is None and time.monotonic() < deadline:
                time.sleep(0.01)
            interrupted = kill_purge(root, secret, delay)
            if interrupted:
                store = Store.open(root, embedder=HashEmbedder())  # the next open finishes the purge
                # Recovery on open only runs if it gets the exclusive lock at once (timeout 0), so a reader
                # holding the shared lock for a moment (its retry after a vanished file) makes the open skip
                # it; a later open finishes it. Retry as later opens would, for a bounded time.
                for _ in range(100):
                    if not journals(root):
                        break
                    recover_pending(store.engine)
                    time.sleep(0.05)
                assert journals(root) == [], "no open finished the interrupted purge"
                [receipt] = ReceiptBook(root).list()
                full = ReceiptBook(root).get(receipt["receipt_id"])
                assert full["outcome"] == "verified", [c for c in full["checks"] if not c["passed"]]
                assert store.get(bob).principal == "bob" and store.count() == 41
                # Data only: a kill between writing the receipt file and receipts/HEAD leaves HEAD missing,
                # which the chain check (rightly) flags and recovery does not yet repair (see the report).
                report = diagnose(store.engine, receipts=False)
                assert report.ok, report.lines()
                store.close()
        finally:
            stop.write_text("stop")
            check.write_text(secret)
            _, err = reader.communicate(timeout=300)
        assert reader.returncode == 0, err.decode()[-2000:]
        result = json.loads(out.read_text())
        assert result["errors"] == [], "\n---\n".join(result["errors"][:3])
        assert result["loops"] > 0 and result["gone"] is True
        if interrupted:
            return
        delay /= 4
    pytest.fail("the purge finished before every kill; nothing was tested")


def test_purge_killed_mid_step_with_a_reader_running(tmp_path):
    killed_purge_with_reader(tmp_path, 0.05, busy=False)


STARVED = pytest.mark.xfail(
    strict=False,
    reason="known issue: recovery on open takes the exclusive lock with timeout 0 and the trace scrub waits "
    "10 s for the trace-log lock, so a reader that keeps writing access counts and traces can make the open "
    "skip or fail the recovery (see the reliability report)",
)


@pytest.mark.slow
@pytest.mark.parametrize("delay", [0.3, 0.8, 1.5])
def test_purge_killed_at_various_points_with_a_pure_reader(tmp_path, delay):
    killed_purge_with_reader(tmp_path, delay, busy=False)


@pytest.mark.slow
@STARVED
@pytest.mark.parametrize("delay", [0.5])
def test_purge_killed_with_a_busy_agent_reading(tmp_path, delay):
    killed_purge_with_reader(tmp_path, delay, busy=True)
