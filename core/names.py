"""Principal and agent names and the memory types: the one place they are checked (the standard library only,
so a front end can check a name or build its choices before the store, its Arrow schemas and the type rules
load)."""

from __future__ import annotations

import functools
import unicodedata
from typing import Any

from memdeck.core.errors import MemdeckError

_CONFUSABLE_SCRIPTS = frozenset({"LATIN", "CYRILLIC", "GREEK"})  # letters that look alike across these


def _scripts(name: str) -> set[str]:
    found = set()
    for ch in name:
        if unicodedata.category(ch).startswith("L"):
            script = unicodedata.name(ch, "").split(" ", 1)[0]
            if script in _CONFUSABLE_SCRIPTS:
                found.add(script)
    return found


# Cyrillic and Greek letters drawn like Latin ones (from Unicode's confusables, UTS #39), with the Latin letter
# each is taken for. A name written only in these (U+0430 U+04CF U+0456 U+0441 U+0435) reads as "alice".
_LATIN_LOOKALIKES = dict(
    zip(
        "аеһіјӏорсѕуүхԁԛԝАВЕКМНОРСТХІЈЅҮӀԚԜαιικνορυχγΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",
        "aehijlopcsyyxdqwABEKMHOPCTXIJSYlQWaiikvopuxyABEZHIKMNOPTYX",
        strict=True,
    )
)


def _reads_as_latin(name: str) -> str | None:
    """The Latin name a Cyrillic-only or Greek-only name reads as, when every letter of it has a Latin
    look-alike; else None."""
    letters = [ch for ch in name if unicodedata.category(ch).startswith("L")]
    if not letters or not all(ch in _LATIN_LOOKALIKES for ch in letters):
        return None
    return "".join(_LATIN_LOOKALIKES.get(ch, ch) for ch in name)


def check_principal(principal: Any) -> str:
    """A principal (or agent) name as stored and matched: NFC, trimmed; the one place names are checked.

    Every read and write path passes names through here, so "José" typed precomposed or decomposed, and
    "alice" with a trailing space, name one principal. Control and format characters (which can hide or
    reorder what is shown) and names mixing Latin, Cyrillic or Greek letters (a Cyrillic U+0430 for the "a" of "alice"
    looks like "alice") are refused with one line. So are names that are another name in disguise, which
    would list like it while holding other memories: those NFKC changes (full-width "alice" in U+FF41...,
    styled or ligature letters, a no-break space) and those written wholly in Cyrillic or Greek letters that
    each look Latin ("alice" as U+0430 U+04CF U+0456 U+0441 U+0435). They are refused rather than folded into the name they imitate, so no spelling of a
    name ever reaches another principal's memories, and stored names stay as they are.
    """
    if not isinstance(principal, str):
        raise MemdeckError("a principal is required (whose memory this is)")
    return _checked(principal)


@functools.lru_cache(maxsize=4096)
def _checked(principal: str) -> str:
    """``check_principal`` of a string, remembered (a recall checks its principal twice; a refused name
    raises each time)."""
    if not principal.strip():
        raise MemdeckError("a principal is required (whose memory this is)")
    try:
        principal.encode("utf-8")
    except UnicodeEncodeError:
        raise MemdeckError("principal is not valid UTF-8") from None
    if "\x00" in principal or len(principal) > 256:
        raise MemdeckError("principal must be at most 256 characters with no NUL byte")
    name = unicodedata.normalize("NFC", principal).strip()
    bad = next((ch for ch in name if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp")), None)
    if bad is not None:
        raise MemdeckError(f"principal {name!r} contains a control character (U+{ord(bad):04X})")
    scripts = _scripts(name)
    if len(scripts) > 1:
        raise MemdeckError(
            f"principal {name!r} mixes {' and '.join(sorted(s.title() for s in scripts))} letters, which can "
            "look like another name; use one script"
        )
    plain = unicodedata.normalize("NFKC", name)
    if plain != name:
        raise MemdeckError(
            f"principal {name!r} is written with compatibility characters (full-width, styled or ligature "
            f"letters, special spaces) and reads as {plain!r}; write it as {plain!r}"
        )
    latin = _reads_as_latin(name)
    if latin is not None:
        script = next(iter(scripts)).title() if scripts else "non-Latin"
        raise MemdeckError(
            f"principal {name!r} is written in {script} letters that all look Latin, so it reads as {latin!r}; "
            f"use {latin!r} if that is meant, or a name that cannot be taken for another"
        )
    return name


MEMORY_TYPES = ("preference", "decision", "fact", "error", "observation", "event", "instruction")


def check_type(value: object) -> str | None:
    """A writer's memory type, checked: one of MEMORY_TYPES (any case), or None when not given."""
    if value is None or value == "":
        return None
    if not isinstance(value, str) or value.strip().lower() not in MEMORY_TYPES:
        raise MemdeckError(f"unknown memory type {value!r}; use one of: {', '.join(MEMORY_TYPES)}")
    return value.strip().lower()
