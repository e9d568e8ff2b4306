"""The ids a store has forgotten, read from its tombstones (written by :mod:`memdeck.core.forget.tombstones`).

Lower layers (the trace log) use this to drop a record that names a forgotten memory, such as a recall
another process queued before a purge and writes after it."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from memdeck.core.paths import StoreLayout

FILE = "tombstones.jsonl"

_lock = threading.Lock()
_cache: dict[Path, tuple[tuple[int, int, int] | None, frozenset[str]]] = {}


def tombstone_file(root: Path) -> Path:
    return StoreLayout(Path(root)).tombstones / FILE


def forgotten_ids(root: Path) -> frozenset[str]:
    """Every forgotten id of the store at ``root`` (any principal), cached while the file is unchanged."""
    path = tombstone_file(root)
    try:
        st = path.stat()
        sig: tuple[int, int, int] | None = (st.st_ino, st.st_size, st.st_mtime_ns)
    except FileNotFoundError:
        sig = None
    with _lock:
        cached = _cache.get(path)
        if cached is not None and cached[0] == sig:
            return cached[1]
        ids: set[str] = set()
        if sig is not None:
            with open(path, encoding="utf-8") as fh:
                for line in fh:
                    try:
                        entry = json.loads(line)
                    except ValueError:
                        continue
                    if isinstance(entry, dict) and isinstance(entry.get("id"), str):
                        ids.add(entry["id"])
        value = frozenset(ids)
        _cache[path] = (sig, value)
        return value
