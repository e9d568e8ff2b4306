"""The write path: validate, redact, embed and commit memories (semantic facts upserted by content hash,
procedures versioned by name), all-or-nothing per call, in fragments of bounded size."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from memdeck.core import filters as F
from memdeck.core.errors import MemdeckError
from memdeck.core.names import check_type
from memdeck.core.records import (
    LIST_COLUMNS,
    STORED_TIERS,
    TIER_LIST_COLUMNS,
    Memory,
    MemoryInput,
    WriteResult,
    check_extra,
    check_importance,
    check_principal,
    check_tags,
    check_text,
    check_tier,
    memory_to_row,
    neutralise_tokens,
    neutralise_value,
    new_id,
    normalise_text,
    now,
    parse_time,
    row_to_memory,
    sha256_text,
    tokens_in,
)
from memdeck.core.storage.expiry import live_where
from memdeck.core.storage.formation import low_value_reason
from memdeck.core.storage.objectstore import RACED_WRITE, vanished_version, write_errors
from memdeck.core.storage.tables import append_rows

log = logging.getLogger("memdeck.write")

if TYPE_CHECKING:
    from memdeck.core.storage.base import Tables


@contextmanager
def fail_closed() -> Iterator[None]:
    """Redaction that cannot run stops the write: nothing is stored unredacted.

    A damaged or unreadable vault key, a vault directory that cannot be written, a detector that raises:
    each becomes one :class:`MemdeckError` line (keeping the exit code of a MemdeckError it wraps), raised
    before anything is committed, since every write path redacts all of its items first.
    """
    try:
        yield
    except MemdeckError as exc:
        err = MemdeckError(f"redaction could not run, nothing was stored: {exc}")
        err.exit_code = exc.exit_code
        raise err from exc
    except Exception as exc:  # any failure of detection or the vault refuses the write (re-raised)
        what = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        where = f" ({exc.filename})" if isinstance(exc, OSError) and exc.filename else ""
        raise MemdeckError(
            f"redaction could not run, nothing was stored: {type(exc).__name__}: {what}{where}"
        ) from exc


class Writer:
    """Writes for one store. Every item is validated before anything is written, so bad input writes nothing."""

    def __init__(self, store: Tables) -> None:
        self.store = store

    def prepare(self, item: MemoryInput) -> Memory:
        tier = check_tier(item.tier)
        principal = check_principal(item.principal)
        text = check_text(item.text)
        if len(text) > 1_000_000:
            raise MemdeckError(f"text is {len(text):,} characters; the limit is 1,000,000")
        agent = check_principal(item.agent or "user") if item.agent else "user"
        created = parse_time(item.created_at) or now()
        extra = dict(item.extra)
        check_extra(extra, item.meta)
        # Token-shaped input (``<SSN_1>``) is neutralised before redaction issues real tokens, so text an
        # agent sends can never be revealed as a vault value; tokens carried over from the stored source
        # episodes of a derived fact are kept.
        keep = (
            self._source_tokens(principal, extra.get("sources"))
            if tier == "semantic" and "<" in text
            else set()
        )
        text = self.store.redact(neutralise_tokens(text, keep), principal)
        if item.key is not None and not (isinstance(item.key, str) and check_tags([item.key])):
            raise MemdeckError("a key must be a non-empty string")
        tags = [
            self.stored_tag(t, principal) for t in check_tags([*item.tags, *([item.key] if item.key else [])])
        ]
        tags = list(dict.fromkeys(tags))
        meta = self.store.redact_value(neutralise_value(dict(item.meta or {})), principal)
        mem = Memory(
            id=new_id(tier),
            tier=tier,
            principal=principal,
            agent=agent,
            text=text,
            importance=check_importance(item.importance),
            pinned=bool(item.pinned),
            tags=tags,
            created_at=created,
            updated_at=created,
            meta=meta,
            expires_at=parse_time(item.expires_at),
        )
        if tier == "episodic":
            mem.session = extra.get("session")
            mem.started_at = parse_time(extra.get("started_at")) or created
            mem.ended_at = parse_time(extra.get("ended_at")) or mem.started_at
            mem.events = self.store.redact_value(neutralise_value(list(extra.get("events") or [])), principal)
            mem.derived_facts = [
                self.store.redact(neutralise_tokens(str(f)), principal)
                for f in extra.get("derived_facts") or []
            ]
            mem.closed = bool(extra.get("closed", True))
        elif tier == "semantic":
            text = normalise_text(text)
            mem.text = text
            mem.sources = [str(s) for s in extra.get("sources") or []]
            mem.confidence = float(extra.get("confidence", 0.7))
            mem.evidence_count = int(extra.get("evidence_count", 1))
            mem.last_reinforced_at = parse_time(extra.get("last_reinforced_at")) or created
        elif tier == "procedural":
            name = extra.get("name") or text.split("\n", 1)[0][:80]
            mem.name = self.store.redact(neutralise_tokens(str(name)), principal)
            mem.steps = [
                self.store.redact(neutralise_tokens(str(s)), principal) for s in extra.get("steps") or []
            ]
            mem.learned_from = [str(s) for s in extra.get("learned_from") or []]
            mem.proc_version = 1
        # The writer's type, else the one its (stored) text plainly is, else none. The type rules load with the
        # first write, not with every command that opens a store.
        from memdeck.core.memtypes import infer_type

        mem.type = check_type(extra.get("type")) or infer_type(mem.text)
        # The hash covers the stored (redacted) text and the principal: semantic facts dedupe on it.
        mem.content_sha256 = sha256_text(mem.text)
        return mem

    def stored_tag(self, tag: str, principal: str) -> str:
        """A tag as it is stored (token-shaped text neutralised, then redacted)."""
        return self.store.redact(neutralise_tokens(tag), principal)

    def _source_tokens(self, principal: str, sources: Any) -> set[str]:
        """Vault tokens in the stored texts of these episodes of ``principal`` (a derived fact's sources)."""
        ids = [str(s) for s in sources or []][:1000]
        if not ids or not self.store.has_table("episodic"):
            return set()
        rows = self.store.scan(
            "episodic",
            ["text", "derived_facts", "events"],
            F.all_of(F.eq("principal", principal), F.is_in("id", ids)),
        ).to_pylist()
        found: set[str] = set()
        for row in rows:
            found |= tokens_in(str(row.get("text") or ""))
            for f in row.get("derived_facts") or []:
                found |= tokens_in(str(f))
            found |= tokens_in(str(row.get("events") or ""))
        return found

    def write_many(self, items: Iterable[MemoryInput | dict[str, Any]]) -> list[WriteResult]:
        """Write many memories with one embedding batch and one commit per tier.

        Every item is validated before anything is written, so bad input writes nothing.
        """
        inputs = [i if isinstance(i, MemoryInput) else input_from_dict(i) for i in items]
        prepared = [self.prepare(i) for i in inputs]
        results: list[WriteResult | None] = [None] * len(prepared)
        skip = self._formation_filter(inputs, prepared, results)
        todo = [i for i in range(len(prepared)) if i not in skip]
        semantic_rows = None
        if any(inputs[i].key for i in todo):
            semantic_rows = self._claim_keys(inputs, prepared, todo, results)
            todo = [i for i in todo if results[i] is None]
        if not todo:
            return [r for r in results if r is not None]
        vectors, embedded = self.store.embed([prepared[i].text for i in todo])
        if not embedded:
            for i in todo:
                prepared[i].meta = {**prepared[i].meta, "unembedded": True}
        vec_of = {i: vectors[n] for n, i in enumerate(todo)}
        if embedded and self.store.embedder.semantic:
            # A type the writer did not give is judged again with the memory's own vector (memtypes).
            from memdeck.core.memtypes import infer_type

            for i in todo:
                if check_type(inputs[i].extra.get("type")) is None:
                    prepared[i].type = infer_type(
                        prepared[i].text,
                        vec_of[i],
                        self.store.embedder.name,
                        lambda texts: self.store.embed(texts)[0],
                    )
        with self.store.lock.shared(), write_errors():
            for tier in STORED_TIERS:
                idx = [i for i in todo if prepared[i].tier == tier]
                if not idx:
                    continue
                if tier == "semantic":
                    self._write_semantic(idx, prepared, vec_of, results, semantic_rows)
                elif tier == "procedural":
                    self._write_procedural(idx, prepared, vec_of, results)
                else:
                    rows = [memory_to_row(prepared[i], vec_of[i]) for i in idx]
                    self.add_rows(tier, rows)
                    for i in idx:
                        results[i] = WriteResult(prepared[i], "added")
        written = [
            r.memory for r in results if r is not None and r.memory is not None and r.action != "skipped"
        ]
        for hook in self.store.write_hooks:
            hook(written)
        return [r for r in results if r is not None]

    def _claim_keys(
        self,
        inputs: list[MemoryInput],
        prepared: list[Memory],
        todo: list[int],
        results: list[WriteResult | None],
    ) -> dict[str, list[Memory]] | None:
        """Keyed items whose key a live, active memory of the same principal in the tier already holds get
        ``exists`` with that memory (meta included; the newest if several) and are not written.

        For semantic facts the same read also fetches the content-hash matches the upsert needs (returned
        per principal for :meth:`_write_semantic`), so a keyed write costs one read, as an unkeyed one does.
        """
        semantic_rows: dict[str, list[Memory]] = {}
        groups: dict[tuple[str, str], list[int]] = {}
        for i in todo:
            groups.setdefault((prepared[i].tier, prepared[i].principal), []).append(i)
        for (tier, principal), idx in groups.items():
            keys = {
                i: self.stored_tag(check_tags([inputs[i].key])[0], principal) for i in idx if inputs[i].key
            }
            if not self.store.has_table(tier) or (not keys and tier != "semantic"):
                continue
            held = F.all_of(
                F.eq("state", "active"),
                live_where(self.store, tier),
                " OR ".join(F.tag_contains(k) for k in sorted(set(keys.values()))) if keys else "false",
            )
            columns = [*LIST_COLUMNS, *TIER_LIST_COLUMNS[tier], "meta"]
            if tier == "semantic":
                hashes = F.all_of(
                    F.is_in("content_sha256", sorted({prepared[i].content_sha256 for i in idx})),
                    F.ne("state", "forgotten-pending"),
                )
                where = F.all_of(F.eq("principal", principal), f"({hashes}) OR ({held})")
            else:
                where = F.all_of(F.eq("principal", principal), held)
            # The table's own query, as the content-hash upsert reads: right after this process's last write
            # it needs no new dataset handle (a scan through to_lance() opens one at every write).
            query = (
                self.store.table(tier)
                .search()
                .where(where)
                .select(columns)
                .limit(4 * (len(idx) + len(keys)) + 10)
            )
            rows = [row_to_memory(r) for r in self.store.read_retry(query.to_list)]
            if tier == "semantic":
                semantic_rows[principal] = rows
            held_ids = {m.id for m in rows if m.state == "active" and set(m.tags) & set(keys.values())}
            if held_ids and tier == "semantic":
                # A hash match that carries a key may be past its expiry: ask again, only when a key is taken.
                live = self.store.scan(tier, ["id"], F.all_of(F.is_in("id", sorted(held_ids)), held))
                held_ids = set(live["id"].to_pylist())
            for i, key in keys.items():
                holders = [m for m in rows if m.id in held_ids and key in m.tags]
                if holders:
                    results[i] = WriteResult(max(holders, key=lambda m: (m.created_at, m.id)), "exists")
        return semantic_rows or None

    def _formation_filter(
        self, inputs: list[MemoryInput], prepared: list[Memory], results: list[WriteResult | None]
    ) -> set[int]:
        enabled = self.store.settings.formation_filter.enabled
        skipped = set()
        for i, (item, mem) in enumerate(zip(inputs, prepared, strict=True)):
            screened = enabled if item.screen is None else item.screen
            reason = None if item.force or not screened else low_value_reason(mem.text)
            if reason:
                results[i] = WriteResult(None, "skipped", reason)
                skipped.add(i)
        return skipped

    def add_rows(self, tier: str, rows: list[dict[str, Any]]) -> None:
        tbl = self.store.table(tier)
        self._append(tbl, pa.Table.from_pylist(rows, schema=tbl.schema))
        self.store.after_write(tier)

    def _append(self, tbl: Any, data: pa.Table) -> None:
        """Add rows in fragments of bounded size, so a purge rewrites a bounded amount of data."""
        self._commit(lambda: append_rows(self.store, tbl, data))

    def _commit(self, commit: Callable[[], None]) -> None:
        """Run one commit; if a purge in another process removed the version it was made against, catch up
        with ``store.refresh()`` and commit once more, else one clear line that says to try again."""
        try:
            commit()
            return
        except (OSError, RuntimeError, ValueError) as exc:
            if not vanished_version(exc):
                raise
            log.info("write met a version removed by a purge; refreshing and committing again: %s", exc)
        self.store.refresh()
        try:
            commit()
        except (OSError, RuntimeError, ValueError) as exc:
            if not vanished_version(exc):
                raise
            raise MemdeckError(RACED_WRITE) from None

    def _write_semantic(
        self,
        idx: list[int],
        prepared: list[Memory],
        vec_of: dict[int, np.ndarray],
        results: list[WriteResult | None],
        prefetched: dict[str, list[Memory]] | None = None,
    ) -> None:
        tbl = self.store.table("semantic")
        keys = {(prepared[i].principal, prepared[i].content_sha256) for i in idx}
        existing: dict[tuple[str, str], Memory] = {}
        for principal in {k[0] for k in keys}:
            hashes = [k[1] for k in keys if k[0] == principal]
            if prefetched is not None and principal in prefetched:  # read with the keys (_claim_keys)
                for mem in prefetched[principal]:
                    if mem.content_sha256 in hashes and mem.state != "forgotten-pending":
                        existing.setdefault((mem.principal, mem.content_sha256), mem)
                continue
            where = F.all_of(
                F.eq("principal", principal),
                F.is_in("content_sha256", hashes),
                F.ne("state", "forgotten-pending"),
            )
            for row in (
                tbl.search()
                .where(where)
                .select(LIST_COLUMNS + TIER_LIST_COLUMNS["semantic"])
                .limit(len(hashes) * 4 + 10)
                .to_list()
            ):
                existing.setdefault((row["principal"], row["content_sha256"]), row_to_memory(row))
        new_rows: list[dict[str, Any]] = []
        new_keys: dict[tuple[str, str], int] = {}
        reinforce: dict[str, tuple[Memory, int, list[str], datetime | None]] = {}
        for i in idx:
            mem = prepared[i]
            key = (mem.principal, mem.content_sha256)
            hit = existing.get(key)
            if hit is None and key in new_keys:
                first = prepared[new_keys[key]]
                first.evidence_count = (first.evidence_count or 1) + 1
                first.sources = list(dict.fromkeys([*first.sources, *mem.sources]))
                first.last_reinforced_at = max(first.last_reinforced_at or mem.created_at, mem.created_at)  # type: ignore[type-var]
                results[i] = WriteResult(first, "reinforced")
                continue
            if hit is None:
                new_keys[key] = i
                results[i] = WriteResult(mem, "added")
                continue
            current = reinforce.get(
                hit.id, (hit, 0, list(hit.sources), hit.last_reinforced_at or hit.created_at)
            )
            sources = list(dict.fromkeys([*current[2], *mem.sources]))
            when = max(current[3] or mem.created_at, mem.created_at)  # type: ignore[type-var]
            reinforce[hit.id] = (hit, current[1] + 1, sources, when)
            results[i] = WriteResult(hit, "reinforced")
        if new_keys:
            new_rows = [memory_to_row(prepared[i], vec_of[i]) for i in new_keys.values()]
            self._append(tbl, pa.Table.from_pylist(new_rows, schema=tbl.schema))
        if reinforce:
            stamp = now()
            updates = []
            for mem_id, (hit, extra_count, sources, when) in reinforce.items():
                hit.evidence_count = int((hit.evidence_count or 1) + extra_count)
                hit.last_reinforced_at = when
                hit.sources = sources
                updates.append(
                    {
                        "id": mem_id,
                        "evidence_count": hit.evidence_count,
                        "last_reinforced_at": when,
                        "updated_at": stamp,
                        "sources": sources,
                    }
                )
            schema = pa.schema(
                [
                    tbl.schema.field(n)
                    for n in ("id", "evidence_count", "last_reinforced_at", "updated_at", "sources")
                ]
            )
            # One commit for all reinforcements: a merge on id that updates only these columns.
            merged = pa.Table.from_pylist(updates, schema=schema)
            self._commit(lambda: tbl.merge_insert("id").when_matched_update_all().execute(merged))
        self.store.after_write("semantic")

    def _write_procedural(
        self,
        idx: list[int],
        prepared: list[Memory],
        vec_of: dict[int, np.ndarray],
        results: list[WriteResult | None],
    ) -> None:
        tbl = self.store.table("procedural")
        latest: dict[tuple[str, str], int] = {}
        rows = []
        for i in idx:
            mem = prepared[i]
            key = (mem.principal, mem.name or "")
            if key not in latest:
                where = F.all_of(F.eq("principal", mem.principal), F.eq("name", mem.name or ""))
                found = tbl.search().where(where).select(["proc_version"]).limit(100_000).to_arrow()
                latest[key] = int(pc.max(found["proc_version"]).as_py() or 0) if found.num_rows else 0
            latest[key] += 1
            mem.proc_version = latest[key]
            if not mem.steps:
                mem.steps = [s.strip() for s in mem.text.split("\n") if s.strip()][1:]
            rows.append(memory_to_row(mem, vec_of[i]))
            results[i] = WriteResult(mem, "versioned" if mem.proc_version > 1 else "added")
        self._append(tbl, pa.Table.from_pylist(rows, schema=tbl.schema))
        self.store.after_write("procedural")


def input_from_dict(data: dict[str, Any]) -> MemoryInput:
    """A :class:`MemoryInput` from a plain dict; keys that are not fields go to ``extra``."""
    known = set(MemoryInput.__dataclass_fields__)
    base = {k: v for k, v in data.items() if k in known and k != "extra"}
    extra = {**dict(data.get("extra") or {}), **{k: v for k, v in data.items() if k not in known}}
    if "text" not in base:
        raise MemdeckError("each memory needs a 'text'")
    if "tier" not in base:
        base["tier"] = "semantic"
    if "principal" not in base:
        raise MemdeckError("each memory needs a 'principal'")
    return MemoryInput(**base, extra=extra)
