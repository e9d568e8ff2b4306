"""The trace log is judged as of the scrub: a question asked after the forget is the asker's own words, and a
question asked before it never comes back, whenever its trace is written."""

from __future__ import annotations

from datetime import datetime, timedelta

import duckdb

from memdeck.core.forget import forget
from memdeck.core.forget.needles import needles_of
from memdeck.core.forget.verify import Verifier
from memdeck.core.recall import traces
from memdeck.core.storage.logdb import connection, log_path

TEXT = "Marguerite keeps parcel 48213977 in locker XJ42Q at the Quenwood gym"
QUESTION = "where is the Quenwood gym locker XJ42Q"


def _queries(store) -> list[str]:
    with connection(log_path(store.engine)) as con:
        return [r[0] for r in con.execute("select query from traces").fetchall()]


def test_a_question_asked_between_the_scrub_and_the_check_is_not_residue(open_store, tmp_path):
    store = open_store(tmp_path / "s")
    m = store.remember(TEXT, tier="episodic", principal="alice").memory
    store.recall(QUESTION, principal="alice")  # before the forget: scrubbed
    asked = []

    def progress(message: str) -> None:
        if message == "checking that nothing remains":
            # After the scrub, before the check: the person asks again, in the words they remember.
            store.recall(QUESTION, principal="alice")
            traces.flush(store.engine)
            asked.append(message)

    receipt = forget(store.engine, [m.id], "asked", progress=progress)
    assert asked, "the purge never reached its check"
    assert receipt["outcome"] == "verified", [c for c in receipt["checks"] if not c["passed"]]
    assert receipt["trace_scrub"]["scrubbed_at"]
    # The question asked after the scrub stays: the log keeps what was asked after the forget.
    assert _queries(store) == [QUESTION]


def test_a_question_asked_before_the_scrub_and_written_after_it_is_dropped(open_store, tmp_path):
    store = open_store(tmp_path / "s")
    store.remember("Marguerite likes the sauna", tier="episodic", principal="alice")
    # Asked before the memory was written: no forgotten id in its trace, only its words and its time.
    before = store.recall(QUESTION, principal="alice")
    traces.flush(store.engine)
    m = store.remember(TEXT, tier="episodic", principal="alice").memory
    receipt = forget(store.engine, [m.id], "asked")
    assert receipt["outcome"] == "verified"
    assert _queries(store) == []
    # Another process's writer held this record when the scrub ran, and queues it only now.
    record = traces.trace_record(before, lambda q: store.engine.redact(q, "alice"))
    traces.writer(store.engine).submit(record)
    traces.flush(store.engine)
    assert _queries(store) == []
    # A question asked now is written as usual.
    store.recall("sauna", principal="alice")
    traces.flush(store.engine)
    assert _queries(store) == ["sauna"]


def _journal(store, scrubbed_at: str | None) -> tuple[dict, dict]:
    m = store.remember(TEXT, tier="episodic", principal="alice").memory
    stored = m.text
    receipt = forget(store.engine, [m.id], "asked")
    assert receipt["outcome"] == "verified"
    journal = {
        "principal": "alice",
        "whole_principal": False,
        "deleted": [{"id": m.id}],
        "cascade_delete_ids": [],
        "tiers": {m.id: "episodic"},
        "actions": [],
        "extra": {"trace_scrub": {"deleted": {}, "rewritten": True, "scrubbed_at": scrubbed_at}},
    }
    texts, tokens, words = needles_of([stored])
    return journal, {"texts": texts, "tokens": tokens, "words": words, "vectors": {}}


def _plant(store, recalled_at) -> None:
    store.close()
    con = duckdb.connect(str(store.root / "analytics.duckdb"))
    con.execute(
        "insert into traces (trace_id, recalled_at, principals, agent, query, source, tiers, k, profile_name, "
        "profile, keyword_only, returned) values ('t-planted', ?, ['alice'], 'user', ?, 'api', ['episodic'], 5, "
        "'default', '{}', false, [])",
        [recalled_at, QUESTION],
    )
    con.close()


def test_a_question_recorded_before_the_scrub_is_residue_and_one_after_is_not(open_store, tmp_path):
    for offset, residue in ((timedelta(seconds=-1), True), (timedelta(seconds=1), False)):
        path = tmp_path / f"s{offset.total_seconds():+.0f}"
        store = open_store(path)
        store.recall("warm up", principal="alice")

        at = datetime(2026, 1, 2, 3, 4, 5)
        journal, secret = _journal(store, at.isoformat())
        _plant(store, at + offset)
        store = open_store(path)
        failed = {c["name"] for c in Verifier(store.engine, journal, secret).run() if not c["passed"]}
        assert failed == ({"analytics_clean"} if residue else set()), (offset, failed)
    # Without a recorded scrub time (a receipt from before it was kept), every row is judged.
    store = open_store(tmp_path / "old")
    store.recall("warm up", principal="alice")
    journal, secret = _journal(store, None)
    del journal["extra"]
    _plant(store, datetime(2100, 1, 1))
    store = open_store(tmp_path / "old")
    failed = {c["name"] for c in Verifier(store.engine, journal, secret).run() if not c["passed"]}
    assert failed == {"analytics_clean"}
