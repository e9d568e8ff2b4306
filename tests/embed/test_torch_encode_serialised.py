"""Torch encodes in one process run one at a time: each already uses every core, and the graph indexer's
thread embeds names while a write embeds its batch."""

from __future__ import annotations

import threading
import time

import numpy as np

from memdeck.core.embed import SentenceTransformerEmbedder


class _CountingModel:
    """Stands in for a loaded SentenceTransformer and records how many encodes overlap."""

    def __init__(self) -> None:
        self.inside = 0
        self.most = 0
        self.calls = 0
        self._lock = threading.Lock()

    def get_embedding_dimension(self) -> int:
        return 4

    def encode(self, texts: list[str], **_: object) -> np.ndarray:
        with self._lock:
            self.inside += 1
            self.calls += 1
            self.most = max(self.most, self.inside)
        time.sleep(0.02)
        with self._lock:
            self.inside -= 1
        return np.ones((len(texts), 4), dtype=np.float32) / 2


def test_encodes_from_several_threads_never_overlap(monkeypatch):
    model = _CountingModel()
    monkeypatch.setitem(SentenceTransformerEmbedder._cache, ("stand-in/counting", "cpu"), model)
    # Two embedders of the same model, as a store's writer and its graph indexer hold.
    embedders = [
        SentenceTransformerEmbedder("stand-in/counting"),
        SentenceTransformerEmbedder("stand-in/counting"),
    ]
    results: list[np.ndarray] = []
    start = threading.Barrier(6)

    def work(embedder: SentenceTransformerEmbedder) -> None:
        start.wait()
        for _ in range(5):
            results.append(embedder.encode(["a name", "another"]))

    threads = [threading.Thread(target=work, args=(embedders[n % 2],)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)

    assert model.calls == 30 and len(results) == 30
    assert all(r.shape == (2, 4) for r in results)
    assert model.most == 1
