"""The one place LanceDB filter strings are built.

LanceDB filters are SQL-like strings with no bind parameters, so every value that came from outside is
quoted here as ``lancedb.util.value_to_sql`` quotes it and every column name is checked against a fixed list.
Callers pass values, never text to splice.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from memdeck.core.errors import MemdeckError

_COLUMNS = {
    "id",
    "tier",
    "principal",
    "agent",
    "state",
    "pinned",
    "session",
    "name",
    "content_sha256",
    "created_at",
    "updated_at",
    "memory_id",
    "superseded_by",
    "expires_at",
    "last_accessed",
    "closed",
    "importance",
    "type",
}


def _column(name: str) -> str:
    if name not in _COLUMNS:
        raise ValueError(f"filter on unknown column {name!r}")
    return name


def value_to_sql(value: object) -> str:
    """``lancedb.util.value_to_sql``'s quoting, here for the types memdeck filters on (a string's single
    quotes doubled; booleans, whole numbers and floats as LanceDB writes them): importing ``lancedb.util``
    imports all of LanceDB, which a read through pylance never needs. Any other type goes to LanceDB's."""
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "CAST('NaN' AS DOUBLE)"
        if math.isinf(value):
            return "CAST('Infinity' AS DOUBLE)" if value > 0 else "CAST('-Infinity' AS DOUBLE)"
        return str(value)
    if value is None:
        return "NULL"
    from lancedb.util import value_to_sql as lancedb_value_to_sql

    return str(lancedb_value_to_sql(value))


def literal(value: object) -> str:
    if isinstance(value, datetime):
        from memdeck.core.records import iso

        return f"timestamp {value_to_sql(iso(value).replace('Z', '+00:00'))}"  # type: ignore[union-attr]
    if isinstance(value, str):
        # value_to_sql doubles single quotes. A NUL would end the string early in the engine, and
        # no stored key holds one (writes refuse it), so a value with a NUL is refused, not stripped.
        if "\x00" in value:
            raise MemdeckError("a filter value must not contain a NUL byte")
        return value_to_sql(value)
    return value_to_sql(value)


def eq(column: str, value: object) -> str:
    return f"{_column(column)} = {literal(value)}"


def ne(column: str, value: object) -> str:
    return f"{_column(column)} != {literal(value)}"


def is_in(column: str, values: Iterable[object]) -> str:
    items = list(values)
    if not items:
        return "false"
    return f"{_column(column)} IN ({', '.join(literal(v) for v in items)})"


def ge(column: str, value: object) -> str:
    return f"{_column(column)} >= {literal(value)}"


def le(column: str, value: object) -> str:
    return f"{_column(column)} <= {literal(value)}"


def expired(at: datetime, ttl_cutoff: datetime | None, ttl_from: str = "created") -> str:
    """Rows past their own ``expires_at`` at ``at``, or (not pinned) whose TTL anchor is at or before
    ``ttl_cutoff``: the write time, or for ``last_used`` the last recall that returned it, else the write."""
    parts = [f"(expires_at IS NOT NULL AND expires_at <= {literal(at)})"]
    if ttl_cutoff is not None:
        anchor = "coalesce(last_accessed, created_at)" if ttl_from == "last_used" else "created_at"
        parts.append(f"((pinned IS NULL OR pinned = false) AND {anchor} <= {literal(ttl_cutoff)})")
    return " OR ".join(parts)


def live(at: datetime, ttl_cutoff: datetime | None, ttl_from: str = "created") -> str:
    """The rows :func:`expired` does not match (what every read shows)."""
    return f"NOT ({expired(at, ttl_cutoff, ttl_from)})"


def all_of(*parts: str | None) -> str | None:
    kept = [p for p in parts if p]
    if not kept:
        return None
    return " AND ".join(f"({p})" for p in kept)


def tag_contains(tag: str) -> str:
    return f"array_has_any(tags, [{literal(tag)}])"


@dataclass(frozen=True)
class RecallFilter:
    """What a recall may be narrowed by, applied inside the LanceDB queries (before anything is scored).

    ``since``/``until`` bound the write time (inclusive), every tag in ``tags`` must be on the memory,
    ``written_by`` is the writing agent, ``min_importance`` the lowest importance kept, no tag in
    ``without_tags`` may be on it, and ``types`` (memory types, :mod:`memdeck.core.memtypes`) keeps
    memories of any one of them. Build it with :meth:`of`, which checks every value and raises one clear
    MemdeckError.
    """

    since: datetime | None = None
    until: datetime | None = None
    tags: tuple[str, ...] = ()
    written_by: str | None = None
    min_importance: float | None = None
    without_tags: tuple[str, ...] = ()
    types: tuple[str, ...] = ()

    @classmethod
    def of(
        cls,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        tags: Sequence[str] | str | None = None,
        written_by: str | None = None,
        min_importance: float | str | None = None,
        without_tags: Sequence[str] = (),
        types: Sequence[str] | str | None = None,
    ) -> RecallFilter:
        from memdeck.core.names import check_type
        from memdeck.core.records import parse_time

        start = parse_time(since) if since not in (None, "") else None
        end = parse_time(until) if until not in (None, "") else None
        if end is not None and isinstance(until, str) and len(until.strip()) == 10:
            end = end + timedelta(days=1) - timedelta(microseconds=1)  # a bare date: through its last moment
        if start is not None and end is not None and start > end:
            raise MemdeckError("--since is after --until: nothing could match")
        wanted = (tags,) if isinstance(tags, str) else tuple(tags or ())
        for tag in (*wanted, *without_tags):
            if not isinstance(tag, str) or not tag.strip():
                raise MemdeckError("a tag filter must be a non-empty string")
        if written_by is not None and (not isinstance(written_by, str) or not written_by.strip()):
            raise MemdeckError("--written-by needs an agent name")
        floor = None
        if min_importance not in (None, ""):
            try:
                floor = float(min_importance)
            except (TypeError, ValueError):
                raise MemdeckError(
                    f"--min-importance must be a number between 0 and 1, got {min_importance!r}"
                ) from None
            if not (0.0 <= floor <= 1.0):
                raise MemdeckError(f"--min-importance must be between 0 and 1, got {min_importance!r}")
        kinds = (types,) if isinstance(types, str) else tuple(types or ())
        checked = tuple(dict.fromkeys(t for t in (check_type(k) for k in kinds) if t is not None))
        return cls(
            start,
            end,
            tuple(t.strip() for t in wanted),
            written_by.strip() if written_by else None,
            floor,
            tuple(t.strip() for t in without_tags),
            checked,
        )

    @property
    def empty(self) -> bool:
        return self == RecallFilter()

    def where(self) -> str | None:
        return all_of(
            ge("created_at", self.since) if self.since is not None else None,
            le("created_at", self.until) if self.until is not None else None,
            *(tag_contains(t) for t in self.tags),
            eq("agent", self.written_by) if self.written_by is not None else None,
            ge("importance", float(self.min_importance)) if self.min_importance is not None else None,
            *(f"tags IS NULL OR NOT {tag_contains(t)}" for t in self.without_tags),
            is_in("type", self.types) if self.types else None,
        )

    def to_json(self) -> dict[str, object]:
        from memdeck.core.records import iso

        return {
            "since": iso(self.since) if self.since else None,
            "until": iso(self.until) if self.until else None,
            "tags": list(self.tags),
            "written_by": self.written_by,
            "min_importance": self.min_importance,
            "without_tags": list(self.without_tags),
            "types": list(self.types),
        }


@dataclass(frozen=True)
class Scope:
    """Whose memories a caller may see. Every read path takes one and filters with it before scoring."""

    principals: tuple[str, ...] | None  # None: every principal (an operator opening the whole store)

    @classmethod
    def of(cls, *principals: str) -> Scope:
        if not principals:
            raise ValueError("a scope names at least one principal; use Scope.everyone() for all")
        from memdeck.core.names import check_principal  # not records', which loads pyarrow

        return cls(tuple(check_principal(p) for p in principals))  # names match as they are stored

    @classmethod
    def everyone(cls) -> Scope:
        return cls(None)

    @property
    def is_everyone(self) -> bool:
        return self.principals is None

    def allows(self, principal: str) -> bool:
        return self.principals is None or principal in self.principals

    def where(self, column: str = "principal") -> str | None:
        if self.principals is None:
            return None
        if len(self.principals) == 1:
            return eq(column, self.principals[0])
        return is_in(column, self.principals)

    def narrowed(self, principals: Sequence[str] | None) -> Scope:
        """This scope limited further to the given principals (never widened)."""
        if not principals:
            return self
        from memdeck.core.names import check_principal  # not records', which loads pyarrow

        names = tuple(check_principal(p) for p in principals)
        if self.principals is None:
            return Scope(names)
        return Scope(tuple(p for p in names if p in self.principals))
