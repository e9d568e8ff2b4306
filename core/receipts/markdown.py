"""A receipt as a short Markdown summary a person can email."""

from __future__ import annotations

from typing import Any

from memdeck.core.receipts.format import RESERVED_KEYS, _compact
from memdeck.core.receipts.types import Receipt
from memdeck.core.textsafe import escape_unsafe


def _cell(value: Any) -> str:
    text = "" if value is None else str(value)
    # Terminal controls (an OSC 52 clipboard write in an agent's reason) are shown, never sent.
    return escape_unsafe(" ".join(text.split())).replace("|", "\\|") or "-"


def to_markdown(receipt: Receipt) -> str:
    """A short summary a person can email: what was erased, when, why, the checks, how to verify.

    It names memories by id only: no text and no content hash (salted or not).
    """
    r = receipt
    deleted = r.get("deleted") or []
    cascade = r.get("cascade") or []
    checks = r.get("checks") or []
    all_ok = bool(checks) and all(isinstance(c, dict) and c.get("passed") is True for c in checks)
    rid = _cell(r.get("receipt_id"))
    issued = _cell(r.get("issued_at"))
    lines = [
        f"# Deletion receipt {rid}",
        "",
        f"- **Issued:** {issued} (UTC)",
        f"- **Whose memories:** {_cell(r.get('principal'))}",
        f"- **Reason:** {_cell(r.get('reason'))}",
        f"- **Erased:** {len(deleted)} memor{'y' if len(deleted) == 1 else 'ies'}"
        + (
            f", plus {len(cascade)} derived record{'' if len(cascade) == 1 else 's'}"
            " that depended only on what was erased"
            if cascade
            else ""
        ),
        f"- **All checks passed:** {'yes' if all_ok else 'NO'}",
        "",
        "## Erased memories",
        "",
    ]
    if deleted:
        lines += ["| id | tier | created |", "|---|---|---|"]
        lines += [
            f"| {_cell(d.get('id'))} | {_cell(d.get('tier'))} | {_cell(d.get('created_at'))} |"
            for d in deleted
            if isinstance(d, dict)
        ]
    else:
        lines.append("None.")
    if cascade:
        lines += ["", "## Derived records removed with them", "", "| id | tier | why |", "|---|---|---|"]
        lines += [
            f"| {_cell(c.get('id'))} | {_cell(c.get('tier'))} | {_cell(c.get('why'))} |"
            for c in cascade
            if isinstance(c, dict)
        ]
    lines += ["", "## What was done", ""]
    actions = r.get("actions") or []
    lines.append(", ".join(_cell(a) for a in actions) if actions else "Nothing recorded.")
    lines += ["", "## Checks that nothing readable remains", ""]
    for c in checks:
        if not isinstance(c, dict):
            continue
        detail = f": {_cell(c.get('detail'))}" if c.get("detail") is not None else ""
        lines.append(
            f"- [{'x' if c.get('passed') is True else ' '}] {_cell(c.get('name'))}"
            f" ({'passed' if c.get('passed') is True else 'FAILED'}){detail}"
        )
    if not checks:
        lines.append("None recorded.")
    others = sorted(k for k in r if k not in RESERVED_KEYS)
    if others:
        lines += ["", "The signed receipt also records: " + ", ".join(others) + "."]
    issued_raw = r.get("issued_at")
    name = (
        f"{_compact(issued_raw)}_{r.get('receipt_id')}.json"
        if isinstance(issued_raw, str)
        else "the receipt JSON file"
    )
    lines += [
        "",
        "## How to verify",
        "",
        f"This summary is not signed; the signed receipt is the JSON file `{name}`.",
        "It carries an Ed25519 signature that anyone can check with any Ed25519 library:",
        "",
        "1. Parse the JSON and remove the `signature` field.",
        "2. Serialise the rest as canonical JSON: keys sorted, separators `,` and `:` with no spaces, UTF-8.",
        "3. Check the base64-decoded `signature` over those bytes with this public key "
        "(raw 32-byte Ed25519, base64):",
        "",
        f"    {_cell(r.get('public_key'))}",
        "",
        f"With memdeck: `memdeck receipts verify {name}`",
        "(in the store it also checks the link to the previous receipt).",
        "",
    ]
    return "\n".join(lines)
