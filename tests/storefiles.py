"""What a store's files hold: the check that a value is gone from every file, raw or decoded."""

from __future__ import annotations

import json
import re
from pathlib import Path

_UUID = re.compile(rb"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}")


def holds(root: Path, needle: str) -> list[str]:
    """Every file of the store that holds needle: raw bytes, and every Lance file decoded as the Verifier
    reads it (Lance compresses strings, so raw bytes alone prove nothing).

    A short number (a PIN, a door code) counts only where it stands alone: "1945" inside a random id (a
    UUID's group of four digits too), a content hash or a timestamp's microseconds is not the secret, and with a few dozen rows such runs held
    one of the values now and then (about one run in twenty). As a word of its own, in a text or an index
    term, it still counts."""
    from lance.file import LanceFileReader

    found = []
    low = needle.lower()
    if needle.isdigit() and len(needle) <= 6:
        alone = re.compile(rb"(?<![0-9A-Za-z])" + re.escape(needle.encode()) + rb"(?![0-9A-Za-z])")

        def contains(data: bytes) -> bool:
            # a UUID's group of four ("...-4287-4821-874f-...", a Lance transaction file's name) is no word
            return alone.search(_UUID.sub(b"", data)) is not None
    else:

        def contains(data: bytes) -> bool:
            return needle.encode() in data or low.encode() in data.lower()

    for path in (p for p in root.rglob("*") if p.is_file()):
        data = path.read_bytes()
        if contains(data):
            found.append(str(path))
        if path.suffix in (".lance", ".idx"):
            try:
                table = LanceFileReader(str(path)).read_all().to_table()
            except Exception:  # noqa: BLE001 - some index files are not Lance files
                continue
            if contains(json.dumps(table.to_pylist(), default=repr, ensure_ascii=False).encode()):
                found.append(str(path))
    return found
