"""The context pack: what a recall would inject into a prompt, in order, under a token budget.

Pinned memories come first (most important, then newest), then the ranked results. A memory that does
not fit what is left of the budget is skipped rather than ending the pack, so one long memory does not
crowd out shorter ones after it. Pure and typed: the app's inspector shows it, and the API, CLI and MCP
server can build the same pack.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from memdeck.core.records import Memory, iso, now

DEFAULT_BUDGET = 1000
CHARS_PER_TOKEN = 4  # the usual rule of thumb for English text and BPE tokenizers
PINNED = "pinned"


class Ranked(Protocol):
    """A ranked recall result (``Scored``): all the pack needs is its memory."""

    @property
    def memory(self) -> Memory: ...


def _score_of(ranked: Ranked) -> float | None:
    score = getattr(ranked, "score", None)  # a Scored has one; the app's stand-ins may not
    return None if score is None else float(score)


def age_label(memory: Memory, at: datetime | None = None) -> str:
    """How old a memory is, short: ``45s``, ``12m``, ``5h``, ``3d``, ``7mo``, ``2y``."""
    if memory.created_at is None:
        return "?"
    seconds = max(0.0, ((at or now()) - memory.created_at).total_seconds())
    for unit, size in (("y", 365 * 86400), ("mo", 30 * 86400), ("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"


def render_entry(memory: Memory, at: datetime | None = None) -> str:
    """One memory as a prompt line: ``[id · tier · age · source] text`` (source: who wrote it)."""
    text = " ".join(memory.text.split())
    return f"[{memory.id} · {memory.tier} · {age_label(memory, at)} · {memory.agent or 'user'}] {text}"


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
    rendered: str = ""  # the entry as it goes into the prompt (empty: the memory's text)
    score: float | None = None  # the recall score of a ranked entry

    def to_json(self, at: datetime | None = None) -> dict[str, Any]:
        m = self.memory
        return {
            "id": m.id,
            "tier": m.tier,
            "text": self.rendered or m.text,
            "tokens": self.tokens,
            "pinned": self.source == PINNED,
            "score": None if self.score is None else round(self.score, 4),
            "source": m.agent,
            "rank": int(self.source.split()[1]) if self.source.startswith("rank ") else None,
            "age": age_label(m, at),
            "created_at": iso(m.created_at),
        }


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

    @property
    def text(self) -> str:
        """The pack as it goes into a prompt: one entry a line, pinned first."""
        return "\n".join(e.rendered or e.memory.text for e in self.included)

    def to_json(self, at: datetime | None = None) -> dict[str, Any]:
        return {
            "items": [e.to_json(at) for e in self.included],
            "tokens": self.used,
            "budget": self.budget,
            "left_out": [
                {
                    "id": e.memory.id,
                    "tier": e.memory.tier,
                    "tokens": e.tokens,
                    "pinned": e.source == PINNED,
                    "reason": "over budget",
                }
                for e in self.left_out
            ],
        }


def build_context_pack(
    pinned: Sequence[Memory],
    ranked: Sequence[Ranked],
    budget: int,
    *,
    count: Callable[[str], int] | None = None,
    render: Callable[[Memory], str] | None = None,
) -> ContextPack:
    """Pinned memories first (most important, then newest), then ranked results, within ``budget`` tokens.

    A memory that does not fit what is left is skipped, not the end of the pack. A ranked result that is
    also pinned appears once, as pinned; a memory with the same text (content hash) as one already in the
    pack is dropped. A negative budget counts as 0. ``render`` turns a memory into its prompt line (default: its
    text) and ``count`` counts that line's tokens (default: :func:`estimate_tokens`); with a tokenizer that
    is additive over lines (the embedding model's is), the pack's :attr:`ContextPack.text` costs at most
    ``budget`` tokens.
    """
    counter = count or estimate_tokens
    limit = max(int(budget), 0)
    ordered_pins = sorted(
        pinned, key=lambda m: (-(m.importance or 0.0), -(m.created_at.timestamp() if m.created_at else 0.0))
    )
    candidates: list[tuple[Memory, str, float | None]] = [(m, PINNED, None) for m in ordered_pins]
    candidates += [(r.memory, f"rank {i}", _score_of(r)) for i, r in enumerate(ranked, start=1)]
    entries: list[PackEntry] = []
    seen: set[str] = set()
    seen_text: set[str] = set()
    used = 0
    for memory, source, score in candidates:
        key = memory.content_sha256  # the same text stored twice (another tier, another episode) goes in once
        if memory.id in seen or (key and key in seen_text):
            continue
        seen.add(memory.id)
        if key:
            seen_text.add(key)
        rendered = render(memory) if render is not None else ""
        tokens = max(0, int(counter(rendered or memory.text)))
        fits = used + tokens <= limit
        if fits:
            used += tokens
        entries.append(PackEntry(memory, source, tokens, fits, used, rendered, score))
    return ContextPack(budget=limit, entries=tuple(entries))


__all__ = [
    "CHARS_PER_TOKEN",
    "DEFAULT_BUDGET",
    "ContextPack",
    "PackEntry",
    "Ranked",
    "age_label",
    "build_context_pack",
    "estimate_tokens",
    "render_entry",
]
