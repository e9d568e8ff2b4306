"""Switching a store's embedding model as a person does: `memdeck model use` killed with SIGKILL midway, run
again, and the store checked through the command line and its tables.

Plumbing runs on the hash embedder: the store is built with ``hash-384`` and switched to ``hash-768`` (a
different dimension, as MiniLM's 384 to MPNet's 768). No download happens here.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import lancedb
import numpy as np
import pytest

from memdeck.core.config import load_config
from memdeck.core.embed import HashEmbedder
from memdeck.core.store import Store

from .test_cli_journeys import MEMDECK, hash_home, memdeck, ok

N = 300


def _build(tmp_path: Path) -> tuple[Path, Path]:
    home = hash_home(tmp_path / "cli")
    store = tmp_path / "store"
    lines = [
        json.dumps(
            {
                "text": f"note {i}: the marker word token{i} and shared ordinary words",
                "tier": "episodic" if i % 3 else "semantic",
                "principal": "alice",
            }
        )
        for i in range(N)
    ]
    (tmp_path / "in.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    ok(memdeck(home, store, "import", str(tmp_path / "in.jsonl")))
    return home, store


def _vectors(store: Path) -> dict[str, np.ndarray]:
    db = lancedb.connect(str(store / "lance"))
    out: dict[str, np.ndarray] = {}
    for tier in ("episodic", "semantic", "procedural"):
        if not (store / "lance" / f"{tier}.lance").exists():
            continue
        table = db.open_table(tier).to_arrow()
        for rid, vec in zip(table.column("id").to_pylist(), table.column("vector").to_pylist(), strict=True):
            out[rid] = np.asarray(vec, dtype=np.float32)
    return out


def test_a_killed_switch_resumes_and_loses_nothing(tmp_path: Path) -> None:
    home, store = _build(tmp_path)
    before = _vectors(store)
    assert len(before) == N and {v.shape for v in before.values()} == {(384,)}
    env = {**os.environ, "MEMDECK_HOME": str(home)}
    proc = subprocess.Popen(
        [str(MEMDECK), "model", "use", "hash-768", "--batch-size", "1", "--store", str(store)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    seen = []
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        seen.append(line)
        parts = line.split()
        if line.startswith("re-embedding episodic") and int(parts[-1].split("/")[0]) >= 40:
            break
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL, "".join(seen)
    assert any("/" in line for line in seen), "".join(seen)  # the progress bar was drawn on stderr

    # Killed midway: the store still answers on its old vectors, and says which model they come from.
    meta = json.loads((store / "memdeck.json").read_text())
    assert (meta["embedding_model"], meta["dim"]) == ("hash-384", 384)
    assert {v.shape for v in _vectors(store).values()} == {(384,)}
    hits = json.loads(ok(memdeck(home, store, "recall", "token17", "--principal", "alice", "--json")).stdout)
    assert hits[0]["text"].startswith("note 17:") and hits[0]["model"] == "hash-384"

    # Written while the switch was stopped: embedded too when it finishes.
    ok(
        memdeck(
            home,
            store,
            "add",
            "a late note about the token999 marker",
            "--principal",
            "alice",
            "--tier",
            "episodic",
        )
    )

    again = ok(memdeck(home, store, "model", "use", "hash-768", "--batch-size", "16"))
    assert "resuming the switch to hash-768" in again.stderr
    assert "the store now uses hash-768 (768 d; was hash-384, 384 d)" in again.stdout
    shown = [ln for ln in again.stderr.splitlines() if ln.startswith("re-embedding episodic")]
    first_done = int(shown[0].split()[-1].split("/")[0])
    assert first_done >= 40  # resumed: the batches the killed run saved were not embedded again

    after = _vectors(store)
    assert set(after) >= set(before) and len(after) == N + 1
    assert {v.shape for v in after.values()} == {(768,)}
    expected = HashEmbedder(768)
    db = lancedb.connect(str(store / "lance"))
    for tier in ("episodic", "semantic"):
        table = db.open_table(tier).to_arrow()
        texts = table.column("text").to_pylist()
        got = np.asarray(table.column("vector").to_pylist(), dtype=np.float32)
        assert np.allclose(got, expected.encode(texts), atol=1e-6)  # each row's own text, not a neighbour's

    meta = json.loads((store / "memdeck.json").read_text())
    assert (meta["embedding_model"], meta["dim"]) == ("hash-768", 768)
    assert not (store / "reembed").exists()
    hits = json.loads(ok(memdeck(home, store, "recall", "token17", "--principal", "alice", "--json")).stdout)
    assert hits[0]["text"].startswith("note 17:") and hits[0]["model"] == "hash-768"
    late = json.loads(ok(memdeck(home, store, "recall", "token999", "--principal", "alice", "--json")).stdout)
    assert late[0]["text"] == "a late note about the token999 marker"
    listed = json.loads(
        ok(memdeck(home, store, "list", "--principal", "alice", "--limit", "1000", "--json")).stdout
    )
    assert len(listed) == N + 1
    doctor = ok(memdeck(home, store, "doctor"))
    assert "model: hash-768 (768 d), loads" in doctor.stdout
    listing = ok(memdeck(home, store, "model", "list"))
    assert "(the store uses hash-768)" in listing.stdout


def test_a_swap_stopped_halfway_is_finished_when_the_store_opens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memdeck.core import reembed

    config = load_config()
    config["embedding"] = {**config["embedding"], "model": "hash-384"}
    store = Store.open(tmp_path / "s", embedder=HashEmbedder(384), config=config)
    store.remember_many(
        [
            {
                "text": f"fact {i} about topic{i}",
                "tier": "semantic" if i % 2 else "episodic",
                "principal": "bob",
            }
            for i in range(40)
        ]
    )
    target = HashEmbedder(768)
    reembed.embed_phase(store.engine, target, 768)
    real_replace = os.replace
    calls = []

    def crash_after_two(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        calls.append((src, dst))
        if len(calls) == 3:  # first table swapped, the second table's old copy moved out: then the crash
            raise KeyboardInterrupt("killed")
        real_replace(src, dst)

    monkeypatch.setattr(reembed.os, "replace", crash_after_two)
    with pytest.raises(KeyboardInterrupt):
        reembed.switch_phase(store.engine, target, 768)
    monkeypatch.setattr(reembed.os, "replace", real_replace)
    store.close()
    assert (tmp_path / "s" / "reembed" / "switch.json").exists()

    reopened = Store.open(tmp_path / "s", config=config)
    assert (reopened.engine.embedding_model, reopened.engine.dim) == ("hash-768", 768)
    assert reopened.engine.embedder.name == "hash-768"
    assert not (tmp_path / "s" / "reembed").exists()
    for tier in ("episodic", "semantic"):
        table = reopened.engine.table(tier).to_arrow()
        assert table.num_rows == 20
        assert table.schema.field("vector").type.list_size == 768
    result = reopened.recall("topic7", principal="bob", k=3)
    assert result.items[0].memory.text == "fact 7 about topic7"
    reopened.close()


def test_a_tampered_install_is_refused_by_the_command_with_one_line(tmp_path: Path) -> None:
    home, store = _build(tmp_path)
    models_dir = tmp_path / "models"
    from memdeck.core.models import PINS

    for rel in PINS["mpnet"]:  # every file present, none with its pinned content
        path = models_dir / "all-mpnet-base-v2" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}")
    config = home / "config.toml"
    config.write_text(config.read_text() + f'models_dir = "{models_dir}"\n')
    listing = ok(memdeck(home, store, "model", "list"))
    assert "mpnet    all-mpnet-base-v2     768 d   440 MB  installed" in listing.stdout
    refused = memdeck(home, store, "model", "use", "mpnet")
    assert refused.returncode != 0 and "Traceback" not in refused.stderr
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and "does not match its pinned sha256" in lines[0], refused.stderr
    meta = json.loads((store / "memdeck.json").read_text())
    assert (meta["embedding_model"], meta["dim"]) == ("hash-384", 384)
    unknown = memdeck(home, store, "model", "install", "bert")
    assert unknown.returncode != 0
    assert unknown.stderr.strip() == "memdeck: error: unknown model 'bert'; known models: minilm, mpnet"
