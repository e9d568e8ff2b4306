"""Expiry: when a memory stops being visible. A memory expires at its own ``expires_at`` or when its tier's
TTL (``ttl_days``, counted from the write or from the last use, ``ttl_from``) runs out; pinned memories
never expire by TTL. Every read filters with :func:`live_where` inside the LanceDB query, so a memory
disappears from recall, list, browse and export the moment it expires; maintenance then purges it.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from memdeck.core import filters as F
from memdeck.core.config import expiry_rules
from memdeck.core.errors import MemdeckError
from memdeck.core.records import now, parse_time
from memdeck.core.times import DURATION_PATTERN
from memdeck.core.times import parse_duration as parse_duration  # re-exported

if TYPE_CHECKING:
    from memdeck.core.storage.base import Tables


def expiry_time(
    expires_in: str | timedelta | None = None,
    expires_at: datetime | str | None = None,
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
    if DURATION_PATTERN.match(text):
        return expiry_time(expires_in=text, at=at)
    return expiry_time(expires_at=text)


def ttl_cutoff(store: Tables, tier: str, at: datetime) -> tuple[datetime | None, str]:
    days, start = expiry_rules(store.settings)[tier]
    return (at - timedelta(days=days) if days > 0 else None), start


def live_where(store: Tables, tier: str, at: datetime | None = None) -> str:
    """The filter that keeps only memories of ``tier`` not expired at ``at`` (default: now)."""
    at = at or now()
    cutoff, start = ttl_cutoff(store, tier, at)
    return F.live(at, cutoff, start)


def expired_where(store: Tables, tier: str, at: datetime | None = None) -> str:
    at = at or now()
    cutoff, start = ttl_cutoff(store, tier, at)
    return F.expired(at, cutoff, start)
