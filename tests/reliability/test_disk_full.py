"""Disk full: on a 2 MB tmpfs, a write that does not fit fails with one clear error, and everything committed
before it stays intact and readable (the store opens, doctor finds nothing wrong, recall works).

Needs permission to mount a tmpfs (root in the test machines); skipped with the reason otherwise.
"""

from __future__ import annotations

import base64
import json
import random
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from memdeck.cli import main
from memdeck.core import MemdeckError, Scope
from memdeck.core.embed import HashEmbedder
from memdeck.core.maintenance.doctor import diagnose
from memdeck.core.store import Store


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    mount_point = tmp_path / "small"
    mount_point.mkdir()
    try:
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount_point)],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"cannot run mount to make a small file system: {exc}")
    if done.returncode != 0:
        pytest.skip(f"mounting a 2 MB tmpfs is not permitted here: {done.stderr.strip()}")
    try:
        yield mount_point
    finally:
        umount = ["umount", str(mount_point)]
        if subprocess.run(umount, capture_output=True, timeout=30, check=False).returncode != 0:
            subprocess.run(["umount", "-l", str(mount_point)], capture_output=True, timeout=30, check=False)


def noise(rng: random.Random, n: int) -> str:
    """Text that does not compress away, so the disk really fills."""
    words = base64.b64encode(rng.randbytes(n * 3 // 4)).decode()
    return " ".join(words[i : i + 12] for i in range(0, len(words), 12))


def fill_until_refused(store: Store, rng: random.Random) -> MemdeckError:
    for _ in range(100):  # 2 MB fills in about a dozen writes; bounded either way
        try:
            store.remember(noise(rng, 150_000), tier="semantic", principal="filler")
        except MemdeckError as exc:
            return exc
    raise AssertionError("100 writes of 150 kB fitted on a 2 MB file system")


def test_writes_fail_clearly_and_what_was_committed_survives(small_fs, memdeck_home):
    path = small_fs / "store"
    store = Store.open(path, embedder=HashEmbedder())
    kept = [
        store.remember(f"committed fact {i} about the budget", tier="semantic", principal="alice").memory.id
        for i in range(5)
    ]
    kept.append(store.remember("standup moved to ten", tier="episodic", principal="alice").memory.id)
    store.edit(kept[0], "committed fact 0 about the budget, revised")
    error = fill_until_refused(store, random.Random(3))
    assert "no space left" in str(error) and "intact" in str(error)
    committed = store.count()

    # The same handle still reads; a fresh one sees exactly the committed rows, all whole.
    assert store.get(kept[0]).text.endswith("revised")
    store.close()
    again = Store.open(path, embedder=HashEmbedder(), create=False)
    assert again.count() == committed
    assert [again.get(i, Scope.of("alice")).id for i in kept] == kept
    assert again.history(kept[0])[0]["text"] == "committed fact 0 about the budget"
    assert again.recall("budget", principal="alice", record_access=False).items
    report = diagnose(again.engine)
    assert report.ok, report.lines()
    again.close()


def test_cli_prints_one_line_and_recovers_once_space_is_freed(small_fs, memdeck_home, capfd):
    (memdeck_home / "config.toml").write_text('[embedding]\nmodel = "hash-384"\n')
    store = str(small_fs / "store")
    assert main(["add", "first fact", "--tier", "semantic", "--principal", "p", "--store", store]) == 0
    filler = small_fs / "filler"
    with open(filler, "wb") as fh:  # take every free byte
        try:
            while True:
                fh.write(b"\0" * 65536)
                fh.flush()
        except OSError:
            pass
    capfd.readouterr()
    code = main(
        ["add", noise(random.Random(5), 50_000), "--tier", "semantic", "--principal", "p", "--store", store]
    )
    out, err = capfd.readouterr()
    assert code != 0
    assert err.startswith("memdeck: error: cannot write to the store: no space left"), err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err

    filler.unlink()
    assert main(["add", "second fact", "--tier", "semantic", "--principal", "p", "--store", store]) == 0
    capfd.readouterr()
    assert main(["list", "--principal", "p", "--json", "--store", store]) == 0
    out, _ = capfd.readouterr()
    assert {"first fact", "second fact"} <= {m["text"] for m in json.loads(out)}
