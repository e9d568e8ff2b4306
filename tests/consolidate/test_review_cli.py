"""`memdeck review keep-left|keep-right|merge|dismiss ITEM`: the Review screen's decisions from the CLI, with
--json and one-line errors. Hash embedder: the pair below is a near-duplicate by construction."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memdeck.core.filters import Scope
from memdeck.core.store import Store


def run(args: list[str], home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMDECK_HOME": str(home)}
    env.pop("MEMDECK_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "memdeck.cli", *args], env=env, capture_output=True, text=True, timeout=300
    )


@pytest.fixture
def seeded(memdeck_home: Path, tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    (memdeck_home / "config.toml").write_text('[embedding]\nmodel = "hash-384"\n')
    path = tmp_path / "s"
    store = Store.open(path)
    ids = {}
    for key, text, tier, when in [
        ("older", "The office wifi password is on the fridge door", "semantic", "2024-01-01T00:00:00Z"),
        ("newer", "The office wifi password is on the fridge door now", "semantic", "2024-02-01T00:00:00Z"),
        ("stale", "met the auditors about the budget", "episodic", "2000-01-01T00:00:00Z"),
    ]:
        memory = store.remember(text, tier=tier, principal="alice", created_at=when, force=True).memory
        assert memory is not None
        ids[key] = memory.id
    store.close()
    return memdeck_home, path, ids


def _queue(home: Path, path: Path) -> dict[str, dict[str, object]]:
    """The listed items by key."""
    r = run(["review", "--json", "--store", str(path)], home)
    assert r.returncode == 0, r.stderr
    return {item["key"]: item for item in json.loads(r.stdout)}


def test_keep_merge_and_dismiss_act_on_the_listed_item(seeded: tuple[Path, Path, dict[str, str]]) -> None:
    home, path, ids = seeded
    queue = _queue(home, path)
    [pair] = [k for k, item in queue.items() if item["kind"] == "near_duplicate"]
    stale = f"stale:{ids['stale']}"
    assert stale in queue
    listed = run(["review", "--store", str(path)], home)
    assert pair in listed.stdout and stale in listed.stdout  # the human listing shows the key to act on

    r = run(["review", "keep-right", pair, "--json", "--store", str(path)], home)
    assert r.returncode == 0, r.stderr
    done = json.loads(r.stdout)
    right = queue[pair]["right"]["id"]  # type: ignore[index]
    left = queue[pair]["left"]["id"]  # type: ignore[index]
    assert done == {
        "action": "keep",
        "kept": right,
        "deprecated": left,
        "key": pair,
        "kind": "near_duplicate",
    }
    store = Store.open(path)
    gone = store.get(left, Scope.of("alice"))
    assert gone.state == "deprecated" and gone.superseded_by == right
    store.undeprecate(left)  # the pair is listed again: merge it, --json given before the action
    store.close()
    assert pair in _queue(home, path)
    r = run(["review", "--json", "merge", pair, "--store", str(path)], home)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {
        "action": "merge",
        "kept": ids["older"],
        "deprecated": ids["newer"],
        "key": pair,
        "kind": "near_duplicate",
    }

    r = run(["review", "dismiss", stale, "--principal", "alice", "--store", str(path)], home)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"dismissed {stale}")
    after = _queue(home, path)
    assert stale not in after and pair not in after


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["keep-left", "stale:{stale}"], 2, "has one memory: nothing to keep it over"),
        (["merge", "stale:{stale}"], 2, "has one memory: nothing to merge it with"),
        (["dismiss", "stale:epi_0000"], 3, "no review item 'stale:epi_0000' in the queue"),
        (["merge", "sem_123"], 2, "is not a review item key"),
        (["dismiss", "stale:{stale}", "--principal", "bob"], 3, "no review item"),  # outside the scope
    ],
)
def test_bad_items_are_one_line_on_stderr_and_change_nothing(
    seeded: tuple[Path, Path, dict[str, str]], args: list[str], code: int, message: str
) -> None:
    home, path, ids = seeded
    before = _queue(home, path)
    r = run(["review", *[a.format(stale=ids["stale"]) for a in args], "--store", str(path)], home)
    assert r.returncode == code and r.stdout == ""
    assert message in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert _queue(home, path) == before
