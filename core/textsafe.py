"""Text a terminal can only show, never act on: agent-written text (memory text, names, queries, reasons)
passes through here before it is printed, in plain lines, Markdown and JSON alike."""

from __future__ import annotations

import re

# Characters a terminal acts on rather than shows: C0/C1 controls and DEL (ESC starts OSC 52 clipboard writes,
# cursor moves, title changes), line and paragraph separators, and the bidirectional overrides that reorder
# what is shown.
UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# Inside JSON text: what the encoder leaves raw with ensure_ascii=False (it escapes C0 and DEL itself).
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    ch = match.group()
    return _NAMED.get(ch) or (f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}")


def escape_unsafe(text: str) -> str:
    """``text`` with every character of :data:`UNSAFE` written as an escape (``\\x1b``, ``\\u202e``)."""
    return UNSAFE.sub(_escape, text)


def json_safe(encoded: str) -> str:
    """JSON text (``json.dumps(..., ensure_ascii=False)``) with C1 controls, DEL, separators and bidi
    overrides written as ``\\uXXXX``: the same JSON value, shown as text by any terminal. Those characters
    can only occur inside JSON strings, where a ``\\u`` escape means the same character."""
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", encoded)
