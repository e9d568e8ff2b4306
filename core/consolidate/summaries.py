"""Extractive summaries of old sessions: a closed session whose last episode is older than
:data:`SUMMARY_AFTER_DAYS`, with :data:`MIN_EPISODES` episodes or more and no summary yet (memdeck's or an
agent's, tag ``session-summary``), gets one episode that quotes its most central sentences.

Nothing is generated: the summary is :data:`MAX_SENTENCES` sentences of the session itself, in their order,
chosen offline with no model:

- sentences of 4 to 60 words, low-value ones (acknowledgements, filler) left out;
- each sentence scored by how much it shares with the rest of the session: the mean cosine of its TF-IDF
  vector (content words, IDF within the session) to every other sentence's, so what the session keeps
  coming back to scores high and an aside scores low;
- scores scaled so the most central sentence has 1; one below :data:`MIN_CENTRALITY` (an aside, a
  greeting) is never quoted, so a session may get fewer than three sentences;
- picked greedily, each next pick's score lowered by its overlap with those already picked (maximal
  marginal relevance, :data:`REDUNDANCY`), so three sentences say three things.

The episodes stay as they are (the summary names them in ``meta.summarises``); the summary is dated with the
session's last episode, so it sits in time with its session. bench/bench_summaries.py measures the picks
against sentences a person marked as the ones to keep (bench/RESULTS-summaries.md).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from memdeck.core import filters as F
from memdeck.core.consolidate.sentences import split_sentences
from memdeck.core.records import MemoryInput, now
from memdeck.core.storage.formation import low_value_reason

if TYPE_CHECKING:
    from memdeck.core.storage.engine import Engine

SUMMARY_AFTER_DAYS = 30.0
MIN_EPISODES = 3
MAX_SENTENCES = 3
MAX_SENTENCE_WORDS = 60
MIN_SENTENCE_WORDS = 4
REDUNDANCY = 0.5  # how much overlap with a sentence already picked counts against the next
MIN_CENTRALITY = 0.3  # of the most central sentence's: below it, an aside is never quoted
SUMMARY_TAG = "session-summary"

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_STOP_WORDS = (
    "a an the and or but so if then than that this these those it its is are was were be been being am i "
    "me my mine we us our you your he him his she her they them their what which who whom whose when where "
    "why how all any both each few more most other some such no not only own same too very can will just "
    "do does did doing have has had having of at by for with about against between into through during "
    "before after above below to from up down in out on off over under again further once here there "
    "also yes yeah oh ok okay well really like get got go going went said says say would could should "
    "let lets one thing things lot much many"
)
_STOP = frozenset(_STOP_WORDS.split(" "))


def sentences(text: str) -> list[str]:
    """A text's sentences of :data:`MIN_SENTENCE_WORDS` to :data:`MAX_SENTENCE_WORDS` words that carry
    something (the formation filter's low-value texts left out)."""
    out = []
    for piece in split_sentences(text, capital_next=True):
        piece = piece.strip()
        n = len(piece.split())
        if MIN_SENTENCE_WORDS <= n <= MAX_SENTENCE_WORDS and low_value_reason(piece) is None:
            out.append(piece)
    return out


def _vectors(picked: list[str]) -> list[dict[str, float]]:
    bags = [Counter(w for w in _WORD.findall(s.lower()) if w not in _STOP) for s in picked]
    df = Counter(w for bag in bags for w in bag)
    n = len(bags)
    out = []
    for bag in bags:
        vec = {w: (1 + math.log(c)) * math.log(1 + n / df[w]) for w, c in bag.items()}
        norm = math.sqrt(sum(v * v for v in vec.values())) or 1.0
        out.append({w: v / norm for w, v in vec.items()})
    return out


def _cos(a: dict[str, float], b: dict[str, float]) -> float:
    if len(a) > len(b):
        a, b = b, a
    return sum(v * b.get(w, 0.0) for w, v in a.items())


def extractive_summary(texts: list[str], limit: int = MAX_SENTENCES) -> list[str]:
    """The most central sentences of ``texts`` (a session's episodes, in order), at most ``limit``, in the
    order they were said (see the module docstring)."""
    candidates = [s for text in texts for s in sentences(text)]
    if not candidates:
        return []
    vectors = _vectors(candidates)
    n = len(candidates)
    central = [
        sum(_cos(vectors[i], vectors[j]) for j in range(n) if j != i) / max(1, n - 1) for i in range(n)
    ]
    top = max(central)
    if top <= 0.0:
        return []  # nothing in the session comes back twice: no centre to quote
    central = [c / top for c in central]
    picked: list[int] = []
    while len(picked) < min(limit, n):
        best, best_score = -1, -math.inf
        for i in range(n):
            if i in picked or central[i] < MIN_CENTRALITY:
                continue
            overlap = max((_cos(vectors[i], vectors[j]) for j in picked), default=0.0)
            score = central[i] - REDUNDANCY * overlap
            if score > best_score:
                best, best_score = i, score
        if best < 0:
            break
        picked.append(best)
    return [candidates[i] for i in sorted(picked)]


def _naive(value: Any) -> datetime | None:
    return value.replace(tzinfo=None) if isinstance(value, datetime) else None


def summarise_old_sessions(store: Engine, principal: str, *, at: datetime | None = None) -> list[str]:
    """Write a summary for each of the principal's old closed sessions that has none; returns their ids."""
    if not store.has_table("episodic"):
        return []
    where = F.all_of(F.eq("principal", principal), F.eq("state", "active"))
    rows = store.scan(
        "episodic", ["id", "text", "session", "closed", "tags", "created_at"], where
    ).to_pylist()
    sessions: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        if row["session"]:
            sessions.setdefault(str(row["session"]), []).append(row)
    cutoff = _naive(at or now())
    assert cutoff is not None
    cutoff -= timedelta(days=SUMMARY_AFTER_DAYS)
    items: list[MemoryInput] = []
    for session, episodes in sorted(sessions.items()):
        if any(SUMMARY_TAG in (e["tags"] or []) for e in episodes):
            continue  # summarised already, by memdeck or by an agent
        if len(episodes) < MIN_EPISODES or not all(e["closed"] is True for e in episodes):
            continue
        episodes.sort(key=lambda e: (_naive(e["created_at"]) or datetime.min, e["id"]))
        last = _naive(episodes[-1]["created_at"])
        if last is None or last > cutoff:
            continue
        picked = extractive_summary([str(e["text"]) for e in episodes])
        if not picked:
            continue
        items.append(
            MemoryInput(
                text=" ".join(picked),
                tier="episodic",
                principal=principal,
                agent="memdeck",
                tags=[SUMMARY_TAG],
                meta={"summarises": [e["id"] for e in episodes], "method": "extractive"},
                created_at=episodes[-1]["created_at"],
                extra={"session": session, "closed": True},
            )
        )
    if not items:
        return []
    from memdeck.core.graph.memory.write import remember_many

    return [r.memory.id for r in remember_many(store, items) if r.memory is not None and r.action == "added"]
