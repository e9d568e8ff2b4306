"""Import of a mem0 export: a JSON list of memories, each a semantic fact."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memdeck.core.errors import MemdeckError
from memdeck.core.exchange.importer import Importer, ProgressFn, check_length
from memdeck.core.exchange.jsonl import _canonical
from memdeck.core.records import (
    MemoryInput,
    check_principal,
    check_strings,
    check_tags,
    check_text,
    parse_time,
    sha256_text,
)

# --- mem0 -------------------------------------------------------------------------------------------


MAX_FILE_BYTES = 128 * 1024 * 1024  # a mem0 export is one JSON document, parsed whole: never more than this


def _read(path: Path) -> bytes:
    with open(path, "rb") as fh:
        data = fh.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise MemdeckError(
            f"{path} is larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB, the limit for a mem0 export (one JSON "
            "document); split it, or convert it to JSONL (one memory a line)"
        )
    return data


def import_mem0(imp: Importer, path: Path, principal: str | None, progress: ProgressFn | None) -> None:
    try:
        data = json.loads(_read(path).decode("utf-8-sig"))
    except OSError as exc:
        raise MemdeckError(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise MemdeckError(f"{path} is not valid UTF-8") from None
    except ValueError as exc:
        raise MemdeckError(f"{path} is not valid JSON ({exc})") from None
    except RecursionError:
        raise MemdeckError(f"{path} is nested too deeply to read") from None
    if isinstance(data, dict):
        data = data.get("results", data.get("memories"))
    if not isinstance(data, list):
        raise MemdeckError(f"{path} is not a mem0 export (expected a JSON list of memories)")
    tier = imp.tier or "semantic"
    for n, record in enumerate(data, start=1):
        if progress and n % 200 == 0:
            progress(n, len(data))
        where = f"record {n}"
        if not isinstance(record, dict):
            imp.problem(where, "not a JSON object")
            continue
        try:
            check_strings(record, "the record")
            text = check_length(check_text(record.get("memory"), "memory"), "memory")
            owner = principal or record.get("user_id")
            if not owner:
                raise MemdeckError("no user_id in the record (give --principal)")
            owner = check_principal(owner)
            ident = record.get("id")
            key = "mem0:" + (
                str(ident) if ident is not None else sha256_text(owner + "\x00" + _canonical(record))
            )
            if imp.keys(owner).get(key) or imp.known_text(owner, tier, text):
                imp.report.unchanged += 1
                continue
            metadata = record.get("metadata") or {}
            if not isinstance(metadata, dict):
                raise MemdeckError("metadata must be a JSON object")
            tags = record.get("categories") or metadata.get("categories") or []
            meta: dict[str, Any] = {"import_key": key, "import_source": "mem0"}
            if metadata:
                meta["mem0_metadata"] = metadata
            if ident is not None:
                meta["mem0_id"] = str(ident)
            agent = imp.agent or record.get("agent_id") or "mem0"
            item = MemoryInput(
                text=text,
                tier=tier,
                principal=owner,
                agent=check_principal(str(agent)),
                tags=check_tags(tags if isinstance(tags, list) else []),
                meta=meta,
                created_at=parse_time(record.get("created_at")),
            )
        except MemdeckError as exc:
            imp.problem(where, str(exc))
            continue
        imp.add(item, key, where)
    imp.flush()
    if progress:
        progress(len(data), len(data))
