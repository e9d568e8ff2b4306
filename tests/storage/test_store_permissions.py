"""Issue #14 item 14: a store is private to its owner: the directory 0700, memdeck's own files 0600."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from memdeck.core.embed import HashEmbedder
from memdeck.core.filters import Scope
from memdeck.core.forget import forget
from memdeck.core.store import Store


def test_a_new_store_and_its_files_are_private(tmp_path: Path) -> None:
    old = os.umask(0o022)  # the usual umask, which gave 0755 and 0644 before
    try:
        store = Store.open(tmp_path / "store", embedder=HashEmbedder())
        m = store.remember("my SSN is 078-05-1120", tier="semantic", principal="alice").memory
        store.recall("ssn", principal="alice")
        forget(store.engine, [m.id], reason="test", scope=Scope.of("alice"))  # rewrites analytics.duckdb
        store.remember("after the forget", tier="semantic", principal="alice")
        store.recall("after", principal="alice")
        store.close()
    finally:
        os.umask(old)
    root = tmp_path / "store"
    assert stat.S_IMODE(root.stat().st_mode) == 0o700
    for name in ("memdeck.json", "analytics.duckdb"):
        assert stat.S_IMODE((root / name).stat().st_mode) == 0o600, name
    loose = []
    for dirpath, dirnames, filenames in os.walk(root):
        if "lance" in Path(dirpath).relative_to(root).parts:
            continue  # Lance's own data files: behind the 0700 directory
        for name in filenames:
            path = Path(dirpath) / name
            if stat.S_IMODE(path.stat().st_mode) & 0o077:
                loose.append(str(path.relative_to(root)))
        for name in dirnames:
            path = Path(dirpath) / name
            if name != "lance" and stat.S_IMODE(path.stat().st_mode) & 0o077:
                loose.append(str(path.relative_to(root)) + "/")
    assert loose == []


def test_a_store_an_older_memdeck_left_open_is_made_private_on_open(tmp_path: Path) -> None:
    root = tmp_path / "store"
    store = Store.open(root, embedder=HashEmbedder())
    store.remember("a note", tier="semantic", principal="alice")
    store.close()
    # As an older memdeck left it: every folder 0755, every file 0644 (Lance's files included).
    paths = [Path(d) / n for d, dirs, files in os.walk(root) for n in dirs + files]
    for path in paths:
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    os.chmod(root, 0o755)
    outside = tmp_path / "elsewhere.txt"
    outside.write_text("not the store's")
    os.chmod(outside, 0o644)
    (root / "link-out").symlink_to(outside)  # a link is not followed

    Store.open(root, embedder=HashEmbedder()).close()
    assert stat.S_IMODE(root.stat().st_mode) == 0o700
    loose = [
        str(p.relative_to(root))
        for p in paths
        if stat.S_IMODE(p.stat().st_mode) != (0o700 if p.is_dir() else 0o600)
    ]
    assert loose == []
    assert any("lance" in p.parts and p.suffix == ".lance" for p in paths)  # data files were covered
    assert stat.S_IMODE(outside.stat().st_mode) == 0o644
