"""The keyword channel cannot leak across principals: another principal's rows do not move a score.

The full-text index's BM25 uses statistics over the whole table (every principal's rows); recall now
scores the channel with statistics from its own candidates, which are the recalling principal's rows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

ALICE = [
    "the quarterly report draft mentions the harbour project budget",
    "lunch with the harbour team went well",
    "the budget review is on Thursday",
]
BOB = [f"bob's note {i}: harbour harbour harbour logistics" for i in range(40)]
QUERY = "harbour budget"


def _alice_scores(
    open_store: Any, path: Path, embedder: Any, with_bob: bool, stats: str
) -> dict[str, tuple[float, float]]:
    store = open_store(path, embedder, recall={"keyword_statistics": stats})
    if with_bob:  # first, so the full-text index is built over Bob's rows too
        store.remember_many([{"text": t, "tier": "semantic", "principal": "bob", "force": True} for t in BOB])
    for text in ALICE:
        store.remember(text, tier="semantic", principal="alice", force=True)
    result = store.recall(QUERY, principal="alice", k=10, record_access=False, trace=False)
    return {
        i.memory.text: (round(i.channels["keyword"], 9), round(i.components["relevance"], 9))
        for i in result.items
    }


@pytest.mark.parametrize("stats", ["principal"])
def test_other_principals_rows_do_not_change_alices_scores(
    open_store: Any, tmp_path: Path, real_embedder: Any, stats: str
) -> None:
    alone = _alice_scores(open_store, tmp_path / "a", real_embedder, False, stats)
    crowded = _alice_scores(open_store, tmp_path / "b", real_embedder, True, stats)
    assert alone and set(alone) <= set(ALICE)
    assert crowded == alone


def test_index_statistics_would_leak(open_store: Any, tmp_path: Path, real_embedder: Any) -> None:
    """The behaviour the default replaced: with the index's statistics Bob's rows move Alice's scores."""
    alone = _alice_scores(open_store, tmp_path / "a", real_embedder, False, "index")
    crowded = _alice_scores(open_store, tmp_path / "b", real_embedder, True, "index")
    assert crowded != alone
