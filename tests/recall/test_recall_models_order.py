"""Scoring every row a recall may see must not change what it returns: the partial sort of the ranking
and the decay shortcut give exactly what sorting every candidate and decaying every row gave."""

from __future__ import annotations

import numpy as np

from memdeck.core.recall.scoring import decayed, top_order


def _full_sort(total: np.ndarray, similarity: np.ndarray, kept: np.ndarray, k: int | None) -> np.ndarray:
    order = np.lexsort((np.arange(total.size), -similarity, -total))
    order = order[kept[order]]
    return order if k is None else order[:k]


def test_the_top_k_is_the_full_sorts_prefix_ties_included() -> None:
    rng = np.random.default_rng(7)
    for _ in range(2000):
        n = int(rng.integers(1, 1500))
        k = int(rng.integers(1, 30))
        # Few distinct values, so many candidates tie on score and on similarity.
        total = np.round(rng.random(n), int(rng.integers(1, 3)))
        similarity = np.round(rng.random(n), int(rng.integers(1, 3)))
        kept = rng.random(n) > rng.random()
        assert np.array_equal(top_order(total, similarity, kept, k), _full_sort(total, similarity, kept, k))
        assert np.array_equal(
            top_order(total, similarity, kept, None), _full_sort(total, similarity, kept, None)
        )


def test_a_tie_at_the_kth_place_is_broken_by_similarity_then_position() -> None:
    total = np.array([0.5] * 200 + [0.9])
    similarity = np.zeros(201)
    similarity[150] = 0.7
    got = top_order(total, similarity, np.ones(201, dtype=bool), 3).tolist()
    assert got == [200, 150, 0]


def test_decay_is_unchanged_where_no_memory_was_recalled_and_exact_elsewhere() -> None:
    rng = np.random.default_rng(3)
    importance = rng.random(500)
    idle = rng.random(500) * 400
    idle[rng.random(500) < 0.5] = np.nan
    expected = importance * np.power(0.5, np.maximum(np.nan_to_num(idle, nan=0.0), 0.0) / 90.0)
    assert np.array_equal(decayed(importance, idle, 90.0), expected)
    never = np.full(500, np.nan)
    assert np.array_equal(decayed(importance, never, 90.0), importance)
    assert np.array_equal(decayed(importance, np.zeros(500), 90.0), importance)
