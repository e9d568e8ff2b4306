"""The kind of a bare name, from the embedding model, when nothing in the text says what it is.

The extractor (:mod:`memdeck.core.graph.extract`) reads kinds from the text: a suffix ("Ltd", "Street"), a
preposition ("in Lisbon"), a relation ("works at Google"). A bare name with no cue ("Lufthansa", "Madrid")
gets its default, person, and is marked ``guessed``. When the graph indexes it, the name's own embedding (the
one entity resolution computes anyway) is compared with a few phrases per kind; a guessed person becomes a
place, organisation or product only when that kind beats person by :data:`MARGIN`. A kind read only from
"at X" (organisation) or "from X" (place), prepositions that come before both, becomes the other of the two
when that beats it by :data:`PAIR_MARGIN`.

Measured with all-MiniLM-L6-v2 on tests/data/graph_extraction_gold.jsonl (bench/bench_graph_extract.py,
bench/RESULTS-graph-extract.md): the margin was chosen on the dev split alone (0.10: the smallest with no
loss on dev), then scored once on the held-out splits.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

MARGIN = 0.10  # cosine by which another kind must beat person to replace a guessed person
# A place read from "from X" or an organisation from "at X" becomes the other of the two when that beats it
# by this much (chosen on the dev split).
PAIR_MARGIN = 0.10
_PAIRED = {"place": "organisation", "organisation": "place"}
PROTOTYPES: dict[str, tuple[str, ...]] = {
    "person": ("a person", "a man's first name", "a woman's first name", "a friend", "a colleague"),
    "place": ("a city", "a country", "a town", "a region", "a capital city"),
    "organisation": ("a company", "a sports team", "a university", "an airline", "a bank", "a charity"),
    "product": (
        "a software tool",
        "a smartphone",
        "a device",
        "an app",
        "a programming language",
        "a database",
    ),
}
_KINDS = tuple(PROTOTYPES)
_cache: dict[str, dict[str, np.ndarray]] = {}


def prototypes(model: str, embed: Callable[[list[str]], np.ndarray]) -> dict[str, np.ndarray]:
    """The prototype phrases' unit vectors for a model, embedded once per process."""
    found = _cache.get(model)
    if found is None:
        texts = [t for kind in _KINDS for t in PROTOTYPES[kind]]
        vectors = np.asarray(embed(texts), dtype=np.float32)
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        found, at = {}, 0
        for kind in _KINDS:
            found[kind] = vectors[at : at + len(PROTOTYPES[kind])]
            at += len(PROTOTYPES[kind])
        _cache[model] = found
    return found


def refine(kind: str, vector: np.ndarray, protos: dict[str, np.ndarray]) -> str:
    """A guessed kind from its name's vector (see the module docstring); other kinds unchanged."""
    if kind != "person" and kind not in _PAIRED:
        return kind
    v = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(v))
    if norm == 0.0 or v.shape[0] != protos["person"].shape[1]:
        return kind
    v = v / norm
    scores = {k: float((protos[k] @ v).max()) for k in _KINDS}
    if kind in _PAIRED:
        other = _PAIRED[kind]
        return other if scores[other] - scores[kind] >= PAIR_MARGIN else kind
    best = max(_KINDS, key=lambda k: scores[k])
    return best if best != "person" and scores[best] - scores["person"] >= MARGIN else kind


def refine_all(
    kinds: Sequence[str], vectors: np.ndarray, model: str, embed: Callable[[list[str]], np.ndarray]
) -> list[str]:
    """:func:`refine` for many names at once (prototypes embedded only when a guessed person is among them)."""
    if not any(k == "person" or k in _PAIRED for k in kinds):
        return list(kinds)
    protos = prototypes(model, embed)
    return [refine(k, v, protos) for k, v in zip(kinds, vectors, strict=True)]
