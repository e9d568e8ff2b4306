"""Composite scores: each candidate keeps its raw components, and a weight change only re-ranks.

score = sum(w[c] * component[c]) over relevance, recency, frequency, importance, pinned, trust.
Recency decays exponentially with a half-life per tier. Re-ranking 1,000 candidates is a handful of
numpy operations, so the app can re-rank on every keypress of a weight slider.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

from .config import COMPONENTS, Profile
from .records import STORED_TIERS, Memory

FREQUENCY_SATURATION = 20.0  # recalls at which the frequency component reaches ~0.7
TIER_INDEX = {t: i for i, t in enumerate(STORED_TIERS)}


def recency(age_days: float | np.ndarray, half_life_days: float | np.ndarray) -> Any:
    """1.0 now, 0.5 after one half-life, 0.25 after two."""
    age = np.maximum(np.asarray(age_days, dtype=np.float64), 0.0)
    return np.power(0.5, age / np.asarray(half_life_days, dtype=np.float64))


def frequency(access_count: float | np.ndarray) -> Any:
    count = np.maximum(np.asarray(access_count, dtype=np.float64), 0.0)
    return np.log1p(count) / np.log1p(count + FREQUENCY_SATURATION / 2)


@dataclass
class Candidate:
    """A memory found by at least one channel, with everything scoring needs."""

    memory: Memory
    similarity: float = 0.0  # cosine similarity to the query, 0 when unknown
    keyword: float = 0.0  # BM25 score normalised to [0, 1] within this recall
    ranks: dict[str, int | None] = field(default_factory=lambda: {"vector": None, "keyword": None})
    trust: float = 0.5


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
        }


class CandidateSet:
    """The cached candidates of one recall, as arrays, ready to re-rank under any profile."""

    def __init__(self, candidates: list[Candidate], at: datetime, keyword_blend: float = 0.3) -> None:
        self.candidates = candidates
        self.at = at
        self.keyword_blend = keyword_blend
        n = len(candidates)
        self.similarity = np.fromiter((c.similarity for c in candidates), np.float64, n)
        self.keyword = np.fromiter((c.keyword for c in candidates), np.float64, n)
        self.age_days = np.fromiter((_age_days(c.memory, at) for c in candidates), np.float64, n)
        self.tier = np.fromiter((TIER_INDEX[c.memory.tier] for c in candidates), np.int64, n)
        self.frequency = frequency(np.fromiter((c.memory.access_count or 0 for c in candidates), np.float64, n))
        self.importance = np.fromiter((c.memory.importance for c in candidates), np.float64, n)
        self.pinned = np.fromiter((1.0 if c.memory.pinned else 0.0 for c in candidates), np.float64, n)
        self.trust = np.fromiter((c.trust for c in candidates), np.float64, n)

    def __len__(self) -> int:
        return len(self.candidates)

    def relevance(self, keyword_only: bool = False) -> np.ndarray:
        if keyword_only:
            return self.keyword
        return np.clip((1 - self.keyword_blend) * self.similarity + self.keyword_blend * self.keyword, 0, 1)

    def component_matrix(self, profile: Profile, keyword_only: bool = False) -> np.ndarray:
        half = np.array([profile.half_life_days[t] for t in STORED_TIERS])[self.tier]
        return np.vstack(
            [
                self.relevance(keyword_only),
                recency(self.age_days, half),
                self.frequency,
                self.importance,
                self.pinned,
                self.trust,
            ]
        )

    def scores(self, profile: Profile, keyword_only: bool = False) -> tuple[np.ndarray, np.ndarray]:
        comps = self.component_matrix(profile, keyword_only)
        weights = np.array([profile.weights.get(c, 0.0) for c in COMPONENTS])
        return weights @ comps, comps

    def rank(self, profile: Profile, k: int | None = None, keyword_only: bool = False) -> list[Scored]:
        if not self.candidates:
            return []
        total, comps = self.scores(profile, keyword_only)
        # Stable tie-break on similarity then id so a re-rank never shuffles equal scores.
        order = np.lexsort((np.arange(len(total)), -self.similarity, -total))
        if k is not None:
            order = order[:k]
        out = []
        for i in order:
            c = self.candidates[int(i)]
            out.append(
                Scored(
                    memory=c.memory,
                    score=float(total[i]),
                    components={name: float(comps[j, i]) for j, name in enumerate(COMPONENTS)},
                    ranks=dict(c.ranks),
                    channels={"similarity": float(self.similarity[i]), "keyword": float(self.keyword[i])},
                )
            )
        return out


def _age_days(memory: Memory, at: datetime) -> float:
    anchor = memory.anchor_time
    if anchor is None:
        return 0.0
    return max((at - anchor).total_seconds() / 86400.0, 0.0)
