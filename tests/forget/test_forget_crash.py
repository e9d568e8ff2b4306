"""A purge killed with exit 137 right after each journal step is finished by the next open, and still
ends with its receipt (the same receipt id, signed once)."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from memdeck.core.embed import HashEmbedder
from memdeck.core.forget import CRASH_ENV, pending, recover_pending
from memdeck.core.receipts import ReceiptBook
from memdeck.core.storage.locking import StoreLock
from memdeck.core.store import Store

CANARY = "wyvernfeather4402"

PURGE = """
import sys
from memdeck.core.embed import HashEmbedder
from memdeck.core.forget import forget, forget_principal
from memdeck.core.store import Store

store = Store.open(sys.argv[1], embedder=HashEmbedder())
if sys.argv[2] == "--principal":
    forget_principal(store.engine, sys.argv[3], "account closed")
else:
    forget(store.engine, [sys.argv[2]], "user request")
print("the purge was not interrupted")
"""


def plain_verify(receipt: dict) -> None:
    body = {k: v for k, v in receipt.items() if k != "signature"}
    message = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    Ed25519PublicKey.from_public_bytes(base64.b64decode(receipt["public_key"])).verify(
        base64.b64decode(receipt["signature"]), message
    )


def holds(root: Path, needle: str) -> list[str]:
    from lance.file import LanceFileReader

    found = []
    for path in (p for p in root.rglob("*") if p.is_file()):
        if needle.encode() in path.read_bytes():
            found.append(str(path))
        if path.suffix in (".lance", ".idx"):
            try:
                table = LanceFileReader(str(path)).read_all().to_table()
            except Exception:  # noqa: BLE001 - some index files are not Lance files
                continue
            if needle in json.dumps(table.to_pylist(), default=repr):
                found.append(str(path))
    return found


def make_store(root: Path) -> dict[str, str]:
    store = Store.open(root, embedder=HashEmbedder())
    store.remember_many(
        [
            {"text": f"alice note {i} about the garden", "tier": "episodic", "principal": "alice"}
            for i in range(30)
        ]
    )
    secret = store.remember(
        f"alice hid the {CANARY} under the oak", tier="episodic", principal="alice", closed=False
    ).memory
    store.edit(secret.id, f"alice hid the {CANARY} under the old oak")
    fact = store.remember(
        f"the {CANARY} is under a tree", tier="semantic", principal="alice", sources=[secret.id]
    ).memory
    bob = store.remember("bob waters the plants", tier="episodic", principal="bob").memory
    store.engine.compact("episodic")
    store.engine.ensure_indexes("episodic")
    store.recall(f"where is the {CANARY}", principal="alice")
    store.close()
    return {"secret": secret.id, "fact": fact.id, "bob": bob.id}


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """One store built once; each test purges its own copy."""
    base = tmp_path_factory.mktemp("template")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MEMDECK_HOME", str(base / "home"))
        ids = make_store(base / "store")
    return base / "store", ids


def copy_of(template: tuple[Path, dict[str, str]], tmp_path: Path) -> tuple[Path, dict[str, str]]:
    root = tmp_path / "store"
    shutil.copytree(template[0], root)
    return root, template[1]


def crash(root: Path, step: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, CRASH_ENV: step}
    return subprocess.run(
        [sys.executable, "-c", PURGE, str(root), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.parametrize("step", ["planned", "deleted", "compacted", "checked", "receipted"])
def test_a_killed_purge_is_finished_on_the_next_open(template, tmp_path, step):
    root, ids = copy_of(template, tmp_path)

    done = crash(root, step, ids["secret"])
    assert done.returncode == 137, done.stderr[-2000:]
    assert "not interrupted" not in done.stdout
    journals = list((root / "journal").glob("purge-*.json"))
    assert len(journals) == 1
    purge_id = json.loads(journals[0].read_text())["purge_id"]
    assert CANARY not in journals[0].read_text()  # the journal holds ids and hashes, never the text
    secret_file = journals[0].with_name(f"purge-{purge_id}.secret")
    assert secret_file.exists() == (step != "receipted")
    if secret_file.exists():  # the texts being purged, kept for the checks: encrypted, never in the clear
        assert CANARY.encode() not in secret_file.read_bytes()
        assert secret_file.read_bytes().startswith(b"memdeck-secret/1\n")
        assert all(CANARY.encode() not in p.read_bytes() for p in (root / "journal").iterdir() if p.is_file())
    signed = [r["receipt_id"] for r in ReceiptBook(root).list()]
    assert signed == ([purge_id] if step == "receipted" else [])

    store = Store.open(root, embedder=HashEmbedder())  # finishes the purge

    assert pending(store.engine) == [] and not secret_file.exists()
    receipts = ReceiptBook(root).list()
    assert [r["receipt_id"] for r in receipts] == [purge_id]
    receipt = ReceiptBook(root).get(purge_id)
    plain_verify(receipt)
    assert receipt["outcome"] == "verified", [c for c in receipt["checks"] if not c["passed"]]
    assert receipt.get("resumed") is True or step == "receipted"
    assert [d["id"] for d in receipt["deleted"]] == [ids["secret"]]
    assert [c["id"] for c in receipt["cascade"]] == [ids["fact"]]
    assert holds(root, CANARY) == []
    assert store.get(ids["bob"]).text == "bob waters the plants"
    assert store.count() == 31
    assert ReceiptBook(root).verify_chain().ok


def test_half_written_journal_files_of_a_killed_purge_are_removed(template, tmp_path):
    """A kill inside an atomic write leaves its temporary file (the next journal, or the secret with the
    texts being purged). The next open removes them before the checks, which would otherwise find the texts
    there; a temporary with no journal beside it (killed while planning) goes too."""
    root, ids = copy_of(template, tmp_path)
    done = crash(root, "deleted", ids["secret"])
    assert done.returncode == 137, done.stderr[-2000:]
    [journal] = list((root / "journal").glob("purge-*.json"))
    purge_id = json.loads(journal.read_text())["purge_id"]
    secret = journal.with_name(f"purge-{purge_id}.secret")
    stale = [
        journal.with_name(journal.name + ".tmp99999"),  # the next step's journal, cut short
        secret.with_name(secret.name + ".tmp99999"),  # a secret, as it was being written
        journal.with_name("purge-0123456789abcdef.secret.tmp99998"),  # a purge killed while planning
    ]
    for path in stale:
        # The secret itself is encrypted now; a half-written one from an older memdeck held the texts plain.
        path.write_text(json.dumps({"texts": [f"alice hid the {CANARY} under the oak"]}))

    store = Store.open(root, embedder=HashEmbedder())  # finishes the purge

    receipt = ReceiptBook(root).get(purge_id)
    assert receipt["outcome"] == "verified", [c for c in receipt["checks"] if not c["passed"]]
    assert not any(path.exists() for path in stale)
    assert holds(root, CANARY) == []
    store.close()


def test_a_killed_principal_purge_still_destroys_the_vault(template, tmp_path):
    root, _ids = copy_of(template, tmp_path)
    done = crash(root, "scrubbed", "--principal", "alice")
    assert done.returncode == 137, done.stderr[-2000:]

    store = Store.open(root, embedder=HashEmbedder())
    receipt = ReceiptBook(root).list()[0]
    receipt = ReceiptBook(root).get(receipt["receipt_id"])
    assert receipt["outcome"] == "verified" and receipt["whole_principal"] is True
    assert "crypto_shred" in receipt["actions"]
    assert store.principals() == ["bob"]
    assert holds(root, CANARY) == []


def test_recovery_waits_for_a_purge_that_is_still_running(template, tmp_path):
    root, ids = copy_of(template, tmp_path)
    assert crash(root, "deleted", ids["secret"]).returncode == 137
    other = StoreLock(root / "store.lock")
    with other.exclusive():  # another process is (as far as anyone can tell) still purging
        opened = Store.open(root, embedder=HashEmbedder())
        assert len(pending(opened.engine)) == 1 and recover_pending(opened.engine) == []
    assert [r["outcome"] for r in recover_pending(opened.engine)] == ["verified"]
    assert pending(opened.engine) == []
