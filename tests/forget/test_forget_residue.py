"""Real residue fails the check that covers its file, whatever piece of the forgotten text it is; the
dictionary words of the same text, planted in the same place, do not.

Each case forgets one memory (the receipt verifies), then plants a leftover in one kind of file and runs the
store's checks again with the same needles the purge used.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from memdeck.core.forget import forget
from memdeck.core.forget.needles import needles_of
from memdeck.core.forget.verify import Verifier

# A number the redactor leaves in the text (a passport number would now be a vault token, not residue).
TEXT = "Marguerite keeps parcel 48213977 in locker XJ42Q at the Quenwood gym, next to the sauna"
EMAIL_TEXT = "Send the signed lease to marguerite.okonjo@example.org before the viewing"
COMMON = "keeps parcel in locker at the gym next to the"  # every word of TEXT a dictionary holds, in order


def _forgotten(store, text: str = TEXT):
    m = store.remember(text, tier="episodic", principal="alice").memory
    stored = m.text  # as stored: redacted values replaced by vault tokens
    receipt = forget(store.engine, [m.id], "user request")
    assert receipt["outcome"] == "verified", [c for c in receipt["checks"] if not c["passed"]]
    journal = {
        "principal": "alice",
        "whole_principal": False,
        "deleted": [{"id": m.id}],
        "cascade_delete_ids": [],
        "tiers": {m.id: "episodic"},
        "actions": [],
    }
    texts, tokens, words = needles_of([stored])
    return m.id, stored, journal, {"texts": texts, "tokens": tokens, "words": words, "vectors": {}}


def _failed(store, journal, secret) -> dict[str, str]:
    return {c["name"]: c["detail"] for c in Verifier(store.engine, journal, secret).run() if not c["passed"]}


def _plant_other_file(store, residue: str) -> str:
    (store.root / "notes.bin").write_bytes(b"\x00\x01copied " + residue.encode() + b"\x00")
    return "store_files_clean"


def _plant_json(store, residue: str) -> str:
    (store.root / "export-settings.json").write_text(
        json.dumps({"title": "notes", "body": [f"… {residue} …"]})
    )
    return "store_files_clean"


def _plant_key_file(store, residue: str) -> str:
    key = store.root / "keys" / "receipt_ed25519.key"
    key.write_bytes(key.read_bytes() + f"# {residue}\n".encode())
    return "store_files_clean"


def _plant_transaction_file(store, residue: str) -> str:
    txn = store.root / "lance" / "episodic.lance" / "_transactions" / "9-planted.txn"
    txn.write_bytes(b"\x12\x20delete where text = '" + residue.encode() + b"'\x00")
    return "table_metadata_clean"


def _plant_trace(store, residue: str) -> str:
    store.recall("warm up", principal="alice")
    store.close()  # the trace writer flushes; then the log is ours to write
    con = duckdb.connect(str(store.root / "analytics.duckdb"))
    con.execute(
        "insert into traces (trace_id, recalled_at, principals, agent, query, source, tiers, k, profile_name, profile, "
        "keyword_only, returned) values ('t-planted', now(), ['alice'], 'user', ?, 'api', ['episodic'], 5, "
        "'default', '{}', false, [])",
        [f"where is {residue}"],
    )
    con.close()
    return "analytics_clean"


PLANTS = {
    "other file": _plant_other_file,
    "json file": _plant_json,
    "key file": _plant_key_file,
    "transaction file": _plant_transaction_file,
    "trace log": _plant_trace,
}
RESIDUE = {
    "whole text": lambda text: text,
    "a piece": lambda text: text[20:52],
    "a number": lambda text: "48213977",
    "a code": lambda text: "xj42q",
    "a rare word": lambda text: "Quenwood",
}


@pytest.mark.parametrize("kind", list(RESIDUE))
@pytest.mark.parametrize("where", list(PLANTS))
def test_residue_fails_the_check_of_its_file(open_store, tmp_path, where, kind):
    store = open_store(tmp_path / "s")
    _, stored, journal, secret = _forgotten(store)
    check = PLANTS[where](store, RESIDUE[kind](stored))
    store = open_store(tmp_path / "s")
    failed = _failed(store, journal, secret)
    assert check in failed, failed
    assert set(failed) == {check}
    assert "Quenwood".lower() not in failed[check].lower()  # a detail names the file, never the text


@pytest.mark.parametrize("where", list(PLANTS))
def test_dictionary_words_of_the_text_are_no_residue(open_store, tmp_path, where):
    store = open_store(tmp_path / "s")
    _, _, journal, secret = _forgotten(store)
    PLANTS[where](store, COMMON)
    store = open_store(tmp_path / "s")
    assert _failed(store, journal, secret) == {}


@pytest.mark.parametrize("where", ["other file", "json file", "trace log"])
def test_a_redacted_values_token_is_residue(open_store, tmp_path, where):
    store = open_store(tmp_path / "s")
    _, stored, journal, secret = _forgotten(store, EMAIL_TEXT)
    token = next(w for w in stored.split() if w.startswith("<"))  # the vault token the text holds
    check = PLANTS[where](store, token)
    store = open_store(tmp_path / "s")
    assert check in _failed(store, journal, secret)


def test_the_id_is_residue_in_a_transaction_file_and_the_trace_log(open_store, tmp_path):
    store = open_store(tmp_path / "s")
    mem_id, _, journal, secret = _forgotten(store)
    _plant_transaction_file(store, mem_id)
    store.recall("warm up", principal="alice")
    store.close()
    con = duckdb.connect(str(store.root / "analytics.duckdb"))
    con.execute(
        "insert into trace_candidates (trace_id, memory_id, tier, principal, agent) values ('t', ?, 'episodic', "
        "'bob', 'user')",
        [mem_id],
    )
    con.close()
    store = open_store(tmp_path / "s")
    failed = _failed(store, journal, secret)
    assert {"table_metadata_clean", "analytics_clean"} <= set(failed)


def test_another_principals_query_with_the_same_rare_word_is_not_alices_residue(open_store, tmp_path):
    # Bob typed "Quenwood" himself: it is not what alice forgot, and the scrub leaves his trace alone.
    store = open_store(tmp_path / "s")
    store.remember("bob trains at the Quenwood gym", tier="episodic", principal="bob")
    bobs = store.recall("Quenwood gym", principal="bob", record_access=False)
    assert bobs.items
    _, _, journal, secret = _forgotten(store)
    store.close()
    con = duckdb.connect(str(Path(store.root) / "analytics.duckdb"), read_only=True)
    queries = [r[0] for r in con.execute("select query from traces").fetchall()]
    con.close()
    assert "Quenwood gym" in queries
    store = open_store(tmp_path / "s")
    assert _failed(store, journal, secret) == {}
