"""Re-scan: redact what older rules missed in stored memories, purge the old values, sign receipts.

:func:`plan_rescan` runs today's redaction rules (:mod:`memdeck.core.privacy.rescan`) over every stored
memory (text, name, tags, metadata, events, derived facts, steps, deprecation reason) and the edit history,
and lists what would change: ids, value kinds and counts, never values. :func:`rescan` then, under the
store's exclusive lock and a journal (``<store>/journal/rescan-<id>.json``):

1. ``planned``: the journal (ids, kinds) and, beside it in a 0600 file, the original values the checks
   search for;
2. ``rewritten``: each changed row is redacted again with the principal's vault (same stable tokens, the
   originals go into the vault), re-embedded from the redacted text and written back under its id, one
   commit per table; history rows likewise;
3. ``compacted``: the fragments that held the old rows are rewritten and every older version removed;
4. ``reindexed``: the full-text indices of the changed tables are built again, the others optimized;
5. ``scrubbed``: the recall trace log loses the traces of the changed memories and is copied into a fresh file;
6. ``checked``: the :class:`~memdeck.core.forget.verify.Verifier` reads every file of the store back with the
   original values as needles, in strict mode (no row may hold them, kept rows included);
7. ``receipted``: one signed receipt per principal (``trigger: "rescan"``) listing the ids and value kinds.

A process killed at any step leaves the journal; the next :meth:`Store.open` finishes it
(:func:`recover_rescans`). Resuming is safe because every step is idempotent: a row already redacted is
found clean by the rules and left alone, and receipts are issued by a fixed id.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

import pyarrow as pa

from memdeck.core import filters as F
from memdeck.core.files import fsync_dir
from memdeck.core.forget.bucket_verify import verifier_for
from memdeck.core.forget.journal import (
    RECOVERY_WAIT_S,
    JournaledRun,
    Progress,
    journal_files,
    recover,
    remove_stale_temp_files,
)
from memdeck.core.forget.plan import chunks
from memdeck.core.forget.purge import (
    Needles,
    _rewrite_dirty_fragments,
    read_secret,
    write_secret,
)
from memdeck.core.forget.purge import (
    rebuild_indices as rebuild_table_indices,
)
from memdeck.core.forget.verify import MAX_TEXT_NEEDLES
from memdeck.core.privacy.rescan import COLUMNS, redact_row, scan_row
from memdeck.core.records import HISTORY, Memory, check_principal, iso, normalise_text, now, sha256_text
from memdeck.core.storage import logdb
from memdeck.core.storage.tables import dataset, table_names

if TYPE_CHECKING:
    from memdeck.core.receipts.types import Check, Receipt, ReceiptExtra
    from memdeck.core.storage.engine import Engine

log = logging.getLogger("memdeck.rescan")

JOURNAL_FORMAT = "memdeck.rescan-journal/1"
STEPS = ("planned", "rewritten", "compacted", "reindexed", "scrubbed", "checked", "receipted")
REASON = "re-scan: values older redaction rules missed"
MIN_TEXT_NEEDLE = 6  # shorter values are not searched as substrings (too many false hits); their words are
MIN_TOKEN_NEEDLE = 10


# --- the plan -----------------------------------------------------------------------------------------


class RescanMemoryJSON(TypedDict):
    id: str
    tier: str
    principal: str
    kinds: dict[str, int]  # value kind -> how many
    columns: list[str]


class RescanHistoryJSON(TypedDict):
    memory_id: str
    version: int
    principal: str
    kinds: dict[str, int]  # value kind -> how many


class RescanCounts(TypedDict):
    memories: int
    history_versions: int
    values: int
    kinds: dict[str, int]


class RescanPreview(TypedDict):
    """What ``memdeck redact --rescan`` prints: the memories and earlier versions today's rules would change
    (value kinds and columns, never values); after the re-scan also its receipts and outcome."""

    principal: str | None
    memories: list[RescanMemoryJSON]
    history: list[RescanHistoryJSON]
    counts: RescanCounts
    receipts: NotRequired[list[str]]
    outcome: NotRequired[str]
    dry_run: NotRequired[bool]  # the command's preview (nothing written)


@dataclass
class RescanPlan:
    """What a re-scan would change. ``values`` (the originals) never leave this object except into the
    purge's needle file."""

    principal: str | None
    memories: list[dict[str, Any]] = field(default_factory=list)  # id, tier, principal, kinds, columns, ...
    history: list[dict[str, Any]] = field(default_factory=list)  # memory_id, version, principal, kinds
    values: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.memories and not self.history

    def kinds(self) -> dict[str, int]:
        total: Counter[str] = Counter()
        for item in [*self.memories, *self.history]:
            total.update(item["kinds"])
        return dict(sorted(total.items()))

    def to_json(self) -> RescanPreview:
        return {
            "principal": self.principal,
            "memories": [
                {
                    "id": m["id"],
                    "tier": m["tier"],
                    "principal": m["principal"],
                    "kinds": m["kinds"],
                    "columns": m["columns"],
                }
                for m in self.memories
            ],
            "history": [
                {
                    "memory_id": h["memory_id"],
                    "version": h["version"],
                    "principal": h["principal"],
                    "kinds": h["kinds"],
                }
                for h in self.history
            ],
            "counts": {
                "memories": len(self.memories),
                "history_versions": len(self.history),
                "values": sum(self.kinds().values()),
                "kinds": self.kinds(),
            },
        }


def plan_rescan(store: Engine, principal: str | None = None) -> RescanPlan:
    """Run today's rules over every stored memory and history row (of ``principal``, or everyone's) and
    list what they would redact. Writes nothing, not even to the vault."""
    if principal is not None:
        principal = check_principal(principal)
    redactor = store.redactor
    plan = RescanPlan(principal)
    values: dict[str, None] = {}
    where = F.eq("principal", principal) if principal is not None else None
    for tier in store.tiers_present():
        names = set(store.table(tier).schema.names)
        cols = ["id", "principal", "content_sha256", "created_at", *(c for c in COLUMNS if c in names)]
        for row in store.scan(tier, cols, where).to_pylist():
            found = scan_row(redactor, row, row["principal"])
            if not found:
                continue
            values.update((v, None) for _, v in found.values)
            plan.memories.append(
                {
                    "id": row["id"],
                    "tier": tier,
                    "principal": row["principal"],
                    "kinds": dict(sorted(found.kinds.items())),
                    "columns": found.columns,
                    "content_sha256": row.get("content_sha256") or sha256_text(row.get("text") or ""),
                    "created_at": iso(row["created_at"]) if row.get("created_at") else None,
                }
            )
    if store.has_table(HISTORY):
        for row in store.scan(HISTORY, ["memory_id", "principal", "version", "text"], where).to_pylist():
            found = scan_row(redactor, row, row["principal"])
            if not found:
                continue
            values.update((v, None) for _, v in found.values)
            plan.history.append(
                {
                    "memory_id": row["memory_id"],
                    "version": int(row["version"]),
                    "principal": row["principal"],
                    "kinds": dict(sorted(found.kinds.items())),
                }
            )
    plan.values = list(values)
    return plan


def needles_of_values(values: list[str]) -> Needles:
    """What the checks search for: each value (lower-cased) as a substring, and its long words as tokens
    (a full-text index keeps words, not whole values)."""
    texts: list[str] = []
    tokens: set[str] = set()
    for value in values:
        low = value.lower()
        if len(low.strip()) >= MIN_TEXT_NEEDLE:
            texts.append(low)
        for word in re.findall(r"\w+", low) + re.findall(r"[^\W_]+", low):
            if len(word) >= MIN_TOKEN_NEEDLE:
                tokens.add(word)
    return {"texts": list(dict.fromkeys(texts)), "tokens": sorted(tokens), "vectors": {}}


# --- the run ------------------------------------------------------------------------------------------


def rescan(store: Engine, principal: str | None = None, *, progress: Progress | None = None) -> RescanPreview:
    """Redact what today's rules find in stored memories, purge the old values, sign one receipt per
    principal. Returns the plan's summary with ``receipts`` and ``outcome``."""
    with store.lock.exclusive():
        store.refresh()
        plan = plan_rescan(store, principal)
        if plan.empty:
            return {**plan.to_json(), "receipts": [], "outcome": "nothing_to_do"}
        run = Rescan.start(store, plan, progress=progress)
        receipts = run.run()
    return _summary(run.journal, receipts)


def _summary(journal: dict[str, Any], receipts: list[Receipt]) -> RescanPreview:
    ok = all(r.get("outcome") == "verified" for r in receipts)
    kinds: Counter[str] = Counter()
    for item in [*journal["memories"], *journal["history"]]:
        kinds.update(item["kinds"])
    return {
        "principal": journal["principal_filter"],
        "memories": [
            {
                "id": m["id"],
                "tier": m["tier"],
                "principal": m["principal"],
                "kinds": m["kinds"],
                "columns": m["columns"],
            }
            for m in journal["memories"]
        ],
        "history": journal["history"],
        "counts": {
            "memories": len(journal["memories"]),
            "history_versions": len(journal["history"]),
            "values": sum(kinds.values()),
            "kinds": dict(sorted(kinds.items())),
        },
        "receipts": [r["receipt_id"] for r in receipts],
        "outcome": "verified" if ok else "checks_failed",
    }


class Rescan(JournaledRun[dict[str, Any]]):
    """One journaled re-scan (see the module docstring for the steps)."""

    FORMAT = JOURNAL_FORMAT
    LABEL = "re-scan"
    PREFIX = "rescan"
    CRASH_PREFIX = "rescan:"

    def __init__(
        self, store: Engine, path: Path, journal: dict[str, Any], progress: Progress | None = None
    ) -> None:
        super().__init__(store, path, journal, progress)
        self.receipts: list[Receipt] = []

    @classmethod
    def _decode(cls, obj: dict[str, Any]) -> dict[str, Any]:
        return obj

    def _encode(self) -> str:
        return json.dumps(self.journal, ensure_ascii=False, sort_keys=True)

    def _resumed(self) -> None:
        self.journal.setdefault("extra", {})["resumed"] = True

    def _steps_done(self) -> list[str]:
        steps: list[str] = self.journal["steps"]
        return steps

    @property
    def rescan_id(self) -> str:
        return str(self.journal["rescan_id"])

    @property
    def secret_path(self) -> Path:
        return self.path.with_name(f"rescan-{self.rescan_id}.secret")

    @classmethod
    def start(cls, store: Engine, plan: RescanPlan, *, progress: Progress | None = None) -> Rescan:
        rescan_id = uuid.uuid4().hex
        directory = store.layout.journal
        directory.mkdir(parents=True, exist_ok=True)
        os.chmod(directory, 0o700)
        journal: dict[str, Any] = {
            "format": JOURNAL_FORMAT,
            "rescan_id": rescan_id,
            "started_at": iso(now()),
            "principal_filter": plan.principal,
            "memories": plan.memories,
            "history": plan.history,
            "actions": [],
            "checks": [],
            "extra": {},
            "steps": [],
        }
        run = cls(store, directory / f"rescan-{rescan_id}.json", journal, progress)
        run.progress(f"planning: {len(plan.memories)} memories, {len(plan.history)} earlier versions")
        # The needles first: a journal on disk always has them beside it until the checks have run.
        write_secret(run.secret_path, store.layout.keys, needles_of_values(plan.values))  # encrypted on disk
        run._mark("planned")
        return run

    def _act(self, *actions: str) -> None:
        for action in actions:
            if action not in self.journal["actions"]:
                self.journal["actions"].append(action)

    def run(self) -> list[Receipt]:
        with self.store.lock.exclusive():
            steps = [
                ("rewritten", self._rewritten),
                ("compacted", self._compacted),
                ("reindexed", self._reindexed),
                ("scrubbed", self._scrubbed),
                ("checked", self._checked),
            ]
            assert [name for name, _ in steps] == list(STEPS[1:-1])
            for step, do in steps:
                if step in self.journal["steps"]:
                    continue
                do()
                self._mark(step)
            self._receipted()
        return self.receipts

    # -- steps --

    def _tables_touched(self) -> list[str]:
        names = {m["tier"] for m in self.journal["memories"]}
        if self.journal["history"]:
            names.add(HISTORY)
        return sorted(names)

    def _rewritten(self) -> None:
        self.progress("redacting and rewriting rows")
        store = self.store
        store.refresh()
        redactor = store.redactor
        by_tier: dict[str, list[str]] = {}
        for m in self.journal["memories"]:
            by_tier.setdefault(m["tier"], []).append(m["id"])
        rewritten = 0
        for tier, ids in sorted(by_tier.items()):
            if not store.has_table(tier):
                continue
            tbl = store.table(tier)
            rows: list[dict[str, Any]] = []
            for chunk in chunks(ids):
                rows.extend(tbl.to_lance().to_table(filter=F.is_in("id", chunk)).to_pylist())
            changed = []
            for row in rows:
                values = redact_row(redactor, row, row["principal"])
                if not values:
                    continue  # already redacted (a resumed re-scan)
                if "text" in values and tier == "semantic":
                    values["text"] = normalise_text(values["text"])
                row.update(values)
                row["content_sha256"] = sha256_text(row["text"])
                changed.append(row)
            if not changed:
                continue
            vectors, embedded = store.embed([row["text"] for row in changed])
            for row, vec in zip(changed, vectors, strict=True):
                row["vector"] = [float(x) for x in vec]
                if not embedded:
                    meta = json.loads(row["meta"]) if row.get("meta") else {}
                    row["meta"] = json.dumps({**meta, "unembedded": True}, ensure_ascii=False, sort_keys=True)
            data = pa.Table.from_pylist(changed, schema=tbl.schema)
            tbl.merge_insert("id").when_matched_update_all().execute(data)
            rewritten += len(changed)
        history = 0
        if self.journal["history"] and store.has_table(HISTORY):
            hist = store.table(HISTORY)
            keys = {(h["memory_id"], int(h["version"])) for h in self.journal["history"]}
            rows = []
            for chunk in chunks(sorted({k[0] for k in keys})):
                rows.extend(hist.to_lance().to_table(filter=F.is_in("memory_id", chunk)).to_pylist())
            changed = []
            for row in rows:
                if (row["memory_id"], int(row["version"])) not in keys:
                    continue
                values = redact_row(redactor, {"text": row["text"]}, row["principal"])
                if values:
                    row["text"] = values["text"]
                    row["content_sha256"] = sha256_text(row["text"])
                    changed.append(row)
            if changed:
                hist.merge_insert(["memory_id", "version"]).when_matched_update_all().execute(
                    pa.Table.from_pylist(changed, schema=hist.schema)
                )
                history = len(changed)
        extra = self.journal["extra"]
        extra["rows_rewritten"] = int(extra.get("rows_rewritten", 0)) + rewritten
        extra["history_rows_rewritten"] = int(extra.get("history_rows_rewritten", 0)) + history
        extra["graph"] = self._regraph(by_tier)
        self._act("tokenize", "rewrite")
        store.refresh()

    def _regraph(self, by_tier: dict[str, list[str]]) -> dict[str, int]:
        """Entities and relations follow the redacted text: each changed memory leaves the graph (what only it
        named goes, old values included) and its entities are extracted again from the stored text. Done
        for every memory of the journal, changed in this run or an interrupted one, so resuming is safe."""
        from memdeck.core.graph.memory.forget import apply_graph
        from memdeck.core.graph.memory.write import index_memories

        store = self.store
        if not store.graph_enabled:
            return {}
        memories: list[Memory] = []
        for tier, ids in sorted(by_tier.items()):
            if store.has_table(tier):
                for chunk in chunks(ids):
                    where = F.is_in("id", chunk)
                    rows = store.scan(tier, ["id", "principal", "agent", "text"], where).to_pylist()
                    memories.extend(
                        Memory(
                            id=r["id"],
                            tier=tier,
                            principal=r["principal"],
                            agent=r["agent"],
                            text=r["text"] or "",
                        )
                        for r in rows
                    )
        counts: Counter[str] = Counter()
        for principal in sorted({m.principal for m in memories}):
            mine = [m for m in memories if m.principal == principal]
            counts.update(apply_graph(store, principal, [m.id for m in mine]))
            index_memories(store, mine)
        return dict(counts)

    def _compacted(self) -> None:
        self.progress("rewriting fragments")
        rewritten = 0
        for name in table_names(self.store):
            rewritten += _rewrite_dirty_fragments(self.store, name)
        self.journal["extra"]["fragments_rewritten"] = (
            int(self.journal["extra"].get("fragments_rewritten", 0)) + rewritten
        )
        self._act("compact", "cleanup_old_versions")
        self.store.refresh()

    def _reindexed(self) -> None:
        self.progress("rebuilding indices")
        for name in self._tables_touched():
            if self.store.has_table(name) and rebuild_indices(self.store, name):
                self._act("reindex")
        self.store.refresh()

    def _scrubbed(self) -> None:
        self.progress("scrubbing the trace log")
        ids = sorted(
            {m["id"] for m in self.journal["memories"]} | {h["memory_id"] for h in self.journal["history"]}
        )
        result = logdb.scrub(self.store, ids)
        self.journal["extra"]["trace_scrub"] = {k: v for k, v in result.items() if k != "path"}
        self._act("trace_scrub")
        if result.get("rewritten"):
            self._act("analytics_rewrite")

    def _checked(self) -> None:
        if self.journal["extra"].get("resumed"):
            # Other processes may have written between the kill and this recovery: settle the tables again.
            self._compacted()
            self._reindexed()
        self.progress("checking that no old value remains")
        remove_stale_temp_files(self.path.parent, f"rescan-{self.rescan_id}.*.tmp*")
        secret = read_secret(self.secret_path, self.store.layout.keys)
        self.journal["checks"] = verify_values(self.store, secret, exclude={self.path, self.secret_path})

    def _receipted(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.secret_path.unlink()
        fsync_dir(self.secret_path.parent)
        checks = [c for c in self.journal["checks"] if c.get("name") != "journal_secret_removed"]
        checks.append(
            {
                "name": "journal_secret_removed",
                "passed": not self.secret_path.exists(),
                "detail": "the values the checks searched for were deleted before signing",
            }
        )
        self.journal["checks"] = checks
        ok = all(c.get("passed") for c in checks)
        from memdeck.core.receipts import ReceiptBook

        book = ReceiptBook(self.store.root)
        principals = sorted(
            {m["principal"] for m in self.journal["memories"]}
            | {h["principal"] for h in self.journal["history"]}
        )
        self.receipts = []
        for n, principal in enumerate(principals):
            memories = [m for m in self.journal["memories"] if m["principal"] == principal]
            history = [h for h in self.journal["history"] if h["principal"] == principal]
            extra: ReceiptExtra = {
                "outcome": "verified" if ok else "checks_failed",
                "trigger": "rescan",
                "whole_principal": False,
                "history_versions": len(history),
                "cascade_deleted": 0,
                "cascade_updated": 0,
                "rescan": {
                    "redacted": [
                        {"id": m["id"], "tier": m["tier"], "kinds": m["kinds"], "columns": m["columns"]}
                        for m in memories
                    ],
                    "history": [
                        {"memory_id": h["memory_id"], "version": h["version"], "kinds": h["kinds"]}
                        for h in history
                    ],
                },
            }
            if self.journal["extra"].get("resumed"):
                extra["resumed"] = True
            self.receipts.append(
                book.issue(
                    principal=principal,
                    reason=REASON,
                    deleted=[
                        {
                            "id": m["id"],
                            "tier": m["tier"],
                            "content_sha256": m["content_sha256"],
                            "created_at": m["created_at"],
                        }
                        for m in memories
                    ],
                    cascade=[],
                    actions=self.journal["actions"],
                    checks=checks,
                    extra=extra,
                    receipt_id=f"{self.rescan_id}-{n}",
                )
            )
        self._mark("receipted")
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        fsync_dir(self.path.parent)
        if not ok:
            failed = ", ".join(c["name"] for c in checks if not c.get("passed"))
            log.warning("re-scan %s finished but checks failed: %s", self.rescan_id, failed)


def rebuild_indices(store: Engine, name: str) -> bool:
    """Build the table's full-text index again (it keeps the words of rewritten rows) and optimize the
    others; remove the versions this leaves. Returns whether the table has indices."""
    ds = dataset(store, name)
    indices = ds.list_indices()
    if indices:
        rebuild_table_indices(store, name, ds, indices, tagged_versions_ok=True)
    return bool(indices)


def verify_values(
    store: Engine, secret: dict[str, Any] | None, *, exclude: set[Path] | frozenset[Path] = frozenset()
) -> list[Check]:
    """Read every file of the store back, looking for the given values (``{"texts", "tokens"}``) anywhere,
    kept rows included. The Verifier searches at most MAX_TEXT_NEEDLES substrings per pass: more values
    take more passes, and a check passes only when it passed in every pass."""
    journal = {
        "principal": "",
        "whole_principal": False,
        "deleted": [],
        "cascade_delete_ids": [],
        "tiers": {},
        "actions": [],
        "history_versions": 0,
    }
    if secret is None:
        return verifier_for(store, journal, None, exclude=exclude, strict=True).run()
    texts = list(secret.get("texts", []))
    groups = [texts[i : i + MAX_TEXT_NEEDLES] for i in range(0, len(texts), MAX_TEXT_NEEDLES)] or [[]]
    merged: dict[str, Check] = {}
    for group in groups:
        part = {"texts": group, "tokens": secret.get("tokens", []), "vectors": {}}
        for check in verifier_for(store, journal, part, exclude=exclude, strict=True).run():
            seen = merged.get(check["name"])
            if seen is None or (seen["passed"] and not check["passed"]):
                merged[check["name"]] = check.copy()
    checks = list(merged.values())
    for check in checks:
        if check["name"] == "no_row_in_any_data_file" and check["passed"]:
            check["detail"] = (
                f"read every data file with LanceFileReader: no row, kept or not, holds any of the "
                f"{len(texts)} removed values or {len(secret.get('tokens', []))} of their words"
            )
    return checks


# --- recovery -----------------------------------------------------------------------------------------


def pending_rescans(store: Engine) -> list[Path]:
    return journal_files(store, Rescan.PREFIX)


def recover_rescans(store: Engine, *, wait: float = RECOVERY_WAIT_S) -> list[Receipt]:
    """Finish re-scans a killed process left half done; returns their receipts (see
    :func:`memdeck.core.forget.journal.recover`)."""
    return [receipt for receipts in recover(store, Rescan, wait=wait) for receipt in receipts]
