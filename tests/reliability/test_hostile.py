"""Issue #14: forgotten stays forgotten, and hostile input breaks nothing. One test (or a few) per item."""

from __future__ import annotations

from memdeck.core.filters import Scope
from memdeck.core.forget import forget
from memdeck.core.privacy.reveal import reveal_memory
from memdeck.core.privacy.vault import Vault

SSN = "078-05-1120"


# --- 1. the vault forgets with the memory, and token-shaped input never resolves ------------------------


def test_forgotten_ssn_cannot_be_revealed_through_a_literal_token(store):
    m = store.remember(f"my SSN is {SSN}", tier="semantic", principal="alice").memory
    token = next(t for t in Vault(store.engine.layout.vault).tokens("alice"))
    assert token in m.text and SSN not in m.text
    receipt = forget(store.engine, [m.id], reason="user request", scope=Scope.of("alice"))
    assert receipt["outcome"] == "verified"
    assert any(c["name"] == "vault_pruned" and c["passed"] for c in receipt["checks"])
    assert "vault_prune" in receipt["actions"]
    assert SSN not in Vault(store.engine.layout.vault).tokens("alice").values()
    # what an MCP agent can send
    note = store.remember(f"note {token}", tier="semantic", principal="alice").memory
    assert SSN not in reveal_memory(store.engine, note.id, "alice").text


def test_token_shaped_input_is_neutralised_while_the_value_is_still_live(store):
    store.remember(f"my SSN is {SSN}", tier="semantic", principal="alice")
    token = next(iter(Vault(store.engine.layout.vault).tokens("alice")))
    note = store.remember(f"note {token}", tier="episodic", principal="alice", tags=[token]).memory
    assert token not in note.text and token not in note.tags
    assert SSN not in reveal_memory(store.engine, note.id, "alice").text


def test_a_pruned_token_number_is_never_issued_again(store):
    m = store.remember(f"my SSN is {SSN}", tier="semantic", principal="alice").memory
    old = next(iter(Vault(store.engine.layout.vault).tokens("alice")))
    forget(store.engine, [m.id], reason="x", scope=Scope.of("alice"))
    m2 = store.remember("other SSN 219-09-9999", tier="semantic", principal="alice").memory
    assert old not in m2.text


def test_values_still_used_by_a_surviving_memory_stay_revealable(store):
    a = store.remember(f"SSN {SSN} on the form", tier="semantic", principal="alice").memory
    b = store.remember(f"the SSN {SSN} again, elsewhere", tier="semantic", principal="alice").memory
    forget(store.engine, [a.id], reason="x", scope=Scope.of("alice"))
    assert SSN in reveal_memory(store.engine, b.id, "alice").text


def test_edit_keeps_the_memorys_own_tokens(store):
    m = store.remember(f"SSN {SSN} on file", tier="semantic", principal="alice").memory
    edited = store.edit(m.id, m.text + " (checked)")
    assert SSN in reveal_memory(store.engine, edited.id, "alice").text


# --- 2. tombstones: import, restore, sync and consolidation do not bring a forgotten memory back --------


def _export_import(store, tmp_path, ids):
    from memdeck.core.exchange import export_jsonl, import_path

    path = tmp_path / "backup.jsonl"
    export_jsonl(store.engine, path)
    forget(store.engine, ids, reason="user request")
    lines: list[tuple[str, str]] = []
    report = import_path(store.engine, path, on_problem=lambda where, what: lines.append((where, what)))
    return path, report, lines


def test_import_of_an_old_export_does_not_restore_forgotten_memories(store, tmp_path):
    gone = store.remember("Alice's diagnosis is private", tier="semantic", principal="alice").memory
    kept = store.remember("Alice likes tea", tier="semantic", principal="alice").memory
    _, report, lines = _export_import(store, tmp_path, [gone.id])
    assert report.forgotten == 1 and report.imported == 0
    assert any(gone.id in what for _, what in lines) and lines[0][0].startswith("line ")
    ids = {m.id for m in store.list(limit=100)}
    assert gone.id not in ids and kept.id in ids


def test_export_carries_tombstones_to_another_store(store, open_store, tmp_path):
    from memdeck.core.exchange import export_jsonl, import_path

    old = tmp_path / "old.jsonl"
    gone = store.remember("a secret plan", tier="semantic", principal="alice").memory
    export_jsonl(store.engine, old)  # made before the forget
    forget(store.engine, [gone.id], reason="user request")
    new = tmp_path / "new.jsonl"
    export_jsonl(store.engine, new)
    other = open_store(tmp_path / "other")
    import_path(other.engine, new)
    report = import_path(other.engine, old)
    assert report.forgotten == 1 and gone.id not in {m.id for m in other.list(limit=100)}


def test_hand_written_record_of_a_forgotten_text_is_refused(store, tmp_path):
    from memdeck.core.exchange import import_path

    gone = store.remember("Bob owes Alice forty pounds", tier="semantic", principal="alice").memory
    forget(store.engine, [gone.id], reason="user request")
    path = tmp_path / "hand.jsonl"
    path.write_text(
        '{"text": "Bob owes Alice forty pounds", "principal": "alice"}\n'
        '{"text": "Bob likes jazz", "principal": "alice"}\n'
    )
    report = import_path(store.engine, path)
    assert (report.forgotten, report.imported) == (1, 1)


def test_consolidation_does_not_recreate_a_forgotten_fact(store):
    from memdeck.core.consolidate import consolidate

    store.remember(
        "Trip planning",
        tier="episodic",
        principal="alice",
        session="s1",
        derived_facts=["Alice is afraid of flying"],
    )
    consolidate(store.engine, "alice")
    fact = next(m for m in store.list(limit=100) if m.tier == "semantic")
    forget(store.engine, [fact.id], reason="user request", scope=Scope.of("alice"))
    consolidate(store.engine, "alice")
    assert not [m for m in store.list(limit=100) if m.tier == "semantic"]


def test_sync_does_not_bring_back_a_section_a_person_forgot(store, tmp_path):
    from memdeck.core.exchange import sync_markdown

    root = tmp_path / "notes"
    root.mkdir()
    (root / "MEMORY.md").write_text("# Health\nAlice takes insulin daily.\n\n# Food\nAlice likes figs.\n")
    sync_markdown(store.engine, root, "alice")
    gone = next(m for m in store.list(limit=10) if "insulin" in m.text)
    forget(store.engine, [gone.id], reason="user request", scope=Scope.of("alice"))
    report = sync_markdown(store.engine, root, "alice")
    assert report.forgotten == 1 and not [m for m in store.list(limit=10) if "insulin" in m.text]


# --- 3. the trace log: a query quoting a forgotten text, and traces queued before a purge ----------------


def test_forget_cleans_a_logged_query_that_quoted_the_text_without_returning_it(store):
    m = store.remember("Alice's diagnosis is hypertension", tier="semantic", principal="alice").memory
    store.remember("Bob plays chess", tier="semantic", principal="bob")
    store.recall("hypertension diagnosis", principal="bob", k=3)  # bob cannot see it: not a candidate
    receipt = forget(store.engine, [m.id], reason="user request", scope=Scope.of("alice"))
    failed = [c for c in receipt["checks"] if not c["passed"]]
    assert receipt["outcome"] == "verified", failed


def test_a_trace_queued_in_another_process_before_a_purge_is_not_written_after_it(
    store, open_store, tmp_path
):
    import duckdb

    from memdeck.core.recall import traces
    from memdeck.core.storage import logdb

    m = store.remember("Carol's locker code is 4417", tier="semantic", principal="carol").memory
    other = open_store(tmp_path / "store")  # a second handle: its own trace queue, like another process
    result = other.recall("locker code", principal="carol", k=3)
    assert m.id in [i.memory.id for i in result.items]
    receipt = forget(store.engine, [m.id], reason="user request")
    assert receipt["outcome"] == "verified"
    traces.writer(other.engine).flush()  # the delayed write
    con = duckdb.connect(str(logdb.log_path(store.engine)), read_only=True)
    try:
        named = con.execute("select count(*) from trace_candidates where memory_id = ?", [m.id]).fetchone()[0]
        returned = con.execute(
            "select count(*) from traces where list_contains(returned, ?)", [m.id]
        ).fetchone()[0]
    finally:
        con.close()
    assert (named, returned) == (0, 0)


# --- 4. everything written passes redaction: judge queries, forget reasons, whole-store recall -----------


def _analytics_strings(store) -> str:
    import duckdb

    from memdeck.core.recall import traces
    from memdeck.core.storage import logdb

    traces.flush(store.engine)
    con = duckdb.connect(str(logdb.log_path(store.engine)), read_only=True)
    try:
        rows = con.execute("select query from traces union all select query from judgments").fetchall()
    finally:
        con.close()
    return " ".join(str(r[0]) for r in rows)


def test_judge_query_is_redacted(store):
    from memdeck.core.tuning.evaluate import judge

    m = store.remember("Alice's phone plan", tier="semantic", principal="alice").memory
    judge(store.engine, "who has SSN 078-05-1120?", "alice", m.id, True)
    assert SSN not in _analytics_strings(store)


def test_whole_store_recall_logs_a_redacted_query(store):
    store.remember("Alice's phone plan", tier="semantic", principal="alice")
    store.recall("mail dana.k@example.com about it", scope=Scope.everyone(), k=3)  # the operator
    logged = _analytics_strings(store)
    assert "dana.k@example.com" not in logged and "EMAIL" in logged


def test_forget_reason_is_redacted_in_the_signed_receipt(store):
    from memdeck.core.receipts import ReceiptBook

    m = store.remember("something", tier="semantic", principal="alice").memory
    receipt = forget(store.engine, [m.id], reason=f"asked by owner of SSN {SSN}", scope=Scope.of("alice"))
    assert SSN not in receipt["reason"]
    for path in ReceiptBook(store.root).dir.glob("*.json"):
        assert SSN not in path.read_text()


def test_deprecation_reason_is_redacted(store):
    m = store.remember("something", tier="semantic", principal="alice").memory
    assert SSN not in store.deprecate(m.id, f"wrong SSN {SSN}").deprecation_reason


# --- 6. a timestamp outside what can be read back is refused on every write path -------------------------

BAD_TIMES = ["9999-12-31T23:59:59-05:00", "0001-01-01T00:00:00+05:00", 1e20, -1e20, "10000-01-01"]


def test_out_of_range_times_are_refused_per_record_and_the_rest_stays_usable(store, tmp_path):
    import json

    import pytest

    from memdeck.core.errors import MemdeckError
    from memdeck.core.exchange import export_jsonl, import_path

    lines = [
        json.dumps({"text": f"record {i}", "principal": "alice", "created_at": t})
        for i, t in enumerate(BAD_TIMES)
    ]
    lines += [
        json.dumps(
            {
                "id": "sem_bad",
                "tier": "semantic",
                "text": "x",
                "principal": "alice",
                "created_at": "9999-12-31T23:59:59-05:00",
            }
        )
    ]
    lines.append(json.dumps({"text": "a good record", "principal": "alice"}))
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(lines) + "\n")
    report = import_path(store.engine, path)
    assert (report.imported, report.malformed) == (1, len(BAD_TIMES) + 1)
    for t in BAD_TIMES:
        with pytest.raises(MemdeckError):
            store.remember("x", tier="semantic", principal="alice", created_at=t)
    assert [m.text for m in store.list(limit=10)] == ["a good record"]
    store.recall("good", principal="alice")
    export_jsonl(store.engine, tmp_path / "out.jsonl")
    forget(store.engine, [m.id for m in store.list(limit=10)], reason="x")
