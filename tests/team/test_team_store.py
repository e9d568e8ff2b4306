"""A team store on object storage: the lease, and forget across machines (an S3 server on 127.0.0.1).

Each "machine" is a separate process with its own local store directory and its own MEMDECK_HOME, all on one
bucket prefix. The server is moto's, started by these tests on loopback; it honours ``If-None-Match: *`` and
``If-Match`` on PutObject, which is all the lease needs.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import boto3
import pytest

from memdeck.cli import main
from memdeck.core import Scope
from memdeck.core.errors import StoreLocked
from memdeck.core.recall import traces
from memdeck.core.receipts import ReceiptBook, team, verify_receipt
from memdeck.core.storage.lease import LEASE_KEY, Lease, LeaseLost, LocalObjects, S3Objects, Writers
from memdeck.core.storage.teamlock import TeamLock
from memdeck.core.store import Store
from tests.teamkit import TTL, Machines, nothing_forgotten_in_the_prefix, options


@pytest.fixture(params=["local", "s3"])
def objects(request: pytest.FixtureRequest, tmp_path: Path) -> object:
    if request.param == "local":
        return LocalObjects(tmp_path / "objects")
    endpoint = request.getfixturevalue("s3_endpoint")
    name = request.getfixturevalue("bucket")
    return S3Objects(f"s3://{name}/team", options(endpoint))


# --- the lease, on a directory and on the bucket ---------------------------------------------------------


def test_the_server_refuses_a_second_create_and_a_stale_replace(objects):
    first = objects.create("k", b"one")
    assert first is not None
    assert objects.create("k", b"two") is None  # If-None-Match: *
    second = objects.replace("k", b"three", first)
    assert second is not None and second != first
    assert objects.replace("k", b"four", first) is None  # If-Match on an old etag
    assert objects.get("k")[0] == b"three"


def test_racing_replaces_of_one_version_have_one_winner_on_a_directory(tmp_path):
    """The local implementation's compare-and-swap is atomic between threads (and, by flock, processes).
    (moto's server is not: its If-Match check and write are separate steps, and 8 racing replaces of one
    version had two winners in 3 of 30 trials; AWS S3 documents them as atomic.)"""
    objects = LocalObjects(tmp_path / "bucket")

    def race(i: int, key: str, etag: str, barrier: threading.Barrier, wins: list[int]) -> None:
        barrier.wait()
        if objects.replace(key, str(i).encode(), etag) is not None:
            wins.append(i)

    for trial in range(10):
        etag = objects.put(f"k{trial}", b"start")
        wins: list[int] = []
        barrier = threading.Barrier(8)
        threads = [
            threading.Thread(target=race, args=(i, f"k{trial}", etag, barrier, wins)) for i in range(8)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(wins) == 1


def test_one_holder_at_a_time_and_the_token_only_grows(objects):
    a, b = Lease(objects, ttl=TTL, holder="a"), Lease(objects, ttl=TTL, holder="b")
    assert a.acquire(timeout=1) == 1
    assert not b.try_acquire()
    with pytest.raises(StoreLocked, match="try again"):
        b.acquire(timeout=0.3)
    a.release()
    assert b.acquire(timeout=1) == 2
    b.release()
    assert a.acquire(timeout=1) == 3
    a.release()


def test_a_crashed_holders_lease_expires_and_fencing_refuses_its_next_step(objects):
    a, b = Lease(objects, ttl=TTL, holder="a"), Lease(objects, ttl=TTL, holder="b")
    a.acquire(timeout=1)
    a._stop_heartbeat()  # a stops renewing: a paused or dead machine
    started = time.monotonic()
    assert b.acquire(timeout=TTL * 3) == 2
    assert time.monotonic() - started >= TTL  # only after b saw the same version for a whole ttl
    with pytest.raises(LeaseLost, match="another machine took it"):
        a.fence()
    assert b.fence() == 2
    b.release()


def test_a_writer_is_seen_by_a_purge_and_a_crashed_one_expires(objects):
    writers = Writers(objects, ttl=TTL, holder="w")
    key = writers.announce()
    purge = Writers(objects, ttl=TTL, holder="p")
    assert purge.active() == [key]
    writers.withdraw(key)
    assert purge.active() == []
    writers.announce()  # never withdrawn
    assert purge.active()
    time.sleep(TTL + 0.3)
    assert purge.active() == []


def test_a_writer_waits_for_another_machines_purge_then_catches_up_or_fails_retryably(tmp_path):
    objects = LocalObjects(tmp_path / "bucket")
    purges: list[str] = []
    purger = TeamLock(tmp_path / "a" / "store.lock", objects, ttl=TTL)
    writer = TeamLock(
        tmp_path / "b" / "store.lock", objects, ttl=TTL, on_purge=lambda: purges.append("refresh")
    )
    with writer.shared():
        pass
    purges.clear()
    with purger.exclusive():
        assert purger.fence() == 1
        with pytest.raises(StoreLocked, match="nothing was written, try again"):
            with writer.shared(timeout=0.3):
                pass
        assert not objects.list("_memdeck/writers/")  # the refused writer withdrew its announcement
    with writer.shared():
        assert purges == ["refresh"]  # the epoch moved: handles refreshed before the commit


def test_a_purge_waits_for_a_commit_in_progress_on_another_machine(tmp_path):
    objects = LocalObjects(tmp_path / "bucket")
    purger = TeamLock(tmp_path / "a" / "store.lock", objects, ttl=TTL)
    writer = TeamLock(tmp_path / "b" / "store.lock", objects, ttl=TTL)
    with writer.shared():
        with pytest.raises(StoreLocked, match="writers on other machines are committing"):
            with purger.exclusive(timeout=0.5):
                pass
    with purger.exclusive(timeout=1):
        assert purger.fence() == 2


def test_one_chain_in_the_bucket_holds_every_machines_receipts_and_shows_tampering(tmp_path):
    objects = LocalObjects(tmp_path / "bucket")
    books = [ReceiptBook(tmp_path / name) for name in ("ann", "ben")]
    for i, book in enumerate([*books, books[0]]):
        receipt = book.issue(
            principal="p",
            reason="r",
            deleted=[{"id": f"m{i}", "content_sha256": "0" * 64}],
            cascade=[],
            actions=["delete"],
            checks=[{"name": "c", "passed": True}],
        )
        team.register_key(objects, book.public_key(), f"machine-{i}")
        assert team.append(objects, receipt, book.sign, book.public_key())
        assert not team.append(objects, receipt, book.sign, book.public_key())  # once per receipt id
    report = team.verify_chain(objects)
    assert report.ok and report.checked == 3, report.problems
    links = sorted(k for k in objects.list(team.LINKS) if k != team.HEAD)
    body = objects.get(links[1])[0]
    objects.delete(links[1])
    assert any("missing" in p for p in team.verify_chain(objects).problems)
    objects.put(links[1], body.replace(b'"r"', b'"x"'))
    assert not team.verify_chain(objects).ok
    objects.put(links[1], body)
    assert team.verify_chain(objects).ok
    for key in objects.list(team.KEYS):
        objects.delete(key)
    assert any("no machine registered" in p for p in team.verify_chain(objects).problems)


# --- three machines ----------------------------------------------------------------------------------


def receipts_of(store: Store) -> list[dict[str, Any]]:
    book = ReceiptBook(store.root)
    return [book.get(str(row["receipt_id"])) for row in book.list()]


def verified(receipt: dict[str, Any]) -> None:
    """Signed and chained correctly, and every check passed, the bucket's own among them."""
    assert verify_receipt(receipt) == []
    failed = [c for c in receipt["checks"] if not c["passed"]]
    assert receipt["outcome"] == "verified", failed
    assert "bucket_objects_clean" in {c["name"] for c in receipt["checks"]}


def written(machines: Machines, *names: str) -> dict[str, str]:
    return {line["id"]: line["text"] for n in names for line in machines.lines(n) if "id" in line}


def test_writers_on_two_machines_while_a_third_forgets(tmp_path, s3_endpoint, bucket, monkeypatch):
    # A lease renewed every ttl/3 on two shared cores with four busy processes, beside the suite's other
    # workers: 2 s and then 8 s proved too short (the writers fenced the purge out, correctly, and it
    # stopped); this is the default a team uses, 30 s.
    machines = Machines(tmp_path, f"s3://{bucket}/team", s3_endpoint, ttl=30.0)
    machines.run("carol", "seed", "20")
    doomed = [line["id"] for line in machines.lines("carol")]
    (tmp_path / "doomed.jsonl").write_text(machines.out("carol").read_text())
    ann = machines.open("ann", monkeypatch)  # ann's trace log records a recall of the doomed memories
    assert {h.memory.id for h in ann.recall("zebraquartz memo", principal="carol").items} <= set(doomed)
    traces.flush(ann.engine)
    assert traces.count_traces(ann.engine) == 1
    ann.close()
    writers = [machines.start(n, "write", f"{n}:12") for n in ("ann", "ben")]
    time.sleep(1.0)
    machines.run("carol", "forget", str(tmp_path / "doomed.jsonl"))
    for proc in writers:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err.decode()[-3000:]
    kept = written(machines, "ann", "ben")
    assert len(kept) == 2 * 12 * 2
    receipts = [line["receipt"] for line in machines.lines("carol") if "receipt" in line]
    assert len(receipts) == 4
    for name in ("ann", "ben", "carol", "dave"):
        store = machines.open(name, monkeypatch)
        rows = {m.id: m.text for m in store.list(Scope.everyone(), limit=1000)}
        assert rows == kept, name  # nothing written is lost, nothing forgotten is listed
        store.close()
    nothing_forgotten_in_the_prefix(s3_endpoint, bucket, "team", doomed, "zebraquartz")
    carol = machines.open("carol", monkeypatch)
    issued = receipts_of(carol)
    assert {r["receipt_id"] for r in issued} == set(receipts)
    for receipt in issued:
        verified(receipt)
    carol.close()
    chain = team.verify_chain(S3Objects(machines.uri, options(s3_endpoint)))
    assert chain.ok and chain.checked == 4, chain.problems
    ann = machines.open("ann", monkeypatch)  # opening caught up with the chain: its trace log is scrubbed
    assert traces.count_traces(ann.engine) == 0
    ann.close()
    for name in ("ann", "ben", "carol", "dave"):  # from every machine, the store's chain in the bucket
        monkeypatch.setenv("MEMDECK_HOME", machines.env(name)["MEMDECK_HOME"])
        assert main(["--store", str(tmp_path / f"machine-{name}"), "receipts", "verify", "--all"]) == 0


def test_a_holder_killed_with_the_lease_held_is_finished_by_the_next_machine(
    tmp_path, s3_endpoint, bucket, monkeypatch
):
    machines = Machines(tmp_path, f"s3://{bucket}/team", s3_endpoint)
    machines.run("ann", "write", "ann:3")
    machines.run("carol", "seed", "5")
    (tmp_path / "doomed.jsonl").write_text(machines.out("carol").read_text())
    doomed = [line["id"] for line in machines.lines("carol")]
    crashed = machines.start(
        "carol", "forget", str(tmp_path / "doomed.jsonl"), MEMDECK_TEST_CRASH_AT="deleted"
    )
    crashed.communicate(timeout=300)
    assert crashed.returncode == 137
    s3 = S3Objects(f"s3://{bucket}/team", options(s3_endpoint))
    lease = json.loads(s3.get(LEASE_KEY)[0])
    assert lease["state"] == "held"  # killed with the lease held
    assert s3.list("_memdeck/journal/")
    # The next machine to open the store waits out the lease, finishes the purge, then writes.
    machines.run("ben", "write", "ben:2")
    assert not s3.list("_memdeck/journal/")
    assert json.loads(s3.get(LEASE_KEY)[0])["token"] == lease["token"] + 1
    ben = machines.open("ben", monkeypatch)
    finished = receipts_of(ben)
    assert len(finished) == 1
    verified(finished[0])
    assert {d["id"] for d in finished[0]["deleted"]} == set(doomed)
    ben.close()
    chain = team.verify_chain(s3)
    assert chain.ok and chain.checked == 1, chain.problems
    kept = written(machines, "ann", "ben")
    for name in ("ann", "carol"):
        store = machines.open(name, monkeypatch)
        assert {m.id for m in store.list(Scope.everyone(), limit=1000)} == set(kept), name
        assert not list(
            store.engine.layout.journal.glob("purge-*.json")
        )  # carol's own copy: finished elsewhere
        store.close()
    nothing_forgotten_in_the_prefix(s3_endpoint, bucket, "team", doomed, "zebraquartz")


def test_a_lease_that_expires_under_a_slow_purge_refuses_its_late_steps(
    tmp_path, s3_endpoint, bucket, monkeypatch
):
    machines = Machines(tmp_path, f"s3://{bucket}/team", s3_endpoint)
    machines.run("ann", "write", "ann:3")
    machines.run("carol", "seed", "5")
    (tmp_path / "doomed.jsonl").write_text(machines.out("carol").read_text())
    doomed = [line["id"] for line in machines.lines("carol")]
    slow = machines.start("carol", "forget", str(tmp_path / "doomed.jsonl"), MEMDECK_TEST_STALL_AT="deleted")
    _, status = os.waitpid(slow.pid, os.WUNTRACED)
    assert os.WIFSTOPPED(status)  # paused mid-purge, lease held, heartbeat stopped with it
    try:
        machines.run("ben", "write", "ben:2")  # takes the expired lease over and finishes the purge
    finally:
        os.kill(slow.pid, signal.SIGCONT)
    _, err = slow.communicate(timeout=300)
    assert slow.returncode == StoreLocked.exit_code or slow.returncode == 1, err.decode()[-2000:]
    assert "another machine took it" in err.decode()
    ben = machines.open("ben", monkeypatch)
    issued = receipts_of(ben)
    assert len(issued) == 1
    verified(issued[0])
    ben.close()
    carol = machines.open("carol", monkeypatch)
    assert receipts_of(carol) == []  # the stale holder signed nothing
    chain = team.verify_chain(S3Objects(machines.uri, options(s3_endpoint)))
    assert chain.ok and chain.checked == 1, chain.problems
    assert {m.id for m in carol.list(Scope.everyone(), limit=1000)} == set(written(machines, "ann", "ben"))
    carol.close()
    nothing_forgotten_in_the_prefix(s3_endpoint, bucket, "team", doomed, "zebraquartz")


def test_a_running_machine_scrubs_its_trace_log_when_it_sees_another_machines_purge(
    tmp_path, s3_endpoint, bucket, monkeypatch
):
    machines = Machines(tmp_path, f"s3://{bucket}/team", s3_endpoint)
    machines.run("carol", "seed", "5")
    (tmp_path / "doomed.jsonl").write_text(machines.out("carol").read_text())
    ann = machines.open("ann", monkeypatch)  # stays open while carol forgets
    ann.recall("zebraquartz memo", principal="carol")
    traces.flush(ann.engine)
    assert traces.count_traces(ann.engine) == 1
    machines.run("carol", "forget", str(tmp_path / "doomed.jsonl"))
    ann.remember("after the purge", tier="semantic", principal="ann")  # the epoch moved: catch up
    ann.engine.background.join()
    assert traces.count_traces(ann.engine) == 0
    ann.close()


def test_a_receipt_on_a_bucket_names_the_object_that_still_holds_forgotten_text(
    tmp_path, s3_endpoint, bucket, monkeypatch
):
    machines = Machines(tmp_path, f"s3://{bucket}/team", s3_endpoint)
    store = machines.open("ann", monkeypatch)
    doomed = store.remember("doomed zebraquartz note", tier="semantic", principal="carol").memory.id
    store.remember("a kept note", tier="semantic", principal="carol")
    s3 = boto3.client("s3", endpoint_url=s3_endpoint, region_name="us-east-1")
    s3.put_object(
        Bucket=bucket, Key="team/_memdeck/notes/copy.txt", Body=b"someone pasted: doomed zebraquartz note"
    )
    receipt = store.forget([doomed], "user request")
    failed = {c["name"]: c["detail"] for c in receipt["checks"] if not c["passed"]}
    assert receipt["outcome"] == "checks_failed"
    assert list(failed) == ["bucket_objects_clean"]
    assert "_memdeck/notes/copy.txt" in failed["bucket_objects_clean"]
    s3.delete_object(Bucket=bucket, Key="team/_memdeck/notes/copy.txt")
    store.close()


def test_receipts_issued_on_another_machine_are_listed_shown_verified_and_exported(
    tmp_path, s3_endpoint, bucket, monkeypatch, capsys
):
    machines = Machines(tmp_path, f"s3://{bucket}/team", s3_endpoint)
    machines.run("carol", "seed", "3")
    (tmp_path / "doomed.jsonl").write_text(machines.out("carol").read_text())
    machines.run("carol", "forget", str(tmp_path / "doomed.jsonl"))
    issued = [line["receipt"] for line in machines.lines("carol") if "receipt" in line]
    assert issued
    rid = issued[0]
    ann = machines.open("ann", monkeypatch)  # a machine that issued nothing
    ann.close()
    monkeypatch.setenv("MEMDECK_HOME", machines.env("ann")["MEMDECK_HOME"])
    store = str(tmp_path / "machine-ann")
    capsys.readouterr()
    assert main(["--store", store, "receipts", "list", "--json"]) == 0
    rows = {r["receipt_id"]: r for r in json.loads(capsys.readouterr().out)}
    assert (
        rid in rows
        and rows[rid]["issued_by"] not in ("", "this machine")
        and rows[rid]["outcome"] == "verified"
    )
    assert main(["--store", store, "receipts", "show", rid[:12]]) == 0
    assert "Issued by" in capsys.readouterr().out
    assert main(["--store", store, "receipts", "verify", rid[:12]]) == 0
    out = capsys.readouterr().out
    assert "signature ok" in out and "outcome: verified" in out and "issued by" in out
    dest = tmp_path / "exported.json"
    assert main(["--store", store, "receipts", "export", rid[:12], str(dest)]) == 0
    assert json.loads(dest.read_text())["receipt_id"] == rid and not verify_receipt(
        json.loads(dest.read_text())
    )
