"""The time cue of relevance: a query that asks *when* prefers memories that say when.

"When did I last see the dentist?" is answered by "Saw the dentist yesterday, all fine", not by "The
dentist is on Elm Street", though both match the question's words about as well. So when a query asks
for a time (``asks_for_time``), a memory whose text states one (``states_time``: a date, a weekday, a
month, a year, a clock time, or a relative time such as "yesterday", "last week", "three days ago") has
its match raised by ``[recall] time_cue_weight`` (0.5: match x 1.5, at most 1). Nothing changes for any
other query, or for a memory that states no time.

Plain English patterns of how people write times, not of any one data set; a memory's time is read from
its text (its stored date is the same for every memory of a session, so it cannot tell them apart).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

_WEEKDAYS = r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekend"
_PERIODS = (
    r"(?:day|night|week|weekend|fortnight|month|year|decade|summer|winter|spring|autumn|fall|"
    r"morning|afternoon|evening|semester|term|season|christmas|easter)s?"
)
_COUNT = r"(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a few|few|a couple of|couple of|several|many|\d+)"

_TIME_WORDS = re.compile(
    r"\b(?:"
    r"yesterday|today|tonight|tomorrow|recently|lately|the other day|ago|"
    rf"(?:last|next|this|past|coming|previous|earlier this|later this) {_PERIODS}|"
    rf"{_COUNT} {_PERIODS} (?:ago|back|before|later|earlier)|"
    rf"(?:in|for|since|over) the (?:last|past|next) (?:{_COUNT} )?{_PERIODS}|"
    rf"(?:on|this|last|next|every|by|until|since) (?:{_WEEKDAYS})|"
    rf"(?:{_WEEKDAYS})s?|"
    r"(?:19|20)\d\d|"  # a year
    r"\d{1,2}(?:st|nd|rd|th)|"  # the 5th
    r"\d{1,2}[/.]\d{1,2}[/.]\d{2,4}|\d{4}-\d{2}-\d{2}|"  # 12/05/24, 5.3.2024, 2024-03-05
    r"\d{1,2}(?::\d{2})?\s?(?:am|pm|a\.m\.|p\.m\.)|\d{1,2}:\d{2}"  # clock times
    r")\b",
    re.IGNORECASE,
)
# Month names as people write them, capitalised: "may" and "march" in lower case are verbs far more often. An
# abbreviation only beside a number ("Jan 5", "3 Mar 2024"): "Jan" alone is as often a name.
_SHORT_MONTHS = r"(?:Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)"
_MONTHS = re.compile(
    r"\b(?:January|February|March|April|May|June|July|August|September|October|November|December)\b|"
    rf"\b{_SHORT_MONTHS}\.?\s+\d{{1,4}}\b|\b\d{{1,2}}(?:st|nd|rd|th)?\s+{_SHORT_MONTHS}\b"
)
_MONTHS_LOWER = re.compile(
    r"\b(?:january|february|april|june|july|august|september|october|november|december)\b", re.IGNORECASE
)

_ASKS = re.compile(
    r"(?:^|[.?!]\s+|\b(?:remember|know|tell me|recall|wonder)\s+)\s*(?:and\s+|so\s+|but\s+)?"
    r"(?:when\b|since when\b|until when\b|by when\b|how long ago\b|"
    r"(?:what|which|in what|on what|at what) (?:year|month|day|date|time|week|season|weekday)s?\b)"
    r"|\bwhen (?:did|do|does|was|were|is|are|will|would|has|have|had|should|can|could)\b",
    re.IGNORECASE,
)


# A sentence that opens with a "when" clause and asks something else after its comma: "When I was a kid, what
# did I like?", "When we were in Lisbon, which hotel was it?" (taken out before reading the question; "When
# did we meet, do you remember?" asks when, and so does a "when did" after the comma).
_WHEN_CLAUSE = re.compile(
    r"(?:^|(?<=[.?!])\s+)\s*(?:and\s+|so\s+|but\s+)?when\b"
    r"(?!\s+(?:did|do|does|was|were|is|are|will|would|has|have|had|should|can|could)\b)[^,.?!]*,"
    r"(?=\s*(?:what|which|who|whom|whose|where|how|why|did|do|does|was|were|is|are|can|could|should|would|"
    r"will|have|has|had)\b)",
    re.IGNORECASE,
)


def asks_for_time(query: str) -> bool:
    """Whether the query asks when something happened or will happen ("When did ...", "What year ...",
    "how long ago ...", "do you remember when ..."); "when" as a plain conjunction ("what did she say when
    it rained", "When I was a kid, what did I like?") does not ask."""
    return bool(_ASKS.search(_WHEN_CLAUSE.sub(" ", query or "")))


def states_time(text: str | None) -> bool:
    """Whether the text says when: a relative time ("yesterday", "last week", "two months ago"), a weekday,
    a month, a year, a date or a clock time."""
    if not text:
        return False
    return bool(_TIME_WORDS.search(text) or _MONTHS.search(text) or _MONTHS_LOWER.search(text))


def cues(texts: Sequence[str | None]) -> np.ndarray:
    """``states_time`` of each text, as 0.0 / 1.0."""
    return np.fromiter((1.0 if states_time(t) else 0.0 for t in texts), np.float64, len(texts))


def boosted(match: np.ndarray, cue: np.ndarray, weight: float) -> np.ndarray:
    """Each match raised by ``weight`` (a share of itself) where the memory states a time, at most 1."""
    return np.minimum(match * (1.0 + weight * cue), 1.0)


__all__ = ["asks_for_time", "boosted", "cues", "states_time"]
