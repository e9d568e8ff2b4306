"""The kind of a bare name, from the embedding model, when nothing in the text says what it is.

The extractor (:mod:`memdeck.core.graph.extract`) reads kinds from the text: a suffix ("Ltd", "Street"), a
preposition ("in Lisbon"), a relation ("works at Google"). A bare name with no cue ("Lufthansa", "Madrid")
gets its default, person, and is marked ``guessed``. When the graph indexes it, the name's own embedding (the
one entity resolution computes anyway) is scored against each kind: ``PHRASE_WEIGHT`` times its cosine to
the nearest of a few phrases per kind ("a city", "a software tool") plus the rest times its mean cosine to
the :data:`NEAREST` nearest of the kind's known names (core/data/kind_names.json: first names of many
origins, cities and countries, companies and institutions, software and devices; their vectors are shipped
for the packaged model and embedded once per process for another). A guessed person becomes a place,
organisation or product only when that kind beats person by :data:`MARGIN`. A kind read only from "at X"
(organisation) or "from X" (place), prepositions that come before both, becomes the other of the two (or,
after "from", a product: "moved from Slack to Discord") when that beats it by :data:`PAIR_MARGIN`.

Measured with all-MiniLM-L6-v2 on tests/data/graph_extraction_gold.jsonl (bench/bench_graph_extract.py,
bench/RESULTS-graph-extract.md): the settings were chosen on the splits other than heldout-kinds3, each
scored with the names of the other splits only; heldout-kinds3 was scored once at the end, and none of its
names is among the known names.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from memdeck.core import packaged

MARGIN = 0.05  # by how much another kind's score must beat person's to replace a guessed person
# A place read from "from X" or an organisation from "at X" becomes the other of the two when that beats it
# by this much.
PAIR_MARGIN = 0.05
SAME_NAME = 0.995  # cosine at which a name is a known name itself (float16 vectors shipped: not exactly 1)
PHRASE_WEIGHT = 0.3  # the phrases' share of a kind's score; the known names' is the rest
NEAREST = 5  # how many of a kind's known names a name is compared with
# What a kind read only from a preposition may become instead.
_PAIRED = {"place": ("organisation", "product"), "organisation": ("place",)}
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
_NAMES = "kind_names"  # core/data/: the names (.json) and the packaged model's vectors of them (.npy)


@dataclass(frozen=True)
class KindPrototypes:
    """Unit vectors of each kind's phrases and known names under one model."""

    phrases: dict[str, np.ndarray]
    names: dict[str, np.ndarray]
    name_texts: dict[str, tuple[str, ...]]

    def without(self, names: set[str]) -> KindPrototypes:
        """The same less some known names (by their text): a labelled set is never judged by its own names."""
        keep = {k: [i for i, n in enumerate(self.name_texts[k]) if n not in names] for k in _KINDS}
        return KindPrototypes(
            self.phrases,
            {k: self.names[k][keep[k]] for k in _KINDS},
            {k: tuple(self.name_texts[k][i] for i in keep[k]) for k in _KINDS},
        )

    def known(self, unit: np.ndarray) -> str | None:
        """The kind of a known name this vector is (the same text embeds to the same vector), if any."""
        for k in _KINDS:
            if self.names[k].shape[0] and float((self.names[k] @ unit).max()) >= SAME_NAME:
                return k
        return None

    def scores(self, unit: np.ndarray) -> dict[str, float]:
        out = {}
        for k in _KINDS:
            phrase = float((self.phrases[k] @ unit).max())
            sims = self.names[k] @ unit
            if sims.shape[0] == 0:
                out[k] = phrase
                continue
            n = min(NEAREST, sims.shape[0])
            near = float(np.partition(sims, sims.shape[0] - n)[-n:].mean())
            out[k] = PHRASE_WEIGHT * phrase + (1 - PHRASE_WEIGHT) * near
        return out


def known_names() -> list[tuple[str, str]]:
    """The shipped names of known kind as (kind, name)."""
    return packaged.labelled(_NAMES, "names")


def _unit(vectors: np.ndarray) -> np.ndarray:
    v = np.asarray(vectors, dtype=np.float32)
    return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)


_cache: dict[str, KindPrototypes] = {}
_lock = threading.Lock()


def prototypes(model: str, embed: Callable[[list[str]], np.ndarray]) -> KindPrototypes:
    """The phrases' and known names' unit vectors for a model, embedded once per process (the names' are
    shipped for the packaged model)."""
    with _lock:
        found = _cache.get(model)
        if found is not None:
            return found
        texts = [t for kind in _KINDS for t in PROTOTYPES[kind]]
        phrase_vectors = _unit(embed(texts))
        phrases, at = {}, 0
        for kind in _KINDS:
            phrases[kind] = phrase_vectors[at : at + len(PROTOTYPES[kind])]
            at += len(PROTOTYPES[kind])
        named = known_names()
        name_vectors = packaged.vectors(_NAMES, model, [n for _k, n in named], embed)
        assert name_vectors is not None  # an embed was given
        name_vectors = _unit(name_vectors)
        kinds = np.array([k for k, _n in named])
        found = KindPrototypes(
            phrases,
            {k: name_vectors[kinds == k] for k in _KINDS},
            {k: tuple(n for kk, n in named if kk == k) for k in _KINDS},
        )
        _cache[model] = found
        return found


def refine(kind: str, vector: np.ndarray, protos: KindPrototypes) -> str:
    """A guessed kind from its name's vector (see the module docstring); other kinds unchanged."""
    if kind != "person" and kind not in _PAIRED:
        return kind
    v = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(v))
    if norm == 0.0 or v.shape[0] != protos.phrases["person"].shape[1]:
        return kind
    unit = v / norm
    known = protos.known(unit)
    if known is not None:
        return known  # the name is one the package knows (its own vector): its kind, whatever the cue said
    scores = protos.scores(unit)
    if kind in _PAIRED:
        other = max(_PAIRED[kind], key=lambda k: scores[k])
        return other if scores[other] - scores[kind] >= PAIR_MARGIN else kind
    best = max(_KINDS, key=lambda k: scores[k])
    return best if best != "person" and scores[best] - scores["person"] >= MARGIN else kind


def refine_all(
    kinds: Sequence[str],
    vectors: np.ndarray,
    model: str,
    embed: Callable[[list[str]], np.ndarray],
    protos: KindPrototypes | None = None,
) -> list[str]:
    """:func:`refine` for many names at once (prototypes embedded only when a guessed person is among them)."""
    if not any(k == "person" or k in _PAIRED for k in kinds):
        return list(kinds)
    found = protos if protos is not None else prototypes(model, embed)
    return [refine(k, v, found) for k, v in zip(kinds, vectors, strict=True)]
