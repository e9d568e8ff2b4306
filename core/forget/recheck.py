"""A way forward after a failed check: run a receipt's checks again and sign a follow-up receipt.

After a purge whose checks failed, the person removes what the checks found (a copy of the text in a file
of their own, say), or upgrades memdeck to better checks, then runs ``memdeck forget --recheck RECEIPT``.
The checks run again over the same ids, with the same texts when the purge kept them (a purge whose checks
failed keeps its needles encrypted in ``keys/recheck/``; see :func:`retained_needles_path`). The follow-up
receipt is chained like any other, with ``trigger: "recheck"`` and ``rechecks``: the first receipt's id. A
verified follow-up deletes the kept texts; ``receipts verify`` and ``doctor`` then count the first receipt as
settled.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from memdeck.core.errors import MemdeckError
from memdeck.core.files import fsync_dir
from memdeck.core.forget.bucket_verify import verifier_for
from memdeck.core.forget.journal import Progress
from memdeck.core.forget.purge import read_secret, retained_needles_path

if TYPE_CHECKING:
    from memdeck.core.receipts.types import Receipt
    from memdeck.core.storage.engine import Engine

TRIGGER = "recheck"


def recheck(store: Engine, receipt_id: str, *, progress: Progress | None = None) -> Receipt:
    """Run the checks of a receipt again and sign a follow-up receipt chained to it; returns the new one."""
    from memdeck.core.forget import bucket
    from memdeck.core.receipts import ReceiptBook

    say = progress or (lambda _message: None)
    book = ReceiptBook(store.root)
    first = book.get(receipt_id)
    if first.get("trigger") == "rescan":
        raise MemdeckError("a re-scan's receipt is checked again by running `memdeck redact --rescan` again")
    deleted = [d for d in first.get("deleted") or [] if isinstance(d, dict) and isinstance(d.get("id"), str)]
    cascade = [c for c in first.get("cascade") or [] if isinstance(c, dict) and isinstance(c.get("id"), str)]
    stored_tiers = {"episodic", "semantic", "procedural"}
    journal: dict[str, Any] = {
        "principal": first["principal"],
        "whole_principal": bool(first.get("whole_principal")),
        "deleted": [{"id": d["id"]} for d in deleted],
        "cascade_delete_ids": [c["id"] for c in cascade if c.get("tier") in stored_tiers],
        "tiers": {d["id"]: d.get("tier") for d in deleted + cascade if d.get("tier") in stored_tiers},
        # What the first purge did stands: the vault check looks for the shred it recorded.
        "actions": list(first.get("actions") or []),
        "history_versions": first.get("history_versions") or 0,
    }
    kept = retained_needles_path(store, first["receipt_id"])
    with store.lock.exclusive():
        store.refresh()
        say("checking that nothing remains")
        secret = read_secret(kept, store.layout.keys)
        checks = verifier_for(store, journal, secret, exclude={kept}).run()
        ok = all(c.get("passed") for c in checks)
        store.lock.fence()
        receipt = book.issue(
            principal=first["principal"],
            reason=f"recheck of receipt {first['receipt_id']}",
            deleted=deleted,
            cascade=cascade,
            actions=["recheck"],
            checks=checks,
            extra={
                "outcome": "verified" if ok else "checks_failed",
                "trigger": TRIGGER,
                "rechecks": first["receipt_id"],
                "whole_principal": bool(first.get("whole_principal")),
            },
        )
        bucket.publish(store, book, receipt)
        if ok:
            with contextlib.suppress(FileNotFoundError):
                kept.unlink()
                fsync_dir(kept.parent)
    return receipt
