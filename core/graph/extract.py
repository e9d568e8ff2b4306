"""Entities and relations from one memory's text: offline, deterministic, no model.

Names come from capitalisation (a capitalised word that opens a sentence counts only when it is not a
common English word), quoted titles, @handles and date expressions; kinds from suffixes ("Corp",
"University", "Street"), honorifics, version numbers and the words around a name. Relations come from the
text between two consecutive names: auxiliaries, negation and one verb phrase from ``words.VERBS``
("works at"), or a role ("is Bob's sister"). First-person pronouns resolve only to the speaker of a
"Speaker: text" or 'Speaker said, "text"' line; nothing else is guessed. Patterns live in ``patterns.py``,
word lists in ``words.py``. A name whose kind nothing states is marked ``guessed`` (a person, or a place when
the gazetteer of :func:`place_names` holds it; a name after "in", "from" or "at" is a guessed place or
organisation); :func:`name_contexts` reads what the words around it still say, for the graph's model to judge
its kind (:mod:`memdeck.core.graph.memory.kinds`).
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import itertools
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources

from memdeck.core.graph import patterns as p
from memdeck.core.graph import words as w

KINDS = ("person", "place", "organisation", "product", "date", "handle", "title", "other")


@dataclass(frozen=True)
class Entity:
    name: str
    kind: str
    start: int
    end: int
    # the kind is a guess: the default for a bare name (nothing in the text said what it is), or read only from
    # a preposition that also comes before another kind ("at Schiphol", "from Spotify")
    guessed: bool = False


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


_ARTICLE_RE = re.compile(r"^(?:the|a|an)\s+")
_POSSESSIVE_RE = re.compile(r"(?:'s|'|’s|’)$")


def normalise_name(name: str) -> str:
    """The key that resolves one entity across memories: "the Acme  Corp's" -> "acme corp"."""
    key = unicodedata.normalize("NFC", name).casefold()
    key = " ".join(key.split()).strip(" \"'“”‘’.,;:!?()[]")
    key = _POSSESSIVE_RE.sub("", key)
    return _ARTICLE_RE.sub("", key).strip()


# --- working state ------------------------------------------------------------------------------------


@dataclass
class _Mention:
    start: int
    end: int
    kind: str
    strength: int  # 3 form (suffix, quote, date), 2 relation, 1 neighbouring word, 0 default
    speaker: bool = False
    loose: bool = False  # the neighbouring word was a preposition that comes before places and organisations

    def name(self, text: str) -> str:
        return text[self.start : self.end]


@dataclass
class _Anchor:
    start: int
    end: int
    mention: int  # index into mentions
    role: str  # "name", "subject" (I, we), "possessive" (my, our), "object" (me, us)


def _prepare(text: str) -> str:
    """Same length as ``text``: straight apostrophes, no control characters, e-mails, URLs and redaction
    placeholders (``<EMAIL_1>``: a value the graph must never hold) blanked."""
    work = "".join(
        "'" if ch in "’‘" else " " if (ch != "\n" and unicodedata.category(ch)[0] == "C") else ch
        for ch in text
    )
    work = p.EMAIL_URL_RE.sub(lambda m: " " * len(m.group()), work)
    return p.PLACEHOLDER_RE.sub(lambda m: " " * len(m.group()), work)


def _is_title(content: str) -> bool:
    words = content.split()
    if not words or len(words) > 12 or content[-1] in ".!?,;:" or not content[0].isupper():
        return False
    return all(wd[0].isupper() or wd[0].isdigit() or wd.casefold() in p.MINOR or len(wd) <= 3 for wd in words)


def _iso(date: str) -> str | None:
    """An absolute date as ISO text ("7 May 2023" -> "2023-05-07", "March 2021" -> "2021-03"), else None."""
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", date):
        return date
    year = re.search(rf"\b{p.YEAR}\b", date)
    if not year:
        return None
    month = re.search(p.MONTH, date)
    if not month:
        return year.group() if re.fullmatch(rf"{p.YEAR}", date) else None
    number = p.MONTH_NUMBERS[month.group()[:3].casefold()]
    day = re.search(r"\b(\d{1,2})(?:st|nd|rd|th)?\b(?!\d)", date.replace(year.group(), ""))
    return f"{year.group()}-{number:02d}" + (f"-{int(day.group(1)):02d}" if day else "")


def _cap(token: str) -> bool:
    return (token[0].isupper() or bool(p.INTERNAL_CAP_RE.match(token))) and token.casefold() not in w.ROLES


def _is_i(token: str) -> bool:
    return token == "I" or token.startswith("I'")


def _strip_possessive(token: str) -> str:
    return token[:-2] if token.endswith("'s") else token[:-1] if token.endswith("s'") else token


def _classify(tokens: list[str], name: str) -> tuple[str, int]:
    first, last = tokens[0].casefold().rstrip("."), tokens[-1].casefold()
    if first in w.HONORIFICS and len(tokens) > 1 and first not in ("st", "saint"):
        return "person", 3
    if last in w.ORG_SUFFIXES or (first in w.ORG_PREFIXES and len(tokens) > 1):
        return "organisation", 3
    if last in w.PLACE_SUFFIXES or (first in w.PLACE_PREFIXES and len(tokens) > 1) or "/" in name:
        return "place", 3
    if any(p.VERSION_RE.match(t) for t in tokens[1:]) or "." in name.replace(". ", ""):
        return "product", 3
    if any(p.INTERNAL_CAP_RE.search(t) and not p.NAME_PREFIX_RE.match(t) for t in tokens if not t.isupper()):
        return "product", 2
    if last in w.MEETINGS or " ".join(t.casefold() for t in tokens) in w.MEETING_NAMES:
        return "other", 3
    if len(tokens) == 1 and first in w.LANGUAGES:
        return "other", 3
    if len(tokens) == 1 and name.isupper() and len(name) > 1:
        return "organisation", 0
    if normalise_name(name) in place_names():
        return "place", 0  # a guess still: "Santander approved the loan" is the bank
    return ("person" if len(tokens) <= 3 else "other"), 0


@functools.cache
def place_names() -> frozenset[str]:
    """The keys of the gazetteer, core/data/place_names.txt (countries, continents, US states and places of
    15,000 people or more from GeoNames, CC BY 4.0; first names left out; bench/make_place_names.py): a bare
    name found there is guessed a place instead of a person."""
    text = resources.files("memdeck.core").joinpath("data", "place_names.txt").read_text("utf-8")
    return frozenset(line for line in text.splitlines() if line and not line.startswith("#"))


def _speakers(work: str) -> tuple[str, list[tuple[int, int, int, int]]]:
    """Turns with a clear speaker, ``Name: text`` and ``Name said, "text"``, as (name start, name end,
    utterance start, utterance end). The quotes around a said-utterance are blanked, so that a title quoted
    inside it still reads as one."""
    turns: list[tuple[int, int, int, int]] = []
    chars = list(work)
    for m in itertools.chain(p.SPEAKER_RE.finditer(work), p.SAID_RE.finditer(work)):
        if m.group(1).split()[0].casefold() in w.COMMON:
            continue
        line_end = work.find("\n", m.end())
        line_end = len(work) if line_end < 0 else line_end
        end = line_end
        if m.re is p.SAID_RE:
            end = max(work.rfind('"', m.end(), line_end), work.rfind("”", m.end(), line_end))
            end = line_end if end < 0 else end
            chars[m.end() - 1] = " "
            if end < line_end:
                chars[end] = " "
        turns.append((m.start(1), m.end(1), m.end(), end))
    return "".join(chars), sorted(turns)


def _find_mentions(
    work: str, speakers: list[tuple[int, int, int, int]]
) -> tuple[list[_Mention], list[tuple[int, int, int]]]:
    taken = bytearray(len(work))
    mentions: list[_Mention] = []
    regions: list[tuple[int, int, int]] = []  # (speaker start, utterance start, line end) per speaker line

    def add(
        start: int, end: int, kind: str, strength: int, speaker: bool = False, loose: bool = False
    ) -> None:
        if start < end and not any(taken[start:end]):
            taken[start:end] = b"\x01" * (end - start)
            mentions.append(_Mention(start, end, kind, strength, speaker, loose))

    for name_start, name_end, utterance, utterance_end in speakers:
        add(name_start, name_end, "person", 3, speaker=True)
        regions.append((name_start, utterance, utterance_end))
    for m in p.HANDLE_RE.finditer(work):
        add(m.start(), m.end(), "handle", 3)
    for m in p.QUOTE_RE.finditer(work):
        quoted = next(g for g in (1, 2, 3) if m.group(g) is not None)
        content = m.group(quoted)
        if _is_title(content.strip()):
            start = m.start(quoted) + len(content) - len(content.lstrip())
            add(start, start + len(content.strip()), "title", 3)
    for m in p.DATE_RE.finditer(work):
        if m.group() == "May" and not p.LONE_MAY_RE.search(work[max(0, m.start() - 8) : m.start()]):
            continue
        add(m.start(), m.end(), "date", 3)

    tokens = [(t.group(), t.start(), t.end(), t.lastgroup or "") for t in p.TOKEN_RE.finditer(work)]
    i, n = 0, len(tokens)
    while i < n:
        tok, start, _, group = tokens[i]
        honorific = (
            tok.casefold() in w.HONORIFICS and tok[0].isupper() and i + 1 < n and _cap(tokens[i + 1][0])
        )
        if group != "word" or taken[start] or not (_cap(tok) or honorific) or _is_i(tok):
            i += 1
            continue
        opener = (
            i == 0 or tokens[i - 1][0] in p.SENTENCE_OPENERS or work[tokens[i - 1][2] : start].count("\n")
        )
        if opener and (_strip_possessive(tok).casefold() in w.COMMON or p.OPENER_FORM_RE.match(tok)):
            i += 1
            continue
        last = i
        j = i + 1
        while j < n and not taken[tokens[j][1]] and tokens[j][1] - tokens[j - 1][2] <= 1:
            prev, (nxt, _, _, ngroup) = tokens[last][0], tokens[j]
            if prev.endswith(("'s", "s'")):
                # "St Mary's Hospital" is one name; "Priya's Google account" is two things.
                suffix = nxt.casefold() in w.ORG_SUFFIXES or nxt.casefold() in w.PLACE_SUFFIXES
                if not (ngroup == "word" and _cap(nxt) and (suffix or tokens[last - 1][0] in p.SAINTS)):
                    break
            if (
                (ngroup == "word" and _cap(nxt) and not _is_i(nxt))
                or ngroup == "abbr"
                or (ngroup == "num" and p.VERSION_RE.match(nxt) and tokens[last][3] == "word")
            ):
                last = j
            elif (
                nxt in p.CONNECTORS
                and j + 1 < n
                and tokens[j + 1][3] == "word"
                and _cap(tokens[j + 1][0])
                and not taken[tokens[j + 1][1]]
            ):
                last = j + 1
                j += 1
            else:
                break
            j += 1
        words = [t[0] for t in tokens[i : last + 1]]
        end = tokens[last][2] - (len(words[-1]) - len(_strip_possessive(words[-1])))
        words[-1] = _strip_possessive(words[-1])
        name = work[start:end]
        if len(words) == 1 and not opener and words[0].casefold() in w.COMMON:
            i = last + 1
            continue
        kind, strength = _classify(words, name)
        loose = False
        if strength < 3:
            kind, strength = _context_kind(work, start, end, kind, strength)
            loose = strength == 1 and _cue(work, start) in _LOOSE_CUE.get(kind, ())
            if loose and kind == "place" and normalise_name(name) in place_names():
                loose = False
        add(start, end, kind, strength, loose=loose)
        i = last + 1
    mentions.sort(key=lambda m: m.start)
    return mentions, regions


# The prepositions that read as a kind but come as often before the other of place and organisation, or
# before tools ("rewrote the parser in X", "invoices go through X"); a name after them that the gazetteer
# knows stays a place.
_LOOSE_CUE: dict[str, frozenset[str]] = {
    "organisation": frozenset({"at"}),
    "place": frozenset({"from", "in", "into", "through", "inside"}),
}


def _cue(work: str, start: int) -> str:
    prev = re.findall(r"[\w']+", work[max(0, start - 40) : start].casefold())
    while prev and prev[-1] in p.DETERMINERS:
        prev.pop()
    return prev[-1] if prev else ""


def _context_kind(work: str, start: int, end: int, kind: str, strength: int) -> tuple[str, int]:
    if work[end : end + 1] == "'":
        return kind, strength  # an owner: "at Dana's wedding" says nothing of what Dana is
    following = re.match(r"\s+([a-z]+)(?![\w-])", work[end : end + 20])
    if following and following.group(1) in w.PRODUCT_NOUNS:
        return "product", 1
    if following and following.group(1) in w.PROJECT_NOUNS and kind in ("person", "place") and strength == 0:
        return "other", 1
    before = work[max(0, start - 40) : start].casefold()
    prev = re.findall(r"[\w']+", before)
    while prev and prev[-1] in p.DETERMINERS:
        prev.pop()
    if not prev or before.rstrip()[-1:] in ".!?":
        return kind, strength
    word, word2 = prev[-1], (prev[-2] if len(prev) > 1 else "")
    if word in w.PET_NOUNS:
        return "other", 1
    if word in w.NAME_CUES:
        nouns = set(prev[-4:-1])
        if nouns & w.ORG_NOUNS:  # "a bakery called X", "her studio is called X"
            return "organisation", 1
        if nouns & w.PERSON_NOUNS or word2 in p.BE_CALLED:  # "my son named X", "prefers to be called X"
            return "person", 1
        return "other", 1
    if word in ("in", "with") and word2 in ("written", "coded", "programmed", "built", "implemented"):
        return "product", 1
    if word in w.PRODUCT_CUES or (word in ("from", "to") and word2 in w.SWITCH_VERBS):
        return "product", 1
    if word in w.PLACE_PREPS or (word == "to" and word2 in w.MOVE_VERBS):
        return "place", 1
    if word == "at":
        return "organisation", 1
    return kind, strength


# --- relations ----------------------------------------------------------------------------------------


@dataclass
class _Found:
    subject: int  # mention index, or -1: the subject of the clause before ("... and works at X")
    predicate: str
    obj: int
    negated: bool
    subject_kind: str
    object_kind: str
    pair: int  # index of the anchor pair it came from


def _anchors(work: str, mentions: list[_Mention], regions: list[tuple[int, int, int]]) -> list[_Anchor]:
    anchors = [_Anchor(m.start, m.end, k, "name") for k, m in enumerate(mentions) if m.kind != "date"]
    by_start = {m.start: k for k, m in enumerate(mentions)}
    for speaker_start, utterance, line_end in regions:
        for pronoun in p.PRONOUN_RE.finditer(work, utterance, line_end):
            k = bisect.bisect_right(anchors, pronoun.start(), key=lambda a: a.start) - 1
            if k >= 0 and anchors[k].end > pronoun.start():
                continue  # inside a name or title
            word = pronoun.group().casefold()
            role = "subject" if word in ("i", "we") else "possessive" if word in ("my", "our") else "object"
            anchors.insert(k + 1, _Anchor(pronoun.start(), pronoun.end(), by_start[speaker_start], role))
    return anchors


def _between(work: str, start: int, end: int, dates: list[_Mention]) -> str:
    """The text between two names, lower-cased, dates (and their prepositions) and title quotes removed."""
    chars = list(work[start:end])
    for m in dates[bisect.bisect_left(dates, start, key=lambda d: d.start) :]:
        if m.end > end:
            break
        chars[m.start - start : m.end - start] = ["\x00"] + [""] * (m.end - m.start - 1)
    mid = " ".join(p.DATE_PREP_RE.sub(" ", "".join(chars)).split()).casefold()
    if mid[:1] in '"“”' or (mid[:1] == "'" and mid[1:2] in (" ", "")):
        mid = mid[1:].lstrip()
    return mid.rstrip("\"“”'").rstrip()


def _pair(a: _Anchor, b: _Anchor, mid: str, work: str, mentions: list[_Mention], k: int) -> list[_Found]:
    """The relations that the text between two consecutive names (or pronouns) states."""
    sa, ob = a.mention, b.mention
    if a.role == "possessive" and b.role == "name" and p.MY_WORK_RE.match(mid):  # "my team at Rakuten"
        return [_Found(sa, "works at", ob, False, "person", "organisation", k)]
    if mentions[sa].kind == "title" and mid == "by" and b.role == "name":  # "Dune" by Frank Herbert
        return [_Found(ob, "wrote", sa, False, "person", "", k)]
    if a.role == "possessive" or (a.role == "name" and mid.startswith("'")):
        if b.role != "name":
            return []
        if m := p.POSS_ROLE_RE.match(mid):
            return [_role(ob, m.group("role"), sa, k, False)]
        if p.FAVOURITE_RE.match(mid):
            return [_Found(sa, "likes", ob, False, "person", "", k)]
        if a.role == "name" and p.OWNS_RE.match(mid):
            return [_Found(sa, "owns", ob, False, "person", "product", k)]
        return []
    if b.role == "name" and (m := p.HIS_ROLE_RE.match(mid)):  # "Tobias and his girlfriend Hana"
        return [_role(ob, m.group("role"), sa, k, False)]
    if a.role == "object" or (b.role == "subject" and mid != "and"):
        return []
    after = work[b.end : b.end + 40].casefold()
    if mid == "and":
        if m := p.PAIR_AFTER_RE.match(after):
            predicate = "met" if m.group(1) == "met" else "married to"
            first, second = (ob, sa) if b.role != "name" else (sa, ob)
            return [_Found(first, predicate, second, False, "person", "person", k)]
        return []
    if not p.VERB_RE.match(mid) and (split := p.AND_VERB_RE.match(mid)):
        mid = split.group("rest")  # "Selin leads the mobile team and reports to X": the second verb
    if m := p.VERB_RE.match(mid):
        _, predicate, hint, need = w.VERBS[int((m.lastgroup or "v0")[1:])]
        aux = m.group("aux")
        if (
            (need == "copula" and not p.COPULA_RE.search(aux))
            or (predicate == "knows" and p.CLAUSE_AFTER_RE.match(after))
            or (mid.endswith((" a", " an")) and p.ATTRIBUTIVE_RE.match(after))
            or (need == "title" and mentions[ob].kind != "title")
            or (b.role == "object" and hint != "person")
            or (m.group("with") and mentions[sa].kind == "place")
        ):
            return []
        subject = -1 if m.group("carry") else sa
        person = "person" if predicate in p.PERSON_SUBJECT else ""
        return [_Found(subject, predicate, ob, bool(p.NEGATION_RE.search(aux)), person, hint, k)]
    if (m := p.COP_ROLE_RE.match(mid)) and (p.COPULA_RE.search(m.group("aux")) or mid.startswith(",")):
        return [_role(sa, m.group("role"), ob, k, bool(p.NEGATION_RE.search(m.group("aux"))))]
    if p.COP_ONLY_RE.match(mid + " ") and p.COPULA_RE.search(mid):
        # "Olu is Kwame's brother", "Ana is my sister"
        role = (p.ROLE_AFTER_RE if b.role == "name" else p.ROLE_AFTER_MY_RE).match(after)
        if role and b.role in ("name", "possessive"):
            return [_role(sa, role.group("role"), ob, k, bool(p.NEGATION_RE.search(mid)))]
    return []


def _role(subject: int, role: str, obj: int, k: int, negated: bool) -> _Found:
    canonical = w.ROLES[role]
    object_kind = "organisation" if canonical in w.ORG_ROLES else "person"
    return _Found(subject, f"{canonical} of", obj, negated, "person", object_kind, k)


def _bounds(
    found: _Found, anchors: list[_Anchor], dates: list[_Mention], work: str, starts: list[int]
) -> tuple[str | None, str | None]:
    """valid_from / valid_until from the dates of the relation's own stretch of its sentence."""
    a, b = anchors[found.pair], anchors[found.pair + 1]
    index = bisect.bisect_right(starts, b.start)
    sentence, stop = starts[index - 1], starts[index] if index < len(starts) else len(work)
    if found.pair + 2 < len(anchors):
        stop = min(stop, anchors[found.pair + 2].start)
    first_in_sentence = found.pair == 0 or anchors[found.pair - 1].start < sentence
    low = sentence if first_in_sentence and a.start >= sentence else a.end
    valid_from = valid_until = None
    event = found.predicate in p.EVENT_PREDICATES
    for m in dates[bisect.bisect_left(dates, low, key=lambda d: d.start) :]:
        if m.end > stop:
            break
        iso = _iso(work[m.start : m.end])
        if iso is None:
            continue
        before = re.findall(r"[a-z]+", work[max(0, m.start - 15) : m.start].casefold())
        word = before[-1] if before else ""
        if word in p.FROM_WORDS or before[-2:] == ["as", "of"]:
            valid_from = valid_from or iso
        elif word in p.UNTIL_WORDS:
            valid_until = valid_until or iso
        elif event and (word in ("in", "on", "") if m.start > b.start else word == "in"):
            valid_from = valid_from or iso  # the date of an event: "joined Stripe in March 2021"
    return valid_from, valid_until


def _relations(
    work: str, mentions: list[_Mention], anchors: list[_Anchor], dates: list[_Mention], starts: list[int]
) -> list[_Found]:
    mids: list[str] = []
    pairs: list[list[_Found]] = []
    for k, (a, b) in enumerate(itertools.pairwise(anchors)):
        mid = _between(work, a.end, b.start, dates) if b.start - a.end <= 160 else ""
        mids.append(mid)
        pairs.append(_pair(a, b, mid, work, mentions, k) if mid and "\n" not in work[a.end : b.start] else [])
    found: list[_Found] = []
    last_subject: dict[int, int] = {}  # sentence -> subject of its latest relation
    for k, cands in enumerate(pairs):
        sentence = bisect.bisect_right(starts, anchors[k].start)
        for f in cands:
            if f.subject == -1:
                if sentence not in last_subject:
                    continue
                f.subject = last_subject[sentence]
            found.append(f)
            last_subject[sentence] = f.subject
            # "X and Y visited Z": Y's relation holds for X too.
            before = anchors[k - 1] if k > 0 else None
            if (
                before is not None
                and before.role == "name"
                and mids[k - 1] in ("and", "&")
                and not pairs[k - 1]
                and f.subject == anchors[k].mention
                and anchors[k].role == "name"
                and not any(g.obj == before.mention for g in found)
            ):
                found.append(dataclasses.replace(f, subject=before.mention))
            # "joined X from Y": Y is the organisation left.
            if (
                f.predicate == "joined"
                and k + 1 < len(pairs)
                and mids[k + 1] == "from"
                and anchors[k + 2].role == "name"
            ):
                found.append(
                    _Found(f.subject, "left", anchors[k + 2].mention, f.negated, "", "organisation", k + 1)
                )
            # "uses X and Y": the relation holds for Y too, unless Y starts a clause of its own.
            j = k + 1
            while j < len(pairs) and p.COORD_RE.match(mids[j]) and anchors[j + 1].role == "name":
                if j + 1 < len(pairs) and pairs[j + 1]:
                    break
                found.append(dataclasses.replace(f, obj=anchors[j + 1].mention, pair=j))
                j += 1
    return found


def extract(text: str) -> Extraction:
    """Entities and relations stated in ``text``; pure and deterministic."""
    work, speakers = _speakers(_prepare(text))
    mentions, regions = _find_mentions(work, speakers)
    dates = [m for m in mentions if m.kind == "date"]
    starts = [0] + [m.end() for m in p.SENTENCE_END_RE.finditer(work)]
    anchors = _anchors(work, mentions, regions)
    found = _relations(work, mentions, anchors, dates, starts)
    for f in found:
        for index, kind in ((f.subject, f.subject_kind), (f.obj, f.object_kind)):
            if kind and mentions[index].strength < 2:
                mentions[index].kind, mentions[index].strength = kind, 2
    names = [m for m in mentions if m.kind != "date"]
    for left, right in itertools.pairwise(names):
        if work[left.end : right.start].strip().casefold() in p.COORD_KIND:  # "Django and PostgreSQL 16"
            if left.strength <= 1 and right.strength >= 2:
                left.kind = right.kind
            elif right.strength <= 1 and left.strength >= 1:
                right.kind = left.kind
    relations: list[Relation] = []
    for f in found:
        if mentions[f.subject].kind == "date" or f.subject == f.obj:
            continue
        valid_from, valid_until = _bounds(f, anchors, dates, work, starts)
        subject, obj = mentions[f.subject].name(text), mentions[f.obj].name(text)
        relation = Relation(subject, f.predicate, obj, f.negated, valid_from, valid_until)
        if relation not in relations:
            relations.append(relation)
    entities = tuple(
        Entity(m.name(text), m.kind, m.start, m.end, m.strength == 0 or (m.strength == 1 and m.loose))
        for m in mentions
    )
    return Extraction(entities, tuple(relations))


# --- the words around a guessed name --------------------------------------------------------------

MASK = "X"  # what stands for the name in ``masked`` (the kinds' typical sentences use it too)
MAX_WORDS = 24  # of a long sentence, this many words either side of the name are kept

_JOINERS = re.compile(r"\s*(?:,|and|or|&|nor|, and|, or)\s*", re.IGNORECASE)
_TO = re.compile(r"\s*to\s*", re.IGNORECASE)
_FROM_BEFORE = re.compile(r"\bfrom\s*$", re.IGNORECASE)
_WORD = re.compile(r"[\w'’]+")
_PARTNER_KINDS = frozenset({"person", "place", "organisation", "product"})


@dataclass(frozen=True)
class NameContext:
    """What the words around one guessed name say of its kind."""

    masked: str
    exclude: frozenset[str] = frozenset()
    group: int | None = None  # names of one text with the same group are joined ("X and Y")
    partner: str | None = None  # the kind the text states for another name of the group


def name_contexts(text: str, entities: Sequence[Entity]) -> list[NameContext | None]:
    """A :class:`NameContext` for each guessed entity of ``extract(text)``, None for the others: what the words
    around a name whose kind the text does not state still say of it, for the graph's reading of its kind
    (:mod:`memdeck.core.graph.memory.kinds`).

    * ``masked``: its sentence with the name replaced by :data:`MASK`, which the kinds compare with short
      typical sentences about people, places, organisations and products;
    * ``exclude``: kinds the words next to it rule out. After a determiner ("the Leeds office", "our Jira
      board", "every Chelsea match") a name is not a person (but "the Smiths" is a family); the subject of a
      verb that people or organisations do ("X said", "X flew to", "X wants") and the object of one done to
      them ("ask X", "thanked X") is not a place;
    * ``group``: names joined by commas, "and", "or", "&" or "from X to Y" name things of one kind ("Lyon,
      Nice and Lille", "from Trello to Asana"): guessed names of one group are judged together, and
      ``partner`` is the kind the text states for another name of the group ("Trello" after "switched
      from")."""
    if not any(e.guessed for e in entities):
        return [None] * len(entities)
    starts = [0] + [m.end() for m in p.SENTENCE_END_RE.finditer(text)]
    groups = _groups(text, entities)
    out: list[NameContext | None] = []
    for i, entity in enumerate(entities):
        if not entity.guessed:
            out.append(None)
            continue
        group = groups.get(i)
        stated = {
            e.kind
            for j, e in enumerate(entities)
            if group is not None and groups.get(j) == group and not e.guessed and e.kind in _PARTNER_KINDS
        }
        out.append(
            NameContext(
                _masked(text, entity.start, entity.end, starts),
                _exclude(text, entity.start, entity.end),
                group,
                stated.pop() if len(stated) == 1 else None,
            )
        )
    return out


def _masked(text: str, start: int, end: int, starts: list[int]) -> str:
    """The name's sentence with the name replaced by :data:`MASK`, at most :data:`MAX_WORDS` words either
    side of it."""
    first = max(s for s in starts if s <= start)
    last = min([s for s in starts if s >= end] + [len(text)])
    before, after = text[first:start].split(), text[end:last].split()
    glue = "" if text[end : end + 1] in ("'", "’", ",", ".", ";", ":", "!", "?") else " "
    left = " ".join(before[-MAX_WORDS:])
    right = " ".join(after[:MAX_WORDS])
    return f"{left} {MASK}".strip() + (glue + right if right else "")


def _exclude(text: str, start: int, end: int) -> frozenset[str]:
    before = text[max(0, start - 60) : start]
    prev = _WORD.findall(before.casefold())
    after = _WORD.findall(text[end : end + 40].casefold())
    # the word right before, unless a sentence or clause boundary comes between
    word = prev[-1] if prev and not re.search(r"[.!?:;,]\s*$", before) else ""
    out = set()
    if word in w.NOT_PERSON_AFTER and not (word == "the" and text[start:end].endswith("s")):
        out.add("person")  # "the Johnsons" is a family
    possessive = text[end : end + 1] in ("'", "’")
    if not possessive and after and after[0] in w.AGENT_VERBS:
        out.add("place")
    if word in w.ADDRESS_VERBS or (word == "from" and w.FROM_SENDER.intersection(prev[-6:-1])):
        out.add("place")  # "ask X", "feedback (on the draft) from X"
    return frozenset(out)


def _groups(text: str, entities: Sequence[Entity]) -> dict[int, int]:
    """Entities (by index) joined by commas, "and", "or", "&" or "from X to Y" to the next one; each run of
    two or more gets the index of its first member. Dates neither join nor are joined."""
    out: dict[int, int] = {}
    for i in range(1, len(entities)):
        a, b = entities[i - 1], entities[i]
        if "date" in (a.kind, b.kind):
            continue
        between = text[a.end : b.start]
        if _JOINERS.fullmatch(between) or (
            _TO.fullmatch(between) and _FROM_BEFORE.search(text[max(0, a.start - 10) : a.start])
        ):
            out.setdefault(i - 1, i - 1)
            out[i] = out[i - 1]
    return out
