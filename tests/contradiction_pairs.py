"""How the contradiction tests ask about a pair: read by the offline rules either or both ways round, or
found by consolidation with the two facts' vectors at a chosen cosine."""

from __future__ import annotations

from memdeck.core.consolidate import contradicting_pairs, parse_statement
from memdeck.core.consolidate.contradict import CONTRADICTION, compare


def flags(a: str, b: str) -> bool:
    return compare(a, b).kind == CONTRADICTION or compare(b, a).kind == CONTRADICTION


def both_ways(a: str, b: str) -> bool:
    return compare(a, b).kind == CONTRADICTION and compare(b, a).kind == CONTRADICTION


def found(a: str, b: str, cosine: float) -> bool:
    """Whether consolidation pairs the two facts, with vectors at ``cosine`` (0: far apart, 1: one topic)."""
    other = [cosine, (1 - cosine**2) ** 0.5, 0.0]
    facts = [
        {"id": "a", "text": a, "vector": [1.0, 0.0, 0.0], "meta": {}},
        {"id": "b", "text": b, "vector": other, "meta": {}},
    ]
    return bool(contradicting_pairs(facts, {f["id"]: parse_statement(f["text"]) for f in facts}))
