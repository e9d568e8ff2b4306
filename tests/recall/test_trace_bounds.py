"""A recall that scores every row logs a bounded trace: its results, every memory a search channel returned,
then the best others by score up to ``[traces] max_candidates``; a replay of it under the recall's own
weights returns what the recall returned."""

from __future__ import annotations

import pytest

from memdeck.core.recall import traces
from memdeck.core.store import Store
from memdeck.core.tuning.replay import replay_trace

WORDS = ["garden", "tomatoes", "invoice", "train", "piano", "bread", "kettle", "river", "lamp", "chess"]


def _seed(store: Store, n: int = 300) -> None:
    store.remember_many(
        [
            {
                "text": f"note {i}: the {WORDS[i % 10]} and the {WORDS[(i * 7) % 10]} of day {i}",
                "tier": "semantic",
                "principal": "alice",
            }
            for i in range(n)
        ]
    )


@pytest.mark.parametrize("limit", [100, 40])
def test_a_recall_over_every_row_logs_results_channel_hits_and_the_best_others(
    open_store, limit: int
) -> None:
    store = open_store(traces={"max_candidates": limit})
    _seed(store)
    result = store.recall("tomatoes from the garden", principal="alice", k=5)
    assert len(result.candidates) == 300  # every row scored
    traces.flush(store.engine)
    logged = traces.get_trace(store.engine, result.trace_id).candidates
    ids = {c.memory_id for c in logged}
    cset = result.candidates
    hits = {cset.ids[i] for i in range(len(cset)) if (cset.columns.ranks[:, i] != 0).any()}
    assert {s.memory.id for s in result.items} <= ids
    assert hits <= ids  # every channel hit, even past the limit
    assert len(ids) == max(limit, len(hits | {s.memory.id for s in result.items}))
    # the others logged are the best by score among those not logged for another reason
    total, _ = cset.scores(result.profile)
    score = dict(zip(cset.ids, total.tolist(), strict=True))
    others_in = [score[m] for m in ids - hits]
    others_out = [score[m] for m in set(cset.ids) - ids]
    assert others_out and min(others_in, default=1.0) >= max(others_out)
    assert replay_trace(traces.get_trace(store.engine, result.trace_id), result.profile).after == [
        s.memory.id for s in result.items
    ]


def test_zero_logs_every_candidate(open_store) -> None:
    store = open_store(traces={"max_candidates": 0})
    _seed(store, 150)
    result = store.recall("tomatoes from the garden", principal="alice", k=5)
    traces.flush(store.engine)
    assert len(traces.get_trace(store.engine, result.trace_id).candidates) == len(result.candidates) == 150
