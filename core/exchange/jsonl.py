"""Import of memdeck JSONL (an export, restored with its ids) and of hand-written JSONL records."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memdeck.core.errors import MemdeckError
from memdeck.core.exchange.importer import EXPORT_FORMAT, Importer, ProgressFn
from memdeck.core.forget import tombstones
from memdeck.core.records import (
    STATES,
    Memory,
    MemoryInput,
    check_extra,
    check_importance,
    check_principal,
    check_strings,
    check_tags,
    check_text,
    check_tier,
    now,
    parse_time,
    sha256_text,
)

# --- JSONL ------------------------------------------------------------------------------------------


def _canonical(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str)


def import_jsonl(imp: Importer, path: Path, principal: str | None, progress: ProgressFn | None) -> None:
    try:
        size = path.stat().st_size
        fh = open(path, "rb")  # noqa: SIM115 - closed below; read in binary to report bad UTF-8 per line
    except OSError as exc:
        raise MemdeckError(f"cannot read {path}: {exc.strerror or exc}") from None
    done = 0
    with fh:
        for lineno, raw in enumerate(fh, start=1):
            done += len(raw)
            if progress and lineno % 200 == 0:
                progress(done, size)
            if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            if not raw.strip():
                continue
            where = f"line {lineno}"
            try:
                record = json.loads(raw.decode("utf-8").strip())
            except UnicodeDecodeError:
                imp.problem(where, "not valid UTF-8")
                continue
            except json.JSONDecodeError as exc:
                imp.problem(where, f"not valid JSON ({exc.msg} at column {exc.colno})")
                continue
            except ValueError as exc:  # e.g. an integer too long to convert
                imp.problem(where, f"not valid JSON ({exc})")
                continue
            except RecursionError:
                imp.problem(where, "nested too deeply")
                continue
            if not isinstance(record, dict):
                imp.problem(where, "not a JSON object")
                continue
            if "text" not in record and "summary" not in record and str(record.get("format", "")).startswith("memdeck.export/"):
                if record["format"] != EXPORT_FORMAT:
                    raise MemdeckError(f"{path} is in {record['format']}, newer than this memdeck reads ({EXPORT_FORMAT})")
                try:
                    imp.report.tombstones_adopted += tombstones.adopt(imp.store, record.get("tombstones"))
                except MemdeckError as exc:
                    imp.problem(where, str(exc))
                continue
            try:
                _jsonl_record(imp, record, principal, where)
            except MemdeckError as exc:
                imp.problem(where, str(exc))
    imp.flush()
    if progress:
        progress(size, size)


def _jsonl_record(imp: Importer, record: dict[str, Any], principal: str | None, where: str) -> None:
    check_strings(record, "the record")  # a "\\ud800" escape decodes to text no column can hold
    owner = record.get("principal") or principal
    if not owner:
        raise MemdeckError("no principal in the record (give --principal)")
    owner = check_principal(owner)
    if principal and owner != principal:
        imp.report.skipped_other_principal += 1
        return
    if record.get("id") is not None:
        memory = memory_from_export(record, owner, imp.agent)
        imp.add_restore(memory, where)
        return
    tier = check_tier(record.get("tier") or imp.tier or "semantic")
    text = check_text(record.get("text") if record.get("text") is not None else record.get("summary"))
    key = "jsonl:" + sha256_text(owner + "\x00" + _canonical(record))
    if imp.keys(owner).get(key) or imp.known_text(owner, tier, text):
        imp.report.unchanged += 1
        return
    meta = record.get("meta") or {}
    if not isinstance(meta, dict):
        raise MemdeckError("meta must be a JSON object")
    extra_keys = (
        "session", "started_at", "ended_at", "events", "derived_facts", "closed", "sources", "confidence",
        "evidence_count", "last_reinforced_at", "name", "steps", "learned_from",
    )
    item = MemoryInput(
        text=text, tier=tier, principal=owner, agent=check_principal(record.get("agent") or imp.agent or "import"),
        tags=check_tags(record.get("tags")), importance=check_importance(record.get("importance", 0.5)),
        pinned=bool(record.get("pinned", False)), meta={**meta, "import_key": key, "import_source": "jsonl"},
        created_at=parse_time(record.get("created_at")),
        extra={k: record[k] for k in extra_keys if record.get(k) is not None},
    )
    _check_extra(item.extra)
    check_extra(item.extra, item.meta)  # the store's own rule too: a bad line is skipped, not the batch
    imp.add(item, key, where)


def _check_extra(extra: dict[str, Any]) -> None:
    for name in ("events", "derived_facts", "sources", "steps", "learned_from"):
        if name in extra and not isinstance(extra[name], list):
            raise MemdeckError(f"{name} must be a list")
    for name in ("started_at", "ended_at", "last_reinforced_at"):
        if name in extra:
            parse_time(extra[name])


def _opt_str(record: dict[str, Any], name: str) -> str | None:
    value = record.get(name)
    if value is None:
        return None
    if not isinstance(value, str) or "\x00" in value:
        raise MemdeckError(f"{name} must be a string")
    return value


def _str_list(record: dict[str, Any], name: str) -> list[str]:
    value = record.get(name)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise MemdeckError(f"{name} must be a list of strings")
    return list(value)


INT64_MAX = 2**63 - 1  # the stored columns are 64-bit: a larger number would fail the whole batch's commit


def _int(record: dict[str, Any], name: str, default: int, minimum: int = 0) -> int:
    value = record.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= INT64_MAX:
        raise MemdeckError(f"{name} must be a whole number from {minimum} to {INT64_MAX}")
    return value


def memory_from_export(record: dict[str, Any], principal: str, agent: str | None = None) -> Memory:
    """An export record back into a Memory, every field checked. Raises MemdeckError on bad input."""
    mem_id = record["id"]
    if not isinstance(mem_id, str) or not mem_id.strip() or len(mem_id) > 128 or "\x00" in mem_id:
        raise MemdeckError("id must be a non-empty string of at most 128 characters")
    tier = check_tier(str(record.get("tier") or ""))
    text = check_text(record.get("text") if record.get("text") is not None else record.get("summary"))
    state = record.get("state") or "active"
    if state not in STATES or state == "forgotten-pending":
        raise MemdeckError(f"state must be active or deprecated, got {state!r}")
    if tier == "procedural" and record.get("deprecated") is True:
        state = "deprecated"
    meta = record.get("meta") or {}
    if not isinstance(meta, dict):
        raise MemdeckError("meta must be a JSON object")
    meta = {k: v for k, v in meta.items() if k != "unembedded"}  # decided again by this store's model
    created = parse_time(record.get("created_at")) or now()
    memory = Memory(
        id=mem_id, tier=tier, principal=principal, text=text,
        agent=check_principal(record.get("agent") or agent or "import"),
        importance=check_importance(record.get("importance", 0.5)),
        pinned=bool(record.get("pinned", False)), state=state, tags=check_tags(record.get("tags")),
        access_count=_int(record, "access_count", 0), last_accessed=parse_time(record.get("last_accessed")),
        created_at=created, updated_at=parse_time(record.get("updated_at")) or created,
        version=_int(record, "version", 1, 1), deprecation_reason=_opt_str(record, "deprecation_reason"),
        superseded_by=_opt_str(record, "superseded_by"), meta=meta,
    )
    if tier == "episodic":
        events = record.get("events") or []
        if not isinstance(events, list):
            raise MemdeckError("events must be a list")
        memory.session = _opt_str(record, "session")
        memory.started_at = parse_time(record.get("started_at")) or created
        memory.ended_at = parse_time(record.get("ended_at")) or memory.started_at
        memory.events = events
        memory.derived_facts = _str_list(record, "derived_facts")
        memory.closed = bool(record.get("closed", True))
    elif tier == "semantic":
        memory.sources = _str_list(record, "sources")
        confidence = record.get("confidence")
        memory.confidence = 0.7 if confidence is None else check_importance(confidence)
        memory.evidence_count = _int(record, "evidence_count", 1, 1)
        memory.last_reinforced_at = parse_time(record.get("last_reinforced_at")) or created
    else:
        memory.name = _opt_str(record, "name") or text.split("\n", 1)[0][:80]
        memory.proc_version = _int(record, "proc_version", 1, 1)
        memory.steps = _str_list(record, "steps")
        memory.learned_from = _str_list(record, "learned_from")
    return memory


