"""Forget that really forgets: purge memories from every file of the store, check, and sign a receipt.

A LanceDB ``delete()`` only hides a row: its bytes stay in the data file, in every older version, in the
indices, and an ``update()`` leaves the old row behind the same way. A purge therefore

1. plans under the store's exclusive lock: the memories, the derived records that depend on them only
   (semantic facts whose ``sources``, procedures whose ``learned_from``, are all forgotten ids) and the
   records that merely cite them (which lose that source and one count of evidence);
2. deletes by opaque id (a delete predicate is written to ``_transactions/`` and the manifest), from the tier
   tables and the edit history, and applies the cascade updates;
3. rewrites only the fragments that hold deletions (bounded in size, see :mod:`memdeck.core.storage.tables`),
   which also remaps every index, then removes every older version at once;
4. scrubs the recall trace log and, for a whole principal, destroys the principal's redaction vault;
5. checks, by reading every file of the store, that nothing of the forgotten memories remains;
6. signs a receipt (:mod:`memdeck.core.receipts`).

Each step is recorded in a journal (``<store>/journal/purge-<id>.json``) before the next starts; a process
killed at any point leaves a journal that the next :meth:`Store.open` finishes (:func:`recover_pending`),
ending with the same receipt id. The texts the checks search for sit beside the journal in a 0600 file that
is removed before the receipt is signed; the journal itself holds ids and hashes only.

A receipt whose checks did not all pass is still signed (it records what was done) but carries
``"outcome": "checks_failed"`` instead of ``"verified"``; the CLI then exits non-zero.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdeck.core.errors import IntegrityError
from memdeck.core.filters import Scope
from memdeck.core.forget import preflight, tombstones
from memdeck.core.forget.journal import CRASH_ENV, RECOVERY_WAIT_S, Progress, journal_files, recover
from memdeck.core.forget.plan import ForgetPlan, plan_forget, plan_principal
from memdeck.core.forget.purge import Purge
from memdeck.core.forget.tombstones import is_forgotten
from memdeck.core.records import check_text

if TYPE_CHECKING:
    from memdeck.core.receipts.types import Receipt
    from memdeck.core.storage.engine import Engine

log = logging.getLogger("memdeck.forget")

__all__ = [
    "CRASH_ENV",
    "ForgetPlan",
    "forget",
    "forget_principal",
    "is_forgotten",
    "pending",
    "plan_forget",
    "plan_principal",
    "raise_unverified",
    "recover_pending",
    "stale_temp_files",
]


def forget(
    store: Engine,
    ids: Sequence[str],
    reason: str,
    scope: Scope = Scope.everyone(),
    *,
    trigger: str = "request",
    progress: Progress | None = None,
    tombstone: bool | None = None,
) -> Receipt:
    """Purge these memories (and what derives only from them) and return the signed receipt.

    ``tombstone`` (the default, unless inside :func:`tombstones.housekeeping`) records what was forgotten
    so that no import, restore, sync or consolidation writes it again."""
    reason = check_text(reason, "reason")
    with store.lock.exclusive():
        store.refresh()
        plan = plan_forget(store, ids, scope)
        preflight.check(store, plan.principal, whole=False)
        # The reason lands in a signed receipt that is never erased: redacted like any text written.
        reason = store.redact(reason, plan.principal)
        keep = tombstones.wanted() if tombstone is None else tombstone
        return Purge.start(store, plan, reason, trigger=trigger, progress=progress, tombstone=keep).run()


def forget_principal(
    store: Engine, principal: str, reason: str, *, progress: Progress | None = None
) -> Receipt:
    """Purge everything stored for a principal, destroy their redaction vault, return the receipt."""
    reason = check_text(reason, "reason")
    with store.lock.exclusive():
        store.refresh()
        plan = plan_principal(store, principal)
        preflight.check(store, plan.principal, whole=True)
        if preflight.vault_of(store, plan.principal) is None:
            reason = store.redact(reason, plan.principal)  # shredded with the vault: it never comes back
        else:  # a damaged vault is destroyed unread: the reason's values go into a vault thrown away at once
            reason = preflight.redact_without_vault(store, reason, plan.principal)
        return Purge.start(store, plan, reason, trigger="principal", progress=progress).run()


def raise_unverified(receipt: Mapping[str, Any]) -> None:
    """Raise :class:`IntegrityError` when a receipt records failed checks: the memories were deleted, but it is
    not proven that no readable copy remains, and a caller must not report them as gone."""
    failed = [str(c.get("name")) for c in receipt.get("checks") or [] if not c.get("passed")]
    if failed or receipt.get("outcome") != "verified":
        rid = receipt.get("receipt_id", "?")
        raise IntegrityError(
            f"the memories were deleted but {len(failed)} check(s) failed: {', '.join(failed) or '?'}; receipt {rid} "
            f"records them and is not verified (see `memdeck receipts show {str(rid)[:12]}`, then "
            f"`memdeck forget --recheck {str(rid)[:12]}`)"
        )


def pending(store: Engine) -> list[Path]:
    """Journals of purges that have not finished."""
    return journal_files(store, Purge.PREFIX)


def stale_temp_files(store: Engine) -> list[Path]:
    """Half-written journal or secret files (``write_atomic`` temporaries) a killed purge left behind."""
    return journal_files(store, Purge.PREFIX, ".tmp*")


def recover_pending(store: Engine, *, wait: float = RECOVERY_WAIT_S) -> list[Receipt]:
    """Finish purges a killed process left half done; returns their receipts (see
    :func:`memdeck.core.forget.journal.recover`)."""
    from memdeck.core.forget import bucket, bucket_recover

    if bucket.objects_of(store) is not None:
        receipts = bucket_recover.recover(
            store, wait
        )  # a shared store: the journals in the bucket are the truth
        bucket.catch_up(store)  # scrub this machine's trace log of what other machines forgot
        return receipts
    return recover(store, Purge, wait=wait)
