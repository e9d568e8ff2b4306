"""The optional parts of relevance are [recall] settings in config.toml: a person who sets one out of range
gets one line on stderr naming it and a non-zero exit from `memdeck recall`, and one who turns them off
gets results as before."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

MEMDECK = Path(sys.executable).with_name("memdeck")


def _run(args: list[str], home: Path, store: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMDECK_HOME": str(home)}
    env.pop("MEMDECK_DEBUG", None)
    return subprocess.run(
        [str(MEMDECK), *args, "--store", str(store)], env=env, capture_output=True, text=True, timeout=120
    )


def _config(home: Path, recall: str) -> None:
    (home / "config.toml").write_text(
        f'[embedding]\nmodel = "hash-384"\n\n[recall]\n{recall}\n', encoding="utf-8"
    )


@pytest.mark.parametrize(
    ("setting", "name"),
    [
        ("previous_keyword_weight = 2", "recall.previous_keyword_weight"),
        ('unnamed_query_weight = "lots"', "recall.unnamed_query_weight"),
        ("score_all_rows = -5", "recall.score_all_rows"),
    ],
)
def test_a_setting_out_of_range_is_refused_with_one_line(
    setting: str, name: str, tmp_path: Path, memdeck_home: Path
) -> None:
    store = tmp_path / "store"
    _config(memdeck_home, "")
    added = _run(
        [
            "add",
            "the garden shed key hangs behind the pantry door",
            "--tier",
            "semantic",
            "--principal",
            "pat",
        ],
        memdeck_home,
        store,
    )
    assert added.returncode == 0, added.stderr
    _config(memdeck_home, setting)
    r = _run(["recall", "garden shed key", "--principal", "pat"], memdeck_home, store)
    assert r.returncode != 0
    assert name in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr, r.stderr


def test_the_parts_turned_off_still_recall(tmp_path: Path, memdeck_home: Path) -> None:
    store = tmp_path / "store"
    _config(memdeck_home, "previous_keyword_weight = 0\nunnamed_query_weight = 0\nscore_all_rows = 0")
    for text in ["the garden shed key hangs behind the pantry door", "the car key is in the blue bowl"]:
        assert (
            _run(["add", text, "--tier", "semantic", "--principal", "pat"], memdeck_home, store).returncode
            == 0
        )
    r = _run(["recall", "garden shed key", "--principal", "pat", "--json"], memdeck_home, store)
    assert r.returncode == 0, r.stderr
    items = json.loads(r.stdout)  # a list, best first
    assert [item["text"] for item in items][:1] == ["the garden shed key hangs behind the pantry door"]
