"""Opening a store from hostile or mistaken input, through the installed `memdeck` command: an empty
--store, a folder that is not a store, a read-only store."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

MEMDECK = str(Path(sys.executable).with_name("memdeck"))


@pytest.fixture
def home(memdeck_home: Path) -> Path:
    (memdeck_home / "config.toml").write_text('[embedding]\nmodel = "hash-384"\n')
    return memdeck_home


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [MEMDECK, *args], capture_output=True, text=True, timeout=120, env=os.environ.copy(), check=False
    )


def test_an_empty_store_path_is_refused_not_taken_for_the_default_store(home: Path) -> None:
    for args in (
        ["--store", "", "add", "a note", "--tier", "semantic", "--principal", "ann"],
        ["--store", " ", "list"],
        ["--store", ""],
        ["--store", "", "mcp", "--principal", "ann"],
    ):
        r = run(*args)
        assert r.returncode != 0, args
        assert r.stderr.splitlines() == [
            "memdeck: error: the store path is empty; give a store folder, or leave --store out for the default store"
        ], args
    assert not (home / "store").exists()  # the default store was never opened, let alone created


def _snapshot(folder: Path) -> dict[str, tuple[int, bytes | None]]:
    out = {}
    for path in [folder, *sorted(folder.rglob("*"))]:
        st = path.lstat()
        out[str(path.relative_to(folder))] = (
            stat.S_IMODE(st.st_mode),
            path.read_bytes() if path.is_file() else None,
        )
    return out


def test_a_folder_that_is_not_a_store_is_refused_and_left_untouched(home: Path, tmp_path: Path) -> None:
    folder = tmp_path / "Documents"
    (folder / "taxes").mkdir(parents=True)
    (folder / "notes.txt").write_text("my notes\n")
    (folder / "taxes" / "2025.pdf").write_bytes(b"%PDF-1.4")
    os.chmod(folder, 0o755)
    os.chmod(folder / "taxes", 0o755)
    os.chmod(folder / "notes.txt", 0o644)
    os.chmod(folder / "taxes" / "2025.pdf", 0o644)
    before = _snapshot(folder)
    for args in (
        ["add", "a note", "--tier", "semantic", "--principal", "ann"],
        ["list"],
        [],
        ["import", str(folder / "notes.txt"), "--principal", "ann"],
    ):
        r = run("--store", str(folder), *args)
        assert r.returncode != 0, args
        lines = r.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith(
            f"memdeck: error: {folder} is not a memdeck store and not empty"
        ), lines
        assert "notes.txt" in lines[0] and "nothing in it was changed" in lines[0]
    assert _snapshot(folder) == before  # no memdeck.json, no lance/, no store.lock, no mode changed


def test_an_empty_folder_and_an_existing_store_open_as_before(home: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    r = run("--store", str(empty), "add", "ann likes tea", "--tier", "semantic", "--principal", "ann")
    assert r.returncode == 0, r.stderr
    assert (empty / "memdeck.json").exists()
    r = run("--store", str(empty), "list", "--principal", "ann")
    assert r.returncode == 0 and "ann likes tea" in r.stdout
    fresh = tmp_path / "not" / "yet" / "there"
    assert (
        run(
            "--store", str(fresh), "add", "ann likes jam", "--tier", "semantic", "--principal", "ann"
        ).returncode
        == 0
    )


@pytest.fixture
def small_fs(tmp_path: Path) -> Any:
    mount_point = tmp_path / "small"
    mount_point.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=20m", "tmpfs", str(mount_point)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"mounting a tmpfs is not permitted here: {done.stderr.strip()}")
    try:
        yield mount_point
    finally:
        if subprocess.run(
            ["umount", str(mount_point)], capture_output=True, timeout=30, check=False
        ).returncode:
            subprocess.run(["umount", "-l", str(mount_point)], capture_output=True, timeout=30, check=False)


def test_a_write_to_a_read_only_store_says_the_store_is_read_only(home: Path, small_fs: Path) -> None:
    store = small_fs / "store"
    r = run("--store", str(store), "add", "ann likes tea", "--tier", "semantic", "--principal", "ann")
    assert r.returncode == 0, r.stderr
    remount = subprocess.run(
        ["mount", "-o", "remount,ro", str(small_fs)], capture_output=True, text=True, timeout=30, check=False
    )
    if remount.returncode != 0:
        pytest.skip(f"cannot remount read-only: {remount.stderr.strip()}")
    r = run("--store", str(store), "add", "ann likes jam", "--tier", "semantic", "--principal", "ann")
    assert r.returncode != 0
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "memdeck: error: cannot write to the store: the store is read-only"
    ), lines
    assert "free space" not in lines[0]
    r = run("--store", str(store), "list", "--principal", "ann")
    assert r.returncode == 0 and "ann likes tea" in r.stdout  # reading still works
