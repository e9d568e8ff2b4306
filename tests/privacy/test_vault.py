"""The per-principal encrypted token vault (core/privacy/vault.py)."""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import stat
from pathlib import Path

import pytest

from memdeck.core.errors import IntegrityError, MemdeckError
from memdeck.core.privacy import Vault


@pytest.fixture()
def vault(tmp_path: Path) -> Vault:
    return Vault(tmp_path / "vault")


def _pdir(root: Path, principal: str) -> Path:
    return root / hashlib.sha256(principal.encode()).hexdigest()


def test_tokens_are_stable_and_numbered_per_kind(vault: Vault) -> None:
    a = vault.token_for("alice", "EMAIL", "a@example.com")
    b = vault.token_for("alice", "EMAIL", "b@example.com")
    p = vault.token_for("alice", "PHONE", "+44 20 7946 0958")
    assert (a, b, p) == ("<EMAIL_1>", "<EMAIL_2>", "<PHONE_1>")
    assert vault.token_for("alice", "EMAIL", "a@example.com") == a
    # a fresh instance (another process, later) reads the same map back
    again = Vault(vault.root)
    assert again.token_for("alice", "EMAIL", "b@example.com") == b
    assert again.tokens("alice") == {a: "a@example.com", b: "b@example.com", p: "+44 20 7946 0958"}
    assert again.lookup("alice", "<EMAIL_2>") == "b@example.com"
    assert again.lookup("alice", "<EMAIL_3>") is None


def test_tokens_for_many_writes_once_and_keeps_order(vault: Vault) -> None:
    items = [("EMAIL", "x@y.org"), ("SECRET", "hunter22"), ("EMAIL", "x@y.org"), ("EMAIL", "z@y.org")]
    assert vault.tokens_for("alice", items) == ["<EMAIL_1>", "<SECRET_1>", "<EMAIL_1>", "<EMAIL_2>"]
    assert vault.tokens_for("alice", []) == []


def test_principals_are_independent(vault: Vault) -> None:
    ta = vault.token_for("alice", "EMAIL", "alice@example.com")
    tb = vault.token_for("bob", "EMAIL", "bob@example.com")
    assert ta == tb == "<EMAIL_1>"  # independent numbering
    bob_text = f"write to {tb}"
    # alice cannot read bob's value: her reveal only knows her own map
    assert "bob@example.com" not in vault.reveal("alice", bob_text)
    assert vault.reveal("bob", bob_text) == "write to bob@example.com"
    assert vault.lookup("alice", "<EMAIL_1>") == "alice@example.com"
    assert vault.reveal("carol", bob_text) == bob_text  # no vault at all


def test_reveal_leaves_unknown_tokens(vault: Vault) -> None:
    vault.token_for("alice", "SECRET", "s3cr3t-value")
    text = "key <SECRET_1>, other <SECRET_2>, <EMAIL_1>, <secret_1>, <SECRET_1"
    assert (
        vault.reveal("alice", text) == "key s3cr3t-value, other <SECRET_2>, <EMAIL_1>, <secret_1>, <SECRET_1"
    )


def test_nothing_readable_on_disk(vault: Vault) -> None:
    vault.token_for("alice.smith@corp.example", "EMAIL", "alice.smith@corp.example")
    vault.token_for("alice.smith@corp.example", "SECRET", "AKIAIOSFODNN7ABCDEFG")
    names = [p.name for p in vault.root.rglob("*")]
    assert not any("alice" in n for n in names)
    d = _pdir(vault.root, "alice.smith@corp.example")
    assert sorted(p.name for p in d.iterdir()) == ["key", "vault.bin"]
    blob = (d / "vault.bin").read_bytes()
    assert b"alice" not in blob and b"AKIA" not in blob and b"EMAIL" not in blob
    assert len((d / "key").read_bytes()) == 32


def test_file_permissions(vault: Vault) -> None:
    old = os.umask(0o022)
    try:
        vault.token_for("alice", "EMAIL", "a@example.com")
    finally:
        os.umask(old)
    d = _pdir(vault.root, "alice")
    assert stat.S_IMODE(os.stat(d / "key").st_mode) == 0o600
    assert stat.S_IMODE(os.stat(d / "vault.bin").st_mode) == 0o600
    assert stat.S_IMODE(os.stat(d).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(vault.root).st_mode) == 0o700
    # a key made readable by others is narrowed again on the next read
    os.chmod(d / "key", 0o644)
    assert Vault(vault.root).lookup("alice", "<EMAIL_1>") == "a@example.com"
    assert stat.S_IMODE(os.stat(d / "key").st_mode) == 0o600


def test_each_write_uses_a_fresh_nonce(vault: Vault) -> None:
    vault.token_for("alice", "EMAIL", "a@example.com")
    path = _pdir(vault.root, "alice") / "vault.bin"
    first = path.read_bytes()
    vault.token_for("alice", "EMAIL", "b@example.com")
    second = path.read_bytes()
    assert first[:4] == second[:4] == b"MDV1"
    assert first[4:16] != second[4:16]


def test_destroy_shreds_key_and_removes_everything(vault: Vault, tmp_path: Path) -> None:
    vault.token_for("alice", "EMAIL", "a@example.com")
    vault.token_for("alice", "PHONE", "+1 415 555 0132")
    vault.token_for("bob", "EMAIL", "b@example.com")
    d = _pdir(vault.root, "alice")
    # a second name for the key's inode shows that the bytes themselves were overwritten
    os.link(d / "key", tmp_path / "key-link")
    stolen = (d / "vault.bin").read_bytes()

    result = vault.destroy("alice")
    assert result == {"principal_vault_destroyed": True, "tokens": 2}
    assert not d.exists()
    assert (tmp_path / "key-link").read_bytes() == bytes(32)
    assert not vault.exists("alice")
    assert vault.reveal("alice", "mail <EMAIL_1>") == "mail <EMAIL_1>"
    assert vault.lookup("alice", "<EMAIL_1>") is None
    assert vault.tokens("alice") == {}
    # other principals are untouched; a second destroy is a no-op
    assert vault.reveal("bob", "<EMAIL_1>") == "b@example.com"
    assert vault.destroy("alice") == {"principal_vault_destroyed": False, "tokens": 0}
    # the stolen ciphertext cannot be opened with a new key for the same principal
    assert vault.token_for("alice", "EMAIL", "new@example.com") == "<EMAIL_1>"
    (d / "vault.bin").write_bytes(stolen)
    with pytest.raises(IntegrityError):
        Vault(vault.root).lookup("alice", "<EMAIL_1>")


def test_destroy_is_visible_to_another_instance(vault: Vault) -> None:
    vault.token_for("alice", "EMAIL", "a@example.com")
    other = Vault(vault.root)
    assert other.reveal("alice", "<EMAIL_1>") == "a@example.com"  # now cached in `other`
    vault.destroy("alice")
    assert other.reveal("alice", "<EMAIL_1>") == "<EMAIL_1>"
    assert other.lookup("alice", "<EMAIL_1>") is None


def test_cache_sees_writes_from_another_instance(vault: Vault) -> None:
    other = Vault(vault.root)
    vault.token_for("alice", "EMAIL", "a@example.com")
    assert other.lookup("alice", "<EMAIL_1>") == "a@example.com"
    other.token_for("alice", "EMAIL", "b@example.com")
    assert vault.lookup("alice", "<EMAIL_2>") == "b@example.com"
    assert vault.token_for("alice", "EMAIL", "c@example.com") == "<EMAIL_3>"


def test_tampering_and_swapped_vaults_are_detected(vault: Vault) -> None:
    vault.token_for("alice", "EMAIL", "a@example.com")
    vault.token_for("bob", "EMAIL", "b@example.com")
    a, b = _pdir(vault.root, "alice"), _pdir(vault.root, "bob")
    # bob's key and vault moved under alice's name: the principal is authenticated data
    for name in ("key", "vault.bin"):
        (a / name).write_bytes((b / name).read_bytes())
    with pytest.raises(IntegrityError):
        Vault(vault.root).lookup("alice", "<EMAIL_1>")
    data = bytearray((b / "vault.bin").read_bytes())
    data[-1] ^= 1
    (b / "vault.bin").write_bytes(bytes(data))
    with pytest.raises(IntegrityError):
        Vault(vault.root).tokens("bob")


def test_bad_arguments(vault: Vault) -> None:
    with pytest.raises(MemdeckError):
        vault.token_for("alice", "email", "x@y.z")
    with pytest.raises(MemdeckError):
        vault.token_for("", "EMAIL", "x@y.z")
    with pytest.raises(MemdeckError):
        vault.token_for("alice", "EMAIL", 42)  # type: ignore[arg-type]
    assert not vault.exists("alice")


def _worker(root: str, who: str, shared: list[str], own: list[str], queue) -> None:  # pragma: no cover
    v = Vault(Path(root))
    out = {}
    for s, o in zip(shared, own, strict=False):
        out[s] = v.token_for("alice", "EMAIL", s)
        out[o] = v.token_for("alice", "EMAIL", o)
    queue.put((who, out))


def test_two_processes_adding_at_once_lose_nothing(vault: Vault) -> None:
    ctx = multiprocessing.get_context("fork")
    shared = [f"shared{i}@example.com" for i in range(25)]
    own_a = [f"a{i}@example.com" for i in range(25)]
    own_b = [f"b{i}@example.com" for i in range(25)]
    queue = ctx.Queue()
    procs = [
        ctx.Process(target=_worker, args=(str(vault.root), "a", shared, own_a, queue)),
        ctx.Process(target=_worker, args=(str(vault.root), "b", list(reversed(shared)), own_b, queue)),
    ]
    for p in procs:
        p.start()
    results = dict(queue.get(timeout=60) for _ in procs)
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    final = Vault(vault.root).tokens("alice")
    assert len(final) == 75
    assert sorted(final) == sorted(f"<EMAIL_{i}>" for i in range(1, 76))
    assert sorted(final.values()) == sorted(shared + own_a + own_b)
    # both processes were handed the same token for each shared value, and it is the stored one
    for value in shared:
        assert results["a"][value] == results["b"][value]
        assert final[results["a"][value]] == value
    for who, own in (("a", own_a), ("b", own_b)):
        for value in own:
            assert final[results[who][value]] == value
