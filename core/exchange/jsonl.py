"""Import of memdeck JSONL (an export, restored with its ids) and of hand-written JSONL records."""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from memdeck.core import filters as F
from memdeck.core.errors import MemdeckError
from memdeck.core.exchange.importer import (
    EXPORT_FORMAT,
    INT32_MAX,
    Importer,
    ImportStopped,
    ProgressFn,
    check_length,
)
from memdeck.core.forget import tombstones
from memdeck.core.names import check_type
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


MAX_LINE_BYTES = 16 * 1024 * 1024  # one record: a 1,000,000-character text written with \\u escapes fits
_SKIP_CHUNK = 1024 * 1024


def _lines(fh: BinaryIO, regular: bool) -> Iterator[tuple[int, bytes | None]]:
    """``(line number, bytes)`` of a file, each line read with a maximum length, so memory stays bounded
    whatever the input. A longer line comes as ``None``; in a regular file the rest of it is skipped and
    reading goes on, elsewhere (a device, a pipe) nothing says where it ends, so reading stops there."""
    lineno = 0
    while True:
        raw = fh.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        lineno += 1
        if len(raw) <= MAX_LINE_BYTES or raw.endswith(b"\n"):
            yield lineno, raw
            continue
        yield lineno, None
        if not regular:
            return
        while True:
            rest = fh.readline(_SKIP_CHUNK)
            if not rest or rest.endswith(b"\n"):
                break


def import_jsonl(imp: Importer, path: Path, principal: str | None, progress: ProgressFn | None) -> None:
    try:
        st = path.stat()
        fh = open(path, "rb")  # noqa: SIM115 - closed below; read in binary to report bad UTF-8 per line
    except OSError as exc:
        raise MemdeckError(f"cannot read {path}: {exc.strerror or exc}") from None
    size, regular = st.st_size, stat.S_ISREG(st.st_mode)
    done = 0
    with fh:
        for lineno, raw in _lines(fh, regular):
            where = f"line {lineno}"
            if raw is None:
                done += MAX_LINE_BYTES
                limit = f"longer than {MAX_LINE_BYTES // (1024 * 1024)} MiB, the limit for one record"
                imp.problem(where, limit if regular else f"{limit}; the rest of {path} was not read")
                continue
            done += len(raw)
            if progress and lineno % 200 == 0:
                progress(done, size)
            if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            if not raw.strip():
                continue
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
            if (
                "text" not in record
                and "summary" not in record
                and str(record.get("format", "")).startswith("memdeck.export/")
            ):
                if record["format"] != EXPORT_FORMAT:
                    raise MemdeckError(
                        f"{path} is in {record['format']}, newer than this memdeck reads ({EXPORT_FORMAT})"
                    )
                try:
                    _adopt_tombstones(imp, record.get("tombstones"), principal, where)
                except MemdeckError as exc:
                    imp.problem(where, str(exc))
                continue
            try:
                _jsonl_record(imp, record, principal, where)
            except ImportStopped:
                raise
            except MemdeckError as exc:
                imp.problem(where, str(exc))
    imp.flush()
    if progress:
        progress(size, size)


def _adopt_tombstones(imp: Importer, entries: Any, principal: str | None, where: str) -> None:
    """Take the forgotten ids an export's header carries into this store's tombstones, so that an older
    copy of those memories is refused here too.

    A header is only the file's word. It may forget what this store no longer holds; it never puts a
    tombstone on a memory this store holds (that would hide its recalls from the trace log and ledger
    without any forget), and with ``--principal`` only that principal's entries are taken.
    """
    if entries is None:
        return
    if not isinstance(entries, list):
        raise MemdeckError("the export's tombstones must be a list")
    wanted = tombstones.principal_key(principal) if principal else None
    candidates = [
        e
        for e in entries
        if isinstance(e, dict)
        and isinstance(e.get("id"), str)
        and isinstance(e.get("p"), str)
        and (wanted is None or e["p"] == wanted)
    ]
    other = sum(1 for e in entries if isinstance(e, dict) and wanted is not None and e.get("p") != wanted)
    live = _live_ids(imp, [e["id"] for e in candidates])
    kept = [e for e in candidates if e["id"] not in live]
    imp.report.tombstones_adopted += tombstones.adopt(imp.store, kept)
    refused = len(candidates) - len(kept)
    if refused and imp.on_problem:
        imp.on_problem(
            where,
            f"{refused} tombstone(s) in the header name memories this store holds; not taken "
            "(forget them here with `memdeck forget` if that is meant)",
        )
    if other and imp.on_problem:
        imp.on_problem(
            where, f"{other} tombstone(s) in the header are of other principals than {principal}; not taken"
        )


def _live_ids(imp: Importer, ids: list[str]) -> set[str]:
    """Which of these ids are memories in the store (any principal, any state)."""
    found: set[str] = set()
    unique = sorted({i for i in ids if len(i) <= 128})
    for tier in imp.store.tiers_present():
        ds = imp.store.table(tier).to_lance()
        for start in range(0, len(unique), 1000):
            chunk = unique[start : start + 1000]
            found.update(ds.to_table(columns=["id"], filter=F.is_in("id", chunk))["id"].to_pylist())
    return found


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
    text = check_length(
        check_text(record.get("text") if record.get("text") is not None else record.get("summary"))
    )
    key = "jsonl:" + sha256_text(owner + "\x00" + _canonical(record))
    if imp.keys(owner).get(key) or imp.known_text(owner, tier, text):
        imp.report.unchanged += 1
        return
    meta = record.get("meta") or {}
    if not isinstance(meta, dict):
        raise MemdeckError("meta must be a JSON object")
    extra_keys = (
        "session",
        "started_at",
        "ended_at",
        "events",
        "derived_facts",
        "closed",
        "sources",
        "confidence",
        "evidence_count",
        "last_reinforced_at",
        "name",
        "steps",
        "learned_from",
        "type",
    )
    item = MemoryInput(
        text=text,
        tier=tier,
        principal=owner,
        agent=check_principal(record.get("agent") or imp.agent or "import"),
        tags=check_tags(record.get("tags")),
        importance=check_importance(record.get("importance", 0.5)),
        pinned=bool(record.get("pinned", False)),
        meta={**meta, "import_key": key, "import_source": "jsonl"},
        created_at=parse_time(record.get("created_at")),
        expires_at=parse_time(record.get("expires_at")),
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


INT64_MAX = (
    2**63 - 1
)  # access and evidence counts are 64-bit columns: a larger number would fail the whole batch's commit


def _int(record: dict[str, Any], name: str, default: int, minimum: int = 0, maximum: int = INT64_MAX) -> int:
    value = record.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= maximum:
        raise MemdeckError(f"{name} must be a whole number from {minimum} to {maximum}")
    return value


def memory_from_export(record: dict[str, Any], principal: str, agent: str | None = None) -> Memory:
    """An export record back into a Memory, every field checked. Raises MemdeckError on bad input."""
    mem_id = record["id"]
    if not isinstance(mem_id, str) or not mem_id.strip() or len(mem_id) > 128 or "\x00" in mem_id:
        raise MemdeckError("id must be a non-empty string of at most 128 characters")
    tier = check_tier(str(record.get("tier") or ""))
    text = check_length(
        check_text(record.get("text") if record.get("text") is not None else record.get("summary"))
    )
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
        id=mem_id,
        tier=tier,
        principal=principal,
        text=text,
        agent=check_principal(record.get("agent") or agent or "import"),
        importance=check_importance(record.get("importance", 0.5)),
        pinned=bool(record.get("pinned", False)),
        state=state,
        tags=check_tags(record.get("tags")),
        access_count=_int(record, "access_count", 0),
        last_accessed=parse_time(record.get("last_accessed")),
        created_at=created,
        updated_at=parse_time(record.get("updated_at")) or created,
        version=_int(record, "version", 1, 1, INT32_MAX),
        deprecation_reason=_opt_str(record, "deprecation_reason"),
        superseded_by=_opt_str(record, "superseded_by"),
        meta=meta,
        expires_at=parse_time(record.get("expires_at")),  # a memory with its own expiry keeps it
        type=check_type(record.get("type")),
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
        memory.proc_version = _int(record, "proc_version", 1, 1, INT32_MAX)
        memory.steps = _str_list(record, "steps")
        memory.learned_from = _str_list(record, "learned_from")
    return memory
