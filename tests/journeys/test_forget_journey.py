"""A person forgets ordinary sentences with the installed `memdeck` command: each receipt verifies, the command
exits 0 and says so, and `receipts verify --all` and `doctor` agree afterwards."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

MEMDECK = str(Path(sys.executable).parent / "memdeck")

# Everyday notes of the kind people keep, with the words memdeck's own files are made of among them.
SENTENCES = [
    ("Alice booked a table at Nopa for Friday", "semantic"),
    ("Alice's locker code is 4921, keep it private.", "semantic"),
    ("The users table has a new column for the billing address since version 3.", "semantic"),
    ("Remember to delete the old backup key before the transaction log fills the disk.", "episodic"),
    (
        "To renew the passport: fill in the form, add two photos, pay the fee at the post office.",
        "procedural",
    ),
    (
        "Principal Jones signed the receipt for the field trip deposit; the manifest lists twelve children.",
        "semantic",
    ),
    ("Schema review moved to Thursday; bring the index notes and the vector sizes.", "episodic"),
]


def _run(args: list[str], home: Path, store: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMDECK_HOME": str(home)}
    env.pop("MEMDECK_DEBUG", None)
    return subprocess.run(
        [MEMDECK, "--store", str(store), *args], env=env, capture_output=True, text=True, timeout=300
    )


def _add(text: str, tier: str, home: Path, store: Path) -> str:
    r = _run(["add", text, "--tier", tier, "--principal", "alice", "--json"], home, store)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["memory"]["id"]


def test_ordinary_sentences_forgotten_one_by_one_and_together_all_verify(memdeck_home, tmp_path):
    (memdeck_home / "config.toml").write_text('[embedding]\nmodel = "hash-384"\n')
    store = tmp_path / "store"
    ids = [_add(text, tier, memdeck_home, store) for text, tier in SENTENCES]
    for mem_id in ids[:3]:
        r = _run(["forget", mem_id, "--reason", "user request"], memdeck_home, store)
        assert r.returncode == 0, r.stdout + r.stderr
        assert "outcome: verified" in r.stdout and "FAILED" not in r.stdout
    r = _run(["forget", *ids[3:], "--reason", "user request", "--json"], memdeck_home, store)
    assert r.returncode == 0, r.stdout + r.stderr
    assert json.loads(r.stdout)["outcome"] == "verified"
    r = _run(["receipts", "verify", "--all"], memdeck_home, store)
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("outcome: verified") == 4
    r = _run(["doctor"], memdeck_home, store)
    assert r.returncode == 0, r.stdout + r.stderr


def test_a_sentence_added_and_forgotten_with_the_packaged_model_verifies(
    tmp_path, memdeck_home, packaged_model
):
    store = tmp_path / "store"
    mem_id = _add("Alice booked a table at Nopa for Friday at seven", "semantic", memdeck_home, store)
    r = _run(["forget", mem_id, "--reason", "user request"], memdeck_home, store)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "outcome: verified" in r.stdout
