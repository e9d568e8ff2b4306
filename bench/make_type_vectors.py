"""Embed the shipped memory-type examples with the packaged model and write their vectors as package data.

    python bench/make_type_vectors.py

Run after core/data/memtypes_examples.json changes: memdeck.core.memtypes reads the vectors of the packaged
model from core/data/memtypes_examples.npy (float16) instead of embedding the examples at the first write.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from memdeck.core.config import EmbeddingSettings
from memdeck.core.embed import make_embedder
from memdeck.core.memtypes import example_texts, packaged_model

OUT = Path(__file__).resolve().parent.parent / "core" / "data" / "memtypes_examples.npy"


def main() -> None:
    embedder = make_embedder(EmbeddingSettings())
    assert embedder.name == packaged_model(), (embedder.name, packaged_model())
    vectors = embedder.encode([text for _type, text in example_texts()])
    np.save(OUT, np.asarray(vectors, dtype=np.float16))
    print(f"wrote {OUT} ({vectors.shape[0]} x {vectors.shape[1]})")


if __name__ == "__main__":
    main()
