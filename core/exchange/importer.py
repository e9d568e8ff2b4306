"""The import machinery every format shares: the report, format detection, batched writes and forgets."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdeck.core import filters as F
from memdeck.core.errors import MemdeckError
from memdeck.core.filters import Scope
from memdeck.core.forget import forget, is_forgotten, tombstones
from memdeck.core.graph.memory.write import remember_many
from memdeck.core.records import (
    STORED_TIERS,
    Memory,
    MemoryInput,
    WriteResult,
    check_principal,
    check_tier,
    memory_to_row,
    neutralise_tokens,
    neutralise_value,
    normalise_text,
    sha256_text,
    token_free_hashes,
)
from memdeck.core.storage.objectstore import RACED_WRITE

if TYPE_CHECKING:
    from memdeck.core.storage.engine import Engine

EXPORT_FORMAT = "memdeck.export/1"
FORMATS = ("auto", "jsonl", "markdown", "mem0")
BATCH = 256
MAX_CHUNK_CHARS = 4000
MAX_TEXT_CHARS = 1_000_000  # the store's limit for one memory's text (the write path refuses longer)
INT32_MAX = 2**31 - 1  # version and proc_version are 32-bit columns

ProblemFn = Callable[[str, str], None]  # (where, what) -> report one skipped record
ProgressFn = Callable[[int, int], None]  # (done, total) in the format's own unit


class ImportStopped(MemdeckError):
    """The store cannot take any write (a full or read-only disk, redaction that cannot run): no one record's
    fault, so the import ends here rather than report it against every later record."""


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
    forgotten: int = 0  # records of memories that were forgotten: refused, never written again
    tombstones_adopted: int = 0  # forgotten ids an export carried, added to this store's tombstones
    problems: list[dict[str, str]] = field(default_factory=list)
    receipts: list[str] = field(default_factory=list)
    failed_receipts: list[str] = field(
        default_factory=list
    )  # receipts of replacing forgets whose checks failed
    ids: list[str] = field(default_factory=list)
    dry_run: bool = False  # a sync's preview: nothing was written or forgotten
    plan: list[dict[str, str | None]] = field(default_factory=list)  # dry run: {"action", "where", "id"}

    @property
    def malformed(self) -> int:
        return len(self.problems)

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "format": self.format,
            "imported": self.imported,
            "unchanged": self.unchanged,
            "replaced": self.replaced,
            "moved": self.moved,
            "removed": self.removed,
            "skipped_low_value": self.skipped_low_value,
            "skipped_other_principal": self.skipped_other_principal,
            "forgotten": self.forgotten,
            "malformed": self.malformed,
            "problems": self.problems,
            "receipts": self.receipts,
            "failed_receipts": self.failed_receipts,
        } | ({"dry_run": True, "plan": self.plan} if self.dry_run else {})

    def summary(self) -> str:
        parts = [f"{self.imported} imported", f"{self.unchanged} unchanged"]
        for name in (
            "replaced",
            "moved",
            "removed",
            "skipped_low_value",
            "skipped_other_principal",
            "forgotten",
            "malformed",
        ):
            value = getattr(self, name)
            if value:
                parts.append(f"{value} {name.replace('_', ' ')}")
        if self.failed_receipts:
            parts.append(
                f"{len(self.failed_receipts)} forget(s) NOT verified (receipts {', '.join(self.failed_receipts)})"
            )
        head = f"{self.source} (dry run, nothing changed): " if self.dry_run else f"{self.source}: "
        return head + ", ".join(parts)


def check_length(text: str, what: str = "text") -> str:
    """The store's limit on one memory's text, checked per record (a longer one would fail its batch)."""
    if len(text) > MAX_TEXT_CHARS:
        raise MemdeckError(f"{what} is {len(text):,} characters; the limit is {MAX_TEXT_CHARS:,}")
    return text


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


class Importer:
    """Shared machinery: the dedupe index of one principal, batching, and writes."""

    def __init__(
        self,
        store: Engine,
        report: ImportReport,
        *,
        agent: str | None,
        tier: str | None,
        on_problem: ProblemFn | None,
        batch_size: int,
    ) -> None:
        self.store = store
        self.report = report
        self.agent = check_principal(agent) if agent else None
        self.tier = check_tier(tier) if tier else None
        self.on_problem = on_problem
        self.batch_size = batch_size
        self._keys: dict[str, dict[str, list[dict[str, Any]]]] = {}  # principal -> import_key -> rows
        self._hashes: dict[str, set[str]] = {}  # principal -> content hashes of semantic facts
        self.pending: list[tuple[MemoryInput, str, str]] = []  # (input, import key, where it came from)
        self.pending_restore: list[tuple[Memory, str]] = []  # (memory, where it came from)
        self.stale: dict[str, list[str]] = {}  # principal -> ids to forget once the batch is written

    def problem(self, where: str, what: str) -> None:
        self.report.problems.append({"where": where, "problem": what})
        if self.on_problem:
            self.on_problem(where, what)

    def plan(self, action: str, where: str, memory_id: str | None) -> None:
        """A dry run records what it would do: ``add``, ``update`` or ``remove``."""
        if self.report.dry_run:
            self.report.plan.append({"action": action, "where": where, "id": memory_id})

    # -- dedupe index ------------------------------------------------------------------------------

    def keys(self, principal: str) -> dict[str, list[dict[str, Any]]]:
        """import_key -> the live rows carrying it, for one principal (one scan of its meta column)."""
        if principal not in self._keys:
            index: dict[str, list[dict[str, Any]]] = {}
            hashes: set[str] = set()
            where = F.all_of(F.eq("principal", principal), F.ne("state", "forgotten-pending"))
            for tier in self.store.tiers_present():
                ds = self.store.table(tier).to_lance()
                for batch in ds.to_batches(
                    columns=["id", "meta", "content_sha256", "state"], filter=where, batch_size=4096
                ):
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

    def refused(self, principal: str, where: str, *, text: str, memory_id: str | None = None) -> bool:
        """True (and one line reported) when this record is of a memory that was forgotten."""
        hashes = {sha256_text(text), sha256_text(normalise_text(text)), *token_free_hashes(text)}
        if memory_id is not None and is_forgotten(self.store, principal, id=memory_id):
            what = f"{memory_id} was forgotten (a deletion receipt covers it); not imported"
        elif any(is_forgotten(self.store, principal, content_sha256=h) for h in hashes):
            what = "this text was forgotten (a deletion receipt covers it); not imported"
        else:
            return False
        self.report.forgotten += 1
        if self.on_problem:
            self.on_problem(where, what)
        return True

    def add(self, item: MemoryInput, key: str, where: str = "") -> None:
        if self.refused(item.principal, where or "record", text=item.text):
            return
        self.pending.append((item, key, where or "record"))
        index = self.keys(item.principal)
        index.setdefault(key, []).append({"id": None, "tier": item.tier, "meta": item.meta})
        if item.tier == "semantic":
            self._hashes[item.principal].add(sha256_text(normalise_text(item.text)))
        if len(self.pending) + len(self.pending_restore) >= self.batch_size:
            self.flush()

    def add_restore(self, memory: Memory, where: str = "") -> None:
        if self.refused(memory.principal, where or "record", text=memory.text, memory_id=memory.id):
            return
        self.pending_restore.append((memory, where or "record"))
        if len(self.pending) + len(self.pending_restore) >= self.batch_size:
            self.flush()

    def flush(self) -> None:
        # Replaced rows go first: a semantic write of a text that is still stored would only reinforce
        # the old row (upsert by content hash), which the forget would then take away. If the run stops
        # between the two, the next run finds the chunk missing and writes it.
        self.forget_stale("sync: chunk changed")
        # The queues are emptied before anything is written: a batch that fails is never written again
        # with the next record (which would report every later record with this batch's error).
        restore, self.pending_restore = self.pending_restore, []
        pending, self.pending = self.pending, []
        if restore:
            self._write_split(restore, self._restore)
        if pending:
            self._write_split(pending, self._remember)

    def _write_split(self, batch: list[Any], write: Callable[[list[Any]], None]) -> None:
        """Write a batch; when one record of it is refused, halve the batch until that record is alone,
        report it (once, with where it came from) and write the rest. A failure of the store itself (a full
        or read-only disk, redaction that cannot run) is no one record's fault: it stops the import."""
        try:
            write(batch)
        except MemdeckError as exc:
            if exc.__cause__ is not None or str(exc) == RACED_WRITE:
                raise self._stopped(exc) from exc
            self._split(batch, write, str(exc))
        except (ValueError, TypeError, OverflowError) as exc:  # a value no column can hold
            # Only a restore is split on these: it skips the ids a partly committed try already wrote. A
            # remember validates every item before writing any, so what fails there after is not one record's.
            if write != self._restore:
                raise
            self._split(batch, write, f"cannot be stored ({exc})")

    def _split(self, batch: list[Any], write: Callable[[list[Any]], None], error: str) -> None:
        if len(batch) == 1:
            self.problem(batch[0][-1], error)
            if isinstance(batch[0][0], MemoryInput):  # not stored: its key and text no longer count as seen
                item, key = batch[0][0], batch[0][1]
                rows = self._keys.get(item.principal, {}).get(key, [])
                rows[:] = [r for r in rows if r["id"] is not None]
                if item.tier == "semantic":
                    self._hashes.get(item.principal, set()).discard(sha256_text(normalise_text(item.text)))
            return
        half = len(batch) // 2
        self._write_split(batch[:half], write)
        self._write_split(batch[half:], write)

    def _stopped(self, exc: MemdeckError) -> ImportStopped:
        done = self.report.imported
        err = ImportStopped(
            f"{exc}; the import stopped after {done} new record{'' if done == 1 else 's'} (running it again "
            "adds only what is missing)"
        )
        err.exit_code = exc.exit_code
        return err

    def _restore(self, batch: list[tuple[Memory, str]]) -> None:
        restored = restore_many(self.store, [m for m, _ in batch])
        self.report.imported += len(restored)
        self.report.ids += [m.id for m in restored]
        self.report.unchanged += len(batch) - len(restored)

    def _remember(self, batch: list[tuple[MemoryInput, str, str]]) -> None:
        results: list[WriteResult] = remember_many(self.store, [item for item, _, _ in batch])
        for (item, key, _), result in zip(batch, results, strict=True):
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
        # A section that changed or left the folder is not a request to erase it for good: no tombstone,
        # so the same text may come back with the file.
        with tombstones.housekeeping():
            receipt = forget(self.store, ids, reason=reason, scope=Scope.of(principal))
        index = self._keys.get(principal, {})
        gone = set(ids)
        for key in list(index):
            index[key] = [r for r in index[key] if r["id"] not in gone]
            if not index[key]:
                del index[key]
        rid = receipt.get("receipt_id") if isinstance(receipt, dict) else None
        if rid and receipt.get("outcome") != "verified":
            self.report.failed_receipts.append(rid)
        return [rid] if rid else []


def restore_many(store: Engine, memories: list[Memory]) -> list[Memory]:
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
        # Tokens in a file were not issued by this store for these records: neutralised, never revealed.
        p = m.principal
        m.text = store.redact(neutralise_tokens(m.text), p)
        if m.tier == "semantic":
            m.text = normalise_text(m.text)
        m.tags = [store.redact(neutralise_tokens(t), p) for t in m.tags]
        m.meta = store.redact_value(neutralise_value(m.meta), p)
        if m.tier == "episodic":
            m.events = store.redact_value(neutralise_value(m.events), p)
            m.derived_facts = [store.redact(neutralise_tokens(f), p) for f in m.derived_facts]
        elif m.tier == "procedural":
            m.name = store.redact(neutralise_tokens(m.name or ""), p)
            m.steps = [store.redact(neutralise_tokens(s), p) for s in m.steps]
        m.content_sha256 = sha256_text(m.text)
    vectors, embedded = store.embed([m.text for m in fresh])
    if not embedded:
        for m in fresh:
            m.meta = {**m.meta, "unembedded": True}
    with store.lock.shared():
        for tier in STORED_TIERS:
            rows = [memory_to_row(m, vectors[i]) for i, m in enumerate(fresh) if m.tier == tier]
            if rows:
                store.writer.add_rows(tier, rows)
    for hook in store.write_hooks:
        hook(fresh)
    return fresh
