"""Finishing purges that another machine left in a shared bucket (see :mod:`memdeck.core.forget.bucket`)."""

from __future__ import annotations

import contextlib
import json
import logging
from typing import TYPE_CHECKING

from memdeck.core.errors import StoreLocked
from memdeck.core.files import write_atomic_text
from memdeck.core.forget.bucket import JOURNALS, _holder_gone, objects_of
from memdeck.core.forget.journal import journal_files
from memdeck.core.forget.purge import Purge, write_secret
from memdeck.core.storage.lease import LeaseLost

if TYPE_CHECKING:
    from memdeck.core.receipts.types import Receipt
    from memdeck.core.storage.engine import Engine

log = logging.getLogger("memdeck.forget")


def recover(store: Engine, wait: float) -> list[Receipt]:
    """Finish the purges left in the bucket (a machine killed mid-purge, or whose lease expired), with the
        lease held from the first journal read to the last receipt; returns their receipts.

        Local journals of this store that the bucket no longer holds were finished elsewhere (or never got past
        planning): they are removed. A crashed holder's lease is taken once this machine has seen it unrenewed for
    its ttl; then up to ``wait`` s for writers to finish their commits."""
    objects = objects_of(store)
    if objects is None:
        return []
    keys = [k for k in objects.list(JOURNALS) if k.endswith(".json")]
    local = journal_files(store, Purge.PREFIX)
    if not keys and not local:
        return []
    if not _holder_gone(store.lock):
        return []
    receipts: list[Receipt] = []
    try:
        with store.lock.exclusive(timeout=wait):
            store.refresh()
            wanted = {k[len(JOURNALS) :] for k in objects.list(JOURNALS) if k.endswith(".json")}
            for path in local:
                if path.name not in wanted:
                    log.info("purge %s was finished by another machine", path.stem)
                    with contextlib.suppress(FileNotFoundError):
                        path.unlink()
                    with contextlib.suppress(FileNotFoundError):
                        path.with_suffix(".secret").unlink()
            directory = store.layout.journal
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            for name in sorted(wanted):
                got = objects.get(JOURNALS + name)
                if got is None:
                    continue
                try:
                    copy = json.loads(got[0])
                    journal, secret = copy["journal"], copy.get("secret")
                except (ValueError, KeyError, TypeError) as exc:
                    log.warning("bucket journal %s is unreadable: %s", name, exc)
                    continue
                path = directory / name
                write_atomic_text(path, json.dumps(journal, ensure_ascii=False, sort_keys=True), 0o600)
                run = Purge.load(store, path)
                if secret is not None:
                    write_secret(run.secret_path, store.layout.keys, secret)
                run.bucket_etag = got[1]
                log.info("finishing purge %s left in the bucket", run.purge_id)
                try:
                    receipts.append(run.run())
                except LeaseLost:
                    raise
                except Exception as exc:  # noqa: BLE001 - opening the store must not fail: next open tries again
                    log.warning("could not finish purge %s from the bucket: %s", run.purge_id, exc)
    except StoreLocked as exc:
        log.info("purges left in the bucket not finished now: %s", exc)
    return receipts
