"""Export to memdeck JSONL: a header line, then one memory a line."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from memdeck.core import filters as F
from memdeck.core.errors import MemdeckError
from memdeck.core.exchange.importer import EXPORT_FORMAT
from memdeck.core.files import check_output_file, create_private
from memdeck.core.filters import Scope
from memdeck.core.forget import tombstones
from memdeck.core.records import (
    STORED_TIERS,
    Memory,
    check_tier,
    iso,
    now,
    row_to_memory,
)
from memdeck.core.storage.expiry import live_where

if TYPE_CHECKING:
    from memdeck.core.storage.engine import Engine

# --- export -----------------------------------------------------------------------------------------


def _export_columns(store: Engine, tier: str) -> list[str]:
    return [name for name in store.table(tier).schema.names if name != "vector"]


def iter_export(
    store: Engine,
    scope: Scope = Scope.everyone(),
    *,
    tier: str | None = None,
    state: str | None = None,
    batch_size: int = 1000,
    include_expired: bool = False,
) -> Iterator[dict[str, Any]]:
    """Every memory in scope as an export record, streamed a batch at a time (no whole-store load).
    Memories past their expiry are left out (they are gone for every reader; maintenance purges them)."""
    if state is not None and state not in ("active", "deprecated"):
        raise MemdeckError(f"unknown state {state!r}; export takes: active, deprecated")
    tiers = [check_tier(tier)] if tier else list(STORED_TIERS)
    where = F.all_of(scope.where(), F.eq("state", state) if state else F.ne("state", "forgotten-pending"))
    at = now()
    for name in tiers:
        if not store.has_table(name):
            continue
        ds = store.table(name).to_lance()
        tier_where = where if include_expired else F.all_of(where, live_where(store, name, at))
        for batch in ds.to_batches(
            columns=_export_columns(store, name), filter=tier_where, batch_size=batch_size
        ):
            for row in batch.to_pylist():
                yield export_record(row_to_memory(row))


def export_record(memory: Memory) -> dict[str, Any]:
    record = memory.to_json()
    record.pop("summary", None)  # the same text as "text"; kept out so a record has one source of truth
    record.pop("deprecated", None)
    return record


def export_header(store: Engine, scope: Scope, tier: str | None, state: str | None) -> dict[str, Any]:
    return {
        "format": EXPORT_FORMAT,
        "exported_at": iso(now()),
        "embedding_model": store.embedding_model,
        "principals": list(scope.principals) if scope.principals else None,
        "tier": tier,
        "state": state,
        "note": "vectors are not exported; an import recomputes them with the importing store's model",
        # what was forgotten, so that a store this export is imported into refuses it too
        "tombstones": tombstones.forgotten_ids(store, scope.principals or None),
    }


def export_jsonl(
    store: Engine,
    dest: str | Path | IO[str],
    scope: Scope = Scope.everyone(),
    *,
    tier: str | None = None,
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
    check_output_file(path)  # a FIFO, device or symbolic link is refused, never replaced
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}.{secrets.token_hex(4)}")
    try:
        with os.fdopen(create_private(tmp), "w", encoding="utf-8") as fh:  # 0600: an export holds memories
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
