"""Forget really forgets: raw reads of every file and every remaining version, both searches, cascades,
receipts checked with a plain Ed25519 verification, a second Store left with stale handles, failed checks."""

from __future__ import annotations

import base64
import json
import os
import shutil
from pathlib import Path

import lance
import numpy as np
import pyarrow as pa
import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from lance.file import LanceFileReader

from memdeck.cli import main as cli_main
from memdeck.core import MemdeckError, NotFound, Scope
from memdeck.core.forget import forget, forget_principal, plan_forget
from memdeck.core.receipts import ReceiptBook

CANARY = "qzxcanary7731"
SECRET = f"The spare key to the blue shed is taped under the third step, code {CANARY} plumtree"


# --- oracles written for the tests, independent of memdeck.core.forget ---------------------------------


def plain_verify(receipt: dict) -> bool:
    body = {k: v for k, v in receipt.items() if k != "signature"}
    message = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    key = Ed25519PublicKey.from_public_bytes(base64.b64decode(receipt["public_key"]))
    try:
        key.verify(base64.b64decode(receipt["signature"]), message)
    except InvalidSignature:
        return False
    return True


def _strings(arr: pa.Array) -> list[bytes]:
    """Every string or binary value inside an Arrow array, nested lists and structs included."""
    t = arr.type
    if pa.types.is_dictionary(t):
        return _strings(arr.dictionary_decode())
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return [v.encode("utf-8") for v in arr.to_pylist() if v is not None]
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return [v for v in arr.to_pylist() if v is not None]
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return _strings(arr.flatten())
    if pa.types.is_struct(t):
        return [s for i in range(t.num_fields) for s in _strings(arr.field(i))]
    return []


def table_has(table: pa.Table, needle: str) -> bool:
    low = needle.lower().encode("utf-8")
    return any(
        low in v.lower() for name in table.column_names for v in _strings(table[name].combine_chunks())
    )


def files_holding(root: Path, needle: str) -> list[str]:
    """Every file under root read raw, and every Lance file (data and index) decoded too."""
    low = needle.lower().encode("utf-8")
    found = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        if low in path.read_bytes().lower():
            found.append(f"raw:{path.relative_to(root)}")
        if path.suffix in (".lance", ".idx"):
            try:
                table = LanceFileReader(str(path)).read_all().to_table()
            except Exception:  # noqa: BLE001 - some index files are not Lance files
                continue
            if table_has(table, needle):
                found.append(f"decoded:{path.relative_to(root)}")
    return found


def versions_holding(store, needle: str) -> list[str]:
    """Check out every version every table still has and search all of its rows."""
    found = []
    for table_dir in sorted((store.root / "lance").glob("*.lance")):
        for v in lance.dataset(str(table_dir)).versions():
            data = lance.dataset(str(table_dir), version=v["version"]).to_table()
            if table_has(data, needle):
                found.append(f"{table_dir.name}@{v['version']}")
    return found


def fts_token_count(store, tier: str) -> int:
    total = 0
    for path in (store.root / "lance" / f"{tier}.lance" / "_indices").rglob("*tokens.lance"):
        table = LanceFileReader(str(path)).read_all().to_table()
        total += sum(table["_token_next_id"].to_pylist())
    return total


def rebuild_fts(store, tier: str) -> None:
    from memdeck.core.storage.indexing import ensure_fts, index_names

    tbl = store.engine.table(tier)
    for name, columns in index_names(tbl).items():
        if columns == ["text"]:
            tbl.drop_index(name)
    ensure_fts(tbl)


def fresh_fts_token_count(store, tier: str, tmp_path: Path) -> int:
    """Build the same full-text index from scratch over the kept rows the table's index covers."""
    import lancedb

    from memdeck.core.storage.indexing import ensure_fts

    ds = store.engine.table(tier).to_lance()
    covered = next(i for i in ds.list_indices() if i["fields"] == ["text"])["fragment_ids"]
    rows = pa.concat_tables([ds.get_fragment(f).to_table() for f in sorted(covered)])  # what the index covers
    db = lancedb.connect(str(tmp_path / "oracle"))
    tbl = db.create_table("t", rows)
    ensure_fts(tbl)
    total = 0
    for path in (tmp_path / "oracle" / "t.lance" / "_indices").rglob("*tokens.lance"):
        total += sum(LanceFileReader(str(path)).read_all().to_table()["_token_next_id"].to_pylist())
    return total


# --- the store under test -------------------------------------------------------------------------------


def _filled(store, n: int = 300):
    store.remember_many(
        [
            {
                "text": f"note {i}: watered the tomatoes and read chapter {i % 17} of the novel",
                "tier": "episodic",
                "principal": "alice",
            }
            for i in range(n)
        ]
    )
    store.remember("bob keeps his bike in the hallway", tier="episodic", principal="bob")
    secret = store.remember(
        SECRET.replace("plumtree", "draft"), tier="episodic", principal="alice", closed=False
    ).memory
    store.edit(secret.id, SECRET)  # the earlier text now lives in the edit history
    return secret


def test_canary_is_gone_from_every_file_version_index_and_search(store, tmp_path):
    secret = _filled(store)
    fact = store.remember(
        f"the shed code is {CANARY}", tier="semantic", principal="alice", sources=[secret.id]
    ).memory
    store.engine.compact("episodic")  # the canary now shares a fragment with kept rows: the rewrite path
    done = store.engine.ensure_indexes("episodic", force_ann=True)
    assert "ann" in done
    store.engine.ensure_indexes("semantic")
    rebuild_fts(store, "episodic")  # one full-text index over every row, canary included
    store.recall(f"where is the shed key {CANARY}", principal="alice")  # lands in the trace log
    store.close()  # let the access counts of that recall land first
    vector = store.engine.get_vector(secret)
    assert files_holding(store.root, CANARY) or versions_holding(store, CANARY)  # the oracle sees it before

    receipt = forget(store.engine, [secret.id], "user request")

    assert receipt["outcome"] == "verified", [c for c in receipt["checks"] if not c["passed"]]
    assert all(c["passed"] for c in receipt["checks"])
    assert {c["name"] for c in receipt["checks"]} >= {
        "no_row_in_any_data_file",
        "index_files_clean",
        "no_older_version_holds_it",
        "vector_search_misses_it",
        "keyword_search_misses_it",
        "analytics_clean",
        "store_files_clean",
        "edit_history_purged",
    }
    assert plain_verify(receipt)
    assert receipt["deleted"][0]["id"] == secret.id
    assert [c["id"] for c in receipt["cascade"]] == [fact.id]
    for needle in (CANARY, "plumtree", "taped under the third step", SECRET):
        assert files_holding(store.root, needle) == [], needle
        assert versions_holding(store, needle) == [], needle
    assert CANARY not in json.dumps(receipt) and "plumtree" not in json.dumps(receipt)

    with pytest.raises(NotFound):
        store.get(secret.id)
    hits = store.recall(f"{CANARY} shed key taped third step", principal="alice", record_access=False)
    assert all(CANARY not in i.memory.text and i.memory.id != secret.id for i in hits.items)
    tbl = store.engine.table("episodic")
    near = tbl.search(vector).distance_type("cosine").limit(20).select(["id"]).to_list()
    exact = (
        tbl.search(vector).distance_type("cosine").limit(20).bypass_vector_index().select(["id"]).to_list()
    )
    assert secret.id not in {r["id"] for r in near + exact}
    assert store.engine.table("episodic").search(CANARY, query_type="fts").limit(5).to_list() == []
    # The token dictionary holds exactly what an index built from scratch on the kept rows holds.
    assert fts_token_count(store, "episodic") == fresh_fts_token_count(store, "episodic", tmp_path)
    assert store.count(Scope.of("alice"), tier="episodic") == 300
    assert store.count(Scope.of("bob")) == 1


def test_cascade_deletes_sole_source_facts_and_updates_shared_ones(store):
    e1 = store.remember(f"told the doctor about {CANARY} allergy", tier="episodic", principal="alice").memory
    e2 = store.remember("cycled to work in the rain", tier="episodic", principal="alice").memory
    only = store.remember("alice has an allergy", tier="semantic", principal="alice", sources=[e1.id]).memory
    derived = store.remember(
        "alice avoids some food", tier="semantic", principal="alice", sources=[only.id]
    ).memory
    shared = store.remember(
        "alice talks about health",
        tier="semantic",
        principal="alice",
        sources=[e1.id, e2.id],
        evidence_count=3,
    ).memory
    other = store.remember("alice cycles", tier="semantic", principal="alice", sources=[e2.id]).memory
    bobs = store.remember("bob cites it", tier="semantic", principal="bob", sources=[e1.id]).memory
    newer = store.remember("alice updated her allergy list", tier="episodic", principal="alice").memory
    store.deprecate(e2.id, "replaced", superseded_by=e1.id)

    plan = plan_forget(store.engine, [e1.id])
    assert [m.id for m in plan.deleted] == [e1.id]
    assert {m.id for m, _ in plan.cascade_delete} == {only.id, derived.id}
    assert {m.id for m, _ in plan.cascade_update} == {shared.id, e2.id}
    assert bobs.id not in plan.ids  # another principal's record is never touched

    receipt = forget(store.engine, [e1.id], "user request")
    assert receipt["outcome"] == "verified", [c for c in receipt["checks"] if not c["passed"]]
    why = {c["id"]: c["why"] for c in receipt["cascade"]}
    assert why[only.id] == f"only source was {e1.id}"
    assert why[derived.id] == f"only source was {only.id}"
    assert "evidence 3 -> 2" in why[shared.id]
    for gone in (e1.id, only.id, derived.id):
        with pytest.raises(NotFound):
            store.get(gone)
    kept = store.get(shared.id)
    assert (kept.sources, kept.evidence_count) == ([e2.id], 2)
    assert store.get(other.id).sources == [e2.id]
    assert store.get(e2.id).superseded_by is None and store.get(e2.id).state == "deprecated"
    assert store.get(newer.id).text == "alice updated her allergy list"
    # The old row of the updated fact (still citing e1) was rewritten away, not just hidden.
    for name in ("semantic", "episodic"):
        for path in (store.root / "lance" / f"{name}.lance" / "data").glob("*.lance"):
            table = LanceFileReader(str(path)).read_all().to_table()
            rows = [r for r in table.to_pylist() if r["principal"] == "alice"]
            assert not any(e1.id in (r.get("sources") or []) for r in rows)
            assert not any(r.get("superseded_by") == e1.id for r in rows)
    assert files_holding(store.root, CANARY) == []


def test_forget_whole_principal_destroys_vault_and_leaves_others(store):
    store.remember(f"alice's email is alice.{CANARY}@example.com", tier="episodic", principal="alice")
    store.remember(f"alice likes {CANARY} tea", tier="semantic", principal="alice")
    store.remember("deploy: build; ship", tier="procedural", principal="alice", name="deploy")
    keep = store.remember("bob likes coffee", tier="semantic", principal="bob").memory
    a = store.list(Scope.of("alice"))[0]
    store.edit(a.id, f"{a.text} (checked)")

    receipt = forget_principal(store.engine, "alice", "account deleted")
    assert receipt["outcome"] == "verified", [c for c in receipt["checks"] if not c["passed"]]
    assert plain_verify(receipt)
    assert len(receipt["deleted"]) == 3 and receipt["whole_principal"] is True
    assert "crypto_shred" in receipt["actions"] and "principal_vault_destroyed" in receipt["vault"]
    assert store.principals() == ["bob"]
    assert store.get(keep.id).text == "bob likes coffee"
    assert files_holding(store.root, CANARY) == []
    assert versions_holding(store, CANARY) == []
    with pytest.raises(NotFound):
        forget_principal(store.engine, "alice", "again")


def test_a_second_store_with_stale_handles_keeps_working(store, open_store):
    secret = _filled(store, 40)
    other = open_store(store.root)
    assert any(m.id == secret.id for m in other.list(limit=100))  # handles now at the old version
    assert other.get(secret.id).text == SECRET

    receipt = forget(store.engine, [secret.id], "user request")
    assert receipt["outcome"] == "verified"

    # Reads right after the purge (inside the consistency interval) must not crash.
    page = other.list(limit=100)
    assert len(page) >= 40
    other.count()
    other.recall("tomatoes novel", principal="alice", record_access=False)
    other.engine.refresh()
    assert secret.id not in {m.id for m in other.list(limit=100)}
    with pytest.raises(NotFound):
        other.get(secret.id)
    assert other.count(Scope.of("alice")) == 40
    hits = other.recall(f"shed key {CANARY}", principal="alice", record_access=False)
    assert all(i.memory.id != secret.id for i in hits.items)
    other.pin(page[-1].id)  # writes from the stale store work too


def test_a_failed_check_signs_a_failed_receipt_and_the_cli_exits_non_zero(store, capsys):
    secret = store.remember(SECRET, tier="episodic", principal="alice").memory
    (store.root / "notes.txt").write_text(f"copied by hand: {SECRET}\n")  # a copy memdeck does not know of

    receipt = forget(store.engine, [secret.id], "user request")
    failed = [c for c in receipt["checks"] if not c["passed"]]
    assert [c["name"] for c in failed] == ["store_files_clean"]
    assert "notes.txt" in failed[0]["detail"] and CANARY not in failed[0]["detail"]
    assert receipt["outcome"] == "checks_failed"
    assert plain_verify(receipt)

    again = store.remember(SECRET, tier="episodic", principal="alice").memory
    code = cli_main(["--store", str(store.root), "forget", again.id, "--reason", "user request"])
    captured = capsys.readouterr()
    assert code == 5
    assert "store_files_clean" in captured.err and len(captured.err.strip().splitlines()) == 1
    assert "FAILED store_files_clean" in captured.out


def test_checks_see_a_leftover_row_in_an_analytics_file(store):
    import duckdb

    secret = store.remember(SECRET, tier="episodic", principal="alice").memory
    con = duckdb.connect(str(store.root / "extra.duckdb"))
    con.execute("create table notes (memory_id varchar, body varchar)")
    con.execute("insert into notes values (?, ?)", [secret.id, "unrelated words only"])
    con.close()
    receipt = forget(store.engine, [secret.id], "user request")
    failed = {c["name"]: c["detail"] for c in receipt["checks"] if not c["passed"]}
    assert set(failed) == {"analytics_clean"} and "extra.duckdb" in failed["analytics_clean"]


def test_forget_rejects_bad_requests(store):
    a = store.remember("alice note", tier="episodic", principal="alice").memory
    b = store.remember("bob note", tier="episodic", principal="bob").memory
    with pytest.raises(MemdeckError, match="principals"):
        forget(store.engine, [a.id, b.id], "x")
    with pytest.raises(NotFound):
        forget(store.engine, [b.id], "x", Scope.of("alice"))
    with pytest.raises(MemdeckError):
        forget(store.engine, [a.id], "   ")
    with pytest.raises(MemdeckError):
        forget(store.engine, [], "x")
    assert store.get(a.id) and store.get(b.id)
    assert not (store.root / "receipts").exists() or not list((store.root / "receipts").glob("*.json"))


def test_cli_forget(store, capsys):
    root = str(store.root)
    a = store.remember(SECRET, tier="episodic", principal="alice").memory
    b = store.remember("bob's own note about lunch", tier="episodic", principal="bob").memory

    assert cli_main(["--store", root, "forget", a.id, "--reason", "r", "--dry-run", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["deleted"][0]["id"] == a.id and store.get(a.id)

    assert cli_main(["--store", root, "forget", b.id, "--principal", "alice", "--reason", "r"]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "lunch" not in err and "Traceback" not in err

    assert cli_main(["--store", root, "forget", "--reason", "r"]) == 2
    assert "--principal" in capsys.readouterr().err

    assert cli_main(["--store", root, "forget", a.id, "--reason", "user request", "--json"]) == 0
    receipt = json.loads(capsys.readouterr().out)
    assert plain_verify(receipt) and receipt["outcome"] == "verified"
    path = ReceiptBook(store.root).path_of(receipt["receipt_id"])
    assert json.loads(path.read_text()) == receipt

    assert cli_main(["--store", root, "forget", "--principal", "bob", "--reason", "gone"]) == 0
    out = capsys.readouterr().out
    assert "forgot 1 memory of bob" in out and "checks:" in out
    assert store.principals() == []
    assert not os.listdir(store.root / "journal")


def test_forgetting_many_ids_at_once(store):
    ids = [
        r.memory.id
        for r in store.remember_many(
            [
                {"text": f"{CANARY} item {i} alpha beta", "tier": "episodic", "principal": "alice"}
                for i in range(25)
            ]
        )
    ]
    keep = store.remember("a kept memory", tier="episodic", principal="alice").memory
    receipt = forget(store.engine, ids, "bulk")
    assert receipt["outcome"] == "verified"
    assert {d["id"] for d in receipt["deleted"]} == set(ids)
    assert store.count() == 1 and store.get(keep.id)
    assert files_holding(store.root, CANARY) == []


def test_an_identical_memory_of_another_principal_stays(store):
    """Needles that also occur in kept memories do not fail the checks; the kept twin is still found."""
    secret = store.remember("zz unique vector words", tier="episodic", principal="alice").memory
    vector = store.engine.get_vector(secret)
    assert np.isclose(np.linalg.norm(vector), 1.0, atol=1e-3)
    twin = store.remember("zz unique vector words", tier="episodic", principal="bob").memory
    receipt = forget(store.engine, [secret.id], "r")
    assert receipt["outcome"] == "verified"
    hits = store.engine.table("episodic").search(vector).limit(3).select(["id"]).to_list()
    assert [h["id"] for h in hits][:1] == [twin.id]  # bob's identical memory stays, alice's is gone


def test_store_copy_is_independent(store, tmp_path):
    """Guard for the oracle: a canary is found before a forget, in raw bytes or decoded Lance files."""
    store.remember(SECRET, tier="episodic", principal="alice")
    copy = tmp_path / "copy"
    shutil.copytree(store.root, copy)
    assert files_holding(copy, CANARY)


def test_a_principal_with_only_a_vault_left_can_still_be_shredded(store):
    from memdeck.core.privacy.vault import Vault

    m = store.remember(
        f"write to carol.{CANARY}@example.com about the lease", tier="episodic", principal="carol"
    )
    assert CANARY not in m.memory.text  # redacted: the address lives in carol's vault
    assert Vault(store.engine.layout.vault).exists("carol")
    assert forget(store.engine, [m.memory.id], "user request")["outcome"] == "verified"
    assert Vault(store.engine.layout.vault).exists("carol")  # one memory going does not shred the vault

    receipt = forget_principal(store.engine, "carol", "account deleted")
    assert receipt["deleted"] == [] and "crypto_shred" in receipt["actions"]
    assert receipt["vault"]["principal_vault_destroyed"] is True
    assert not Vault(store.engine.layout.vault).exists("carol")


def test_words_that_name_columns_do_not_fail_the_metadata_check(store):
    # A manifest spells out the schema ("agent", "session", "events", "principal"): a memory using those
    # words is still verified, while its own distinctive words are still searched for everywhere else.
    m = store.remember(
        "the agent opened a session, logged events for the principal and closed the tracker",
        tier="episodic",
        principal="alice",
        session="s1",
        events=["agent: drafted a message"],
    ).memory
    receipt = forget(store.engine, [m.id], "user request")
    assert receipt["outcome"] == "verified", [c for c in receipt["checks"] if not c["passed"]]
