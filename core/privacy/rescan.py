"""Re-scan: today's redaction rules over what is already stored.

Rows written before a rule existed (or while redaction was off for a principal) may hold values that the
rules of today would have replaced by tokens. This module only detects and rewrites the values of one
stored row; the purge of the old bytes (versions, indices, the trace log) and the receipt are the job of
:mod:`memdeck.core.forget.rescan`, which calls it.

Every column that can hold free text is covered: ``text``, ``name``, ``deprecation_reason``, the lists
``tags``, ``derived_facts`` and ``steps``, the JSON columns ``events`` and ``meta`` (string values; keys are
left as they are, as at write time) and the edit history's ``text``. Tokens already in a text
(``<EMAIL_1>``) are not detected again, so a second re-scan changes nothing.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from memdeck.core.privacy.redact import Redactor

TEXT_COLUMNS = ("text", "name", "deprecation_reason")
LIST_COLUMNS = ("tags", "derived_facts", "steps")
JSON_COLUMNS = ("events", "meta")
COLUMNS = TEXT_COLUMNS + LIST_COLUMNS + JSON_COLUMNS


@dataclass
class RowScan:
    """What today's rules find in one stored row. ``values`` are the originals: keep them out of logs,
    journals and receipts (only the purge's needle file, 0600 and removed before signing, holds them)."""

    columns: list[str] = field(default_factory=list)
    kinds: Counter[str] = field(default_factory=Counter)
    values: list[tuple[str, str]] = field(default_factory=list)  # (kind, value)

    def __bool__(self) -> bool:
        return bool(self.values)

    def add(self, column: str, found: list[tuple[str, str]]) -> None:
        if not found:
            return
        if column not in self.columns:
            self.columns.append(column)
        for kind, value in found:
            self.kinds[kind] += 1
            self.values.append((kind, value))


def detect_values(redactor: Redactor, text: str, principal: str) -> list[tuple[str, str]]:
    """(kind, value) of everything the redactor would replace in text, without creating tokens (nothing is
    written to the vault): the dry run and the planning of a re-scan use this."""
    if not text or not redactor.active_for(principal):
        return []
    spans = redactor._allowed(text, redactor.detect(text))  # the allow-lists apply as at write time
    return [(s.kind, text[s.start : s.end]) for s in spans]


def scan_row(redactor: Redactor, row: dict[str, Any], principal: str) -> RowScan:
    """Detect, column by column, what today's rules would redact in a stored row (tier or history row)."""
    out = RowScan()
    for column, text in _strings(row):
        out.add(column, detect_values(redactor, text, principal))
    return out


def redact_row(redactor: Redactor, row: dict[str, Any], principal: str) -> dict[str, Any]:
    """The new values of the columns of ``row`` that today's rules change, tokenised with the principal's
    vault (the originals are stored in it). Columns that do not change are left out."""
    changed: dict[str, Any] = {}
    for column in TEXT_COLUMNS:
        value = row.get(column)
        if isinstance(value, str) and value:
            new = redactor.redact(value, principal).text
            if new != value:
                changed[column] = new
    for column in LIST_COLUMNS:
        values = row.get(column)
        if values:
            new_list = [redactor.redact(v, principal).text if isinstance(v, str) else v for v in values]
            if new_list != list(values):
                changed[column] = new_list
    for column in JSON_COLUMNS:
        raw = row.get(column)
        if not raw:
            continue
        parsed = _json(raw)
        if parsed is None:  # not JSON (should not happen): treat it as text
            new = redactor.redact(str(raw), principal).text
            if new != raw:
                changed[column] = new
            continue
        new_value = redactor.redact_value(parsed, principal)
        if new_value != parsed:
            # serialised as memory_to_row does
            sort_keys = column == "meta"
            changed[column] = json.dumps(new_value, ensure_ascii=False, sort_keys=sort_keys)
    return changed


def _strings(row: dict[str, Any]) -> Iterator[tuple[str, str]]:
    for column in TEXT_COLUMNS:
        value = row.get(column)
        if isinstance(value, str) and value:
            yield column, value
    for column in LIST_COLUMNS:
        for value in row.get(column) or []:
            if isinstance(value, str) and value:
                yield column, value
    for column in JSON_COLUMNS:
        raw = row.get(column)
        if not raw:
            continue
        parsed = _json(raw)
        if parsed is None:
            yield column, str(raw)
        else:
            for value in _json_strings(parsed):
                yield column, value


def _json(raw: Any) -> Any:
    if not isinstance(raw, str):
        return raw
    try:
        return json.loads(raw)
    except ValueError:
        return None


def _json_strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        if value:
            yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _json_strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _json_strings(v)
