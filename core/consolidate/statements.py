"""Explicit statements in an episode's text, turned into standalone facts without any model.

A person often says outright what should be kept: "remember that my daughter's school is St Mary's",
"I prefer window seats", "we decided to ship on Fridays", "my favourite colour is green". This module finds
such sentences with a small set of anchored patterns and returns each as a fact sentence. It is built for
precision (a wrong fact is worse than none): a pattern must start the sentence (after a greeting or a
filler such as "oh" or "also"), and a sentence is dropped when it is a question, a hypothetical ("if",
"maybe", "might", "would"), negated (outside a "remember that ..." request, whose words are kept as said),
reported speech ("she said ...", "he told me ..."), quoted text, or a plan that was called off.

When a line names its speaker ("Alice: ...", "Alice said: ...", ``Alice said, "..."``), first-person
words are resolved to that name: "Alice: my dog is called Rex" -> "Alice's dog is called Rex". Lines
spoken by an assistant, a bot or the system are not the person's statements and are skipped.

Standard library only; a cheap regular-expression prefilter skips text with none of the trigger words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memdeck.core.consolidate.sentences import split_sentences

__all__ = ["KINDS", "Statement", "explicit_facts", "explicit_statements"]

KINDS = ("remember", "preference", "decision", "usage", "attribute", "personal")

# Any text without one of these words cannot hold an explicit statement.
_PREFILTER = re.compile(
    r"\b(?:remember|reminder|forget|note|prefer|like|love|hate|dislike|enjoy|favou?rite|decided|agreed|settled|"
    r"going\s+with|chose|picked|opted|uses?|using|my|our|allergic|live|work|based|from|mind|reference|"
    r"i\s+am|i'm|i\s+have|i've\s+got|call\s+me|eat|drink|smoke)\b",
    re.IGNORECASE,
)

_NON_PEOPLE = {
    "assistant",
    "bot",
    "ai",
    "system",
    "agent",
    "tool",
    "model",
    "gpt",
    "claude",
    "chatgpt",
    "copilot",
}
_SKIP = "\0skip"
_PRONOUNS = {"he", "she", "they", "it", "someone", "somebody", "everyone", "people", "you", "we", "i"}
_GENERIC_SPEAKERS = {"user", "human", "me", "customer", "client", "person"}
_NOT_SPEAKERS = {
    "note",
    "notes",
    "fyi",
    "ps",
    "p.s",
    "update",
    "decision",
    "decisions",
    "reminder",
    "summary",
    "todo",
    "important",
    "remember",
    "re",
    "subject",
    "question",
    "answer",
    "edit",
    "warning",
    "tip",
    "nb",
    "q",
    "a",
    "step",
    "action",
    "status",
    "result",
    "context",
    "topic",
    "agenda",
    "because",
    "thanks",
    "thank",
    "sure",
    "yes",
    "yeah",
    "no",
    "ok",
    "okay",
    "well",
    "so",
    "also",
    "btw",
    "reason",
    "hint",
    "example",
    "tl;dr",
    "tldr",
    "background",
    "details",
    "info",
    "fact",
    "facts",
    "memo",
    "log",
    "entry",
    "hi",
    "hello",
    "hey",
    "dear",
    "p.p.s",
    "bonus",
    "aside",
    "caveat",
    "correction",
    "conclusion",
    "outcome",
    "response",
    "reply",
    "request",
    "task",
    "goal",
    "problem",
    "issue",
    "fix",
    "solution",
    "idea",
    "plan",
    "preferences",
    "preference",
    "profile",
    "bio",
    "about",
    "today",
    "yesterday",
    "tomorrow",
    "meeting",
}

_SPEAKER = re.compile(
    r"^\s*(?:[Tt]he\s+)?(?P<name>[A-Za-z][\w'.-]*(?:\s[A-Z][\w'.-]*)?)\s*(?:\((?P<note>[^()]{1,30})\)\s*)?"
    r"(?:(?P<said>said|says|wrote|writes)\s*[:,]|:)\s*(?P<rest>.*)$",
    re.DOTALL,
)

_FILLER = re.compile(
    r"^(?:(?:oh|ah|ok|okay|so|also|and|plus|btw|by\s+the\s+way|anyway|hey|hi|hello|well|yeah|yes|right|"
    r"actually|just\s+so\s+you\s+know|for\s+the\s+record|fyi|heads\s+up|one\s+more\s+thing|"
    r"for\s+what\s+it'?s\s+worth)\b[\s,:!-]*)+",
    re.IGNORECASE,
)

_QUESTION_START = re.compile(
    r"^(?:do|does|did|is|are|was|were|can|could|should|would|will|shall|have|has|what|which|who|whom|whose|"
    r"why|when|where|how|any\s+idea|wonder)\b",
    re.IGNORECASE,
)
_HYPOTHETICAL = re.compile(
    r"\b(?:if|maybe|perhaps|might|could|would|should|probably|possibly|(?-i:may)|unless|suppose|supposing|"
    r"wonder|wondering|considering|thinking\s+(?:about|of)|not\s+sure|unsure|wish|hope|hoping|guess|"
    r"imagine|pretend|someday|one\s+day|eventually|plan\s+to|planning|want\s+to|wants\s+to|'d)\b|'d\b",
    re.IGNORECASE,
)
_NEGATION = re.compile(
    r"\b(?:not|never|no|nothing|none|nobody|neither|nor|cannot|no\s+longer|anymore|any\s+more)\b|n't\b|n’t\b",
    re.IGNORECASE,
)
_REPORTED = re.compile(
    r"\b(?:said|says|say|told|tells|tell|asked|asks|claims?|claimed|thinks?|thought|believes?|believed|"
    r"heard|mentioned|mentions|according\s+to|apparently|supposedly|reckons?|joked|jokes|pretended|"
    r"pretends|quote|quoted|wrote|writes|read\s+that)\b",
    re.IGNORECASE,
)
_CANCELLED = re.compile(
    r"\b(?:cancel(?:l?ed|s)?|called\s+(?:it\s+)?off|scrap(?:ped)?|scratch\s+that|never\s*mind|nevermind|"
    r"changed\s+(?:our|my|their)\s+minds?|reversed|revert(?:ed)?|dropped\s+(?:that|the\s+idea|it)|"
    r"no\s+longer|used\s+to|was\s+going\s+to|were\s+going\s+to|backed\s+out|fell\s+through|"
    r"not\s+anymore|anymore)\b",
    re.IGNORECASE,
)
_JOKE = re.compile(r"\b(?:lol|lmao|rofl|haha\w*|jk|kidding|joking)\b|:p\b|😂|🤣|😜|😉", re.IGNORECASE)
_CONTRAST = re.compile(r"\b(?:but|however|although|though|except|until|unless|whereas)\b", re.IGNORECASE)
_QUOTES = re.compile(r"[\"“”‘«»]|(?:^|\s)'\w")
_SECOND_PERSON = re.compile(r"\b(?:you|your|yours|u|ur)\b", re.IGNORECASE)
_DEICTIC_OBJECT = re.compile(
    r"^(?:it|that|this|those|these|them|him|her|how|what|when|where|the\s+way|your|you|seeing|hearing|whatever|whichever|"
    r"anything|something|everything|stuff|things|"
    r"reading\s+(?:that|this|your)|the\s+(?:idea|sound|look|photo|picture|pic|pics|photos|pictures|"
    r"video|post|story|song|one)\b|all\s+of\s+(?:it|that|this)|so\s+much|a\s+lot|lots|too|very|it's)\b",
    re.IGNORECASE,
)

# "remember that ...": an imperative at the start of the sentence, never "I remember" or "do you remember".
_REMEMBER = re.compile(
    r"^(?:please\s+)?(?:(?:always\s+)?remember|don'?t\s+forget|do\s+not\s+forget|never\s+forget|"
    r"(?:please\s+)?(?:make\s+a\s+)?note(?:\s+down)?|keep\s+in\s+mind|bear\s+in\s+mind|for\s+future\s+reference,?|reminder(?=\s*:))"
    r"(?:\s+(?:that|this)\s*:?|\s*[:,-])?\s+(?P<body>.+)$",
    re.IGNORECASE,
)
_REMEMBER_WEAK = re.compile(
    r"^(?:time|day|night|trip|week|summer|when|how|what|who|where|the\s+time|me\b|to\b)", re.IGNORECASE
)

_PREFERENCE = re.compile(
    r"^i\s+(?:really\s+|absolutely\s+|truly\s+|totally\s+|do\s+|much\s+|strongly\s+|generally\s+|always\s+)?"
    r"(?P<verb>prefer|like|love|hate|dislike|enjoy|adore|detest|loathe)\s+(?P<obj>.+)$",
    re.IGNORECASE,
)
_FAVOURITE = re.compile(
    r"^(?P<owner>my|our)\s+(?P<attr>(?:all[- ]time\s+)?favou?rite\s+[\w' -]{1,40}?)\s+(?:is|are)\s+(?P<val>.+)$",
    re.IGNORECASE,
)
_DECISION = re.compile(
    r"^(?P<who>we|the\s+team|our\s+team)\s+(?:have\s+|'ve\s+|finally\s+|just\s+|officially\s+|all\s+)*"
    r"(?P<verb>decided\s+(?:to|on|that)|agreed\s+(?:to|on|that)|settled\s+on|chose|picked|opted\s+(?:for|to)|"
    r"are\s+going\s+with|'re\s+going\s+with|are\s+going\s+to\s+use|will\s+use|'ll\s+use|will\s+go\s+with|'ll\s+go\s+with|"
    r"will\s+be\s+using|'ll\s+be\s+using)\s+(?P<obj>.+)$",
    re.IGNORECASE,
)
_USAGE = re.compile(
    r"^(?P<who>we|our\s+team|the\s+team|i)\s+(?:always\s+|mostly\s+|now\s+|currently\s+|still\s+)?"
    r"(?P<verb>uses|use|are\s+using|'re\s+using|am\s+using|'m\s+using|rely\s+on|run|deploy\s+(?:to|on)|host\s+on)\s+"
    r"(?P<obj>.+)$",
    re.IGNORECASE,
)
_ATTRIBUTE = re.compile(
    r"^(?P<owner>my|our)\s+(?P<attr>[\w'-]+(?:\s+[\w'-]+){0,3}?)\s+(?P<cop>is|are|'s)\s+(?P<val>.+)$",
    re.IGNORECASE,
)
# Who a person is, durably: a diet, a condition, a handedness, a chronotype ("I'm vegetarian", "I am a night
# owl"); a plain "I am tired" or "I'm a bit busy" is a passing state and stays out.
_IDENTITY = re.compile(
    r"^i(?:\s+am|'m)\s+(?:also\s+|strictly\s+|fully\s+|now\s+)?(?P<article>a\s+|an\s+)?(?:(?:strict|lifelong|committed)\s+)?"
    r"(?P<what>vegetarian|vegan|pescatarian|pescetarian|flexitarian|teetotal|teetotaller|teetotaler|"
    r"(?:gluten|lactose|dairy)[- ]intolerant|coeliac|celiac|diabetic|type\s+[12]\s+diabetic|epileptic|asthmatic|"
    r"colou?r[- ]?blind|deaf|hard\s+of\s+hearing|left[- ]handed|right[- ]handed|ambidextrous|"
    r"night\s+owl|early\s+(?:bird|riser)|morning\s+person|non[- ]smoker|ex[- ]smoker|smoker|"
    r"muslim|jewish|christian|hindu|buddhist|sikh|atheist|agnostic|kosher|halal)\b(?P<rest>.*)$",
    re.IGNORECASE,
)
# What a person never takes: "I don't drink coffee", "I never eat pork" (a negation kept on purpose).
_ABSTAIN = re.compile(
    r"^i\s+(?:do\s+not|don't|never|no\s+longer|can't|cannot)\s+(?P<verb>eat|drink|smoke|fly)\s+(?P<obj>.+)$",
    re.IGNORECASE,
)
_ABSTAIN_NOT_AN_OBJECT = frozenset(
    {
        "at",
        "in",
        "out",
        "there",
        "here",
        "after",
        "before",
        "late",
        "much",
        "anything",
        "enough",
        "alone",
        "often",
        "too",
        "with",
        "on",
        "during",
        "while",
        "when",
        "that",
        "this",
        "it",
        "those",
        "these",
        "them",
    }
)
# A household that holds: "I have two kids", "I've got three cats".
_HOUSEHOLD = re.compile(
    r"^i\s+(?:have|'ve\s+got|have\s+got)\s+(?P<n>a|an|one|two|three|four|five|six|seven|eight|nine|ten|\d{1,2})\s+"
    r"(?P<what>kids?|children|child|sons?|daughters?|brothers?|sisters?|siblings?|cats?|dogs?|grandchildren|"
    r"grandkids?|stepchildren|stepsons?|stepdaughters?)\b(?P<rest>.*)$",
    re.IGNORECASE,
)
_CALL_ME = re.compile(
    r"^(?:please\s+)?call\s+me\s+(?P<name>(?-i:[A-Z])[\w'-]*(?:\s(?-i:[A-Z])[\w'-]*)?)$", re.IGNORECASE
)

_PERSONAL = re.compile(
    r"^i(?:\s+am|'m)\s+(?:(?:also|severely|very|mildly|really|deathly)\s+)?(?P<what>allergic\s+to\s+.+)$|"
    r"^i\s+(?:currently\s+|now\s+|still\s+)?(?P<verb>live|work)\s+(?P<prep>in|at|for|as|near|on|from)\s+(?P<obj>.+)$|"
    r"^i\s+am\s+(?P<origin>based\s+in|from|originally\s+from)\s+(?P<place>(?-i:[A-Z]).*)$",
    re.IGNORECASE,
)

# Attributes that name a passing state or an opinion, not a durable fact.
_EPHEMERAL_ATTR = {
    "point",
    "guess",
    "question",
    "questions",
    "concern",
    "worry",
    "problem",
    "issue",
    "bad",
    "head",
    "day",
    "week",
    "weekend",
    "morning",
    "evening",
    "night",
    "mind",
    "heart",
    "back",
    "hope",
    "idea",
    "thought",
    "thoughts",
    "feeling",
    "feelings",
    "fear",
    "understanding",
    "impression",
    "take",
    "opinion",
    "answer",
    "excuse",
    "fault",
    "pleasure",
    "turn",
    "mood",
    "plan",
    "plans",
    "bet",
    "advice",
    "suggestion",
    "gut",
    "reason",
    "goal",
    "dream",
    "wish",
    "hunch",
    "theory",
    "apologies",
    "apology",
    "condolences",
    "schedule",
    "life",
    "stomach",
    "eyes",
    "legs",
    "feet",
    "hands",
    "throat",
    "voice",
    "battery",
    "internet",
    "wifi",
    "connection",
    "computer",
    "laptop",
    "screen",
    "car",
    "train",
    "flight",
    "bus",
    "order",
    "package",
    "delivery",
    "lunch",
    "dinner",
    "breakfast",
    "coffee",
    "tea",
    "food",
    "trip",
    "vacation",
    "holiday",
    "kids",
    "family",
    "friends",
    "parents",
    "way",
    "work",
    "job",
    "house",
    "place",
    "room",
    "office",
    "bag",
    "phone",
    "code",
    "build",
    "test",
    "tests",
    "pr",
    "branch",
    "deploy",
    "server",
    "patience",
    "favorite",
    "favourite",
    "treat",
    "honor",
    "honour",
    "response",
    "reply",
    "god",
    "gosh",
    "goodness",
    "word",
    "friend",
    "pal",
    "buddy",
    "dear",
    "love",
    "darling",
    "whole",
}
# Durable attributes whose one-word name would otherwise look like a passing state.
_DURABLE_HEAD = {
    "name",
    "birthday",
    "email",
    "address",
    "number",
    "school",
    "employer",
    "company",
    "manager",
    "boss",
    "doctor",
    "dentist",
    "team",
    "role",
    "title",
    "hometown",
    "nationality",
    "language",
    "religion",
    "age",
    "blood",
    "type",
    "allergy",
    "allergies",
    "diet",
    "size",
    "password",
    "username",
    "handle",
    "stack",
    "database",
    "editor",
    "ide",
    "shell",
    "os",
    "framework",
    "timezone",
    "time",
    "zone",
    "city",
    "country",
    "major",
    "degree",
    "university",
    "college",
    "breed",
    "anniversary",
    "motto",
    "pronouns",
    "wife",
    "husband",
    "partner",
    "son",
    "daughter",
    "mother",
    "father",
    "mom",
    "mum",
    "dad",
    "brother",
    "sister",
    "dog",
    "cat",
    "pet",
    "kid",
    "child",
    "grandmother",
    "grandfather",
    "grandma",
    "grandpa",
    "aunt",
    "uncle",
    "cousin",
    "fiance",
    "fiancee",
    "girlfriend",
    "boyfriend",
    "landlord",
    "accountant",
    "lawyer",
    "therapist",
    "vet",
    "gym",
    "bank",
    "car's",
    "surname",
    "nickname",
    "middle",
    "budget",
    "salary",
    "rent",
    "deadline",
    "repo",
    "repository",
    "region",
    "cloud",
    "provider",
    "ci",
    "registry",
    "license",
    "licence",
    "standup",
    "sync",
    "meeting",
    "retro",
    "policy",
    "convention",
    "style",
    "branch",
    "release",
    "sprint",
    "office",
    "phone",
    "job",
    "house",
    "car",
    "lactose",
}
# A value that opens with one of these describes a passing state ("my phone is dead", "my code is broken").
_TRANSIENT_VALUE = re.compile(
    r"^(?:so|really|very|too|a\s+bit|kind\s+of|kinda|sort\s+of|quite|pretty|totally|completely|super|"
    r"still|just|already|now|currently|today|tonight|finally|almost|nearly|about|actually|literally|"
    r"getting|going|coming|being|killing|driving|making|acting|broken|broke|dead|down|up|out|off|on|over|"
    r"done|busy|tired|sick|ill|sore|late|early|full|empty|hungry|sad|happy|excited|great|good|fine|ok|okay|"
    r"awesome|amazing|terrible|awful|bad|better|worse|crazy|nuts|weird|wild|gone|away|back|here|there|"
    r"lost|missing|stuck|failing|flaky|red|green|slow|fast|open|closed|ready|finished|nuts|insane|"
    r"cool|nice|lovely|beautiful|cute|adorable|fun|hilarious|funny|interesting|boring|huge|tiny|"
    r"in\s+(?:the|a|bed|town|hospital|trouble)|at\s+(?:the|home|work|school)|with\s+|like\s+|what|that|this|"
    r"why|how|where|who|one\s+of|the\s+best|the\s+worst|all|also|a\s+mess|a\s+disaster|a\s+nightmare|"
    r"having|doing|trying|starting|leaving|visiting|staying|turning|celebrating|moving|looking)\b",
    re.IGNORECASE,
)
# A moment in time: what happened then is an event, not a durable statement.
_EPISODIC_TIME = re.compile(
    r"\b(?:yesterday|today|tonight|tomorrow|this\s+(?:morning|afternoon|evening|weekend|week)|"
    r"last\s+(?:night|week|weekend|month|year|time)|ago|right\s+now|at\s+the\s+moment|these\s+days|lately)\b",
    re.IGNORECASE,
)
# A reaction to something just shown or said: "I love the colours", "I love this park", "I love making him happy".
_REACTION_OBJECT = re.compile(
    r"^(?:the|all\s+the|his|her|their|its|your)\b|\b(?:it|this|that|these|those|him|her|them|here|there|"
    r"what|how|who|why|like\s+this|like\s+that)\b",
    re.IGNORECASE,
)
# Chatter after a comma: "I love jazz, especially Coltrane" -> "I love jazz".
_AFTER_COMMA = re.compile(
    r",\s*(?:it|it's|they|they're|he|she|this|that|which|especially|but|so|and\s+(?:it|they|I)|never|not|no|"
    r"the\s+[\w-]+\s+(?:is|are|was|were)|plus|though|too|haha|lol|by\s+the\s+way|btw|fyi|anyway|anyways|thanks|thank\s+you|please|ok|okay|right)\b.*$",
    re.IGNORECASE,
)
_CHOICE_OBJECT = re.compile(
    r"^(?:the|this|that|these|those)\b|\b(?:option|options|one|ones|version|former|latter|first|second|third|"
    r"last|alternative|choice|draft|proposal|suggestion)\b",
    re.IGNORECASE,
)
_TRAILING_TOO = re.compile(r"\s+(?:too|as\s+well|also)$", re.IGNORECASE)
# Words of encouragement: "remember that it takes time", "... the experience matters". Kept only when the
# body also names something specific (a first-person word, a number, a proper name).
_ADVICE_WORDS = re.compile(
    r"\b(?:important|matters?|key|success(?:ful)?|worth|okay|ok|normal|valid|enough|journey|growth|progress|"
    r"happiness|patience|rush|proud|strong|deserve|deserves|best\s+(?:thing|way)|takes?\s+time|"
    r"never\s+too\s+late|one\s+step|step\s+by\s+step|alone|believe|kindness|mistakes?)\b",
    re.IGNORECASE,
)
_SPECIFIC = re.compile(r"\b(?:i|my|me|we|our|us)\b|\d|\s(?-i:[A-Z])\w", re.IGNORECASE)
# A "remember ..." that is advice or a platitude, not a fact to keep.
_REMEMBER_ADVICE = re.compile(
    r"^(?:[A-Z][a-z]+,|[Rr]emember|[Ff]orget|it's|it\s+is|every|everything|always|just|life|there|that's|what|we're\s+all|"
    r"we\s+are\s+all|you|to\s)",
)
# First person -> the speaker's name, for simple verb forms.
_VERBS_S = {
    "am": "is",
    "was": "was",
    "have": "has",
    "do": "does",
    "don't": "doesn't",
    "go": "goes",
    "prefer": "prefers",
    "like": "likes",
    "love": "loves",
    "hate": "hates",
    "dislike": "dislikes",
    "enjoy": "enjoys",
    "adore": "adores",
    "detest": "detests",
    "loathe": "loathes",
    "live": "lives",
    "work": "works",
    "use": "uses",
    "need": "needs",
    "eat": "eats",
    "drink": "drinks",
    "own": "owns",
    "drive": "drives",
    "speak": "speaks",
    "play": "plays",
    "run": "runs",
    "take": "takes",
    "wear": "wears",
    "always": "always",
    "never": "never",
    "usually": "usually",
    "only": "only",
    "also": "also",
    "can't": "can't",
    "cannot": "cannot",
    "can": "can",
    "will": "will",
    "won't": "won't",
    "rely": "relies",
    "study": "studies",
    "teach": "teaches",
    "volunteer": "volunteers",
}


@dataclass(frozen=True)
class Statement:
    kind: str  # one of KINDS
    text: str  # the standalone fact sentence


# Transcript decoration around a speaker's name: "- **Alice**:", "[10:32] Alice:", "[user] ...".
_LINE_MARK = re.compile(
    r"^(?:[-*>•+]+\s+|\d{1,2}:\d{2}(?::\d{2})?\s*(?:[-–]\s*)?|\[\d{1,2}:\d{2}(?::\d{2})?\]\s*)+"
)
_BRACKET_SPEAKER = re.compile(r"^\[(?P<name>[A-Za-z][\w .'-]{0,30})\]\s*:?\s*")


def _undecorate(line: str) -> str:
    line = _LINE_MARK.sub("", line.strip())
    line = re.sub(r"^(\*\*|__)(?P<name>[^*_]{1,40}?)\1\s*:", r"\g<name>:", line)
    line = re.sub(r"^(\*\*|__)(?P<name>[^*_]{1,40}?):\1", r"\g<name>:", line)
    return _BRACKET_SPEAKER.sub(r"\g<name>: ", line)


def _speaker_lines(text: str) -> list[tuple[str | None, str]]:
    """Split text into (speaker, line) pairs. A line without a speaker continues the turn above it; lines
    of an assistant, a bot or the system, or reported with a pronoun ("She said: ..."), are left out."""
    out: list[tuple[str | None, str]] = []
    turn: str | None = None  # the speaker whose turn continues; _SKIP while an assistant is speaking
    for raw in text.splitlines() or [text]:
        line = _undecorate(raw)
        if not line:
            continue
        m = _SPEAKER.match(line)
        if m is None:
            if turn != _SKIP:
                out.append((turn, line))
            continue
        name = m.group("name")
        rest = m.group("rest").strip()
        first = name.split()[0].lower().strip(".")
        said = m.group("said") is not None
        note = (m.group("note") or "").strip().lower()
        if first in _PRONOUNS or name.lower() in _NON_PEOPLE or first in _NON_PEOPLE or note in _NON_PEOPLE:
            turn = _SKIP  # not the person's own statement
            continue
        speaker: str | None = None
        if first in {"note", "notes", "remember", "reminder", "nb", "fyi"} and not said:
            pass  # "Note: ..." asks for the rest to be kept: the whole line goes to the patterns
        elif first in _NOT_SPEAKERS or name.lower() in _NOT_SPEAKERS or name.lower() in _GENERIC_SPEAKERS:
            line = rest  # a label such as "Update:", or a speaker with no name ("User:")
        elif name[0].isupper():
            if len(rest) >= 2 and rest[0] in '"“' and rest[-1] in '"”':
                rest = rest[1:-1].strip()  # a transcript turn quoted whole: its speaker's own words
            elif said and rest[:1] in '"“':
                turn = _SKIP
                continue  # a quotation cut short: not a clean turn
            speaker, line = name, rest
        else:
            out.append((turn if turn != _SKIP else None, line))
            continue
        turn = speaker
        out.append((speaker, line))
    return out


_CONTRACTIONS = [
    (re.compile(r"\b(we|they)'re\b", re.IGNORECASE), r"\1 are"),
    (re.compile(r"\b(we|they|i)'ve\b", re.IGNORECASE), r"\1 have"),
    (re.compile(r"\b(we|they|i)'ll\b", re.IGNORECASE), r"\1 will"),
    (re.compile(r"\bi'm\b", re.IGNORECASE), "I am"),
]


def _clean(sentence: str) -> str:
    s = sentence.strip().strip("*-•> \t")
    s = s.replace("’", "'").replace("‘", "'")
    s = _FILLER.sub("", s).strip(" ,")
    for pattern, repl in _CONTRACTIONS:
        s = pattern.sub(repl, s)
    # "my name's Priya" -> "my name is Priya" (not "my dog's name is Rex", which has its own verb)
    return re.sub(
        r"^(my|our)\s+(name|surname|nickname|birthday|email|address|number|hometown)'s\s+",
        r"\1 \2 is ",
        s,
        flags=re.IGNORECASE,
    )


def _trim_value(value: str) -> str:
    value = value.strip().rstrip(".!;:, ")
    value = _AFTER_COMMA.sub("", value)
    value = re.split(
        r"\s+and\s+(?:he|she|they|it|we|i|my|our|his|her|their)\b", value, maxsplit=1, flags=re.IGNORECASE
    )[0]
    value = _TRAILING_TOO.sub("", value)
    # keep the statement itself, not the chatter after a dash or an emoticon
    value = re.split(r"\s+[-–—]\s+|\s+(?:lol|haha+|:\)|:-\)|;\))\b|\s+:\)|\s+:-\)", value, maxsplit=1)[0]
    return value.strip().rstrip(".!;:, ")


def _possessive(name: str) -> str:
    return f"{name}'" if name.endswith("s") else f"{name}'s"


def _resolve(body: str, speaker: str | None) -> str:
    """Rewrite first-person words as the speaker's name; keep them when no speaker is named."""
    if not speaker:
        return body
    if not body.split():
        return body
    text = re.sub(r"\b(?:my|My)\b", _possessive(speaker), body)
    text = re.sub(r"\bmine\b", _possessive(speaker), text)
    text = re.sub(r"\b(?:I'm|I am)\b", f"{speaker} is", text)
    text = re.sub(r"\bI've\b", f"{speaker} has", text)
    text = re.sub(r"\bI'll\b", f"{speaker} will", text)

    def verb(m: re.Match[str]) -> str:
        v = m.group(1)
        return f"{speaker} {_VERBS_S.get(v.lower(), v)}"

    text = re.sub(
        r"\bI\s+([\w']+)", lambda m: verb(m) if m.group(1).lower() in _VERBS_S else m.group(0), text
    )
    text = re.sub(r"\b(?:me|myself)\b", speaker, text)
    if re.search(r"\bI\b", text):
        return f"{speaker} said: {body}"
    return text


def _ok_sentence(s: str, *, allow_negation: bool = False) -> bool:
    if not s or s.endswith("?") or _QUESTION_START.match(s) or _JOKE.search(s):
        return False
    if _HYPOTHETICAL.search(s) or _REPORTED.search(s) or _QUOTES.search(s) or _CONTRAST.search(s):
        return False
    return allow_negation or not _NEGATION.search(s)


def _attr_head(attr: str) -> str:
    return re.sub(r"'s$", "", attr.lower().split()[-1]).strip("'")


def _durable_attribute(attr: str) -> bool:
    words = attr.lower().replace("'s", " 's").split()
    if not words:
        return False
    head = _attr_head(attr)
    if "'s" in words:  # "my daughter's school": a possessive chain names a durable relation
        owner = words[: words.index("'s")]
        return bool(owner) and owner[-1] in _DURABLE_HEAD and head not in {"day", "mood", "birthday party"}
    if head in _EPHEMERAL_ATTR and head not in _DURABLE_HEAD:
        return False
    if len(words) == 1:
        return head in _DURABLE_HEAD
    return words[-1] in _DURABLE_HEAD or words[0] in _DURABLE_HEAD


def _value_ok(value: str) -> bool:
    if not value or _TRANSIENT_VALUE.match(value) or _SECOND_PERSON.search(value):
        return False
    words = value.split()
    first = words[0]
    if first.islower() and first.endswith(("ing", "ed")) and first not in {"called", "named", "based"}:
        return False  # "delayed", "growing fast": a passing state
    return 1 <= len(words) <= 12


def _one(sentence: str, speaker: str | None, cancelled: bool) -> Statement | None:
    s = _clean(sentence)
    if len(s.split()) < 2:
        return None
    m = _REMEMBER.match(s)
    if m:
        body = _clean(m.group("body"))
        body = re.sub(r"^that\s+", "", body, flags=re.IGNORECASE)
        if sentence.strip().endswith("?") or _REMEMBER_WEAK.match(body) or len(body.split()) < 3:
            return None
        first = body.split()[0]
        if _REMEMBER_ADVICE.match(body) or (first.islower() and first.endswith("ing")):
            return None
        if _ADVICE_WORDS.search(body) and not _SPECIFIC.search(body):
            return None
        if not _ok_sentence(body, allow_negation=True) or _SECOND_PERSON.search(body):
            return None
        body = _trim_value(body)
        return Statement("remember", _resolve(body, speaker))
    m = _ABSTAIN.match(_trim_value(s))
    if m and _ok_sentence(s, allow_negation=True) and not _EPISODIC_TIME.search(s):
        obj = _trim_value(m.group("obj"))
        first = obj.split()[0].lower() if obj.split() else ""
        if first in _ABSTAIN_NOT_AN_OBJECT:
            return None  # "I never eat at that place", "I don't drink much": no thing taken
        if 1 <= len(obj.split()) <= 6 and not _DEICTIC_OBJECT.match(obj) and not _SECOND_PERSON.search(obj):
            return Statement("preference", _resolve(f"I do not {m.group('verb').lower()} {obj}", speaker))
        return None
    # A negation only in a clause after the statement ("I prefer mornings, never after 4pm") leaves it whole.
    if (
        not _ok_sentence(s, allow_negation=True)
        or _NEGATION.search(_trim_value(s))
        or _EPISODIC_TIME.search(s)
    ):
        return None
    s = _trim_value(s)
    m = _IDENTITY.match(s)
    if m:
        rest = m.group("rest").strip()
        if rest and not re.match(r"^(?:and\b|now\b|since\b|for\b)", rest, re.IGNORECASE):
            return None  # "I am vegan cheese's biggest fan": the word is not the whole statement
        article = (m.group("article") or "").lower()
        return Statement("personal", _resolve(f"I am {article}{m.group('what').lower()}", speaker))
    m = _HOUSEHOLD.match(s)
    if m:
        named = re.match(r"^\s+(?:named|called)\s+(?-i:[A-Z])[\w'-]*", m.group("rest"), re.IGNORECASE)
        what = f"{m.group('n').lower()} {m.group('what').lower()}{named.group(0) if named else ''}"
        return Statement("personal", _resolve(f"I have {what}", speaker))
    m = _CALL_ME.match(s)
    if m:
        return Statement("attribute", _resolve(f"My preferred name is {m.group('name')}", speaker))
    m = _FAVOURITE.match(s)
    if m:
        val = _trim_value(m.group("val"))
        if not 1 <= len(val.split()) <= 10 or _DEICTIC_OBJECT.match(val) or _SECOND_PERSON.search(val):
            return None
        return Statement("preference", _resolve(f"{m.group('owner')} {m.group('attr')} is {val}", speaker))
    m = _PREFERENCE.match(s)
    if m:
        obj = _trim_value(m.group("obj"))
        if _DEICTIC_OBJECT.match(obj) or _SECOND_PERSON.search(obj) or not 1 <= len(obj.split()) <= 10:
            return None
        if obj.lower() in {"to", "it"} or (
            m.group("verb").lower() != "prefer" and _REACTION_OBJECT.search(obj)
        ):
            return None
        if _CHOICE_OBJECT.search(obj) and not re.search(r"\b(?:to|over|than|rather)\b", obj, re.IGNORECASE):
            return None  # "I prefer the second option": a choice among things just shown
        if re.match(r"^(?:it|that|this)\b", obj, re.IGNORECASE):
            return None
        return Statement("preference", _resolve(f"I {m.group('verb').lower()} {obj}", speaker))
    m = _DECISION.match(s)
    if m:
        if cancelled:
            return None
        obj = _trim_value(m.group("obj"))
        if m.group("verb").lower().endswith(" to") and len(obj.split()) < 2:
            return None  # "we decided to wait", "we agreed to disagree": no decision to keep
        if not 1 <= len(obj.split()) <= 14 or _DEICTIC_OBJECT.match(obj) or _SECOND_PERSON.search(obj):
            return None
        who = m.group("who")
        verb = m.group("verb").lower()
        verb = re.sub(r"^'re\b", "are", verb)
        verb = re.sub(r"^'ll\b", "will", verb)
        return Statement("decision", _resolve(f"{who} {verb} {obj}", speaker))
    m = _USAGE.match(s)
    if m:
        obj = _trim_value(m.group("obj"))
        if not 1 <= len(obj.split()) <= 12 or _DEICTIC_OBJECT.match(obj) or _SECOND_PERSON.search(obj):
            return None
        if not re.search(r"[A-Z0-9]|\b(?:for|to|as|in|on)\b", obj):
            return None  # "we use ..." names a tool (a proper name) or says what it is for
        who = m.group("who")
        verb = m.group("verb").lower()
        verb = re.sub(r"^'re\b", "are", verb)
        verb = re.sub(r"^'m\b", "am", verb)
        return Statement("usage", _resolve(f"{who} {verb} {obj}", speaker))
    m = _PERSONAL.match(s)
    if m:
        if m.group("what"):
            what = _trim_value(m.group("what"))
            return Statement("personal", _resolve(f"I am {what}", speaker))
        if m.group("origin"):
            place = _trim_value(m.group("place"))
            if not 1 <= len(place.split()) <= 6:
                return None
            return Statement("personal", _resolve(f"I am {m.group('origin').lower()} {place}", speaker))
        obj = _trim_value(m.group("obj"))
        if not 1 <= len(obj.split()) <= 8 or _DEICTIC_OBJECT.match(obj) or _TRANSIENT_VALUE.match(obj):
            return None
        if m.group("verb").lower() == "live" and m.group("prep").lower() not in {"in", "at", "near"}:
            return None  # "I live for ...", "I live on coffee"
        if re.match(
            r"^(?:the\s+moment|this|that|it|home|weekends?|nights?|mornings?|late|hard|remotely)\b",
            obj,
            re.IGNORECASE,
        ):
            return None
        return Statement(
            "personal", _resolve(f"I {m.group('verb').lower()} {m.group('prep').lower()} {obj}", speaker)
        )
    m = _ATTRIBUTE.match(s)
    if m:
        attr = m.group("attr")
        val = _trim_value(m.group("val"))
        if not _durable_attribute(attr) or not _value_ok(val) or _DEICTIC_OBJECT.match(val):
            return None
        cop = "is" if m.group("cop") == "'s" else m.group("cop").lower()
        return Statement("attribute", _resolve(f"{m.group('owner')} {attr} {cop} {val}", speaker))
    return None


def explicit_statements(text: str) -> list[Statement]:
    """Every explicit, durable statement in ``text``, in order, each once."""
    if not text or not _PREFILTER.search(text):
        return []
    sentences = [
        (speaker, sentence)
        for speaker, line in _speaker_lines(text)
        for sentence in split_sentences(line, semicolons=True)
        if sentence.strip()
    ]
    # A decision is void when it, or anything said after it, calls a plan off ("... we scrapped it").
    last_cancel = max(
        (i for i, (_, sentence) in enumerate(sentences) if _CANCELLED.search(sentence)), default=-1
    )
    found: list[Statement] = []
    seen: set[str] = set()
    for i, (speaker, sentence) in enumerate(sentences):
        if not _PREFILTER.search(sentence):
            continue
        st = _one(sentence, speaker, cancelled=i <= last_cancel)
        if st is None:
            continue
        fact = st.text[:1].upper() + st.text[1:]
        key = fact.lower()
        if key not in seen:
            seen.add(key)
            found.append(Statement(st.kind, fact))
    return found


def explicit_facts(text: str) -> list[str]:
    """The fact sentences of :func:`explicit_statements`."""
    return [s.text for s in explicit_statements(text)]
