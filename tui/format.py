"""Small text helpers the screens share: ages, one-line cells, and the date filter syntax."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from rich.cells import cell_len, set_cell_size

_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")
# The units the ages in the tables use and the command line takes: m is minutes, mo months.
_RELATIVE = re.compile(r"^(\d+)\s*(mo|[mhdwy])$")
_UNIT_DAYS = {"m": 1 / 1440, "h": 1 / 24, "d": 1, "w": 7, "mo": 30, "y": 365}


def one_line(text: str | None) -> str:
    """Text for a table cell: control characters (newlines, escapes) become spaces."""
    return _CONTROL.sub(" ", text or "").strip()


def fit(text: str, width: int, *, right: bool = False) -> str:
    """Pad or cut ``text`` to exactly ``width`` terminal cells, marking a cut with an ellipsis."""
    if width <= 0:
        return ""
    length = cell_len(text)
    if length <= width:
        return " " * (width - length) + text if right else set_cell_size(text, width)
    return set_cell_size(text, width - 1) + "…"


def age(when: datetime | None, now: datetime) -> str:
    """A short age such as ``5m``, ``3h``, ``12d``, ``4mo``, ``2y``."""
    if when is None:
        return "—"
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return span((now - when).total_seconds())


def span(seconds: float) -> str:
    """A short length of time: ``now`` (under a minute), ``5m``, ``3h``, ``12d``, ``4mo``, ``2y``."""
    seconds = max(seconds, 0.0)
    if seconds < 60:
        return "now"
    if seconds < 3600:
        return f"{int(seconds // 60)}m"
    if seconds < 86400:
        return f"{int(seconds // 3600)}h"
    days = seconds / 86400
    if days < 60:
        return f"{int(days)}d"
    if days < 730:
        return f"{int(days // 30)}mo"
    return f"{int(days // 365)}y"


def left(when: datetime, now: datetime) -> str:
    """Time left until ``when`` as :func:`age` writes it (``6d``), or ``expired`` once it has passed."""
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    if when <= now:
        return "expired"
    return span((when - now).total_seconds())


def expiry_text(when: datetime | None, now: datetime, ttl: tuple[float, str] | None = None) -> str:
    """A memory's expiry for the detail view: its own (``2026-01-08 09:00:00 UTC (in 6d)``), else its
    tier's TTL (``ttl``: days, what they count from) when it has one, else ``never``."""
    if when is not None:
        remaining = left(when, now)
        return f"{stamp(when)} ({remaining if remaining == 'expired' else 'in ' + remaining})"
    if ttl and ttl[0] > 0:
        start = "its creation" if ttl[1] == "created" else "its last use"
        return f"none of its own; its tier's TTL: {ttl[0]:g} days after {start}"
    return "never"


def stamp(when: datetime | None) -> str:
    """A full UTC timestamp for the detail view."""
    if when is None:
        return "—"
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def parse_date(text: str, now: datetime, *, end_of_day: bool = False) -> datetime | None:
    """A date filter: ``2025-03-01``, an ISO time, or an age such as ``30m``, ``12h``, ``7d``, ``2w``, ``3mo``,
    ``1y`` (``m`` is minutes, as in the tables' ages and on the command line).

    Returns None for an empty field; raises ValueError with a message a person can act on.
    """
    text = text.strip().lower()
    if not text:
        return None
    rel = _RELATIVE.match(text)
    if rel:
        return now - timedelta(days=int(rel.group(1)) * _UNIT_DAYS[rel.group(2)])
    try:
        parsed = datetime.fromisoformat(text.replace("z", "+00:00"))
    except ValueError:
        raise ValueError(f"not a date: {text!r} (use 2025-03-01 or 30m, 12h, 7d, 2w, 3mo, 1y)") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    if end_of_day and len(text) == 10:  # a bare date as an upper bound includes that whole day
        parsed += timedelta(days=1, microseconds=-1)
    return parsed
