"""Memory types: set by the writer or inferred, kept through import and export, filterable in every read,
and added to a store written before they existed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memdeck.core import Scope
from memdeck.core.errors import MemdeckError
from memdeck.core.exchange import import_path
from memdeck.core.exchange.export import export_jsonl
from memdeck.core.filters import RecallFilter
from memdeck.core.memtypes import MEMORY_TYPES, check_type, infer_type
from memdeck.core.records import SCHEMA_VERSION, STORED_TIERS

ALICE = Scope.of("alice")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I prefer window seats on long flights.", "preference"),
        ("We decided to use PostgreSQL for billing.", "decision"),
        ("ValueError: invalid literal for int() in the importer", "error"),
        ("Always run the tests before pushing.", "instruction"),
        ("Yesterday we met the new landlord.", "event"),
        ("The build seems slower since Monday's upgrade.", "observation"),
        ("Alice is allergic to peanuts.", "fact"),
        # precision first: nothing a rule is sure of gets no type
        ("hmm, maybe", None),
        ("What do I prefer for breakfast?", None),
        ("Fixed the crash in the importer.", None),
        # "X is ..." is a fact only when it states one: not a comparison, a plan or a liking
        ("The build is noticeably faster on the new runners.", None),
        ("The plan is to freeze the schema until the audit.", "decision"),
        ("Jonas is a big fan of spreadsheets.", "preference"),
        ("The cache is getting slower every week.", None),
        ("We opted for a remote-first policy.", "decision"),
        ("The worker ran out of memory during the reindex.", "error"),
        ("If Rita asks about pricing, point her to the sales deck.", "instruction"),
        ("Yesterday's numbers: we need a hundred more seats.", None),
    ],
)
def test_the_classifier_types_plain_wordings_and_leaves_the_unsure_untyped(text, expected):
    assert infer_type(text) == expected


def test_a_type_outside_the_list_is_refused_with_the_list():
    assert check_type("Decision") == "decision"
    assert check_type(None) is None
    with pytest.raises(MemdeckError, match="unknown memory type 'opinion'; use one of: preference"):
        check_type("opinion")


def test_the_writer_s_type_wins_and_an_untyped_write_is_inferred(store):
    given = store.remember("The office is closed on Friday", principal="alice", type="instruction").memory
    inferred = store.remember("I prefer tea to coffee", principal="alice").memory
    unsure = store.remember("blue green", principal="alice", force=True).memory
    assert given is not None and inferred is not None and unsure is not None
    assert store.get(given.id).type == "instruction"
    assert store.get(inferred.id).type == "preference"
    assert store.get(unsure.id).type is None
    assert store.get(given.id).to_json()["type"] == "instruction"
    with pytest.raises(MemdeckError, match="unknown memory type"):
        store.remember("We chose Hetzner", principal="alice", type="choice")


@pytest.mark.parametrize("engine", ["memory", "lance"])
def test_recall_and_list_keep_only_the_types_asked_for(open_store, engine):
    store = open_store(recall={"engine": engine})
    pref = store.remember("I prefer the quiet coffee place on Elm street", principal="alice").memory
    fact = store.remember("The coffee place on Elm street opens at 7", principal="alice", type="fact").memory
    decision = store.remember(
        "We decided to meet at the coffee place on Elm street", principal="alice", tier="episodic"
    ).memory
    assert pref and fact and decision
    assert (pref.type, fact.type, decision.type) == ("preference", "fact", "decision")

    def recalled(*types: str) -> set[str]:
        filters = RecallFilter.of(types=list(types))
        return {
            i.memory.id
            for i in store.recall("coffee place Elm street", principal="alice", filters=filters).items
        }

    assert recalled() == {pref.id, fact.id, decision.id}
    assert recalled("preference") == {pref.id}
    assert recalled("fact", "decision") == {fact.id, decision.id}
    assert recalled("error") == set()
    assert {m.id for m in store.list(ALICE, type="fact")} == {fact.id}
    assert {m.id for m in store.list(ALICE, type="decision")} == {decision.id}
    with pytest.raises(MemdeckError, match="unknown memory type"):
        RecallFilter.of(types=["facts"])


def test_export_and_import_keep_the_type(store, open_store, tmp_path):
    kept = store.remember("Ship it on Thursday", principal="alice", type="decision").memory
    assert kept is not None
    dump = tmp_path / "alice.jsonl"
    export_jsonl(store.engine, dump, ALICE)
    records = [json.loads(line) for line in dump.read_text().splitlines()[1:]]
    assert [r["type"] for r in records] == ["decision"]
    other = open_store(tmp_path / "other")
    import_path(other.engine, dump)
    (copy,) = other.list(ALICE)
    assert copy.text == "Ship it on Thursday" and copy.type == "decision"

    # A line-by-line import (not an export) may name a type too; a bad one skips that line with a reason.
    lines = tmp_path / "lines.jsonl"
    lines.write_text(
        json.dumps({"text": "Never deploy on Fridays at all", "principal": "bob", "type": "instruction"})
        + "\n"
        + json.dumps({"text": "Bob likes jazz a lot", "principal": "bob", "type": "mood"})
        + "\n"
    )
    problems: list[str] = []
    import_path(other.engine, lines, on_problem=lambda *a: problems.append(" ".join(map(str, a))))
    assert [m.type for m in other.list(Scope.of("bob"))] == ["instruction"]
    assert any("unknown memory type 'mood'" in p for p in problems)


def _as_schema_3(root: Path) -> None:
    """Make a store what memdeck wrote before types: its tables without the type column, schema 3."""
    import lancedb

    db = lancedb.connect(str(root / "lance"))
    for tier in STORED_TIERS:
        if tier in db.table_names():
            db.open_table(tier).drop_columns(["type"])
    meta = json.loads((root / "memdeck.json").read_text())
    (root / "memdeck.json").write_text(json.dumps({**meta, "schema_version": 3}))


def test_a_store_from_before_types_opens_gains_the_column_and_filters(tmp_path, open_store):
    root = tmp_path / "old"
    old = open_store(root)
    ids = {
        tier: old.remember(f"I prefer green tea, note {tier}", principal="alice", tier=tier).memory.id  # type: ignore[union-attr]
        for tier in STORED_TIERS
    }
    old.close()
    _as_schema_3(root)
    import lancedb

    assert "type" not in lancedb.connect(str(root / "lance")).open_table("semantic").schema.names

    store = open_store(root)
    assert json.loads((root / "memdeck.json").read_text())["schema_version"] == SCHEMA_VERSION == 4
    for tier in STORED_TIERS:
        assert "type" in store.engine.table(tier).schema.names
        assert store.get(ids[tier]).type is None  # nothing is guessed for what was written before
    assert {i.memory.id for i in store.recall("green tea", principal="alice").items} == set(ids.values())
    assert store.list(ALICE, type="preference") == []
    new = store.remember("I prefer oolong in the evening", principal="alice").memory
    assert new is not None and store.get(new.id).type == "preference"
    assert [m.id for m in store.list(ALICE, type="preference")] == [new.id]
    store.close()
    assert open_store(root).get(new.id).type == "preference"  # a second open has nothing to migrate


def test_the_mcp_type_list_is_the_core_s():
    from typing import get_args

    from memdeck.cli.mcp import MemType

    assert get_args(MemType) == MEMORY_TYPES
