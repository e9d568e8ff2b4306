"""Configuration (TOML in the config directory) and named weight profiles."""

from __future__ import annotations

import copy
import dataclasses
import math
import os
import tomllib
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from memdeck.core import models as models_table
from memdeck.core import paths as locations
from memdeck.core.errors import MemdeckError
from memdeck.core.files import write_atomic_text

# --- settings: the sections of config.toml, typed and checked once --------------------------------------
#
# Each section is a frozen dataclass; each field carries its default (the only place it is defined) and its
# documentation, from which docs/configuration.md is generated (``python -m memdeck.core.config --write``).


def setting(
    default: Any,
    doc: str,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    choices: tuple[str, ...] | None = None,
) -> Any:
    """A setting's default, documentation and accepted range (checked by :meth:`Settings.from_mapping`)."""
    return field(
        default=default, metadata={"doc": doc, "minimum": minimum, "maximum": maximum, "choices": choices}
    )


TTL_FROM = ("created", "last_used")
BACKENDS = ("auto", "numpy", "torch")
RESOLUTIONS = ("flag", "newest_wins", "trusted_wins")


@dataclass(frozen=True)
class EmbeddingSettings:
    """The model that turns text into vectors."""

    model: str = setting(
        "all-MiniLM-L6-v2",
        "A sentence-transformers model name or path; `hash-384` (or `hash-N`) is a model-free hashing "
        "embedder for tests.",
    )
    device: str = setting("cpu", "Where the torch model runs (`cpu`, `cuda`, ...).")
    batch_size: int = setting(64, "Texts the torch model embeds per batch.", minimum=1)
    backend: str = setting(
        "auto",
        "How the packaged model runs: `numpy` (never imports torch), `torch`, or `auto`: numpy for fewer "
        "than `torch_batch_min` texts (queries, single writes), torch for larger batches.",
        choices=BACKENDS,
    )
    torch_batch_min: int = setting(
        64, 'With `backend = "auto"`: the batch size from which torch embeds.', minimum=1
    )
    models_dir: str = setting(
        "",
        "Where `memdeck model install` puts models and where they are loaded from; empty: `models` in the "
        "data directory.",
    )


@dataclass(frozen=True)
class RecallSettings:
    """How recall finds and ranks memories."""

    k: int = setting(
        10,
        "How many memories the app's inspector recalls at first (`memdeck recall --k` and MCP's `k` have "
        "their own defaults).",
        minimum=1,
    )
    candidate_multiplier: int = setting(
        4, "Candidates each channel fetches from each tier per memory returned, before scoring.", minimum=1
    )
    profile: str = setting("default", "The weight profile recall scores with (see profiles.toml).")
    keyword_statistics: str = setting(
        "principal",
        "`principal` scores BM25 with statistics from the recalling principal's rows only, so other "
        "principals' rows cannot move a score; `index` uses the full-text index's (every row).",
        choices=("principal", "index"),
    )
    engine: str = setting(
        "memory",
        "`memory` answers from an in-memory index of each scope's rows, kept in step with the tables; "
        "`lance` runs LanceDB's vector and full-text searches per tier (also what a larger scope uses), or, "
        "for a scope within `score_all_rows`, reads its rows for the one recall and scores them all.",
        choices=("memory", "lance"),
    )
    index_max_rows: int = setting(
        300_000,
        "Rows the in-memory recall index may hold in one process (about 2 KB a row: some 600 MB at most).",
        minimum=0,
    )
    index_sync_rows: int = setting(
        20_000,
        "A scope this large loads within its first recall (about 1 s); a scope with more rows is loaded in a "
        "background thread, LanceDB answering until it is.",
        minimum=0,
    )
    keyword_blend: float = setting(
        0.4,
        "Share of the keyword match in a memory's match (the rest is vector similarity).",
        minimum=0,
        maximum=1,
    )
    neighbour_weight: float = setting(
        0.2,
        "Weight in relevance of the best match among a memory's neighbouring turns in its episodic session.",
        minimum=0,
        maximum=100,
    )
    session_weight: float = setting(
        0.1,
        "Weight in relevance of the best match among the other candidates of the same episodic session.",
        minimum=0,
        maximum=100,
    )
    previous_keyword_weight: float = setting(
        0.5,
        "Share of the keyword match read over a memory together with the previous memory of its episodic "
        "session (a turn with the turn before it); 0 turns it off. Chosen on the tune half of LoCoMo.",
        minimum=0,
        maximum=1,
    )
    unnamed_query_weight: float = setting(
        0.5,
        "Share of the vector similarity taken from the query with the person names the entity graph knows "
        "left out; 0 turns it off. Chosen on the tune half of LoCoMo.",
        minimum=0,
        maximum=1,
    )
    time_cue_weight: float = setting(
        0.5,
        'When the query asks when ("When did ...", "What year ..."), a memory whose text states a time '
        "(yesterday, last week, a date, a weekday) has its match raised by this share of itself; 0 turns "
        "it off. Chosen on the tune half of LoCoMo.",
        minimum=0,
        maximum=1,
    )
    score_all_rows: int = setting(
        5_000,
        "When the rows a recall's filters keep (expiry aside) are at most this many, every one it may see is "
        "scored, not only each search's shortlist; 0 turns it off.",
        minimum=0,
    )


@dataclass(frozen=True)
class ThresholdSettings:
    """Cosine thresholds that depend on the embedding model. Each is set per model (the store's model in use
    decides: docs/models.md); a value here other than 0 overrides the model's."""

    near_duplicate: float = setting(
        0.0,
        "Two facts at least this close are merged by consolidation; 0: the model's (0.92 all-MiniLM-L6-v2, "
        "0.926 all-mpnet-base-v2).",
        minimum=0,
        maximum=1,
    )
    topic_gate: float = setting(
        0.0,
        "Below this two facts are not compared for a contradiction; 0: the model's (0.5 all-MiniLM-L6-v2, "
        "0.49 all-mpnet-base-v2).",
        minimum=0,
        maximum=1,
    )
    name_near_match: float = setting(
        0.0,
        "Two entity names at least this close (and spelled alike) may be one entity; 0: the model's "
        "(0.9 all-MiniLM-L6-v2, 0.81 all-mpnet-base-v2).",
        minimum=0,
        maximum=1,
    )


@dataclass(frozen=True)
class StoreSettings:
    """How the tables are laid out and indexed."""

    compact_fragment_threshold: int = setting(
        24, "Compact a table once it holds this many fragments; many small writes slow every scan.", minimum=1
    )
    ann_min_rows: int = setting(
        50_000,
        "Build an ANN index once a table holds this many rows: brute force grows linearly past it.",
        minimum=0,
    )
    ann_rebuild_unindexed_rows: int = setting(
        20_000, "Accepted for older config files; nothing reads it at present.", minimum=0
    )
    max_rows_per_fragment: int = setting(
        8192,
        "Fragments stay at most this many rows, so a purge rewrites a bounded amount of data.",
        minimum=256,
    )


@dataclass(frozen=True)
class TtlDaysSettings:
    """Days a memory of each tier lives (0: forever). Off by default: maintenance runs on its own inside the
    app and the MCP server, and a default TTL would silently purge every older memory of an existing store."""

    episodic: float = setting(0.0, "Days an episodic memory lives.", minimum=0)
    semantic: float = setting(0.0, "Days a semantic memory lives.", minimum=0)
    procedural: float = setting(0.0, "Days a procedural memory lives.", minimum=0)


@dataclass(frozen=True)
class TtlFromSettings:
    """What a tier's TTL counts from: `created` (the write) or `last_used` (the last recall that returned it,
    else the write). A memory past its TTL is hidden from every read at once and purged by maintenance."""

    episodic: str = setting("last_used", "What an episodic memory's TTL counts from.", choices=TTL_FROM)
    semantic: str = setting("created", "What a semantic memory's TTL counts from.", choices=TTL_FROM)
    procedural: str = setting("created", "What a procedural memory's TTL counts from.", choices=TTL_FROM)


@dataclass(frozen=True)
class LimitsSettings:
    """Memories each principal may hold per tier (0: no limit). Past it the least valuable memories (lowest
    importance x recency, never pinned) are forgotten with receipts."""

    episodic: int = setting(0, "Episodic memories per principal.", minimum=0)
    semantic: int = setting(0, "Semantic memories per principal.", minimum=0)
    procedural: int = setting(0, "Procedural memories per principal.", minimum=0)


@dataclass(frozen=True)
class SyncFolder:
    """A MEMORY.md-style folder kept in sync, and the principal its memories belong to ("" for
    ``[sync] principal``)."""

    path: str
    principal: str = ""


@dataclass(frozen=True)
class SyncSettings:
    """MEMORY.md-style folders kept in sync by the scheduler. A sync that would forget more than `max_remove`
    memories, or more than `max_remove_fraction` of the folder's, changes nothing without `--yes` (the
    scheduler never confirms)."""

    folders: tuple[SyncFolder, ...] = setting(
        (), 'Folders to sync: paths (then `principal` below) or `{path = "...", principal = "..."}` tables.'
    )
    principal: str = setting("", "The principal of folders given without one.")
    interval_s: float = setting(300.0, "Seconds between syncs (0 turns the task off).", minimum=0)
    max_remove: int = setting(50, "Memories one sync may forget without confirmation.", minimum=0)
    max_remove_fraction: float = setting(
        0.5, "Share of a folder's memories one sync may forget without confirmation.", minimum=0, maximum=1
    )


@dataclass(frozen=True)
class MaintenanceSettings:
    """The maintenance scheduler inside long-running processes (MCP server, app, `maintain --watch`)."""

    enabled: bool = setting(True, "Whether the scheduler runs at all.")
    evict_interval_s: float = setting(
        60.0, "Seconds between purges of expired memories (0 turns the task off).", minimum=0
    )
    consolidate_interval_s: float = setting(
        300.0, "Seconds between consolidations of idle sessions (0 turns the task off).", minimum=0
    )
    index_interval_s: float = setting(
        3600.0, "Seconds between compaction and index upkeep of the tables (0 turns the task off).", minimum=0
    )
    session_idle_minutes: float = setting(
        60.0,
        "Minutes idle after which a session is closed and consolidated (0: never closed for idling).",
        minimum=0,
    )
    retry_s: float = setting(30.0, "Seconds before a failed task runs again.", minimum=0)


@dataclass(frozen=True)
class TracesSettings:
    """The recall log (what each recall returned and why), read by `memdeck debug` and tuning."""

    enabled: bool = setting(True, "Whether recalls are logged.")
    retention_days: float = setting(90.0, "Days a trace is kept (0: no age limit).", minimum=0)
    max_traces: int = setting(100_000, "Traces kept, newest first (0: no limit).", minimum=0)
    max_candidates: int = setting(
        100,
        "Candidates logged per trace: the results and every memory a search channel returned, then the best "
        "others by score up to this many (a recall that scores every row has a thousand); 0: all.",
        minimum=0,
    )


@dataclass(frozen=True)
class RedactionSettings:
    """Secrets and personal data replaced by placeholders before a memory is stored."""

    enabled: bool = setting(True, "Whether writes are redacted.")
    allow_values: tuple[str, ...] = setting((), "Values never redacted (e.g. a support address).")
    allow_patterns: tuple[str, ...] = setting((), "Regular expressions of values never redacted.")
    disabled_principals: tuple[str, ...] = setting((), "Principals whose writes are not redacted.")


@dataclass(frozen=True)
class FormationFilterSettings:
    """Skips writes that carry nothing to remember ("ok thanks"); `force` still stores one."""

    enabled: bool = setting(False, "For a person's own writes.")
    agents: bool = setting(True, "For agents' writes through MCP.")


@dataclass(frozen=True)
class ConsolidateSettings:
    """What consolidation does with a contradiction."""

    resolution: str = setting(
        "flag",
        "`flag` it for review, or keep the newest (`newest_wins`) or the most trusted agent's (`trusted_wins`).",
        choices=RESOLUTIONS,
    )


@dataclass(frozen=True)
class GraphSettings:
    """The graph of entities and relations: extracted at write time (no model, deterministic), traversed at
    recall as a third channel from the query's entities."""

    enabled: bool = setting(True, "Whether writes extract entities and recall uses the graph.")
    depth: int = setting(1, "Relations recall follows from the query's entities.", minimum=0)


@dataclass(frozen=True)
class Settings:
    """Every setting of config.toml, checked once: build with :meth:`from_mapping` or :func:`load_settings`."""

    embedding: EmbeddingSettings = field(default_factory=EmbeddingSettings)
    recall: RecallSettings = field(default_factory=RecallSettings)
    thresholds: ThresholdSettings = field(default_factory=ThresholdSettings)
    store: StoreSettings = field(default_factory=StoreSettings)
    ttl_days: TtlDaysSettings = field(default_factory=TtlDaysSettings)
    ttl_from: TtlFromSettings = field(default_factory=TtlFromSettings)
    limits: LimitsSettings = field(default_factory=LimitsSettings)
    sync: SyncSettings = field(default_factory=SyncSettings)
    maintenance: MaintenanceSettings = field(default_factory=MaintenanceSettings)
    traces: TracesSettings = field(default_factory=TracesSettings)
    redaction: RedactionSettings = field(default_factory=RedactionSettings)
    formation_filter: FormationFilterSettings = field(default_factory=FormationFilterSettings)
    consolidate: ConsolidateSettings = field(default_factory=ConsolidateSettings)
    graph: GraphSettings = field(default_factory=GraphSettings)
    # Open sections, checked where they are read: [keys] maps any binding id to a key (the app), [storage]
    # takes the object store's option spellings (core/storage/objectstore.py). Copies: never change them.
    keys: dict[str, Any] = field(default_factory=dict)
    storage: dict[str, Any] = field(default_factory=dict)
    # The lines of unknown_settings for the mapping these settings were built from (warnings, not errors).
    unknown: tuple[str, ...] = field(default=(), compare=False)
    # Where they were read from, for messages ("config" when built from a mapping without a file).
    source: str = field(default="config", compare=False)

    @classmethod
    def from_mapping(cls, raw: Mapping[str, Any], source: str | Path | None = None) -> Settings:
        """Settings from a parsed config (missing sections and keys take their defaults). A value of the
        wrong type or out of range is refused with one line naming the key and ``source``; unknown sections
        and keys are kept as lines in ``unknown``."""
        where = str(source) if source is not None else "config"
        sections: dict[str, Any] = {}
        for name, kind in SECTIONS.items():
            body = raw.get(name)
            if body is None:
                continue
            if not isinstance(body, Mapping):
                raise MemdeckError(f"{where}: [{name}] must be a table, got {body!r}")
            sections[name] = _section(kind, name, body, where)
        for name in OPEN_SECTIONS:
            body = raw.get(name)
            if body is None:
                continue
            if not isinstance(body, Mapping):
                raise MemdeckError(f"{where}: [{name}] must be a table, got {body!r}")
            sections[name] = copy.deepcopy(dict(body))
        return cls(**sections, unknown=tuple(unknown_settings(raw)), source=where)

    def to_dict(self) -> dict[str, Any]:
        """The settings as config.toml's tables (every key, defaults included)."""
        out: dict[str, Any] = {}
        for name in SECTIONS:
            section = getattr(self, name)
            out[name] = {f.name: _plain(getattr(section, f.name)) for f in fields(section)}
        for name in OPEN_SECTIONS:
            out[name] = copy.deepcopy(getattr(self, name))
        return out

    def with_changes(self, **sections: Mapping[str, Any]) -> Settings:
        """These settings with some keys of some sections changed, checked as a config file would be:
        ``settings.with_changes(recall={"engine": "lance"})``. The unknown keys of the file stay reported."""
        changed = Settings.from_mapping(
            _merge(self.to_dict(), {k: dict(v) for k, v in sections.items()}), self.source
        )
        return dataclasses.replace(changed, unknown=self.unknown + changed.unknown)


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, SyncFolder):
        return {"path": value.path, "principal": value.principal} if value.principal else value.path
    return value


SECTIONS: dict[str, type] = {
    f.name: f.default_factory  # type: ignore[misc]
    for f in fields(Settings)
    if f.name not in ("keys", "storage", "unknown", "source")
}
OPEN_SECTIONS = frozenset({"keys", "storage"})
KNOWN_SECTIONS = frozenset({*SECTIONS, *OPEN_SECTIONS})
DEFAULTS: dict[str, Any] = Settings().to_dict()


def _range(meta: Mapping[str, Any]) -> str:
    low, high = meta.get("minimum"), meta.get("maximum")
    if low is not None and high is not None:
        return f" from {low:g} to {high:g}"
    if low is not None:
        return f" of at least {low:g}"
    return f" of at most {high:g}" if high is not None else ""


def _expected(kind: Any, meta: Mapping[str, Any]) -> str:
    """What a setting takes, in words (for error messages and the generated page)."""
    if meta.get("choices"):
        return "one of " + ", ".join(meta["choices"])
    if kind is bool:
        return "true or false"
    if kind is int:
        return "a whole number" + _range(meta)
    if kind is float:
        return "a number" + _range(meta)
    if kind is str:
        return "a string"
    if kind == tuple[SyncFolder, ...]:
        return "a list of paths or {path, principal} tables"
    return "a list of strings"


def _section(kind: type, name: str, body: Mapping[str, Any], where: str) -> Any:
    hints = typing.get_type_hints(kind)
    values = {}
    for f in fields(kind):
        if f.name in body:
            values[f.name] = _checked(hints[f.name], f.metadata, f"{name}.{f.name}", body[f.name], where)
    return kind(**values)


def _checked(kind: Any, meta: Mapping[str, Any], key: str, value: Any, where: str) -> Any:
    def bad() -> MemdeckError:
        return MemdeckError(f"{where}: {key} must be {_expected(kind, meta)}, got {value!r}")

    if kind is bool:
        if not isinstance(value, bool):
            raise bad()
        return value
    if kind is str:
        if not isinstance(value, str) or (meta.get("choices") and value not in meta["choices"]):
            raise bad()
        return value
    if kind in (int, float):
        if isinstance(value, bool) or not isinstance(value, int if kind is int else (int, float)):
            raise bad()
        if not math.isfinite(value):
            raise bad()
        low, high = meta.get("minimum"), meta.get("maximum")
        if (low is not None and value < low) or (high is not None and value > high):
            raise bad()
        return kind(value)
    if kind == tuple[SyncFolder, ...]:
        if not isinstance(value, list):
            raise bad()
        return tuple(_sync_folder(entry, key, where) for entry in value)
    # a list of strings; a single string is a list of one
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
        raise bad()
    return tuple(items)


def _sync_folder(entry: Any, key: str, where: str) -> SyncFolder:
    if isinstance(entry, str) and entry:
        return SyncFolder(entry)
    if isinstance(entry, Mapping):
        path, principal = entry.get("path"), entry.get("principal", "")
        extra = sorted(set(entry) - {"path", "principal"})
        if isinstance(path, str) and path and isinstance(principal, str) and not extra:
            return SyncFolder(path, principal)
    raise MemdeckError(f"{where}: each entry of {key} needs a path (and at most a principal), got {entry!r}")


def _suggest(name: str, choices: Any) -> str:
    import difflib

    close = difflib.get_close_matches(name, sorted(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def unknown_settings(config: Mapping[str, Any]) -> list[str]:
    """The sections and keys of a config that memdeck does not read, each as a line naming the nearest known
    one: a typo such as ``[recal]`` would otherwise be silently ignored."""
    lines: list[str] = []
    for section, value in config.items():
        if section not in KNOWN_SECTIONS:
            lines.append(f"unknown section [{section}]{_suggest(section, KNOWN_SECTIONS)}")
            continue
        if section in OPEN_SECTIONS or not isinstance(value, Mapping):
            continue
        known = [f.name for f in fields(SECTIONS[section])]
        for key in value:
            if key not in known:
                lines.append(f"unknown setting {section}.{key}{_suggest(key, known)}")
    return lines


def expiry_rules(settings: Settings) -> dict[str, tuple[float, str]]:
    """Per stored tier: (TTL in days, 0 for none; what it counts from)."""
    return {
        tier: (getattr(settings.ttl_days, tier), getattr(settings.ttl_from, tier))
        for tier in ("episodic", "semantic", "procedural")
    }


def _merge(base: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def _read(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise MemdeckError(f"cannot read config {path}: {exc}") from None


def load_config(path: Path | None = None) -> dict[str, Any]:
    """The defaults overlaid with the user's config.toml, if there is one, unchecked (see :func:`load_settings`)."""
    return _merge(DEFAULTS, _read(path or locations.config_file()))


def load_settings(path: Path | None = None) -> Settings:
    """The settings of the user's config.toml (the defaults where it has none, or there is no file), checked."""
    path = path or locations.config_file()
    return Settings.from_mapping(_read(path), path)


def as_settings(config: Settings | Mapping[str, Any] | None) -> Settings:
    """``config`` as checked settings: None reads config.toml; a mapping is checked as config.toml would be."""
    if config is None:
        return load_settings()
    return config if isinstance(config, Settings) else Settings.from_mapping(config)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        return f'"{escaped}"'
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} to TOML")


def _toml_key(key: str) -> str:
    if key and all(c.isalnum() or c in "-_" for c in key):
        return key
    return _toml_value(key)


def dumps_toml(data: dict[str, Any], prefix: str = "") -> str:
    """A small TOML writer for nested tables of scalars and lists (all memdeck writes)."""
    lines: list[str] = []
    tables: list[tuple[str, dict[str, Any]]] = []
    for key, value in data.items():
        if isinstance(value, dict):
            tables.append((key, value))
        else:
            lines.append(f"{_toml_key(key)} = {_toml_value(value)}")
    out = "\n".join(lines)
    for key, value in tables:
        name = f"{prefix}.{_toml_key(key)}" if prefix else _toml_key(key)
        body = dumps_toml(value, name)
        out += ("\n\n" if out else "") + f"[{name}]\n" + body
    return out


# --- weight profiles --------------------------------------------------------------------------------

COMPONENTS = ("relevance", "recency", "frequency", "importance", "pinned", "trust", "graph")
# Importance and trust count by default: a memory marked important, or written by an agent whose memories
# were found useful, ranks above an otherwise equal one. Their weights are small next to relevance, so they
# reorder memories about as relevant to the query and never lift an unrelated one above a relevant one;
# the relevance floor keeps unrelated memories out altogether. Chosen by measurement (bench/RESULTS-locomo.md).
DEFAULT_WEIGHTS: dict[str, float] = {
    "relevance": 0.6,
    "recency": 0.2,
    "frequency": 0.1,
    "importance": 0.1,
    "pinned": 0.1,
    "trust": 0.1,
    # How strongly the graph channel (memories that mention the query's entities or their neighbours)
    # counts. 0 by measurement: on LoCoMo every weight above 0 cost single-hop and adversarial questions
    # more than it gave multi-hop ones (bench/RESULTS-locomo.md); the channel still adds its candidates.
    "graph": 0.0,
}
# A memory whose relevance to the query is below this is not returned at all, however recent, frequent,
# important or pinned it is. Relevance is in [0, 1] (see core/recall/scoring.py).
DEFAULT_MIN_RELEVANCE = 0.1
# Recency half-life per tier, and "importance": how fast importance decays once recalls stop returning a
# memory (core/recall/scoring.py ``decayed``).
DEFAULT_HALF_LIFE_DAYS: dict[str, float] = {
    "episodic": 30.0,
    "semantic": 180.0,
    "procedural": 365.0,
    "importance": 90.0,
}


def model_thresholds(settings: Settings, model_name: str | None) -> models_table.Thresholds:
    """The cosine thresholds for a store whose vectors are made by ``model_name``: the model's (MiniLM's for a
    model memdeck does not know), each ``[thresholds]`` value other than 0 overriding its own."""
    own = models_table.thresholds_for(model_name)
    given = {
        name: value
        for name in ("near_duplicate", "topic_gate", "name_near_match")
        if (value := float(getattr(settings.thresholds, name))) > 0
    }
    return dataclasses.replace(own, **given)


# The parts of relevance's fusion a profile may set per embedding model (``[profiles.NAME.models.MODEL]``).
FUSION_KEYS = ("keyword_blend", "neighbour_weight", "session_weight")


def _model_key(name: str) -> str:
    """The short name of a model memdeck knows (``mpnet``), else the name as given."""
    known = models_table.find(name)
    return known.key if known is not None else name


def model_fusion() -> dict[str, dict[str, float]]:
    """Each known model's fusion weights (core/models.py), the per-model section of the built-in profile."""
    return {spec.key: dict(spec.fusion) for spec in models_table.MODELS.values() if spec.fusion}


@dataclass
class Profile:
    """A named set of score weights and per-tier recency half-lives, the relevance floor, and the fusion
    weights of relevance per embedding model.

    ``min_relevance`` applies when the profile sets it (``floor_given``: a profiles file or ``--weights``
    naming it, or a value other than the default); otherwise the store's model's floor does (core/models.py). ``models`` maps a model's short
    name to its fusion weights (``FUSION_KEYS``); a model without an entry takes memdeck's measured values
    for it, and a ``[recall]`` fusion setting given a value other than its default wins over both."""

    name: str = "default"
    weights: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    half_life_days: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_HALF_LIFE_DAYS))
    min_relevance: float = DEFAULT_MIN_RELEVANCE
    models: dict[str, dict[str, float]] = field(default_factory=model_fusion)
    floor_given: bool = False

    def __post_init__(self) -> None:
        # Weights given without a component (a profile written before it existed) weigh it 0, as scoring does.
        self.weights = {**dict.fromkeys(COMPONENTS, 0.0), **self.weights}
        # A floor other than the default was chosen (``Profile(min_relevance=0)``): it is the profile's own.
        if self.min_relevance != DEFAULT_MIN_RELEVANCE:
            self.floor_given = True

    def with_weights(self, **changes: float) -> Profile:
        return Profile(
            self.name,
            {**self.weights, **changes},
            dict(self.half_life_days),
            self.min_relevance,
            {k: dict(v) for k, v in self.models.items()},
            self.floor_given,
        )

    def floor(self, model_floor: float) -> float:
        """The relevance floor recall applies: the profile's own when it sets one, else the model's."""
        return self.min_relevance if self.floor_given else model_floor

    def fusion_for(self, model_name: str | None, recall: RecallSettings) -> tuple[float, float, float]:
        """keyword_blend, neighbour_weight and session_weight for a store on ``model_name``: a ``[recall]``
        value other than its default, else this profile's entry for the model, else the model's measured
        value (core/models.py), else the ``[recall]`` value."""
        key = _model_key(model_name) if model_name else ""
        mine = self.models.get(key) or {}
        known = models_table.find(model_name) if model_name else None
        built_in = dict(known.fusion) if known is not None else {}
        out = []
        for name in FUSION_KEYS:
            configured = float(getattr(recall, name))
            if configured != float(getattr(RecallSettings, name)):
                out.append(configured)
            else:
                out.append(float(mine.get(name, built_in.get(name, configured))))
        return out[0], out[1], out[2]

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "weights": dict(self.weights),
            "half_life_days": dict(self.half_life_days),
            "min_relevance": self.min_relevance,
        }
        if self.models:
            out["models"] = {k: dict(v) for k, v in self.models.items()}
        return out

    @classmethod
    def from_dict(cls, name: str, data: dict[str, Any]) -> Profile:
        weights = dict(DEFAULT_WEIGHTS)
        for key, value in (data.get("weights") or {}).items():
            weights[key] = _check_weight(key, value)
        half = dict(DEFAULT_HALF_LIFE_DAYS)
        for key, value in (data.get("half_life_days") or {}).items():
            if key not in half:
                raise MemdeckError(f"profile {name!r}: unknown tier {key!r} in half_life_days")
            half[key] = _check_half_life(key, value)
        floor = _check_min_relevance(data.get("min_relevance", DEFAULT_MIN_RELEVANCE))
        models = model_fusion()
        raw_models = data.get("models")
        if raw_models is not None and not isinstance(raw_models, dict):
            raise MemdeckError(f"profile {name!r}: models must be a table of model names")
        for model, body in (raw_models or {}).items():
            models[_model_key(str(model))] = {
                **models.get(_model_key(str(model)), {}),
                **_check_fusion(name, model, body),
            }
        return cls(name, weights, half, floor, models, "min_relevance" in data)


def _check_fusion(profile: str, model: str, body: Any) -> dict[str, float]:
    if not isinstance(body, dict):
        raise MemdeckError(f"profile {profile!r}: models.{model} must be a table of fusion weights")
    out: dict[str, float] = {}
    for key, value in body.items():
        if key not in FUSION_KEYS:
            raise MemdeckError(
                f"profile {profile!r}: unknown fusion weight {key!r} for {model}; known: {', '.join(FUSION_KEYS)}"
            )
        high = 1.0 if key == "keyword_blend" else 100.0
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise MemdeckError(
                f"profile {profile!r}: models.{model}.{key} must be a number, got {value!r}"
            ) from None
        if not (0.0 <= number <= high):
            raise MemdeckError(
                f"profile {profile!r}: models.{model}.{key} must be between 0 and {high:g}, got {value!r}"
            )
        out[key] = number
    return out


def _check_min_relevance(value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise MemdeckError(f"min_relevance must be a number between 0 and 1, got {value!r}") from None
    if not (0.0 <= number <= 1.0):
        raise MemdeckError(f"min_relevance must be between 0 and 1, got {value!r}")
    return number


def _check_weight(key: str, value: Any) -> float:
    if key not in COMPONENTS:
        raise MemdeckError(f"unknown weight {key!r}; known: {', '.join(COMPONENTS)}")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise MemdeckError(f"weight {key!r} must be a number, got {value!r}") from None
    if not (number == number) or number in (float("inf"), float("-inf")) or number < 0 or number > 100:
        raise MemdeckError(f"weight {key!r} must be between 0 and 100, got {value!r}")
    return number


def _check_half_life(key: str, value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise MemdeckError(f"half-life for {key!r} must be a number of days, got {value!r}") from None
    if not (0 < number < 1e6):
        raise MemdeckError(f"half-life for {key!r} must be a positive number of days, got {value!r}")
    return number


def parse_weights(spec: str, base: Profile | None = None) -> Profile:
    """Parse ``relevance=0.6,recency=0.2`` (and ``half_life.episodic=10``) on top of a profile."""
    start = base or Profile()
    profile = start.with_weights()
    if not spec.strip():
        raise MemdeckError("--weights is empty; expected e.g. relevance=0.6,recency=0.2")
    for part in spec.split(","):
        if not part.strip():
            continue
        if "=" not in part:
            raise MemdeckError(f"malformed weight {part!r}; expected name=value, e.g. relevance=0.6")
        key, _, value = part.partition("=")
        key = key.strip()
        if key.startswith("half_life."):
            tier = key.split(".", 1)[1]
            if tier not in profile.half_life_days:
                raise MemdeckError(f"unknown tier {tier!r} in {key!r}")
            profile.half_life_days[tier] = _check_half_life(tier, value.strip())
        elif key == "min_relevance":
            profile.min_relevance = _check_min_relevance(value.strip())
            profile.floor_given = True
        else:
            profile.weights[key] = _check_weight(key, value.strip())
    profile.name = "custom"
    return profile


# The profiles of each profiles file, by path, with the (mtime, size, inode) they were read at: every recall
# loads its profile, and parsing TOML each time cost more than a recall's scoring.
_PROFILES: dict[str, tuple[tuple[int, int, int], dict[str, Profile]]] = {}


_NO_FILE = {
    "default": Profile()
}  # the profiles without a profiles file (never handed out: callers get copies)


def _file_profiles(path: Path) -> dict[str, Profile]:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return _NO_FILE
    except OSError as exc:
        raise MemdeckError(f"cannot read profiles {path}: {exc}") from None
    stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
    cached = _PROFILES.get(str(path))
    if cached is not None and cached[0] == stamp:
        return cached[1]
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return _NO_FILE
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise MemdeckError(f"cannot read profiles {path}: {exc}") from None
    profiles = {"default": Profile()}
    for name, body in (data.get("profiles") or {}).items():
        profiles[name] = Profile.from_dict(name, body)
    _PROFILES[str(path)] = (stamp, profiles)
    return profiles


def load_profiles(path: Path | None = None) -> dict[str, Profile]:
    """Every profile of the profiles file, and ``default`` (fresh objects on each call: callers may change them)."""
    return {name: p.with_weights() for name, p in _file_profiles(path or locations.profiles_file()).items()}


def load_profile(name: str | None = None, path: Path | None = None) -> Profile:
    """One profile of the profiles file (a fresh object: the caller may change it)."""
    name = name or "default"
    profiles = _file_profiles(path or locations.profiles_file())
    if name not in profiles:
        raise MemdeckError(f"no weight profile named {name!r}; known: {', '.join(sorted(profiles))}")
    return profiles[name].with_weights()


def _saved(p: Profile) -> dict[str, Any]:
    """A profile as the profiles file holds it: the floor only when the profile sets one, the per-model
    fusion only where it differs from the models' measured values."""
    out: dict[str, Any] = {"weights": p.weights, "half_life_days": p.half_life_days}
    if p.floor_given:
        out["min_relevance"] = p.min_relevance
    built_in = model_fusion()
    models = {k: v for k, v in p.models.items() if v != built_in.get(k)}
    if models:
        out["models"] = models
    return out


def save_profile(profile: Profile, path: Path | None = None) -> Path:
    path = path or locations.profiles_file()
    if not profile.name or profile.name == "custom":
        raise MemdeckError("a saved profile needs a name other than 'custom'")
    current = dict(load_profiles(path).items())
    current[profile.name] = profile
    body = {"profiles": {name: _saved(p) for name, p in current.items()}}
    write_atomic_text(path, dumps_toml(body) + "\n", 0o644)
    return path


# --- the configuration page (docs/configuration.md), generated from the settings ------------------------

DOCS_HEADER = """# Configuration

<!-- generated by `python -m memdeck.core.config --write docs/configuration.md` from core/config.py; do not
edit by hand -->

`config.toml` in the platform config directory (or `$MEMDECK_HOME`). Every setting is optional: a missing
one takes its default. For example:

```toml
[embedding]
model = "all-MiniLM-L6-v2"   # or any sentence-transformers model name or path
backend = "auto"             # packaged model: numpy for queries and small writes until a batch of
                             # torch_batch_min (64) texts or more loads torch, which then embeds everything;
                             # "numpy" never imports torch; "torch" always

[ttl_days]
episodic = 365                # 0 (the default) keeps forever; see maintenance.md

[redaction]
allow_values = ["support@example.com"]

[recall]
engine = "memory"             # or "lance": LanceDB's vector and full-text searches per tier
index_max_rows = 300000       # rows the in-memory recall index may hold in one process
index_sync_rows = 20000       # a scope with more rows loads in a background thread; LanceDB answers meanwhile
```

A value of the wrong type or out of range (`k = "ten"`, `keyword_blend = 1.5`, `engine = "fast"`) is
refused when the file is read: every command, the app and `memdeck mcp` stop with one line naming the key
and the file, and nothing runs with a setting it did not ask for.

A section or key memdeck does not read (a typo such as `[recal]` or `recall.kk`) is not silently ignored:
every command that opens the store, and `memdeck mcp`, print one warning line on stderr naming the nearest
known setting, the app shows it as a notification, and `memdeck doctor` lists it as a problem. `[keys]` and
`[storage]` are checked where they are read (unknown binding ids, object-store options; see
[team-store.md](team-store.md) for `[storage]`).

Weight profiles (scoring weights, recency half-lives, the relevance floor) are not here: they live in
`profiles.toml` beside `config.toml` and are written by the inspector and `memdeck tune`.
"""

DOCS_FOOTER = """## Environment

Two environment variables of the libraries underneath are given other defaults, because they were measured
faster here (a value you set yourself wins): `OMP_WAIT_POLICY=PASSIVE` when the model loads (idle OpenMP
threads sleep instead of spinning and starving the search threads on a busy machine), and
`LANCE_FLAT_SEARCH_PERCENT_THRESHOLD=1` (LanceDB scores a filtered full-text search row by row only when the
filter keeps at most 1 % of the table, instead of 10 %: one principal of ten took 28 ms that way at 1M
memories, against 8 ms through the posting lists, with the same results). Both are in `bench/RESULTS.md`.
"""


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _default_text(value: Any) -> str:
    if value == () or value == []:
        return "`[]`"
    return f"`{_toml_value(value)}`"


def render_docs() -> str:
    """docs/configuration.md: the header, one table per section (key, accepted values, default, meaning),
    the footer."""
    lines = [DOCS_HEADER, "## Settings", ""]
    for name, kind in SECTIONS.items():
        lines += [f"### [{name}]", "", _cell(kind.__doc__ or ""), ""]
        lines += ["| Key | Takes | Default | Meaning |", "|---|---|---|---|"]
        hints = typing.get_type_hints(kind)
        for f in fields(kind):
            takes = _expected(hints[f.name], f.metadata)
            lines.append(
                f"| `{f.name}` | {_cell(takes)} | {_default_text(_plain(f.default))} | {_cell(f.metadata['doc'])} |"
            )
        lines.append("")
    lines.append(DOCS_FOOTER)
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    import argparse
    import sys

    parser = argparse.ArgumentParser(
        prog="python -m memdeck.core.config",
        description="The configuration page (docs/configuration.md), rendered from the settings.",
    )
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--write", metavar="FILE", help="write the page to FILE")
    group.add_argument("--check", metavar="FILE", help="exit 1 when FILE differs from the rendered page")
    args = parser.parse_args(argv)
    text = render_docs()
    if args.write:
        Path(args.write).write_text(text, encoding="utf-8")
        return 0
    if args.check:
        try:
            current = Path(args.check).read_text(encoding="utf-8")
        except OSError as exc:
            print(f"cannot read {args.check}: {exc.strerror}", file=sys.stderr)
            return 1
        if current != text:
            print(
                f"{args.check} is out of date: run python -m memdeck.core.config --write {args.check}",
                file=sys.stderr,
            )
            return 1
        return 0
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
