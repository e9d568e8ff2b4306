"""The context pack: what a recall would inject into a prompt, in order, under a token budget.

Pinned memories come first (most important, then newest), then the ranked results. A memory that does
not fit what is left of the budget is skipped rather than ending the pack, so one long memory does not
crowd out shorter ones after it. Pure and typed: the app's inspector shows it, and the API, CLI and MCP
server can build the same pack.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from memdeck.core.records import Memory

DEFAULT_BUDGET = 1000
CHARS_PER_TOKEN = 4  # the usual rule of thumb for English text and BPE tokenizers
PINNED = "pinned"


class Ranked(Protocol):
    """A ranked recall result (``Scored``): all the pack needs is its memory."""

    @property
    def memory(self) -> Memory: ...


def estimate_tokens(text: str) -> int:
    """Tokens a text costs in a prompt, estimated as ceil(characters / 4), at least 1."""
    return max(1, math.ceil(len(text) / CHARS_PER_TOKEN))


@dataclass(frozen=True)
class PackEntry:
    """One candidate for the pack: where it came from, its cost, and whether it fits."""

    memory: Memory
    source: str  # "pinned" or "rank N"
    tokens: int
    included: bool
    running_total: int  # tokens used by the pack up to and including this entry


@dataclass(frozen=True)
class ContextPack:
    """What a recall would inject, in order, and what did not fit the budget."""

    budget: int
    entries: tuple[PackEntry, ...] = field(default_factory=tuple)

    @property
    def used(self) -> int:
        return sum(e.tokens for e in self.entries if e.included)

    @property
    def included(self) -> list[PackEntry]:
        return [e for e in self.entries if e.included]

    @property
    def left_out(self) -> list[PackEntry]:
        return [e for e in self.entries if not e.included]

    @property
    def pinned_included(self) -> int:
        return sum(1 for e in self.entries if e.included and e.source == PINNED)


def build_context_pack(pinned: Sequence[Memory], ranked: Sequence[Ranked], budget: int) -> ContextPack:
    """Pinned memories first (most important, then newest), then ranked results, within ``budget`` tokens.

    A memory that does not fit what is left is skipped, not the end of the pack. A ranked result that is
    also pinned appears once, as pinned. A negative budget counts as 0.
    """
    limit = max(int(budget), 0)
    ordered_pins = sorted(
        pinned, key=lambda m: (-(m.importance or 0.0), -(m.created_at.timestamp() if m.created_at else 0.0))
    )
    candidates: list[tuple[Memory, str]] = [(m, PINNED) for m in ordered_pins]
    candidates += [(r.memory, f"rank {i}") for i, r in enumerate(ranked, start=1)]
    entries: list[PackEntry] = []
    seen: set[str] = set()
    used = 0
    for memory, source in candidates:
        if memory.id in seen:
            continue
        seen.add(memory.id)
        tokens = estimate_tokens(memory.text)
        fits = used + tokens <= limit
        if fits:
            used += tokens
        entries.append(PackEntry(memory, source, tokens, fits, used))
    return ContextPack(budget=limit, entries=tuple(entries))


__all__ = [
    "CHARS_PER_TOKEN", "DEFAULT_BUDGET", "ContextPack", "PackEntry", "Ranked", "build_context_pack",
    "estimate_tokens",
]
