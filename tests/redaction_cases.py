"""What the redaction shape tests ask of one line (tests/privacy/test_redaction_shapes_more*.py): that a value
is gone and a token of its kind stands in the text, that a near neighbour stays exactly as written, and
that hostile input is answered in linear time."""

from __future__ import annotations

import gc
import time

from memdeck.core.privacy import TOKEN_RE, Redactor


def redact(text: str) -> str:
    return Redactor().redact(text, "p").text


def kinds(text: str) -> list[str]:
    """The kinds of the tokens that stand in ``text`` once it is redacted, in order."""
    return [m.group(1) for m in TOKEN_RE.finditer(redact(text))]


def assert_found(text: str, value: str, kind: str) -> None:
    out = redact(text)
    assert value not in out, out
    assert kind in [m.group(1) for m in TOKEN_RE.finditer(out)], out


def assert_kept(text: str) -> None:
    assert redact(text) == text


def assert_fast(text: str) -> None:
    """Hostile input (tens of thousands of characters built to make a pattern backtrack) in under 2 s: the
    inputs take well under a second when each rule is linear, minutes when one is not."""
    gc.collect()
    gc.disable()  # a collection walking what other tests left in this worker is not the redaction's cost
    try:
        t = time.perf_counter()
        redact(text)
        took = time.perf_counter() - t
    finally:
        gc.enable()
    assert took < 2.0
