"""How two short factual statements relate: the same fact, a refinement, compatible, or a contradiction.

The embedding model decides which pairs are worth reading together (same topic: cosine at or above
:data:`TOPIC_GATE`, all-MiniLM-L6-v2); structure decides how they relate. Two statements are aligned word
by word (case, spelling variants, plural and third-person ``-s`` folded); what differs between the common
beginning and the common end is the *slot*. Then, in order:

- **negation**: one side negated ("does not like", "never", "no longer", "isn't"), and the rest equal:
  a contradiction;
- **antonyms**: the slot is a pair of opposites ("likes"/"dislikes", "enabled"/"disabled", "open"/"closed",
  a word and its un-/dis-/in-/non- form): a contradiction;
- **a little world knowledge**, read first and only on short, plainly worded statements of one subject: a
  thing and its stated absence ("is allergic to penicillin" / "has no allergies", "has no pets" / "has a
  dog"), a habit and having given it up ("drinks coffee every morning" / "quit coffee last month"), a status
  that rules out a job ("is retired" / "works at the bank"), a diet and a food it excludes ("is vegetarian"
  / "eats steak", "became a vegetarian" / "had a burger for lunch"), a medicine and taking none ("isn't on
  any medication" / "takes insulin daily"), a partner and being single, two states of a kind one is in one
  at a time ("I'm a morning person" / "I'm a night owl", "married" / "single"), two relations of one named
  person to the speaker ("Sarah is my sister" / "Sarah is my cousin"), two counts of one thing ("has one
  child" / "has two kids"), a bare denial of an act against doing it somewhere ("I can't drive" / "I
  drive to work") or, for driving, with a vehicle ("I drive a Tesla"), a habit denied and done with its own
  goods or in an amount ("I don't smoke" / "I smoke a pack a day", "I don't drink" / "I drink two glasses
  of wine a night"), "only X" against another X of its kind ("I only speak English" / "I speak fluent
  Spanish", "I only drink tea" / "I drink coffee"; not "I only eat fish on Fridays", which may say when),
  a place never been to and been to ("I've never been to Japan" / "I visited Japan last year"), a skill
  one can't do and doing it ("I can't cook" / "I cook for my family on Sundays"), an intolerance or a food
  allergy and having the food ("I'm lactose intolerant" / "I drink a glass of milk every morning", "I'm
  allergic to nuts" / "I eat almonds"), an allergy to a medicine and taking it ("I'm allergic to penicillin" /
  "I take penicillin every day"), no exercise and a kind of it done as a habit ("I never exercise" / "I go to
  the gym every day", "I run every morning"; not "I walk to work"), two jobs one has one of at a time ("I'm a
  nurse" / "I'm a software engineer") and having no car against driving one's own make of car ("I drive my
  Honda"): a
  contradiction. Small word lists (pets, children, siblings, partners, cars and vehicles, medicines,
  relatives, instruments, sports, meat, pork, beef, fish, dairy, dishes, drinks, tobacco, languages)
  stand in for the knowledge; a qualifier ("for
  Lent", "part-time", "meat substitutes", "a veggie burger"), the past ("used to", "was") or "again" leaves
  the pair to the rules below;
- **different subject**: the slot is before the relation (no verb in the common beginning): compatible;
- **different relation or tense**: the slot holds a verb ("worked at Acme until 2018" / "works at Globex"),
  or only one side speaks of the past ("until", "used to", "formerly"): compatible;
- **one side adds words**: a refinement (never merged, never a contradiction);
- **a different value of one attribute**: the slot is the value of the relation in the common beginning.
  Relations that hold many values at once (has, plays, speaks, likes, visited, is allergic to ...) are
  compatible unless the value is a count ("has two cats" / "has three cats"). Every other relation
  ("prefers", "uses", "lives in", "is at", "X's language is", "the version of X is") takes one value, so a
  different value is a contradiction. A bare "X is V" takes one value when V, on either side, is a name, a
  number, a date or a time (capitalised or with digits: "The database is PostgreSQL"), not when both are
  common adjectives or nouns ("Alice is tall" / "Alice is kind").
  Where one is from, lives, works or grew up ("I'm from Spain" / "I'm from Italy", "I live in Berlin" / "I
  live in Paris") takes one value when the two places can't hold together (two countries, two cities, a
  region and another country, a city and a country it is not in: "I'm from Lyon" / "I'm from Italy"), not a
  city and its country or region, nor a city and another region (a smaller town there may bear its name: "I
  live in Portland" / "I live in Maine") unless that region's name is a city too ("New York" / "Chicago"),
  nor a place of no list and a city ("I live in Kreuzberg" / "I live in
  Berlin": a district may lie in it). Values that give different sides of one thing ("is on Tuesday" / "is at
  3pm", "works as a nurse" / "works at the hospital") or hold for two occasions ("prefers tea in the
  morning" / "prefers coffee at work") are compatible.

No sentence templates: any statement that aligns with another is read the same way.
"""

from __future__ import annotations

import functools
import re
from dataclasses import asdict, dataclass
from importlib import resources
from typing import Any

from memdeck.core.graph.words import LANGUAGES

TOPIC_GATE = 0.5  # cosine (all-MiniLM-L6-v2) below which two statements are not compared at all
MAX_SLOT_WORDS = 6  # a longer differing stretch is a different statement, not a different value

CONTRADICTION = "contradiction"
SAME = "same"
REFINEMENT = "refinement"
COMPATIBLE = "compatible"
UNRELATED = "unrelated"


@dataclass(frozen=True)
class Relation:
    """How statement ``a`` relates to statement ``b``; ``attribute`` is their common beginning."""

    kind: str
    reason: str
    attribute: str = ""
    a_value: str = ""
    b_value: str = ""

    @property
    def contradicts(self) -> bool:
        return self.kind == CONTRADICTION

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


_SPELLING = {
    "favourite": "favorite",
    "colour": "color",
    "colours": "colors",
    "favourites": "favorites",
    "centre": "center",
    "metre": "meter",
    "metres": "meters",
    "organisation": "organization",
    "grey": "gray",
    "blonde": "blond",
    "theatre": "theater",
    "licence": "license",
    "analyse": "analyze",
}
_NEGATIONS = {"not", "no", "never", "none", "nobody", "nothing", "neither", "nor", "cannot", "without"}
_AUX = {"do", "does", "did", "doe"}
_PAST_MARKERS = {
    "until",
    "till",
    "formerly",
    "former",
    "previously",
    "ago",
    "anymore",
    "once",
    "used",
    "earlier",
}
_COPULA = {"is", "are", "was", "were", "am", "be", "been", "being", "'s"}
_DETERMINERS = {
    "a",
    "an",
    "the",
    "this",
    "that",
    "these",
    "those",
    "some",
    "any",
    "my",
    "our",
    "his",
    "her",
    "their",
    "its",
    "your",
}
_PREPOSITIONS = {
    "at",
    "on",
    "in",
    "to",
    "from",
    "for",
    "by",
    "with",
    "of",
    "as",
    "into",
    "onto",
    "via",
    "near",
}
# Relations that hold several values at once: a different value is one more value, not a conflict.
_MULTI = {
    "have",
    "has",
    "had",
    "own",
    "play",
    "like",
    "love",
    "enjoy",
    "speak",
    "know",
    "visit",
    "visited",
    "collect",
    "read",
    "watch",
    "eat",
    "drink",
    "study",
    "learn",
    "teach",
    "want",
    "need",
    "support",
    "allergic",
    "friend",
    "member",
    "include",
    "contain",
    "attend",
    "meet",
    "met",
    "write",
    "wrote",
    "listen",
    "follow",
    "adopt",
    "grow",
    "cook",
    "bake",
    "paint",
    "draw",
    "sing",
    "fan",
    "interested",
    "hate",
    "dislike",
    "also",
    "sometimes",
    "often",
    "fluent",
    "send",
    "notify",
    "integrate",
    "depend",
    "review",
    "owner",
    "contact",
}
# Verbs that are not in the relation lexicon but must still count as a verb of the sentence.
_VERBS = {
    "prefer",
    "use",
    "live",
    "work",
    "run",
    "default",
    "set",
    "host",
    "base",
    "born",
    "marry",
    "married",
    "locate",
    "call",
    "name",
    "start",
    "end",
    "begin",
    "open",
    "close",
    "cost",
    "weigh",
    "deploy",
    "store",
    "require",
    "expire",
    "due",
    "schedule",
    "move",
    "speak",
    "drive",
    "choose",
    "pick",
    "go",
    "come",
    "belong",
    "own",
    "report",
    "manage",
    "lead",
    "stay",
    "sleep",
    "wake",
    "take",
    "get",
    "pay",
    "charge",
    "written",
    "hosted",
    "based",
    "located",
    "scheduled",
    "configured",
    "stored",
    "made",
    "built",
    "named",
    "called",
    "owned",
    "managed",
    "led",
    "held",
    "served",
    "powered",
    "rely",
    "target",
    "keep",
    "leave",
    "arrive",
    "depart",
    "happen",
    "occur",
    "employ",
    "employed",
    "grew",
    "raised",
    "implement",
    "implemented",
    *_MULTI,
    *_COPULA,
    *_AUX,
    "will",
    "should",
    "would",
    "could",
    "shall",
}
_NOT_AFTER = _DETERMINERS | _PREPOSITIONS | {"'s", "and", "or"}
_ANTONYMS = [
    ("like", "dislike"),
    ("love", "hate"),
    ("like", "hate"),
    ("enable", "disable"),
    ("enabled", "disabled"),
    ("on", "off"),
    ("open", "closed"),
    ("open", "close"),
    ("true", "false"),
    ("yes", "no"),
    ("always", "never"),
    ("allow", "deny"),
    ("allowed", "denied"),
    ("allow", "forbid"),
    ("allowed", "forbidden"),
    ("allow", "block"),
    ("accept", "reject"),
    ("accepted", "rejected"),
    ("include", "exclude"),
    ("included", "excluded"),
    ("before", "after"),
    ("early", "late"),
    ("earlier", "later"),
    ("hot", "cold"),
    ("increase", "decrease"),
    ("up", "down"),
    ("good", "bad"),
    ("easy", "hard"),
    ("easy", "difficult"),
    ("public", "private"),
    ("online", "offline"),
    ("remote", "onsite"),
    ("remote", "office"),
    ("safe", "unsafe"),
    ("pass", "fail"),
    ("passed", "failed"),
    ("success", "failure"),
    ("win", "lose"),
    ("won", "lost"),
    ("start", "stop"),
    ("started", "stopped"),
    ("active", "inactive"),
    ("present", "absent"),
    ("alive", "dead"),
    ("more", "less"),
    ("most", "least"),
    ("maximum", "minimum"),
    ("max", "min"),
    ("high", "low"),
    ("higher", "lower"),
    ("fast", "slow"),
    ("faster", "slower"),
    ("cheap", "expensive"),
    ("light", "heavy"),
    ("light", "dark"),
    ("white", "black"),
    ("add", "remove"),
    ("added", "removed"),
    ("agree", "disagree"),
    ("approve", "reject"),
    ("approved", "rejected"),
    ("support", "oppose"),
    ("married", "single"),
    ("married", "divorced"),
    ("employed", "unemployed"),
    ("required", "optional"),
    ("mandatory", "optional"),
    ("sync", "async"),
    ("synchronous", "asynchronous"),
    ("inside", "outside"),
    ("internal", "external"),
    ("input", "output"),
    ("enable", "turn off"),
    ("happy", "sad"),
    ("asleep", "awake"),
    ("full", "empty"),
    ("new", "old"),
    ("left", "right"),
    ("north", "south"),
    ("east", "west"),
    ("import", "export"),
    ("win", "loss"),
    ("plus", "minus"),
    ("positive", "negative"),
    ("compatible", "incompatible"),
    ("present", "past"),
    ("visible", "hidden"),
    ("show", "hide"),
    ("shown", "hidden"),
    ("lock", "unlock"),
    ("locked", "unlocked"),
    ("encrypted", "plaintext"),
    ("encrypted", "unencrypted"),
    ("signed", "unsigned"),
    ("vegan", "carnivore"),
]
_ANTONYM_PAIRS = {frozenset(p) for p in _ANTONYMS}
_NEG_PREFIXES = ("un", "dis", "in", "im", "il", "ir", "non", "non-", "de")
_NUMBER_WORDS = {
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "twenty",
    "thirty",
    "forty",
    "fifty",
    "hundred",
    "thousand",
    "million",
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "several",
    "many",
    "few",
    "no",
    "single",
    "both",
}
_MONTH_NAMES = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_TYPED_WORDS = {
    *_MONTH_NAMES,
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "am",
    "pm",
    "noon",
    "midnight",
    "morning",
    "afternoon",
    "evening",
    "night",
    "today",
    "tomorrow",
    "yesterday",
    "weekend",
    "weekday",
    "daily",
    "weekly",
    "monthly",
    "yearly",
    "annually",
    "hourly",
}
_TOKEN = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?(?:[.:/\-][a-z0-9]+)*")


def tokens(text: str) -> list[str]:
    """Lower-case words; "2.0", "3:30", "v1.2.3", "555-1234" stay one token; British spellings folded;
    words that only say the fact holds today dropped and a few ways of saying one relation folded into one
    (see :func:`_fold`). Read once per text (a consolidation compares each fact with many others); the list
    is the caller's own."""
    return list(_tokens(text))


@functools.lru_cache(maxsize=4096)
def _tokens(text: str) -> tuple[str, ...]:
    words = _TOKEN.findall(text.lower().replace("’", "'"))
    out: list[str] = []
    for w in words:
        if w.endswith("'s") and len(w) > 2:
            out += [_SPELLING.get(w[:-2], w[:-2]), "'s"]
        else:
            out.append(_SPELLING.get(w, w))
    return tuple(_fold(out))


# Words that say a statement holds today add nothing to it: "works at Globex now" states "works at Globex".
_TODAY_WORDS = {"now", "currently", "nowadays", "presently"}
_TODAY_PHRASES = (("these", "days"), ("at", "the", "moment"), ("at", "present"), ("right", "now"))
# One relation said several ways: (words, what they become). Only the words themselves are replaced.
_FOLDS = (
    (("works", "for"), ("works", "at")),
    (("work", "for"), ("work", "at")),
    (("working", "for"), ("working", "at")),
    (("is", "employed", "by"), ("works", "at")),
    (("is", "employed", "at"), ("works", "at")),
    (("am", "employed", "by"), ("work", "at")),
    (("am", "employed", "at"), ("work", "at")),
    # where someone lives: a move states the new place ("moved to Lisbon" / "lives in Berlin")
    (("has", "moved", "to"), ("lives", "in")),
    (("have", "moved", "to"), ("live", "in")),
    (("moved", "to"), ("lives", "in")),
    (("relocated", "to"), ("lives", "in")),
    (("resides", "in"), ("lives", "in")),
    (("reside", "in"), ("live", "in")),
    (("is", "based", "in"), ("lives", "in")),
    (("am", "based", "in"), ("live", "in")),
    # a name: "the dog is called Rocky" / "the dog's name is Max"
    (("is", "called"), ("'s", "name", "is")),
    (("is", "named"), ("'s", "name", "is")),
)


def _fold(words: list[str]) -> list[str]:
    # First the words that only say "today" go, then the ways of saying one relation become one.
    kept: list[str] = []
    i = 0
    while i < len(words):
        phrase = next((p for p in _TODAY_PHRASES if tuple(words[i : i + len(p)]) == p), None)
        if phrase is not None and len(words) > len(phrase):
            i += len(phrase)
            continue
        if words[i] in _TODAY_WORDS and len(words) > 1:
            i += 1
            continue
        kept.append(words[i])
        i += 1
    out: list[str] = []
    i = 0
    while i < len(kept):
        fold = next((f for f in _FOLDS if tuple(kept[i : i + len(f[0])]) == f[0]), None)
        if fold is not None:
            out.extend(fold[1])
            i += len(fold[0])
            continue
        out.append(kept[i])
        i += 1
    return out


def lemma(word: str) -> str:
    """A crude stem: plural and third-person ``-s`` removed ("likes" -> "like", "cities" -> "city")."""
    if word in _NEG_CONTRACTIONS:
        return "not"
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if word in _NUMBER_VALUES:
        return _NUMBER_VALUES[word]
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("ches", "shes", "sses", "xes", "zes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is", "'s")):
        return word[:-1]
    return word


_IRREGULAR = {"has": "have", "does": "do", "goes": "go"}
_UNITS = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
_TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_NUMBER_VALUES = {w: str(i) for i, w in enumerate(_UNITS)}
for _t, _tw in enumerate(_TENS):
    if _tw:
        _NUMBER_VALUES[_tw] = str(_t * 10)
        for _u in range(1, 10):
            _NUMBER_VALUES[f"{_tw}-{_UNITS[_u]}"] = str(_t * 10 + _u)

_NEG_CONTRACTIONS = {
    "isn't",
    "aren't",
    "wasn't",
    "weren't",
    "doesn't",
    "don't",
    "didn't",
    "can't",
    "won't",
    "hasn't",
    "haven't",
    "shouldn't",
    "wouldn't",
    "couldn't",
    "isnt",
    "doesnt",
    "dont",
    "didnt",
}
_CONTRACTION_BASE = {
    "isn't": "is",
    "aren't": "are",
    "wasn't": "was",
    "weren't": "were",
    "hasn't": "has",
    "haven't": "have",
    "can't": "can",
    "won't": "will",
    "shouldn't": "should",
    "wouldn't": "would",
    "couldn't": "could",
    "isnt": "is",
}


# Words that open a statement's "when" or "how" ("every morning", "at night", "with milk"), not a new object.
_WHEN_OR_HOW = frozenset(
    {
        "every",
        "each",
        "daily",
        "weekly",
        "at",
        "on",
        "in",
        "before",
        "after",
        "during",
        "with",
        "twice",
        "once",
    }
    | {"sometimes", "often", "usually", "always", "again", "occasionally", "most", "all"}
)


def _when_or_how(word: str) -> bool:
    """A word that opens a statement's when or how: one of ``_WHEN_OR_HOW`` or an adverb of manner or
    frequency ("fluently", "regularly")."""
    return word in _WHEN_OR_HOW or (len(word) > 4 and word.endswith("ly"))


def _negation_free(words: list[str]) -> tuple[bool, list[str]]:
    """(negated?, the words with every negation and do-support removed)."""
    negated = False
    out: list[str] = []
    skip_next = False
    for i, w in enumerate(words):
        if skip_next:
            skip_next = False
            continue
        if w in _NEG_CONTRACTIONS or w.endswith("n't"):
            negated = True
            base = _CONTRACTION_BASE.get(w)
            if base:
                out.append(base)
            continue
        if w in _NEGATIONS:
            negated = True
            if w == "no" and i + 1 < len(words) and words[i + 1] in {"longer", "more"}:
                skip_next = True
            continue
        if w in _AUX or w == "always":
            continue
        out.append(w)
    if negated:
        # "doesn't live in Paris anymore" denies "lives in Paris" today, as "no longer" does
        out = [w for w in out if w != "anymore"]
        if out[-2:] in (["any", "longer"], ["any", "more"]):
            out = out[:-2]
    return negated, out


def base(word: str) -> str:
    """``lemma`` with ``-ing`` and ``-ed`` removed too ("learning" -> "learn", "hosted" -> "host")."""
    w = lemma(word)
    if len(w) > 5 and w.endswith("ing"):
        return w[:-3]
    if len(w) > 4 and w.endswith("ed"):
        return w[:-2] if w[-3] != "e" else w[:-1]
    return w


def _is_verb(word: str) -> bool:
    return word in _VERBS or lemma(word) in _VERBS or base(word) in _VERBS


def _verb_positions(words: list[str]) -> list[int]:
    """Where the verbs are: known verbs, and an ``-s``/``-ed`` word right after a noun ("the service times out")."""
    found: list[int] = []
    for i, w in enumerate(words):
        if _is_verb(w) or (
            i >= 1
            and words[i - 1] not in _NOT_AFTER
            and len(w) > 3
            and ((w.endswith("s") and not w.endswith(("ss", "us", "is"))) or w.endswith("ed"))
            and not found
        ):
            found.append(i)
    return found


def _multi(word: str) -> bool:
    return word in _MULTI or lemma(word) in _MULTI or base(word) in _MULTI


# States of which a subject is in one at a time ("is married to Tom" / "is single"): after "is" / "I'm", a
# value that opens with another state of the same group is a contradiction ("the vegan menu" is no state).
_EXCLUSIVE_STATES = (
    frozenset({"single", "married", "divorced", "widowed", "engaged", "separated"}),
    frozenset({"alive", "dead", "deceased"}),
    frozenset({"vegan", "vegetarian", "pescatarian"}),
    frozenset({"employed", "unemployed", "retired"}),
    frozenset({"left-handed", "right-handed", "ambidextrous"}),
    # when one is at one's best ("I'm a morning person" / "I'm a night owl"), and which way one turns
    frozenset({"morning person", "night owl"}),
    frozenset({"introvert", "extrovert", "ambivert"}),
    # a thing's colour ("the car is red" / "the car is blue"); two colours said together refine one
    frozenset(
        {
            "red",
            "blue",
            "green",
            "yellow",
            "black",
            "white",
            "gray",
            "silver",
            "orange",
            "purple",
            "pink",
        }
        | {"brown", "beige", "navy", "maroon", "turquoise", "teal", "gold", "blond"}
    ),
)


_SUBJECT_COPULA = frozenset({"i'm", "you're", "we're", "they're", "he's", "she's", "it's"})


# One state said several ways ("an early bird" is a morning person, "introverted" an introvert).
_STATE_FORMS = {
    "early bird": "morning person",
    "early riser": "morning person",
    "night person": "night owl",
    "evening person": "night owl",
    "introverted": "introvert",
    "extroverted": "extrovert",
    "extravert": "extrovert",
    "extraverted": "extrovert",
    "pescetarian": "pescatarian",
}


def _exclusive(a: str, b: str) -> bool:
    """Two different states of one group ("married" / "single")."""
    a, b = _STATE_FORMS.get(a, a), _STATE_FORMS.get(b, b)
    return a != b and any(a in group and b in group for group in _EXCLUSIVE_STATES)


def _antonyms(a: list[str], b: list[str]) -> bool:
    x, y = " ".join(a), " ".join(b)
    if frozenset((x, y)) in _ANTONYM_PAIRS:
        return True
    if len(a) == 1 and len(b) == 1:
        short, long_ = sorted((x, y), key=len)
        for p in _NEG_PREFIXES:
            if long_ == p + short and len(short) >= 3:
                return True
    return False


def _typed(words: list[str], capitalised: set[str]) -> bool:
    """A value that is a name, a number, a date, a time or a version rather than a common word."""
    return any(
        any(ch.isdigit() for ch in w) or w in _NUMBER_WORDS or w in _TYPED_WORDS or w in capitalised
        for w in words
    )


def _capitalised(text: str) -> set[str]:
    """Words written with a capital other than at the start of the sentence (names, products)."""
    raw = re.findall(r"[A-Za-z][A-Za-z0-9]*", text)
    return {lemma(_SPELLING.get(w.lower(), w.lower())) for w in raw[1:] if w[:1].isupper()}


def _count(words: list[str]) -> bool:
    return bool(words) and (words[0].isdigit() or words[0] in _NUMBER_WORDS)


# Statements whose conflict takes a little world knowledge: a stated thing and its stated absence ("is allergic
# to penicillin" / "has no allergies"), a habit and having given it up ("drinks coffee every morning" / "quit
# coffee"), a status that rules out a job ("is retired" / "works at the bank"), a diet and a food it excludes
# ("is vegetarian" / "eats steak"). Each statement is read as subject + what it says, and only a short, plain
# shape is read at all: anything that says more (a qualifier, a time of day, a second clause) is left alone.
_CLAUSE_CONTRACTIONS = {
    "i'm": ("i", "am"),
    "you're": ("you", "are"),
    "we're": ("we", "are"),
    "they're": ("they", "are"),
    "he's": ("he", "is"),
    "she's": ("she", "is"),
    "it's": ("it", "is"),
    "i've": ("i", "have"),
    "you've": ("you", "have"),
    "we've": ("we", "have"),
    "they've": ("they", "have"),
}
_HAVE_NOW = {"have", "has", "own", "owns"}
_HAVE_ANY = _HAVE_NOW | {"had"}
_MODALS = {"will", "would", "can", "could", "should", "might", "must", "shall"}
# Verbs that open a plainly stated habit; only these are read as "does X" against "quit X".
_HABIT_VERBS = {
    "drink",
    "eat",
    "smoke",
    "vape",
    "use",
    "play",
    "take",
    "go",
    "attend",
    "watch",
    "read",
    "practice",
    "practise",
    "run",
    "swim",
    "ride",
    "wear",
    "do",
}
# Skills one has or has not ("I can't cook" / "I cook for my family on Sundays"): acts whose verb keeps its
# sense with whatever object it takes, so that doing one at all says one can.
_SKILLS = {"cook", "bake", "swim", "dance", "ski", "skate", "surf", "knit", "sew", "ride", "type", "dive"}
_SKILLS |= {"draw", "paint", "juggle", "crochet", "snowboard", "sail", "skateboard"}
_QUIT_WORDS = {"quit", "stopped", "gave", "given"}
_STATUS_WORDS = {"retired", "unemployed", "jobless"}
_DIETS = {"vegetarian", "vegan", "pescatarian", "pescetarian"}
# Verbs that state a change whose result holds today ("became a vegetarian", "went vegan").
_CHANGE_VERBS = {"became", "become", "went", "turned"}
_OTHER_VERBS = {
    "used",
    "want",
    "wants",
    "tried",
    "try",
    "tries",
    "plan",
    "plans",
    "hope",
    "going",
    "got",
    "get",
}
_CLAUSE_VERBS = (
    _COPULA
    | _HAVE_ANY
    | _AUX
    | _MODALS
    | _NEGATIONS
    | _QUIT_WORDS
    | _OTHER_VERBS
    | {"work", "retired", "sold", "drive", "ate", "drank", "speak", "visited", "lift", "hit", "jog"}
    | _HABIT_VERBS
    | _CHANGE_VERBS
    | _SKILLS
)


def _clause_verb(word: str) -> bool:
    return word in _CLAUSE_VERBS or lemma(word) in _CLAUSE_VERBS or word in _NEG_CONTRACTIONS


_PARTICIPLES = {"quit", "stopped", "given", "retired", "had", "become", "gone", "turned"}
_IS_NOW = {"is", "are", "am"}  # "was vegetarian" / "eats steak": one may have followed the other
# Words that may stand before a noun without making it another thing ("an older brother", "two black cats").
_NP_MODIFIERS = frozenset(
    {"a", "an", "the", "some", "several", "many", "any", "my", "his", "her", "their", "our", "your"}
    | {"little", "big", "small", "young", "younger", "youngest", "old", "older", "oldest", "elder", "eldest"}
    | {"baby", "new", "newborn", "adopted", "rescue", "rescued", "twin", "teenage", "adult", "grown"}
    | {"cute", "lovely", "sweet", "lazy", "fat", "fluffy", "stray", "pet", "beautiful", "wonderful"}
    | {"lot", "lots", "of", "plenty", "grilled", "fried", "roast", "roasted", "raw", "smoked", "fresh"}
    | {"own"}  # "my own car"
)
# Things a subject has none of, and what counts as one ("has no pets" / "has a dog").
_CATEGORIES: dict[str, tuple[str, frozenset[str]]] = {
    "pet": (
        "have",
        frozenset({"pet", "dog", "cat", "puppy", "kitten", "hamster", "rabbit", "bunny", "parrot"})
        | {"budgie", "canary", "goldfish", "turtle", "tortoise", "snake", "lizard", "gecko", "ferret"}
        | {"gerbil", "chinchilla", "hedgehog", "cockatiel", "iguana"},
    ),
    "child": ("have", frozenset({"child", "children", "kid", "son", "daughter", "baby", "toddler"})),
    "sibling": ("have", frozenset({"sibling", "brother", "sister", "half-brother", "half-sister"})),
    "instrument": (
        "play",
        frozenset({"instrument", "piano", "guitar", "violin", "viola", "cello", "drum"})
        | {"flute", "clarinet", "saxophone", "sax", "trumpet", "trombone", "harp", "ukulele"}
        | {"banjo", "organ", "harmonica", "accordion", "mandolin", "oboe", "bass"},
    ),
    "sport": (
        "play",
        frozenset({"sport", "tennis", "football", "soccer", "basketball", "baseball", "golf"})
        | {"hockey", "volleyball", "rugby", "cricket", "badminton", "squash", "handball"},
    ),
    # "is single" / "has a girlfriend"
    "partner": (
        "have",
        frozenset({"partner", "girlfriend", "boyfriend", "wife", "husband", "spouse", "fiance", "fiancee"}),
    ),
    "car": ("have", frozenset({"car", "vehicle", "truck", "van", "suv", "motorbike", "motorcycle"})),
    # taken, or "is on" ("isn't on any medication" / "takes insulin daily"): common medicines and classes
    "medication": (
        "take",
        frozenset({"medication", "medicine", "med", "insulin", "metformin", "statin", "antidepressant"})
        | {"antibiotic", "warfarin", "aspirin", "ibuprofen", "paracetamol", "acetaminophen", "steroid"}
        | {"prednisone", "levothyroxine", "lithium", "sertraline", "fluoxetine", "prozac", "zoloft"}
        | {"lisinopril", "antihistamine", "painkiller", "methotrexate", "adderall", "ritalin", "xanax"}
        | {"penicillin", "amoxicillin", "codeine", "morphine", "tramadol", "naproxen", "doxycycline"}
        | {"erythromycin", "tetracycline", "cephalexin", "azithromycin", "clopidogrel", "heparin"},
    ),
}
_CATEGORY_NAMES = {"pet": "pet", "child": "child", "children": "child", "kid": "child", "sibling": "sibling"}
_CATEGORY_NAMES |= {"instrument": "instrument", "sport": "sport", "allergy": "allergy"}
_CATEGORY_NAMES |= {"partner": "partner", "car": "car", "vehicle": "car"}
_CATEGORY_NAMES |= {"medication": "medication", "medicine": "medication", "med": "medication"}
_MEDICINES = _CATEGORIES["medication"][1]
# Foods a diet excludes: small lists of everyday words, not a food ontology.
_MEAT = frozenset(
    {"meat", "beef", "pork", "chicken", "lamb", "mutton", "veal", "venison", "steak", "bacon", "ham"}
    | {"sausage", "salami", "pepperoni", "turkey", "duck", "prosciutto", "chorizo", "meatball", "brisket"}
    | {"burger", "hamburger", "cheeseburger", "nugget", "kebab", "meatloaf", "hotdog"}  # dishes of meat
)
_FISH = frozenset(
    {"fish", "salmon", "tuna", "cod", "trout", "sardine", "anchovy", "seafood", "shellfish", "shrimp"}
    | {"prawn", "crab", "lobster", "oyster", "mussel", "clam", "squid", "octopus", "sushi", "sashimi"}
)
# Dishes named after what is in them ("a bacon sandwich", "pepperoni pizza", "chicken curry").
_DISHES = frozenset(
    {"sandwich", "pizza", "burger", "sub", "wrap", "stew", "curry", "taco", "burrito", "pie", "soup"}
    | {"salad", "roll", "pasta", "lasagna", "lasagne", "noodle", "kebab", "sushi", "casserole", "skewer"}
)
_MEALS = {"breakfast", "lunch", "dinner", "supper", "brunch"}
# What is named after the food it is made of ("peanut butter", "almond milk"): it stands for that food only.
_SPREADS = frozenset({"butter", "milk", "oil", "flour", "paste", "cookie", "bar", "sauce"})
# What food and drink are measured in ("two glasses of wine", "a pack of cigarettes").
_FOOD_UNITS = frozenset({"glass", "cup", "mug", "pint", "bottle", "can", "shot", "pack", "packet", "carton"})
_FOOD_UNITS |= {"bowl", "slice", "piece", "plate", "serving", "portion", "bar", "box", "jar", "pot", "bag"}
_DAIRY = frozenset({"cheese", "milk", "butter", "yogurt", "yoghurt", "cream", "dairy"})
_EGG = frozenset({"egg"})
_DIET_EXCLUDES = {
    "vegetarian": _MEAT | _FISH,
    "vegan": _MEAT | _FISH | _DAIRY | _EGG | {"honey"},
    "pescatarian": _MEAT,
    "pescetarian": _MEAT,
}
_COLORS = next(group for group in _EXCLUSIVE_STATES if "red" in group)
_ALCOHOL = frozenset(
    {
        "alcohol",
        "wine",
        "beer",
        "whisky",
        "whiskey",
        "vodka",
        "gin",
        "rum",
        "tequila",
        "cocktail",
        "champagne",
    }
    | {"cider", "sake", "prosecco", "bourbon", "brandy", "liquor", "booze", "ale", "lager", "stout"}
    | {"pint"}  # "drinks a pint every night"
)
_CAFFEINE = frozenset({"caffeine", "coffee", "espresso", "latte", "cappuccino", "americano"})
# Meats some do not eat of all meat ("I don't eat pork" / "I had a ham sandwich for lunch").
_PORK = frozenset({"pork", "ham", "bacon", "sausage", "salami", "prosciutto", "chorizo", "pepperoni"})
_BEEF = frozenset({"beef", "steak", "veal", "brisket", "burger", "hamburger", "cheeseburger"})
_TOBACCO = frozenset({"tobacco", "cigarette", "cigar", "cigarillo", "cig"})
_FOOD_GROUPS = {
    "pork": _PORK,
    "beef": _BEEF,
    "meat": _MEAT,
    "fish": _FISH,
    "seafood": _FISH,
    "dairy": _DAIRY,
    "egg": _EGG,
    "alcohol": _ALCOHOL,
    "booze": _ALCOHOL,
    "caffeine": _CAFFEINE,
}
_KNOWN_FOODS = _MEAT | _FISH | _DAIRY | _EGG | _ALCOHOL | _CAFFEINE | {"tea", "juice", "soda"}
# A job that is not one ("works at home", "works as a volunteer").
_NOT_A_JOB = {
    "home",
    "night",
    "weekend",
    "volunteer",
    "part-time",
    "part",
    "hobby",
    "least",
    "full",
    "capacity",
}


@dataclass(frozen=True)
class _Clause:
    subject: tuple[str, ...]
    negated: bool
    rest: tuple[str, ...]  # what follows the subject, without negations and do-support
    past: bool  # "used to", "until", ...: not today's state
    again: bool
    only: bool = False  # "I only speak English", "I drink only tea", "I eat fish only"


@functools.lru_cache(maxsize=4096)
def _clause_words(text: str) -> tuple[str, ...]:
    """The words of a statement with its subject and verb written out ("I'm" as "I am", "she's got" as "she
    has"); kept per text, as :func:`_clause` is."""
    words: list[str] = []
    raw = tokens(text)
    for i, w in enumerate(raw):
        nxt = raw[i + 1] if i + 1 < len(raw) else ""
        if w in _CLAUSE_CONTRACTIONS:
            words.extend(_CLAUSE_CONTRACTIONS[w])
        elif w == "'s" and nxt in {"got", "been"}:
            words.append("has")
        elif w == "'s" and nxt in {"a", "an", "not", "never", "allergic"} | _STATUS_WORDS | _DIETS:
            words.append("is")
        else:
            words.append(w)
    return tuple(words)


@functools.lru_cache(maxsize=4096)
def _clause(text: str) -> _Clause | None:
    """Subject and the rest of a short statement, or None when it does not open with a known verb. Kept per
    text (a consolidation compares each fact with many others, reading both sides each time)."""
    words = list(_clause_words(text))
    at = next((i for i, w in enumerate(words) if _clause_verb(w)), None)
    if at is None or not 1 <= at <= 4 or {"and", "or"} & set(words[:at]):
        return None
    only = at >= 2 and words[at - 1] == "only"  # "I only speak English": the subject is "I"
    subject = words[: at - 1] if only else words[:at]
    negated = False
    rest: list[str] = []
    body = words[at:]
    i = 0
    while i < len(body):
        w = body[i]
        if w in _NEG_CONTRACTIONS or w.endswith("n't"):
            negated = True
            if w in _CONTRACTION_BASE:
                rest.append(_CONTRACTION_BASE[w])
        elif w in _NEGATIONS:
            negated = True
            if w == "no" and i + 1 < len(body) and body[i + 1] in {"longer", "more"}:
                i += 1
        elif w == "any" and body[i + 1 : i + 2] in (["longer"], ["more"]) and i + 2 == len(body):
            break
        elif w == "anymore" or w in _AUX or (w == "got" and rest and rest[-1] in _HAVE_ANY):
            pass  # "anymore" as "no longer"; do-support; "has got" as "has"
        elif w == "only" and (
            (len(rest) == 1 and rest[0] not in _COPULA) or (i == len(body) - 1 and len(rest) >= 2)
        ):
            only = True  # "I drink only tea", "I eat fish only" (not "I'm an only child")
        else:
            rest.append(w)
        i += 1
    # perfect aspect: "has quit", "have stopped", "has given up", "has never had"
    if len(rest) > 1 and rest[0] in _HAVE_ANY and rest[1] in _PARTICIPLES:
        rest = rest[1:]
    # "once a week" is a habit, not the past
    dated = [
        w for i, w in enumerate(words) if not (w == "once" and words[i + 1 : i + 2] in (["a"], ["every"]))
    ]
    return _Clause(
        tuple(lemma(w) for w in subject), negated, tuple(rest), _past(dated), "again" in words, only
    )


def _time_tail(tail: list[str]) -> bool:
    """Nothing, or only when it happened ("last month", "in 2019", "two years ago", "for good")."""
    if not tail:
        return True
    if len(tail) == 1:
        return tail[0] in {
            "already",
            "recently",
            "yesterday",
            "completely",
            "altogether",
            "entirely",
            "today",
        }
    if tail[0] in {"last", "this"} and len(tail) == 2:
        return True
    if tail[-1] == "ago" and len(tail) <= 4:
        return True
    if tail[0] == "since" and len(tail) <= 4:
        return True
    if tail[0] == "in" and 2 <= len(tail) <= 3:
        return all(any(c.isdigit() for c in w) or w in _TYPED_WORDS for w in tail[1:])
    return tail in (["for", "good"], ["at", "all"])


def _before_time(words: list[str], start: int = 0) -> int:
    """Where the words from ``start`` on stop saying what and start saying when ("quit coffee | last month");
    their length when they never do."""
    return next((i for i in range(start, len(words) + 1) if _time_tail(words[i:])), len(words))


def _bare(words: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """The lemmas of a noun phrase without its determiners and possessives."""
    return tuple(lemma(w) for w in words if w not in _DETERMINERS)


def _noun_phrase(words: tuple[str, ...], loose: bool = False) -> tuple[str, tuple[str, ...]] | None:
    """(head, the words after the phrase) of a plain noun phrase ("an older brother named Ken"), or None when
    a word before the head may make it another thing ("a dog walker", "vegan cheese"). ``loose``: any word
    may stand before the head ("a peanut allergy")."""
    stop = next(
        (
            i
            for i, w in enumerate(words)
            if _when_or_how(w)
            or w in {"for", "named", "called", "and", "who", "that"}
            or (i and w in {"a", "per"} and words[i + 1 : i + 2] and lemma(words[i + 1]) in _RATES)
        ),
        len(words),
    )
    phrase, tail = words[:stop], words[stop:]
    if not phrase:
        return None
    mods = phrase[:-1]
    if not loose and not all(
        w in _NP_MODIFIERS or w in _NUMBER_WORDS or w in _COLORS or w.isdigit() or w.endswith("-old")
        for w in mods
    ):
        return None
    return lemma(phrase[-1]), tail


_RATES = {"day", "night", "week", "month", "year", "weekend"}  # "a pack a day"


def _absence(c: _Clause) -> str | None:
    """The category a statement says the subject has none of ("has no pets", "isn't allergic to anything",
    "is an only child")."""
    r = list(c.rest)
    if not c.negated:
        if r[:1] and r[0] in _IS_NOW and r[1:] in (["an", "only", "child"], ["only", "child"]):
            return "sibling"
        return "partner" if r[:1] and r[0] in _IS_NOW and _time_tail(r[2:]) and r[1:2] == ["single"] else None
    if (
        r[:1]
        and r[0] in _IS_NOW
        and r[1:3] == ["allergic", "to"]
        and r[3:] in (["anything"], ["anything", "at", "all"])
    ):
        return "allergy"
    verb, body = _category_verb(r, _HAVE_ANY)
    if verb is None:
        return None
    while body and body[0] in {"any", "a", "an", "known"}:
        body = body[1:]
    if not body or not (body[1:] == [] or body[1:] in (["yet"], ["at", "all"])):
        return None
    category = _CATEGORY_NAMES.get(lemma(body[0]))
    if category is None or (category != "allergy" and _CATEGORIES[category][0] != verb):
        return None
    if category == "allergy" and verb != "have":
        return None
    return category


def _category_verb(r: list[str], have: set[str]) -> tuple[str | None, list[str]]:
    """The verb a category's member is had with ("has" a dog, "plays" the piano, "takes" or "is on" a
    medicine) and the words after it; (None, []) for any other verb."""
    if r[0] in have:
        return "have", r[1:]
    if lemma(r[0]) in {"play", "take"}:
        return lemma(r[0]), r[1:]
    if r[0] in _IS_NOW and r[1:2] in (["on"], ["taking"]):
        return "take", r[2:]
    return None, []


def _presence(c: _Clause) -> set[str]:
    """The categories a present-tense statement says the subject has one of ("has two cats", "plays the
    piano", "is allergic to penicillin", "has a peanut allergy", "takes insulin", "drives my car")."""
    r = list(c.rest)
    if c.negated or c.past or not r:
        return set()
    if (
        r[0] in _IS_NOW
        and r[1:3] == ["allergic", "to"]
        and len(r) > 3
        and r[3] not in {"anything", "nothing"}
    ):
        return {"allergy"}
    if r[0] in _IS_NOW and r[1:4] == ["in", "a", "relationship"] and _time_tail(r[4:]):
        return {"partner"}  # "I'm in a relationship" / "I'm single"
    if lemma(r[0]) == "drive" and r[1:2] in (["my"], ["our"]):  # "drives my Honda", "my car to work": has one
        prep = next((i for i, w in enumerate(r) if i > 1 and w in _PREPOSITIONS), None)
        make = _noun_phrase(tuple(r[1 : _before_time(r, 1) if prep is None else prep]))
        if make is not None and make[0] in _CAR_MAKES and (not make[1] or _when_or_how(make[1][0])):
            return {"car"}
        np = _noun_phrase(tuple(r[1 : len(r) if prep is None else prep]))
        return {"car"} if np and np[0] in _CATEGORIES["car"][1] else set()
    verb, body = _category_verb(r, _HAVE_NOW)
    if verb is None:
        return set()
    np = _noun_phrase(tuple(body))
    if np is None:
        loose = _noun_phrase(tuple(body), loose=True)
        return {"allergy"} if verb == "have" and loose and loose[0] == "allergy" else set()
    head, tail = np
    if tail[:3] == ("on", "the", "way"):  # "has a baby on the way": not yet
        return set()
    if verb == "have" and tail[:1] and tail[0] in {"in", "at", "from"}:  # "two kids in my class": pupils
        return set()
    if verb == "have" and head == "allergy":
        return {"allergy"}
    return {name for name, (v, members) in _CATEGORIES.items() if v == verb and head in members}


def _gerund_of(gerund: str, verb: str) -> bool:
    """ "smoking" is the -ing form of "smoke", "running" of "run"."""
    if not gerund.endswith("ing") or len(gerund) < 5:
        return False
    stem = gerund[:-3]
    return verb in {stem, stem + "e"} or (len(stem) > 2 and stem[-1] == stem[-2] and verb == stem[:-1])


def _quitting(c: _Clause) -> tuple[str, tuple[str, ...]] | None:
    """(the -ing form or "", the object) of "quit coffee last month", "gave up smoking", "stopped playing
    tennis"; None for anything that says more than when it happened."""
    r = list(c.rest)
    if c.negated or not r or r[0] not in _QUIT_WORDS:
        return None
    body = r[1:]
    if r[0] in {"gave", "given"}:
        if body[:1] != ["up"]:
            return None
        body = body[2:] if body[1:2] == ["on"] else body[1:]
    gerund = ""
    if body and body[0].endswith("ing") and len(body[0]) > 4:
        gerund, body = body[0], body[1:]
    obj = body[: _before_time(body)]
    if (not gerund and not obj) or (obj and obj[0] in _PREPOSITIONS and not gerund):
        return None
    return gerund, tuple(obj)


def _habit(c: _Clause) -> tuple[str, tuple[str, ...]] | None:
    """(verb, object) of a plainly stated present habit ("drinks coffee every morning")."""
    r = c.rest
    if c.negated or c.past or c.again or not r or lemma(r[0]) not in _HABIT_VERBS:
        return None
    stop = next((i for i in range(1, len(r)) if _when_or_how(r[i]) or _how_often(r[i:])), len(r))
    return lemma(r[0]), tuple(r[1:stop])


def _how_often(words: tuple[str, ...]) -> bool:
    """ "three times a week", "2 days a week"."""
    return (
        len(words) >= 2
        and (words[0] in _NUMBER_WORDS or words[0].isdigit())
        and words[1] in {"time", "times", "day", "days", "night", "nights"}
    )


def _quit_conflict(q: _Clause, h: _Clause) -> bool:
    quit_, habit, job = _quitting(q), _habit(h), _job(h)
    if quit_ is not None and job is not None and job[0] == "at":
        # "quit his job at the bank", "stopped working at the bank" / "works at the bank"
        gerund, obj = quit_[0], _bare(quit_[1])
        if (gerund == "working" and obj[:1] == ("at",)) or (not gerund and obj[:2] == ("job", "at")):
            return obj[obj.index("at") + 1 :] == job[1]
    if quit_ is None or habit is None:
        return False
    (gerund, q_obj), (verb, h_obj) = quit_, habit
    if gerund:
        return _gerund_of(gerund, verb) and _bare(q_obj) == _bare(h_obj)
    if verb == "go" and h_obj[:1] == ("to",):
        h_obj = h_obj[1:]
    return bool(q_obj) and _bare(q_obj) == _bare(h_obj)


def _status(c: _Clause) -> tuple[str, ...] | None:
    """What a statement that the subject is retired or out of work says it left (``()`` when it does not
    say); None for any other statement."""
    r = list(c.rest)
    if c.negated or c.past or not r:
        return None
    if r[0] in _IS_NOW and r[1:2] and r[1] in _STATUS_WORDS:
        body = r[2:]
    elif r[0] == "retired":
        body = r[1:]
    else:
        return None
    left: tuple[str, ...] = ()
    if body[:1] == ["from"]:
        stop = _before_time(body, 1)
        left, body = _bare(body[1:stop]), body[stop:]
        if not left:
            return None
    return left if _time_tail(body) else None


def _job(c: _Clause) -> tuple[str, tuple[str, ...]] | None:
    """("at" or "as", where or what) of a plain present job ("works at the bank", "works as a nurse")."""
    r = list(c.rest)
    if c.negated or c.past or c.again or not r:
        return None
    if r[0] in _IS_NOW and r[1:2] == ["working"]:
        r = r[1:]
    if lemma(r[0]) not in {"work", "working"} or len(r) < 3 or r[1] not in {"at", "as"}:
        return None
    obj = r[2:]
    if len(obj) > 5 or any(_when_or_how(w) or w in _NOT_A_JOB or w in _TYPED_WORDS for w in obj):
        return None
    return r[1], _bare(obj)


def _status_conflict(s: _Clause, w: _Clause) -> bool:
    left, job = _status(s), _job(w)
    if left is None or job is None:
        return False
    return not left or (job[0] == "at" and job[1] == left)


def _diet(c: _Clause) -> frozenset[str] | None:
    """The foods a statement says the subject does not eat ("is vegetarian", "doesn't eat meat", "gave up
    dairy", "is lactose intolerant", "is allergic to peanuts", "quit drinking")."""
    r = list(c.rest)
    if c.past or not r:
        return None
    if (can_not := _cannot_have(c)) is not None:
        return can_not
    if not c.negated and (r[0] in _IS_NOW or r[0] in _CHANGE_VERBS):  # "became a vegetarian": one today
        body = r[2:] if r[1:2] in (["a"], ["an"]) else r[1:]
        if body and body[0] in _DIET_EXCLUDES and _time_tail(body[1:]):
            return _DIET_EXCLUDES[body[0]]
        return None
    if c.negated:
        # "has never eaten meat", "never smoked": the verb the denial is of
        r = r[1:] if r[0] in _HAVE_ANY and len(r) > 1 else r
        r = [_DENIED_FORMS.get(r[0], r[0]), *r[1:]]
    if c.negated and lemma(r[0]) in {"eat", "drink"} and len(r) >= 2 and r[2:] in ([], ["at", "all"]):
        food = lemma(r[1])  # a group ("meat") or one food of the lists ("I don't drink coffee")
        return _FOOD_GROUPS.get(food) or (frozenset({food}) if food in _KNOWN_FOODS else None)
    if c.negated and r in (["drink"], ["drink", "at", "all"]):
        return _ALCOHOL  # "I don't drink": alcohol
    if c.negated and r in (["smoke"], ["smoke", "at", "all"]):
        return _TOBACCO  # "I don't smoke": tobacco
    quit_ = _quitting(c)
    if quit_ and quit_[0] == "smoking" and not quit_[1]:
        return _TOBACCO  # "I quit smoking"
    if quit_ and quit_[0] == "drinking" and not quit_[1]:
        return _ALCOHOL  # "I quit drinking"
    if quit_ and quit_[0] in {"", "eating", "drinking"} and len(quit_[1]) == 1:
        return _FOOD_GROUPS.get(lemma(quit_[1][0]))
    return None


# What an intolerance or an allergy rules out ("is lactose intolerant": milk, cheese ...; "is allergic to
# nuts": almonds, cashews ...); any other food one is allergic to rules out itself ("strawberries").
_GLUTEN = frozenset(
    {"gluten", "wheat", "bread", "pasta", "bagel", "toast", "croissant", "baguette", "noodle"}
)
_NUTS = frozenset(
    {"nut", "peanut", "almond", "cashew", "walnut", "pecan", "hazelnut", "pistachio", "macadamia"}
)
_SHELLFISH = frozenset(
    {"shellfish", "shrimp", "prawn", "crab", "lobster", "oyster", "mussel", "clam", "scallop"}
)
_INTOLERANT_OF = {
    "lactose": _DAIRY - {"butter"},
    "dairy": _DAIRY,
    "milk": _DAIRY,
    "gluten": _GLUTEN,
    "wheat": _GLUTEN,
    "nut": _NUTS,
    "tree": _NUTS - {"peanut"},  # "tree nuts"
    "shellfish": _SHELLFISH,
    "seafood": _FISH,
    "fish": _FISH,
    "egg": _EGG,
    "caffeine": _CAFFEINE,
    "alcohol": _ALCOHOL,
}


def _cannot_have(c: _Clause) -> frozenset[str] | None:
    """The foods a statement of an intolerance or a food allergy rules out, said plainly ("is lactose
    intolerant", "is intolerant to gluten", "is allergic to peanuts", "has a nut allergy", "is coeliac")."""
    r = list(c.rest)
    if c.negated or c.past or len(r) < 2:
        return None
    what: list[str] = []
    if r[0] in _IS_NOW and r[1] in {"coeliac", "celiac"} and _time_tail(r[2:]):
        return _GLUTEN
    if r[0] in _IS_NOW and r[1:3] in (["allergic", "to"], ["intolerant", "to"], ["intolerant", "of"]):
        what = r[3 : _before_time(r, 3)]
    elif r[0] in _IS_NOW and r[2:3] == ["intolerant"] and _time_tail(r[3:]):
        what = r[1:2]  # "lactose intolerant"
    elif r[0] in _HAVE_NOW and r[-1:] in (["allergy"], ["intolerance"]) and 3 <= len(r) <= 4:
        what = [w for w in r[1:-1] if w not in {"a", "an"}]  # "has a peanut allergy"
    if not what or len(what) > 2 or what[0] in {"anything", "nothing"}:
        return None
    food = lemma(what[0])
    if food in _INTOLERANT_OF and (len(what) == 1 or (food == "tree" and lemma(what[1]) == "nut")):
        return _INTOLERANT_OF[food]
    return frozenset({food}) if len(what) == 1 else None


def _takes(c: _Clause) -> str | None:
    """The medicine a present statement says the subject takes, said plainly ("takes penicillin every day",
    "is on warfarin", "takes an aspirin a day"; not "used to take penicillin", "takes the dog out")."""
    r = list(c.rest)
    if c.negated or c.past or c.again or not r:
        return None
    verb, body = _category_verb(r, set())
    np = _noun_phrase(tuple(body)) if verb == "take" else None
    if np is None or np[0] not in _MEDICINES:
        return None
    tail = np[1]
    if tail and not (
        _time_tail(list(tail)) or _when_or_how(tail[0]) or _how_often(tail) or tail[0] in {"for", "a", "per"}
    ):
        return None
    return np[0]


# Exercise, and what is done as exercise ("I never exercise" / "I go to the gym every day"): a workout named
# ("yoga", "push-ups", "weights"), the gym, or running, jogging or swimming done as a habit. Not walking, cycling
# somewhere, a sport or a hike, which may be a way to get about or a pastime.
_WORKOUTS = frozenset(
    {"yoga", "pilates", "crossfit", "aerobics", "cardio", "zumba", "spinning", "weightlifting", "workout"}
    | {
        "push-up",
        "pushup",
        "sit-up",
        "situp",
        "squat",
        "burpee",
        "plank",
        "weight",
        "kettlebell",
        "calisthenics",
    }
)
_WORKOUT_PLACES = frozenset({"gym", "yoga", "pilates", "spin", "crossfit", "zumba", "aerobics", "bootcamp"})
_EXERCISE_ACTS = {"run", "jog", "swim"}  # done as exercise when said without an object
_EXERCISE_GERUNDS = {"running", "jogging", "swimming"}  # "goes running"
_EXERCISE_DISTANCES = frozenset({"lap", "mile", "km", "kilometre", "kilometer", "5k", "10k", "marathon"})
_HABIT_WORDS = frozenset({"every", "each", "daily", "weekly", "twice", "regularly", "most"})


def _idle(c: _Clause) -> bool:
    """Whether a statement denies that the subject exercises at all, said of today and nothing more ("I never
    exercise", "doesn't work out", "I don't do any exercise"; not "can't exercise", "never exercises in the
    morning")."""
    r = [lemma(w) for w in c.rest if w != "any"]
    if not c.negated or c.past or c.again or not r or r[0] in _MODALS:
        return False
    if r[-2:] == ["at", "all"]:
        r = r[:-2]
    return r in (["exercise"], ["work", "out"])


def _as_habit(words: list[str]) -> bool:
    """Words that say something is done regularly ("every morning", "three times a week", "on Sundays")."""
    return (
        any(w in _HABIT_WORDS for w in words)
        or any(_how_often(tuple(words[i:])) for i in range(len(words)))
        or _recurring(" ".join(words), [lemma(w) for w in words])
    )


def _exercises(c: _Clause) -> bool:
    """Whether a present statement says the subject does a kind of exercise as a habit ("goes to the gym every
    day", "works out", "does yoga", "lifts weights", "runs every morning", "swims laps"; not "runs a company",
    "goes to the gym to pick up my son", "swims in the sea", "used to run")."""
    r = list(c.rest)
    if c.negated or c.past or c.again or not r:
        return False
    verb, body = lemma(r[0]), r[1:]
    tail: list[str] | None = None
    if verb == "work" and body[:1] == ["out"]:
        tail = body[1:]  # "works out"
    elif (verb == "go" and body[:1] == ["to"]) or (verb == "hit" and body[:2] == ["the", "gym"]):
        # "goes to the gym", "goes to yoga (class)", "hits the gym"
        place = body[1:] if verb == "go" else body
        place = place[1:] if place[:1] in (["the"], ["my"]) else place
        if place[:1] and place[0] in _WORKOUT_PLACES:
            tail = place[2:] if place[1:2] in (["class"], ["classes"]) else place[1:]
    elif verb == "go" and body[:1] and body[0] in _EXERCISE_GERUNDS:
        tail = body[1:]  # "goes running every morning"
    elif verb == "go" and body[:2] == ["for", "a"] and body[2:3] and lemma(body[2]) in _EXERCISE_ACTS:
        tail = body[3:]  # "goes for a run"
    elif verb in _EXERCISE_ACTS:
        # "runs every morning", "runs 5 miles", "swims laps"; not "runs a company", "swims in the sea"
        np = _noun_phrase(tuple(body)) if body and not _when_or_how(body[0]) else None
        if np is not None and np[0] in _EXERCISE_DISTANCES:
            tail = list(np[1])
        elif body and (_when_or_how(body[0]) or _how_often(tuple(body))) and _as_habit(body):
            tail = body
    elif verb == "lift":
        np = _noun_phrase(tuple(body))
        tail = list(np[1]) if np is not None and np[0] == "weight" else None  # "lifts weights"
    elif verb in {"practice", "practise"} or not _clause_verb(r[0]):
        # "practises yoga"; "does yoga", "does some push-ups" (do-support leaves "yoga")
        np = _noun_phrase(tuple(body if verb in {"practice", "practise"} else r))
        tail = list(np[1]) if np is not None and np[0] in _WORKOUTS else None
    if tail is None or "to" in tail:  # "goes to the gym every day to pick up my son": for another end
        return False
    return not tail or _time_tail(tail) or _when_or_how(tail[0]) or _how_often(tuple(tail))


# The forms a denial of eating, drinking or smoking takes after "never" ("I've never smoked").
_DENIED_FORMS = {"eaten": "eat", "ate": "eat", "drunk": "drink", "drank": "drink", "smoked": "smoke"}


def _eats(c: _Clause) -> frozenset[str] | None:
    """The food a present statement says the subject eats or drinks, when said plainly ("eats steak on
    Fridays"; not "eats meat substitutes", "drinks oat milk"), or a meal it says the subject had ("had a
    burger for lunch", "has bacon for breakfast"; not "had a chicken", which may be a pet). A dish named
    after what is in it stands for that ("a bacon sandwich": bacon); one with any other word before it is
    another thing ("a veggie burger", "a tofu wrap")."""
    r = c.rest
    if c.negated or c.past or c.again or not r:
        return None
    meal = r[0] in _HAVE_ANY or r[0] in {"ate", "drank"}
    if not meal and lemma(r[0]) not in {"eat", "drink", "smoke"}:
        return None
    if lemma(r[0]) in {"smoke", "drink"} and (len(r) == 1 or _when_or_how(r[1]) or _how_often(r[1:])):
        return frozenset({"cigarette" if lemma(r[0]) == "smoke" else "alcohol"})  # "I smoke every day"
    when = _before_time(list(r), 1)  # "a bacon sandwich | yesterday"
    found = _food(r[1:when])
    if found is None:
        return None
    foods, tail = found[0], found[1] + r[when:]
    if lemma(r[0]) == "smoke":  # "smokes a pack a day": cigarettes
        return frozenset("cigarette" if f in {"pack", "packet", "carton"} else f for f in foods)
    for_a_meal = tail[:1] in (("for",), ("at",)) and tail[1:2] and tail[1] in _MEALS
    # or "had a steak (last night)": a meal when what was had is only ever food (not "had a chicken")
    if meal and not for_a_meal and (r[0] in _HAVE_NOW or not foods <= _ONLY_FOOD or not _lately(tail)):
        return None
    return foods


# Foods that are never a living animal one may have ("a steak", "bacon"; not "a chicken", "a lobster").
_ONLY_FOOD = _PORK | _BEEF | {"meat", "venison", "mutton", "meatball", "nugget", "kebab", "meatloaf"}
_ONLY_FOOD |= {"hotdog", "sushi", "sashimi", "seafood", "cheese", "yogurt", "yoghurt"}


def _lately(tail: tuple[str, ...]) -> bool:
    """Nothing, or a time of late ("yesterday", "last night", "this morning"): a meal had recently."""
    if len(tail) == 1:
        return tail[0] in {"yesterday", "today", "tonight", "recently"}
    if len(tail) == 2:
        return (tail[0] == "last" and tail[1] in {"night", "week"}) or (
            tail[0] == "this" and tail[1] in {"morning", "afternoon", "evening", "week"}
        )
    return not tail


def _food(words: tuple[str, ...]) -> tuple[frozenset[str], tuple[str, ...]] | None:
    """(the foods, the words after them) of a plain noun phrase that names a food ("two eggs"), or a dish
    named after what is in it ("a chicken curry", "pepperoni pizza"; not "fish fingers", not a dish); a
    measure of a food stands for the food ("two glasses of wine")."""
    of = words.index("of") if "of" in words else -1
    if (
        1 <= of <= 3
        and lemma(words[of - 1]) in _FOOD_UNITS
        and all(w in _NP_MODIFIERS or w in _NUMBER_WORDS or w.isdigit() for w in words[: of - 1])
    ):
        return _food(words[of + 1 :])
    np = _noun_phrase(words)
    if np is not None:
        return frozenset({np[0]}), np[1]
    loose = _noun_phrase(words, loose=True)
    if loose is None or not (
        loose[0] in _DISHES or loose[0] in _MEAT or loose[0] in _FISH or loose[0] in _SPREADS
    ):
        return None
    tail = loose[1]
    mods = [lemma(w) for w in words[: len(words) - len(tail) - 1]]
    named = [w for w in mods if w in _MEAT or w in _FISH or w in _DAIRY or w in _EGG or w in _NUTS]
    if not named or not all(w in _NP_MODIFIERS or w in named or w in _NUMBER_WORDS for w in mods):
        return None
    return frozenset(named), tail


# What "only X" excludes: another X of its kind done the same way ("I only speak English" / "I speak
# Spanish", "I only drink tea" / "I drink coffee"; not "I drink water": tea is one hot drink, not the only
# drink). Water is had instead of any drink. Kinds by verb; a word that names a kind ("meat", "fish",
# "alcohol") is compatible with what is of it ("I only eat fish" / "I eat salmon").
_HOT_DRINKS = (_CAFFEINE - {"caffeine"}) | {"tea", "chai", "matcha", "cocoa"}
_SOFT_DRINKS = frozenset({"water", "juice", "soda", "lemonade", "cola", "coke", "milk", "smoothie"})
_ONLY_KINDS: dict[str, tuple[frozenset[str], ...]] = {
    "speak": (frozenset(LANGUAGES),),
    "drink": (_HOT_DRINKS, _ALCOHOL, _SOFT_DRINKS),
    "eat": (_MEAT | _FISH,),
    "play": (
        _CATEGORIES["instrument"][1] - {"instrument"},
        _CATEGORIES["sport"][1] - {"sport"},
    ),
    "have": (
        _CATEGORIES["pet"][1] - {"pet"},
        frozenset({"son", "daughter"}),
        frozenset({"brother", "sister"}),
    ),
}


def _only(c: _Clause) -> tuple[str, str] | None:
    """(verb, what) of "I only speak English", "I drink only tea", said plainly: nothing after it (not "only
    eat fish on Fridays", which may say when), no count ("only have one cat" is about how many)."""
    if not c.only or c.negated or c.past or c.again:
        return None
    found = _object(c)
    if found is None or found[2] or any(w in _NUMBER_WORDS - {"a", "an"} or w.isdigit() for w in c.rest[1:]):
        return None
    return found[0], found[1]


def _object(c: _Clause) -> tuple[str, str, tuple[str, ...]] | None:
    """(verb, what, the words after it) of a present statement of doing one of the kinds above with one plain
    thing ("drinks coffee every morning", "speaks fluent Spanish", "is fluent in French", "has a dog")."""
    r = c.rest
    if c.negated or c.past or c.again or len(r) < 2:
        return None
    if r[0] in _IS_NOW and r[1:3] == ("fluent", "in") and len(r) == 4:
        return ("speak", r[3], ()) if r[3] in LANGUAGES else None
    verb = "have" if r[0] in _HAVE_NOW else lemma(r[0])
    if verb not in _ONLY_KINDS:
        return None
    body = r[2:] if verb == "speak" and r[1] == "fluent" else r[1:]
    np = _noun_phrase(body)
    if np is None:
        return None
    head, tail = np
    if tail and (verb == "have" or not (_when_or_how(tail[0]) or tail[0] == "for")):
        return None  # "has two kids in my class", "has a baby on the way"
    return verb, head, tail


def _only_conflict(x: _Clause, y: _Clause) -> bool:
    only, other = _only(x), _object(y)
    if only is None or other is None or only[0] != other[0] or only[1] == other[1]:
        return False
    (verb, one), what = only, other[1]
    if what in _FOOD_GROUPS.get(one, ()) or one in _FOOD_GROUPS.get(what, ()):
        return False  # "I only eat fish" / "I eat salmon"
    kinds = _ONLY_KINDS[verb]
    if one == "water" and verb == "drink":
        return any(what in kind for kind in kinds)
    return any(one in kind and what in kind for kind in kinds)


def _never_been(c: _Clause, text: str) -> tuple[str, ...] | None:
    """The place of "I've never been to Japan", "has never visited Paris", said of all time and nothing more
    (not "hasn't been to the gym this week")."""
    r = c.rest
    if not c.negated or "never" not in _clause_words(text) or len(r) < 2:
        return None
    r = r[1:] if r[0] in _HAVE_ANY else r
    body = r[2:] if r[:2] == ("been", "to") else r[1:] if r[:1] == ("visited",) else ()
    if body[-1:] in (("before",), ("yet",)):
        body = body[:-1]
    place = _bare(body)
    return place if place and not any(w in _PREPOSITIONS or _when_or_how(w) for w in place) else None


def _been(c: _Clause) -> tuple[str, ...] | None:
    """The place of "I visited Japan last year", "went to Japan in 2019", "I've been to Japan twice"."""
    r = c.rest
    if c.negated or len(r) < 2:
        return None
    r = r[1:] if r[0] in _HAVE_ANY and r[1] in {"been", "visited"} else r
    body = r[2:] if r[:2] in (("been", "to"), ("went", "to")) else r[1:] if r[0] == "visited" else ()
    place = _bare(body[: _before_time(list(body))])
    stop = next((i for i, w in enumerate(place) if w in _PREPOSITIONS or _when_or_how(w)), len(place))
    return place[:stop] or None


_KIN = {
    "mother": "mother",
    "mom": "mother",
    "mum": "mother",
    "mommy": "mother",
    "mummy": "mother",
    "father": "father",
    "dad": "father",
    "daddy": "father",
    "grandmother": "grandmother",
    "grandma": "grandmother",
    "granny": "grandmother",
    "grandfather": "grandfather",
    "grandpa": "grandfather",
    "granddad": "grandfather",
    "grandad": "grandfather",
    "aunt": "aunt",
    "auntie": "aunt",
    "aunty": "aunt",
    "wife": "spouse or partner",
    "husband": "spouse or partner",
    "spouse": "spouse or partner",
    "girlfriend": "spouse or partner",
    "boyfriend": "spouse or partner",
    "fiance": "spouse or partner",
    "fiancee": "spouse or partner",
}
_KIN |= {w: w for w in ("sister", "brother", "son", "daughter", "cousin", "uncle", "niece", "nephew")}
_KIN |= {w: w for w in ("grandson", "granddaughter")}
# Who one is to the speaker: one of these at a time ("Sarah is my sister" / "Sarah is my cousin"). A friend,
# a colleague, a neighbour or a boss may also be any of them, and "partner" may be in business: not here.
_PRONOUNS = {"he", "she", "they", "it", "this", "that", "who", "i", "you", "we", "there"}


def _kin(c: _Clause) -> tuple[str, str] | None:
    """(whose, what) of "Sarah is my (older) sister", said of a named subject and nothing more."""
    r = c.rest
    if (
        c.negated
        or c.past
        or len(r) < 3
        or r[0] not in _IS_NOW
        or r[1] not in {"my", "our", "his", "her", "their", "your"}
        or set(c.subject) & _PRONOUNS
    ):
        return None
    np = _noun_phrase(r[1:])
    if np is None or np[0] not in _KIN or not _time_tail(list(np[1])):
        return None
    return r[1], _KIN[np[0]]


# Things counted in "has two kids" whose count is one number ("has one child" / "has two kids").
_COUNT_FORMS = {"kid": "child", "children": "child"}
_COUNTED = (
    {_COUNT_FORMS.get(w, w) for w in _CATEGORIES["child"][1] | _CATEGORIES["sibling"][1]}
    | _CATEGORIES["pet"][1]
    | _CATEGORIES["car"][1]
)


def _counted(c: _Clause) -> tuple[str, str] | None:
    """(what, how many) of a plain count of a present thing ("has two kids", "I've got 3 cats")."""
    r = c.rest
    if c.negated or c.past or c.again or len(r) < 3 or r[0] not in _HAVE_NOW or not lemma(r[1]).isdigit():
        return None
    head = lemma(r[2])
    head = _COUNT_FORMS.get(head, head)
    if head not in _COUNTED or not _time_tail(list(r[3:])):
        return None
    return head, lemma(r[1])


def _state(c: _Clause) -> tuple[int, str] | None:
    """(group, state) of a statement that the subject is in one state of a group of exclusive ones and says
    no more than since when ("is married", "I'm a night owl", "is an early bird"); colours are left to the
    aligned rules ("I'm blue")."""
    r = list(c.rest)
    if c.negated or c.past or len(r) < 2 or r[0] not in _IS_NOW:
        return None
    body = r[2:] if r[1] in {"a", "an"} else r[1:]
    for size in (2, 1):
        phrase = " ".join(body[:size])
        state = _STATE_FORMS.get(phrase, phrase)
        group = next(
            (i for i, g in enumerate(_EXCLUSIVE_STATES) if state in g and g is not _COLORS),
            None,
        )
        if group is not None and len(body) >= size:
            return (group, state) if _time_tail(body[size:]) else None
    return None


# What each shape of world knowledge can conflict with: a tag of one statement and the tags of the other.
_WORLD_PARTNERS = {"quit": ("habit", "job"), "status": ("job",), "diet": ("eats", "takes"), "sold": ("owns",)}
_WORLD_PARTNERS |= {"unable": ("does",), "only": ("object",), "never": ("been",), "idle": ("exercises",)}


def world_keys(text: str) -> frozenset[tuple[str, ...]]:
    """The shapes of world knowledge ``text`` has, as (subject, tag[, category]) keys: two statements can be
    one of the conflicts of :func:`compare` read with a little world knowledge only when a key of one is a
    partner of a key of the other (:func:`world_partners`). Lets a caller find those pairs without comparing
    every pair: their topics may be too far apart for the model ("I'm vegan" / "I eat cheese every day")."""
    keys: set[tuple[str, ...]] = set()
    words = _clause_words(text)
    if not any(w in _NEGATIONS or w in _NEG_CONTRACTIONS or w.endswith("n't") for w in words):
        # what the statement may say its subject does, for a bare denial of it ("I walk to school" against
        # "I can't walk"): the word after each short opening that may be its subject
        for i in range(1, min(4, len(words))):
            keys.add((" ".join(lemma(w) for w in words[:i]), "does", base(words[i])))
            if _clause_verb(words[i]):
                break
    c = _clause(text)
    if c is None:
        return frozenset(keys)
    subject = " ".join(c.subject)
    absent = _absence(c)
    if absent:
        keys.add((subject, "absence", absent))
    keys.update((subject, "presence", category) for category in _presence(c))
    if (unable_to := _inability(c)) is not None:
        keys.add((subject, "unable", unable_to[0]))
    for tag, value in (
        ("state", _state(c)),
        ("kin", _kin(c)),
        ("count", _counted(c)),
        ("occupation", _occupation(c)),
    ):
        if value is not None:
            # one key per group of states, per whose relative, per thing counted: conflicts are within one
            keys.add((subject, tag, str(value[0])))
    if (unable := _unable(c)) is not None:
        keys.add((subject, "unable", unable))
    for tag, found in (
        ("quit", _quitting(c)),
        ("habit", _habit(c)),
        ("job", _job(c)),
        ("status", _status(c)),
        ("diet", _diet(c)),
        ("eats", _eats(c)),
        ("sold", _sold(c)),
        ("owns", _owns(c)),
        ("takes", _takes(c)),
        ("idle", True if _idle(c) else None),
        ("exercises", True if _exercises(c) else None),
    ):
        if found is not None:
            keys.add((subject, tag))
    if _never_been(c, text) is not None:
        keys.add((subject, "never"))
    if _been(c) is not None:
        keys.add((subject, "been"))
    for tag, what in (("only", _only(c)), ("object", _object(c))):
        if what is not None:
            keys.add((subject, tag, what[0]))  # per verb: "only speaks" meets "speaks"
    return frozenset(keys)


def world_partners(key: tuple[str, ...]) -> list[tuple[str, ...]]:
    """The keys of :func:`world_keys` a statement with ``key`` may conflict with."""
    subject, tag, *rest = key
    if tag == "absence":
        return [(subject, "presence", *rest)]
    if tag in {"state", "kin", "count", "occupation"}:
        return [key]
    return [(subject, other, *rest) for other in _WORLD_PARTNERS.get(tag, ())]


def _unable(c: _Clause) -> str | None:
    """The verb of a bare denial that the subject does something at all ("can't drive", "doesn't cook")."""
    r = [w for w in c.rest if w != "can"]
    if not c.negated or c.past or len(r) != 1 or r[0] in _COPULA or r[0] in _HAVE_ANY:
        return None
    return base(r[0])


def _inability(c: _Clause) -> tuple[str, str | None] | None:
    """(skill, what it is done with or None) of "can't cook", "don't know how to swim", "can't ride a bike",
    said plainly and of today."""
    r = [w for w in c.rest if w != "can"]
    if not c.negated or c.past or c.again or not r:
        return None
    if r[:3] == ["know", "how", "to"]:
        r = r[3:]
    if not r or base(r[0]) not in _SKILLS or r[0] in {"could", "would"}:
        return None
    if len(r) == 1:
        return base(r[0]), None
    np = _noun_phrase(tuple(r[1:]))
    return (base(r[0]), np[0]) if np is not None and not np[1] and r[1] in {"a", "an"} else None


def _skill_done(c: _Clause, skill: str, what: str | None) -> bool:
    """Whether a present statement says the subject does ``skill`` (with ``what``, when given): "cooks for
    my family on Sundays", "cooks dinner every night", "rides my bike to work"; not "is learning to cook"."""
    r = c.rest
    if c.negated or c.past or c.again or not r or base(r[0]) != skill or r[0].endswith("ing"):
        return False
    tail = r[1:]
    stop = next((i for i, w in enumerate(tail) if i and w in _PREPOSITIONS), len(tail))
    np = _noun_phrase(tail[:stop])  # "my bike | to work"
    if what is not None:
        return np is not None and np[0] == what
    if not tail or _when_or_how(tail[0]) or tail[0] in _WHERE_TO or tail[0] == "for" or _how_often(tail):
        return True
    return np is not None and (not np[1] or _when_or_how(np[1][0]))


# Jobs one has one of at a time ("I'm a nurse" / "I'm a software engineer"), by field: two jobs of one field
# may be one job said two ways or one held beside the other ("a doctor" / "a surgeon", "a lawyer" / "an
# attorney", "a developer" / "a software engineer", "a waiter" / "a bartender"), so only jobs of different
# fields conflict. Not "a mother", "a runner", "a student", "a writer", which go with any job.
_OCCUPATION_FIELDS = {
    "health": "nurse doctor physician surgeon dentist pharmacist paramedic midwife optician dietitian "
    "physiotherapist therapist psychologist vet veterinarian",
    "law": "lawyer attorney",
    "teaching": "teacher professor librarian",
    "technology": "engineer developer programmer scientist designer architect",
    "trades": "electrician plumber carpenter mechanic",
    "food": "chef baker waiter waitress bartender",
    "money": "accountant banker cashier",
    "safety": "firefighter policeman policewoman",
    "office": "receptionist secretary",
    "hair": "hairdresser barber",
    "flying": "pilot",
    "news": "journalist",
    "farming": "farmer",
}
_OCCUPATIONS = {job: field for field, jobs in _OCCUPATION_FIELDS.items() for job in jobs.split()}


def _occupation(c: _Clause) -> tuple[str, str] | None:
    """("job", its field) of "is a nurse", "I'm a software engineer", said plainly and of today."""
    r = c.rest
    if c.negated or c.past or c.again or len(r) < 3 or r[0] not in _IS_NOW or r[1] not in {"a", "an"}:
        return None
    np = _noun_phrase(r[1:], loose=True)
    if np is None or np[0] not in _OCCUPATIONS or not _time_tail(list(np[1])):
        return None
    return "job", _OCCUPATIONS[np[0]]


def _sold(c: _Clause) -> tuple[str, ...] | None:
    """What a statement says the subject sold ("sold my Tesla last year": ("tesla",)), said plainly."""
    r = list(c.rest)
    if c.negated or not r or r[0] != "sold":
        return None
    return _bare(r[1 : _before_time(r, 1)]) or None


def _owns(c: _Clause) -> tuple[str, ...] | None:
    """What a present statement says the subject owns ("owns a Tesla", "has a car", "drives a Tesla"), when
    that is all it says."""
    r = list(c.rest)
    if c.negated or c.past or c.again or not r or not (r[0] in _HAVE_NOW or lemma(r[0]) == "drive"):
        return None
    return _bare(r[1 : _before_time(r, 1)]) or None


def _world_conflict(a: str, b: str) -> tuple[str, str, str, str] | None:
    """(reason, subject, a's rest, b's rest) when the two statements are one of the shapes above and conflict."""
    ca, cb = _clause(a), _clause(b)
    if ca is None or cb is None or ca.subject != cb.subject:
        return None
    for x, y in ((ca, cb), (cb, ca)):
        category = _absence(x)
        if category and category in _presence(y):
            reason = "a thing and its stated absence"
        elif _quit_conflict(x, y):
            reason = "a habit and having given it up"
        elif _status_conflict(x, y):
            reason = "a status that excludes a job"
        elif (diet := _diet(x)) is not None and (foods := _eats(y)) is not None and foods & diet:
            reason = "a habit denied and done" if diet is _TOBACCO else "a diet and a food it excludes"
        elif (allergic := _cannot_have(x)) is not None and _takes(y) in allergic:
            reason = "an allergy to a medicine and taking it"
        elif _idle(x) and _exercises(y):
            reason = "no exercise and a kind of it done"
        elif (unable := _inability(x)) is not None and _skill_done(y, *unable):
            reason = "an act one can't do and doing it"
        elif _two_of_one(_occupation(x), _occupation(y)):
            reason = "two jobs one has one of at a time"
        elif (sold := _sold(x)) is not None and sold == _owns(y):
            reason = "a thing owned and sold"
        elif _two_of_one(_state(x), _state(y)):
            reason = "states that exclude each other"
        elif _two_of_one(_kin(x), _kin(y)):
            reason = "two relations to one person"
        elif _two_of_one(_counted(x), _counted(y)):
            reason = "different counts"
        elif _only_conflict(x, y):
            reason = "the only one of a kind and another"
        elif (never := _never_been(x, a if x is ca else b)) is not None and never == _been(y):
            reason = "a place never been to and been to"
        else:
            continue
        return reason, " ".join(ca.subject), " ".join(ca.rest), " ".join(cb.rest)
    return None


def _two_of_one(x: tuple[Any, str] | None, y: tuple[Any, str] | None) -> bool:
    """Two different values of one thing: (group, state), (whose, relative), (thing, count)."""
    return x is not None and y is not None and x[0] == y[0] and x[1] != y[1]


def compare(a: str, b: str, cosine: float | None = None, gate: float = TOPIC_GATE) -> Relation:
    """How ``a`` relates to ``b``. ``cosine`` (the model's, if known) below ``gate`` (the store's model's topic
    gate; :data:`TOPIC_GATE` is MiniLM's) means unrelated."""
    ta, tb = _one_spelling(tokens(a), tokens(b))
    la, lb = [lemma(w) for w in ta], [lemma(w) for w in tb]
    if la == lb:
        return Relation(SAME, "same words")
    if cosine is not None and cosine < gate:
        return Relation(UNRELATED, f"different topics (cosine {cosine:.2f})")
    shape = _world_conflict(a, b)
    if shape is not None:
        return Relation(CONTRADICTION, *shape)
    na, ca = _negation_free(ta)
    nb, cb = _negation_free(tb)
    pa, pb = [lemma(w) for w in ca], [lemma(w) for w in cb]
    if na != nb:
        if pa == pb:
            return Relation(CONTRADICTION, "negated on one side", " ".join(pa))
        # "I don't drink coffee" / "I drink coffee every morning": the other side says when or how it does
        # what the negation denies outright (not "... coffee substitutes", another thing).
        denied, said = (pa, pb) if na else (pb, pa)
        if "can" in denied and "can" not in said:
            denied = [w for w in denied if w != "can"]  # "I can't swim" / "I swim every morning"
            if denied == said:
                return Relation(CONTRADICTION, "negated on one side", " ".join(denied))
        if len(said) > len(denied) and said[: len(denied)] == denied and _when_or_how(said[len(denied)]):
            return Relation(
                CONTRADICTION, "negated on one side, said with when or how on the other", " ".join(denied)
            )
        # "I can't drive" / "I drive to work every day": a bare denial of an act, the act done to, for or from
        # somewhere on the other side (not with an object: "I don't run" / "I run a company")
        neg = _clause(a if na else b)
        if (
            neg is not None
            and _unable(neg) is not None
            and len(said) > len(denied)
            and said[: len(denied)] == denied
            and (said[len(denied)] in _WHERE_TO or _vehicle(_unable(neg), said[len(denied) :]))
        ):
            return Relation(
                CONTRADICTION, "negated on one side, said with where on the other", " ".join(denied)
            )
        past = _past(ta) != _past(tb)
        return Relation(COMPATIBLE, "past and present" if past else "negated on one side, different content")
    # Align the lemmas: common beginning, common end, the slot in between.
    start = 0
    while start < min(len(pa), len(pb)) and pa[start] == pb[start]:
        start += 1
    end = 0
    while end < min(len(pa), len(pb)) - start and pa[-1 - end] == pb[-1 - end]:
        end += 1
    slot_a, slot_b = pa[start : len(pa) - end], pb[start : len(pb) - end]
    prefix = pa[:start]
    attribute = " ".join(prefix)
    value_a, value_b = " ".join(slot_a), " ".join(slot_b)
    if _past(ta) != _past(tb):
        return Relation(COMPATIBLE, "past and present", attribute, value_a, value_b)
    if not slot_a or not slot_b or _covers(slot_a, slot_b) or _covers(slot_b, slot_a):
        return Relation(REFINEMENT, "one adds details to the other", attribute, value_a, value_b)
    if _antonyms(slot_a, slot_b):
        return Relation(CONTRADICTION, "opposites", attribute, value_a, value_b)
    if _antonyms(slot_a[:1], slot_b[:1]) and _same_but_when(slot_a[1:], slot_b[1:]):
        # "I love hiking on weekends" / "I hate hiking": opposite verbs, one side says when or how
        return Relation(CONTRADICTION, "opposites", attribute, value_a, value_b)
    if (
        prefix
        and (prefix[-1] in _COPULA or prefix[-1] in _SUBJECT_COPULA)
        and _exclusive(slot_a[0], slot_b[0])
    ):
        return Relation(CONTRADICTION, "states that exclude each other", attribute, value_a, value_b)
    if len(slot_a) > MAX_SLOT_WORDS or len(slot_b) > MAX_SLOT_WORDS:
        return Relation(UNRELATED, "different statements", attribute, value_a, value_b)
    verbs = _verb_positions(ca[:start])
    if not verbs and prefix[-1:] and prefix[-1] in _SUBJECT_COPULA and _age(slot_a) and _age(slot_b):
        # "I'm 29" / "I'm 31 years old": an age right after "I'm" (not "I'm 6 feet tall")
        return Relation(CONTRADICTION, "different values of one attribute", attribute, value_a, value_b)
    if (
        not verbs
        and prefix[-2:-1]
        and prefix[-2] in _SUBJECT_COPULA
        and prefix[-1] == "from"
        and _typed(slot_a, _capitalised(a))
        and _typed(slot_b, _capitalised(b))
    ):
        # "I'm from Spain" / "I'm from Italy" as "I am from ...": where one is from, when both name a place
        # and one can't be in the other ("I'm from Spain" / "I'm from Madrid": a city may be in a country)
        if _places_apart(_place(ca[start : len(ca) - end]), _place(cb[start : len(cb) - end])):
            return Relation(CONTRADICTION, "different values of one attribute", attribute, value_a, value_b)
        return Relation(COMPATIBLE, "places one may be from at once", attribute, value_a, value_b)
    if not verbs:
        return Relation(COMPATIBLE, "different subjects or relations", attribute, value_a, value_b)
    # A verb opening the slot is a different relation or tense ("worked at" / "works at"); a capitalised
    # word is a name even when it spells a verb ("written in Go").
    names = _capitalised(a) | _capitalised(b)
    if any(_is_verb(w) and not _typed([w], names) for w in (slot_a[0], slot_b[0])) or any(
        w in _COPULA or w in _AUX for w in slot_a + slot_b
    ):
        return Relation(COMPATIBLE, "different relations", attribute, value_a, value_b)
    # The slot is the value of the last relation in the common beginning.
    relation_at = verbs[-1]
    relation = prefix[relation_at]
    after = prefix[relation_at + 1 :]
    before = prefix[:relation_at]
    multi = (
        _multi(relation) or any(_multi(w) for w in after)
    ) and "by" not in after  # "is owned by": one owner
    # "has a cat named Luna" / "... named Miso": an indefinite object may be another one (two cats).
    indefinite = any(
        _multi(w) and i + 1 < len(before) and before[i + 1] in {"a", "an", "another", "some"}
        for i, w in enumerate(before)
    )
    recurring = _recurring(a, slot_a) and _recurring(b, slot_b)
    if indefinite or recurring:
        return Relation(COMPATIBLE, "values that can coexist", attribute, value_a, value_b)
    if _aspects_apart(slot_a, slot_b):
        # "works as a nurse" / "works at the hospital", "is on Tuesday" / "is at 3pm", "prefers tea in the
        # morning" / "prefers coffee at work": what, where and when of one thing, or its value on two occasions
        return Relation(COMPATIBLE, "values that can coexist", attribute, value_a, value_b)
    if (
        after[-1:] in (["in"], ["from"])
        and (lemma(relation) in _PLACE_VERBS or base(relation) in _PLACE_VERBS)
        and max(len(slot_a), len(slot_b)) <= 4
        and _typed(slot_a, _capitalised(a))
        and _typed(slot_b, _capitalised(b))
        and not _places_apart(_place(ca[start : len(ca) - end]), _place(cb[start : len(cb) - end]))
    ):
        # "I live in Kreuzberg" / "I live in Berlin", "I work in Berlin" / "I work in Germany": one place
        # may lie in the other (not "I live in Berlin" / "I live in Paris", two cities)
        return Relation(COMPATIBLE, "values that can coexist", attribute, value_a, value_b)
    if lemma(relation) == "take" and _taken(slot_a) and _taken(slot_b):
        multi = True  # "takes insulin daily" / "takes metformin": several medicines at once
    if multi:
        if _count(slot_a) and _count(slot_b) and not after[1:] and _counts_of(slot_a) == _counts_of(slot_b):
            # "has one child" / "has two kids"; not "has one brother" / "has two sisters"
            return Relation(CONTRADICTION, "different counts", attribute, value_a, value_b)
        return Relation(COMPATIBLE, "values that can coexist", attribute, value_a, value_b)
    if _for_another(prefix, slot_a, slot_b):
        return Relation(COMPATIBLE, "values for different purposes", attribute, value_a, value_b)
    if relation in _COPULA and all(w in _DETERMINERS for w in after):
        has_attribute = (
            "'s" in before
            or "of" in before
            or any(w in {"my", "our", "his", "her", "their", "its", "your"} for w in before)
        )
        if not has_attribute and not (_typed(slot_a, _capitalised(a)) or _typed(slot_b, _capitalised(b))):
            return Relation(COMPATIBLE, "descriptions that can coexist", attribute, value_a, value_b)
    if _count(slot_a) and _count(slot_b) and _measure(slot_a) != _measure(slot_b):
        # "I am 6 feet tall" / "I am 29": a height and an age, not two values of one
        return Relation(COMPATIBLE, "different measures", attribute, value_a, value_b)
    return Relation(CONTRADICTION, "different values of one attribute", attribute, value_a, value_b)


# Which level of place a name is, for "I'm from X" / "I'm from Y": a continent, a country, a region of a
# country (the US states, Canada's provinces, Australia's states, the UK's nations), or anything else (a city, a
# town). The graph's gazetteer (core/data/place_names.txt) lists countries, states and cities alike, without a
# hierarchy, so these short lists tell the levels apart; a name in none of them is a place of the lowest
# level. Lower-case, words separated by a space, without "the".
def _place_names(text: str) -> frozenset[str]:
    return frozenset(n.strip() for n in text.split(",") if n.strip())


_CONTINENTS = _place_names(
    """africa, antarctica, asia, europe, north america, south america, latin america, central america,
    oceania, australasia, scandinavia, middle east, caribbean, balkans"""
)

_COUNTRIES = _place_names(
    """afghanistan, albania, algeria, andorra, angola, antigua and barbuda, argentina, armenia, australia,
    austria, azerbaijan, bahamas, bahrain, bangladesh, barbados, belarus, belgium, belize, benin, bhutan,
    bolivia, bosnia, bosnia and herzegovina, botswana, brazil, brunei, bulgaria, burkina faso, burundi,
    cambodia, cameroon, canada, cape verde, central african republic, chad, chile, china, colombia, comoros,
    congo, costa rica, croatia, cuba, cyprus, czechia, czech republic, denmark, djibouti, dominica,
    dominican republic, ecuador, egypt, el salvador, equatorial guinea, eritrea, estonia, eswatini, ethiopia,
    fiji, finland, france, gabon, gambia, georgia, germany, ghana, greece, grenada, guatemala, guinea,
    guinea-bissau, guyana, haiti, honduras, hungary, iceland, india, indonesia, iran, iraq, ireland, israel,
    italy, ivory coast, jamaica, japan, jordan, kazakhstan, kenya, kiribati, kosovo, kuwait, kyrgyzstan,
    laos, latvia, lebanon, lesotho, liberia, libya, liechtenstein, lithuania, luxembourg, madagascar, malawi,
    malaysia, maldives, mali, malta, marshall islands, mauritania, mauritius, mexico, micronesia, moldova,
    monaco, mongolia, montenegro, morocco, mozambique, myanmar, burma, namibia, nauru, nepal, netherlands,
    holland, new zealand, nicaragua, niger, nigeria, north korea, north macedonia, macedonia, norway, oman,
    pakistan, palau, palestine, panama, papua new guinea, paraguay, peru, philippines, poland, portugal,
    qatar, romania, russia, rwanda, saint lucia, samoa, san marino, saudi arabia, senegal, serbia,
    seychelles, sierra leone, singapore, slovakia, slovenia, solomon islands, somalia, south africa,
    south korea, korea, south sudan, spain, sri lanka, sudan, suriname, sweden, switzerland, syria, taiwan,
    tajikistan, tanzania, thailand, timor-leste, east timor, togo, tonga, trinidad and tobago, tunisia,
    turkey, turkmenistan, tuvalu, uganda, ukraine, united arab emirates, uae, united kingdom, uk, britain,
    great britain, united states, united states of america, us, usa, america, uruguay, uzbekistan,
    vanuatu, vatican city, venezuela, vietnam, yemen, zambia, zimbabwe, puerto rico, greenland, hong kong"""
)

# A region and the country it is in.
_REGIONS_OF = {
    "united states": """alabama, alaska, arizona, arkansas, california, colorado, connecticut, delaware,
    florida, georgia, hawaii, idaho, illinois, indiana, iowa, kansas, kentucky, louisiana, maine, maryland,
    massachusetts, michigan, minnesota, mississippi, missouri, montana, nebraska, nevada, new hampshire,
    new jersey, new mexico, new york, north carolina, north dakota, ohio, oklahoma, oregon, pennsylvania,
    rhode island, south carolina, south dakota, tennessee, texas, utah, vermont, virginia, washington,
    west virginia, wisconsin, wyoming""",
    "canada": """alberta, british columbia, manitoba, new brunswick, newfoundland, nova scotia, ontario,
    prince edward island, quebec, saskatchewan, yukon, nunavut""",
    "australia": "new south wales, queensland, south australia, tasmania, victoria, western australia",
    "united kingdom": "england, scotland, wales, northern ireland",
}
_REGIONS = {region: country for country, text in _REGIONS_OF.items() for region in _place_names(text)}
# Names of one country said several ways.
_SAME_COUNTRY = {
    "us": "united states",
    "usa": "united states",
    "america": "united states",
    "united states of america": "united states",
    "uk": "united kingdom",
    "britain": "united kingdom",
    "great britain": "united kingdom",
    "holland": "netherlands",
    "burma": "myanmar",
    "czech republic": "czechia",
    "korea": "south korea",
    "macedonia": "north macedonia",
    "east timor": "timor-leste",
    "uae": "united arab emirates",
    "bosnia and herzegovina": "bosnia",
}


# The names a city is known by in English besides its own.
_CITY_NAMES = {
    "new york": "new york city",
    "nyc": "new york city",
    "cologne": "koln",
    "seville": "sevilla",
    "frankfurt": "frankfurt am main",
    "hull": "kingston upon hull",
    "washington dc": "washington",
    "washington d.c.": "washington",
    "st petersburg": "saint petersburg",
    "st. petersburg": "saint petersburg",
    "munchen": "munich",
    "wien": "vienna",
    "lisboa": "lisbon",
    "roma": "rome",
    "milano": "milan",
    "napoli": "naples",
    "firenze": "florence",
    "praha": "prague",
    "bombay": "mumbai",
    "bangalore": "bengaluru",
    "calcutta": "kolkata",
    "madras": "chennai",
    "peking": "beijing",
}


# Cities of 150,000 people or more and the region (in the four countries of ``_REGIONS_OF``) or country they are
# in (core/data/city_regions.txt, written by bench/make_city_regions.py from GeoNames, CC BY 4.0), so that "I'm
# from Lyon" / "I'm from Italy" can be told apart from "I'm from Lyon" / "I'm from France". Places close to a
# larger city of their country are left out of the list as its boroughs or districts ("Brooklyn", "Kreuzberg"):
# a name in none of the lists may be a district, a suburb or a town, and so may lie in any city: "I live in
# Kreuzberg" / "I live in Berlin" hold together.
@functools.cache
def _cities() -> dict[str, frozenset[str]]:
    """The cities of core/data/city_regions.txt and where each is, read on first use (not at import)."""
    text = resources.files("memdeck.core").joinpath("data", "city_regions.txt").read_text("utf-8")
    found: dict[str, set[str]] = {}
    for line in text.splitlines():
        if ":" in line and not line.startswith("#"):
            where, names = line.split(":", 1)
            for name in _place_names(names):
                found.setdefault(" ".join(name.split()), set()).add(" ".join(where.split()))
    return {name: frozenset(where) for name, where in found.items()}


def _place_levels(name: str) -> set[tuple[str, str]]:
    """What ``name`` may be: ("continent", name), ("country", name), ("region", its country), ("city", the
    region or country it is in), or ("place", name); a name such as Georgia is a country and a US state, New
    York a state and a city."""
    found: set[tuple[str, str]] = set()
    if name in _CONTINENTS:
        found.add(("continent", name))
    if name in _COUNTRIES:
        found.add(("country", _SAME_COUNTRY.get(name, name)))
    if name in _REGIONS:
        found.add(("region", _REGIONS[name]))
    city = _CITY_NAMES.get(name, name)
    found.update(("city", where) for where in _cities().get(city, ()))
    return found or {("place", name)}


def _places_apart(a: str, b: str) -> bool:
    """Whether one can't be from (or live in) both ``a`` and ``b`` (names written as in the lists above): two
    countries, two continents, two cities of the list, two other places (two towns, two districts), a region
    and a country it is not in, a city of the list and a country it is not in, or a region it is not in whose
    name is a city of the list too ("New York" / "Chicago"); not a city and its own country or region, a
    city and another region (a smaller town there may bear its name: "Portland" / "Maine"), a place not in
    the list and a city, a country, a region or a continent (it may be in it), a region and its own country,
    a continent and a country. Two regions are apart when they are different
    regions. With a name that may be two levels, apart only when every reading is."""
    if a == b or _SAME_COUNTRY.get(a, a) == _SAME_COUNTRY.get(b, b):
        return False
    return all(_places_apart_as(x, y, a, b) for x in _place_levels(a) for y in _place_levels(b))


def _places_apart_as(x: tuple[str, str], y: tuple[str, str], a: str, b: str) -> bool:
    (level_x, what_x), (level_y, what_y) = x, y
    if level_x == level_y:
        if level_x == "city":  # two cities of the list: none lies in another
            return _CITY_NAMES.get(a, a) != _CITY_NAMES.get(b, b)
        return what_x != what_y if level_x != "region" else a != b
    levels = {level_x, level_y}
    if levels == {"region", "country"}:
        region, country = (what_x, what_y) if level_x == "region" else (what_y, what_x)
        return region != country
    if "city" in levels and "country" in levels:
        # a city and a country: apart when the city is not in it ("Lyon" / "Italy")
        (_, city_in), (_, what) = (x, y) if level_x == "city" else (y, x)
        return _REGIONS.get(city_in, city_in) != what
    if "city" in levels and "region" in levels:
        # A city and a region (a US state, a Canadian province ...) it is not listed in are not apart: the
        # list holds only cities of 150,000 people or more, and their names are given again to smaller towns
        # in other states and provinces ("Portland", Oregon and Maine; "Springfield"; "Paris", Texas; "Perth",
        # Scotland). Unless the region's name is a city of the list too ("New York", against "Chicago"):
        # said beside another city, it may be that city, and the two are apart as cities are.
        (_, city_in), region = (x, b) if level_x == "city" else (y, a)
        return _CITY_NAMES.get(region, region) in _cities() and city_in != region
    return False


def _place(words: list[str]) -> str:
    """A place's name as :mod:`places` writes it ("the UK" -> "uk")."""
    return " ".join(words[1:] if words[:1] == ["the"] else words)


def _taken(slot: list[str]) -> bool:
    """A slot that opens with a medicine ("insulin daily")."""
    return bool(slot) and slot[0] in _MEDICINES


def _counts_of(slot: list[str]) -> tuple[str, ...]:
    """What a count counts, one word for one thing ("1 child" and "2 kid": ("child",))."""
    return tuple(_COUNT_FORMS.get(w, w) for w in slot[1:])


# What one drives when one drives ("I can't drive" / "I drive a Tesla"): vehicles and the makes of cars.
_VEHICLES = _CATEGORIES["car"][1] | {"bus", "taxi", "cab", "lorry", "tractor", "minivan", "jeep", "pickup"}
_VEHICLES |= {"tesla", "volvo", "toyota", "honda", "ford", "bmw", "audi", "mercedes", "volkswagen", "vw"}
_VEHICLES |= {"subaru", "nissan", "mazda", "kia", "hyundai", "chevy", "chevrolet", "porsche", "fiat", "prius"}
_VEHICLES |= {"peugeot", "renault", "skoda", "lexus", "jaguar", "ferrari", "dodge", "cadillac", "buick"}
# The makes alone: one who drives one's own Honda has a car (not one's own bus: the company's).
_CAR_MAKES = (
    _VEHICLES
    - _CATEGORIES["car"][1]
    - {"bus", "taxi", "cab", "lorry", "tractor", "minivan", "jeep", "pickup"}
)


def _vehicle(verb: str | None, words: list[str]) -> bool:
    """The denied act is driving and what follows is a plain vehicle ("a red Volvo"; not "a hard bargain",
    "my kids crazy")."""
    if verb != "drive":
        return False
    np = _noun_phrase(tuple(words))
    return np is not None and np[0] in _VEHICLES


# What a value that opens with a preposition says: a day or a date, a time of day, a role ("as a nurse"), or
# else a place ("on Tuesday", "at 3pm", "in room 4").
_MONTHS = {*_MONTH_NAMES, "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov"}
_DAY_WORDS = {w for w in _TYPED_WORDS if w.endswith("day")} | _MONTHS | {"weekend", "weekday", "tonight"}
_TIME_OF_DAY = {"noon", "midnight", "morning", "afternoon", "evening", "night", "am", "pm", "o'clock"}
_CLOCK = re.compile(r"\d{1,2}(?:[:.]\d\d)?(?:am|pm|h)?")
# Occasions a value may be said for ("tea in the morning", "coffee at work").
_OCCASIONS = _TIME_OF_DAY | _MEALS | {"work", "home", "office", "school", "weekend", "weekday", "holiday"}
_OCCASIONS |= {"summer", "winter", "spring", "autumn", "fall", "vacation", "party", "gym", "night"}


def _aspect(slot: list[str]) -> str | None:
    """Which side of a thing a value that opens with a preposition gives: "day", "time", "role" or "place"."""
    if len(slot) < 2 or slot[0] not in _PREPOSITIONS or slot[0] in {"of", "to", "from", "for", "with"}:
        return None
    if slot[0] == "as":
        return "role"
    body = [w for w in slot[1:] if w not in _DETERMINERS]
    if any(w in _DAY_WORDS or (len(w) == 4 and w.isdigit()) for w in body):
        return "day"
    if body[:1] and (_CLOCK.fullmatch(body[0]) or body[0] in _TIME_OF_DAY):
        return "time"
    return "place"


def _occasion(slot: list[str]) -> tuple[str, ...] | None:
    """The occasion a value is said for ("tea in the morning": ("morning",)), when the rest names one."""
    at = next((i for i, w in enumerate(slot) if i and w in {"in", "at", "on", "during", "for"}), None)
    if at is None:
        return None
    words = tuple(w for w in slot[at + 1 :] if w not in _DETERMINERS)
    return words if words and all(w in _OCCASIONS for w in words) else None


def _aspects_apart(slot_a: list[str], slot_b: list[str]) -> bool:
    """Two values that give different sides of one thing ("at 3pm" / "on Tuesday"), or values for two
    occasions ("tea in the morning" / "coffee at work")."""
    aspect_a, aspect_b = _aspect(slot_a), _aspect(slot_b)
    if aspect_a is not None and aspect_b is not None and aspect_a != aspect_b:
        return True
    occasion_a, occasion_b = _occasion(slot_a), _occasion(slot_b)
    return occasion_a is not None and occasion_b is not None and occasion_a != occasion_b


# Relations of where one lives, works or comes from, whose places may lie in one another ("lives in").
_PLACE_VERBS = {"live", "work", "grew", "grow", "born", "raised", "base", "locate", "stay", "come"}
# Where an act goes ("drives to work", "works from home"); not "for", which opens other senses ("cares for").
_WHERE_TO = {"to", "from", "into", "through", "around", "across"}
_DURATIONS = {"second", "minute", "hour", "day", "week", "min", "mins", "hr", "hrs"}


def _measure(slot: list[str]) -> tuple[str, ...]:
    """What a number measures: the words after it, an age's "years old" left out and units of time as one
    ("6 foot tall": ("foot", "tall"); "31 year old" and "29": (); "3 hour" and "90 minute": ("time",))."""
    return tuple("time" if w in _DURATIONS else w for w in slot[1:] if w not in {"year", "old"})


def _for_another(prefix: list[str], slot_a: list[str], slot_b: list[str]) -> bool:
    """The values hold for different things ("X is the source of truth for A's status" / "... for B's",
    "is responsible for billing" / "... for onboarding", "prefers tea for breakfast" / "prefers coffee for
    work"): both can hold. Not after a verb ("works for Acme", "is booked for 7pm", "voted for X"), nor when
    what follows "for" is a date, a time or a number ("is scheduled for Monday", "for 3 years")."""
    if prefix[-1:] == ["for"]:
        before = prefix[-2] if len(prefix) >= 2 else ""
        if not before or _is_verb(before) or before.endswith("ed"):
            return False
        return not (_when_value(slot_a) or _when_value(slot_b))
    if "for" in slot_a[1:] and "for" in slot_b[1:]:
        return slot_a[slot_a.index("for") + 1 :] != slot_b[slot_b.index("for") + 1 :]
    return False


def _when_value(slot: list[str]) -> bool:
    """A value that opens with a number, a date or a time ("3 years", "monday", "7pm")."""
    return bool(slot) and (_count(slot) or slot[0] in _TYPED_WORDS or slot[0][:1].isdigit())


def _one_spelling(ta: list[str], tb: list[str]) -> tuple[list[str], list[str]]:
    """Both statements with their subject and verb spelled alike when one contracts them and the other does
    not ("I'm 34 years old" / "I am 36"): the contracted one written out, as the other is."""
    for x, y in ((ta, tb), (tb, ta)):
        whole = _CLAUSE_CONTRACTIONS.get(x[0]) if x else None
        if whole is not None and tuple(y[:2]) == whole:
            x[:1] = list(whole)
    return ta, tb


def _age(slot: list[str]) -> bool:
    """A number, alone or in years ("29", "31 years old")."""
    return bool(slot) and slot[0].isdigit() and slot[1:] in ([], ["year", "old"], ["year"])


def _same_but_when(a: list[str], b: list[str]) -> bool:
    """The same words, but that the longer goes on with a short when or how ("hike on weekend" / "hike"; not
    a clause of its own)."""
    short, long_ = sorted((a, b), key=len)
    if not short or long_[: len(short)] != short or len(long_) - len(short) > 3:
        return False
    return len(long_) == len(short) or _when_or_how(long_[len(short)])


def _recurring(text: str, slot: list[str]) -> bool:
    """A day or time written in the plural ("on Mondays"): a habit, and habits on several days coexist."""
    plural = {w[:-1] for w in tokens(text) if w.endswith("s")}
    return any(w in plural and w in _TYPED_WORDS for w in slot)


def _covers(short: list[str], long_: list[str]) -> bool:
    """Every word of the shorter value is in the longer one ("tea" / "green tea in the morning")."""
    if len(short) >= len(long_):
        return False
    return all(
        any(w == x or (len(w) >= 4 and len(x) >= 4 and (w.startswith(x) or x.startswith(w))) for x in long_)
        for w in short
    )


def _past(words: list[str]) -> bool:
    return any(w in _PAST_MARKERS for w in words)


def mergeable(a: str, b: str) -> str | None:
    """Why two statements must not be merged (None: merging them loses nothing)."""
    rel = compare(a, b)
    if rel.kind == SAME:
        return None
    if rel.kind == CONTRADICTION:
        return f"contradiction: {rel.reason}"
    if rel.kind == REFINEMENT:
        return "one adds details to the other"
    if rel.kind == COMPATIBLE and rel.reason in {"values that can coexist", "descriptions that can coexist"}:
        return f"different values: {rel.reason}"
    if rel.reason.startswith("negated") or rel.reason == "past and present":
        return rel.reason
    return None


__all__ = [
    "TOPIC_GATE",
    "Relation",
    "compare",
    "lemma",
    "mergeable",
    "tokens",
    "world_keys",
    "world_partners",
]
