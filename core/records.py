"""Memory records, their Arrow schemas per tier, and the one boundary between rows and objects.

Nothing outside this module (and the store that calls it) touches raw LanceDB rows.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from collections.abc import Sequence
from dataclasses import MISSING, asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from memdeck.core.errors import MemdeckError
from memdeck.core.names import check_principal as check_principal  # re-exported
from memdeck.core.times import MAX_TIME, MIN_TIME, iso
from memdeck.core.times import now as now  # re-exported: the records' clock and time parser live in times
from memdeck.core.times import parse_time as parse_time

SCHEMA_VERSION = 4  # 2: expires_at on every tier table; 3: principal names normalised (NFC, trimmed);
# 4: type (preference, decision, fact, ...: memdeck.core.memtypes) on every tier table
STORED_TIERS = ("episodic", "semantic", "procedural")
TIERS = ("working", *STORED_TIERS)
STATES = ("active", "deprecated", "forgotten-pending")

TS = pa.timestamp("us", tz="UTC")


def new_id(tier: str) -> str:
    return f"{tier[:3]}_{uuid.uuid4().hex[:20]}"


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def normalise_text(text: str) -> str:
    """The form a semantic fact is stored and deduplicated in: whitespace folded, case kept. A text of one
    line is one line with single spaces; a text of several lines (a list, numbered steps, a code block) keeps
    its lines, each with its indentation and its other spaces folded, blank lines at the ends dropped and
    runs of them made one."""
    lines: list[str] = []
    for line in text.splitlines():
        words = line.split()
        if not words:
            if lines and lines[-1]:
                lines.append("")
            continue
        indent = line[: len(line) - len(line.lstrip())] if lines else ""
        lines.append(indent + " ".join(words))
    while lines and not lines[-1]:
        lines.pop()
    if len(lines) <= 1:
        return " ".join(text.split())
    return "\n".join(lines)


def base_fields(dim: int) -> list[pa.Field]:
    return [
        pa.field("id", pa.string(), nullable=False),
        pa.field("tier", pa.string(), nullable=False),
        pa.field("principal", pa.string(), nullable=False),
        pa.field("agent", pa.string()),
        pa.field("text", pa.string()),
        pa.field("importance", pa.float32()),
        pa.field("pinned", pa.bool_()),
        pa.field("state", pa.string()),
        pa.field("tags", pa.list_(pa.string())),
        pa.field("access_count", pa.int64()),
        pa.field("last_accessed", TS),
        pa.field("created_at", TS),
        pa.field("updated_at", TS),
        pa.field("content_sha256", pa.string()),
        pa.field("version", pa.int32()),
        pa.field("deprecation_reason", pa.string()),
        pa.field("superseded_by", pa.string()),
        pa.field("meta", pa.string()),
        pa.field("vector", pa.list_(pa.float32(), dim)),
        pa.field("expires_at", TS),  # schema 2: a memory's own expiry (None: its tier's TTL only)
        pa.field("type", pa.string()),  # schema 4: what the memory is (memdeck.core.memtypes), or None
    ]


# Columns added after schema 1, with the schema version that added them (Store._migrate adds them).
ADDED_COLUMNS: dict[str, tuple[int, pa.Field]] = {
    "expires_at": (2, pa.field("expires_at", TS)),
    "type": (4, pa.field("type", pa.string())),
}


TIER_FIELDS: dict[str, list[pa.Field]] = {
    "episodic": [
        pa.field("session", pa.string()),
        pa.field("started_at", TS),
        pa.field("ended_at", TS),
        pa.field("events", pa.string()),  # JSON list of events
        pa.field("derived_facts", pa.list_(pa.string())),
        pa.field("closed", pa.bool_()),
    ],
    "semantic": [
        pa.field("sources", pa.list_(pa.string())),
        pa.field("confidence", pa.float32()),
        pa.field("evidence_count", pa.int64()),
        pa.field("last_reinforced_at", TS),
    ],
    "procedural": [
        pa.field("name", pa.string()),
        pa.field("proc_version", pa.int32()),
        pa.field("steps", pa.list_(pa.string())),
        pa.field("learned_from", pa.list_(pa.string())),
    ],
}

# Edit history: every superseded text of a memory, purged with it on forget.
HISTORY = "history"  # the table of earlier texts (what an edit replaced), beside the tier tables
# The graph beside the tiers: entities and the relations between them, per principal (memdeck.core.graph).
ENTITIES = "entities"
RELATIONS = "relations"
GRAPH_TABLES = (ENTITIES, RELATIONS)
HISTORY_FIELDS = [
    pa.field("memory_id", pa.string(), nullable=False),
    pa.field("principal", pa.string(), nullable=False),
    pa.field("tier", pa.string()),
    pa.field("version", pa.int32()),
    pa.field("text", pa.string()),
    pa.field("agent", pa.string()),
    pa.field("edited_at", TS),
    pa.field("content_sha256", pa.string()),
]


def tier_schema(tier: str, dim: int) -> pa.Schema:
    return pa.schema(base_fields(dim) + TIER_FIELDS[tier], metadata={"memdeck.schema_version": "1"})


def history_schema() -> pa.Schema:
    return pa.schema(HISTORY_FIELDS, metadata={"memdeck.schema_version": "1"})


def check_tier(tier: str, *, stored: bool = True) -> str:
    allowed = STORED_TIERS if stored else TIERS
    if tier not in allowed:
        raise MemdeckError(f"unknown tier {tier!r}; use one of: {', '.join(allowed)}")
    return tier


def check_text(text: Any, what: str = "text") -> str:
    if not isinstance(text, str):
        raise MemdeckError(f"{what} must be a string")
    if not text.strip():
        raise MemdeckError(f"{what} is empty")
    if "\x00" in text:
        raise MemdeckError(f"{what} contains a NUL byte")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise MemdeckError(f"{what} is not valid UTF-8") from None
    return text


def check_importance(value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise MemdeckError(f"importance must be a number between 0 and 1, got {value!r}") from None
    if not 0.0 <= number <= 1.0:
        raise MemdeckError(f"importance must be between 0 and 1, got {value!r}")
    return number


def check_tags(tags: Any) -> list[str]:
    if tags is None:
        return []
    if isinstance(tags, str):
        tags = list(tags.split(","))
    if not isinstance(tags, (list, tuple, set, frozenset)):  # e.g. JSON `"tags": false` in an import
        raise MemdeckError("tags must be a list of strings")
    out = []
    for tag in tags:
        if not isinstance(tag, str):
            raise MemdeckError("tags must be strings")
        tag = tag.strip()
        if not tag:
            continue
        if len(tag) > 128 or "\x00" in tag:
            raise MemdeckError("a tag must be at most 128 characters with no NUL byte")
        try:
            tag.encode("utf-8")
        except UnicodeEncodeError:
            raise MemdeckError("a tag is not valid UTF-8") from None
        out.append(tag)
    if len(out) > 256:
        raise MemdeckError(f"at most 256 tags per memory, got {len(out)}")
    return list(dict.fromkeys(out))


def check_extra(extra: dict[str, Any], meta: Any = None) -> None:
    """Tier fields given by a caller (import, API, agent server) have the types their columns need, and
    every string in them and in ``meta`` is valid UTF-8 (JSON's ``\\ud800`` escapes decode to strings that
    are not)."""
    check_strings(extra, "a field")
    check_strings(meta, "meta")
    for name in ("session", "name"):
        value = extra.get(name)
        if value is not None and (not isinstance(value, str) or "\x00" in value):
            raise MemdeckError(f"{name} must be a string")
    for name in ("events", "derived_facts", "sources", "steps", "learned_from"):
        value = extra.get(name)
        if value is not None and not isinstance(value, (list, tuple)):
            raise MemdeckError(f"{name} must be a list")
    if not all(isinstance(f, str) for f in extra.get("derived_facts") or []):
        raise MemdeckError("derived_facts must be a list of strings")
    count = extra.get("evidence_count")
    bad_count = isinstance(count, bool) or not isinstance(count, int) or not 1 <= count < 2**62
    if count is not None and bad_count:
        raise MemdeckError("evidence_count must be a whole number of at least 1")
    confidence = extra.get("confidence")
    if confidence is not None:
        check_importance(confidence)  # the same 0..1 rule
        if isinstance(confidence, bool) or not isinstance(confidence, (int, float)):
            raise MemdeckError("confidence must be a number between 0 and 1")


def check_strings(value: Any, what: str, depth: int = 0) -> None:
    """Every string in a JSON-like value encodes as UTF-8 (a lone surrogate does not)."""
    if depth > 64:
        raise MemdeckError(f"{what} is nested too deeply")
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise MemdeckError(f"{what} holds text that is not valid UTF-8") from None
    elif isinstance(value, dict):
        for key, item in value.items():
            check_strings(key, what, depth + 1)
            check_strings(item, what, depth + 1)
    elif isinstance(value, (list, tuple)):
        for item in value:
            check_strings(item, what, depth + 1)


@dataclass
class Memory:
    """One stored memory of any tier, as the rest of memdeck sees it."""

    id: str
    tier: str
    principal: str
    text: str
    agent: str = "user"
    importance: float = 0.5
    pinned: bool = False
    state: str = "active"
    tags: list[str] = field(default_factory=list)
    access_count: int = 0
    last_accessed: datetime | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    content_sha256: str = ""
    version: int = 1
    deprecation_reason: str | None = None
    superseded_by: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    expires_at: datetime | None = None
    type: str | None = None  # preference, decision, fact, ... (memdeck.core.memtypes), None when unknown
    # episodic
    session: str | None = None
    started_at: datetime | None = None
    ended_at: datetime | None = None
    events: list[Any] = field(default_factory=list)
    derived_facts: list[str] = field(default_factory=list)
    closed: bool = True
    # semantic
    sources: list[str] = field(default_factory=list)
    confidence: float | None = None
    evidence_count: int | None = None
    last_reinforced_at: datetime | None = None
    # procedural
    name: str | None = None
    proc_version: int | None = None
    steps: list[str] = field(default_factory=list)
    learned_from: list[str] = field(default_factory=list)
    # Time columns whose stored value cannot be read (outside the years 1000-8999: written by a memdeck
    # from before times were validated); read back as None. Not a stored column.
    unreadable_times: list[str] = field(default_factory=list)

    @property
    def anchor_time(self) -> datetime | None:
        """The moment recency is measured from for this tier."""
        if self.tier == "semantic":
            return self.last_reinforced_at or self.updated_at or self.created_at
        if self.tier == "episodic":
            return self.ended_at or self.started_at or self.created_at
        return self.updated_at or self.created_at

    def to_json(self) -> dict[str, Any]:
        """The JSON shape the CLI, export and MCP print: only the fields that matter for the tier."""
        data = asdict(self)
        for key, value in list(data.items()):
            if isinstance(value, datetime):
                data[key] = iso(value)
        keep_base = {
            "id",
            "tier",
            "principal",
            "agent",
            "text",
            "importance",
            "pinned",
            "state",
            "tags",
            "access_count",
            "last_accessed",
            "created_at",
            "updated_at",
            "content_sha256",
            "version",
            "deprecation_reason",
            "superseded_by",
            "meta",
            "expires_at",
            "type",
        }
        tier_keys = {
            "episodic": {"session", "started_at", "ended_at", "events", "derived_facts", "closed"},
            "semantic": {"sources", "confidence", "evidence_count", "last_reinforced_at"},
            "procedural": {"name", "proc_version", "steps", "learned_from"},
        }.get(self.tier, set())
        out = {k: v for k, v in data.items() if k in keep_base or k in tier_keys}
        if self.tier == "episodic":
            out["summary"] = self.text
        if self.tier == "procedural":
            out["deprecated"] = self.state == "deprecated"
        return out


# --- the row boundary -------------------------------------------------------------------------------

_MEMORY_FIELDS = set(Memory.__dataclass_fields__)


def memory_to_row(memory: Memory, vector: Any) -> dict[str, Any]:
    row = {k: getattr(memory, k) for k in _MEMORY_FIELDS if k not in ("meta", "events")}
    row["meta"] = json.dumps(memory.meta, ensure_ascii=False, sort_keys=True) if memory.meta else None
    row["events"] = json.dumps(memory.events, ensure_ascii=False) if memory.events else None
    row["vector"] = vector
    allowed = {f.name for f in base_fields(1)} | {f.name for f in TIER_FIELDS[memory.tier]}
    return {k: v for k, v in row.items() if k in allowed}


def readable_rows(table: pa.Table) -> list[dict[str, Any]]:
    """Rows of a table as dicts, with every time outside the years 1000-8999 (which Python cannot hold, or
    :func:`parse_time` refuses) read as None and named in the row's ``unreadable_times``."""
    low, high = int(MIN_TIME.timestamp()) * 1_000_000, int(MAX_TIME.timestamp()) * 1_000_000
    bad: dict[str, list[bool]] = {}
    for i, f in enumerate(table.schema):
        if not pa.types.is_timestamp(f.type):
            continue
        micros = pc.cast(pc.cast(table.column(i), pa.timestamp("us", tz=f.type.tz)), pa.int64())
        outside = pc.fill_null(pc.or_(pc.less(micros, low), pc.greater_equal(micros, high)), False)
        if pc.any(outside).as_py():
            bad[f.name] = outside.to_pylist()
            table = table.set_column(i, f, pc.if_else(outside, pa.scalar(None, f.type), table.column(i)))
    rows = table.to_pylist()
    for name, mask in bad.items():
        for row, is_bad in zip(rows, mask, strict=True):
            if is_bad:
                row.setdefault("unreadable_times", []).append(name)
    return rows


def row_to_memory(row: dict[str, Any]) -> Memory:
    kwargs: dict[str, Any] = {}
    for key, value in row.items():
        if key not in _MEMORY_FIELDS:
            continue
        if key == "meta":
            value = json.loads(value) if value else {}
        elif key == "events":
            value = json.loads(value) if value else []
        elif value is None and key in ("tags", "derived_facts", "sources", "steps", "learned_from"):
            value = []
        elif isinstance(value, datetime) and value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        kwargs[key] = value
    if kwargs.get("importance") is not None:
        kwargs["importance"] = round(float(kwargs["importance"]), 4)
    if kwargs.get("confidence") is not None:
        kwargs["confidence"] = round(float(kwargs["confidence"]), 4)
    for key in ("pinned", "closed"):
        if kwargs.get(key) is None:
            kwargs.pop(key, None)
    for key in ("access_count", "version"):
        if kwargs.get(key) is None:
            kwargs.pop(key, None)
    return Memory(**kwargs)


_LIST_FIELDS = ("tags", "derived_facts", "sources", "steps", "learned_from")
_ROUNDED = ("importance", "confidence")
_KEEP_DEFAULT_WHEN_NULL = ("pinned", "closed", "access_count", "version")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MIN_MICROS = (MIN_TIME - _EPOCH) // timedelta(microseconds=1)
MAX_MICROS = (MAX_TIME - _EPOCH) // timedelta(microseconds=1)


def table_to_memories(table: pa.Table) -> list[Memory]:
    """The rows of a table as Memory objects, column by column: what ``row_to_memory`` over
    ``readable_rows`` gives (times outside the years 1000-8999 read as None and named in
    ``unreadable_times``), in about a fifth of the time. Recall converts every candidate it reads."""
    n = table.num_rows
    columns: dict[str, list[Any]] = {}
    unreadable: dict[int, list[str]] = {}
    for name, col in zip(table.column_names, table.columns, strict=True):
        if name not in _MEMORY_FIELDS:
            continue
        if pa.types.is_timestamp(col.type):
            times: list[Any] = []
            for i, v in enumerate(
                pc.cast(pc.cast(col, pa.timestamp("us", tz=col.type.tz)), pa.int64()).to_pylist()
            ):
                if v is None:
                    times.append(None)
                elif MIN_MICROS <= v < MAX_MICROS:
                    times.append(_EPOCH + timedelta(microseconds=v))
                else:
                    times.append(None)
                    unreadable.setdefault(i, []).append(name)
            columns[name] = times
            continue
        values = col.to_pylist()
        if name in ("meta", "events"):
            values = [json.loads(v) if v else ({} if name == "meta" else []) for v in values]
        elif name in _LIST_FIELDS:
            values = [[] if v is None else v for v in values]
        elif name in _ROUNDED:
            values = [None if v is None else round(float(v), 4) for v in values]
        columns[name] = values
    defaults = {
        name: f.default
        for name, f in Memory.__dataclass_fields__.items()
        if f.default is not MISSING and name not in columns
    }
    factories = [
        (name, f.default_factory)
        for name, f in Memory.__dataclass_fields__.items()
        if f.default_factory is not MISSING and name not in columns
    ]
    names = list(columns)
    nullable_defaults = [
        (name, Memory.__dataclass_fields__[name].default)
        for name in _KEEP_DEFAULT_WHEN_NULL
        if name in columns
    ]
    out = []
    for i, values in enumerate(zip(*columns.values(), strict=True) if names else [() for _ in range(n)]):
        fields = dict(defaults)
        for name, factory in factories:
            fields[name] = factory()
        fields.update(zip(names, values, strict=True))
        for name, default in nullable_defaults:
            if fields[name] is None:
                fields[name] = default
        if i in unreadable:
            fields["unreadable_times"] = unreadable[i]
        memory = Memory.__new__(Memory)
        memory.__dict__.update(fields)
        out.append(memory)
    return out


# Columns a browse page needs (no vector, no large JSON); paging at 1M reads only these.
LIST_COLUMNS = [
    "id",
    "tier",
    "principal",
    "agent",
    "text",
    "importance",
    "pinned",
    "state",
    "tags",
    "access_count",
    "last_accessed",
    "created_at",
    "updated_at",
    "content_sha256",
    "version",
    "superseded_by",
    "expires_at",
    "type",
]
TIER_LIST_COLUMNS = {
    "episodic": ["session", "started_at", "ended_at"],
    "semantic": ["evidence_count", "confidence", "last_reinforced_at", "sources"],
    "procedural": ["name", "proc_version"],
}


@dataclass
class WriteResult:
    """What one remember() did: the stored memory and whether it was new, reinforced or skipped."""

    memory: Memory | None
    action: str  # "added", "reinforced", "versioned", "skipped", "exists" (its key is taken: nothing written)
    reason: str | None = None


@dataclass
class MemoryInput:
    """One memory to write. ``extra`` holds tier fields (session, events, sources, name, steps, ...)."""

    text: str
    tier: str
    principal: str
    agent: str = "user"
    tags: Sequence[str] = ()
    importance: float = 0.5
    pinned: bool = False
    meta: dict[str, Any] = field(default_factory=dict)
    created_at: datetime | str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    force: bool = False
    expires_at: datetime | str | None = None
    key: str | None = None  # a caller's key, kept as a tag: see Store.remember
    # Whether the formation filter screens this write: None follows formation_filter.enabled (a person's own
    # writes, off by default); agents' write paths pass formation_filter.agents (on by default).
    screen: bool | None = None


# --- vault tokens in text ---------------------------------------------------------------------------------

VAULT_TOKEN_RE = re.compile(r"<([A-Z][A-Z0-9]{0,15}(?:_[A-Z][A-Z0-9]{0,15})?)_(\d{1,9})>")

# What a token looks like to a reader: ``<SSN_1>``. Text that arrives looking like one was not issued by
# memdeck for that write; it is neutralised (U+2039 SSN_1 U+203A) so that ``reveal`` never resolves it.
TOKEN_SHAPED_RE = re.compile(r"<([A-Za-z][A-Za-z0-9]{0,15}(?:_[A-Za-z][A-Za-z0-9]{0,15})?)_(\d{1,9})>")


def tokens_in(text: str) -> set[str]:
    """The vault tokens (``<KIND_n>``) that appear in text."""
    return {m.group(0) for m in VAULT_TOKEN_RE.finditer(text)} if "<" in text else set()


def token_free_hashes(text: str) -> list[str]:
    """Hashes (plain and normalised) of a text whose vault tokens are reduced to their kind (``<SSN_3>`` ->
    ``<SSN>``); empty when it holds none. A secret said again after it was forgotten is stored under a new
    token number (a pruned number is never issued again), so only this form matches the forgotten text on
    every machine, whichever vault holds the value."""
    if not tokens_in(text):
        return []
    masked = VAULT_TOKEN_RE.sub(lambda m: f"<{m.group(1)}>", text)
    return list(dict.fromkeys((sha256_text(masked), sha256_text(normalise_text(masked)))))


def neutralise_tokens(text: str, keep: set[str] | frozenset[str] = frozenset()) -> str:
    """Text with every token-shaped part except those in ``keep`` written with single guillemets (U+2039, U+203A), so that only
    tokens memdeck issued itself (by redacting, or carried over from a stored memory) resolve on reveal."""
    if "<" not in text:
        return text
    return TOKEN_SHAPED_RE.sub(
        lambda m: m.group(0) if m.group(0) in keep else f"\u2039{m.group(1)}_{m.group(2)}\u203a", text
    )


def neutralise_value(value: object, keep: set[str] | frozenset[str] = frozenset()) -> object:
    """:func:`neutralise_tokens` over every string of a JSON-like value (dict keys included)."""
    if isinstance(value, str):
        return neutralise_tokens(value, keep)
    if isinstance(value, dict):
        return {
            neutralise_tokens(k, keep) if isinstance(k, str) else k: neutralise_value(v, keep)
            for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        return type(value)(neutralise_value(v, keep) for v in value)
    return value
