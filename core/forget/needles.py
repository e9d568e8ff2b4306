"""What the purge's checks search for: pieces of the forgotten text that identify it.

A needle must identify the forgotten text, so that finding it in a file means the text (or part of it) is
still there, and not finding it means it is gone. A dictionary word does not identify anything: "table",
"private" or "version" occur in Lance manifests, key files and configuration whatever a person forgot. So:

- texts: the whole text when it is long enough (24 characters and three words) or holds a distinctive
  token, and three 24-character pieces of a text of 40 characters or more (a preview or a truncated copy
  still shows);
- tokens: the distinctive tokens of the text, each searched as a whole word: numbers of six or more digits,
  codes that mix letters and digits (five characters or more), and words of five or more letters that are
  rare in English (Zipf frequency below :data:`COMMON_ZIPF` in wordfreq's English list, i.e. fewer than about
  one in a million words). Vault tokens (``<EMAIL_3>``) are codes too.
- words: every word of three or more letters, for the keyword-search check only (which asks the full-text
  index, not bytes, so a common word is a fair question there).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator
from typing import Any

PIECE = 24  # characters of a piece of a long text
LONG_TEXT = 40  # a text this long also yields three pieces
MIN_TEXT_WORDS = 3  # a whole text of only common words is a needle from this many words and PIECE characters
COMMON_ZIPF = 3.0  # Zipf frequency (log10 of occurrences per billion words) from which a word is common
MIN_RARE_WORD = 5  # letters of a rare word that is a needle
MIN_NUMBER = 6  # digits of a number that is a needle
MIN_CODE = 5  # characters of a letters-and-digits code that is a needle

_WORDS = re.compile(r"\w+")


@functools.lru_cache(maxsize=65536)
def is_common_word(word: str) -> bool:
    """Whether a lower-cased word is common in English: a needle made of it would find dictionary text."""
    from wordfreq import zipf_frequency

    return zipf_frequency(word, "en") >= COMMON_ZIPF


def is_distinctive(token: str) -> bool:
    """Whether a lower-cased token identifies a text when found alone as a whole word."""
    if token.isdigit():
        return len(token) >= MIN_NUMBER
    has_digit = any(c.isdigit() for c in token)
    has_alpha = any(c.isalpha() for c in token)
    if has_digit and has_alpha:
        return len(token) >= MIN_CODE
    if not has_alpha:
        return False
    letters = token.replace("_", "")
    if len(letters) < MIN_RARE_WORD:
        return False
    if "_" in token:
        return not all(is_common_word(p) for p in token.split("_") if p)
    return not is_common_word(token)


def distinctive_tokens(text: str) -> list[str]:
    """The distinctive tokens of a text, lower-cased, in order of first appearance."""
    return list(dict.fromkeys(t for t in _WORDS.findall(text.lower()) if is_distinctive(t)))


def _identifies(text: str) -> bool:
    words = _WORDS.findall(text)
    if len(text.strip()) >= PIECE and len(words) >= MIN_TEXT_WORDS:
        return True
    return any(is_distinctive(w) for w in words)


def needles_of(strings: Iterable[str]) -> tuple[list[str], list[str], list[str]]:
    """(texts, tokens, words) to search for, lower-cased, for some forgotten texts."""
    texts: list[str] = []
    tokens: set[str] = set()
    words: set[str] = set()
    for s in strings:
        low = s.lower()
        if len(low.strip()) >= 8 and _identifies(low):
            texts.append(low)
        if len(low) >= LONG_TEXT:
            mid = len(low) // 2
            for piece in (low[:PIECE], low[mid - PIECE // 2 : mid + PIECE // 2], low[-PIECE:]):
                if _identifies(piece):
                    texts.append(piece)
        for tok in _WORDS.findall(low):
            if is_distinctive(tok):
                tokens.add(tok)
            if len(tok) >= 3 and not tok.isdigit():
                words.add(tok)
    return list(dict.fromkeys(texts)), sorted(tokens), sorted(words)


def json_strings(value: Any) -> Iterator[str]:
    """Every string value of a parsed JSON document (its keys are names memdeck chose; values may be typed)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from json_strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from json_strings(v)
