"""Rows to Memory objects column by column (records.table_to_memories), the conversion recall uses for
every candidate, gives exactly what the row-by-row conversion gives, unreadable times included."""

from __future__ import annotations

from datetime import UTC, datetime

import pyarrow as pa

from memdeck.core.records import (
    Memory,
    MemoryInput,
    readable_rows,
    row_to_memory,
    table_to_memories,
    tier_schema,
)
from memdeck.core.store import Store


def _row_by_row(table: pa.Table) -> list[Memory]:
    return [row_to_memory(r) for r in readable_rows(table)]


def test_every_tier_converts_as_row_by_row(store: Store) -> None:
    store.remember_many(
        [
            MemoryInput(
                text="prefers window seats on long flights",
                tier="semantic",
                principal="ann",
                tags=["travel", "seat"],
                importance=0.737,
                pinned=True,
                meta={"k": [1, "two"], "n": None},
                expires_at="2031-02-03T04:05:06+00:00",
            ),
            MemoryInput(text="plain fact with nothing else", tier="semantic", principal="ann"),
            MemoryInput(
                text="talked about the move to Porto",
                tier="episodic",
                principal="ann",
                agent="scribe",
                extra={"session": "s-1", "events": [{"kind": "said", "who": "ann"}]},
                created_at="2024-05-06T07:08:09.123456+00:00",
            ),
            MemoryInput(
                text="how to rotate the api keys: revoke, issue, deploy",
                tier="procedural",
                principal="bob",
                extra={"name": "rotate-keys", "steps": ["revoke", "issue", "deploy"]},
            ),
        ]
    )
    for tier in ("semantic", "episodic", "procedural"):
        table = store.engine.table(tier).to_lance().to_table()
        assert table.num_rows, tier
        fast = table_to_memories(table.drop_columns(["vector"]))
        assert fast == _row_by_row(table.drop_columns(["vector"]))
        for memory in fast:
            assert all(t is None or t.tzinfo is not None for t in (memory.created_at, memory.updated_at))
    pinned = next(
        m for m in table_to_memories(store.engine.table("semantic").to_lance().to_table()) if m.pinned
    )
    assert pinned.meta == {"k": [1, "two"], "n": None} and pinned.tags == ["travel", "seat"]


def test_a_subset_of_columns_and_unreadable_times_convert_as_row_by_row() -> None:
    schema = tier_schema("semantic", 4)
    stamp = pa.timestamp("us", tz="UTC")
    far = 9500 * 366 * 86400 * 1_000_000  # about the year 11470: no Python datetime holds it
    table = pa.table(
        {
            "id": ["mem_a", "mem_b", "mem_c"],
            "tier": ["semantic"] * 3,
            "principal": ["ann", "ann", "bob"],
            "text": ["one", "two", "three"],
            "importance": pa.array([0.123456, None, 1.0], pa.float32()),
            "pinned": pa.array([None, True, False]),
            "access_count": pa.array([None, 3, 0], pa.int64()),
            "tags": pa.array([None, ["x"], []], pa.list_(pa.string())),
            "created_at": pa.array([0, far, None], pa.int64()).cast(stamp),
            "updated_at": pa.array([-far, 1_700_000_000_000_000, 5], pa.int64()).cast(stamp),
            "meta": [None, "", '{"a": 1}'],
            "sources": pa.array([["f.md"], None, []], schema.field("sources").type),
        }
    )
    fast = table_to_memories(table)
    assert fast == _row_by_row(table)
    assert fast[1].unreadable_times == ["created_at"] and fast[1].created_at is None
    assert fast[0].unreadable_times == ["updated_at"]
    assert fast[2].unreadable_times == [] and fast[2].updated_at == datetime(
        1970, 1, 1, 0, 0, 0, 5, tzinfo=UTC
    )
    assert fast[0].pinned is False and fast[0].access_count == 0 and fast[0].tags == [] and fast[0].meta == {}
    fast[0].tags.append("changed")
    assert fast[2].tags == []  # every Memory has lists of its own


def test_an_empty_table_converts_to_nothing() -> None:
    assert table_to_memories(pa.table({"id": pa.array([], pa.string())})) == []
