"""Recall filters (time range, tags, writing agent, minimum importance) applied inside the LanceDB query
through core/filters.py; source in results; closed episodes are immutable."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memdeck.core.errors import MemdeckError
from memdeck.core.filters import RecallFilter
from memdeck.core.store import Store


def _seed(store: Store) -> dict[str, str]:
    ids = {}
    for key, text, extra in [
        (
            "old",
            "the garden shed key is under the blue pot",
            {"created_at": "2023-03-01T10:00:00Z", "tags": ["home"]},
        ),
        (
            "new",
            "the garden shed key moved to the hook by the door",
            {
                "created_at": "2024-06-01T10:00:00Z",
                "tags": ["home", "keys"],
                "agent": "planner",
                "importance": 0.9,
            },
        ),
        (
            "mid",
            "the garden shed key has a spare with the neighbour",
            {"created_at": "2023-11-01T10:00:00Z", "agent": "planner", "importance": 0.3},
        ),
    ]:
        r = store.remember(text, tier="semantic", principal="alice", force=True, **extra)  # type: ignore[arg-type]
        assert r.memory is not None
        ids[key] = r.memory.id
    return ids


def _ids(store: Store, **filters: object) -> set[str]:
    f = RecallFilter.of(**filters)  # type: ignore[arg-type]
    return {
        i.memory.id
        for i in store.recall(
            "garden shed key", principal="alice", k=10, filters=f, record_access=False
        ).items
    }


def test_each_filter_narrows_recall(store: Store) -> None:
    ids = _seed(store)
    assert _ids(store) == set(ids.values())
    assert _ids(store, since="2023-06-01") == {ids["new"], ids["mid"]}
    assert _ids(store, until="2023-11-01") == {ids["old"], ids["mid"]}  # a bare date: through its end
    assert _ids(store, since="2023-06-01", until="2024-01-01") == {ids["mid"]}
    assert _ids(store, tags=["home"]) == {ids["old"], ids["new"]}
    assert _ids(store, tags=["home", "keys"]) == {ids["new"]}
    assert _ids(store, written_by="planner") == {ids["new"], ids["mid"]}
    assert _ids(store, min_importance=0.6) == {ids["new"]}
    assert _ids(store, written_by="planner", min_importance=0.6, tags=["keys"]) == {ids["new"]}


def test_without_tags_keeps_out_memories_carrying_any_of_them(store: Store) -> None:
    ids = _seed(store)
    assert _ids(store, without_tags=["keys"]) == {ids["old"], ids["mid"]}
    assert _ids(store, tags=["home"], without_tags=["keys"]) == {ids["old"]}
    assert _ids(store, without_tags=["home"]) == {ids["mid"]}  # a memory with no tags is kept


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"since": "last tuesday"}, "ISO 8601"),
        ({"since": "2024-01-02", "until": "2024-01-01"}, "after"),
        ({"min_importance": "high"}, "min-importance"),
        ({"min_importance": 1.5}, "between 0 and 1"),
        ({"tags": [" "]}, "tag"),
        ({"written_by": " "}, "agent"),
    ],
)
def test_bad_filters_are_refused(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(MemdeckError, match=message):
        RecallFilter.of(**kwargs)  # type: ignore[arg-type]


HOSTILE = ["x' OR '1'='1", "') OR true --", "planner\\", "a'b\"c", "🙂'; DROP TABLE semantic; --", "%", "_"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=st.one_of(st.sampled_from(HOSTILE), st.text(min_size=1, max_size=30)))
def test_hostile_filter_values_match_nothing_and_never_escape(store: Store, value: str) -> None:
    if not value.strip() or "\x00" in value:
        return
    if not store.engine.has_table("semantic"):
        _seed(store)
    assert _ids(store, written_by=value) == set()
    assert _ids(store, tags=[value]) == set()


def test_tag_and_agent_with_quotes_match_exactly(store: Store) -> None:
    r = store.remember(
        "the garden shed key is with O'Brien",
        tier="semantic",
        principal="alice",
        agent="o'brien's bot",
        tags=["it's"],
        force=True,
    )
    assert r.memory is not None
    store.remember("the garden shed key is with Bob", tier="semantic", principal="alice", force=True)
    assert _ids(store, written_by="o'brien's bot") == {r.memory.id}
    assert _ids(store, tags=["it's"]) == {r.memory.id}


def test_recall_json_carries_the_source(store: Store) -> None:
    src = {"file": "notes/home.md", "heading": "Keys", "lines": [3, 7]}
    r = store.remember(
        "the garden shed key is under the blue pot", tier="semantic", principal="alice", meta={"source": src}
    )
    assert r.memory is not None
    item = store.recall("garden shed key", principal="alice").to_json()[0]
    assert item["source"] == src
    plain = store.remember("the garden gate code is 1234", tier="semantic", principal="alice").memory
    assert plain is not None
    found = {i["id"]: i for i in store.recall("garden gate code", principal="alice").to_json()}
    assert found[plain.id]["source"] is None


def test_closed_episode_edit_is_refused_with_what_to_do(store: Store) -> None:
    ep = store.remember("met the auditors on Monday", tier="episodic", principal="alice").memory
    assert ep is not None and ep.closed
    with pytest.raises(MemdeckError, match=r"closed.*add a correcting episode.*deprecate"):
        store.edit(ep.id, "met the auditors on Tuesday")
    assert store.get(ep.id).text == "met the auditors on Monday"
    open_ep = store.remember("drafting the plan", tier="episodic", principal="alice", closed=False).memory
    assert open_ep is not None
    assert store.edit(open_ep.id, "drafting the launch plan").text == "drafting the launch plan"


def _cli(args: list[str], home: Path) -> subprocess.CompletedProcess[str]:
    import os

    env = {**os.environ, "MEMDECK_HOME": str(home)}
    env.pop("MEMDECK_DEBUG", None)
    (home / "config.toml").write_text('[embedding]\nmodel = "hash-384"\n')
    return subprocess.run(
        [sys.executable, "-m", "memdeck.cli", *args], capture_output=True, text=True, env=env, timeout=300
    )


def test_cli_filters_source_and_edit_refusal(tmp_path: Path, memdeck_home: Path) -> None:
    store = str(tmp_path / "cli-store")
    for args in (
        [
            "add",
            "the garden shed key is under the blue pot",
            "--tier",
            "semantic",
            "--principal",
            "alice",
            "--agent",
            "planner",
            "--tag",
            "home",
            "--importance",
            "0.9",
        ],
        ["add", "the garden shed key has a spare", "--tier", "semantic", "--principal", "alice"],
        ["add", "met the auditors", "--tier", "episodic", "--principal", "alice"],
    ):
        r = _cli([*args, "--store", store, "--json"], memdeck_home)
        assert r.returncode == 0, r.stderr
    episode = json.loads(r.stdout)["memory"]["id"]
    r = _cli(
        [
            "--store",
            store,
            "recall",
            "garden shed key",
            "--principal",
            "alice",
            "--written-by",
            "planner",
            "--tag",
            "home",
            "--min-importance",
            "0.5",
            "--since",
            "2000-01-01",
            "--json",
        ],
        memdeck_home,
    )
    assert r.returncode == 0, r.stderr
    body = json.loads(r.stdout)
    assert [i["agent"] for i in body] == ["planner"] and "source" in body[0]
    r = _cli(["--store", store, "recall", "key", "--principal", "alice", "--since", "soon"], memdeck_home)
    assert r.returncode != 0 and len(r.stderr.strip().splitlines()) == 1 and "ISO" in r.stderr
    r = _cli(["--store", store, "edit", episode, "changed"], memdeck_home)
    assert r.returncode != 0 and len(r.stderr.strip().splitlines()) == 1
    assert "correcting episode" in r.stderr
