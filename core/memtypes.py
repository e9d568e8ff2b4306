"""Memory types: what a memory is (a preference, a decision, a fact, ...), given by its writer or inferred.

The types are a closed list, set by the writer (``memdeck add --type``, MCP ``remember(type=...)``,
``Store.remember(type=...)``, an import's ``type`` field) or, when none is given, inferred by
:func:`infer_type`, precision first: a text nothing is sure about gets no type (None) rather than a guess.

Two judges, measured on hand-labelled sets in bench/RESULTS-types.md:

* rules over the wording (an exception name, "we decided", "I prefer", a stated time with a past verb,
  "seems", "X is Y");
* with a semantic embedding model, the memory's own vector (computed on the write path anyway) against
  labelled example texts shipped with the package (``data/memtypes_examples.json``; their vectors are
  embedded once per model and process, and shipped for the packaged model). The :data:`NEIGHBOURS` nearest
  examples vote, each with weight ``exp((cosine - best cosine) / TEMPERATURE)``.

The model arbitrates: a rule's type stands only when it gets at least :data:`VETO` of the vote
(:data:`WEAK_VETO` for fact, event and observation, the rules that read the least: "X is ..." is a fact
only if its neighbours do not all say otherwise); a text no rule types takes the vote's winner only when it
has :data:`FILL` of the vote. Without a semantic model (the hash embedder) the rules alone answer.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memdeck.core import packaged
from memdeck.core.names import MEMORY_TYPES, check_type

if TYPE_CHECKING:
    import numpy as np

MAX_CHARS = (
    500  # a type is read from the start of a text: its wording is there, and a long text costs no more
)


def _rx(*patterns: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE)


# A stack trace, an exception class, an HTTP error status, or a thing that failed / crashed / timed out.
_ERROR = _rx(
    r"\btraceback \(most recent call last\)",
    r"(?-i:\b[A-Z][A-Za-z]*(?:Error|Exception)\b)(?!\s+(?:handling|handler|message)s?\b)",
    r"\b(?:fail(?:s|ed|ing)?|crash(?:es|ed)?|errored(?: out)?|timed out|throws|threw)\b"
    r"(?!\s+(?:to (?:reproduce|happen)|safe))",
    r"(?-i:\b[45]\d\d (?:[A-Z][a-z]+ )*[A-Z][a-z]+\b)",
    r"\bsegmentation fault\b",
    r"\bexit code [1-9]\d*\b",
    r"\bpermission denied\b",
    r"\b(?:ran|runs|running) out of (?:memory|disk|space)\b",
    r"\bconnection (?:reset|refused)\b",
    r"\b(?:broke|rejected|refused)\b(?! (?:record|ground|even)\b)",
    # a thing that will not work, a log line's level, a bounced payment
    r"\b(?:won't|will not|doesn't|does not|can't|cannot|couldn't|could not|wouldn't) (?:connect|start|load|"
    r"open|boot|sync|save|print|install|compile|build|log ?in|respond)\b",
    r"(?-i:\b(?:ERROR|FATAL|ERR!)(?:\b|\s))",
    r"\b(?:returned|says|said|shows?|showing|with)(?: an)? error\b",
    r"\bbounced\b",
)
# Something fixed or avoided is not an error report ("fixed the crash", "no longer fails").
_FIXED = _rx(r"\b(?:fixed|resolved|no longer|never (?:fails|crashes))\b")

# An imperative at the start: always / never / don't / make sure / remember to / please / you must ...
_INSTRUCTION = _rx(
    r"^(?:always|never|don't|do not|make sure|be sure to|remember to|please|avoid|ensure|keep|use|reply|"
    r"answer|write|include|check|call|send|ask|refer|respond|run|put|convert|remind|address|mention|cc|"
    r"list|format|flag|forward|confirm|tell)\b(?! (?:is|are|was|were|has|have)\b)",
    r"^you (?:should|must|need to|have to)\b",
    r"^double-check\b",
    r"^(?:if|when|whenever|before|after|for|in) [^,]{3,60}, (?:always |never |please |first )?(?:point|send|"
    r"tell|ask|use|reply|answer|forward|refer|check|call|write|include|don't|do not|list|take|run|keep|put|"
    r"start|add|avoid|make sure|give|respond|mention|cc|remind|leave|stop|wait|confirm)\b",
)
# "Please remember that X is Y" states a fact, not a routine; a question is not an instruction.
_NOT_INSTRUCTION = _rx(r"^(?:please )?(?:remember|note|keep in mind) that\b", r"\?\s*$")

_DECISION = _rx(
    r"\b(?:we|i|they|the team|the board|the committee)(?: have|'ve)? (?:decided|agreed|chose|settled on)\b",
    r"\b(?:team|board|committee|management)\b.{0,20}\b(?:agreed|approved|decided|settled on|chose)\b",
    r"\bwe(?:'ll| will| are going to|'re going to| are going with|'re going with) (?:use|go with|switch|move|"
    r"adopt|stick with|publish|ship|drop|keep)\b",
    r"\bwe're going with\b",
    r"\b(?:we|i|they|the team)(?: have|'ve)? (?:opted|went) (?:for|with)\b",
    r"\b(?:i|we)(?: have|'ve)? made up (?:my|our) minds?\b",
    r"^(?:the )?final (?:call|decision)\b",
    r"^the plan is to\b",
    r"\bwe(?:'re| are) switching\b",
    r"^decision:",
    r"\bgoing forward,? we\b",
    r"^(?:the )?user(?: has)? (?:decided|chose|opted|agreed) (?:to|on|for|against)\b",
    r"^(?:going with|settled:|decided:|chose|opted for)\b",
)

_PREFERENCE = _rx(
    r"\b(?:i|we)(?: really| much)? (?:prefer|like|love|hate|dislike|enjoy|adore|detest)\b",
    r"\b(?:i|we) (?:don't|do not|can't|cannot) (?:stand|like|bear)\b",
    r"\b(?:i'?d|would) rather\b",
    r"\b(?:preferred|go-to)\b",
    r"^(?:the )?user(?:'s)? (?:really )?(?:prefers|likes|loves|hates|dislikes|enjoys)\b",
    r"^not (?:big on|(?:a )?(?:big )?fan of|keen on)\b",
    r"\bmore of an? \w+ person\b",
    r"\b(?:i'm|i am|he's|she's|they're|is|are)(?: not)? (?:a )?(?:big |huge )?fans? of\b",
    r"\bfavou?rite\b",
    r"^[A-Z][a-z]+ (?:really )?(?:prefers|likes|loves|hates|dislikes|enjoys)\b",
    r"^(?:she|he|they|my \w+) (?:really )?(?:prefers?|likes?|loves?|hates?|dislikes?|enjoys?)\b",
    r"^[A-Z][a-z]+ (?:doesn't|does not) like\b",
)

# Something that happened at a time: a day, "yesterday", "last week", "two weeks ago", a date.
_WHEN = _rx(
    r"\b(?:yesterday|today|tonight|this (?:morning|afternoon|evening)|last (?:night|week|month|year|summer|"
    r"winter|spring|autumn|monday|tuesday|wednesday|thursday|friday|saturday|sunday))\b",
    r"\b(?:on|last) (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b",
    r"\bover the weekend\b",
    r"\b(?:\w+ )?(?:days?|weeks?|months?|years?) ago\b",
    r"\bon \d{1,2} (?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)\w*\b",
    r"\bin (?:january|february|march|april|may|june|july|august|september|october|november|december)\b",
    r"\bat \d{1,2}:\d\d\b",
    r"\bon the \d{1,2}(?:st|nd|rd|th)\b",
    r"\b(?:at|by) the (?:end|start|beginning) of (?:january|february|march|april|may|june|july|august|"
    r"september|october|november|december)\b",
)
_PAST = _rx(
    r"\b(?:had|met|went|flew|held|gave|moved|visited|started|joined|finished|launched|shipped|called|got|"
    r"took place|renewed|opened|signed|was|were|did|made|left|arrived|came)\b",
    r"\b(?!(?:need|feed|speed|seed|indeed|hundred|red|bed|shed|breed|bleed|embed|proceed|exceed|succeed)\b)\w+ed\b",
)

_OBSERVATION = _rx(
    r"\b(?:seems?|appears?) to\b",
    r"\b(?:seems?|appears?|looks?) (?:very |rather |quite )?\w+",
    r"\bit looks like\b",
    r"\b(?:sounds?|feels?) (?:very |rather |quite )?(?:tired|stressed|happy|unhappy|annoyed|worried|keen|busy)\b",
    r"\btakes? (?:longer|more time)\b",
    r"\bwhenever\b",
    r"\b(?:generally|almost always|nearly always|every time)\b",
    r"^noticed\b",
    r"\bi(?:'ve)? noticed\b",
    r"\btends? to\b",
    r"\b(?:usually|often|rarely|seldom|mostly|typically)\b",
    r"^most \w+",
)

# A plain statement about a named thing: "X is Y", "X's Z is", "X lives in / works at / has / speaks".
_FACT = _rx(
    r"^(?:(?-i:[A-Z][a-z'-]*)|the \w+(?: \w+)?|our \w+(?: \w+)?|my \w+|his \w+|her \w+|their \w+)(?:'s \w+(?: \w+)?)?"
    r" (?:is|are|has|have|lives|works|speaks|runs|opens|starts|uses) ",
)


# "X is ..." that is not a plain fact: a comparison or an impression ("is noticeably faster"), a plan or an
# ongoing change ("is going to", "is switching"), a liking ("is a fan of"), a hedge or a judgement.
_NOT_FACT = _rx(
    r"\b(?:is|are|has|have) (?:\w+ly )?(?:\w+er|more|less|better|worse|faster|slower|going to|about to|"
    r"planning|supposed to|likely|probably|maybe|perhaps|\w+ing)\b",
    r"\b(?:fan|plan|idea|goal|hope|worry|problem|issue)\b",
    r"\b(?:should|might|could|would|will|won't)\b",
    r"\b(?:great|nice|terrible|awful|annoying|amazing|lovely|boring|good|bad)\b",
)


def rule_type(text: str) -> str | None:
    """The type the wording rules give a text, or None when no rule is sure.

    The rules run from the most specific wording to the least: an error report, an instruction, a
    decision, a preference, then an event (something that happened at a stated time), an observation
    (a tendency or an impression), and last a plain statement of fact."""
    line = " ".join(text[:MAX_CHARS].split())
    if not line:
        return None
    if _ERROR.search(line) and not _FIXED.search(line):
        return "error"
    if _INSTRUCTION.search(line) and not _NOT_INSTRUCTION.search(line):
        return "instruction"
    if _DECISION.search(line):
        return "decision"
    if _PREFERENCE.search(line) and not line.endswith("?"):
        if _OBSERVATION.search(line) and not re.search(r"\bfavou?rite\b", line, re.IGNORECASE):
            return "observation"  # "he seems to prefer X" is an impression of a preference
        return "preference"
    if _WHEN.search(line) and _PAST.search(line):
        return "event"
    if _OBSERVATION.search(line):
        return "observation"
    if _FACT.search(line) and not _NOT_FACT.search(line) and not line.endswith("?"):
        return "fact"
    return None


# The vote of the nearest labelled examples (chosen on the labelled sets, each scored with the examples of the
# other sets only: bench/bench_types.py).
NEIGHBOURS = 20
TEMPERATURE = 0.1
FILL = 0.6  # share of the vote a type needs to be given to a text no rule types
VETO = 0.05  # share of the vote a rule's type needs to stand
WEAK_VETO = 0.10  # the same for the rules that read the least
_WEAK = frozenset({"fact", "event", "observation"})
_EXAMPLES = "memtypes_examples"  # core/data/: the texts (.json) and the packaged model's vectors (.npy)


@dataclass(frozen=True)
class TypeExamples:
    """Labelled example texts' unit vectors under one model, and their types."""

    vectors: np.ndarray  # (n, dim) float32, unit rows
    types: tuple[str, ...]

    @classmethod
    def of(cls, vectors: np.ndarray, types: Sequence[str]) -> TypeExamples:
        import numpy as np  # only a write with a semantic model gets here: a command that reads never does

        v = np.asarray(vectors, dtype=np.float32)
        v = v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
        return cls(v, tuple(types))

    def vote(self, vector: np.ndarray) -> dict[str, float] | None:
        """Each type's share of the nearest examples' weighted vote, or None for a vector that cannot be
        compared (zero, or another model's size)."""
        import numpy as np

        v = np.asarray(vector, dtype=np.float32).reshape(-1)
        norm = float(np.linalg.norm(v))
        if norm == 0.0 or v.shape[0] != self.vectors.shape[1] or not self.types:
            return None
        sims = self.vectors @ (v / norm)
        k = min(NEIGHBOURS, sims.shape[0])
        near = np.argpartition(-sims, k - 1)[:k]
        weights = np.exp((sims[near] - sims[near].max()) / TEMPERATURE)
        shares: dict[str, float] = {}
        for i, w in zip(near.tolist(), weights.tolist(), strict=True):
            shares[self.types[i]] = shares.get(self.types[i], 0.0) + w
        total = sum(shares.values())
        return {t: w / total for t, w in shares.items()}

    def judge(self, text: str, vector: np.ndarray) -> str | None:
        """The rules' type if the vote does not reject it, else the vote's clear winner, else None."""
        ruled = rule_type(text)
        shares = self.vote(vector)
        if shares is None:
            return ruled
        if ruled is not None:
            return ruled if shares.get(ruled, 0.0) >= (WEAK_VETO if ruled in _WEAK else VETO) else None
        best = max(shares, key=lambda t: shares[t])
        return best if shares[best] >= FILL else None


def example_texts() -> list[tuple[str, str]]:
    """The shipped labelled examples as (type, text), in file order."""
    return packaged.labelled(_EXAMPLES, "examples")


def packaged_model() -> str:
    """The model whose vectors of the examples are shipped."""
    return packaged.model_of(_EXAMPLES)


_cache: dict[str, TypeExamples] = {}
_lock = threading.Lock()


def examples_for(model: str, embed: Callable[[list[str]], np.ndarray] | None) -> TypeExamples | None:
    """The examples under ``model``: the shipped vectors for the packaged model, else embedded once per
    process with ``embed`` (None when there is no way to get them)."""

    with _lock:
        found = _cache.get(model)
        if found is not None:
            return found
        items = example_texts()
        vectors = packaged.vectors(_EXAMPLES, model, [x for _t, x in items], embed)
        if vectors is None:
            return None
        found = TypeExamples.of(vectors, [t for t, _x in items])
        _cache[model] = found
        return found


def infer_type(
    text: str,
    vector: np.ndarray | None = None,
    model: str | None = None,
    embed: Callable[[list[str]], np.ndarray] | None = None,
) -> str | None:
    """The type a text most plainly is, or None when unsure (see the module docstring).

    ``vector`` is the text's own embedding under the semantic model ``model`` (the write path has it);
    ``embed`` embeds the examples the first time another model than the packaged one is used. Without a
    vector the rules alone answer."""
    if vector is None or model is None:
        return rule_type(text)
    examples = examples_for(model, embed)
    if examples is None:
        return rule_type(text)
    return examples.judge(text, vector)


__all__ = ["MEMORY_TYPES", "TypeExamples", "check_type", "examples_for", "infer_type", "rule_type"]
