"""A large partition's vectors projected to fewer dimensions: the vector channel's first pass.

An exact scan of a scope's vectors reads 1.5 KB a row: about 15 ms for 100k rows on this kind of machine
(0.67 ms for 10k), and memory-bound. Past ``MIN_ROWS`` rows a partition also keeps each row's unit vector
projected on the ``DIMS`` principal axes of a sample of its rows (a quarter of the bytes). A query
scores every row the recall may see in that space, keeps the best ``SHORTLIST * limit`` (and every row written since the
projection was made), and those are ranked exactly with the full float32 vectors. What can be missed is
a row among the ``limit`` nearest whose projected score is not among the shortlist's: on the packaged
model's embeddings of the LoCoMo turns, 96 dimensions and a shortlist of 10 times the limit kept
recall@10 at 1.000 and recall@40 at 0.9999 against the exact scan (bench/RESULTS.md). A filter that
keeps at most ``EXACT_ROWS`` rows is scanned exactly instead.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MIN_ROWS = (
    8_000  # partitions smaller than this are scanned exactly (under 0.6 ms); 10k rows: 0.33 ms not 0.67
)
DIMS = 96
SHORTLIST = 10  # times the channel's limit, ranked exactly
SAMPLE_ROWS = 25_000  # rows the axes are fitted on
EXACT_ROWS = 4_000  # a filter that keeps this few rows is scanned exactly (those rows alone)
REBUILD_SHARE = 0.1  # rows written since the projection, as a share of it, past which it is extended


def _unit(vectors: np.ndarray) -> np.ndarray:
    v = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    return v / np.where(norms > 0, norms, 1.0)


def _project(vectors: np.ndarray, mean: np.ndarray, axes: np.ndarray, chunk: int = 16_384) -> np.ndarray:
    from threadpoolctl import threadpool_limits

    out = np.empty((len(vectors), axes.shape[1]), dtype=np.float32)
    # One BLAS thread: OpenBLAS's threads wait on each other on a busy machine.
    with threadpool_limits(1, user_api="blas"):
        for start in range(0, len(vectors), chunk):
            out[start : start + chunk] = (_unit(vectors[start : start + chunk]) - mean) @ axes
    return out


@dataclass
class Projection:
    """Rows ``[0, built)`` projected: ``rows[i] = (unit(v_i) - mean) @ axes``."""

    mean: np.ndarray  # (dim,)
    axes: np.ndarray  # (dim, DIMS)
    rows: np.ndarray  # (built, DIMS)

    @property
    def built(self) -> int:
        return len(self.rows)

    @classmethod
    def fit(cls, vectors: np.ndarray, seed: int = 0) -> Projection:
        """Axes from a fixed-seed sample (the same rows give the same projection), every row projected."""
        n = len(vectors)
        rng = np.random.default_rng(seed)
        sample = _unit(vectors[np.sort(rng.choice(n, min(n, SAMPLE_ROWS), replace=False))])
        mean = sample.mean(axis=0)
        centred = sample - mean
        _values, vecs = np.linalg.eigh((centred.T @ centred).astype(np.float64))
        axes = np.ascontiguousarray(vecs[:, ::-1][:, : min(DIMS, vectors.shape[1])], dtype=np.float32)
        return cls(mean.astype(np.float32), axes, _project(vectors, mean, axes))

    def extended(self, vectors: np.ndarray) -> Projection:
        """This projection with rows ``[built, len(vectors))`` added (axes kept)."""
        more = _project(vectors[self.built :], self.mean, self.axes)
        return Projection(self.mean, self.axes, np.concatenate([self.rows, more]))

    def stale(self, rows: int) -> bool:
        return rows - self.built > max(1_000, int(REBUILD_SHARE * self.built))

    def shortlist(self, qvec: np.ndarray, mask: np.ndarray, limit: int) -> np.ndarray:
        """Rows of ``mask`` to rank exactly, ascending: the ``SHORTLIST * limit`` best by projected score,
        and every row past ``built``."""
        q = np.asarray(qvec, dtype=np.float32)
        scores = np.einsum(
            "ij,j->i", self.rows, self.axes.T @ q
        )  # the mean's share is the same for every row
        seen = mask[: self.built]
        scores[~seen] = -np.inf
        want = SHORTLIST * limit
        if want < self.built:
            best = np.argpartition(-scores, want - 1)[:want]
            best = best[seen[best]]
        else:
            best = np.flatnonzero(seen)
        tail = np.arange(self.built, len(mask))
        return np.sort(np.concatenate([best, tail[mask[self.built :]]]))
