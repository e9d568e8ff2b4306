"""What a store's files hold: the check that a value is gone from every file, raw or decoded."""

from __future__ import annotations

import json
from pathlib import Path


def holds(root: Path, needle: str) -> list[str]:
    """Every file of the store that holds needle: raw bytes, and every Lance file decoded as the Verifier
    reads it (Lance compresses strings, so raw bytes alone prove nothing)."""
    from lance.file import LanceFileReader

    found = []
    low = needle.lower()
    for path in (p for p in root.rglob("*") if p.is_file()):
        data = path.read_bytes()
        if needle.encode() in data or low.encode() in data.lower():
            found.append(str(path))
        if path.suffix in (".lance", ".idx"):
            try:
                table = LanceFileReader(str(path)).read_all().to_table()
            except Exception:  # noqa: BLE001 - some index files are not Lance files
                continue
            if low in json.dumps(table.to_pylist(), default=repr, ensure_ascii=False).lower():
                found.append(str(path))
    return found
