"""A purge's journal in the bucket, so that another machine can finish a purge whose machine died.

For a store whose tables are in a bucket (its lock is a :class:`~memdeck.core.storage.teamlock.TeamLock`),
each step a purge records in its local journal is also written to ``_memdeck/journal/purge-<id>.json`` in
the bucket, with the texts the checks search for (its needles). The write is a conditional replace of the
version this process wrote last: once another machine has taken the run over, a late write is refused.

The needles sit in the bucket beside the rows they describe and for no longer: they are removed from the
bucket copy before the receipt is signed, and the copy itself once it is. On open, a machine that can take
the lease finishes every journal left in the bucket (:func:`recover`), signing the receipt with its own key.
"""

from __future__ import annotations

import json
import logging
import time
from typing import TYPE_CHECKING, Any, Protocol

from memdeck.core.forget.tombstones import objects_of
from memdeck.core.storage.lease import POLL_S, LeaseLost
from memdeck.core.storage.locking import StoreLock
from memdeck.core.storage.teamlock import TeamLock

if TYPE_CHECKING:
    from memdeck.core.forget.journal import PurgeJournal
    from memdeck.core.receipts import ReceiptBook
    from memdeck.core.receipts.types import Receipt
    from memdeck.core.storage.engine import Engine

log = logging.getLogger("memdeck.forget")


class Purge(Protocol):
    """What the bucket copy of a journal needs of a purge (``memdeck.core.forget.purge.Purge``)."""

    bucket_etag: str | None

    @property
    def store(self) -> Engine: ...

    @property
    def journal(self) -> PurgeJournal: ...

    @property
    def purge_id(self) -> str: ...


JOURNALS = "_memdeck/journal/"


def key_of(purge_id: str) -> str:
    return f"{JOURNALS}purge-{purge_id}.json"


def save(purge: Purge, secret: dict[str, Any] | None) -> None:
    """Write the purge's journal (and needles, while there are any) to the bucket; refuse if another machine
    replaced it since this process last wrote it."""
    objects = objects_of(purge.store)
    if objects is None:
        return
    body = json.dumps(
        {"journal": purge.journal.to_dict(), "secret": secret}, ensure_ascii=False, sort_keys=True
    ).encode()
    key = key_of(purge.purge_id)
    etag = purge.bucket_etag
    if etag is None:
        got = objects.get(key)
        # A resumed run starts from the copy it loaded (its etag is that version's).
        new = objects.create(key, body) if got is None else objects.replace(key, body, got[1])
    else:
        new = objects.replace(key, body, etag)
    if new is None:
        raise LeaseLost(f"purge {purge.purge_id} was taken over by another machine; this one stopped")
    purge.bucket_etag = new


def remove(purge: Purge) -> None:
    objects = objects_of(purge.store)
    if objects is not None:
        objects.delete(key_of(purge.purge_id))


def left(store: Engine) -> bool:
    objects = objects_of(store)
    return objects is not None and bool(objects.list(JOURNALS))


def _holder_gone(lock: StoreLock) -> bool:
    """False while another machine's purge renews the lease (it finishes its own run); True once the lease
    is free, or has expired (its holder crashed or stalled: its run is this machine's to finish)."""
    if not isinstance(lock, TeamLock):
        return True
    lease = lock.lease
    first = lease.view()
    if not first.held or first.holder == lease.holder:
        return True
    deadline = time.monotonic() + first.ttl * 1.5 + 1
    while time.monotonic() < deadline:
        view = lease.view()
        if not view.held or lease.expired(view):
            return True
        if view.etag != first.etag:
            return False  # renewed: alive
        time.sleep(POLL_S)
    return False


def publish(store: Engine, book: ReceiptBook, receipt: Receipt) -> None:
    """Register this machine's receipt key and append the receipt to the store's chain in the bucket."""
    from memdeck.core.receipts import team

    objects = objects_of(store)
    if objects is None:
        return
    lease = store.lock.lease if isinstance(store.lock, TeamLock) else None
    team.register_key(objects, book.public_key(), lease.holder.rsplit(":", 2)[0] if lease else "")
    store.lock.fence()  # a machine fenced out appends nothing
    team.append(objects, receipt, book.sign, book.public_key())


SEEN_FILE = "team-receipts-seen"


def catch_up(store: Engine) -> int:
    """Apply to this machine what other machines forgot since it last looked (the receipts in the bucket's
    chain): its copy of the bucket's tombstones is read again (import, restore, sync and consolidation refuse
    what they name), the forgotten ids join its own tombstone file, its trace log is scrubbed of them, and
    its redaction vault drops the forgotten values: a whole principal's vault is destroyed, and for a forget
    by id the tokens the purge's tombstone object names (their values are not in a receipt). Returns how many
    receipts were new. Done at every open, and in the background when a writer sees that a purge ran."""
    from memdeck.core.files import write_atomic_text
    from memdeck.core.forget import tombstones, vaults
    from memdeck.core.receipts import ReceiptBook, team
    from memdeck.core.storage import logdb

    objects = objects_of(store)
    if objects is None:
        return 0
    seen_path = store.layout.journal / SEEN_FILE
    try:
        seen = int(seen_path.read_text(encoding="utf-8").strip() or 0)
    except (OSError, ValueError):
        seen = 0
    new = team.receipts_since(objects, seen)
    shared = tombstones.refresh_shared(store)  # every purge writes its tombstones before its receipt
    if not new:
        return 0
    ids = sorted(
        {str(d["id"]) for _, r in new for d in [*(r.get("deleted") or []), *(r.get("cascade") or [])]}
    )
    if ids:
        logdb.scrub(store, ids)  # ids only: the texts of another machine's purge are not in its receipt
    book = ReceiptBook(store.root)
    own = book.public_key() if book.key_path.exists() else None
    for _, receipt in new:
        principal = str(receipt.get("principal"))
        if receipt.get("whole_principal"):
            logdb.scrub_principal(store, principal)
        gone = [str(d["id"]) for d in [*(receipt.get("deleted") or []), *(receipt.get("cascade") or [])]]
        tombstones.localise(store, principal, gone)
        if own is not None and receipt.get("public_key") == own:
            continue  # this machine's own purge pruned its vault itself (and it may have written since)
        if receipt.get("whole_principal"):
            vaults.drop_forgotten(store, principal, whole=True)
        elif shared is not None:
            entry = shared.tokens.get(tombstones.shared_key(str(receipt.get("receipt_id"))))
            if entry and entry[1]:
                vaults.drop_forgotten(store, principal, whole=False, forgotten=shared.names(entry[1]))
    store.layout.journal.mkdir(mode=0o700, parents=True, exist_ok=True)
    write_atomic_text(seen_path, str(max(n for n, _ in new)), 0o600)
    return len(new)


def catch_up_later(store: Engine) -> None:
    """:func:`catch_up` in the store's background, when a writer sees that a purge ran on another machine.

    The bucket's tombstones are read again at once, before the writer goes on: what it writes next is
    checked against them."""
    from memdeck.core.forget import tombstones

    tombstones.refresh_shared(store)

    def run() -> None:
        try:
            catch_up(store)
        except Exception as exc:  # noqa: BLE001 - the next open tries again
            log.warning(
                "could not apply what other machines forgot to this machine's trace log and vault: %s", exc
            )

    store.background.start(run, "memdeck-receipts-catch-up")
