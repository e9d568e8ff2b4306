"""The store's plumbing: tiers, dedup by hash, versions, paging, lifecycle, indices, fallback."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from memdeck.core import MemdeckError, NotFound, Scope
from memdeck.core.embed import UnavailableEmbedder
from memdeck.core.records import SCHEMA_VERSION, sha256_text


def test_store_directory_has_schema_version_and_tier_tables(store):
    store.remember("alice likes green tea", tier="semantic", principal="alice")
    store.remember("met bob for lunch", tier="episodic", principal="alice", session="s1")
    meta = json.loads((store.root / "memdeck.json").read_text())
    assert meta["schema_version"] == SCHEMA_VERSION
    assert meta["dim"] == store.engine.dim
    assert {"semantic", "episodic"} <= set(store.engine.db.list_tables().tables)


def test_every_row_has_content_sha256_of_its_text(store):
    r = store.remember("the deploy key rotates monthly", tier="semantic", principal="ops")
    got = store.get(r.memory.id)
    assert got.content_sha256 == sha256_text("the deploy key rotates monthly")


def test_semantic_repeat_reinforces_instead_of_duplicating(store):
    first = store.remember("Alice prefers  tea", tier="semantic", principal="alice", sources=["epi_1"])
    second = store.remember("Alice prefers tea", tier="semantic", principal="alice", sources=["epi_2"])
    assert second.action == "reinforced"
    assert second.memory.id == first.memory.id
    got = store.get(first.memory.id)
    assert got.evidence_count == 2
    assert got.sources == ["epi_1", "epi_2"]
    assert got.last_reinforced_at >= first.memory.last_reinforced_at
    assert store.count(tier="semantic") == 1


def test_same_fact_for_two_principals_is_two_memories(store):
    store.remember("likes tea", tier="semantic", principal="alice")
    store.remember("likes tea", tier="semantic", principal="bob")
    assert store.count(tier="semantic") == 2


def test_batch_dedups_within_the_batch_and_against_the_store(store):
    store.remember("fact one", tier="semantic", principal="p")
    results = store.remember_many(
        [{"text": t, "tier": "semantic", "principal": "p"} for t in ["fact one", "fact two", "fact two"]]
    )
    assert [r.action for r in results] == ["reinforced", "added", "reinforced"]
    assert store.count(tier="semantic") == 2
    two = next(m for m in store.list(tier="semantic") if m.text == "fact two")
    assert two.evidence_count == 2


def test_procedures_are_versioned_by_name(store):
    a = store.remember("deploy: build; test; ship", tier="procedural", principal="p", name="deploy")
    b = store.remember("deploy: build; test; canary; ship", tier="procedural", principal="p", name="deploy")
    assert (a.memory.proc_version, b.memory.proc_version) == (1, 2)
    assert b.action == "versioned"
    result = store.recall("deploy", principal="p", tiers=["procedural"], record_access=False)
    assert [i.memory.id for i in result.items] == [b.memory.id]  # only the live version
    store.deprecate(b.memory.id, "broke prod")
    result = store.recall("deploy", principal="p", tiers=["procedural"], record_access=False)
    assert [i.memory.id for i in result.items] == [a.memory.id]


def test_bad_input_writes_nothing(store):
    good = {"text": "fine", "tier": "semantic", "principal": "p"}
    for bad in (
        {"text": "", "tier": "semantic", "principal": "p"},
        {"text": "x", "tier": "working", "principal": "p"},
        {"text": "x", "tier": "semantic", "principal": ""},
        {"text": "x\x00y", "tier": "semantic", "principal": "p"},
        {"text": "x", "tier": "semantic", "principal": "p", "importance": 3},
        {
            "text": "x",
            "tier": "semantic",
            "principal": "p",
            "tags": ["t"] * 0 + [f"t{i}" for i in range(300)],
        },
    ):
        with pytest.raises(MemdeckError):
            store.remember_many([good, bad])
    assert store.count() == 0


def test_list_pages_filters_and_sorts(store):
    base = datetime(2026, 1, 1, tzinfo=UTC)
    for i in range(30):
        store.remember(
            f"memory {i}",
            tier="episodic" if i % 2 else "semantic",
            principal="a" if i % 3 else "b",
            agent="bot" if i % 5 == 0 else "user",
            tags=["even"] if i % 2 == 0 else [],
            created_at=base + timedelta(days=i),
        )
    newest = store.list(limit=5)
    assert [m.text for m in newest] == [f"memory {i}" for i in (29, 28, 27, 26, 25)]
    page2 = store.list(limit=5, offset=5)
    assert [m.text for m in page2] == [f"memory {i}" for i in (24, 23, 22, 21, 20)]
    oldest = store.list(limit=3, descending=False)
    assert [m.text for m in oldest] == ["memory 0", "memory 1", "memory 2"]
    only_b = store.list(Scope.of("b"), limit=100)
    assert {m.principal for m in only_b} == {"b"} and len(only_b) == 10
    assert {m.text for m in store.list(agent="bot", limit=100)} == {f"memory {i}" for i in range(0, 30, 5)}
    assert all("even" in m.tags for m in store.list(tag="even", limit=100))
    assert len(store.list(tier="episodic", limit=100)) == 15
    since = store.list(since=base + timedelta(days=25), limit=100)
    assert len(since) == 5


def test_pin_edit_deprecate_and_history(store):
    m = store.remember("the office is in Lisbon", tier="semantic", principal="a").memory
    other = store.remember("the office moved to Porto", tier="semantic", principal="a").memory
    assert store.pin(m.id).pinned and store.get(m.id).pinned
    assert not store.unpin(m.id).pinned
    edited = store.edit(m.id, "the office is in Lisbon, Alfama")
    assert edited.version == 2 and store.get(m.id).text == "the office is in Lisbon, Alfama"
    history = store.history(m.id)
    assert [(h["version"], h["text"]) for h in history] == [(1, "the office is in Lisbon")]
    dep = store.deprecate(m.id, "moved", superseded_by=other.id)
    assert (dep.state, dep.superseded_by) == ("deprecated", other.id)
    hits = store.recall("office Lisbon", principal="a", record_access=False)
    assert m.id not in [i.memory.id for i in hits.items]
    hits = store.recall("office Lisbon", principal="a", include_deprecated=True, record_access=False)
    assert m.id in [i.memory.id for i in hits.items]
    assert store.undeprecate(m.id).state == "active"


def test_lifecycle_respects_scope(store):
    m = store.remember("secret plan", tier="semantic", principal="alice").memory
    with pytest.raises(NotFound):
        store.pin(m.id, Scope.of("mallory"))
    with pytest.raises(NotFound):
        store.edit(m.id, "changed", scope=Scope.of("mallory"))
    assert store.get(m.id).text == "secret plan"


def test_access_count_updates_after_recall(store):
    m = store.remember("the wifi password is on the fridge", tier="semantic", principal="a").memory
    store.recall("wifi fridge", principal="a")
    store.close()  # flushes the background access update
    got = store.get(m.id)
    assert got.access_count == 1 and got.last_accessed is not None


def test_many_small_writes_are_compacted(open_store):
    s = open_store(
        store={"compact_fragment_threshold": 8, "ann_min_rows": 50_000, "ann_rebuild_unindexed_rows": 20_000}
    )
    for i in range(40):
        s.remember(f"note number {i}", tier="episodic", principal="p")
    assert s.engine.fragment_count("episodic") < 8
    assert s.count(tier="episodic") == 40


def test_ann_index_keeps_new_rows_searchable(open_store):
    s = open_store(
        store={"compact_fragment_threshold": 1000, "ann_min_rows": 300, "ann_rebuild_unindexed_rows": 20_000}
    )
    s.remember_many(
        [{"text": f"filler memory about topic {i}", "tier": "semantic", "principal": "p"} for i in range(400)]
    )
    done = s.engine.ensure_indexes("semantic")
    assert "ann" in done and s.engine.vector_indexed("semantic")
    late = s.remember("zebra crossing near the station", tier="semantic", principal="p").memory
    hits = s.recall("zebra crossing near the station", principal="p", record_access=False)
    assert hits.items[0].memory.id == late.id
    assert hits.items[0].ranks["vector"] == 1 and hits.items[0].ranks["keyword"] == 1


def test_recall_falls_back_to_keywords_when_the_model_is_missing(open_store, tmp_path):
    s = open_store(embedder=UnavailableEmbedder("no model here"))
    s.remember("the printer on floor two jams", tier="semantic", principal="p")
    s.remember("lunch is at noon", tier="semantic", principal="p")
    result = s.recall("printer jams", principal="p", record_access=False)
    assert result.keyword_only and "keyword" in result.notice
    assert result.items[0].memory.text == "the printer on floor two jams"
    assert result.items[0].ranks["vector"] is None


def test_recall_rejects_bad_arguments(store):
    with pytest.raises(MemdeckError):
        store.recall("", principal="p")
    with pytest.raises(MemdeckError):
        store.recall("q", principal="p", tiers=["bogus"])
    with pytest.raises(MemdeckError):
        store.recall("q", principal="p", k=0)


def test_a_keyed_write_finds_its_key_taken_and_writes_nothing(store):
    first = store.remember("Alice prefers a window seat", principal="alice", key="k:seat", meta={"v": 1})
    assert first.action == "added" and "k:seat" in first.memory.tags
    again = store.remember("Alice prefers an aisle seat", principal="alice", key="k:seat", meta={"v": 2})
    assert again.action == "exists" and again.memory.id == first.memory.id and again.memory.meta == {"v": 1}
    assert [m.text for m in store.list(Scope.of("alice"))] == ["Alice prefers a window seat"]
    # Keys belong to a principal and to a tier; a deprecated or forgotten holder no longer holds the key.
    assert store.remember("Bob prefers a window seat", principal="bob", key="k:seat").action == "added"
    assert (
        store.remember("Alice, episode", tier="episodic", principal="alice", key="k:seat").action == "added"
    )
    store.forget([first.memory.id], "replaced")
    assert store.remember("Alice prefers an aisle seat", principal="alice", key="k:seat").action == "added"
    [held] = store.list(Scope.of("alice"), tier="semantic")
    store.deprecate(held.id, "outdated")
    assert store.remember("Alice prefers the front row", principal="alice", key="k:seat").action == "added"
    with pytest.raises(MemdeckError, match="key"):
        store.remember("Alice", principal="alice", key=" ")


def test_an_expired_memory_no_longer_holds_its_key(store):
    past = datetime.now(UTC) - timedelta(minutes=1)
    store.remember("Alice prefers a window seat", principal="alice", key="k:seat", expires_at=past)
    # Same text: the content-hash read returns the expired holder, which must not count as holding the key.
    result = store.remember("Alice prefers a window seat", principal="alice", key="k:seat")
    assert result.action != "exists"


def test_a_keyed_write_reads_the_tier_once(store, monkeypatch):
    store.remember("Alice likes tea", principal="alice", key="k:tea")
    tbl = store.engine.table("semantic")
    reads = []
    original_search, original_scan = tbl.search, store.engine.scan
    monkeypatch.setattr(tbl, "search", lambda *a, **kw: reads.append("search") or original_search(*a, **kw))
    # Reads of the tier only: the graph tables the write also updates are other tables.
    monkeypatch.setattr(
        store.engine,
        "scan",
        lambda *a, **kw: (a[:1] == ("semantic",) and reads.append("scan")) or original_scan(*a, **kw),
    )
    assert store.remember("Alice likes coffee", principal="alice", key="k:coffee").action == "added"
    assert len(reads) == 1


def test_list_with_meta_reads_meta_in_the_same_page(store):
    store.remember("Alice likes tea", principal="alice", meta={"source": {"file": "notes.md"}})
    store.remember("Alice likes jazz", tier="episodic", principal="alice", meta={"turn": 3})
    [jazz, tea] = store.list(Scope.of("alice"), with_meta=True)
    assert tea.meta == {"source": {"file": "notes.md"}} and jazz.meta == {"turn": 3}
    assert all(m.meta == {} for m in store.list(Scope.of("alice")))  # left out unless asked for
