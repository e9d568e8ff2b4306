"""The receipt's type, the receipts a forget writes and docs/receipts.md agree: every key a real receipt holds
is declared with the right value type, every required key is there, and the doc names every declared field."""

from __future__ import annotations

import json
import re
from typing import Any, get_args, get_type_hints, is_typeddict

from memdeck.core.forget import forget, forget_principal
from memdeck.core.forget.recheck import recheck
from memdeck.core.receipts import Receipt, ReceiptBook
from memdeck.core.receipts.types import ReceiptRow
from tests.jsontypes import mismatches
from tests.paths import ROOT

DOC = ROOT / "docs" / "receipts.md"


def on_disk(store, receipt: Receipt) -> dict[str, Any]:
    """The receipt as its file holds it (what anyone verifying it reads)."""
    path = ReceiptBook(store.root).path_of(receipt["receipt_id"])
    return json.loads(path.read_text(encoding="utf-8"))


def test_the_checker_catches_a_missing_an_undeclared_and_a_mistyped_key():
    good = {"name": "no_row_in_any_data_file", "passed": True}
    check_type = get_type_hints(Receipt)["checks"]
    assert mismatches([good, {**good, "detail": "read 3 files"}], check_type, "checks") == []
    assert mismatches([{"name": "x"}], check_type, "checks") == ["checks[0]: required key 'passed' missing"]
    assert mismatches([{**good, "text": "secret"}], check_type, "checks") == [
        "checks[0]: key 'text' is not declared"
    ]
    assert mismatches([{**good, "passed": "yes"}], check_type, "checks") == [
        "checks[0].passed: expected bool, got 'yes'"
    ]


def test_a_forget_with_a_cascade_writes_exactly_the_declared_receipt(store):
    episode = store.remember("told the doctor about the qzx7731 allergy", tier="episodic", principal="alice")
    fact = store.remember(
        "alice has an allergy", tier="semantic", principal="alice", sources=[episode.memory.id]
    ).memory
    store.recall("qzx7731 allergy", principal="alice")  # a trace for the scrub to remove

    receipt = forget(store.engine, [episode.memory.id], "user request")

    written = on_disk(store, receipt)
    assert written == receipt
    assert mismatches(written, Receipt, "receipt") == []
    assert [c["id"] for c in written["cascade"]] == [fact.id]
    # The optional fields this purge records are there, so the check above covered their types too.
    assert {"outcome", "trigger", "trace_scrub", "tombstones", "graph", "cascade_deleted"} <= written.keys()
    assert written["trigger"] == "request" and written["cascade_deleted"] == 1


def test_a_whole_principal_forget_and_its_recheck_write_the_declared_receipt(store):
    store.remember("alice's email is alice.qzx7731@example.com", tier="episodic", principal="alice")
    store.remember("alice likes green tea", tier="semantic", principal="alice")

    receipt = forget_principal(store.engine, "alice", "account deleted")
    follow_up = recheck(store.engine, receipt["receipt_id"])

    for r in (receipt, follow_up):
        written = on_disk(store, r)
        assert mismatches(written, Receipt, "receipt") == []
    assert on_disk(store, receipt)["whole_principal"] is True
    assert "vault" in on_disk(store, receipt)  # the shred's result, typed as VaultShred
    assert on_disk(store, follow_up)["rechecks"] == receipt["receipt_id"]


def test_a_rescan_writes_the_declared_receipt_with_its_value_kinds(tmp_path):
    from memdeck.core.config import load_config
    from memdeck.core.embed import HashEmbedder
    from memdeck.core.forget.rescan import RescanPreview, rescan
    from memdeck.core.store import Store

    def opened(old_rules: bool) -> Store:
        cfg = load_config()
        cfg["redaction"] = {**cfg.get("redaction", {}), "disabled_principals": ["alice"] if old_rules else []}
        return Store.open(tmp_path / "s", embedder=HashEmbedder(), config=cfg)

    old = opened(old_rules=True)  # written while redaction was off for alice: the value stays in clear
    m = old.remember("write to carol.wexley@example.org about the lease", tier="semantic", principal="alice")
    assert m.memory is not None
    old.edit(m.memory.id, "write to carol.wexley@example.org about the lease renewal")
    old.close()
    store = opened(old_rules=False)
    try:
        summary = rescan(store.engine)
        assert mismatches(summary, RescanPreview, "summary") == []
        [rid] = summary["receipts"]
        written = on_disk(store, ReceiptBook(store.root).get(rid))
    finally:
        store.close()
    assert mismatches(written, Receipt, "receipt") == []
    assert written["trigger"] == "rescan"
    [redacted] = written["rescan"]["redacted"]
    assert redacted["id"] == m.memory.id and sum(redacted["kinds"].values()) >= 1
    assert written["rescan"]["history"]  # the earlier text held the value too


def test_the_receipts_list_rows_are_the_declared_rows(store):
    m = store.remember("bob likes coffee", tier="semantic", principal="bob").memory
    forget(store.engine, [m.id], "user request")
    rows = ReceiptBook(store.root).list()
    assert len(rows) == 1
    assert mismatches(rows[0], ReceiptRow, "row") == []


def test_a_receipt_missing_a_reserved_field_or_carrying_text_does_not_match():
    """The test fails on drift: a receipt without its signature, or with the memory's text, is caught."""
    hints = get_type_hints(Receipt)
    sample = {
        "format": "memdeck.deletion-receipt/1",
        "receipt_id": "r1",
        "issued_at": "2025-11-02T03:04:05.123456Z",
        "principal": "alice",
        "reason": "user request",
        "deleted": [{"id": "m1", "tier": "episodic", "content_sha256_salted": "0" * 64, "created_at": None}],
        "cascade": [],
        "actions": ["delete"],
        "checks": [{"name": "no_row_in_any_data_file", "passed": True}],
        "previous_receipt_sha256": None,
        "public_key": "k",
        "signature": "s",
    }
    assert mismatches(sample, Receipt, "receipt") == []
    unsigned = {k: v for k, v in sample.items() if k != "signature"}
    assert mismatches(unsigned, Receipt, "receipt") == ["receipt: required key 'signature' missing"]
    leaky = {**sample, "deleted": [{**sample["deleted"][0], "text": "the memory"}]}
    assert mismatches(leaky, Receipt, "receipt") == ["receipt.deleted[0]: key 'text' is not declared"]
    assert set(hints) == Receipt.__required_keys__ | Receipt.__optional_keys__


def declared_fields(hint: Any, seen: set[Any] | None = None) -> set[str]:
    """Every key of the TypedDict and of the TypedDicts its values hold."""
    seen = set() if seen is None else seen
    if hint in seen:
        return set()
    seen.add(hint)
    if is_typeddict(hint):
        hints = get_type_hints(hint)
        return set(hints) | {f for h in hints.values() for f in declared_fields(h, seen)}
    return {f for arm in get_args(hint) for f in declared_fields(arm, seen)}


def test_the_doc_names_every_field_of_the_receipt_type():
    doc = DOC.read_text(encoding="utf-8")
    named = set(re.findall(r"`([a-z_0-9]+)`", doc)) | set(re.findall(r'"([a-z_0-9]+)"', doc))
    fields = declared_fields(Receipt)
    assert {"receipt_id", "content_sha256_salted", "why", "passed", "detail"} <= fields
    assert sorted(fields - named) == []


def test_the_reserved_fields_are_the_required_keys():
    from memdeck.core.receipts.format import RESERVED_KEYS

    assert Receipt.__required_keys__ == RESERVED_KEYS
