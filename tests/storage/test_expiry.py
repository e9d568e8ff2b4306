"""Expiry that takes effect at once: a memory past its own expires_at or its tier's TTL is gone from every
read the moment it expires (a filter inside the LanceDB query), and the next maintenance purges it with a
receipt. TTL counts from the write or from the last use, per tier."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import lancedb
import pyarrow as pa
import pytest

from memdeck.core import Scope
from memdeck.core.embed import HashEmbedder
from memdeck.core.errors import MemdeckError
from memdeck.core.exchange.export import iter_export
from memdeck.core.maintenance.maintain import evict_expired, expired
from memdeck.core.records import SCHEMA_VERSION, TIER_FIELDS, base_fields
from memdeck.core.storage.browse import BrowseQuery, Browser
from memdeck.core.storage.expiry import expiry_time, parse_duration

DAY = timedelta(days=1)


def ago(days: float) -> datetime:
    return datetime.now(UTC) - days * DAY


def visible(store, principal: str, query: str) -> dict[str, set[str]]:
    scope = Scope.of(principal)
    return {
        "recall": {
            i.memory.id
            for i in store.recall(query, principal=principal, k=50, trace=False, record_access=False).items
        },
        "list": {m.id for m in store.list(scope, limit=500)},
        "browse": {m.id for m in Browser(store.engine, scope).page(BrowseQuery(), 0, 500)},
        "export": {r["id"] for r in iter_export(store.engine, scope)},
    }


def test_a_memory_disappears_from_every_read_the_moment_it_expires(store):
    soon = datetime.now(UTC) + timedelta(seconds=2.5)
    short = store.remember(
        "the door code is 4411 this week", tier="semantic", principal="ann", expires_at=soon
    ).memory
    lasting = store.remember("the door code office is on floor 2", tier="semantic", principal="ann").memory
    assert short.expires_at == soon
    browser = Browser(
        store.engine, Scope.of("ann")
    )  # one browser kept across the expiry: its cache must not lie
    assert {short.id, lasting.id} <= {m.id for m in browser.page(BrowseQuery(), 0, 50)}
    before = visible(store, "ann", "door code")
    for read, ids in before.items():
        assert short.id in ids and lasting.id in ids, read
    time.sleep(max(0.0, (soon - datetime.now(UTC)).total_seconds()) + 0.05)
    after = visible(store, "ann", "door code")
    for read, ids in after.items():
        assert short.id not in ids, f"{read} still returns an expired memory"
        assert lasting.id in ids, read
    assert short.id not in {m.id for m in browser.page(BrowseQuery(), 0, 50)}
    assert short.id in {m.id for m in browser.page(BrowseQuery(include_expired=True), 0, 50)}
    assert store.get(short.id).id == short.id  # still stored until maintenance purges it

    assert expired(store.engine) == {"ann": [short.id]}
    receipts = evict_expired(store.engine)
    assert [d["id"] for r in receipts for d in r["deleted"]] == [short.id]
    assert receipts[0]["reason"] == "ttl" and receipts[0]["outcome"] == "verified"


def test_ttl_hides_at_once_without_maintenance(open_store):
    s = open_store(
        ttl_days={"episodic": 30, "semantic": 0, "procedural": 0}, ttl_from={"episodic": "created"}
    )
    old = s.remember(
        "we discussed the budget spreadsheet", tier="episodic", principal="ann", created_at=ago(31)
    ).memory
    new = s.remember(
        "we discussed the budget meeting", tier="episodic", principal="ann", created_at=ago(29)
    ).memory
    pinned = s.remember(
        "we discussed the budget forever", tier="episodic", principal="ann", created_at=ago(90), pinned=True
    ).memory
    for read, ids in visible(s, "ann", "budget").items():
        assert old.id not in ids, read
        assert {new.id, pinned.id} <= ids, read


def test_ttl_from_last_use_keeps_a_used_episode(open_store):
    s = open_store(
        ttl_days={"episodic": 30, "semantic": 0, "procedural": 0}
    )  # episodic: last_used by default
    used = s.remember(
        "the tax form deadline episode", tier="episodic", principal="ann", created_at=ago(20)
    ).memory
    unused = s.remember(
        "a walk in the park episode", tier="episodic", principal="ann", created_at=ago(20)
    ).memory
    hits = s.recall("tax form deadline", principal="ann", k=1, trace=False)
    assert [i.memory.id for i in hits.items] == [used.id]
    s.engine.flush_access()
    later = datetime.now(UTC) + 15 * DAY  # 35 days after both were written, 15 after the use
    assert expired(s.engine, later) == {"ann": [unused.id]}
    receipts = evict_expired(s.engine, later)
    assert [d["id"] for r in receipts for d in r["deleted"]] == [unused.id]
    assert s.get(used.id)

    created = open_store(
        tmp := s.root.parent / "other", ttl_days={"episodic": 30}, ttl_from={"episodic": "created"}
    )
    assert tmp.exists()
    a = created.remember(
        "the tax form deadline episode", tier="episodic", principal="ann", created_at=ago(20)
    ).memory
    created.recall("tax form deadline", principal="ann", k=1, trace=False)
    created.engine.flush_access()
    assert expired(created.engine, later) == {
        "ann": [a.id]
    }  # counted from the write: the use does not matter


def test_bad_ttl_from_and_durations_are_refused_with_one_line(open_store):
    with pytest.raises(MemdeckError, match=r"ttl_from\.episodic must be one of"):
        open_store(ttl_from={"episodic": "forever"})
    assert parse_duration("7d") == 7 * DAY and parse_duration("90s") == timedelta(seconds=90)
    for bad in ("7", "7x", "-1d", "", "0d"):
        with pytest.raises(MemdeckError):
            parse_duration(bad)
    with pytest.raises(MemdeckError, match="not both"):
        expiry_time("1d", "2030-01-01")


def test_set_expiry_and_clear_it(store):
    m = store.remember("a fact that lapses", tier="semantic", principal="ann").memory
    store.set_expiry(m.id, ago(1 / 86400), Scope.of("ann"))
    assert m.id not in {x.id for x in store.list(Scope.of("ann"))}
    store.set_expiry(m.id, None, Scope.of("ann"))
    assert m.id in {x.id for x in store.list(Scope.of("ann"))}
    assert store.get(m.id).expires_at is None


def _write_schema_1_store(root: Path) -> None:
    """A store exactly as memdeck with schema 1 wrote it: no expires_at column, memdeck.json version 1."""
    root.mkdir(parents=True)
    (root / "memdeck.json").write_text(
        json.dumps(
            {
                "schema_version": 1,
                "created_at": "2026-01-01T00:00:00+00:00",
                "embedding_model": "hash-384",
                "dim": 384,
            }
        )
    )
    db = lancedb.connect(str(root / "lance"))
    old = [f for f in base_fields(384) if f.name != "expires_at"]
    now = datetime.now(UTC)
    vec = HashEmbedder().encode(["alice likes green tea"])[0].tolist()
    row = {
        "id": "sem_old0000000000000000",
        "tier": "semantic",
        "principal": "alice",
        "agent": "user",
        "text": "alice likes green tea",
        "importance": 0.5,
        "pinned": False,
        "state": "active",
        "tags": [],
        "access_count": 0,
        "created_at": now,
        "updated_at": now,
        "content_sha256": "x",
        "version": 1,
        "vector": vec,
        "evidence_count": 1,
        "confidence": 0.7,
        "last_reinforced_at": now,
        "sources": [],
    }
    schema = pa.schema(old + TIER_FIELDS["semantic"])
    db.create_table("semantic", pa.Table.from_pylist([row], schema=schema))
    assert "expires_at" not in db.open_table("semantic").schema.names


def test_a_store_written_by_schema_1_opens_and_gains_expires_at(tmp_path, open_store):
    root = tmp_path / "old"
    _write_schema_1_store(root)
    s = open_store(root)
    assert "expires_at" in s.engine.table("semantic").schema.names
    assert json.loads((root / "memdeck.json").read_text())["schema_version"] == SCHEMA_VERSION
    old = s.get("sem_old0000000000000000")
    assert old.text == "alice likes green tea" and old.expires_at is None
    assert [i.memory.id for i in s.recall("green tea", principal="alice", trace=False).items] == [old.id]
    new = s.remember(
        "alice drinks it at four", tier="semantic", principal="alice", expires_at=datetime.now(UTC) + DAY
    ).memory
    assert s.get(new.id).expires_at is not None
    s.close()
    again = open_store(root)  # a second open finds nothing left to migrate
    assert again.get(new.id).expires_at is not None
