"""A fake embedder that counts its calls, for tests of how often something embeds (not of what vectors mean)."""

from __future__ import annotations

import numpy as np


class CountingEmbed:
    """Random 8-dimension vectors, seeded by the call's number; ``calls`` holds the size of every batch."""

    def __init__(self) -> None:
        self.calls: list[int] = []

    def __call__(self, texts: list[str]) -> np.ndarray:
        self.calls.append(len(texts))
        return np.random.default_rng(len(self.calls)).normal(size=(len(texts), 8)).astype(np.float32)
