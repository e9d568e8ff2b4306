"""The purge's checks for a store whose tables live in a bucket: every object under the prefix is read.

:class:`BucketVerifier` lists the store's prefix and reads every object through the object store into a
private temporary directory (the purge holds the bucket lease and writers wait for it, so the listing is
one consistent state), then runs the same checks as on a local disk against that copy: data, index,
deletion, transaction and manifest files decoded or read raw as locally, versions opened by number. The
query checks (ids, vector and keyword search) run against the bucket itself, and the local store directory
(trace log, analytics, vault) is checked as on any machine. Objects outside the tables (``_memdeck/``:
the lease, writer objects, other journals) are read raw too; the receipts and keys there hold ids, hashes
and public keys by construction and are left out, as locally.
"""

from __future__ import annotations

import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdeck.core.forget.verify import Verifier
from memdeck.core.paths import StoreLayout
from memdeck.core.storage.lease import ConditionalObjects

if TYPE_CHECKING:
    from memdeck.core.receipts.types import Check
    from memdeck.core.storage.engine import Engine

SKIPPED_PREFIXES = ("_memdeck/receipts/", "_memdeck/keys/")  # ids, hashes and public keys by construction
READERS = 8  # objects fetched at once


class _SnapshotLayout(StoreLayout):
    def __init__(self, root: Path, lance: Path) -> None:
        super().__init__(root)
        self._lance = lance

    @property
    def lance(self) -> Path:
        return self._lance


class _Snapshot:
    """The store, with its table files read from the local copy of the bucket; everything else (queries,
    the local directory) is the store's own."""

    def __init__(self, store: Engine, copy: Path) -> None:
        self._store = store
        self.uri = str(copy)
        self.storage_options = None
        self.layout = _SnapshotLayout(store.root, copy)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


class BucketVerifier(Verifier):
    def __init__(
        self,
        store: Engine,
        journal: dict[str, Any],
        secret: dict[str, Any] | None,
        *,
        objects: ConditionalObjects,
        exclude: set[Path] | frozenset[Path],
        exclude_keys: set[str] | frozenset[str],
        strict: bool = False,
    ) -> None:
        super().__init__(store, journal, secret, exclude=exclude, strict=strict)
        self.objects = objects
        self.exclude_keys = exclude_keys

    def run(self) -> list[Check]:
        real = self.store
        with tempfile.TemporaryDirectory(prefix="memdeck-verify-") as tmp:
            copy = Path(tmp)
            keys = self.objects.list("")
            tables = [k for k in keys if k.split("/", 1)[0].endswith(".lance")]
            self._fetch(copy, tables)
            self.store = _Snapshot(real, copy)  # type: ignore[assignment]
            try:
                super().run()
            finally:
                self.store = real
        self._check_other_objects([k for k in keys if k not in set(tables)])
        for check in self.checks:
            if check["name"] == "no_row_in_any_data_file" and check["passed"]:
                check["detail"] += f"; {len(tables)} objects under the bucket prefix read"
        return self.checks

    def _fetch(self, copy: Path, keys: list[str]) -> None:
        def one(key: str) -> None:
            got = self.objects.get(key)
            if got is None:
                return  # removed since the listing (never while the lease is held)
            path = copy / key
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(got[0])

        with ThreadPoolExecutor(READERS) as pool:
            list(pool.map(one, keys))

    def _check_other_objects(self, keys: list[str]) -> None:
        leaks = []
        read = 0
        for key in keys:
            if key in self.exclude_keys or key.startswith(SKIPPED_PREFIXES):
                continue
            got = self.objects.get(key)
            if got is None:
                continue
            read += 1
            found = self.needles.hits_in_bytes(got[0], with_ids=False)
            if found:
                leaks.append(f"{'/'.join(found)} in the object {key}")
        self.add(
            "bucket_objects_clean",
            not leaks,
            "; ".join(leaks[:8])
            or f"{read} other objects under the bucket prefix, read raw, hold none of the forgotten text",
        )


def verifier_for(
    store: Engine,
    journal: dict[str, Any],
    secret: dict[str, Any] | None,
    *,
    exclude: set[Path] | frozenset[Path],
    exclude_keys: frozenset[str] = frozenset(),
    strict: bool = False,
) -> Verifier:
    """The checks for this store: over the bucket when its tables are shared through one, else on disk."""
    from memdeck.core.forget.bucket import objects_of

    objects = objects_of(store)
    if objects is None:
        return Verifier(store, journal, secret, exclude=exclude, strict=strict)
    return BucketVerifier(
        store, journal, secret, objects=objects, exclude=exclude, exclude_keys=exclude_keys, strict=strict
    )
