"""The memory lifecycle: TTL eviction with receipts, maintenance, bounded fragments, edit history."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import lance
import pytest
from lance.file import LanceFileReader

from memdeck.cli import main as cli_main
from memdeck.core import NotFound, Scope
from memdeck.core.errors import MemdeckError
from memdeck.core.maintenance.maintain import evict_expired, expired, maintain
from memdeck.core.receipts import ReceiptBook

DAY = timedelta(days=1)


def ago(days: float) -> datetime:
    return datetime.now(UTC) - days * DAY


def test_ttl_eviction_forgets_expired_memories_and_signs_ttl_receipts(open_store):
    s = open_store(ttl_days={"episodic": 30, "semantic": 0, "procedural": 0})
    old_a = s.remember(
        "alice ran the old backup job", tier="episodic", principal="alice", created_at=ago(60)
    ).memory
    pinned = s.remember(
        "alice's wedding day", tier="episodic", principal="alice", created_at=ago(90), pinned=True
    ).memory
    old_b = s.remember(
        "bob fixed the old printer", tier="episodic", principal="bob", created_at=ago(45)
    ).memory
    fresh = s.remember(
        "alice planned the new backup", tier="episodic", principal="alice", created_at=ago(2)
    ).memory
    fact = s.remember(
        "alice runs backups", tier="semantic", principal="alice", created_at=ago(400), sources=[old_a.id]
    ).memory
    lasting = s.remember(
        "alice is left-handed", tier="semantic", principal="alice", created_at=ago(900)
    ).memory

    assert expired(s.engine) == {"alice": [old_a.id], "bob": [old_b.id]}
    receipts = evict_expired(s.engine)

    assert sorted(r["principal"] for r in receipts) == ["alice", "bob"]
    for r in receipts:
        assert r["reason"] == "ttl" and r["trigger"] == "ttl" and r["outcome"] == "verified"
    by_principal = {r["principal"]: r for r in receipts}
    assert [d["id"] for d in by_principal["alice"]["deleted"]] == [old_a.id]
    assert [c["id"] for c in by_principal["alice"]["cascade"]] == [fact.id]  # its only source expired
    for gone in (old_a.id, old_b.id, fact.id):
        with pytest.raises(NotFound):
            s.get(gone)
    for kept in (pinned.id, fresh.id, lasting.id):  # pinned, young, and a tier with no TTL
        assert s.get(kept)
    assert evict_expired(s.engine) == []
    later = evict_expired(s.engine, now=datetime.now(UTC) + 40 * DAY)
    assert [d["id"] for r in later for d in r["deleted"]] == [fresh.id]
    assert len(ReceiptBook(s.root).list()) == 3 and ReceiptBook(s.root).verify_chain().ok


def test_writes_and_compaction_keep_fragments_bounded(open_store):
    s = open_store(store={"max_rows_per_fragment": 256, "compact_fragment_threshold": 8})
    s.remember("first", tier="episodic", principal="p")
    before = s.engine.table("episodic").version
    s.remember_many([{"text": f"bulk memory {i}", "tier": "episodic", "principal": "p"} for i in range(700)])
    ds = s.engine.table("episodic").to_lance()
    sizes = [f.metadata.physical_rows for f in ds.get_fragments()]
    assert max(sizes) <= 256 and sum(sizes) == 701
    assert ds.version == before + 1  # one commit for the whole batch
    for i in range(20):
        s.remember(f"small write {i}", tier="episodic", principal="p")
    report = maintain(s.engine)
    sizes = [f.metadata.physical_rows for f in s.engine.table("episodic").to_lance().get_fragments()]
    assert max(sizes) <= 256 and sum(sizes) == 721
    assert sum(1 for n in sizes if n < 128) <= 1  # the small writes were merged
    assert report["errors"] == [] and report["tables"]["episodic"]["rows"] == 721
    assert s.recall("bulk memory 699", principal="p", record_access=False).items


def test_edit_history_is_kept_shown_and_purged_with_the_memory(store, capsys):
    m = store.remember(
        "the meeting room code is 4417", tier="episodic", principal="alice", closed=False
    ).memory
    store.edit(m.id, "the meeting room code is 5528")
    store.edit(m.id, "the meeting room code is 6639")
    history = store.history(m.id)
    assert [h["text"] for h in history] == ["the meeting room code is 4417", "the meeting room code is 5528"]
    assert cli_main(["--store", str(store.root), "show", m.id, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["version"] == 3 and [h["version"] for h in shown["history"]] == [1, 2]

    receipt = store.forget([m.id], "user request")
    assert receipt["outcome"] == "verified" and receipt["history_versions"] == 2
    assert "history_purge" in receipt["actions"]
    with pytest.raises(NotFound):
        store.history(m.id)
    hist = store.root / "lance" / "history.lance"
    assert lance.dataset(str(hist)).count_rows() == 0
    for path in hist.rglob("*.lance"):
        rows = LanceFileReader(str(path)).read_all().to_table().to_pylist()
        assert not any("meeting room" in json.dumps(r, default=str) for r in rows)


def test_maintain_command_evicts_and_reports(memdeck_home, capsys):
    (memdeck_home / "config.toml").write_text(
        '[embedding]\nmodel = "hash-384"\n\n[ttl_days]\nepisodic = 10\n'
    )
    root = str(memdeck_home / "store")
    assert cli_main(["--store", root, "add", "an old note", "--tier", "episodic", "--principal", "p"]) == 0
    capsys.readouterr()
    from memdeck.core.store import Store

    s = Store.open(root)
    s.remember("a very old note", tier="episodic", principal="p", created_at=ago(30))
    s.close()

    assert cli_main(["--store", root, "maintain", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [r["deleted"] for r in report["evicted"]] == [1] and report["evicted"][0]["outcome"] == "verified"
    assert report["tables"]["episodic"]["rows"] == 1
    receipt = ReceiptBook(memdeck_home / "store").get(report["evicted"][0]["receipt_id"])
    assert receipt["reason"] == "ttl"

    assert cli_main(["--store", root, "maintain"]) == 0
    out = capsys.readouterr().out
    assert "evicted 0 expired memories" in out
    assert Store.open(root).count(Scope.of("p")) == 1


def test_ttl_values_that_are_not_numbers_are_refused_when_the_store_opens(open_store):
    with pytest.raises(MemdeckError, match=r"ttl_days\.episodic must be a number of at least 0, got 'soon'"):
        open_store(ttl_days={"episodic": "soon"})
