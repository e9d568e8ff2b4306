"""The kind of a guessed name, from the embedding model: its name, the words around it, and a learned reading.

The extractor (:mod:`memdeck.core.graph.extract`) reads kinds from the text: a suffix ("Ltd", "Street"), a
preposition ("in Lisbon"), a relation ("works at Google"). A bare name with no cue ("Lufthansa", "Madrid")
gets its default, person (a place when the gazetteer, core/data/place_names.txt, holds it), and is marked
``guessed``; so is a kind read only from "at X" (organisation) or "from X", "in X", "into X", "through X"
(place), prepositions that come before both or before tools, unless the gazetteer knows the place. When the
graph indexes a guessed name:

* its name: the name's own embedding (the one entity resolution computes anyway) is scored against each kind:
  ``PHRASE_WEIGHT`` times its cosine to the nearest of a few phrases per kind ("a city", "a software tool")
  plus the rest times its mean cosine to the :data:`NEAREST` nearest of the kind's known names
  (core/data/kind_names.json: first names of many origins, cities and countries, companies and institutions,
  software and devices; their vectors are shipped for the packaged model and embedded once per process for
  another). A known name is its own kind.
* its context (:func:`memdeck.core.graph.extract.name_contexts`, passed by the graph for the name's first
  mention in an indexing batch): its sentence with the name masked is embedded (one batch for all the
  batch's guessed names that are not known names) and compared with :data:`CONTEXTS`, a few typical sentences
  per kind; each kind's score gains :data:`CONTEXT_WEIGHT` times its best cosine less the mean over the kinds.
  The words next to the name rule kinds out ("the X office": not a person; "X said", "ask X": not a place,
  even for a known place name), and names joined by "and", "or", commas or "from X to Y" are judged together
  (the kind the text states for one of them, else the kind of their mean scores).

The margins: a guessed person becomes a place, organisation or product when that kind beats person by
:data:`MARGIN`; a kind read from "at" or "from" the other of place and organisation (or, after "from", a
product) when that beats it by :data:`PAIR_MARGIN`; a kind the context rules out gives way to the best kind
left. A kind the text states is never second-guessed.

The learned reading (the sixth revision; :func:`reader`): for the packaged model, a multinomial logistic
regression over :func:`features` (the scores above and, finer, the masked sentence's cosine to each typical
sentence, the name's cosines to its nearest known names and to each phrase, the guessed kind, the kinds the
context rules out), trained by bench/train_kinds.py on the development splits and shipped in
core/data/kind_weights.json. A guessed name takes the likeliest kind the context leaves when its probability is
at least :data:`CONFIDENCE` and the margins give the same kind; otherwise it is "other" (a kind not known),
which a kind stated by a later mention or by a caller replaces (:meth:`GraphBatch.resolve
<memdeck.core.graph.memory.write.GraphBatch.resolve>`). Precision first: a wrong kind is worse than none.
Another model, or weights trained on other lists (a :func:`fingerprint` of the phrases, sentences and names
differs), uses the margins alone.

Measured with all-MiniLM-L6-v2 on tests/data/graph_extraction_gold.jsonl (bench/bench_graph_extract.py,
bench/RESULTS-graph-extract.md), each split scored without its own names among the known names. The context
was built on the splits before heldout-kinds5: of their 423 guessed names with a gold kind, 341 right from the
name alone, 357 with the context. heldout-kinds5 (55 sentences, none of its names in the lists or elsewhere in
the sample) was written before this code and scored once before it and once after: kind accuracy 0.675 from
the names alone, 0.711 with their context (0.632 from the text alone). The fifth revision (the gazetteer,
"in" and "through" as loose cues, five typical sentences of what companies do for customers) was scored on
heldout-kinds6 (60 sentences written by another hand before it): 0.784 before, 0.799 after (0.691 from the
text alone, 0.662 before). The sixth revision was scored on heldout-kinds7 (70 sentences, 170 entities,
written by another hand before it): the kinds' precision 0.818 with the margins alone, giving a kind to 99 % of
the matched entities, and 0.949 with the learned reading, giving one to 83 % (accuracy 0.813 and 0.783).
Cost:
one sentence embedding per guessed name that is not a known name: 6.7 ms per guessed name on the sample,
against 10.8 ms for embedding the names themselves (a shared, loaded machine).
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import resources

import numpy as np

from memdeck.core import packaged
from memdeck.core.graph.extract import NameContext

MARGIN = 0.05  # by how much another kind's score must beat person's to replace a guessed person
# A place read from "from X" or an organisation from "at X" becomes the other of the two when that beats it
# by this much.
PAIR_MARGIN = 0.05
SAME_NAME = 0.995  # cosine at which a name is a known name itself (float16 vectors shipped: not exactly 1)
PHRASE_WEIGHT = 0.3  # the phrases' share of a kind's score; the known names' is the rest
NEAREST = 5  # how many of a kind's known names a name is compared with
# The share of the name's context in a kind's score: its masked sentence's cosine to the nearest of the kind's
# typical sentences (CONTEXTS), less the mean of that over the kinds.
CONTEXT_WEIGHT = 0.2
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
# Short typical sentences about each kind, the name written as extract.MASK: a guessed name's sentence, the
# name masked, is compared with them. General statements, written for this and not taken from the labelled
# sample (bench/RESULTS-graph-extract.md).
CONTEXTS: dict[str, tuple[str, ...]] = {
    "person": (
        "X called me last night to catch up.",
        "X is an old friend of mine from university.",
        "X and her husband have two young kids.",
        "I had coffee with X and we talked for hours.",
        "X is on parental leave until the autumn.",
        "X got promoted to senior engineer.",
        "X's birthday party is on the weekend.",
        "X told me he is feeling better now.",
        "X is my manager and reviews my code.",
        "X is allergic to nuts.",
    ),
    "place": (
        "We spent two weeks in X on holiday.",
        "X is hot and humid in August.",
        "X is a small coastal town with a harbour.",
        "The train to X takes three hours.",
        "The old town of X is full of tourists.",
        "X has great beaches and cheap hotels.",
        "We rented an apartment in the centre of X.",
        "X is the capital and largest city of the country.",
        "It snows a lot in X.",
        "Everyone should visit X at least once.",
    ),
    "organisation": (
        "X announced record profits this quarter.",
        "X is hiring engineers for its new office.",
        "X is a multinational company with thousands of employees.",
        "X's shares fell after the annual report.",
        "The charity X raises money for children's hospitals.",
        "X is one of the biggest banks in Europe.",
        "X merged with a competitor last year.",
        "X's customer service never answers the phone.",
        "X is a supermarket chain.",
        "The airline X added new routes.",
        "X delivered my parcel to the wrong address.",
        "X cancelled my flight and offered a refund.",
        "X sent an engineer to fix the boiler.",
        "X approved our mortgage application.",
        "X laid off a tenth of its staff.",
    ),
    "product": (
        "X freezes every time I open a large file.",
        "I installed X on my phone.",
        "We store all our documents in X.",
        "The new version of X is much faster.",
        "X has a plugin for that.",
        "Log in to X and download the report.",
        "The team tracks tasks in X.",
        "X runs on Linux, Windows and macOS.",
        "X is a free, open-source database.",
        "X's dark mode is easier on the eyes.",
    ),
}
_KINDS = tuple(PROTOTYPES)
_NAMES = "kind_names"  # core/data/: the names (.json) and the packaged model's vectors of them (.npy)
_WEIGHTS = "kind_weights.json"  # core/data/: the learned reading's weights, per model (bench/train_kinds.py)
# The learned reading gives a guessed name its likeliest kind when that kind's probability is at least this and
# the margins give it too, else "other" (a kind not known), which a kind stated by a later mention or by a
# caller replaces: a wrong kind is worse than none (bench/RESULTS-kinds-training.md).
CONFIDENCE = 0.6
_PRIOR = ("person", "place", "organisation")  # the kinds the extractor guesses, one-hot among the features
_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class KindPrototypes:
    """Unit vectors of each kind's phrases, known names and typical sentences under one model."""

    phrases: dict[str, np.ndarray]
    names: dict[str, np.ndarray]
    name_texts: dict[str, tuple[str, ...]]
    contexts: dict[str, np.ndarray] = field(default_factory=dict)

    def without(self, names: set[str]) -> KindPrototypes:
        """The same less some known names (by their text): a labelled set is never judged by its own names."""
        keep = {k: [i for i, n in enumerate(self.name_texts[k]) if n not in names] for k in _KINDS}
        return KindPrototypes(
            self.phrases,
            {k: self.names[k][keep[k]] for k in _KINDS},
            {k: tuple(self.name_texts[k][i] for i in keep[k]) for k in _KINDS},
            self.contexts,
        )

    def known(self, unit: np.ndarray) -> str | None:
        """The kind of a known name this vector is (the same text embeds to the same vector), if any."""
        for k in _KINDS:
            if self.names[k].shape[0] and float((self.names[k] @ unit).max()) >= SAME_NAME:
                return k
        return None

    def scores(self, unit: np.ndarray, context: np.ndarray | None = None) -> dict[str, float]:
        """Each kind's score for a name's unit vector and, if given, its masked sentence's unit vector."""
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
        if context is not None and self.contexts:
            fit = {k: float((self.contexts[k] @ context).max()) for k in _KINDS}
            mean = sum(fit.values()) / len(fit)
            out = {k: out[k] + CONTEXT_WEIGHT * (fit[k] - mean) for k in _KINDS}
        return out


def features(
    protos: KindPrototypes,
    unit: np.ndarray,
    context: np.ndarray | None,
    kind: str,
    exclude: frozenset[str],
    scores: dict[str, float],
) -> np.ndarray:
    """What the learned reading sees of one guessed name (:data:`FEATURES` values): each kind's score, as
    :meth:`KindPrototypes.scores` gave it for ``unit`` and ``context`` (the caller has them for the margins);
    the masked sentence's cosine to each typical sentence (0 with no sentence); the name's cosines to the 5
    nearest known names of each kind, in ascending order, and to each kind's phrases; the kind the extractor
    guessed; the kinds the words around it rule out."""
    parts: list[np.ndarray] = [np.array([scores[k] for k in _KINDS], dtype=np.float32)]
    for k in _KINDS:
        size = protos.contexts[k].shape[0] if protos.contexts else len(CONTEXTS[k])
        parts.append(
            protos.contexts[k] @ context if context is not None and protos.contexts else np.zeros(size)
        )
    for k in _KINDS:
        sims = np.sort(protos.names[k] @ unit)[-NEAREST:]
        parts.append(np.pad(sims, (NEAREST - sims.shape[0], 0)))
    parts.extend(protos.phrases[k] @ unit for k in _KINDS)
    parts.append(np.array([kind == k for k in _PRIOR], dtype=np.float32))
    parts.append(np.array([k in exclude for k in _KINDS], dtype=np.float32))
    return np.concatenate([np.asarray(p, dtype=np.float32) for p in parts])


FEATURES = len(_KINDS) + sum(len(CONTEXTS[k]) for k in _KINDS) + NEAREST * len(_KINDS)
FEATURES += sum(len(PROTOTYPES[k]) for k in _KINDS) + len(_PRIOR) + len(_KINDS)


def fingerprint() -> str:
    """A digest of everything :func:`features` depends on besides the model: weights trained on other lists
    or settings would read the features wrongly, so they are used only while this matches theirs."""
    spec = [PROTOTYPES, CONTEXTS, NEAREST, PHRASE_WEIGHT, CONTEXT_WEIGHT, _PRIOR, known_names()]
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class KindReader:
    """A multinomial logistic regression from :func:`features` to the four kinds, trained for one model."""

    model: str
    coef: np.ndarray  # (kinds, FEATURES)
    intercept: np.ndarray  # (kinds,)

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        z = self.coef @ x + self.intercept
        e = np.exp(z - z.max())
        return np.asarray(e / e.sum(), dtype=np.float64)


_readers: dict[str, KindReader | None] = {}


def reader(model: str) -> KindReader | None:
    """The learned reading for a model: None when no weights were trained for it (another model than the
    packaged one: the margins below decide), or when they were trained on other lists (logged; a test keeps
    the shipped weights current)."""
    with _lock:
        if model in _readers:
            return _readers[model]
        data = json.loads(resources.files("memdeck.core").joinpath("data", _WEIGHTS).read_text("utf-8"))
        found = None
        entry = data["models"].get(model)
        if entry is not None:
            if entry["fingerprint"] != fingerprint() or entry["classes"] != list(_KINDS):
                _log.warning("kind weights for %s were trained on other lists; margins decide instead", model)
            else:
                found = KindReader(
                    model,
                    np.asarray(entry["coef"], dtype=np.float64),
                    np.asarray(entry["intercept"], dtype=np.float64),
                )
        _readers[model] = found
        return found


def _read(kind: str, probabilities: np.ndarray, scores: dict[str, float], exclude: frozenset[str]) -> str:
    """A guessed kind from the learned reading: the likeliest kind the context leaves, when its probability
    among the kinds left is at least :data:`CONFIDENCE` and the margins (:func:`_decide`) give that kind too,
    else "other" (a kind not known)."""
    allowed = np.array([k not in exclude for k in _KINDS], dtype=np.float64)
    p = probabilities * allowed
    if p.sum() <= 0.0:
        return kind
    p = p / p.sum()
    best = int(np.argmax(p))
    agreed = _KINDS[best] == _decide(kind, scores, exclude)
    return _KINDS[best] if agreed and p[best] >= CONFIDENCE else "other"


def known_names() -> list[tuple[str, str]]:
    """The shipped names of known kind as (kind, name)."""
    return packaged.labelled(_NAMES, "names")


def _unit(vectors: np.ndarray) -> np.ndarray:
    v = np.asarray(vectors, dtype=np.float32)
    return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)


def _split(vectors: np.ndarray, texts: dict[str, tuple[str, ...]]) -> dict[str, np.ndarray]:
    out, at = {}, 0
    for kind in _KINDS:
        out[kind] = vectors[at : at + len(texts[kind])]
        at += len(texts[kind])
    return out


_cache: dict[str, KindPrototypes] = {}
_lock = threading.Lock()


def prototypes(model: str, embed: Callable[[list[str]], np.ndarray]) -> KindPrototypes:
    """The phrases', known names' and typical sentences' unit vectors for a model, embedded once per process
    (the names' are shipped for the packaged model)."""
    with _lock:
        found = _cache.get(model)
        if found is not None:
            return found
        texts = [t for kind in _KINDS for t in PROTOTYPES[kind]]
        sentences = [t for kind in _KINDS for t in CONTEXTS[kind]]
        vectors = _unit(embed(texts + sentences))
        phrases = _split(vectors[: len(texts)], PROTOTYPES)
        contexts = _split(vectors[len(texts) :], CONTEXTS)
        named = known_names()
        name_vectors = packaged.vectors(_NAMES, model, [n for _k, n in named], embed)
        assert name_vectors is not None  # an embed was given
        name_vectors = _unit(name_vectors)
        kinds = np.array([k for k, _n in named])
        found = KindPrototypes(
            phrases,
            {k: name_vectors[kinds == k] for k in _KINDS},
            {k: tuple(n for kk, n in named if kk == k) for k in _KINDS},
            contexts,
        )
        _cache[model] = found
        return found


def _decide(kind: str, scores: dict[str, float], exclude: frozenset[str] = frozenset()) -> str:
    """A guessed kind from its scores: kept unless another beats it by the margin, or the context rules it
    out (then the best of the kinds left)."""
    allowed = [k for k in _KINDS if k not in exclude]
    if not allowed:
        return kind
    if kind in exclude:
        return max(allowed, key=lambda k: scores[k])
    if kind in _PAIRED:
        others = [k for k in _PAIRED[kind] if k in allowed]
        if not others:
            return kind
        other = max(others, key=lambda k: scores[k])
        return other if scores[other] - scores[kind] >= PAIR_MARGIN else kind
    others = [k for k in allowed if k != kind]
    if not others:
        return kind
    best = max(others, key=lambda k: scores[k])
    return best if scores[best] - scores[kind] >= MARGIN else kind


def _refinable(kind: str) -> bool:
    return kind == "person" or kind in _PAIRED


def _unit_or_none(vector: np.ndarray, protos: KindPrototypes) -> np.ndarray | None:
    v = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(v))
    if norm == 0.0 or v.shape[0] != protos.phrases["person"].shape[1]:
        return None
    return v / norm


def refine_all(
    kinds: Sequence[str],
    vectors: np.ndarray,
    model: str,
    embed: Callable[[list[str]], np.ndarray],
    protos: KindPrototypes | None = None,
    contexts: Sequence[NameContext | None] | None = None,
) -> list[str]:
    """Each guessed kind from its name's vector and the words around it (see the module docstring); other
    kinds unchanged. The prototypes are embedded only when a guessed kind is among them.

    ``contexts``: each name's :class:`~memdeck.core.graph.extract.NameContext` or None. The masked sentences
    of the names left to judge (not known names) are embedded in one batch, and the guessed names of one
    ``group`` are judged together: the kind the text states for another name of the group if there is one,
    else the kind their mean scores give."""
    if not any(_refinable(k) for k in kinds):
        return list(kinds)
    found = protos if protos is not None else prototypes(model, embed)
    around: dict[int, NameContext] = {
        i: c for i, c in enumerate(contexts if contexts is not None else ()) if c is not None
    }
    out = list(kinds)
    units: dict[int, np.ndarray] = {}
    for i, kind in enumerate(kinds):
        if not _refinable(kind):
            continue
        unit = _unit_or_none(vectors[i], found)
        if unit is None:
            continue
        known = found.known(unit)
        if known is not None and not (i in around and known in around[i].exclude):
            out[i] = known  # a known name is its own kind, unless the words around it rule that out
            continue
        units[i] = unit
    todo = [i for i in units if i in around]
    masked = dict(zip(todo, embed([around[i].masked for i in todo]), strict=True)) if todo else {}
    learned = reader(model)
    scored: dict[int, dict[str, float]] = {}
    likely: dict[int, np.ndarray] = {}
    groups: dict[int, list[int]] = {}
    for i, unit in units.items():
        context_unit = _unit_or_none(masked[i], found) if i in masked else None
        exclude = around[i].exclude if i in around else frozenset()
        scored[i] = found.scores(unit, context_unit)
        if learned is not None:
            likely[i] = learned.probabilities(
                features(found, unit, context_unit, kinds[i], exclude, scored[i])
            )
            out[i] = _read(kinds[i], likely[i], scored[i], exclude)
        else:
            out[i] = _decide(kinds[i], scored[i], exclude)
        group = around[i].group if i in around else None
        if group is not None:
            groups.setdefault(group, []).append(i)
    for members in groups.values():
        partner = around[members[0]].partner
        if partner is not None:
            for i in members:
                out[i] = partner
            continue
        if len(members) < 2 or len({kinds[i] for i in members}) > 1:
            continue
        exclude = frozenset().union(*(around[i].exclude for i in members))
        mean = {k: sum(scored[i][k] for i in members) / len(members) for k in _KINDS}
        if learned is not None:
            kind = _read(kinds[members[0]], np.mean([likely[i] for i in members], axis=0), mean, exclude)
        else:
            kind = _decide(kinds[members[0]], mean, exclude)
        for i in members:
            out[i] = kind
    return out
