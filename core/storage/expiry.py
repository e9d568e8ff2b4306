"""Expiry: when a memory stops being visible. A memory expires at its own ``expires_at`` or when its tier's
TTL (``ttl_days``, counted from the write or from the last use, ``ttl_from``) runs out; pinned memories
never expire by TTL. Every read filters with :func:`live_where` inside the LanceDB query, so a memory
disappears from recall, list, browse and export the moment it expires; maintenance then purges it.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from memdeck.core import filters as F
from memdeck.core.config import expiry_rules
from memdeck.core.errors import MemdeckError
from memdeck.core.records import now, parse_time

if TYPE_CHECKING:
    from memdeck.core.store import Store

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")


def parse_duration(text: str) -> timedelta:
    """``90s``, ``30m``, ``12h``, ``7d``, ``2w`` as a timedelta; anything else is refused with one line."""
    match = _DURATION.match(str(text)) if isinstance(text, str) else None
    if match is None:
        raise MemdeckError(f"not a duration: {text!r}; use a number and a unit, e.g. 90s, 30m, 12h, 7d, 2w")
    seconds = float(match.group(1)) * _UNITS[match.group(2)]
    if not 0 < seconds < 100 * 365 * 86400:
        raise MemdeckError(f"duration {text!r} must be more than 0 and under 100 years")
    return timedelta(seconds=seconds)


def expiry_time(
    expires_in: str | timedelta | None = None, expires_at: datetime | str | None = None,
    at: datetime | None = None,
) -> datetime | None:
    """The moment from ``--expires-in`` (a duration from now) or ``--expires-at`` (a time); not both."""
    if expires_in is not None and expires_at is not None:
        raise MemdeckError("give either expires-in or expires-at, not both")
    if expires_in is not None:
        delta = expires_in if isinstance(expires_in, timedelta) else parse_duration(expires_in)
        return (at or now()) + delta
    return parse_time(expires_at)


def parse_expiry(text: str, at: datetime | None = None) -> datetime | None:
    """What a person types for a memory's own expiry: a duration from now (``7d``, ``12h``, as
    ``--expires-in``), an ISO 8601 time or date (as ``--expires-at``), or nothing (no expiry of its own)."""
    text = text.strip()
    if not text:
        return None
    if _DURATION.match(text):
        return expiry_time(expires_in=text, at=at)
    return expiry_time(expires_at=text)


def ttl_cutoff(store: Store, tier: str, at: datetime) -> tuple[datetime | None, str]:
    days, start = expiry_rules(store.config)[tier]
    return (at - timedelta(days=days) if days > 0 else None), start


def live_where(store: Store, tier: str, at: datetime | None = None) -> str:
    """The filter that keeps only memories of ``tier`` not expired at ``at`` (default: now)."""
    at = at or now()
    cutoff, start = ttl_cutoff(store, tier, at)
    return F.live(at, cutoff, start)


def expired_where(store: Store, tier: str, at: datetime | None = None) -> str:
    at = at or now()
    cutoff, start = ttl_cutoff(store, tier, at)
    return F.expired(at, cutoff, start)
