"""The purge journal as a dataclass reads the journals memdeck writes today (``memdeck.purge-journal/1``), writes
them back byte for byte, refuses a damaged one with a clear message, and a purge resumed from such a file
signs the receipt its journal describes."""

from __future__ import annotations

import json

import pytest

from memdeck.core.errors import MemdeckError
from memdeck.core.forget.journal import PurgeJournal
from memdeck.core.forget.purge import Purge
from memdeck.core.receipts import ReceiptBook, verify_receipt

SHA = "5" * 64

# A journal as a purge killed after its checks leaves it on disk: sorted keys, no whitespace beyond ", "/": "
# (json.dumps with sort_keys=True, ensure_ascii=False), every field the purge records by then.
TODAY = json.dumps(
    {
        "format": "memdeck.purge-journal/1",
        "purge_id": "0f3c2a9d8e7b4c1a9f0e1d2c3b4a5968",
        "started_at": "2026-11-02T03:04:05.123456Z",
        "trigger": "request",
        "principal": "alice",
        "reason": "user request",
        "whole_principal": False,
        "deleted": [
            {
                "id": "epi_1",
                "tier": "episodic",
                "content_sha256": SHA,
                "created_at": "2026-10-01T08:00:00.000000Z",
            }
        ],
        "cascade": [
            {"id": "sem_1", "tier": "semantic", "why": "only source was epi_1"},
            {"id": "ent_9", "tier": "entities", "why": "only forgotten memories mentioned it"},
        ],
        "cascade_delete_ids": ["sem_1"],
        "tombstones": [["epi_1", SHA], ["sem_1", "6" * 64]],
        "tiers": {"epi_1": "episodic", "sem_1": "semantic"},
        "updates": {"sem_2": {"tier": "semantic", "values": {"sources": ["epi_7"], "evidence_count": 2}}},
        "history_versions": 1,
        "actions": ["tombstone", "delete", "cascade_update", "cascade_delete", "graph_cascade", "compact"],
        "extra": {
            "tombstones": 2,
            "graph": {
                "entities_deleted": 1,
                "relations_deleted": 0,
                "entities_updated": 0,
                "relations_updated": 0,
            },
            "fragments_rewritten": 2,
            "trace_scrub": {
                "deleted": {
                    "traces": 1,
                    "trace_candidates": 3,
                    "judgments": 0,
                    "feedback": 0,
                    "injections": 0,
                },
                "rewritten": True,
            },
        },
        "checks": [
            {"name": "no_row_in_any_data_file", "passed": True, "detail": "read 4 data files"},
            {"name": "vector_search_misses_it", "passed": True, "detail": "searched 1 vector"},
        ],
        "steps": ["planned", "deleted", "compacted", "reindexed", "scrubbed", "shredded", "checked"],
    },
    ensure_ascii=False,
    sort_keys=True,
)


def test_a_journal_in_todays_format_reads_into_fields_and_writes_back_byte_for_byte():
    journal = PurgeJournal.from_json(TODAY)
    assert journal.purge_id == "0f3c2a9d8e7b4c1a9f0e1d2c3b4a5968"
    assert journal.ids == ["epi_1", "sem_1"]
    assert journal.tombstones == [["epi_1", SHA], ["sem_1", "6" * 64]]
    assert journal.updates["sem_2"]["values"]["evidence_count"] == 2
    assert journal.extra["graph"]["entities_deleted"] == 1
    assert journal.checks[1]["name"] == "vector_search_misses_it"
    assert journal.to_json() == TODAY


def test_a_journal_that_lacks_the_fields_older_code_left_out_reads_with_their_defaults():
    old = json.loads(TODAY)
    for key in ("tombstones", "updates", "history_versions", "extra"):
        del old[key]
    journal = PurgeJournal.from_dict(old)
    assert (journal.tombstones, journal.updates, journal.history_versions, journal.extra) == ([], {}, 0, {})


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda j: j.update(format="memdeck.rescan-journal/1"), "not a memdeck purge journal"),
        (lambda j: j.pop("principal"), "incomplete or damaged"),
        (lambda j: j.update(tombstones=[["epi_1"]]), "incomplete or damaged"),
    ],
)
def test_a_damaged_journal_is_refused_with_a_clear_message(damage, message):
    obj = json.loads(TODAY)
    damage(obj)
    with pytest.raises(MemdeckError, match=message):
        PurgeJournal.from_json(json.dumps(obj))
    with pytest.raises(MemdeckError, match="not JSON"):
        PurgeJournal.from_json(TODAY[:-10])


def test_a_purge_resumed_from_a_journal_file_in_todays_format_signs_what_the_journal_records(store):
    directory = store.engine.layout.journal
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "purge-0f3c2a9d8e7b4c1a9f0e1d2c3b4a5968.json"
    path.write_text(TODAY, encoding="utf-8")

    run = Purge.load(store.engine, path)
    receipt = run.run()

    assert not path.exists()  # finished: the journal is gone
    assert verify_receipt(receipt) == []
    assert receipt["receipt_id"] == "0f3c2a9d8e7b4c1a9f0e1d2c3b4a5968"
    book = ReceiptBook(store.root)
    assert receipt["deleted"] == [
        {
            "id": "epi_1",
            "tier": "episodic",
            "content_sha256_salted": book.salted_hash(SHA),
            "created_at": "2026-10-01T08:00:00.000000Z",
        }
    ]
    assert [c["id"] for c in receipt["cascade"]] == ["sem_1", "ent_9"]
    assert receipt["resumed"] is True and receipt["tombstones"] == 2
    assert receipt["graph"]["entities_deleted"] == 1
    assert (receipt["history_versions"], receipt["cascade_deleted"], receipt["cascade_updated"]) == (1, 1, 1)
    assert [c["name"] for c in receipt["checks"]] == [
        "no_row_in_any_data_file",
        "vector_search_misses_it",
        "journal_secret_removed",
    ]
    assert receipt["outcome"] == "verified"
