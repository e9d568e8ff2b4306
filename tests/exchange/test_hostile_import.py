"""Imports under hostile or broken input, through the installed `memdeck` command: one bad record loses only
itself (reported once, by line), memory stays bounded whatever the file, a full disk stops the import with
one line, and a header cannot put tombstones on memories the store holds."""

from __future__ import annotations

import base64
import json
import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from memdeck.core.errors import MemdeckError
from memdeck.core.exchange import import_path, importer
from memdeck.core.filters import Scope
from memdeck.core.forget import forget, tombstones
from memdeck.core.store import Store

MEMDECK = str(Path(sys.executable).with_name("memdeck"))


@pytest.fixture
def home(memdeck_home: Path) -> Path:
    (memdeck_home / "config.toml").write_text('[embedding]\nmodel = "hash-384"\n')
    return memdeck_home


def run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [MEMDECK, *args], capture_output=True, text=True, timeout=timeout, env=os.environ.copy(), check=False
    )


def good(n: int) -> str:
    return json.dumps({"text": f"good record number {n} about subject {n * 7}", "principal": "alice"})


def stored_texts(root: Path) -> set[str]:
    from memdeck.core.embed import HashEmbedder

    s = Store.open(root, embedder=HashEmbedder(), create=False)
    try:
        return {m.text for m in s.list(Scope.of("alice"), limit=10_000)}
    finally:
        s.close()


def test_an_oversized_text_and_oversized_versions_lose_only_their_own_lines(
    home: Path, tmp_path: Path
) -> None:
    lines = [good(n) for n in range(300)]
    bad = {
        6: json.dumps({"text": "x" * 1_000_001, "principal": "alice"}),
        41: json.dumps(
            {
                "id": "sem_big_version",
                "tier": "semantic",
                "text": "a fact",
                "principal": "alice",
                "version": 2**31,
            }
        ),
        120: json.dumps(
            {
                "id": "pro_big_version",
                "tier": "procedural",
                "text": "a procedure",
                "name": "p",
                "principal": "alice",
                "proc_version": 2**31,
            }
        ),
        290: json.dumps(
            {"id": "epi_big_text", "tier": "episodic", "summary": "y" * 1_000_001, "principal": "alice"}
        ),
    }
    for lineno in sorted(bad):
        lines.insert(lineno - 1, bad[lineno])
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(lines) + "\n")
    store = tmp_path / "store"
    r = run("--store", str(store), "import", str(path), "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["imported"] == 300
    assert [p["where"] for p in report["problems"]] == [f"line {n}" for n in sorted(bad)]
    # one line on stderr for each bad record, naming it, and nothing else
    err = r.stderr.strip().splitlines()
    assert len(err) == 4 and [e.split(":")[1].strip() for e in err] == [f"line {n}" for n in sorted(bad)], err
    assert "1,000,000" in err[0] and "2147483647" in err[1] and "2147483647" in err[2]
    assert {f"good record number {n} about subject {n * 7}" for n in range(300)} <= stored_texts(store)


# Linux carries a process's peak resident memory across fork and exec: a child forked from this test process
# (which may have grown to a gigabyte by then) would report at least that. A small wrapper process forks the
# command instead and reports the command's own peak.
_MEASURE = (
    "import resource, subprocess, sys\n"
    "r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    "sys.exit(r.returncode)\n"
)


def _run_measured(args: list[str], timeout: float) -> tuple[int, str, int]:
    """Run the command; its exit code, stderr and peak resident memory in KiB (its own)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _MEASURE, MEMDECK, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=os.environ.copy(),
        start_new_session=True,
    )
    killer = threading.Timer(timeout, lambda: os.killpg(proc.pid, 9))
    killer.start()
    try:
        out, err = proc.communicate()
    finally:
        killer.cancel()
    peak = int(out.decode().strip() or 0) if proc.returncode >= 0 else 0
    return proc.returncode, err.decode("utf-8", "replace"), peak


def test_importing_dev_zero_ends_quickly_with_one_line_and_bounded_memory(home: Path, tmp_path: Path) -> None:
    started = time.monotonic()
    code, err, peak_kib = _run_measured(
        ["--store", str(tmp_path / "store"), "import", "/dev/zero"], timeout=60
    )
    assert time.monotonic() - started < 60, "the import of /dev/zero did not end"
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 2, lines
    assert (
        lines[0].startswith("memdeck: line 1: longer than 16 MiB")
        and "the rest of /dev/zero was not read" in lines[0]
    )
    assert lines[1].startswith("memdeck: error: nothing in /dev/zero could be imported")
    assert peak_kib < 1024 * 1024, f"peak memory {peak_kib} KiB"


def test_a_line_over_the_limit_in_a_file_is_one_error_and_the_next_lines_are_read(
    home: Path, tmp_path: Path
) -> None:
    path = tmp_path / "in.jsonl"
    with open(path, "wb") as fh:
        fh.write(good(1).encode() + b"\n")
        fh.write(b'{"text": "' + b"z" * (17 * 1024 * 1024) + b'", "principal": "alice"}\n')
        fh.write(good(2).encode() + b"\n")
    store = tmp_path / "store"
    code, err, peak_kib = _run_measured(["--store", str(store), "import", str(path)], timeout=120)
    assert code == 0, err
    assert err.strip().splitlines() == [
        "memdeck: line 2: longer than 16 MiB, the limit for one record; skipped"
    ]
    assert {"good record number 1 about subject 7", "good record number 2 about subject 14"} <= stored_texts(
        store
    )
    assert peak_kib < 1024 * 1024


def test_a_mem0_file_read_from_a_device_is_refused_not_read_whole(home: Path, tmp_path: Path) -> None:
    code, err, peak_kib = _run_measured(
        [
            "--store",
            str(tmp_path / "store"),
            "import",
            "/dev/zero",
            "--format",
            "mem0",
            "--principal",
            "alice",
        ],
        timeout=60,
    )
    assert code != 0
    assert err.strip().splitlines() == [
        "memdeck: error: /dev/zero is larger than 128 MiB, the limit for a mem0 export (one JSON document); split "
        "it, or convert it to JSONL (one memory a line)"
    ]
    assert peak_kib < 1024 * 1024


# --- a record the store refuses while writing its batch --------------------------------------------------


def test_a_record_refused_by_the_write_is_reported_once_and_its_batch_written(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Checks per record catch what they know of; whatever the write itself refuses costs that record
    only, and the failed batch is never carried into the next one."""
    path = tmp_path / "in.jsonl"
    lines = [good(n) for n in range(40)]
    lines[13] = json.dumps({"text": "the poisoned record", "principal": "alice"})
    path.write_text("\n".join(lines) + "\n")
    real = importer.remember_many
    calls: list[int] = []

    def remember_many(engine: Any, items: list[Any]) -> Any:
        calls.append(len(items))
        if any(i.text == "the poisoned record" for i in items):
            raise MemdeckError("this record cannot be stored")
        return real(engine, items)

    monkeypatch.setattr(importer, "remember_many", remember_many)
    seen: list[tuple[str, str]] = []
    report = import_path(store.engine, path, batch_size=8, on_problem=lambda w, p: seen.append((w, p)))
    assert seen == [("line 14", "this record cannot be stored")]
    assert report.imported == 39 and report.malformed == 1
    assert {f"good record number {n} about subject {n * 7}" for n in range(40) if n != 13} <= {
        m.text for m in store.list(Scope.of("alice"), limit=100)
    }
    assert sum(calls) <= 40 + 8 * 3, calls  # the failed batch is halved, never retried with every later line


def test_a_restored_record_no_column_can_hold_is_reported_once_and_its_batch_restored(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import memdeck.core.exchange.importer as importer

    path = tmp_path / "in.jsonl"
    records = [
        {"id": f"sem_restored_{n}", "tier": "semantic", "text": f"restored fact {n}", "principal": "alice"}
        for n in range(20)
    ]
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    real = importer.restore_many

    def restore_many(s: Store, memories: list[Any]) -> Any:
        if any(m.id == "sem_restored_6" for m in memories):
            raise ValueError("Value too large to fit in C integer type")
        return real(s, memories)

    monkeypatch.setattr(importer, "restore_many", restore_many)
    seen: list[tuple[str, str]] = []
    report = import_path(store.engine, path, batch_size=8, on_problem=lambda w, p: seen.append((w, p)))
    assert seen == [("line 7", "cannot be stored (Value too large to fit in C integer type)")]
    assert report.imported == 19
    assert {m.id for m in store.list(Scope.of("alice"), limit=100)} == {r["id"] for r in records} - {
        "sem_restored_6"
    }


# --- a full disk -------------------------------------------------------------------------------------------


@pytest.fixture
def small_fs(tmp_path: Path) -> Any:
    """A 2 MB tmpfs: the import's first batch of 256 records is committed, the next one fills the disk (every
    record read before the disk fills is redacted and embedded, so a larger disk only costs time)."""
    mount_point = tmp_path / "small"
    mount_point.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount_point)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"mounting a small tmpfs is not permitted here: {done.stderr.strip()}")
    try:
        yield mount_point
    finally:
        if subprocess.run(
            ["umount", str(mount_point)], capture_output=True, timeout=30, check=False
        ).returncode:
            subprocess.run(["umount", "-l", str(mount_point)], capture_output=True, timeout=30, check=False)


def test_an_import_onto_a_full_disk_stops_with_one_line(home: Path, tmp_path: Path, small_fs: Path) -> None:
    rng = random.Random(7)
    path = tmp_path / "in.jsonl"
    with open(path, "w") as fh:
        for n in range(3000):
            text = base64.b64encode(rng.randbytes(1500)).decode()
            fh.write(json.dumps({"text": f"record {n} {text}", "principal": "alice"}) + "\n")
    started = time.monotonic()
    r = run("--store", str(small_fs / "store"), "import", str(path), timeout=300)
    took = time.monotonic() - started
    assert r.returncode != 0
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, lines[:5]
    assert lines[0].startswith("memdeck: error: cannot write to the store: no space left on the device")
    assert "the import stopped after" in lines[0]
    assert took < 120, f"took {took:.0f}s"


# --- tombstones in an export's header --------------------------------------------------------------------


def _header(entries: list[dict[str, str]]) -> str:
    return json.dumps({"format": "memdeck.export/1", "tombstones": entries})


def test_a_header_cannot_tombstone_a_principals_live_memories(home: Path, tmp_path: Path) -> None:
    from memdeck.core.embed import HashEmbedder

    root = tmp_path / "store"
    s = Store.open(root, embedder=HashEmbedder())
    alice = s.remember("alice's flight lands at nine", tier="semantic", principal="alice").memory
    bob = s.remember("bob's locker code is 4411", tier="semantic", principal="bob").memory
    s.close()
    path = tmp_path / "planted.jsonl"
    path.write_text(
        "\n".join(
            [
                _header(
                    [
                        {"id": alice.id, "p": tombstones.principal_key("alice")},
                        {"id": bob.id, "p": tombstones.principal_key("bob")},
                        {"id": "sem_gone_elsewhere", "p": tombstones.principal_key("bob")},
                    ]
                ),
                json.dumps({"text": "alice likes window seats", "principal": "alice"}),
            ]
        )
        + "\n"
    )
    for principal in ("alice", None):
        args = ["--store", str(root), "import", str(path), *(["--principal", principal] if principal else [])]
        r = run(*args)
        assert r.returncode == 0, r.stderr
        assert "name memories this store holds; not taken" in r.stderr
    s = Store.open(root, embedder=HashEmbedder(), create=False)
    try:
        assert not tombstones.is_forgotten(s.engine, "alice", id=alice.id)
        assert not tombstones.is_forgotten(s.engine, "bob", id=bob.id)
        # an id this store does not hold may be forgotten by the header (what a header is for), but only
        # once the import is not limited to another principal
        assert tombstones.is_forgotten(s.engine, "bob", id="sem_gone_elsewhere")
    finally:
        s.close()


def test_with_principal_only_that_principals_header_tombstones_are_taken(
    store: Store, tmp_path: Path
) -> None:
    path = tmp_path / "planted.jsonl"
    path.write_text(
        _header(
            [
                {"id": "sem_old_alice", "p": tombstones.principal_key("alice")},
                {"id": "sem_old_bob", "p": tombstones.principal_key("bob")},
            ]
        )
        + "\n"
    )
    notes: list[str] = []
    import_path(store.engine, path, principal="alice", on_problem=lambda _w, what: notes.append(what))
    assert tombstones.is_forgotten(store.engine, "alice", id="sem_old_alice")
    assert not tombstones.is_forgotten(store.engine, "bob", id="sem_old_bob")
    assert notes == ["1 tombstone(s) in the header are of other principals than alice; not taken"]


def test_a_legitimate_exports_tombstones_still_refuse_an_old_copy(
    store: Store, open_store, tmp_path: Path
) -> None:
    from memdeck.core.exchange import export_jsonl

    old = tmp_path / "old.jsonl"
    gone = store.remember("the old door code is 1234", tier="semantic", principal="alice").memory
    store.remember("alice likes tea", tier="semantic", principal="alice")
    export_jsonl(store.engine, old, Scope.of("alice"))
    forget(store.engine, [gone.id], reason="user request")
    new = tmp_path / "new.jsonl"
    export_jsonl(store.engine, new, Scope.of("alice"))
    other = open_store(tmp_path / "other")
    import_path(other.engine, new, principal="alice")
    report = import_path(other.engine, old, principal="alice")
    assert report.forgotten == 1 and gone.id not in {m.id for m in other.list(limit=100)}
