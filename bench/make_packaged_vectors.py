"""Embed the shipped labelled texts with the packaged model and write their vectors as package data.

    python bench/make_packaged_vectors.py

Run after core/data/memtypes_examples.json or core/data/kind_names.json changes: memdeck.core.memtypes and
memdeck.core.graph.memory.kinds read the packaged model's vectors of them from the .npy beside each (float16)
instead of embedding them at the first write.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from memdeck.core.config import EmbeddingSettings
from memdeck.core.embed import make_embedder
from memdeck.core.graph.memory.kinds import known_names
from memdeck.core.memtypes import example_texts, packaged_model

DATA = Path(__file__).resolve().parent.parent / "core" / "data"


def main() -> None:
    embedder = make_embedder(EmbeddingSettings())
    assert embedder.name == packaged_model(), (embedder.name, packaged_model())
    for name, texts in (
        ("memtypes_examples.npy", [text for _type, text in example_texts()]),
        ("kind_names.npy", [n for _kind, n in known_names()]),
    ):
        vectors = embedder.encode(texts)
        np.save(DATA / name, np.asarray(vectors, dtype=np.float16))
        print(f"wrote {DATA / name} ({vectors.shape[0]} x {vectors.shape[1]})")


if __name__ == "__main__":
    main()
