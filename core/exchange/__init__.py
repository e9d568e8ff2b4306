"""Import, export and folder sync.

Formats:

- **memdeck JSONL** (what :func:`export_jsonl` writes): a header line ``{"format": "memdeck.export/1", ...}``
  then one memory a line in the shape of :meth:`Memory.to_json`. Records with an ``id`` are restored as
  they were (ids, tiers, principals, text, tags, importance, pinned, state, timestamps, access counts,
  tier fields); only the vectors are recomputed, with this store's model. A record already in the store
  (same id) is skipped, so an import can be re-run. Records without an ``id`` (hand-written JSONL) are
  remembered as new memories and deduplicated on ``meta.import_key``, a hash of the record.
- **Markdown memory files** (a folder with ``MEMORY.md``, ``memory/*.md``, ... or one ``.md`` file):
  chunked by heading; each chunk keeps its file, heading path and line range in ``meta.source`` and the
  hash of its text in ``meta.chunk_sha256``. Re-importing adds nothing for unchanged chunks; a changed
  chunk is written anew and the old one is forgotten (purged, with a receipt). :func:`sync_markdown` also
  forgets the chunks of deleted files and removed sections.
- **mem0 export**: a JSON list of ``{id, memory, user_id, created_at, metadata}`` (or ``{"results": [...]}``),
  imported as semantic facts, deduplicated on the mem0 id.

Every write goes through the store in batches (one commit per tier per batch), so an interrupted import
leaves whole records only and a re-run adds no duplicates. Redaction applies to everything written.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from memdeck.core import filters as F
from memdeck.core.errors import MemdeckError
from memdeck.core.filters import Scope
from memdeck.core.records import (
    STATES,
    STORED_TIERS,
    Memory,
    check_extra,
    check_importance,
    check_principal,
    check_strings,
    check_tags,
    check_text,
    check_tier,
    iso,
    memory_to_row,
    normalise_text,
    now,
    parse_time,
    row_to_memory,
    sha256_text,
)
from memdeck.core.store import MemoryInput, WriteResult

EXPORT_FORMAT = "memdeck.export/1"
FORMATS = ("auto", "jsonl", "markdown", "mem0")
BATCH = 256
MAX_CHUNK_CHARS = 4000

ProblemFn = Callable[[str, str], None]  # (where, what) -> report one skipped record
ProgressFn = Callable[[int, int], None]  # (done, total) in the format's own unit


# --- reports ----------------------------------------------------------------------------------------


@dataclass
class ImportReport:
    """What an import or sync did. ``problems`` are the skipped malformed records, with where they were."""

    source: str
    format: str
    imported: int = 0  # new memories written
    unchanged: int = 0  # already in the store (same id, same import key, or same chunk)
    replaced: int = 0  # markdown chunks whose text changed: new one written, old one forgotten
    moved: int = 0  # markdown chunks whose text is unchanged but whose lines moved (meta updated)
    removed: int = 0  # sync: chunks of deleted files or removed sections, forgotten
    skipped_low_value: int = 0  # the formation filter declined them
    skipped_other_principal: int = 0  # JSONL records of a principal other than --principal
    problems: list[dict[str, str]] = field(default_factory=list)
    receipts: list[str] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)

    @property
    def malformed(self) -> int:
        return len(self.problems)

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source, "format": self.format, "imported": self.imported, "unchanged": self.unchanged,
            "replaced": self.replaced, "moved": self.moved, "removed": self.removed,
            "skipped_low_value": self.skipped_low_value, "skipped_other_principal": self.skipped_other_principal,
            "malformed": self.malformed, "problems": self.problems, "receipts": self.receipts,
        }

    def summary(self) -> str:
        parts = [f"{self.imported} imported", f"{self.unchanged} unchanged"]
        for name in ("replaced", "moved", "removed", "skipped_low_value", "skipped_other_principal", "malformed"):
            value = getattr(self, name)
            if value:
                parts.append(f"{value} {name.replace('_', ' ')}")
        return f"{self.source}: " + ", ".join(parts)


# --- export -----------------------------------------------------------------------------------------


def _export_columns(store: Any, tier: str) -> list[str]:
    return [name for name in store.table(tier).schema.names if name != "vector"]


def iter_export(
    store: Any, scope: Scope = Scope.everyone(), *, tier: str | None = None, state: str | None = None,
    batch_size: int = 1000,
) -> Iterator[dict[str, Any]]:
    """Every memory in scope as an export record, streamed a batch at a time (no whole-store load)."""
    if state is not None and state not in ("active", "deprecated"):
        raise MemdeckError(f"unknown state {state!r}; export takes: active, deprecated")
    tiers = [check_tier(tier)] if tier else list(STORED_TIERS)
    where = F.all_of(scope.where(), F.eq("state", state) if state else F.ne("state", "forgotten-pending"))
    for name in tiers:
        if not store.has_table(name):
            continue
        ds = store.table(name).to_lance()
        for batch in ds.to_batches(columns=_export_columns(store, name), filter=where, batch_size=batch_size):
            for row in batch.to_pylist():
                yield export_record(row_to_memory(row))


def export_record(memory: Memory) -> dict[str, Any]:
    record = memory.to_json()
    record.pop("summary", None)  # the same text as "text"; kept out so a record has one source of truth
    record.pop("deprecated", None)
    return record


def export_header(store: Any, scope: Scope, tier: str | None, state: str | None) -> dict[str, Any]:
    return {
        "format": EXPORT_FORMAT, "exported_at": iso(now()), "embedding_model": store.embedding_model,
        "principals": list(scope.principals) if scope.principals else None, "tier": tier, "state": state,
        "note": "vectors are not exported; an import recomputes them with the importing store's model",
    }


def export_jsonl(
    store: Any, dest: str | Path | IO[str], scope: Scope = Scope.everyone(), *, tier: str | None = None,
    state: str | None = None,
) -> int:
    """Write the export to a path (atomically: a temporary file renamed at the end) or an open text file."""
    records = iter_export(store, scope, tier=tier, state=state)
    header = export_header(store, scope, tier, state)
    if not isinstance(dest, (str, Path)):
        return _write_records(dest, header, records)
    path = Path(dest)
    if path.is_dir():
        raise MemdeckError(f"{path} is a directory; give a file name such as {path / 'memories.jsonl'}")
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            count = _write_records(fh, header, records)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise MemdeckError(f"cannot write {path}: {exc.strerror or exc}") from None
    return count


def _write_records(fh: IO[str], header: dict[str, Any], records: Iterable[dict[str, Any]]) -> int:
    fh.write(json.dumps(header, ensure_ascii=False, sort_keys=True) + "\n")
    count = 0
    for record in records:
        fh.write(json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n")
        count += 1
    return count


# --- detection --------------------------------------------------------------------------------------


def detect_format(path: Path) -> str:
    if path.is_dir() or path.suffix.lower() in (".md", ".markdown"):
        return "markdown"
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096).lstrip()
    except OSError as exc:
        raise MemdeckError(f"cannot read {path}: {exc.strerror or exc}") from None
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:].lstrip()
    if head.startswith(b"["):
        return "mem0"
    if head.startswith(b"{") and re.match(rb'\{\s*"(results|memories)"\s*:', head):
        return "mem0"
    return "jsonl"


# --- the importer -----------------------------------------------------------------------------------


def _forget_fn() -> Callable[..., dict[str, Any]] | None:
    try:
        from memdeck.core.forget import forget
    except ImportError:
        return None
    return forget  # type: ignore[no-any-return]


class _Importer:
    """Shared machinery: the dedupe index of one principal, batching, and writes."""

    def __init__(
        self, store: Any, report: ImportReport, *, agent: str | None, tier: str | None,
        on_problem: ProblemFn | None, batch_size: int,
    ) -> None:
        self.store = store
        self.report = report
        self.agent = check_principal(agent) if agent else None
        self.tier = check_tier(tier) if tier else None
        self.on_problem = on_problem
        self.batch_size = batch_size
        self._keys: dict[str, dict[str, list[dict[str, Any]]]] = {}  # principal -> import_key -> rows
        self._hashes: dict[str, set[str]] = {}  # principal -> content hashes of semantic facts
        self.pending: list[tuple[MemoryInput, str]] = []  # (input, import key)
        self.pending_restore: list[Memory] = []
        self.stale: dict[str, list[str]] = {}  # principal -> ids to forget once the batch is written

    def problem(self, where: str, what: str) -> None:
        self.report.problems.append({"where": where, "problem": what})
        if self.on_problem:
            self.on_problem(where, what)

    # -- dedupe index ------------------------------------------------------------------------------

    def keys(self, principal: str) -> dict[str, list[dict[str, Any]]]:
        """import_key -> the live rows carrying it, for one principal (one scan of its meta column)."""
        if principal not in self._keys:
            index: dict[str, list[dict[str, Any]]] = {}
            hashes: set[str] = set()
            where = F.all_of(F.eq("principal", principal), F.ne("state", "forgotten-pending"))
            for tier in self.store.tiers_present():
                ds = self.store.table(tier).to_lance()
                for batch in ds.to_batches(columns=["id", "meta", "content_sha256", "state"], filter=where, batch_size=4096):
                    for row in batch.to_pylist():
                        if tier == "semantic":
                            hashes.add(row["content_sha256"])
                        if not row["meta"] or '"import_key"' not in row["meta"]:
                            continue
                        try:
                            meta = json.loads(row["meta"])
                        except ValueError:
                            continue
                        key = meta.get("import_key") if isinstance(meta, dict) else None
                        if key:
                            index.setdefault(key, []).append(
                                {"id": row["id"], "tier": tier, "meta": meta, "sha": row["content_sha256"]}
                            )
            self._keys[principal] = index
            self._hashes[principal] = hashes
        return self._keys[principal]

    def known_text(self, principal: str, tier: str, text: str) -> bool:
        """A semantic fact with this text exists: writing it again would only bump its evidence."""
        self.keys(principal)
        return tier == "semantic" and sha256_text(normalise_text(text)) in self._hashes[principal]

    # -- queueing and flushing ---------------------------------------------------------------------

    def add(self, item: MemoryInput, key: str) -> None:
        self.pending.append((item, key))
        index = self.keys(item.principal)
        index.setdefault(key, []).append({"id": None, "tier": item.tier, "meta": item.meta})
        if item.tier == "semantic":
            self._hashes[item.principal].add(sha256_text(normalise_text(item.text)))
        if len(self.pending) + len(self.pending_restore) >= self.batch_size:
            self.flush()

    def add_restore(self, memory: Memory) -> None:
        self.pending_restore.append(memory)
        if len(self.pending) + len(self.pending_restore) >= self.batch_size:
            self.flush()

    def flush(self) -> None:
        # Replaced rows go first: a semantic write of a text that is still stored would only reinforce
        # the old row (upsert by content hash), which the forget would then take away. If the run stops
        # between the two, the next run finds the chunk missing and writes it.
        self.forget_stale("sync: chunk changed")
        if self.pending_restore:
            restored = restore_many(self.store, self.pending_restore)
            self.report.imported += len(restored)
            self.report.ids += [m.id for m in restored]
            self.report.unchanged += len(self.pending_restore) - len(restored)
            self.pending_restore = []
        if self.pending:
            results: list[WriteResult] = self.store.remember_many([item for item, _ in self.pending])
            for (item, key), result in zip(self.pending, results, strict=True):
                rows = self._keys.get(item.principal, {}).get(key, [])
                if result.action == "skipped":
                    self.report.skipped_low_value += 1
                    rows[:] = [r for r in rows if r["id"] is not None]
                elif result.memory is not None:
                    for r in rows:
                        if r["id"] is None:
                            r["id"] = result.memory.id
                    if result.action == "reinforced":
                        self.report.unchanged += 1
                    else:
                        self.report.imported += 1
                        self.report.ids.append(result.memory.id)
            self.pending = []

    def queue_stale(self, principal: str, rows: list[dict[str, Any]]) -> None:
        """Rows to forget before the next write; their text no longer counts as already stored."""
        for r in rows:
            if r["tier"] == "semantic":
                self._hashes.get(principal, set()).discard(r.get("sha"))
        self.stale.setdefault(principal, []).extend(r["id"] for r in rows)

    def forget_stale(self, reason: str) -> None:
        """Forget rows queued as replaced, now that their replacements are written."""
        for principal, ids in list(self.stale.items()):
            if ids:
                self.report.receipts += self.forget(principal, ids, reason)
        self.stale = {}

    def forget(self, principal: str, ids: list[str], reason: str) -> list[str]:
        forget = _forget_fn()
        if forget is None:
            raise MemdeckError("cannot purge replaced chunks: memdeck.core.forget is not available")
        receipt = forget(self.store, ids, reason=reason, scope=Scope.of(principal))
        index = self._keys.get(principal, {})
        gone = set(ids)
        for key in list(index):
            index[key] = [r for r in index[key] if r["id"] not in gone]
            if not index[key]:
                del index[key]
        rid = receipt.get("receipt_id") if isinstance(receipt, dict) else None
        return [rid] if rid else []


# --- JSONL ------------------------------------------------------------------------------------------


def _canonical(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str)


def _import_jsonl(imp: _Importer, path: Path, principal: str | None, progress: ProgressFn | None) -> None:
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
            except ValueError as exc:
                imp.problem(where, f"not valid JSON ({exc.msg} at column {exc.colno})")
                continue
            if not isinstance(record, dict):
                imp.problem(where, "not a JSON object")
                continue
            if "text" not in record and "summary" not in record and str(record.get("format", "")).startswith("memdeck.export/"):
                if record["format"] != EXPORT_FORMAT:
                    raise MemdeckError(f"{path} is in {record['format']}, newer than this memdeck reads ({EXPORT_FORMAT})")
                continue
            try:
                _jsonl_record(imp, record, principal, where)
            except MemdeckError as exc:
                imp.problem(where, str(exc))
    imp.flush()
    if progress:
        progress(size, size)


def _jsonl_record(imp: _Importer, record: dict[str, Any], principal: str | None, where: str) -> None:
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
        imp.add_restore(memory)
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
    imp.add(item, key)


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


def _int(record: dict[str, Any], name: str, default: int, minimum: int = 0) -> int:
    value = record.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise MemdeckError(f"{name} must be a whole number of at least {minimum}")
    return value


def memory_from_export(record: dict[str, Any], principal: str, agent: str | None = None) -> Memory:
    """An export record back into a Memory, every field checked. Raises MemdeckError on bad input."""
    mem_id = record["id"]
    if not isinstance(mem_id, str) or not mem_id.strip() or len(mem_id) > 128 or "\x00" in mem_id:
        raise MemdeckError("id must be a non-empty string of at most 128 characters")
    tier = check_tier(record.get("tier"))
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


def restore_many(store: Any, memories: list[Memory]) -> list[Memory]:
    """Write exported memories back with their ids and fields; vectors are recomputed here.

    Memories whose id is already in the store are skipped (that is what makes a re-run safe). Text,
    tags, meta and tier fields pass through the store's redactor like any other write. One commit per tier.
    """
    fresh: list[Memory] = []
    seen: set[str] = set()
    for tier in STORED_TIERS:
        group = [m for m in memories if m.tier == tier and m.id not in seen]
        seen.update(m.id for m in group)
        if not group or not store.has_table(tier):
            fresh += group
            continue
        ids = [m.id for m in group]
        found = store.table(tier).to_lance().to_table(columns=["id"], filter=F.is_in("id", ids))
        have = set(found["id"].to_pylist())
        fresh += [m for m in group if m.id not in have]
    if not fresh:
        return []
    for m in fresh:
        p = m.principal
        m.text = store._redact(m.text, p)
        if m.tier == "semantic":
            m.text = normalise_text(m.text)
        m.tags = [store._redact(t, p) for t in m.tags]
        m.meta = store._redact_value(m.meta, p)
        if m.tier == "episodic":
            m.events = store._redact_value(m.events, p)
            m.derived_facts = [store._redact(f, p) for f in m.derived_facts]
        elif m.tier == "procedural":
            m.name = store._redact(m.name or "", p)
            m.steps = [store._redact(s, p) for s in m.steps]
        m.content_sha256 = sha256_text(m.text)
    vectors, embedded = store._embed([m.text for m in fresh])
    if not embedded:
        for m in fresh:
            m.meta = {**m.meta, "unembedded": True}
    with store.lock.shared():
        for tier in STORED_TIERS:
            rows = [memory_to_row(m, vectors[i]) for i, m in enumerate(fresh) if m.tier == tier]
            if rows:
                store._add_rows(tier, rows)
    for hook in store.write_hooks:
        hook(fresh)
    return fresh


# --- mem0 -------------------------------------------------------------------------------------------


def _import_mem0(imp: _Importer, path: Path, principal: str | None, progress: ProgressFn | None) -> None:
    try:
        data = json.loads(path.read_bytes().decode("utf-8-sig"))
    except OSError as exc:
        raise MemdeckError(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise MemdeckError(f"{path} is not valid UTF-8") from None
    except ValueError as exc:
        raise MemdeckError(f"{path} is not valid JSON ({exc})") from None
    if isinstance(data, dict):
        data = data.get("results", data.get("memories"))
    if not isinstance(data, list):
        raise MemdeckError(f"{path} is not a mem0 export (expected a JSON list of memories)")
    tier = imp.tier or "semantic"
    for n, record in enumerate(data, start=1):
        if progress and n % 200 == 0:
            progress(n, len(data))
        where = f"record {n}"
        if not isinstance(record, dict):
            imp.problem(where, "not a JSON object")
            continue
        try:
            check_strings(record, "the record")
            text = check_text(record.get("memory"), "memory")
            owner = principal or record.get("user_id")
            if not owner:
                raise MemdeckError("no user_id in the record (give --principal)")
            owner = check_principal(owner)
            ident = record.get("id")
            key = "mem0:" + (str(ident) if ident is not None else sha256_text(owner + "\x00" + _canonical(record)))
            if imp.keys(owner).get(key) or imp.known_text(owner, tier, text):
                imp.report.unchanged += 1
                continue
            metadata = record.get("metadata") or {}
            if not isinstance(metadata, dict):
                raise MemdeckError("metadata must be a JSON object")
            tags = record.get("categories") or metadata.get("categories") or []
            meta: dict[str, Any] = {"import_key": key, "import_source": "mem0"}
            if metadata:
                meta["mem0_metadata"] = metadata
            if ident is not None:
                meta["mem0_id"] = str(ident)
            agent = imp.agent or record.get("agent_id") or "mem0"
            item = MemoryInput(
                text=text, tier=tier, principal=owner, agent=check_principal(str(agent)),
                tags=check_tags(tags if isinstance(tags, list) else []), meta=meta,
                created_at=parse_time(record.get("created_at")),
            )
        except MemdeckError as exc:
            imp.problem(where, str(exc))
            continue
        imp.add(item, key)
    imp.flush()
    if progress:
        progress(len(data), len(data))


# --- Markdown ---------------------------------------------------------------------------------------

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_COMMENT = re.compile(r"^\s*<!--.*-->\s*$")  # a comment-only line (e.g. a file header) is not content
_SKIP_DIRS = {"node_modules", "__pycache__", ".git", ".venv", "venv"}


@dataclass
class Chunk:
    """A heading's section of a Markdown file: its text, heading path and 1-based inclusive lines."""

    heading: str
    start: int
    end: int
    text: str


def chunk_markdown(text: str, max_chars: int = MAX_CHUNK_CHARS) -> list[Chunk]:
    """Split Markdown at ATX headings (not inside code fences). Long sections split at blank lines."""
    lines = text.splitlines()
    sections: list[tuple[str, int, list[str]]] = []
    path: list[tuple[int, str]] = []
    current: list[str] = []
    start = 1
    heading = ""
    fenced = False
    for n, line in enumerate(lines, start=1):
        if _FENCE.match(line):
            fenced = not fenced
        m = None if fenced else _HEADING.match(line)
        if m:
            sections.append((heading, start, current))
            level = len(m.group(1))
            path = [p for p in path if p[0] < level] + [(level, m.group(2).strip())]
            heading = " > ".join(p[1] for p in path)
            current, start = [line], n
        else:
            current.append(line)
    sections.append((heading, start, current))
    chunks: list[Chunk] = []
    for head, first, body in sections:
        # A heading with nothing under it says nothing on its own; its title lives on in its children's path.
        content = [ln for ln in body if ln.strip() and not _HEADING.match(ln) and not _COMMENT.match(ln)]
        if not content:
            continue
        for sub_start, sub_lines in _split_long(first, body, max_chars):
            while sub_lines and not sub_lines[-1].strip():
                sub_lines = sub_lines[:-1]
            while sub_lines and not sub_lines[0].strip():
                sub_lines, sub_start = sub_lines[1:], sub_start + 1
            if sub_lines:
                chunks.append(Chunk(head, sub_start, sub_start + len(sub_lines) - 1, "\n".join(sub_lines)))
    return chunks


def _split_long(first: int, body: list[str], max_chars: int) -> list[tuple[int, list[str]]]:
    if sum(len(ln) + 1 for ln in body) <= max_chars:
        return [(first, body)]
    parts: list[tuple[int, list[str]]] = []
    cur: list[str] = []
    cur_start = first
    size = 0
    for n, line in enumerate(body):
        if cur and (size + len(line) + 1 > max_chars) and (not line.strip() or size + len(line) + 1 > 2 * max_chars):
            parts.append((cur_start, cur))
            cur, cur_start, size = [], first + n, 0
        cur.append(line)
        size += len(line) + 1
    if cur:
        parts.append((cur_start, cur))
    return parts


def markdown_files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in _SKIP_DIRS)
        for name in sorted(filenames):
            if name.lower().endswith((".md", ".markdown")) and not name.startswith("."):
                found.append(Path(dirpath) / name)
    return found


def _chunk_key(root: str, rel: str, heading: str, occurrence: int) -> str:
    return "md:" + sha256_text("\x00".join([root, rel, heading, str(occurrence)]))


def _import_markdown(
    imp: _Importer, path: Path, principal: str | None, progress: ProgressFn | None, *, remove: bool
) -> None:
    if not principal:
        raise MemdeckError("importing Markdown files needs --principal (whose memories they are)")
    principal = check_principal(principal)
    if not path.exists():
        raise MemdeckError(f"no such file or folder: {path}")
    root = (path if path.is_dir() else path.parent).resolve()
    root_s = str(root)
    files = markdown_files(path.resolve())
    if not files and not remove:
        raise MemdeckError(f"no Markdown files (*.md) in {path}")
    tier = imp.tier or "semantic"
    index = imp.keys(principal)
    seen_keys: set[str] = set()
    for n, file in enumerate(files, start=1):
        if progress:
            progress(n - 1, len(files))
        rel = file.relative_to(root).as_posix()
        try:
            text = file.read_bytes().decode("utf-8-sig")
        except OSError as exc:
            imp.problem(rel, f"cannot read: {exc.strerror or exc}")
            _keep_file_keys(index, root_s, rel, seen_keys)  # unreadable is not deleted
            continue
        except UnicodeDecodeError:
            imp.problem(rel, "not valid UTF-8")
            _keep_file_keys(index, root_s, rel, seen_keys)
            continue
        occurrences: dict[str, int] = {}
        for chunk in chunk_markdown(text):
            occurrences[chunk.heading] = occurrences.get(chunk.heading, 0) + 1
            key = _chunk_key(root_s, rel, chunk.heading, occurrences[chunk.heading])
            seen_keys.add(key)
            digest = sha256_text(normalise_text(chunk.text))
            source = {"file": rel, "lines": [chunk.start, chunk.end], "heading": chunk.heading}
            rows = [r for r in index.get(key, []) if r["id"] is not None]
            same = [r for r in rows if r["meta"].get("chunk_sha256") == digest]
            if same:
                imp.report.unchanged += 1
                stale = [r for r in rows if r not in same]
                if stale:
                    imp.queue_stale(principal, stale)
                if same[0]["meta"].get("source") != source:
                    _update_source(imp.store, same[0], principal, source)
                    imp.report.moved += 1
                continue
            if rows:
                imp.queue_stale(principal, rows)
                imp.report.replaced += 1
            elif imp.known_text(principal, tier, chunk.text):
                imp.report.unchanged += 1
                continue
            meta = {
                "import_key": key, "import_source": "markdown", "source_root": root_s, "source": source,
                "chunk_sha256": digest,
            }
            item = MemoryInput(
                text=chunk.text, tier=tier, principal=principal, agent=imp.agent or "import",
                tags=["markdown"], meta=meta, created_at=None,
            )
            index[key] = [r for r in index.get(key, []) if r["id"] is not None]
            imp.add(item, key)
    imp.flush()
    if remove:
        gone_files: list[str] = []
        gone_sections: list[str] = []
        for key, rows in list(index.items()):
            for r in rows:
                meta = r["meta"]
                if key in seen_keys or meta.get("import_source") != "markdown" or meta.get("source_root") != root_s:
                    continue
                if r["id"] is None:
                    continue
                rel = (meta.get("source") or {}).get("file", "")
                (gone_sections if (root / rel).is_file() and rel else gone_files).append(r["id"])
        if gone_files:
            imp.report.receipts += imp.forget(principal, gone_files, "sync: file deleted")
        if gone_sections:
            imp.report.receipts += imp.forget(principal, gone_sections, "sync: chunk removed")
        imp.report.removed += len(gone_files) + len(gone_sections)
    if progress:
        progress(len(files), len(files))


def _keep_file_keys(index: dict[str, list[dict[str, Any]]], root: str, rel: str, seen: set[str]) -> None:
    for key, rows in index.items():
        if any(r["meta"].get("source_root") == root and (r["meta"].get("source") or {}).get("file") == rel for r in rows):
            seen.add(key)


def _update_source(store: Any, row: dict[str, Any], principal: str, source: dict[str, Any]) -> None:
    """Lines moved but the text did not: only the recorded line range changes."""
    meta = {**row["meta"], "source": source}
    with store.lock.shared():
        store.table(row["tier"]).update(
            where=F.all_of(F.eq("id", row["id"]), F.eq("principal", principal)),
            values={"meta": json.dumps(meta, ensure_ascii=False, sort_keys=True)},
        )
    row["meta"] = meta


# --- entry points -----------------------------------------------------------------------------------


def import_path(
    store: Any, path: str | Path, *, principal: str | None = None, agent: str | None = None, fmt: str = "auto",
    tier: str | None = None, on_problem: ProblemFn | None = None, progress: ProgressFn | None = None,
    batch_size: int = BATCH,
) -> ImportReport:
    """Import a file or folder into the store. See the module docstring for the formats."""
    if fmt not in FORMATS:
        raise MemdeckError(f"unknown format {fmt!r}; use one of: {', '.join(FORMATS)}")
    src = Path(path).expanduser()
    if not src.exists():
        raise MemdeckError(f"no such file or folder: {src}")
    if principal is not None:
        principal = check_principal(principal)
    fmt = detect_format(src) if fmt == "auto" else fmt
    if src.is_dir() and fmt != "markdown":
        raise MemdeckError(f"{src} is a folder; only --format markdown imports a folder")
    report = ImportReport(source=str(src), format=fmt)
    imp = _Importer(store, report, agent=agent, tier=tier, on_problem=on_problem, batch_size=batch_size)
    if fmt == "jsonl":
        _import_jsonl(imp, src, principal, progress)
    elif fmt == "mem0":
        _import_mem0(imp, src, principal, progress)
    else:
        _import_markdown(imp, src, principal, progress, remove=False)
    return report


def sync_markdown(
    store: Any, folder: str | Path, principal: str, *, agent: str | None = None, tier: str | None = None,
    on_problem: ProblemFn | None = None, progress: ProgressFn | None = None, batch_size: int = BATCH,
) -> ImportReport:
    """Re-index a folder of Markdown memory files: new and changed chunks written, changed and removed
    chunks (and those of deleted files) forgotten with a receipt."""
    src = Path(folder).expanduser()
    if not src.is_dir():
        raise MemdeckError(f"{src} is not a folder")
    report = ImportReport(source=str(src), format="markdown")
    imp = _Importer(store, report, agent=agent, tier=tier, on_problem=on_problem, batch_size=batch_size)
    _import_markdown(imp, src, principal, progress, remove=True)
    return report


class TextProgress:
    """A plain-text progress line on stderr: redrawn in place on a terminal, a line per 10 % otherwise."""

    def __init__(self, label: str, unit: str, stream: IO[str] | None = None) -> None:
        self.label = label
        self.unit = unit
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._last = -1
        self._drawn = False

    def __call__(self, done: int, total: int) -> None:
        pct = 100 if total <= 0 else min(100, int(done * 100 / total))
        if self.tty:
            bar = "#" * (pct // 5) + "." * (20 - pct // 5)
            self.stream.write(f"\r{self.label} [{bar}] {pct:3d}%  {done:,}/{total:,} {self.unit}")
            self._drawn = True
        elif pct // 10 != self._last // 10 or pct == 100 and self._last != 100:
            self.stream.write(f"{self.label}: {pct}% ({done:,}/{total:,} {self.unit})\n")
        self._last = pct
        self.stream.flush()

    def close(self) -> None:
        if self.tty and self._drawn:
            self.stream.write("\n")
            self.stream.flush()
