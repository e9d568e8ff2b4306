"""Times as memdeck reads and writes them: now in UTC, ISO 8601 in and out, durations such as ``7d``.

The standard library only, so a command line's argument types can parse a date or a duration without
loading the store's Arrow schemas.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

from memdeck.core.errors import MemdeckError


def now() -> datetime:
    return datetime.now(UTC)


def iso(value: datetime | None) -> str | None:
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


# Times memdeck stores: far enough inside datetime's range that converting to UTC, adding a TTL or a
# half-life, and subtracting from now never overflow.
MIN_TIME = datetime(1000, 1, 1, tzinfo=UTC)
MAX_TIME = datetime(9000, 1, 1, tzinfo=UTC)


def parse_time(value: Any) -> datetime | None:
    """A time from an ISO 8601 string, a Unix timestamp or a datetime, in UTC; MemdeckError when it is not
    one or lies outside the years 1000-8999 (the one place every write path validates times)."""
    if value is None or value == "":
        return None
    parsed: datetime
    if isinstance(value, datetime):
        parsed = value if value.tzinfo else value.replace(tzinfo=UTC)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            parsed = datetime.fromtimestamp(float(value), UTC)
        except (OverflowError, ValueError, OSError):
            raise MemdeckError(f"time out of range: {value!r}") from None
    elif isinstance(value, str):
        text = value.strip().replace("Z", "+00:00")
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError:
            raise MemdeckError(f"not an ISO 8601 time: {value[:64]!r}") from None
        parsed = parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    else:
        raise MemdeckError(f"not a time: {str(value)[:64]!r}")
    try:
        utc = parsed.astimezone(UTC)
    except (OverflowError, ValueError):
        raise MemdeckError(f"time out of range: {str(value)[:64]!r}") from None
    if not MIN_TIME <= utc < MAX_TIME:
        raise MemdeckError(f"time out of range (years 1000-8999): {str(value)[:64]!r}")
    return utc


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
DURATION_PATTERN = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")


def parse_duration(text: str) -> timedelta:
    """``90s``, ``30m``, ``12h``, ``7d``, ``2w`` as a timedelta; anything else is refused with one line."""
    match = DURATION_PATTERN.match(str(text)) if isinstance(text, str) else None
    if match is None:
        raise MemdeckError(f"not a duration: {text!r}; use a number and a unit, e.g. 90s, 30m, 12h, 7d, 2w")
    seconds = float(match.group(1)) * _UNITS[match.group(2)]
    if not 0 < seconds < 100 * 365 * 86400:
        raise MemdeckError(f"duration {text!r} must be more than 0 and under 100 years")
    return timedelta(seconds=seconds)
