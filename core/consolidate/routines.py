"""Routines found offline: the same actions done in the same order in two or more sessions become a candidate
procedure for the person to accept or dismiss in the review queue (nothing is stored until then).

How a candidate is found, with no model:

1. **Steps.** Each episode of a closed session is read for actions: a known action verb (in its base,
   ``-s``, ``-ing``, ``-ed`` or irregular past form) where a step can start (at the start of a sentence or
   line, after a subject pronoun, after "then", "and", "first", "next", "finally", a comma or a list mark),
   with the content words after it, up to the next step, as its object ("I restarted nginx, then cleared
   the cache" -> ``restart nginx``, ``clear cache``). A session's steps are its episodes' steps in order.
2. **The same step.** Two steps are the same when their verbs are and their objects share at least half of
   the shorter one's words; a step with no object ("create it") matches nothing.
3. **The same routine.** For each pair of the principal's sessions, the longest common subsequence of their
   steps; :data:`MIN_STEPS` or more in common make a candidate. Candidates with the same steps are one
   candidate, supported by every session they came from.
4. **Already known.** A candidate whose steps an active procedure already holds is not proposed again.

Precision comes first (a wrong routine is worse than none): steps need a known action verb, a routine
needs :data:`MIN_STEPS` steps in the same order in two sessions, and ordinary conversation rarely repeats
three actions in order. bench/bench_routines.py measures it on a labelled set (bench/RESULTS-routines.md).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from memdeck.core import filters as F

if TYPE_CHECKING:
    from memdeck.core.storage.engine import Engine

MIN_STEPS = 3  # actions in the same order, in two sessions, before it is a routine
MAX_SESSIONS = 60  # the newest closed sessions of a principal that are compared pairwise
MAX_STEPS_PER_SESSION = 60
MAX_OBJECT_WORDS = 5
SAME_OBJECT = 0.5  # share of the shorter object's words two steps must have in common to be the same step


def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Verbs that name an action a routine is made of: work with systems, files and people, and everyday chores.
_ACTIONS = _wordset(
    """
    add apply approve archive assign attach back backup bake boil book bump buy call cancel charge check chop
    clean clear clone close commit compile configure confirm connect copy cook create cut delete deploy
    disable download drain drop email empty enable export feed fetch file fill fix flush format freeze
    generate grant heat import install invite label launch lint load lock log login logout mark merge
    migrate mix monitor mount move notify open order pack paste patch pay ping pin plug post pour preheat
    prepare print profile publish pull push put rebase reboot rebuild record refresh reindex release reload
    remove rename renew repair replace reply reset resize restart restore resume retry review revoke rinse
    roll rollback rotate run save scale scan schedule scrub send serve set setup share ship shut sign
    snapshot sort start stash stop submit sync tag test text tighten trigger truncate uninstall unlock
    unmount unplug update upgrade upload vacuum validate verify wash water wipe write
    """
)
_IRREGULAR_PAST = {
    "ran": "run",
    "built": "build",
    "sent": "send",
    "wrote": "write",
    "written": "write",
    "took": "take",
    "made": "make",
    "bought": "buy",
    "paid": "pay",
    "shut": "shut",
    "cut": "cut",
    "put": "put",
    "set": "set",
    "froze": "freeze",
    "frozen": "freeze",
    "fed": "feed",
}
_SUBJECTS = _wordset("i we you he she they it then and first next finally also later afterwards")
_CLAUSE_ENDS = _wordset("and then or but before after so because while until")
_LEADS = _wordset("to i'll we'll i've we've please")  # "had to restart", "please check"
_STOP = _wordset(
    """
    a an the this that these those my our your his her their its to of for on in at by with from into onto
    and or but so then again also all any some it them him her me us up down out off over just really very
    quickly first next finally after before once when while as is was were be been being are am have has had
    do did does done will would should could can may might must there here now today yesterday tomorrow
    """
)
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9'’\-]*|[0-9][\w.\-]*")
_BREAK = re.compile(r"(?:[.!?]+(?:\s|$)|\n+|;|:\s)")
_LIST_MARK = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s*")


def action(word: str) -> str | None:
    """The base form of an action verb ("restarted" -> "restart", "runs" -> "run"), else None."""
    w = word.lower().replace("’", "'")
    if w in _IRREGULAR_PAST:
        return _IRREGULAR_PAST[w]
    candidates = [w]
    if w.endswith("ies") and len(w) > 4:
        candidates.append(w[:-3] + "y")
    if w.endswith("ied") and len(w) > 4:
        candidates.append(w[:-3] + "y")
    if w.endswith("es") and len(w) > 3:
        candidates += [w[:-2], w[:-1]]
    if w.endswith("s") and len(w) > 3:
        candidates.append(w[:-1])
    if w.endswith("ed") and len(w) > 3:
        stem = w[:-2]
        candidates += [stem, w[:-1]]
        if len(stem) > 2 and stem[-1] == stem[-2]:
            candidates.append(stem[:-1])  # "stopped" -> "stop"
    if w.endswith("ing") and len(w) > 5:
        stem = w[:-3]
        candidates += [stem, stem + "e"]
        if len(stem) > 2 and stem[-1] == stem[-2]:
            candidates.append(stem[:-1])
    return next((c for c in candidates if c in _ACTIONS), None)


@dataclass(frozen=True)
class Step:
    """One action: its verb, the content words after it, and the words as written."""

    verb: str
    obj: frozenset[str]
    text: str
    episode: str = ""

    def same(self, other: Step) -> bool:
        """The same verb, and objects that share half of the shorter one's words ("bake the scones" and
        "bake the scones for twelve minutes"). A step with no object matches nothing: "create it" three
        times over says nothing about what was done."""
        if self.verb != other.verb or not self.obj or not other.obj:
            return False
        return len(self.obj & other.obj) / min(len(self.obj), len(other.obj)) >= SAME_OBJECT

    @property
    def key(self) -> str:
        return " ".join([self.verb, *sorted(self.obj)])


def steps(text: str, episode: str = "") -> list[Step]:
    """The actions in a text, in order (see the module docstring)."""
    found: list[Step] = []
    for piece in _BREAK.split(text):
        piece = _LIST_MARK.sub("", piece)
        matches = list(_WORD.finditer(piece))
        words = [m.group() for m in matches]
        start_ok = True  # a step may start here
        spans: list[tuple[str, int]] = []
        for i, word in enumerate(words):
            lower = word.lower()
            # A capitalised word inside a sentence is a name ("gave it to Mark"), not an action.
            verb = action(word) if start_ok and (i == 0 or not word[:1].isupper() or lower == "i") else None
            if verb is not None:
                spans.append((verb, i))
                start_ok = False
            else:
                start_ok = lower in _SUBJECTS or lower in _LEADS
            if piece[matches[i].end() :].lstrip().startswith(","):
                start_ok = True  # "restarted nginx, cleared the cache"
        ends = [
            i + 1
            for i, m in enumerate(matches)
            if words[i].lower() in _CLAUSE_ENDS or piece[m.end() :].lstrip().startswith(",")
        ]
        for n, (verb, begin) in enumerate(spans):
            end = spans[n + 1][1] if n + 1 < len(spans) else len(words)
            end = min([e for e in ends if e > begin] + [end])
            if end > begin + 1 and words[end - 1].lower() in _CLAUSE_ENDS:
                end -= 1  # "cleared the cache and" -> "cleared the cache"
            obj_words = [
                w.lower().strip("'’") for w in words[begin + 1 : end] if w.lower() not in _STOP | _SUBJECTS
            ][:MAX_OBJECT_WORDS]
            phrase = " ".join([verb, *words[begin + 1 : end]])  # as an instruction: "restart nginx"
            found.append(Step(verb, frozenset(_stem(w) for w in obj_words), phrase, episode))
    return found


def _stem(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("ches", "shes", "sses", "xes", "zes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def common_steps(a: Sequence[Step], b: Sequence[Step]) -> list[tuple[Step, Step]]:
    """The longest common subsequence of two sessions' steps, as pairs (a's step, b's step)."""
    n, m = len(a), len(b)
    table = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            if a[i].same(b[j]):
                table[i][j] = table[i + 1][j + 1] + 1
            else:
                table[i][j] = max(table[i + 1][j], table[i][j + 1])
    out: list[tuple[Step, Step]] = []
    i = j = 0
    while i < n and j < m:
        if a[i].same(b[j]) and table[i][j] == table[i + 1][j + 1] + 1:
            out.append((a[i], b[j]))
            i, j = i + 1, j + 1
        elif table[i + 1][j] >= table[i][j + 1]:
            i += 1
        else:
            j += 1
    return out


@dataclass
class Candidate:
    """A routine seen in two or more sessions: its steps (each in the shorter of the first two wordings), the
    sessions and the episodes."""

    principal: str
    steps: list[Step]
    sessions: list[str] = field(default_factory=list)
    episodes: list[str] = field(default_factory=list)

    @property
    def key(self) -> str:
        digest = hashlib.sha256("\n".join(s.key for s in self.steps).encode()).hexdigest()[:16]
        return f"routine:{self.principal}:{digest}"

    @property
    def name(self) -> str:
        first, last = self.steps[0].text, self.steps[-1].text
        return f"{first} ... {last}" if len(self.steps) > 2 else f"{first}, {last}"

    def matches(self, other: Sequence[Step]) -> bool:
        return len(other) == len(self.steps) and all(
            x.same(y) for x, y in zip(self.steps, other, strict=True)
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "steps": [s.text for s in self.steps],
            "sessions": list(self.sessions),
            "episodes": list(self.episodes),
        }


def find_routines(sessions: dict[str, list[tuple[str, str]]], principal: str) -> list[Candidate]:
    """Candidates from ``{session: [(episode id, text), ...]}`` (episodes in order), most supported first."""
    per_session = {
        name: [s for episode, text in episodes for s in steps(text, episode)][:MAX_STEPS_PER_SESSION]
        for name, episodes in sessions.items()
    }
    names = [n for n, s in per_session.items() if len(s) >= MIN_STEPS]
    # Only sessions that share MIN_STEPS verbs (counted with repeats) can share a routine: such pairs are
    # found through the verbs, so sixty sessions of chat do not cost 1,770 comparisons.
    by_verb: dict[str, list[tuple[int, int]]] = {}
    for x, name in enumerate(names):
        for verb, n in Counter(s.verb for s in per_session[name] if s.obj).items():
            by_verb.setdefault(verb, []).append((x, n))
    shared_verbs: Counter[tuple[int, int]] = Counter()
    for holders in by_verb.values():
        for at, (x, nx) in enumerate(holders):
            for y, ny in holders[at + 1 :]:
                shared_verbs[(x, y)] += min(nx, ny)
    found: list[Candidate] = []
    for (x, y), count in sorted(shared_verbs.items()):
        if count < MIN_STEPS:
            continue
        first, second = names[x], names[y]
        pairs = common_steps(per_session[first], per_session[second])
        if len(pairs) < MIN_STEPS:
            continue
        shared = [min(pair, key=lambda s: (len(s.text), s.text)) for pair in pairs]  # the shorter wording
        episodes = [s.episode for pair in pairs for s in pair]
        match = next((c for c in found if c.matches(shared)), None)
        if match is None:
            match = Candidate(principal, shared)
            found.append(match)
        for session in (first, second):
            if session not in match.sessions:
                match.sessions.append(session)
        match.episodes.extend(e for e in episodes if e and e not in match.episodes)
    # A shorter routine inside a longer one with the same sessions is the longer one seen in part.
    kept = [
        c
        for c in found
        if not any(
            o is not c
            and len(o.steps) > len(c.steps)
            and set(c.sessions) <= set(o.sessions)
            and len(common_steps(c.steps, o.steps)) == len(c.steps)
            for o in found
        )
    ]
    kept.sort(key=lambda c: (-len(c.sessions), -len(c.steps), c.key))
    return kept


def _known(procedures: Iterable[Sequence[str]], candidate: Candidate) -> bool:
    """Whether an active procedure already holds the candidate's steps in order."""
    for lines in procedures:
        held = [s for line in lines for s in steps(line)]
        if len(common_steps(candidate.steps, held)) == len(candidate.steps):
            return True
    return False


def routine_candidates(store: Engine, principal: str) -> list[Candidate]:
    """The principal's routines not yet held by a procedure, from their newest closed sessions."""
    if not store.has_table("episodic"):
        return []
    where = F.all_of(F.eq("principal", principal), F.eq("state", "active"), F.eq("closed", True))
    rows = store.scan("episodic", ["id", "text", "session", "created_at"], where).to_pylist()
    by_session: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        if row["session"]:
            by_session.setdefault(str(row["session"]), []).append(row)
    epoch = datetime.min

    def newest(name: str) -> datetime:
        return max((r["created_at"] or epoch).replace(tzinfo=None) for r in by_session[name])

    chosen = sorted(by_session, key=newest, reverse=True)[:MAX_SESSIONS]
    sessions = {
        name: [
            (str(r["id"]), str(r["text"]))
            for r in sorted(
                by_session[name], key=lambda r: ((r["created_at"] or epoch).replace(tzinfo=None), r["id"])
            )
        ]
        for name in chosen
    }
    candidates = find_routines(sessions, principal)
    if not candidates or not store.has_table("procedural"):
        return candidates
    held = store.scan(
        "procedural", ["text"], F.all_of(F.eq("principal", principal), F.eq("state", "active"))
    )["text"].to_pylist()
    procedures = [str(t).splitlines() for t in held]
    return [c for c in candidates if not _known(procedures, c)]


def accept_routine(store: Engine, candidate: Candidate) -> str:
    """Store a candidate as a procedure of its principal (the person accepted it in review); returns its id.

    The steps are the candidate's, as instructions; the episodes it was seen in are its provenance."""
    from memdeck.core.graph.memory.write import remember_many
    from memdeck.core.records import MemoryInput

    lines = [s.text for s in candidate.steps]
    [result] = remember_many(
        store,
        [
            MemoryInput(
                text="\n".join([candidate.name, *lines]),
                tier="procedural",
                principal=candidate.principal,
                agent="memdeck",
                meta={"found_in_sessions": list(candidate.sessions), "accepted_in": "review"},
                extra={"name": candidate.name, "steps": lines, "learned_from": list(candidate.episodes)},
            )
        ],
    )
    if result.memory is None:
        from memdeck.core.errors import MemdeckError

        raise MemdeckError(f"the routine was not stored: {result.reason or result.action}")
    return result.memory.id
