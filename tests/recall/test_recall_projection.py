"""The vector channel's first pass over a large partition (core/recall/projection.py): a shortlist in a
projected space, ranked exactly; rows the recall may not see never in it; rows written since included."""

from __future__ import annotations

import numpy as np
import pytest

from memdeck.core.recall import projection
from memdeck.core.recall.index import recall_index
from memdeck.core.records import MemoryInput
from memdeck.core.store import Store


def _clustered(n: int, dim: int = 384, clusters: int = 60, seed: int = 3) -> np.ndarray:
    """Vectors around a few dozen directions, as sentence embeddings of varied text are."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(clusters, dim))
    rows = centres[rng.integers(0, clusters, n)] + rng.normal(scale=0.6, size=(n, dim))
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def _exact(vectors: np.ndarray, q: np.ndarray, mask: np.ndarray, k: int) -> list[int]:
    rows = np.flatnonzero(mask)
    sims = vectors[rows] @ q
    return rows[np.lexsort((rows, -sims))][:k].tolist()


def _ranked(vectors: np.ndarray, q: np.ndarray, rows: np.ndarray, k: int) -> list[int]:
    sims = vectors[rows] @ q
    return rows[np.lexsort((rows, -sims))][:k].tolist()


def test_the_shortlist_holds_the_exact_nearest_rows() -> None:
    vectors = _clustered(6_000)
    proj = projection.Projection.fit(vectors)
    rng = np.random.default_rng(9)
    mask = rng.random(len(vectors)) < 0.8
    found = []
    for i in rng.choice(len(vectors), 100, replace=False):
        q = vectors[i] + rng.normal(scale=0.3, size=vectors.shape[1]).astype(np.float32)
        short = proj.shortlist(q, mask, 40)
        assert mask[short].all()  # a row the recall may not see is never a candidate
        assert len(short) <= projection.SHORTLIST * 40
        exact = _exact(vectors, q, mask, 10)
        found.append(len(set(exact) & set(_ranked(vectors, q, short, 10))) / 10)
    assert np.mean(found) >= 0.99


def test_rows_written_after_the_projection_are_always_ranked() -> None:
    vectors = _clustered(3_000)
    proj = projection.Projection.fit(vectors[:2_000])
    mask = np.ones(len(vectors), dtype=bool)
    mask[2_500] = False
    q = vectors[2_100]
    short = proj.shortlist(q, mask, 10)
    assert set(range(2_000, 3_000)) - {2_500} <= set(short.tolist())
    assert 2_500 not in short
    assert _ranked(vectors, q, short, 1) == [2_100]
    assert proj.stale(3_000) is False and proj.stale(3_100) is True
    extended = proj.extended(vectors)
    assert extended.built == 3_000 and np.array_equal(extended.axes, proj.axes)


def test_the_same_rows_give_the_same_projection() -> None:
    vectors = _clustered(4_000)
    a, b = projection.Projection.fit(vectors), projection.Projection.fit(vectors.copy())
    assert np.array_equal(a.rows, b.rows)


@pytest.fixture
def small_projection(monkeypatch: pytest.MonkeyPatch) -> None:
    """Partitions of a few hundred rows take the projected path, over every dimension (the projection is
    then a rotation: its ranking must be the exact one, which tests the plumbing, not the approximation)."""
    monkeypatch.setattr(projection, "MIN_ROWS", 100)
    monkeypatch.setattr(projection, "EXACT_ROWS", 10)
    monkeypatch.setattr(projection, "SHORTLIST", 2)
    monkeypatch.setattr(projection, "DIMS", 10_000)


def test_a_large_partition_recalls_as_an_exact_scan(
    store: Store, small_projection: None, monkeypatch
) -> None:
    texts = [f"note {i} about topic {i % 17} and thing {i % 5}" for i in range(400)]
    store.remember_many([MemoryInput(text=t, tier="semantic", principal="ann", force=True) for t in texts])
    store.remember_many(
        [MemoryInput(text=t, tier="semantic", principal="bob", force=True) for t in texts[:50]]
    )
    first = store.recall("topic 3 and thing 2", principal="ann", k=10, record_access=False, trace=False)
    (part,) = [p for (tier, _), p in recall_index(store.engine).partitions.items() if tier == "semantic"]
    assert part.projection is not None and part.projection.built == 400
    # written after the projection was made: ranked too, and found
    store.remember("the zebra crossing by the school was repainted", tier="semantic", principal="ann")
    after = store.recall(
        "zebra crossing by the school", principal="ann", k=10, record_access=False, trace=False
    )
    assert after.items[0].memory.text == "the zebra crossing by the school was repainted"
    assert after.items[0].ranks["vector"] == 1
    again = store.recall("topic 3 and thing 2", principal="ann", k=10, record_access=False, trace=False)
    assert all(i.memory.principal == "ann" for i in again.items)
    # the same recall with the projection switched off ranks the same memories in the same order
    monkeypatch.setattr(projection, "MIN_ROWS", 10**9)
    exact = store.recall("topic 3 and thing 2", principal="ann", k=10, record_access=False, trace=False)
    assert [i.memory.id for i in exact.items] == [i.memory.id for i in again.items]
    assert [i.memory.id for i in exact.items][:5] == [i.memory.id for i in first.items][:5]
