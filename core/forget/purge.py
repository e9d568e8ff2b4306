"""The purge: journaled steps that delete, rewrite, reindex, scrub, shred, check and sign, resumable after a crash."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import secrets
import uuid
from collections.abc import Callable, Mapping
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, cast

from memdeck.core import filters as F
from memdeck.core.errors import MemdeckError
from memdeck.core.files import create_private, fsync_dir, write_atomic_bytes
from memdeck.core.forget import tombstones
from memdeck.core.forget.bucket_verify import verifier_for
from memdeck.core.forget.journal import (
    PURGE_JOURNAL_FORMAT,
    JournaledRun,
    Progress,
    PurgeJournal,
    remove_stale_temp_files,
)
from memdeck.core.forget.needles import json_strings, needles_of
from memdeck.core.forget.plan import ForgetPlan, chunks
from memdeck.core.forget.vaults import prune_operator_vault, surviving_tokens
from memdeck.core.graph.memory.forget import apply_graph
from memdeck.core.privacy.vault import Vault
from memdeck.core.records import (
    HISTORY,
    iso,
    now,
    token_free_hashes,
    tokens_in,
)
from memdeck.core.storage import logdb
from memdeck.core.storage.tables import dataset, rows_per_fragment, table_names

if TYPE_CHECKING:
    from memdeck.core.receipts.types import Check, Receipt, ReceiptExtra, TraceScrub, VaultShred
    from memdeck.core.storage.engine import Engine

log = logging.getLogger("memdeck.forget")

JOURNAL_FORMAT = PURGE_JOURNAL_FORMAT
STEPS = ("planned", "deleted", "compacted", "reindexed", "scrubbed", "shredded", "checked", "receipted")
MAX_VECTOR_PROBES = 16


# --- the purge ----------------------------------------------------------------------------------------


def _token_free_tombstones(memories: list[Any]) -> list[list[Any]]:
    """Tombstones for texts that held a secret, with their tokens reduced to the kind
    (:func:`memdeck.core.records.token_free_hashes`): hashes only, no id, nothing readable."""
    return [[None, h] for memory in memories for h in token_free_hashes(memory.text or "")]


class Purge(JournaledRun[PurgeJournal]):
    """One journaled purge (see the package docstring for the steps)."""

    FORMAT = JOURNAL_FORMAT
    LABEL = "purge"
    PREFIX = "purge"

    @classmethod
    def _decode(cls, obj: dict[str, Any]) -> PurgeJournal:
        return PurgeJournal.from_dict(obj)

    def _encode(self) -> str:
        return self.journal.to_json()

    def _resumed(self) -> None:
        self.journal.extra["resumed"] = True

    def _steps_done(self) -> list[str]:
        return self.journal.steps

    @property
    def purge_id(self) -> str:
        return str(self.journal.purge_id)

    @property
    def secret_path(self) -> Path:
        return self.path.with_name(f"purge-{self.purge_id}.secret")

    @property
    def ids(self) -> list[str]:
        return self.journal.ids

    @classmethod
    def start(
        cls,
        store: Engine,
        plan: ForgetPlan,
        reason: str,
        *,
        trigger: str,
        progress: Progress | None,
        tombstone: bool = True,
    ) -> Purge:
        purge_id = uuid.uuid4().hex
        directory = store.layout.journal
        directory.mkdir(parents=True, exist_ok=True)
        os.chmod(directory, 0o700)
        tiers = {m.id: m.tier for m in plan.deleted} | {m.id: m.tier for m, _ in plan.cascade_delete}
        journal = PurgeJournal(
            purge_id=purge_id,
            started_at=iso(now()),
            trigger=trigger,
            principal=plan.principal,
            reason=reason,
            whole_principal=plan.whole_principal,
            deleted=[
                {
                    "id": m.id,
                    "tier": m.tier,
                    "content_sha256": m.content_sha256,
                    "created_at": iso(m.created_at),
                }
                for m in plan.deleted
            ],
            cascade=[{"id": m.id, "tier": m.tier, "why": why} for m, why in plan.cascade_delete]
            + [{"id": m.id, "tier": m.tier, "why": why} for m, why in plan.cascade_update]
            + [{"id": c["id"], "tier": c["tier"], "why": c["why"]} for c in plan.graph.receipt_items()],
            cascade_delete_ids=[m.id for m, _ in plan.cascade_delete],
            tombstones=[[m.id, m.content_sha256] for m in plan.deleted]
            + [[m.id, m.content_sha256] for m, _ in plan.cascade_delete]
            + _token_free_tombstones([*plan.deleted, *(m for m, _ in plan.cascade_delete)])
            if tombstone
            else [],
            tiers=tiers,
            updates={k: {"tier": v["tier"], "values": v["values"]} for k, v in plan.updates.items()},
            history_versions=plan.history_versions,
        )
        purge = cls(store, directory / f"purge-{purge_id}.json", journal, progress)
        purge.progress(f"planning: {len(plan.deleted)} memories, {len(plan.cascade_delete)} cascaded")
        secret = _collect_secret(store, purge.ids, tiers, plan.principal, plan.whole_principal)
        # The secret first: a journal on disk always has its needles beside it until the checks have run.
        write_secret(purge.secret_path, store.layout.keys, secret)
        purge._mark("planned")
        return purge

    bucket_etag: str | None = None  # the version of the bucket's copy of the journal this process wrote last

    def _saved(self) -> None:
        from memdeck.core.forget import bucket

        bucket.save(
            self,
            None
            if "checked" in self.journal.steps
            else read_secret(self.secret_path, self.store.layout.keys),
        )

    def _act(self, *actions: str) -> None:
        for action in actions:
            if action not in self.journal.actions:
                self.journal.actions.append(action)

    def _steps(self) -> list[tuple[str, Callable[[], None]]]:
        """The journaled steps between planned and receipted, in order, each with what it does."""
        steps = [
            ("deleted", self._deleted),
            ("compacted", self._compacted),
            ("reindexed", self._reindexed),
            ("scrubbed", self._scrubbed),
            ("shredded", self._shredded),
            ("checked", self._checked),
        ]
        assert [name for name, _ in steps] == list(STEPS[1:-1])
        return steps

    def run(self) -> Receipt:
        with self.store.lock.exclusive():
            for step, do in self._steps():
                if step in self.journal.steps:
                    continue
                self.store.lock.fence()  # a machine whose lease expired stops here, before touching anything
                do()
                self._mark(step)
            # Always: issuing is idempotent by receipt id, so a purge killed after signing ends the same way.
            self._receipted()
        return self.receipt

    # -- steps --

    def _deleted(self) -> None:
        self.progress("deleting rows")
        store = self.store
        # On a shared store the bucket's tombstones also name the vault tokens the memories held, so that
        # every machine drops those values from its own vault when it sees this purge.
        vault_tokens = (read_secret(self.secret_path, store.layout.keys) or {}).get("vault_tokens") or []
        if self.journal.tombstones or vault_tokens:
            # before the rows go: a purge killed after this point still leaves what it forgot refused
            count = tombstones.record(
                store,
                self.journal.principal,
                [(t[0], t[1]) for t in self.journal.tombstones],
                purge_id=self.purge_id,
                vault_tokens=vault_tokens,
            )
            if self.journal.tombstones:
                self.journal.extra["tombstones"] = count
                self._act("tombstone")
        store.refresh()
        by_tier: dict[str, list[str]] = {}
        for mem_id in self.ids:
            by_tier.setdefault(self.journal.tiers[mem_id], []).append(mem_id)
        for tier, ids in by_tier.items():
            if store.has_table(tier):
                tbl = store.table(tier)
                for chunk in chunks(ids):
                    tbl.delete(F.is_in("id", chunk))
        self._act("delete")
        stamp = now()
        for mem_id, update in self.journal.updates.items():
            # Absolute values computed at planning time, so a resumed purge applies them once, not twice.
            values = {**update["values"], "updated_at": stamp}
            store.table(update["tier"]).update(where=F.eq("id", mem_id), values=values)
            self._act("cascade_update")
        if self.journal.cascade_delete_ids:
            self._act("cascade_delete")
        # Forgotten ids leave the graph's mentions and sources; what they alone supported goes.
        graph = apply_graph(store, self.journal.principal, self.ids, whole=self.journal.whole_principal)
        self.journal.extra["graph"] = graph
        if any(graph.values()):
            self._act("graph_cascade")
        if store.has_table(HISTORY):
            hist = store.table(HISTORY)
            if self.journal.whole_principal:
                hist.delete(F.eq("principal", self.journal.principal))
            else:
                for chunk in chunks(self.ids):
                    hist.delete(F.is_in("memory_id", chunk))
            if self.journal.history_versions:
                self._act("history_purge")

    def _compacted(self) -> None:
        self.progress("rewriting fragments")
        store = self.store
        rewritten = 0
        for name in table_names(store):
            rewritten += _rewrite_dirty_fragments(store, name)
        self.journal.extra["fragments_rewritten"] = (
            self.journal.extra.get("fragments_rewritten", 0) + rewritten
        )
        self._act("compact", "cleanup_old_versions")
        store.refresh()

    def _reindexed(self) -> None:
        self.progress("checking indices")
        store = self.store
        for name in table_names(store):
            if _repair_indices(store, name):
                self._act("reindex")
        store.refresh()

    def _scrubbed(self) -> None:
        self.progress("scrubbing the trace log")
        secret = read_secret(self.secret_path, self.store.layout.keys) or {}
        results = [logdb.scrub(self.store, self.ids, _quotes(secret), principal=self.journal.principal)]
        if self.journal.whole_principal:
            results.append(logdb.scrub_principal(self.store, self.journal.principal))
        kept = [{k: v for k, v in r.items() if k != "path"} if isinstance(r, dict) else r for r in results]
        scrubbed: TraceScrub | list[TraceScrub] = _plain(kept[0] if len(kept) == 1 else kept)
        self.journal.extra["trace_scrub"] = scrubbed
        self._act("trace_scrub")
        if any(isinstance(r, dict) and r.get("rewritten") for r in results):
            self._act("analytics_rewrite")

    def _shredded(self) -> None:
        if not self.journal.whole_principal:
            self._prune_vault()
            return
        self.progress("destroying the redaction vault")
        vault = Vault(self.store.layout.vault)
        try:
            values = set(vault.tokens(self.journal.principal).values())
        except MemdeckError:  # a damaged vault: nobody can read its values; it is destroyed all the same
            values = set()
        self._prune_operator_vault(values)
        result = vault.destroy(self.journal.principal)
        shred: VaultShred = _plain(result)
        self.journal.extra["vault"] = shred
        self.store.reset_redactor()  # it may hold the destroyed key in memory
        self._act("crypto_shred")

    def _prune_vault(self) -> None:
        """Remove from the principal's vault the values of the forgotten memories that no surviving memory
        (nor its edit history) uses, so no later write or reveal can bring them back."""
        secret = read_secret(self.secret_path, self.store.layout.keys) or {}
        candidates = set(secret.get("vault_tokens") or [])
        principal = self.journal.principal
        if not candidates:
            return
        self.progress("pruning the redaction vault")
        unused = candidates - surviving_tokens(self.store, principal)
        vault = Vault(self.store.layout.vault)
        mine = vault.tokens(principal)
        self._prune_operator_vault({mine[t] for t in unused if t in mine})
        removed = vault.prune(principal, unused)
        self.store.reset_redactor()  # its vault holds the pruned values in memory
        self.journal.extra["vault_pruned"] = removed
        self._act("vault_prune")

    def _prune_operator_vault(self, values: set[str]) -> None:
        """The same values typed into a whole-store recall (the operator's vault, where the trace log's
        redacted queries resolve) go too: a forgotten value is revealed nowhere."""
        pruned = prune_operator_vault(self.store, values)
        if pruned:
            self.journal.extra["operator_vault_pruned"] = pruned

    def _vault_check(self) -> Check | None:
        secret = read_secret(self.secret_path, self.store.layout.keys) or {}
        candidates = set(secret.get("vault_tokens") or [])
        if self.journal.whole_principal or not candidates:
            return None
        principal = self.journal.principal
        left = (set(Vault(self.store.layout.vault).tokens(principal)) & candidates) - surviving_tokens(
            self.store, principal
        )
        return {
            "name": "vault_pruned",
            "passed": not left,
            "detail": f"{len(candidates)} redacted values of the forgotten memories checked; "
            f"{len(left)} still in the vault without a surviving memory using them",
        }

    def _checked(self) -> None:
        if self.journal.extra.get("resumed"):
            # Between the kill and this recovery other processes may have written (each update leaves a
            # deleted row and a version behind): settle the tables again before they are checked.
            self._compacted()
            self._reindexed()
        self.progress("checking that nothing remains")
        remove_stale_temp_files(self.path.parent, f"purge-{self.purge_id}.*.tmp*")
        secret = read_secret(self.secret_path, self.store.layout.keys)
        from memdeck.core.forget.bucket import key_of

        checks = verifier_for(
            self.store,
            self.journal.to_dict(),
            secret,
            exclude={self.path, self.secret_path},
            exclude_keys=frozenset({key_of(self.purge_id)}),
        ).run()
        vault_check = self._vault_check()
        if vault_check is not None:
            checks.append(vault_check)
        # Recorded (by run) before the needles are removed: a crash after this resumes at the receipt.
        self.journal.checks = checks

    def _remove_secret(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.secret_path.unlink()
        fsync_dir(self.secret_path.parent)

    def _receipted(self) -> None:
        failed_before = not all(c.get("passed") for c in self.journal.checks)
        kept = retained_needles_path(self.store, self.purge_id)
        if failed_before and not kept.exists():
            # A check failed: the texts stay, encrypted, so that `memdeck forget --recheck` can search for the
            # same text once the person has removed what was found; a recheck that verifies deletes them.
            secret = read_secret(self.secret_path, self.store.layout.keys)
            if secret is not None:
                kept.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                write_secret(kept, self.store.layout.keys, secret)
        self._remove_secret()
        checks = [c for c in self.journal.checks if c.get("name") != "journal_secret_removed"]
        checks.append(
            {
                "name": "journal_secret_removed",
                "passed": not self.secret_path.exists(),
                "detail": "the texts the checks searched for were deleted before signing"
                if not failed_before
                else (
                    "the journal's copy of the texts the checks searched for was deleted before signing; since a check "
                    "failed, an encrypted copy is kept for `memdeck forget --recheck` until a recheck verifies"
                ),
            }
        )
        self.journal.checks = checks
        ok = all(c.get("passed") for c in checks)
        # The journal's added fields (unset ones left out), then the purge's outcome and counts.
        extra = cast(
            "ReceiptExtra",
            {
                **{k: v for k, v in self.journal.extra.items() if v is not None},
                "outcome": "verified" if ok else "checks_failed",
                "trigger": self.journal.trigger,
                "whole_principal": bool(self.journal.whole_principal),
                "history_versions": int(self.journal.history_versions or 0),
                "cascade_deleted": len(self.journal.cascade_delete_ids),
                "cascade_updated": len(self.journal.updates),
            },
        )
        from memdeck.core.forget import bucket
        from memdeck.core.receipts import ReceiptBook

        self.store.lock.fence()
        bucket.save(self, None)  # the needles leave the bucket before the receipt is signed
        book = ReceiptBook(self.store.root)
        self.receipt = book.issue(
            principal=self.journal.principal,
            reason=self.journal.reason,
            deleted=self.journal.deleted,
            cascade=self.journal.cascade,
            actions=self.journal.actions,
            checks=checks,
            extra=extra,
            receipt_id=self.purge_id,
        )
        bucket.publish(self.store, book, self.receipt)  # the store's chain, every machine's receipts
        self._mark("receipted")
        bucket.remove(self)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        fsync_dir(self.path.parent)
        if not ok:
            failed = ", ".join(c["name"] for c in checks if not c.get("passed"))
            log.warning("purge %s finished but checks failed: %s", self.purge_id, failed)

    receipt: Receipt


def _rewrite_dirty_fragments(store: Engine, name: str) -> int:
    """Rewrite only the fragments that hold deleted rows, then drop every older version.

    Fresh dataset handles for each step: a stale one commits against an old version and conflicts.
    """
    ds = dataset(store, name)
    fragments = ds.get_fragments()
    dirty = [f.fragment_id for f in fragments if f.metadata.deletion_file is not None]
    if dirty:
        ds.optimize.compact_files(
            materialize_deletions=True,
            materialize_deletions_threshold=0.0,
            target_rows_per_fragment=rows_per_fragment(store),
            excluded_fragment_ids=[f.fragment_id for f in fragments if f.fragment_id not in dirty],
        )
    if not dirty:
        # The manifest of a delete (or update) commit holds its predicate, ids included. When no rewrite
        # followed it (the deleted rows filled whole fragments), a content-free commit takes its place.
        latest = dataset(store, name)
        try:
            txn = latest.read_transaction(latest.version)
            operation = type(txn.operation).__name__ if txn is not None else None
        except Exception:  # noqa: BLE001 - some operations cannot be read back from Python
            operation = None
        if operation not in ("Rewrite", "UpdateConfig"):
            latest.update_config({"memdeck.purged": "1"})
    store.lock.fence()  # removing every older version is the step a machine that lost its lease must not take
    dataset(store, name).cleanup_old_versions(
        older_than=timedelta(0), delete_unverified=True, error_if_tagged_old_versions=False
    )
    return len(dirty)


def _repair_indices(store: Engine, name: str) -> bool:
    """Make every index forget the purged rows. Returns whether the table has indices.

    Compaction remaps the indices of the fragments it rewrites. A delete that empties whole fragments
    rewrites nothing, and the indices keep those rows: a vector or scalar index drops them when optimized;
    the full-text index keeps their postings and tokens even then, so it is built again.
    """
    ds = dataset(store, name)
    indices = ds.list_indices()
    if not indices:
        return False
    live = {f.fragment_id for f in ds.get_fragments()}
    stale = [idx for idx in indices if set(idx.get("fragment_ids") or ()) - live]
    if stale:
        rebuild_indices(store, name, ds, stale)
    return True


def rebuild_indices(
    store: Engine, name: str, ds: Any, indices: list[dict[str, Any]], *, tagged_versions_ok: bool = False
) -> None:
    """Make ``indices`` of a table forget rewritten or deleted rows, then remove the versions this leaves.

    A vector or scalar index forgets them when optimized; a full-text index keeps their postings and tokens
    even then, so it is dropped and built again.
    """
    full_text = [idx["name"] for idx in indices if str(idx.get("type", "")).lower() in ("inverted", "fts")]
    others = [idx["name"] for idx in indices if idx["name"] not in full_text]
    if others:
        ds.optimize.optimize_indices(index_names=others)
    if full_text:
        from memdeck.core.storage.indexing import ensure_fts

        tbl = store.table(name)
        tbl.checkout_latest()
        for index_name in full_text:
            tbl.drop_index(index_name)
        ensure_fts(tbl)
    cleanup: dict[str, Any] = {"error_if_tagged_old_versions": False} if tagged_versions_ok else {}
    store.lock.fence()
    dataset(store, name).cleanup_old_versions(older_than=timedelta(0), delete_unverified=True, **cleanup)


class Needles(TypedDict, total=False):
    """What the checks search for (kept encrypted beside the journal until the checks have run): texts and
    pieces, distinctive tokens, words for the keyword check, a few vectors, and the vault tokens the
    forgotten memories held. A re-scan's needles have texts, tokens and vectors only."""

    texts: list[str]
    tokens: list[str]
    words: list[str]
    vectors: dict[str, list[float]]
    principal: str
    vault_tokens: list[str]


def _collect_secret(
    store: Engine, ids: list[str], tiers: dict[str, str], principal: str, whole: bool
) -> Needles:
    """The texts (and a few vectors) the checks search for: every string of the memories and of their
    edit history."""
    strings: list[str] = []
    vectors: dict[str, list[float]] = {}
    by_tier: dict[str, list[str]] = {}
    for mem_id in ids:
        by_tier.setdefault(tiers[mem_id], []).append(mem_id)
    for tier, tier_ids in by_tier.items():
        if not store.has_table(tier):
            continue
        ds = store.table(tier).to_lance()
        for chunk in chunks(tier_ids):
            tbl = ds.to_table(filter=F.is_in("id", chunk))
            for row in tbl.drop_columns(["vector"]).to_pylist():
                strings.extend(_content_strings(row))
            for mem_id, vec in zip(tbl["id"].to_pylist(), tbl["vector"].to_pylist(), strict=True):
                if len(vectors) < MAX_VECTOR_PROBES and vec is not None:
                    vectors[mem_id] = [float(x) for x in vec]
    if store.has_table(HISTORY):
        ds = store.table(HISTORY).to_lance()
        if whole:
            tbl = ds.to_table(columns=["text"], filter=F.eq("principal", principal))
            strings.extend(t for t in tbl["text"].to_pylist() if t)
        else:
            for chunk in chunks(ids):
                tbl = ds.to_table(columns=["text"], filter=F.is_in("memory_id", chunk))
                strings.extend(t for t in tbl["text"].to_pylist() if t)
    texts, tokens, words = needles_of(strings)
    vault_tokens = sorted(set().union(*(tokens_in(s) for s in strings))) if strings else []
    return {
        "texts": texts,
        "tokens": tokens,
        "words": words,
        "vectors": vectors,
        "principal": principal,
        "vault_tokens": vault_tokens,
    }


def _quotes(secret: dict[str, Any]) -> Callable[[str], bool] | None:
    """A test of a logged query against the forgotten texts, as the analytics check makes it: a whole text
    or piece, or one of its distinctive words."""
    texts = [t for t in secret.get("texts") or [] if t]
    words = set(secret.get("tokens") or [])
    if not texts and not words:
        return None
    split = re.compile(r"[^\w]+")

    def matches(query: str) -> bool:
        low = query.lower()
        return any(t in low for t in texts) or not words.isdisjoint(split.split(low))

    return matches


def _content_strings(row: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for key in ("text", "name", "deprecation_reason"):
        if row.get(key):
            out.append(str(row[key]))
    for key in ("tags", "derived_facts", "steps"):
        out.extend(str(v) for v in row.get(key) or [] if v)
    for key in ("events", "meta"):
        raw = row.get(key)
        if raw:
            try:
                out.extend(json_strings(json.loads(raw)))
            except ValueError:
                out.append(str(raw))
    return out


SECRET_MAGIC = b"memdeck-secret/1\n"  # then a 12-byte nonce and the AES-GCM ciphertext of the JSON
JOURNAL_KEY_FILE = "journal.key"


def _journal_key(keys_dir: Path) -> bytes:
    """The store's key for journal secrets (32 random bytes, 0600 in keys/), created on first use."""
    path = keys_dir / JOURNAL_KEY_FILE
    with contextlib.suppress(FileNotFoundError):
        key = path.read_bytes()
        if len(key) == 32:
            return key
        raise MemdeckError(f"the journal key {path} is damaged (expected 32 bytes, found {len(key)})")
    keys_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    key = secrets.token_bytes(32)
    try:
        fd = create_private(path)
    except FileExistsError:  # another process made it first
        return _journal_key(keys_dir)
    with os.fdopen(fd, "wb") as fh:
        fh.write(key)
        fh.flush()
        os.fsync(fh.fileno())
    fsync_dir(keys_dir)
    return key


def _secret_aad(path: Path) -> bytes:
    return b"memdeck journal secret " + path.name.encode("utf-8")  # a secret moved to another name fails


RECHECK_DIR = "recheck"  # under keys/: the encrypted needles of purges whose checks failed


def retained_needles_path(store: Engine, receipt_id: str) -> Path:
    """Where a purge whose checks failed keeps its needles, encrypted, for `memdeck forget --recheck`."""
    return Path(store.layout.keys) / RECHECK_DIR / f"{receipt_id}.secret"


def write_secret(path: Path, keys_dir: Path, secret: Mapping[str, Any]) -> None:
    """Write the texts a purge searches for, encrypted (AES-GCM): the file on disk never holds them plain."""
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    nonce = secrets.token_bytes(12)
    payload = json.dumps(secret, ensure_ascii=False).encode("utf-8")
    blob = SECRET_MAGIC + nonce + AESGCM(_journal_key(keys_dir)).encrypt(nonce, payload, _secret_aad(path))
    write_atomic_bytes(path, blob, 0o600)


def read_secret(path: Path, keys_dir: Path) -> dict[str, Any] | None:
    """The texts :func:`write_secret` wrote (or the plain JSON an older memdeck wrote); None when gone."""
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    try:
        blob = path.read_bytes()
        if not blob.startswith(SECRET_MAGIC):  # written by an older memdeck, in the clear
            return json.loads(blob.decode("utf-8"))
        body = blob[len(SECRET_MAGIC) :]
        plain = AESGCM(_journal_key(keys_dir)).decrypt(body[:12], body[12:], _secret_aad(path))
        return json.loads(plain.decode("utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, InvalidTag, MemdeckError) as exc:
        log.warning("purge needles %s unreadable: %s", path, exc)
        return None


def _plain(value: Any, depth: int = 0) -> Any:
    """A JSON-safe, bounded copy of what another module returned, for the receipt."""
    if depth > 4:
        return None
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        return value[:200]
    if isinstance(value, dict):
        return {str(k)[:64]: _plain(v, depth + 1) for k, v in list(value.items())[:32]}
    if isinstance(value, (list, tuple)):
        return [_plain(v, depth + 1) for v in list(value)[:32]]
    return str(value)[:200]
