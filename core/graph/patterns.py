"""Regular expressions and small word sets of the graph extractor (``extract.py``): dates, tokens, speaker
turns, and the verb and role patterns matched against the text between two names."""

from __future__ import annotations

import re

from memdeck.core.graph import words as w

MONTH = (
    r"(?:January|February|March|April|May|June|July|August|September|October|November|December"
    r"|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)\.?"
)
MONTH_FULL = "January|February|March|April|June|July|August|September|October|November|December"
WEEKDAY = "Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday"
DAY = r"\d{1,2}(?:st|nd|rd|th)?"
YEAR = r"(?:1[89]\d\d|20\d\d)"
NUMBER = (
    r"\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a few|a couple of|few|several"
)
DATE_RE = re.compile(
    rf"\b\d{{4}}-\d{{2}}-\d{{2}}\b"
    rf"|\b{DAY}\s+(?:of\s+)?{MONTH}(?:,?\s+{YEAR}\b)?"
    rf"|\b{MONTH}\s+{DAY}\b(?:,?\s+{YEAR}\b)?"
    rf"|\b{MONTH},?\s+{YEAR}\b"
    rf"|\b(?:[Ll]ast|[Nn]ext|[Tt]his|[Pp]ast|[Ee]arlier this|[Ll]ater this)\s+(?:week|weekend|month|year|summer"
    rf"|winter|spring|autumn|fall|night|morning|evening|afternoon|{WEEKDAY}|{MONTH_FULL})\b"
    rf"|\b(?:{NUMBER})\s+(?:days?|weeks?|months?|years?|decades?)\s+ago\b"
    rf"|\b(?:[Yy]esterday|[Tt]oday|[Tt]onight|[Tt]omorrow)\b"
    rf"|\b(?:{'|'.join(sorted(w.HOLIDAYS.split('|'), key=len, reverse=True))})(?!\w)"
    rf"|\b(?:{WEEKDAY})s?\b|\b(?:{MONTH_FULL})\b"
    rf"|(?<![\w.$£€-]){YEAR}s?(?![\w-]|\.\d)"
    # a quarter, a half or a fiscal year: "Q3", "Q2 2025", "H1", "FY2026", "FY 25"
    rf"|\b(?:Q[1-4]|H[12])(?:\s+(?:FY\s?)?{YEAR}|\s+FY\s?\d\d)?\b(?![-.]\w)"
    rf"|\bFY\s?(?:{YEAR}|\d\d)\b(?![-.]\w)"
)
LONE_MAY_RE = re.compile(r"\b(?:in|since|until|till|by|from|early|late|mid|of|last|next|this)\s+$", re.I)
# Each alternative starts only where a run starts, so a 10k-character word costs one pass, not a square.
EMAIL_URL_RE = re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+|(?<!\S)(?:https?://|www\.)\S+")
HANDLE_RE = re.compile(r"(?<![\w@.])@[A-Za-z0-9_](?:[\w.-]*\w)?")
QUOTE_RE = re.compile(r"\"([^\"\n]{1,120})\"|“([^”\n]{1,120})”|(?<!\w)'([^'\n]{1,120})'(?!\w)")
MINOR = w.words("a an the and or of in on at to for with from by but nor as vs into over under")
SPEAKER_RE = re.compile(r"^[ \t]*([A-Z][\w'.-]*(?:[ \t]+[A-Z][\w'.-]*){0,2})[ \t]*:[ \t]+(?=\S)", re.M)
SAID_RE = re.compile(
    r"^[ \t]*([A-Z][\w'.-]*(?:[ \t]+[A-Z][\w'.-]*){0,2})[ \t]+(?:said|says|asked|asks|replied"
    r"|replies|added|adds)[ \t]*[,:]?[ \t]*[\"“]",
    re.M,
)
TOKEN_RE = re.compile(
    r"(?P<abbr>\b(?:Mr|Mrs|Ms|Dr|Prof|St|Mt|Jr|Sr)\.|\b[A-Z]\.(?=\s+[A-Z]))"
    r"|(?P<word>[^\W\d_]\w*(?:(?:['&+-]|\.(?=[a-z\d])|/(?=[A-Z]))\w+)*\+*)"
    r"|(?P<num>\d+(?:[.,]\d+)*[A-Za-z]*)"
    r"|(?P<punct>[^\w\s])"
)
CONNECTORS = w.words("of de da do dos das del della di van von der den du la le y bin al &")
SAINTS = w.words("St St. Saint")
BE_CALLED = w.words("be is was were been being get gets got me him her them us you")
DETERMINERS = w.words("the a an my his her their our your its some this that new old")
SENTENCE_OPENERS = frozenset(".!?:;…-—–(\"“'‘")
INTERNAL_CAP_RE = re.compile(r"^[a-z]{1,2}[A-Z]|[a-z][A-Z]")
NAME_PREFIX_RE = re.compile(r"^(?:Mc|Mac|De|Di|Le|La|Van|Von|O')[A-Z]")
# Sentence openers by form: "Honestly", "Highly", "Training" (not "Emily", "Kelly", "Beijing", "Stirling").
# At a sentence start, adverbs, gerunds and past tenses ("Reviewed the plan", "Discussed Atlas") are verbs,
# not names; a double m keeps names like Mohammed.
OPENER_FORM_RE = re.compile(
    r"^[A-Z][a-z]{3,}(?<!i)ly$|^[A-Z][a-z]{2,}(?<![jql])ing$|^[A-Z][a-z]{4,}(?<!mm)ed$"
)
PLACEHOLDER_RE = re.compile(r"<[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*_\d+>")
VERSION_RE = re.compile(r"^\d+(?:\.\d+)*[a-z]?$")
PRONOUN_RE = re.compile(r"\b(?:I(?=\b|')|[Ww]e\b|me\b|us\b|[Mm]y\b|[Oo]ur\b)")
SENTENCE_END_RE = re.compile(r"(?<!\b[A-Z])(?<!\bMr|\bMs|\bDr|\bSt)(?<!\bMrs)(?<!\bProf)[.!?]+(?=\s|$)|\n")

ROLE_ALT = "|".join(re.escape(r) for r in sorted(w.ROLES, key=len, reverse=True))
ROLE_ADJ = r"(?:(?:new|former|ex-|older|younger|little|big|best|eldest|oldest|youngest|twin)\s+)?"
VERB_RE = re.compile(
    r"^(?P<carry>(?:,\s*)?(?:and|but|then|so)\s+(?:then\s+|later\s+|also\s+)?)?"
    r"(?P<with>(?:and|with)\s+(?:his|her|their|my|our)\s+[\w-]+\s+)?"
    rf"(?P<aux>{w.AUX})(?:" + "|".join(f"(?P<v{i}>{v[0]})" for i, v in enumerate(w.VERBS)) + rf"){w.DET}$"
)
COP_ROLE_RE = re.compile(
    rf"^,?\s*(?P<aux>{w.AUX})(?:(?:the|an?|his|her|their)\s+)?{ROLE_ADJ}(?P<role>{ROLE_ALT})"
    r"\s+(?:of|at|for|to)(?:\s+the)?$"
)
COP_ONLY_RE = re.compile(rf"^(?P<aux>{w.AUX})$")
ROLE_AFTER_RE = re.compile(rf"^'s?\s+{ROLE_ADJ}(?P<role>{ROLE_ALT})\b")
ROLE_AFTER_MY_RE = re.compile(rf"^\s+{ROLE_ADJ}(?P<role>{ROLE_ALT})\b")
POSS_ROLE_RE = re.compile(
    rf"^(?:'s?\s+)?{ROLE_ADJ}(?P<role>{ROLE_ALT})(?:\s*,)?(?:\s+(?:is|was|named|called))*$"
)
HIS_ROLE_RE = re.compile(rf"^(?:and|with|,)\s+(?:his|her|their)\s+{ROLE_ADJ}(?P<role>{ROLE_ALT}),?$")
MY_WORK_RE = re.compile(
    r"^(?:team|company|office|job|employer|department|lab|colleagues|coworkers)\s+(?:at|in)$"
)
FAVOURITE_RE = re.compile(
    r"^(?:'s?\s+)?(?:favourite|favorite|fave)\s+[\w-]+(?:\s+[\w-]+)?\s+(?:is|was|are|were)$"
)
OWNS_RE = re.compile(
    r"^'s?\s+(?:new\s+|old\s+|first\s+)?(?:phone|car|laptop|bike|computer|watch|camera|tablet|console"
    r"|guitar|e-reader)\s+(?:is|was)(?:\s+an?)?$"
)
PAIR_AFTER_RE = re.compile(
    r"^\s+(?:are\s+|were\s+|got\s+|have\s+been\s+|just\s+|first\s+)*(married|met|engaged)\b"
)
# "I didn't know Jens was a runner": what follows the name is a clause, not the end of "knows Jens".
CLAUSE_AFTER_RE = re.compile(
    r"^'?s?\s+(?:is|was|were|has|had|would|will|can|could|did|does|do|wants?|thinks?|loves?|likes?)\b"
)
# "a Coldplay concert": a name used as an adjective after "a"/"an" is not the object.
ATTRIBUTIVE_RE = re.compile(
    r"^\s+(?!(?:in|on|at|for|with|and|or|to|from|since|until|last|next|this|yesterday|today|tonight|tomorrow"
    r"|every|again|too|now|already|online|together|later|soon|yet|but|so|because|when|while|as|after|before"
    r"|during|instead|ago|\w+ly)\b)[a-z]"
)
# "X leads the team and reports to Y": the second verb phrase still has X as subject, but only when X was
# the subject of the first ("X met Y at a conference and moved to Z" is not about Y).
AND_VERB_RE = re.compile(
    r"^(?!(?:and|but|at|in|on|with|from|to|for|of|by|the|a|an|about|after|before|during|near|into)\b|,)"
    r"[^,;:.!?'\"]{1,60}?\s+(?:and|but)\s+(?P<rest>(?!and\b|but\b).+)$"
)
COORD_RE = re.compile(r"^(?:,|and|or|&|, and|, or|as well as)$")
NEGATION_RE = re.compile(w.NEGATION)
COPULA_RE = re.compile(w.COPULA)
FROM_WORDS = w.words("since from starting beginning")
UNTIL_WORDS = w.words("until till til to through thru before")
EVENT_PREDICATES = frozenset(
    [
        "moved to",
        "joined",
        "founded",
        "visited",
        "born in",
        "graduated from",
        "married to",
        "met",
        "left",
        "bought",
        "acquired",
        "sold",
    ]
)
PERSON_SUBJECT = frozenset(
    [
        "works at",
        "works in",
        "lives in",
        "moved to",
        "from",
        "born in",
        "married to",
        "studies at",
        "teaches at",
        "graduated from",
        "reports to",
        "read",
        "watched",
    ]
)
MONTH_NUMBERS = {
    m[:3].casefold(): i
    for i, m in enumerate(MONTH_FULL.split("|")[:4] + ["May"] + MONTH_FULL.split("|")[4:], start=1)
}


DATE_PREP_RE = re.compile(
    r"(?:\b(?:in|on|since|until|till|from|to|by|during|through|around|as of|for)\s+)?\x00"
)
COORD_KIND = frozenset(["and", ", and", "or", "&", ", not", "but not"])
