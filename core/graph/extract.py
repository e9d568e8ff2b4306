"""Entity and relation extraction from memory text (a minimal stand-in: capitalised names only)."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

KINDS = ("person", "place", "organisation", "product", "date", "handle", "title", "other")


@dataclass(frozen=True)
class Entity:
    name: str
    kind: str
    start: int
    end: int


@dataclass(frozen=True)
class Relation:
    subject: str
    predicate: str
    object: str
    negated: bool = False
    valid_from: str | None = None
    valid_until: str | None = None


@dataclass(frozen=True)
class Extraction:
    entities: tuple[Entity, ...]
    relations: tuple[Relation, ...]


_SPEAKER = re.compile(r"^\s*([A-Z][\w'-]*(?: [A-Z][\w'-]*)?):\s")
_NAME = re.compile(r"\b[A-Z][a-z][\w'-]*(?:\s+[A-Z][a-z][\w'-]*)*")
_SKIP = {"I", "The", "A", "An", "It", "This", "That", "What", "When", "Where", "Who", "How", "Why", "Yes", "No"}


def normalise_name(name: str) -> str:
    text = unicodedata.normalize("NFC", name).casefold()
    text = " ".join(text.split())
    text = re.sub(r"(?:'s|’s)$", "", text)
    text = re.sub(r"^(?:the|a|an) ", "", text)
    return text.strip()


def extract(text: str) -> Extraction:
    found: list[Entity] = []
    speaker = _SPEAKER.match(text)
    if speaker:
        found.append(Entity(speaker.group(1), "person", speaker.start(1), speaker.end(1)))
    for m in _NAME.finditer(text):
        if speaker and m.start() < speaker.end():
            continue
        name = m.group(0)
        if name in _SKIP:
            continue
        found.append(Entity(name, "other", m.start(), m.end()))
    return Extraction(tuple(found), ())
