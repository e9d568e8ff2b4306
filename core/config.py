"""Configuration (TOML in the config directory) and named weight profiles."""

from __future__ import annotations

import copy
import logging
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memdeck.core import paths as locations
from memdeck.core.errors import MemdeckError
from memdeck.core.files import write_atomic_text

DEFAULTS: dict[str, Any] = {
    # backend: the packaged model runs in numpy ("numpy", no torch import), in torch ("torch"), or "auto":
    # numpy for fewer than torch_batch_min texts (queries, single writes), torch for larger batches.
    "embedding": {
        "model": "all-MiniLM-L6-v2",
        "device": "cpu",
        "batch_size": 64,
        "backend": "auto",
        "torch_batch_min": 64,
        "models_dir": "",  # installed models (memdeck model install); empty: "models" in the data dir
    },
    # keyword_statistics: "principal" scores BM25 with statistics from the recalling principal's rows only,
    # so other principals' rows cannot move a score; "index" uses the full-text index's (every row).
    # engine: "memory" answers from an in-memory index of each scope's rows, rebuilt from LanceDB and kept in
    # step with the table versions (core/recall/index.py), holding at most index_max_rows rows; "lance" runs
    # LanceDB's vector and full-text searches per tier (also what a scope larger than that uses). A scope of
    # more than index_sync_rows rows is loaded in a background thread, LanceDB answering until it is.
    "recall": {
        "k": 10,
        "candidate_multiplier": 4,
        "profile": "default",
        "keyword_statistics": "principal",
        "engine": "memory",
        "index_max_rows": 300_000,
        "index_sync_rows": 20_000,
    },
    "store": {
        # Compact a table once it holds this many fragments; many small writes otherwise slow every scan.
        "compact_fragment_threshold": 24,
        # Build an ANN index once a table holds this many rows: brute force grows linearly past it.
        "ann_min_rows": 50_000,
        "ann_rebuild_unindexed_rows": 20_000,
        # Fragments stay at most this many rows, so a purge rewrites a bounded amount of data.
        "max_rows_per_fragment": 8192,
    },
    # Days a memory of each tier lives (0: forever). Off by default: maintenance now runs on its own inside
    # the app and the MCP server, and a default TTL would silently purge every older episode of an existing
    # store (and hide any imported history at once) without anyone asking for it.
    "ttl_days": {"episodic": 0, "semantic": 0, "procedural": 0},
    # What a tier's TTL counts from: "created" (the write) or "last_used" (the last recall that returned
    # it, else the write). A memory past its TTL is hidden from every read at once and purged by maintenance.
    "ttl_from": {"episodic": "last_used", "semantic": "created", "procedural": "created"},
    # Per-tier size limits (memories per principal and tier); 0 or absent is no limit. Past it the least
    # valuable memories (lowest importance x recency, never pinned) are forgotten with receipts.
    "limits": {},
    # MEMORY.md-style folders kept in sync by the scheduler: [{path = "...", principal = "..."}] or paths
    # (then `principal` below). A sync that would forget more than `max_remove` memories, or more than
    # `max_remove_fraction` of the folder's, changes nothing without `--yes` (the scheduler never confirms).
    "sync": {"folders": [], "principal": "", "interval_s": 300, "max_remove": 50, "max_remove_fraction": 0.5},
    # The maintenance scheduler inside long-running processes (MCP server, app, `maintain --watch`).
    "maintenance": {
        "enabled": True,
        "evict_interval_s": 60,
        "consolidate_interval_s": 300,
        "index_interval_s": 3600,
        "session_idle_minutes": 60,
        "retry_s": 30,
    },
    "traces": {"enabled": True, "retention_days": 90, "max_traces": 100_000},
    "redaction": {
        "enabled": True,
        "allow_values": [],
        "allow_patterns": [],
        "disabled_principals": [],
    },
    # The formation filter skips writes that carry nothing to remember ("ok thanks"): for a person's own writes
    # when `enabled`, for agents' writes through MCP when `agents` (force=true still stores one).
    "formation_filter": {"enabled": False, "agents": True},
    # What consolidation does with a contradiction: flag it, or keep the newest / the most trusted agent's.
    "consolidate": {"resolution": "flag"},
    "keys": {},
    # The graph of entities and relations: extracted at write time (no model, deterministic), traversed
    # at recall as a third channel to ``depth`` relations from the query's entities.
    "graph": {"enabled": True, "depth": 1},
}


TTL_FROM = ("created", "last_used")

# Sections whose keys are open or checked where they are read: [keys] maps any binding id, [storage] takes
# the object store's option spellings (core/storage/objectstore.py checks them).
OPEN_SECTIONS = frozenset({"keys", "storage"})
KNOWN_SECTIONS = frozenset({*DEFAULTS, *OPEN_SECTIONS})
_TIER_SECTIONS = frozenset({"ttl_days", "ttl_from", "limits"})
# Keys read with their defaults beside the code that uses them (recall's fusion constants, tuned per model).
_READ_ELSEWHERE = {"recall": ("keyword_blend", "neighbour_weight", "session_weight")}
_TIER_KEYS = ("episodic", "semantic", "procedural")


def _suggest(name: str, choices: Any) -> str:
    import difflib

    close = difflib.get_close_matches(name, sorted(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def unknown_settings(config: dict[str, Any]) -> list[str]:
    """The sections and keys of a config that memdeck does not read, each as a line naming the nearest known
    one: a typo such as ``[recal]`` would otherwise be silently ignored."""
    lines: list[str] = []
    for section, value in config.items():
        if section not in KNOWN_SECTIONS:
            lines.append(f"unknown section [{section}]{_suggest(section, KNOWN_SECTIONS)}")
            continue
        if section in OPEN_SECTIONS or not isinstance(value, dict):
            continue
        known = (
            _TIER_KEYS
            if section in _TIER_SECTIONS
            else (*DEFAULTS[section], *_READ_ELSEWHERE.get(section, ()))
        )
        for key in value:
            if key not in known:
                lines.append(f"unknown setting {section}.{key}{_suggest(key, known)}")
    return lines


def expiry_rules(config: dict[str, Any]) -> dict[str, tuple[float, str]]:
    """Per stored tier: (TTL in days, 0 for none; what it counts from). Bad values are refused."""
    days = config.get("ttl_days") or {}
    base = config.get("ttl_from") or {}
    out: dict[str, tuple[float, str]] = {}
    for tier in ("episodic", "semantic", "procedural"):
        try:
            ttl = max(0.0, float(days.get(tier, 0) or 0))
        except (TypeError, ValueError):
            ttl = 0.0  # as maintenance always did: a value that is not a number means no TTL (and a warning)
            logging.getLogger("memdeck.config").warning(
                "ttl_days.%s is not a number (%r); treating it as no TTL", tier, days.get(tier)
            )
        start = base.get(tier, DEFAULTS["ttl_from"][tier])
        if start not in TTL_FROM:
            raise MemdeckError(f"ttl_from.{tier} must be one of {', '.join(TTL_FROM)}, got {start!r}")
        out[tier] = (ttl, start)
    return out


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def load_config(path: Path | None = None) -> dict[str, Any]:
    """The defaults overlaid with the user's config.toml, if there is one."""
    path = path or locations.config_file()
    if not path.exists():
        return copy.deepcopy(DEFAULTS)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise MemdeckError(f"cannot read config {path}: {exc}") from None
    return _merge(DEFAULTS, data)


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
DEFAULT_HALF_LIFE_DAYS: dict[str, float] = {"episodic": 30.0, "semantic": 180.0, "procedural": 365.0}


@dataclass
class Profile:
    """A named set of score weights and per-tier recency half-lives."""

    name: str = "default"
    weights: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    half_life_days: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_HALF_LIFE_DAYS))
    min_relevance: float = DEFAULT_MIN_RELEVANCE

    def __post_init__(self) -> None:
        # Weights given without a component (a profile written before it existed) weigh it 0, as scoring does.
        self.weights = {**dict.fromkeys(COMPONENTS, 0.0), **self.weights}

    def with_weights(self, **changes: float) -> Profile:
        return Profile(self.name, {**self.weights, **changes}, dict(self.half_life_days), self.min_relevance)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "weights": dict(self.weights),
            "half_life_days": dict(self.half_life_days),
            "min_relevance": self.min_relevance,
        }

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
        return cls(name, weights, half, floor)


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
    profile = Profile.from_dict((base or Profile()).name, (base or Profile()).to_dict())
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


def save_profile(profile: Profile, path: Path | None = None) -> Path:
    path = path or locations.profiles_file()
    if not profile.name or profile.name == "custom":
        raise MemdeckError("a saved profile needs a name other than 'custom'")
    current = dict(load_profiles(path).items())
    current[profile.name] = profile
    body = {
        "profiles": {
            name: {"weights": p.weights, "half_life_days": p.half_life_days, "min_relevance": p.min_relevance}
            for name, p in current.items()
        }
    }
    write_atomic_text(path, dumps_toml(body) + "\n", 0o644)
    return path
