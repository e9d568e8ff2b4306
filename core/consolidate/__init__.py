"""Consolidation: episodes become semantic facts, near-duplicate facts merge, conflicts are flagged.

One run works on one principal's data only and is idempotent: every change it makes is derived from
what is stored (a fact's evidence is the set of episodes that support it), so a second run with nothing
new in between finds nothing to do and commits nothing.

What a run does, in order:

1. **Facts from episodes.** Each active episode's ``derived_facts``, every explicit statement in its text
   or events ("remember that ...", "I prefer ...", "we decided to ...", "my X is Y"; see
   :mod:`memdeck.core.consolidate.statements`, no model needed), and every statement that appears (same
   normalised sentence) in the summaries or events of two or more episodes, become candidate facts with
   those episodes as sources. A candidate upserts by content hash: a new fact is written through
   :meth:`Store.remember_many` (so redaction applies); an existing one gains the new source episodes,
   one evidence per new episode, and ``last_reinforced_at`` moves to the newest source episode. A fact
   merged into another passes its episodes to the survivor; one superseded by a different value, or
   deprecated by a person, keeps them (they are not evidence for what replaced it).
2. **Near-duplicate merge.** Active facts whose embeddings have cosine >= 0.92 (all-MiniLM-L6-v2) merge
   into the older one: sources are unioned, evidence summed, and the newer fact is *deprecated* with
   ``superseded_by`` pointing at the survivor. Deprecation rather than forgetting, because a merge is a
   guess a person may want to undo (the app restores it in one key), the text stays reviewable, and
   forget is the audited path for purging personal data. Pairs that look alike but say different things
   are never merged: different numbers, a negation on one side only, a subject/predicate conflict, or one
   text that adds words to the other ("allergic to peanuts" vs "... peanuts and shellfish").
3. **Contradictions.** Every pair of active facts on one topic (cosine >= ``contradict.TOPIC_GATE``) is
   read by :func:`memdeck.core.consolidate.contradict.compare`: aligned statements that differ in one value
   of an attribute that takes one value, a negation on one side, or a pair of opposites. Pairs whose
   conflict takes a little world knowledge ("I'm vegan" / "I eat cheese every day") are found by the shapes
   of their statements whatever their cosine (``contradict.world_keys``). The small
   subject/predicate/value reader (:func:`parse_statement`) still catches pairs that do not align ("X's
   favourite colour is blue" / "the favourite colour of X is green"). A pair is flagged on both facts as
   ``meta.contradicts``. :func:`contradictions` (and the review queue, ``memdeck contradictions`` and the
   analytics, through :func:`open_pairs`) reads the same pairs from the facts as they are, so they agree
   whether or not a run has happened since the facts were written. What happens next is the config's
   ``[consolidate] resolution``: ``flag`` (the default) changes nothing else; ``newest_wins`` deprecates
   the older fact with ``superseded_by`` the newer; ``trusted_wins`` keeps the fact of the more trusted
   agent (per-agent feedback), the newer on a tie.
4. **Procedures.** Every active procedure version below the live one (the highest non-deprecated
   version) is marked ``meta.superseded_by_version`` (and ``meta.superseded_by_id``). Its state stays
   active, so the rule "the highest non-deprecated version is live" still holds when a person deprecates
   the live version: the previous one becomes live again, and the next run moves the markers.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from memdeck.core import filters as F
from memdeck.core.config import RESOLUTIONS, model_thresholds
from memdeck.core.consolidate.contradict import (
    REFINEMENT,
    SAME,
    TOPIC_GATE,
    compare,
    mergeable,
    world_keys,
    world_partners,
)
from memdeck.core.consolidate.decisions import dismissed, pair_key
from memdeck.core.consolidate.sentences import split_sentences
from memdeck.core.consolidate.statements import explicit_facts
from memdeck.core.errors import MemdeckError
from memdeck.core.filters import Scope
from memdeck.core.forget import is_forgotten
from memdeck.core.graph.memory.write import remember_many
from memdeck.core.recall.feedback import agent_trust
from memdeck.core.records import (
    MemoryInput,
    check_principal,
    normalise_text,
    now,
    parse_time,
    sha256_text,
    token_free_hashes,
)
from memdeck.core.storage import lifecycle
from memdeck.core.storage.formation import low_value_reason
from memdeck.core.storage.objectstore import write_errors

if TYPE_CHECKING:
    from memdeck.core.models import Thresholds
    from memdeck.core.storage.engine import Engine

AGENT = "consolidate"
NEAR_DUPLICATE = 0.92  # cosine, all-MiniLM-L6-v2; paraphrases of one fact score 0.93-0.98 with that model
MERGE_BLOCK = 512  # rows of the similarity matrix computed at once (memory: 512 x n floats)
_COEXIST = {"values that can coexist", "descriptions that can coexist", "past and present"}


@dataclass
class ConsolidationReport:
    """What one run changed. ``changed`` is false on a run that found nothing to do."""

    principal: str
    episodes_scanned: int = 0
    facts_scanned: int = 0
    facts_added: list[str] = field(default_factory=list)
    facts_reinforced: list[dict[str, Any]] = field(default_factory=list)
    merged: list[dict[str, Any]] = field(default_factory=list)
    contradictions_flagged: list[dict[str, Any]] = field(default_factory=list)
    contradictions_resolved: list[dict[str, Any]] = field(default_factory=list)
    procedures_superseded: list[dict[str, Any]] = field(default_factory=list)
    summaries_added: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def changed(self) -> bool:
        return bool(
            self.facts_added
            or self.facts_reinforced
            or self.merged
            or self.contradictions_flagged
            or self.contradictions_resolved
            or self.procedures_superseded
            or self.summaries_added
        )

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["changed"] = self.changed
        data["seconds"] = round(self.seconds, 3)
        return data


@dataclass
class Contradiction:
    """Two active facts of one principal that cannot both hold (see :func:`contradictions`).

    ``conflict`` says how they clash ("different values of one attribute", "opposites", "negated on one
    side", "different counts"); ``a_value`` and ``b_value`` are what differs; ``key`` is the pair's key in
    the review queue (``memdeck review keep-left KEY`` acts on it).
    """

    principal: str
    subject: str
    predicate: str
    a_id: str
    a_text: str
    a_value: str
    b_id: str
    b_text: str
    b_value: str
    conflict: str = ""
    similarity: float | None = None
    key: str = ""

    @property
    def summary(self) -> str:
        """What the pair is at a glance: how the two clash and what differs ("different values of one
        attribute: March vs May")."""
        conflict = self.conflict or "contradiction"
        if self.a_value and self.b_value:
            return f"{conflict}: {_shorten(self.a_value)} vs {_shorten(self.b_value)}"
        return conflict

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


SUMMARY_VALUE_WIDTH = 40  # a differing value longer than this is shortened in a summary


def _shorten(text: str, width: int = SUMMARY_VALUE_WIDTH) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def differing_spans(a: str, b: str) -> tuple[str, str]:
    """The words of ``a`` and of ``b`` between their common beginning and common end, as written
    ("... at 9:00 every Monday" / "... at 10:00 every Thursday" -> "9:00 every Monday", "10:00 every Thursday")."""
    wa, wb = a.split(), b.split()

    def same(x: str, y: str) -> bool:
        return x.strip(".,;:!").casefold() == y.strip(".,;:!").casefold()

    start = 0
    while start < min(len(wa), len(wb)) and same(wa[start], wb[start]):
        start += 1
    end = 0
    while end < min(len(wa), len(wb)) - start and same(wa[-1 - end], wb[-1 - end]):
        end += 1
    return " ".join(wa[start : len(wa) - end]).strip(".,;:!"), " ".join(wb[start : len(wb) - end]).strip(
        ".,;:!"
    )


@dataclass
class NearDuplicate:
    """Two active facts of one principal close enough to merge (cosine >= :data:`NEAR_DUPLICATE`) that were
    not merged: ``blocker`` says why not (None: consolidation has not run since they were written)."""

    principal: str
    a_id: str
    b_id: str
    similarity: float
    blocker: str | None
    key: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class OpenPairs:
    """The pairs of facts in a scope awaiting a person's decision, and the facts they were read from."""

    facts: dict[str, dict[str, Any]]
    contradictions: list[Contradiction]
    near_duplicates: list[NearDuplicate]
    flagged_only: list[str] = field(default_factory=list)  # principals too large to read pairs from live


# --- reading one principal's rows -------------------------------------------------------------------


def _rows(store: Engine, tier: str, where: str | None, columns: list[str]) -> list[dict[str, Any]]:
    if not store.has_table(tier):
        return []
    ds = store.table(tier).to_lance()
    present = set(ds.schema.names)
    return ds.to_table(columns=[c for c in columns if c in present], filter=where).to_pylist()


def _meta(row: dict[str, Any]) -> dict[str, Any]:
    raw = row.get("meta")
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _ts(value: Any) -> datetime | None:
    return parse_time(value) if value is not None else None


def _update_facts(store: Engine, principal: str, rows: list[dict[str, Any]]) -> None:
    """Write new values of some columns for many facts of ``principal`` in one commit (a merge on id that
    updates only the columns given). Every row has the same keys, ``id`` among them."""
    if not rows:
        return
    tbl = store.table("semantic")
    ids = {r["id"] for r in rows}
    owned = {
        r["id"]
        for r in _rows(
            store, "semantic", F.all_of(F.eq("principal", principal), F.is_in("id", sorted(ids))), ["id"]
        )
    }
    rows = [r for r in rows if r["id"] in owned]  # never another principal's row
    if not rows:
        return
    schema = pa.schema([tbl.schema.field(name) for name in rows[0]])
    data = pa.Table.from_pylist(rows, schema=schema)
    with store.lock.shared(), write_errors():
        store.read_retry(lambda: tbl.merge_insert("id").when_matched_update_all().execute(data))


def deprecate_many(store: Engine, principal: str, links: list[tuple[str, str, str]]) -> None:
    """Deprecate many facts of ``principal`` in one commit: (id, reason, superseded_by id) each, both ids
    facts of that principal, as :meth:`Store.deprecate` does one at a time."""
    if not links:
        return
    stamp = now()
    rows = []
    for fact_id, reason, successor in links:
        if fact_id == successor:
            raise MemdeckError("a memory cannot supersede itself")
        rows.append(
            {
                "id": fact_id,
                "state": "deprecated",
                "deprecation_reason": store.redact(reason, principal),
                "superseded_by": successor,
                "updated_at": stamp,
            }
        )
    successors = {s for _, _, s in links}
    found = {
        r["id"]
        for r in _rows(
            store,
            "semantic",
            F.all_of(F.eq("principal", principal), F.is_in("id", sorted(successors))),
            ["id"],
        )
    }
    if successors - found:
        raise MemdeckError("a memory can only be superseded by one of the same principal")
    _update_facts(store, principal, rows)


# --- candidate facts from episodes ------------------------------------------------------------------

_MIN_STATEMENT_WORDS = 4


def statement_key(text: str) -> str:
    """The form statements are compared in: case, surrounding quotes and final punctuation folded."""
    folded = " ".join(text.replace("’", "'").split()).lower()
    return folded.strip(" \"'").rstrip(".!;:,").strip()


def _event_texts(events: Any, *, speaker: bool = False) -> Iterable[str]:
    """The texts of an episode's events; with ``speaker``, each with its role in front ("Alice: ..."), so
    explicit statements resolve "I" and "my" and skip what an assistant said."""
    if isinstance(events, str):
        try:
            events = json.loads(events)
        except ValueError:
            yield events
            return
    for event in events or []:
        if isinstance(event, str):
            yield event
        elif isinstance(event, dict):
            for key in ("text", "content", "message", "summary"):
                if isinstance(event.get(key), str):
                    role = event.get("role") or event.get("speaker")
                    named = speaker and isinstance(role, str) and role.strip()
                    yield f"{role}: {event[key]}" if named else event[key]
                    break


def _statements(text: str) -> Iterable[str]:
    for part in split_sentences(text or ""):
        part = part.strip(" -*\t")
        if not part or part.endswith("?") or len(part.split()) < _MIN_STATEMENT_WORDS:
            continue
        if low_value_reason(part):
            continue
        yield part


@dataclass
class _Candidate:
    key: str
    text: str
    sources: list[str]
    kinds: set[str]
    last_seen: datetime | None
    first_seen: datetime | None = None


def _candidates(episodes: list[dict[str, Any]]) -> list[_Candidate]:
    found: dict[str, _Candidate] = {}
    seen_in: dict[str, dict[str, str]] = {}  # statement key -> episode id -> original text
    for ep in episodes:
        when = _ts(ep.get("ended_at")) or _ts(ep.get("started_at")) or _ts(ep.get("created_at"))
        for fact in ep.get("derived_facts") or []:
            if not isinstance(fact, str) or not fact.strip():
                continue
            key = statement_key(fact)
            if not key:
                continue
            cand = found.setdefault(key, _Candidate(key, normalise_text(fact), [], set(), None))
            cand.kinds.add("derived")
            _add_source(cand, ep["id"], when)
        texts = [ep.get("text") or ""] + list(_event_texts(ep.get("events")))
        for text in texts:
            for statement in _statements(text):
                seen_in.setdefault(statement_key(statement), {}).setdefault(ep["id"], statement)
        # Explicit statements ("remember that ...", "I prefer ...", "we decided to ...") need no second episode.
        for text in [ep.get("text") or "", *_event_texts(ep.get("events"), speaker=True)]:
            for fact in explicit_facts(text):
                key = statement_key(fact)
                if not key:
                    continue
                cand = found.setdefault(key, _Candidate(key, normalise_text(fact), [], set(), None))
                cand.kinds.add("explicit")
                _add_source(cand, ep["id"], when)
    when_of = {
        ep["id"]: _ts(ep.get("ended_at")) or _ts(ep.get("started_at")) or _ts(ep.get("created_at"))
        for ep in episodes
    }
    for key, by_episode in seen_in.items():
        if len(by_episode) < 2:
            continue
        first_episode = next(iter(by_episode))  # episodes arrive oldest first
        cand = found.setdefault(
            key, _Candidate(key, normalise_text(by_episode[first_episode]), [], set(), None)
        )
        cand.kinds.add("repeated")
        for ep_id in by_episode:
            _add_source(cand, ep_id, when_of.get(ep_id))
    return sorted(found.values(), key=lambda c: c.key)


def _add_source(cand: _Candidate, episode_id: str, when: datetime | None) -> None:
    if episode_id not in cand.sources:
        cand.sources.append(episode_id)
    if when is not None and (cand.last_seen is None or when > cand.last_seen):
        cand.last_seen = when
    if when is not None and (cand.first_seen is None or when < cand.first_seen):
        cand.first_seen = when


# --- subject / predicate / value --------------------------------------------------------------------

_SPELLING = {"favourite": "favorite", "colour": "color", "colours": "colors", "favourites": "favorites"}
_POSSESSIVE = re.compile(
    r"^(?P<subj>[\w .'-]{1,60}?)['’]s (?P<pred>[a-z][\w -]{0,40}?) (?:is|was) (?P<val>.+)$", re.I
)
_OF = re.compile(
    r"^(?:the )?(?P<pred>[a-z][\w -]{0,40}?) of (?P<subj>[\w .'-]{1,60}?) (?:is|was) (?P<val>.+)$", re.I
)
_PRONOUN = re.compile(
    r"^(?P<subj>my|our|his|her|their|your) (?P<pred>[a-z][\w -]{0,40}?) (?:is|was) (?P<val>.+)$", re.I
)
_FUNCTIONAL = re.compile(
    r"^(?P<subj>[\w .'-]{1,60}?) (?:(?:now|currently|still) )?(?P<pred>lives? in|lives? at|works? at|works? for|"
    r"works? as|(?:is|am|are) employed by|was born in|was born on|(?:is|am|are) married to|(?:is|am|are) based in|"
    r"(?:is|am|are) from|comes? from|resides? in|(?:(?:has|have) )?(?:moved|relocated) to|is allergic to) "
    r"(?P<val>.+)$",
    re.I,
)
_TODAY = re.compile(r"(?i)(?<=\w) (?:now|currently|still|these days|at the moment)(?= \w)")
# One predicate however it is said, in any person: "I live in", "has moved to", "is employed by".
_PREDICATE_FORMS = {
    "live in": "lives in",
    "resides in": "lives in",
    "reside in": "lives in",
    "is based in": "lives in",
    "am based in": "lives in",
    "are based in": "lives in",
    "live at": "lives at",
    "work at": "works at",
    "works for": "works at",
    "work for": "works at",
    "is employed by": "works at",
    "am employed by": "works at",
    "are employed by": "works at",
    "work as": "works as",
    "am married to": "is married to",
    "are married to": "is married to",
    "am from": "is from",
    "are from": "is from",
    "comes from": "is from",
    "come from": "is from",
}
# A move is where one lives now, when it names a place (a capital letter): "moved to Lisbon", not
# "moved to the back row".
_MOVED = re.compile(r"^(?:(?:has|have) )?(?:moved|relocated) to$")
_AGE = re.compile(r"^(?P<subj>[\w .'-]{1,60}?) is (?P<val>\d{1,3}) years? old$", re.I)
_ARTICLES = re.compile(r"^(?:a|an|the)\s+", re.I)
# A value ends where a clause begins: "lives in Porto with her husband" is about Porto.
_VALUE_END = re.compile(
    r",|;| - | (?:and|with|since|because|but|which|who|where|when|while|so|as|for|from|now|currently|"
    r"these days|at the moment|last|this|in (?=\d))\b",
    re.I,
)
MAX_VALUE_WORDS = 4  # longer values are descriptions, not one value of an attribute
_PARTICIPLES = {"named", "called", "known", "based", "located", "going", "doing"}


def _participle(word: str) -> bool:
    return word in _PARTICIPLES or (len(word) >= 6 and word.endswith(("ed", "ing")))


_FUNCTIONAL_PREDICATES = {
    "lives in",
    "lives at",
    "works at",
    "works for",
    "works as",
    "was born in",
    "was born on",
    "is married to",
    "is based in",
    "is from",
    "comes from",
}


def _norm_words(text: str) -> str:
    words = [_SPELLING.get(w, w) for w in re.findall(r"[\w'-]+", text.lower().replace("’", "'"))]
    return " ".join(words)


def parse_statement(text: str) -> tuple[str, str, str] | None:
    """(subject, predicate, value) of a simple factual sentence, or None. Deliberately conservative."""
    clean = " ".join(text.split()).rstrip(".!;")
    if not clean or "?" in clean or len(clean) > 200:
        return None
    clean = _TODAY.sub("", clean).strip()  # "is currently based in": said today adds nothing to the fact
    for pattern, fixed_pred in (
        (_AGE, "age"),
        (_POSSESSIVE, None),
        (_PRONOUN, None),
        (_OF, None),
        (_FUNCTIONAL, None),
    ):
        m = pattern.match(clean)
        if not m:
            continue
        subject = _ARTICLES.sub("", m.group("subj").strip())
        if subject.lower() in {"i", "me", "my", "our", "we", "us"}:
            subject = "self"
        if len(subject.split()) > 4:
            continue
        predicate = fixed_pred or _norm_words(m.group("pred"))
        if _MOVED.match(predicate):
            if not m.group("val").strip()[:1].isupper():
                continue
            predicate = "lives in"
        predicate = _PREDICATE_FORMS.get(predicate, predicate)
        if predicate == "is allergic to":
            continue  # not functional: one can be allergic to several things
        value = _VALUE_END.split(m.group("val").strip(), maxsplit=1)[0].strip()
        value = _norm_words(_ARTICLES.sub("", value))
        words = value.split()
        if not words or not predicate or len(words) > MAX_VALUE_WORDS:
            continue
        if fixed_pred is None and predicate not in _FUNCTIONAL_PREDICATES and _participle(words[0]):
            continue  # "is called Miso", "is looking for a job": not a value of the attribute
        return _norm_words(subject), predicate, value
    return None


# --- merge guards -----------------------------------------------------------------------------------

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
}
_NEGATIONS = {"not", "no", "never", "none", "nobody", "nothing", "neither", "nor", "without", "cannot"}
_STOP = {
    "a",
    "an",
    "the",
    "is",
    "are",
    "was",
    "were",
    "be",
    "to",
    "of",
    "in",
    "on",
    "at",
    "for",
    "and",
    "or",
    "it",
    "this",
    "that",
    "with",
    "as",
    "by",
    "their",
    "his",
    "her",
    "its",
    "they",
    "he",
    "she",
    "has",
    "have",
    "had",
    "does",
    "do",
    "did",
    "user",
    "users",
}


def _tokens(text: str) -> list[str]:
    return [_SPELLING.get(w, w) for w in re.findall(r"[\w]+(?:'[\w]+)?", text.lower().replace("’", "'"))]


def _numbers(tokens: list[str]) -> set[str]:
    return {t for t in tokens if t.isdigit() or t in _NUMBER_WORDS}


def _negated(tokens: list[str]) -> bool:
    return any(t in _NEGATIONS or t.endswith("n't") for t in tokens)


def _content(tokens: list[str]) -> set[str]:
    return {t.rstrip("s") for t in tokens if t not in _STOP and not t.endswith("n't") and t not in _NEGATIONS}


def merge_blocker(a: str, b: str) -> str | None:
    """Why two similar-looking facts must not be merged, or None if merging them loses nothing."""
    ta, tb = _tokens(a), _tokens(b)
    if _numbers(ta) != _numbers(tb):
        return "different numbers"
    if _negated(ta) != _negated(tb):
        return "negated on one side"
    pa, pb = parse_statement(a), parse_statement(b)
    if pa and pb and pa[:2] == pb[:2] and pa[2] != pb[2]:
        return "contradicting values"
    ca, cb = _content(ta), _content(tb)
    if ca != cb and (ca < cb or cb < ca):
        return "one adds details to the other"
    return mergeable(a, b)  # opposites, negations, different values of one attribute


# --- the run ----------------------------------------------------------------------------------------

_FACT_COLUMNS = [
    "id",
    "text",
    "state",
    "pinned",
    "content_sha256",
    "sources",
    "evidence_count",
    "last_reinforced_at",
    "created_at",
    "superseded_by",
    "deprecation_reason",
    "meta",
    "agent",
]
# Deprecation reasons that say the fact was merged into its successor (the same fact): consolidation's
# merge, the review queue's merge, and keeping one side of a near-duplicate pair.
MERGE_REASONS = ("merged: ", "review: merged into ", "review: near_duplicate, kept ")


def _merged(reason: str | None) -> bool:
    return bool(reason) and str(reason).startswith(MERGE_REASONS)


def thresholds(store: Engine) -> Thresholds:
    """The merge cosine and the contradiction topic gate of the store's model in use (``[thresholds]``
    overrides them)."""
    return model_thresholds(store.settings, store.embedding_model or store.embedder.name)


def consolidate(
    store: Engine, principal: str, *, threshold: float | None = None, resolution: str | None = None
) -> ConsolidationReport:
    """Consolidate one principal's memories (see the module docstring). Safe to run again at any time.

    ``resolution`` overrides the config's ``[consolidate] resolution`` (flag, newest_wins, trusted_wins);
    ``threshold`` the merge cosine (default: the store's model's, :func:`thresholds`).
    """
    principal = check_principal(principal)
    if threshold is None:
        threshold = thresholds(store).near_duplicate
    resolution = resolution or store.settings.consolidate.resolution
    if resolution not in RESOLUTIONS:
        raise MemdeckError(f"unknown resolution {resolution!r}; known: {', '.join(RESOLUTIONS)}")
    started = time.perf_counter()
    report = ConsolidationReport(principal=principal)
    scope = Scope.of(principal)
    _facts_from_episodes(store, principal, report)
    facts = _rows(
        store, "semantic", F.all_of(scope.where(), F.eq("state", "active")), [*_FACT_COLUMNS, "vector"]
    )
    report.facts_scanned = len(facts)
    parsed = {f["id"]: parse_statement(f["text"] or "") for f in facts}
    facts = _merge_near_duplicates(store, principal, facts, parsed, threshold, report)
    if resolution != "flag":
        facts = _resolve_contradictions(store, principal, facts, parsed, resolution, report)
    _flag_contradictions(store, principal, facts, parsed, report)
    _supersede_procedures(store, principal, report)
    from memdeck.core.consolidate.summaries import summarise_old_sessions

    report.summaries_added = summarise_old_sessions(store, principal)
    report.seconds = time.perf_counter() - started
    return report


def _forgotten_fact(store: Engine, principal: str, text: str) -> bool:
    """Whether a candidate fact was forgotten: as it would be stored, or, when it holds vault tokens, with
    them reduced to their kind (a secret said again gets a new token number). The second errs on the side
    of the forgotten: the same words with another secret of the same kind are not derived again either."""
    hashes = [sha256_text(normalise_text(text)), *token_free_hashes(text)]
    return any(is_forgotten(store, principal, content_sha256=h) for h in hashes)


def _facts_from_episodes(store: Engine, principal: str, report: ConsolidationReport) -> None:
    where = F.all_of(F.eq("principal", principal), F.eq("state", "active"))
    episodes = _rows(
        store,
        "episodic",
        where,
        ["id", "text", "events", "derived_facts", "started_at", "ended_at", "created_at", "tags"],
    )
    # A summary quotes its session: counted with it, every sentence it quotes would be "said twice".
    episodes = [e for e in episodes if "session-summary" not in (e.get("tags") or [])]
    episodes.sort(key=lambda e: (_ts(e.get("started_at")) or _ts(e.get("created_at")) or now(), e["id"]))
    report.episodes_scanned = len(episodes)
    candidates = _candidates(episodes)
    if not candidates:
        return
    existing = _rows(
        store,
        "semantic",
        F.all_of(F.eq("principal", principal), F.ne("state", "forgotten-pending")),
        _FACT_COLUMNS,
    )
    by_id = {f["id"]: f for f in existing}
    by_hash: dict[str, dict[str, Any]] = {}
    by_key: dict[str, dict[str, Any]] = {}
    for fact in sorted(existing, key=lambda f: (f["state"] != "active", f["created_at"] or now(), f["id"])):
        by_hash.setdefault(fact["content_sha256"], fact)
        key = _meta(fact).get("consolidation_key")
        if key:
            by_key.setdefault(key, fact)

    def live(fact: dict[str, Any]) -> dict[str, Any] | None:
        # A merged fact points at its survivor, the same fact in other words; a fact superseded by another
        # value (a contradiction settled) or deprecated by a person is left alone: its episodes are not
        # evidence for what replaced it.
        for _ in range(16):
            if fact["state"] == "active":
                return fact
            if not _merged(fact.get("deprecation_reason")):
                return None
            nxt = by_id.get(fact.get("superseded_by") or "")
            if nxt is None:
                return None
            fact = nxt
        return None

    updates: dict[str, dict[str, Any]] = {}
    new: list[_Candidate] = []
    for cand in candidates:
        hit = by_hash.get(sha256_text(cand.text)) or by_key.get(sha256_text(cand.key))
        if hit is None:
            if not _forgotten_fact(store, principal, cand.text):
                new.append(cand)  # a fact a person forgot is not derived again from its source episode
            continue
        target = live(hit)
        if target is None:
            continue
        state = updates.get(target["id"]) or {
            "sources": list(target.get("sources") or []),
            "evidence_count": int(target.get("evidence_count") or 1),
            "last_reinforced_at": _ts(target.get("last_reinforced_at")),
        }
        added = [s for s in cand.sources if s not in state["sources"]]
        if not added:
            continue
        state["sources"] += added
        state["evidence_count"] += len(added)
        if cand.last_seen and (
            state["last_reinforced_at"] is None or cand.last_seen > state["last_reinforced_at"]
        ):
            state["last_reinforced_at"] = cand.last_seen
        updates[target["id"]] = state
    if new:
        inputs = [
            MemoryInput(
                text=c.text,
                tier="semantic",
                principal=principal,
                agent=AGENT,
                force=True,
                meta={
                    "origin": "consolidation",
                    "consolidation_key": sha256_text(c.key),
                    "kinds": sorted(c.kinds),
                },
                # A fact is as old as its first evidence: that is what "keep the older fact" compares.
                created_at=c.first_seen,
                extra={
                    "sources": c.sources,
                    "evidence_count": len(c.sources),
                    "last_reinforced_at": c.last_seen,
                    "confidence": min(0.95, 0.6 + 0.1 * len(c.sources)),
                },
            )
            for c in new
        ]
        for result in remember_many(store, inputs):
            if result.memory is None:
                continue
            if result.action == "added":
                report.facts_added.append(result.memory.id)
            elif result.action == "reinforced":
                report.facts_reinforced.append(
                    {"id": result.memory.id, "evidence_count": result.memory.evidence_count}
                )
    if updates:
        stamp = now()
        rows = []
        for fact_id, state in updates.items():
            # last_reinforced_at is None only where the row's is None too: writing it changes nothing
            rows.append({"id": fact_id, **state, "updated_at": stamp})
            report.facts_reinforced.append({"id": fact_id, "evidence_count": state["evidence_count"]})
        _update_facts(store, principal, rows)  # one commit for every reinforced fact


def _merge_near_duplicates(
    store: Engine,
    principal: str,
    facts: list[dict[str, Any]],
    parsed: dict[str, Any],
    threshold: float,
    report: ConsolidationReport,
) -> list[dict[str, Any]]:
    """Merge near-duplicates into the older fact. Returns the facts still active afterwards."""
    usable = [f for f in facts if f.get("vector") is not None and not _meta(f).get("unembedded")]
    if len(usable) < 2:
        return facts
    usable.sort(key=lambda f: (f["created_at"] or now(), _ts(f.get("last_reinforced_at")) or now(), f["id"]))
    vectors = np.asarray([f["vector"] for f in usable], dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors = (vectors / np.where(norms == 0, 1.0, norms)).astype(np.float32)
    pairs: dict[int, list[tuple[int, float]]] = {}
    for start in range(0, len(usable), MERGE_BLOCK):
        block = vectors[start : start + MERGE_BLOCK] @ vectors.T
        rows, cols = np.nonzero(block >= threshold)
        for r, c in zip(rows.tolist(), cols.tolist(), strict=True):
            i = start + r
            if c > i:
                pairs.setdefault(i, []).append((c, float(block[r, c])))
    absorbed: set[int] = set()
    plans: list[tuple[dict[str, Any], list[tuple[dict[str, Any], float]]]] = []
    for i in sorted(pairs):
        if i in absorbed:
            continue
        keep = usable[i]
        group = []
        for j, sim in sorted(pairs[i]):
            other = usable[j]
            if j in absorbed or other.get("pinned"):
                continue  # a pinned fact is a person's choice: never deprecated by a merge
            if merge_blocker(keep["text"] or "", other["text"] or ""):
                continue
            absorbed.add(j)
            group.append((other, sim))
        if group:
            plans.append((keep, group))
    if not plans:
        return facts
    scope = Scope.of(principal)
    stamp = now()
    gone: set[str] = set()
    for keep, group in plans:
        sources = list(keep.get("sources") or [])
        evidence = int(keep.get("evidence_count") or 1)
        last = _ts(keep.get("last_reinforced_at"))
        meta = _meta(keep)
        merged_from = list(meta.get("merged_from") or [])
        for other, _sim in group:
            sources += [s for s in other.get("sources") or [] if s not in sources]
            evidence += int(other.get("evidence_count") or 1)
            when = _ts(other.get("last_reinforced_at"))
            if when and (last is None or when > last):
                last = when
            merged_from.append(other["id"])
        values: dict[str, Any] = {
            "evidence_count": evidence,
            "updated_at": stamp,
            "meta": json.dumps({**meta, "merged_from": merged_from}, ensure_ascii=False, sort_keys=True),
        }
        if sources:
            values["sources"] = sources
        if last is not None:
            values["last_reinforced_at"] = last
        with store.lock.shared():
            store.table("semantic").update(
                where=F.all_of(F.eq("id", keep["id"]), F.eq("principal", principal)), values=values
            )
        for other, sim in group:
            lifecycle.deprecate(
                store,
                other["id"],
                f"merged: near-duplicate of {keep['id']} (cosine {sim:.3f})",
                superseded_by=keep["id"],
                scope=scope,
            )
            gone.add(other["id"])
            report.merged.append({"kept": keep["id"], "merged": other["id"], "similarity": round(sim, 4)})
        keep["evidence_count"], keep["sources"] = evidence, sources
        keep["meta"] = values["meta"]
    return [f for f in facts if f["id"] not in gone]


def contradicting_pairs(
    facts: list[dict[str, Any]], parsed: dict[str, Any], gate: float = TOPIC_GATE
) -> dict[tuple[str, str], tuple[str, str]]:
    """(id, id) -> (subject, predicate) for every contradicting pair of ``facts`` (ids in order); ``gate``:
    the topic gate of the model the vectors were made with (:data:`TOPIC_GATE` is MiniLM's)."""
    found: dict[tuple[str, str], tuple[str, str]] = {}
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for fact in facts:
        spv = parsed.get(fact["id"])
        if spv:
            groups.setdefault(spv[:2], []).append(fact)
    for (subject, predicate), members in groups.items():
        for x in members:
            for y in members:
                if x["id"] < y["id"] and parsed[x["id"]][2] != parsed[y["id"]][2]:
                    rel = compare(x["text"] or "", y["text"] or "")
                    if rel.kind in (SAME, REFINEMENT) or rel.reason in _COEXIST:
                        continue  # "my sister is allergic to peanuts" / "... to shellfish": both hold
                    found[(x["id"], y["id"])] = (subject, predicate)
    _world_pairs(facts, found)
    usable = [f for f in facts if f.get("vector") is not None and not _meta(f).get("unembedded")]
    if len(usable) < 2:
        return found
    vectors = np.asarray([f["vector"] for f in usable], dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors = (vectors / np.where(norms == 0, 1.0, norms)).astype(np.float32)
    for start in range(0, len(usable), MERGE_BLOCK):
        block = vectors[start : start + MERGE_BLOCK] @ vectors.T
        rows, cols = np.nonzero(block >= gate)
        for r, c in zip(rows.tolist(), cols.tolist(), strict=True):
            x, y = usable[start + r], usable[c]
            if x["id"] >= y["id"]:
                continue
            key = (x["id"], y["id"])
            if key in found:
                continue
            rel = compare(x["text"] or "", y["text"] or "", float(block[r, c]), gate)
            if rel.contradicts:
                found[key] = (rel.attribute, rel.reason)
    return found


def _world_pairs(facts: list[dict[str, Any]], found: dict[tuple[str, str], tuple[str, str]]) -> None:
    """Pairs whose conflict takes a little world knowledge ("I'm vegan" / "I eat cheese every day"), found
    by the shapes of their statements (``contradict.world_keys``) however far apart the model puts their
    topics: only facts with partner shapes of one subject are compared."""
    by_key: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for fact in facts:
        for key in world_keys(fact["text"] or ""):
            by_key.setdefault(key, []).append(fact)
    # a key that partners itself ("is single" / "is married") meets each pair twice: read it once
    read: set[tuple[str, str]] = set()
    for key, members in by_key.items():
        for partner in world_partners(key):
            for x in members:
                for y in by_key.get(partner, ()):
                    a, b = (x, y) if x["id"] < y["id"] else (y, x)
                    if a["id"] == b["id"] or (a["id"], b["id"]) in found or (a["id"], b["id"]) in read:
                        continue
                    read.add((a["id"], b["id"]))
                    rel = compare(a["text"] or "", b["text"] or "")
                    if rel.contradicts:
                        found[(a["id"], b["id"])] = (rel.attribute, rel.reason)


def _flag_contradictions(
    store: Engine,
    principal: str,
    facts: list[dict[str, Any]],
    parsed: dict[str, Any],
    report: ConsolidationReport,
) -> None:
    desired: dict[str, list[dict[str, str]]] = {}
    gate = thresholds(store).topic_gate
    for (a, b), (subject, predicate) in contradicting_pairs(facts, parsed, gate).items():
        desired.setdefault(a, []).append({"id": b, "subject": subject, "predicate": predicate})
        desired.setdefault(b, []).append({"id": a, "subject": subject, "predicate": predicate})
    for fact_id in desired:
        desired[fact_id] = sorted(desired[fact_id], key=lambda o: o["id"])
    stamp = now()
    rows = []
    for fact in facts:
        meta = _meta(fact)
        want = desired.get(fact["id"], [])
        have = meta.get("contradicts") or []
        if want == have:
            continue
        if want:
            meta["contradicts"] = want
        else:
            meta.pop("contradicts", None)
        old_ids = {c.get("id") for c in have if isinstance(c, dict)}
        for c in want:
            if c["id"] not in old_ids and fact["id"] < c["id"]:
                report.contradictions_flagged.append(
                    {"a": fact["id"], "b": c["id"], "subject": c["subject"], "predicate": c["predicate"]}
                )
        fact["meta"] = json.dumps(meta, ensure_ascii=False, sort_keys=True) if meta else None
        rows.append({"id": fact["id"], "meta": fact["meta"], "updated_at": stamp})
    _update_facts(store, principal, rows)  # one commit for every fact whose flags changed


def _resolve_contradictions(
    store: Engine,
    principal: str,
    facts: list[dict[str, Any]],
    parsed: dict[str, Any],
    resolution: str,
    report: ConsolidationReport,
) -> list[dict[str, Any]]:
    """Settle flagged pairs: the loser is deprecated with ``superseded_by`` the winner (reversible)."""
    by_id = {f["id"]: f for f in facts}
    trust = agent_trust(store) if resolution == "trusted_wins" else {}
    scope = Scope.of(principal)
    gone: set[str] = set()

    def rank(fact: dict[str, Any]) -> tuple[float, datetime, str]:
        when = _ts(fact.get("last_reinforced_at")) or _ts(fact.get("created_at")) or now()
        return (float(trust.get(fact.get("agent") or "", 0.5)) if trust else 0.0, when, fact["id"])

    for a_id, b_id in sorted(contradicting_pairs(facts, parsed, thresholds(store).topic_gate)):
        if a_id in gone or b_id in gone:
            continue
        a, b = by_id[a_id], by_id[b_id]
        if a.get("pinned") or b.get("pinned"):
            continue  # a pinned fact is a person's choice: left for them to settle
        winner, loser = (a, b) if rank(a) > rank(b) else (b, a)
        lifecycle.deprecate(
            store,
            loser["id"],
            f"contradiction resolved ({resolution}): {winner['id']} kept",
            superseded_by=winner["id"],
            scope=scope,
        )
        gone.add(loser["id"])
        report.contradictions_resolved.append(
            {"kept": winner["id"], "deprecated": loser["id"], "rule": resolution}
        )
    return [f for f in facts if f["id"] not in gone]


def _supersede_procedures(store: Engine, principal: str, report: ConsolidationReport) -> None:
    rows = _rows(
        store,
        "procedural",
        F.all_of(F.eq("principal", principal), F.eq("state", "active")),
        ["id", "name", "proc_version", "meta"],
    )
    by_name: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_name.setdefault(row.get("name") or "", []).append(row)
    stamp = now()
    for name, versions in by_name.items():
        live = max(versions, key=lambda r: (r.get("proc_version") or 0, r["id"]))
        for row in versions:
            meta = _meta(row)
            if row is live:
                want: dict[str, Any] = {}
            else:
                want = {
                    "superseded_by_version": int(live.get("proc_version") or 0),
                    "superseded_by_id": live["id"],
                }
            have = {k: meta[k] for k in ("superseded_by_version", "superseded_by_id") if k in meta}
            if want == have:
                continue
            meta = {k: v for k, v in meta.items() if k not in ("superseded_by_version", "superseded_by_id")}
            meta.update(want)
            with store.lock.shared():
                store.table("procedural").update(
                    where=F.all_of(F.eq("id", row["id"]), F.eq("principal", principal)),
                    values={
                        "meta": json.dumps(meta, ensure_ascii=False, sort_keys=True) if meta else None,
                        "updated_at": stamp,
                    },
                )
            if want:
                report.procedures_superseded.append(
                    {
                        "id": row["id"],
                        "name": name,
                        "version": row.get("proc_version"),
                        "live_version": want["superseded_by_version"],
                    }
                )


# --- pairs awaiting review -------------------------------------------------------------------------

_PAIR_COLUMNS = ["id", "principal", "text", "meta", "agent", "created_at", "vector"]
LIVE_PAIR_FACTS = 5_000  # active facts of one principal up to which pairs are read from the facts themselves


def open_pairs(store: Engine, scope: Scope, columns: Iterable[str] = ()) -> OpenPairs:
    """Every pair of active facts in ``scope`` that awaits a person's decision: the one definition behind
    :func:`contradictions`, ``memdeck contradictions``, the review queue and the analytics.

    - a **contradiction** is a pair of one principal's active facts that consolidation's reader
      (:func:`contradicting_pairs`: one topic by the model's cosine, then the statements' structure) says
      cannot both hold. It is read from the facts as they are now, so it is the same whether or not
      consolidation has run since they were written (a run flags exactly these pairs in
      ``meta.contradicts``), and a pair leaves the list as soon as one side is deprecated or forgotten;
    - a **near-duplicate** is a pair of one principal's active facts with cosine >= :data:`NEAR_DUPLICATE`
      that is not a contradiction and whose values cannot coexist (two facts that can both hold are two
      facts, not one said twice).

    A pair a person dismissed on the review queue is left out of both. ``columns`` adds fact columns to
    :attr:`OpenPairs.facts` (the review queue's cards and checks read them).

    Reading pairs compares a principal's facts with each other, so it is bounded: a principal with more
    than :data:`LIVE_PAIR_FACTS` active facts in scope gets the contradictions its last consolidation run
    flagged (``meta.contradicts``, both sides still active) and no near-duplicates, and is named in
    :attr:`OpenPairs.flagged_only`.
    """
    where = F.all_of(scope.where(), F.eq("state", "active"))
    wanted = list(dict.fromkeys([*_PAIR_COLUMNS, *columns]))
    skip = dismissed(store)
    sizes: dict[str, int] = {}
    for row in _rows(store, "semantic", where, ["principal"]):
        sizes[row["principal"]] = sizes.get(row["principal"], 0) + 1
    found: list[Contradiction] = []
    near: list[NearDuplicate] = []
    facts_by_id: dict[str, dict[str, Any]] = {}
    flagged_only: list[str] = []
    model = thresholds(store)
    for principal in sorted(sizes):
        live = sizes[principal] <= LIVE_PAIR_FACTS
        columns_read = wanted if live else [c for c in wanted if c != "vector"]
        facts = sorted(
            _rows(store, "semantic", F.all_of(where, F.eq("principal", principal)), columns_read),
            key=lambda r: r["id"],
        )
        by_id = {f["id"]: f for f in facts}
        facts_by_id.update(by_id)
        parsed = {f["id"]: parse_statement(f["text"] or "") for f in facts}
        unit = _unit_vectors(facts) if live else {}
        if live:
            pairs = contradicting_pairs(facts, parsed, model.topic_gate)
        else:
            pairs = _flagged_pairs(facts)
            flagged_only.append(principal)
        for (a_id, b_id), (subject, predicate) in sorted(pairs.items()):
            key = pair_key("contradiction", a_id, b_id)
            if key in skip:
                continue
            a, b = by_id[a_id], by_id[b_id]
            pa, pb = parsed[a_id], parsed[b_id]
            if pa and pb and pa[:2] == pb[:2] and pa[2] != pb[2]:
                a_value, b_value, conflict = pa[2], pb[2], "different values of one attribute"
            else:
                rel = compare(a["text"] or "", b["text"] or "")
                conflict = rel.reason if rel.contradicts else predicate
                a_value, b_value = differing_spans(a["text"] or "", b["text"] or "")
                if not (a_value or b_value):
                    a_value, b_value = rel.a_value, rel.b_value
            sim = _similarity(unit, a_id, b_id)
            found.append(
                Contradiction(
                    principal=principal,
                    subject=subject,
                    predicate=predicate,
                    a_id=a_id,
                    a_text=a["text"] or "",
                    a_value=a_value,
                    b_id=b_id,
                    b_text=b["text"] or "",
                    b_value=b_value,
                    conflict=conflict,
                    similarity=None if sim is None else round(sim, 4),
                    key=key,
                )
            )
        if live:
            near += _near_duplicate_pairs(principal, facts, unit, set(pairs), skip, model.near_duplicate)
    return OpenPairs(facts_by_id, found, near, flagged_only)


def _flagged_pairs(facts: list[dict[str, Any]]) -> dict[tuple[str, str], tuple[str, str]]:
    """(id, id) -> (subject, predicate) for the pairs consolidation flagged whose both sides are in ``facts``."""
    ids = {f["id"] for f in facts}
    out: dict[tuple[str, str], tuple[str, str]] = {}
    for fact in facts:
        for flag in _meta(fact).get("contradicts") or []:
            other = flag.get("id") if isinstance(flag, dict) else None
            if isinstance(other, str) and other in ids and fact["id"] < other:
                out[(fact["id"], other)] = (str(flag.get("subject", "")), str(flag.get("predicate", "")))
    return out


def _unit_vectors(facts: list[dict[str, Any]]) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    for fact in facts:
        if fact.get("vector") is None or _meta(fact).get("unembedded"):
            continue
        vector = np.asarray(fact["vector"], dtype=np.float32)
        norm = float(np.linalg.norm(vector))
        if norm > 1e-12:
            out[fact["id"]] = vector / norm
    return out


def _similarity(unit: dict[str, np.ndarray], a: str, b: str) -> float | None:
    if a not in unit or b not in unit:
        return None
    return float(unit[a] @ unit[b])


def _near_duplicate_pairs(
    principal: str,
    facts: list[dict[str, Any]],
    unit: dict[str, np.ndarray],
    contradicting: set[tuple[str, str]],
    skip: set[str],
    threshold: float = NEAR_DUPLICATE,
) -> list[NearDuplicate]:
    ids = [f["id"] for f in facts if f["id"] in unit]
    if len(ids) < 2:
        return []
    text = {f["id"]: f["text"] or "" for f in facts}
    vectors = np.stack([unit[i] for i in ids])
    out: list[NearDuplicate] = []
    for start in range(0, len(ids), MERGE_BLOCK):
        block = vectors[start : start + MERGE_BLOCK] @ vectors.T
        rows, cols = np.nonzero(block >= threshold)
        for r, c in zip(rows.tolist(), cols.tolist(), strict=True):
            a, b = ids[start + r], ids[c]
            if a >= b or (a, b) in contradicting:
                continue
            blocker = merge_blocker(text[a], text[b])
            if blocker and "can coexist" in blocker:
                continue  # two facts that can both hold: nothing to decide
            key = pair_key("near_duplicate", a, b)
            if key in skip:
                continue
            out.append(NearDuplicate(principal, a, b, round(float(block[r, c]), 4), blocker, key))
    return out


def contradictions(store: Engine, scope: Scope) -> list[Contradiction]:
    """The contradictions awaiting review in ``scope`` (see :func:`open_pairs`), each pair once, ordered
    by principal and ids. Consolidation's ``meta.contradicts`` flags are the same pairs as of its last run."""
    return open_pairs(store, scope).contradictions


def report_line(report: ConsolidationReport) -> str:
    """One human line summarising a run."""
    if not report.changed:
        return f"{report.principal}: nothing to consolidate ({report.episodes_scanned} episodes, {report.facts_scanned} facts checked)"
    return (
        f"{report.principal}: {len(report.facts_added)} facts added, {len(report.facts_reinforced)} reinforced, "
        f"{len(report.merged)} merged, {len(report.contradictions_flagged)} contradictions flagged, "
        f"{len(report.procedures_superseded)} procedure versions superseded, "
        f"{len(report.summaries_added)} old sessions summarised "
        f"({report.episodes_scanned} episodes, {report.seconds:.1f} s)"
    )


__all__ = [
    "ConsolidationReport",
    "Contradiction",
    "NearDuplicate",
    "OpenPairs",
    "compare",
    "consolidate",
    "contradicting_pairs",
    "contradictions",
    "deprecate_many",
    "differing_spans",
    "merge_blocker",
    "open_pairs",
    "parse_statement",
    "report_line",
    "statement_key",
]
