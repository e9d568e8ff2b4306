"""Composite scores: each candidate keeps its raw components, and a weight change only re-ranks.

score = sum(w[c] * component[c]) over relevance, recency, frequency, importance, pinned, trust, graph.
Recency decays exponentially with a half-life per tier. Re-ranking 1,000 candidates is a handful of
numpy operations, so the app can re-rank on every keypress of a weight slider.

Relevance does not depend on the weights, so it is computed once per recall:

    match     = (1 - keyword_blend) * similarity + keyword_blend * keyword
    relevance = (match + neighbour_weight * neighbour + session_weight * session)
                / (1 + neighbour_weight + session_weight)

- ``similarity``: the cosine to the query, clipped at 0.
- ``keyword``: the BM25 score over the best BM25 score among the candidates, squared. Every candidate is
  scored by both channels (a memory only the vector search found still gets its BM25 score), and squaring
  keeps the strongest keyword matches near full weight while a memory that shares one common word with
  the query gets little.
- ``neighbour``: the best ``match`` among the memory's neighbours in its episodic session (the turn just
  before and the one just after) that are candidates too. A reply like "Yes, last year!" means little
  alone; the turn it answers carries the topic.
- ``session``: the best ``match`` among the other candidates of the same episodic session: a session
  (one conversation) that holds other strong matches is more likely about the query.
Memories outside an episodic session have neither, and their relevance is their match scaled by the
same denominator, so every tier is on one scale.

The ``importance`` component is the memory's importance reinforced by its evidence: each piece of
evidence beyond the first closes a quarter of the remaining gap to 1 (``1 - (1 - importance) *
0.75 ** (evidence_count - 1)``), so a fact seen in five episodes outranks the same fact seen once, and
the tenth piece of evidence adds far less than the second. Importance then decays with disuse: from the
last recall that returned the memory it halves every ``half_life_days["importance"]`` days of the profile
(``decayed``), computed at recall and never written back. A memory no recall has returned yet keeps its
importance (its age already counts in recency), so a store whose memories were never recalled ranks as it
did before the decay existed. A candidate whose relevance is below the
profile's ``min_relevance`` is not ranked at all: no weight can bring an unrelated memory back.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

import numpy as np

from memdeck.core.config import (
    COMPONENTS,
    DEFAULT_HALF_LIFE_DAYS,
    DEFAULT_MIN_RELEVANCE,
    Profile,
    RecallSettings,
)
from memdeck.core.recall import timecue
from memdeck.core.records import STORED_TIERS, Memory

FREQUENCY_SATURATION = 20.0  # recalls at which the frequency component reaches ~0.7
REINFORCEMENT_STEP = 0.25  # share of the remaining gap to 1 that each extra piece of evidence closes
TIER_INDEX = {t: i for i, t in enumerate(STORED_TIERS)}
# Defaults of the relevance fusion; config [recall] keyword_blend, neighbour_weight, session_weight.
KEYWORD_BLEND = RecallSettings.keyword_blend
NEIGHBOUR_WEIGHT = RecallSettings.neighbour_weight
SESSION_WEIGHT = RecallSettings.session_weight
# Defaults of the optional channels; config [recall] previous_keyword_weight, unnamed_query_weight,
# score_all_rows (0: off). Chosen on the tune half of LoCoMo (bench/RESULTS-locomo.md).
PREVIOUS_KEYWORD_WEIGHT = RecallSettings.previous_keyword_weight
UNNAMED_QUERY_WEIGHT = RecallSettings.unnamed_query_weight
SCORE_ALL_ROWS = RecallSettings.score_all_rows
TIME_CUE_WEIGHT = RecallSettings.time_cue_weight


def recency(age_days: float | np.ndarray, half_life_days: float | np.ndarray) -> Any:
    """1.0 now, 0.5 after one half-life, 0.25 after two (``exp2`` of minus the half-lives: the same values
    as ``0.5 ** x`` to the last bit or two, at less than half its cost over every row of a recall)."""
    age = np.maximum(np.asarray(age_days, dtype=np.float64), 0.0)
    return np.exp2(-(age / np.asarray(half_life_days, dtype=np.float64)))


def similarities(vectors: np.ndarray, qvec: np.ndarray) -> np.ndarray:
    """Each row's dot product with the query: the cosine, the vectors being unit length. One dot product per
    row (``vecdot``), whose result for a row depends on that row alone (a BLAS matrix-vector product's does
    not: it blocks rows), so every recall path scores a memory alike; on one thread, and about twice as fast
    as the einsum it replaced (1,000 rows of 384: 32 against 60 us)."""
    return np.vecdot(vectors, qvec)


def weight_vector(profile: Profile) -> np.ndarray:
    """The profile's weights in component order (``COMPONENTS``)."""
    return np.array([profile.weights.get(c, 0.0) for c in COMPONENTS], dtype=np.float64)


def frequency(access_count: float | np.ndarray) -> Any:
    count = np.maximum(np.asarray(access_count, dtype=np.float64), 0.0)
    return np.log1p(count) / np.log1p(count + FREQUENCY_SATURATION / 2)


def decayed(importance: np.ndarray, idle_days: np.ndarray, half_life_days: float) -> Any:
    """Importance after ``idle_days`` without a recall returning it: halved every ``half_life_days``;
    unchanged where ``idle_days`` is NaN (never returned by a recall)."""
    idle = np.asarray(idle_days, dtype=np.float64)
    value = np.asarray(importance, dtype=np.float64)
    recalled = ~np.isnan(idle)
    if not recalled.any():  # no memory was ever returned by a recall: nothing decays (a factor of 1)
        return value * 1.0
    factor = np.ones_like(idle)
    factor[recalled] = np.power(0.5, np.maximum(idle[recalled], 0.0) / float(half_life_days))
    return value * factor


def importance_half_life(profile: Profile) -> float:
    """The profile's importance half-life in days (a profile made without one: the default)."""
    return float(profile.half_life_days.get("importance", DEFAULT_HALF_LIFE_DAYS["importance"]))


def reinforced(importance: float | np.ndarray, evidence_count: float | np.ndarray) -> Any:
    """Importance raised by evidence with diminishing returns (see the module docstring), in [0, 1]."""
    imp = np.clip(np.asarray(importance, dtype=np.float64), 0.0, 1.0)
    extra = np.maximum(np.asarray(evidence_count, dtype=np.float64) - 1.0, 0.0)
    return 1.0 - (1.0 - imp) * np.power(1.0 - REINFORCEMENT_STEP, extra)


BM25_K1 = 1.2
BM25_B = 0.75


# The full-text index drops English stop words (after stemming), so they do not count in a text's length.
# This is that list as the index applies it, read off the index (a word it never matches though texts
# hold it); lengths computed with it match the index's for texts of plain words.
STOP_WORDS = frozenset(
    [
        "i",
        "me",
        "my",
        "myself",
        "we",
        "our",
        "ours",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "he",
        "him",
        "his",
        "himself",
        "she",
        "her",
        "hers",
        "herself",
        "it",
        "its",
        "itself",
        "they",
        "them",
        "their",
        "theirs",
        "what",
        "which",
        "who",
        "whom",
        "this",
        "that",
        "these",
        "those",
        "am",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "have",
        "has",
        "had",
        "having",
        "do",
        "did",
        "doing",
        "a",
        "an",
        "the",
        "and",
        "but",
        "if",
        "or",
        "as",
        "until",
        "while",
        "of",
        "at",
        "by",
        "for",
        "with",
        "about",
        "against",
        "between",
        "into",
        "through",
        "after",
        "above",
        "below",
        "to",
        "from",
        "up",
        "down",
        "in",
        "out",
        "on",
        "off",
        "over",
        "under",
        "again",
        "further",
        "then",
        "here",
        "there",
        "when",
        "where",
        "how",
        "all",
        "both",
        "each",
        "few",
        "more",
        "most",
        "other",
        "others",
        "some",
        "such",
        "no",
        "nor",
        "not",
        "own",
        "same",
        "so",
        "than",
        "too",
        "s",
        "t",
        "can",
        "will",
        "just",
        "don",
        "should",
        "now",
        "d",
        "ll",
        "m",
        "o",
        "re",
        "ve",
        "y",
        "ain",
        "aren",
        "couldn",
        "didn",
        "hadn",
        "hasn",
        "haven",
        "isn",
        "ma",
        "mightn",
        "mustn",
        "needn",
        "shan",
        "shouldn",
        "wasn",
        "weren",
        "won",
        "wouldn",
    ]
)
_INDEX_WORD = re.compile(r"\w+")


def index_length(text: str) -> int:
    """A text's length as the full-text index counts it: words, stop words left out."""
    return sum(1 for w in _INDEX_WORD.findall(text.lower()) if w not in STOP_WORDS)


def _bm25_idf(df: float, rows: float) -> float:
    return float(np.log1p((max(rows, df) - df + 0.5) / (df + 0.5)))


def term_frequency(score: float, df: float, rows: float, length: float, avgdl: float) -> float:
    """A term's frequency in a text, recovered from the index's BM25 score for that term alone.

    The index scores ``idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / avgdl))`` with its own
    (whole-table) ``df``, ``rows`` and ``avgdl``; solving for ``tf`` gives the count the index saw after
    its tokenising and stemming. At least 1: the text matched.
    """
    idf = _bm25_idf(df, rows)
    if idf <= 0 or score <= 0:
        return 1.0
    part = min(score / idf, BM25_K1 + 1.0 - 1e-6)
    norm = BM25_K1 * (1.0 - BM25_B + BM25_B * length / (avgdl or 1.0))
    return max(1.0, float(round(part * norm / (BM25_K1 + 1.0 - part), 3)))


def principal_bm25(
    matches: dict[str, dict[str, float]], rows: int, lengths: dict[str, float], avgdl: float | None = None
) -> dict[str, float]:
    """BM25 of each candidate with statistics from one principal's rows only.

    ``matches`` maps each query word to ``{"df": the number of the principal's rows that contain it,
    candidate id: term frequency, ...}``; ``rows`` is how many rows the principal has, ``lengths`` each
    candidate's length in index words and ``avgdl`` the principal's mean length (the candidates' when not
    given). The index's own scores use statistics over the whole table, every principal's rows together:
    an agent could learn from its own memory's score whether other principals' memories contain a word.
    These cannot move with another principal's rows.
    """
    if not lengths:
        return {}
    mean = avgdl or (sum(lengths.values()) / len(lengths)) or 1.0
    out = dict.fromkeys(lengths, 0.0)
    for found in matches.values():
        df = found.get("df", 0.0)
        if df <= 0:
            continue
        idf = _bm25_idf(df, rows)
        for mem_id, tf in found.items():
            if mem_id in out:
                norm = BM25_K1 * (1.0 - BM25_B + BM25_B * lengths[mem_id] / mean)
                out[mem_id] += idf * tf * (BM25_K1 + 1.0) / (tf + norm)
    return out


def keyword_share(raw: np.ndarray | float, top: float) -> Any:
    """A raw BM25 score as a share of the best one in the recall, squared (see the module docstring)."""
    if top <= 0:
        return np.zeros_like(np.asarray(raw, dtype=np.float64))
    if isinstance(raw, float):  # one candidate: the same arithmetic without numpy's per-call cost
        return np.float64(min(max(raw / top, 0.0), 1.0) ** 2)
    return np.clip(np.asarray(raw, dtype=np.float64) / top, 0.0, 1.0) ** 2


def with_previous_keyword(own: np.ndarray, joined: np.ndarray, weight: float) -> np.ndarray:
    """The keyword channel with the previous memory's words: ``own`` (each memory's ``keyword_share``)
    blended ``weight`` with the share of the BM25 of each memory read together with the memory before it
    in its session (``joined``, raw), as a share of the recall's best such score, squared."""
    top = float(joined.max()) if joined.size else 0.0
    return (1.0 - weight) * own + weight * np.asarray(keyword_share(joined, top), dtype=np.float64)


def unnamed_similarity(similarity: np.ndarray, unnamed: np.ndarray, weight: float) -> np.ndarray:
    """The cosine channel with the query's person names left out: ``similarity`` blended ``weight`` with
    each memory's cosine to the query without the names (``unnamed``, dot products), clipped at 0."""
    return (1.0 - weight) * similarity + weight * np.clip(np.asarray(unnamed, dtype=np.float64), 0.0, 1.0)


def match(
    similarity: np.ndarray, keyword: np.ndarray, keyword_blend: float, keyword_only: bool = False
) -> np.ndarray:
    """How well each memory itself matches the query, in [0, 1]."""
    if keyword_only:
        return np.clip(keyword, 0.0, 1.0)
    return np.clip((1 - keyword_blend) * similarity + keyword_blend * keyword, 0.0, 1.0)


def relevance(
    own: np.ndarray,
    neighbour: np.ndarray,
    session: np.ndarray,
    neighbour_weight: float,
    session_weight: float,
) -> np.ndarray:
    """A memory's match with its conversation's support folded in, still in [0, 1]."""
    return (own + neighbour_weight * neighbour + session_weight * session) / (
        1.0 + neighbour_weight + session_weight
    )


@dataclass
class Candidate:
    """A memory found by at least one channel, with everything scoring needs."""

    memory: Memory
    similarity: float = 0.0  # cosine similarity to the query, 0 when unknown
    keyword: float = 0.0  # BM25 score as a share of the recall's best, squared (see keyword_share)
    ranks: dict[str, int | None] = field(
        default_factory=lambda: {"vector": None, "keyword": None, "graph": None}
    )
    trust: float = 0.5
    graph: float = 0.0  # the graph channel's score in [0, 1] (see memdeck.core.graph.memory.recall)
    neighbours: tuple[str, ...] = ()  # ids of the memories just before and after it in its session


@dataclass
class Scored:
    memory: Memory
    score: float
    components: dict[str, float]
    ranks: dict[str, int | None]
    channels: dict[str, float]

    def to_json(self) -> dict[str, Any]:
        m = self.memory
        return {
            "id": m.id,
            "tier": m.tier,
            "type": m.type,
            "text": m.text,
            "principal": m.principal,
            "agent": m.agent,
            "score": round(self.score, 6),
            "components": {k: round(v, 6) for k, v in self.components.items()},
            "ranks": dict(self.ranks),
            "channels": {k: round(v, 6) for k, v in self.channels.items()},
            "pinned": m.pinned,
            "state": m.state,
            "created_at": m.to_json()["created_at"],
            "source": source_of(m),
        }


def source_of(memory: Memory) -> dict[str, Any] | None:
    """Where an imported memory came from (``meta.source``: file, heading, line range), or None."""
    raw = (memory.meta or {}).get("source")
    if not isinstance(raw, dict) or not isinstance(raw.get("file"), str):
        return None
    lines = raw.get("lines")
    span = [int(x) for x in lines][:2] if isinstance(lines, (list, tuple)) and len(lines) >= 2 else None
    heading = raw.get("heading") if isinstance(raw.get("heading"), str) else None
    return {"file": raw["file"], "heading": heading, "lines": span}


def source_label(memory: Memory) -> str | None:
    """``notes/trip.md > Packing, lines 12-18`` for a memory with a source, else None."""
    src = source_of(memory)
    if src is None:
        return None
    text = src["file"] + (f" > {src['heading']}" if src["heading"] else "")
    if src["lines"]:
        text += f", lines {src['lines'][0]}-{src['lines'][1]}"
    return text


@dataclass
class CandidateColumns:
    """What scoring reads of each candidate, in candidate order, as arrays (the in-memory index gives these
    straight from its columns; ``CandidateSet`` makes them from ``Candidate`` objects otherwise)."""

    ids: Sequence[str]
    tier: np.ndarray  # TIER_INDEX of each candidate's tier
    principals: Sequence[str]
    agents: Sequence[str | None]
    similarity: np.ndarray
    keyword: np.ndarray
    age_days: np.ndarray
    frequency: np.ndarray  # ``frequency(access_count)``
    importance: np.ndarray  # ``reinforced(importance, evidence_count)``
    pinned: np.ndarray
    trust: np.ndarray
    graph: np.ndarray
    ranks: np.ndarray  # (3, n): vector, keyword and graph rank of each candidate, 0 where it has none
    session: np.ndarray  # an episodic candidate's session (any code, one per session), -1 outside a session
    neighbours: Mapping[
        int, tuple[str, ...]
    ]  # an episodic candidate's neighbours' ids, by candidate position
    # Each candidate's neighbours as candidate positions (before, after; -1: none or not a candidate), when
    # the maker has them as arrays; else made from ``neighbours``.
    neighbour_at: np.ndarray | None = None
    # Days since a recall last returned each candidate (NaN: never), what importance decays with; None: all NaN.
    idle_days: np.ndarray | None = None
    # 1.0 where the candidate's text states a time (``timecue.states_time``), else 0.0; None: not read (the
    # query does not ask when).
    time_cue: np.ndarray | None = None


RANK_CHANNELS = ("vector", "keyword", "graph")


def rank_dicts(ranks: np.ndarray) -> list[dict[str, int | None]]:
    """``CandidateColumns.ranks`` (or some of its columns) as one dict per candidate, None for no rank."""
    return [{"vector": v or None, "keyword": k or None, "graph": g or None} for v, k, g in ranks.T.tolist()]


class Maker(Protocol):
    """What makes the objects of a candidate set made from columns, for the positions asked."""

    def __call__(self, positions: Sequence[int]) -> list[Candidate]: ...

    def memories(self, positions: Sequence[int]) -> list[Memory]: ...


def _columns_of(candidates: Sequence[Candidate], at: datetime) -> CandidateColumns:
    n = len(candidates)
    memories = [c.memory for c in candidates]
    sessions: dict[str, int] = {}
    session = np.fromiter(
        (
            sessions.setdefault(m.session, len(sessions)) if m.tier == "episodic" and m.session else -1
            for m in memories
        ),
        np.int64,
        n,
    )
    ranks = np.zeros((len(RANK_CHANNELS), n), dtype=np.int64)
    for i, c in enumerate(candidates):
        for j, channel in enumerate(RANK_CHANNELS):
            ranks[j, i] = c.ranks.get(channel) or 0
    return CandidateColumns(
        ids=[m.id for m in memories],
        tier=np.fromiter((TIER_INDEX[m.tier] for m in memories), np.int64, n),
        principals=[m.principal for m in memories],
        agents=[m.agent for m in memories],
        similarity=np.fromiter((c.similarity for c in candidates), np.float64, n),
        keyword=np.fromiter((c.keyword for c in candidates), np.float64, n),
        age_days=np.fromiter((_age_days(m, at) for m in memories), np.float64, n),
        frequency=frequency(np.fromiter((m.access_count or 0 for m in memories), np.float64, n)),
        importance=reinforced(
            np.fromiter((m.importance for m in memories), np.float64, n),
            np.fromiter((m.evidence_count or 1 for m in memories), np.float64, n),
        ),
        pinned=np.fromiter((1.0 if m.pinned else 0.0 for m in memories), np.float64, n),
        trust=np.fromiter((c.trust for c in candidates), np.float64, n),
        graph=np.fromiter((c.graph for c in candidates), np.float64, n),
        ranks=ranks,
        session=session,
        neighbours={i: c.neighbours for i, c in enumerate(candidates) if c.neighbours},
        idle_days=np.fromiter((_idle_days(m, at) for m in memories), np.float64, n),
    )


_CHANNELS = ("similarity", "keyword", "neighbour", "session", "graph")


class CandidateSet:
    """The cached candidates of one recall, as arrays, ready to re-rank under any profile.

    Made from ``Candidate`` objects, or from ``CandidateColumns`` and a ``load`` that makes the Candidate
    objects of given positions when they are wanted: a recall then builds Memory objects for the
    results it returns, not for every candidate it scored.
    """

    def __init__(
        self,
        candidates: Sequence[Candidate],
        at: datetime,
        keyword_blend: float = KEYWORD_BLEND,
        neighbour_weight: float = NEIGHBOUR_WEIGHT,
        session_weight: float = SESSION_WEIGHT,
        keyword_top: float = 0.0,
        *,
        columns: CandidateColumns | None = None,
        load: Maker | None = None,
    ) -> None:
        self.at = at
        self.keyword_blend = keyword_blend
        self.neighbour_weight = neighbour_weight
        self.session_weight = session_weight
        self.keyword_top = keyword_top  # the raw BM25 score that ``keyword`` is a share of
        if columns is None:
            columns = _columns_of(candidates, at)
            self._made: dict[int, Candidate] = dict(enumerate(candidates))
        else:
            if load is None:
                raise ValueError("a candidate set made from columns needs a load function")
            self._made = {}
        self._load = load
        self.columns = columns
        self.similarity = columns.similarity
        self.keyword = columns.keyword
        self.age_days = columns.age_days
        self.tier = columns.tier
        self.frequency = columns.frequency
        self.importance = columns.importance
        self.idle_days = (
            columns.idle_days if columns.idle_days is not None else np.full(len(columns.ids), np.nan)
        )
        self.pinned = columns.pinned
        self.trust = columns.trust
        self.graph = columns.graph
        self._fusion: dict[bool, dict[str, np.ndarray]] = {}
        # The relevance floor of the store's model, for a profile that sets none (``Profile.floor``).
        self.model_floor = DEFAULT_MIN_RELEVANCE
        # The share by which a candidate that states a time has its match raised (``cue_time``); 0: none.
        self.time_weight = 0.0

    @classmethod
    def from_columns(
        cls,
        columns: CandidateColumns,
        load: Maker,
        at: datetime,
        keyword_blend: float = KEYWORD_BLEND,
        neighbour_weight: float = NEIGHBOUR_WEIGHT,
        session_weight: float = SESSION_WEIGHT,
        keyword_top: float = 0.0,
    ) -> CandidateSet:
        return cls(
            (), at, keyword_blend, neighbour_weight, session_weight, keyword_top, columns=columns, load=load
        )

    @functools.cached_property
    def ids(self) -> list[str]:
        """Every candidate's memory id, in candidate order (a list made on first use: scoring reads none)."""
        ids = self.columns.ids
        return ids if isinstance(ids, list) else list(ids)

    def __len__(self) -> int:
        return len(self.columns.ids)

    @property
    def candidates(self) -> list[Candidate]:
        """Every candidate as a Candidate object (made on first use when the set was made from columns)."""
        return self.made(range(len(self)))

    def made(self, positions: Sequence[int]) -> list[Candidate]:
        """The Candidate objects at these positions (made once each, when the set was made from columns)."""
        missing = [i for i in positions if i not in self._made]
        if missing:
            assert self._load is not None  # a set made from Candidate objects holds them all
            self._made.update(zip(missing, self._load(missing), strict=True))
        return [self._made[i] for i in positions]

    def index_of(self, memory_id: str) -> int | None:
        """Position of a memory in this set, or None if it is not a candidate."""
        try:
            return self.ids.index(memory_id)
        except ValueError:
            return None

    def including(self, candidate: Candidate) -> CandidateSet:
        """A copy of this set with one more candidate (explain uses it for a memory no channel reached)."""
        out = CandidateSet(
            [*self.candidates, candidate],
            self.at,
            self.keyword_blend,
            self.neighbour_weight,
            self.session_weight,
            self.keyword_top,
        )
        out.model_floor = self.model_floor
        if self.time_weight > 0:
            out.cue_time(self.time_weight)
        return out

    def cue_time(self, weight: float) -> None:
        """The recall's query asks when: a candidate whose text states a time has its match raised by
        ``weight`` (``timecue.boosted``), read from the columns when their maker read it, else from the
        candidates' texts."""
        if self.columns.time_cue is None:
            self.columns.time_cue = timecue.cues([c.memory.text for c in self.candidates])
        self.time_weight = weight
        self._fusion.clear()

    def fusion(self, keyword_only: bool = False) -> dict[str, np.ndarray]:
        """match, neighbour, session and relevance of every candidate (computed once: no weight touches them),
        and ``floor``: the relevance the floor is judged on, without the time cue (``cue_time``), which
        raises a related memory but never carries an unrelated one past the floor."""
        cached = self._fusion.get(keyword_only)
        if cached is not None:
            return cached
        own = match(self.similarity, self.keyword, self.keyword_blend, keyword_only)
        if self.time_weight > 0 and self.columns.time_cue is not None:
            cached = self._fuse(timecue.boosted(own, self.columns.time_cue, self.time_weight))
            cached["floor"] = self._fuse(own)["relevance"]
        else:
            cached = self._fuse(own)
            cached["floor"] = cached["relevance"]
        self._fusion[keyword_only] = cached
        return cached

    def _fuse(self, own: np.ndarray) -> dict[str, np.ndarray]:
        neighbour = np.zeros_like(own)
        near = self._neighbour_at()
        if near is not None and near.size:
            taken = np.where(near >= 0, own[np.maximum(near, 0)], 0.0)
            neighbour = np.maximum(taken.max(axis=1), 0.0)
        session = session_support(own, self.columns.session)
        return {
            "match": own,
            "neighbour": neighbour,
            "session": session,
            "relevance": relevance(own, neighbour, session, self.neighbour_weight, self.session_weight),
        }

    def above_floor(self, profile: Profile, keyword_only: bool = False) -> np.ndarray:
        """Which candidates the relevance floor keeps (the profile's, else the store's model's), judged on
        relevance without the time cue."""
        return self.fusion(keyword_only)["floor"] >= profile.floor(self.model_floor)

    def _neighbour_at(self) -> np.ndarray | None:
        """Each candidate's neighbours as candidate positions (``CandidateColumns.neighbour_at``)."""
        if self.columns.neighbour_at is not None:
            return self.columns.neighbour_at
        if not self.columns.neighbours:
            return None
        index = {mem_id: i for i, mem_id in enumerate(self.ids)}
        near = np.full((len(self.ids), 2), -1, dtype=np.int64)
        for i, ids in self.columns.neighbours.items():
            for slot, other in enumerate(ids[:2]):
                near[i, slot] = index.get(other, -1)
        return near

    def relevance(self, keyword_only: bool = False) -> np.ndarray:
        return self.fusion(keyword_only)["relevance"]

    def component_matrix(self, profile: Profile, keyword_only: bool = False) -> np.ndarray:
        half = np.array([profile.half_life_days[t] for t in STORED_TIERS])[self.tier]
        return np.vstack(
            [
                self.relevance(keyword_only),
                recency(self.age_days, half),
                self.frequency,
                decayed(self.importance, self.idle_days, importance_half_life(profile)),
                self.pinned,
                self.trust,
                self.graph,
            ]
        )

    def scores(self, profile: Profile, keyword_only: bool = False) -> tuple[np.ndarray, np.ndarray]:
        comps = self.component_matrix(profile, keyword_only)
        return weight_vector(profile) @ comps, comps

    def rank(self, profile: Profile, k: int | None = None, keyword_only: bool = False) -> list[Scored]:
        if not len(self):
            return []
        total, comps = self.scores(profile, keyword_only)
        order = top_order(total, self.similarity, self.above_floor(profile, keyword_only), k)
        fused = self.fusion(keyword_only)
        # Plain lists, converted once: building a result per candidate is what costs at large k.
        idx = order.tolist()
        scores = total[order].tolist()
        columns = comps[:, order].T.tolist()
        channels = np.vstack(
            [
                self.similarity[order],
                self.keyword[order],
                fused["neighbour"][order],
                fused["session"][order],
                self.graph[order],
            ]
        ).T.tolist()
        if self._load is None:  # every Candidate object is at hand
            made = self.made(idx)
            memories, ranks = [c.memory for c in made], [dict(c.ranks) for c in made]
        else:  # a result needs its memory and ranks, not a Candidate object
            memories, ranks = self._load.memories(idx), rank_dicts(self.columns.ranks[:, order])
        return [
            Scored(
                memory=memory,
                score=score,
                components=dict(zip(COMPONENTS, comps_n, strict=True)),
                ranks=rank_n,
                channels=dict(zip(_CHANNELS, channels_n, strict=True)),
            )
            for memory, score, comps_n, rank_n, channels_n in zip(
                memories, scores, columns, ranks, channels, strict=True
            )
        ]


# Past this many candidates per place asked for, the order is sorted among the few that can reach the top k.
_PARTIAL_SORT_FROM = 8


def top_order(total: np.ndarray, similarity: np.ndarray, kept: np.ndarray, k: int | None) -> np.ndarray:
    """Positions of the ``kept`` candidates (those above the relevance floor) by score, best first, at most
    ``k``: score descending, then similarity descending, then position (a stable tie-break, so a re-rank
    never shuffles equal scores). With many candidates (every row scored) only those whose score reaches
    the k-th best are sorted; the order is the same as sorting them all."""
    at = np.flatnonzero(kept)
    if k is not None and at.size > _PARTIAL_SORT_FROM * k and not np.isnan(total[at]).any():
        kth = np.partition(total[at], at.size - k)[at.size - k]  # the k-th best score
        at = at[total[at] >= kth]  # every candidate that can be among the k best, ties included
    order = at[np.lexsort((at, -similarity[at], -total[at]))]
    return order if k is None else order[:k]


def session_support(own: np.ndarray, session: np.ndarray) -> np.ndarray:
    """Each episodic candidate's best ``own`` match among the *other* candidates of its session (0 alone
    in it or outside a session): the best for every member but the best one, which gets the second best
    (the first by position among equals is the best). Vectorised over the candidates."""
    out = np.zeros_like(own)
    members = np.flatnonzero(session >= 0)
    if members.size < 2:
        return out
    ordered = members[np.lexsort((members, -own[members], session[members]))]
    groups = session[ordered]
    first = np.r_[True, groups[1:] != groups[:-1]]
    start = np.maximum.accumulate(np.where(first, np.arange(ordered.size), 0))
    ends = np.r_[np.flatnonzero(first)[1:], ordered.size]
    size = (ends - np.flatnonzero(first))[np.cumsum(first) - 1]
    best = own[ordered[start]]
    second = np.where(size > 1, own[ordered[np.minimum(start + 1, ordered.size - 1)]], 0.0)
    values = np.where(first, second, best)
    out[ordered] = np.where(size > 1, values, 0.0)
    return out


def _idle_days(memory: Memory, at: datetime) -> float:
    if memory.last_accessed is None:
        return float("nan")
    return max((at - memory.last_accessed).total_seconds() / 86400.0, 0.0)


def _age_days(memory: Memory, at: datetime) -> float:
    anchor = memory.anchor_time
    if anchor is None:
        return 0.0
    return max((at - anchor).total_seconds() / 86400.0, 0.0)
