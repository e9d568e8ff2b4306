"""Redaction that cannot run refuses the write: one clear line, nothing stored, on add and import paths."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memdeck.core.embed import HashEmbedder
from memdeck.core.errors import MemdeckError
from memdeck.core.privacy.redact import Redactor
from memdeck.core.privacy.vault import Vault, principal_dirname
from memdeck.core.store import Store

SECRET_TEXT = "carol's mail is carol.wexley@example.org"


def cli(args: list[str], home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMDECK_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "memdeck.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def stored_texts(root: Path) -> list[str]:
    store = Store.open(root, embedder=HashEmbedder())
    try:
        return [m.text for m in store.list(limit=1000)]
    finally:
        store.close()


def seeded(root: Path) -> Path:
    """A store where alice already has a vault; returns her vault key file."""
    store = Store.open(root, embedder=HashEmbedder())
    store.remember("alice's mail is alice@example.org", tier="semantic", principal="alice")
    store.close()
    return root / "vault" / principal_dirname("alice") / "key"


def write_import_file(tmp_path: Path) -> Path:
    path = tmp_path / "in.jsonl"
    path.write_text(json.dumps({"text": SECRET_TEXT, "principal": "alice", "tier": "semantic"}) + "\n")
    return path


def damage_key(key: Path) -> None:
    key.write_bytes(b"short")


def zero_key(key: Path) -> None:
    key.write_bytes(bytes(32))  # what a shredded key looks like


def wrong_key(key: Path) -> None:
    key.write_bytes(os.urandom(32))


def vault_is_a_file(key: Path) -> None:
    vault = key.parent.parent
    for p in sorted(vault.rglob("*"), reverse=True):
        p.unlink() if p.is_file() else p.rmdir()
    vault.rmdir()
    vault.write_text("not a directory")


@pytest.mark.parametrize("damage", [damage_key, zero_key, wrong_key, vault_is_a_file])
@pytest.mark.parametrize("path", ["add", "import"])
def test_an_unusable_vault_refuses_the_write(tmp_path, memdeck_home, damage, path):
    root = tmp_path / "store"
    key = seeded(root)
    damage(key)
    if path == "add":
        r = cli(
            ["--store", str(root), "add", SECRET_TEXT, "--tier", "semantic", "--principal", "alice"],
            memdeck_home,
        )
    else:
        r = cli(["--store", str(root), "import", str(write_import_file(tmp_path))], memdeck_home)
    assert r.returncode not in (0, 1), r.stderr  # refused as a user-facing error, not a crash
    lines = [line for line in r.stderr.splitlines() if line.startswith("memdeck: error:")]
    assert lines and "redaction could not run, nothing was stored" in lines[0], r.stderr
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr
    assert not any("carol" in t for t in stored_texts(root))


class BrokenDetector(Redactor):
    def detect(self, text: str):  # type: ignore[override]
        raise RuntimeError("detector crashed")


def broken_store(root: Path) -> Store:
    store = Store.open(root, embedder=HashEmbedder())
    store.engine._redactor = BrokenDetector(Vault(store.engine.layout.vault))
    return store


def test_a_raising_detector_refuses_add_and_batch(tmp_path):
    store = broken_store(tmp_path / "store")
    with pytest.raises(
        MemdeckError, match=r"^redaction could not run, nothing was stored: RuntimeError: detector crashed$"
    ):
        store.remember(SECRET_TEXT, tier="semantic", principal="alice")
    with pytest.raises(MemdeckError, match="nothing was stored"):
        store.remember_many(
            [{"text": "fine", "principal": "alice"}, {"text": SECRET_TEXT, "principal": "alice"}]
        )
    assert store.count() == 0
    store.close()


def test_a_raising_detector_refuses_import_and_edit(tmp_path):
    from memdeck.core.exchange.importer import restore_many
    from memdeck.core.records import Memory

    root = tmp_path / "store"
    store = Store.open(root, embedder=HashEmbedder())
    kept = store.remember("a plain fact", tier="semantic", principal="alice").memory
    store.engine._redactor = BrokenDetector(Vault(store.engine.layout.vault))
    memory = Memory(
        id="sem_imported0000000001", tier="semantic", principal="alice", agent="user", text=SECRET_TEXT
    )
    with pytest.raises(MemdeckError, match="nothing was stored"):
        restore_many(store.engine, [memory])
    with pytest.raises(MemdeckError, match="nothing was stored"):
        store.edit(kept.id, SECRET_TEXT)
    assert [m.text for m in store.list()] == ["a plain fact"]
    store.close()


def test_a_vault_that_cannot_be_written_refuses_the_write(tmp_path, monkeypatch):
    """An unwritable vault directory (as root, permissions do not stop writes: the write itself fails)."""
    import memdeck.core.privacy.vault as vault_module

    store = Store.open(tmp_path / "store", embedder=HashEmbedder())

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(store.engine.layout.vault / "x" / "vault.bin"))

    monkeypatch.setattr(vault_module, "write_atomic_bytes", refuse)
    with pytest.raises(MemdeckError, match=r"nothing was stored: PermissionError: Permission denied"):
        store.remember(SECRET_TEXT, tier="semantic", principal="bob")
    assert store.count() == 0
    store.close()
