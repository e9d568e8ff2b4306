"""A text's sentences: it breaks after ``.``, ``!`` or ``?`` (and ``;`` where asked) followed by a space, and
at every line break; never after a title before a name ("Dr. Okafor", "Mrs. Dalloway"), a lone initial
("J. R. Smith"), or an abbreviation the sentence goes on after ("e.g. Redis", "approx. 3 km")."""

from __future__ import annotations

import re

# Titles before a name, and abbreviations a sentence never ends on: no break after these whatever follows.
_NEVER_LAST = frozenset(
    [
        "dr",
        "mr",
        "mrs",
        "ms",
        "mx",
        "prof",
        "sr",
        "jr",
        "st",
        "mt",
        "rev",
        "gen",
        "col",
        "capt",
        "lt",
        "sgt",
        "fr",
        "hon",
        "sen",
        "rep",
        "gov",
        "pres",
        "e.g",
        "i.e",
        "cf",
        "vs",
    ]
)
# Abbreviations a sentence may end on: no break when the next word goes on in lower case or with a digit.
_ABBREVIATIONS = frozenset(
    ["eg", "ie", "etc", "approx", "dept", "est", "fig", "inc", "ltd", "co", "corp", "a.m", "p.m", "no", "nos"]
)
_END = re.compile(r"(?P<punct>[.!?;]+)(?P<space>[ \t\r\f\v]+)|\n+")
_LAST_WORD = re.compile(r"([A-Za-z][A-Za-z.]*)$")


def split_sentences(text: str, *, semicolons: bool = False, capital_next: bool = False) -> list[str]:
    """The pieces of ``text`` between sentence breaks, each with its own final punctuation, unstripped.
    ``semicolons``: a ``;`` also ends one. ``capital_next``: a break after punctuation needs the next
    sentence to open with a capital, a digit, a quote or a parenthesis."""
    pieces: list[str] = []
    start = 0
    for m in _END.finditer(text):
        punct = m.group("punct")
        if punct is not None:
            if punct == ";" and not semicolons:
                continue
            after = text[m.end() : m.end() + 1]
            if capital_next and not (after.isupper() or after.isdigit() or after in "\"'“("):
                continue
            if punct == "." and _abbreviation(text[start : m.start()], after):
                continue
            cut = m.start() + len(punct)
        else:
            cut = m.start()
        pieces.append(text[start:cut])
        start = m.end()
    pieces.append(text[start:])
    return [p for p in pieces if p.strip()]


def _abbreviation(before: str, after: str) -> bool:
    """Whether the full stop after ``before`` closes an abbreviation rather than the sentence."""
    m = _LAST_WORD.search(before)
    if m is None:
        return False
    word = m.group(1).rstrip(".").lower()
    if word in _NEVER_LAST or (len(word) == 1 and m.group(1)[0].isupper() and after.isupper()):
        return True
    return word in _ABBREVIATIONS and (after.islower() or after.isdigit())


__all__ = ["split_sentences"]
