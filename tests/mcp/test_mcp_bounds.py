"""Issue #14 item 12: the MCP tools' list arguments are bounded and deduplicated, with a clear error past it."""

from __future__ import annotations

from pathlib import Path

import pytest

from memdeck.cli.mcp import MAX_IDS, MAX_TAGS, MAX_TIERS, _Backend
from memdeck.core.errors import MemdeckError


@pytest.fixture
def backend(memdeck_home: Path, tmp_path: Path):
    (memdeck_home / "config.toml").write_text('[embedding]\nmodel = "hash-384"\n')
    b = _Backend("alice", "assistant", tmp_path / "store", preload=False)
    yield b
    if b._store is not None:
        b._store.close()


def test_list_arguments_are_deduplicated(backend) -> None:
    out = backend.remember("alice likes green tea", tags=["tea", "tea", "drinks", "tea"])
    assert out["action"] == "added"
    [m] = backend.list()["memories"]
    assert m["tags"] == ["tea", "drinks"]
    found = backend.recall("green tea", tiers=["semantic"] * 100)  # 100 copies: one distinct tier
    assert m["id"] in str(found["results"])
    receipt = backend.forget([m["id"]] * 5000, "user request")
    assert [d["id"] for d in receipt["deleted"]] == [m["id"]]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda b: b.recall("x", tiers=[f"t{i}" for i in range(MAX_TIERS + 1)]), "tiers has 17 distinct"),
        (lambda b: b.context("x", tiers=[f"t{i}" for i in range(MAX_TIERS + 1)]), "at most 16"),
        (lambda b: b.remember("x y z", tags=[f"t{i}" for i in range(MAX_TAGS + 1)]), "tags has 65 distinct"),
        (lambda b: b.forget([f"id{i}" for i in range(MAX_IDS + 1)], "r"), "ids has 1001 distinct"),
        (lambda b: b.recall("x", tiers="semantic"), "tiers must be a list of strings"),
        (lambda b: b.remember("x y z", tags=[1, 2]), "tags must be a list of strings"),
    ],
)
def test_past_the_bound_is_one_clear_error(backend, call, message) -> None:
    with pytest.raises(MemdeckError, match=message):
        call(backend)
