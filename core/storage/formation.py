"""The formation filter: which writes are too low in value to keep.

Agents often write every turn, and turns like "ok", "thanks!" or "let me check" would crowd recall out of
useful memories. When ``formation_filter.enabled`` is set, :meth:`Store.remember_many` asks
:func:`low_value_reason` about each text and skips the ones it names a reason for; ``force`` overrides.
The test is deliberately narrow: a text is skipped only when *every* word of it belongs to a known
acknowledgement or filler phrase, or when it is too short to carry a fact. Anything else is kept.
"""

from __future__ import annotations

import re
import unicodedata

# Whole phrases, as word tuples. A text made only of these (in any order and number) is skipped.
_ACKNOWLEDGEMENTS = [
    "ok",
    "okay",
    "okey",
    "k",
    "kk",
    "okie",
    "ok then",
    "alright",
    "all right",
    "right",
    "sure",
    "sure thing",
    "yes",
    "yeah",
    "yep",
    "yup",
    "ya",
    "no",
    "nope",
    "nah",
    "fine",
    "cool",
    "great",
    "nice",
    "good",
    "very good",
    "perfect",
    "awesome",
    "excellent",
    "lovely",
    "neat",
    "sweet",
    "wonderful",
    "amazing",
    "thanks",
    "thank you",
    "thank you very much",
    "thanks a lot",
    "many thanks",
    "thx",
    "ty",
    "tysm",
    "cheers",
    "much appreciated",
    "appreciated",
    "appreciate it",
    "sounds good",
    "sounds great",
    "sounds fine",
    "sounds right",
    "looks good",
    "looks great",
    "lgtm",
    "got it",
    "gotcha",
    "understood",
    "noted",
    "will do",
    "roger",
    "roger that",
    "copy",
    "copy that",
    "makes sense",
    "agreed",
    "exactly",
    "indeed",
    "of course",
    "no problem",
    "no worries",
    "np",
    "you're welcome",
    "youre welcome",
    "you are welcome",
    "welcome",
    "my pleasure",
    "done",
    "sure why not",
    "why not",
    "hi",
    "hello",
    "hey",
    "hey there",
    "hi there",
    "bye",
    "goodbye",
    "see you",
    "see ya",
    "later",
    "good morning",
    "good night",
    "good evening",
    "good afternoon",
    "lol",
    "haha",
    "hahaha",
    "hehe",
    "wow",
    "oh",
    "ah",
    "i see",
    "oh i see",
    "ok thanks",
    "great thanks",
    "yes please",
    "no thanks",
    "please",
    "go ahead",
    "go on",
    "continue",
    "next",
    "that's it",
    "thats it",
    "that is all",
    "that's all",
    "thats all",
    "you too",
    "same",
    "same here",
    "me too",
    "true",
    "correct",
    "right on",
    "for sure",
]
_FILLER = [
    "um",
    "umm",
    "uh",
    "uhh",
    "hmm",
    "hmmm",
    "mm",
    "mhm",
    "er",
    "erm",
    "well",
    "so",
    "anyway",
    "anyways",
    "let me think",
    "let me check",
    "let me see",
    "one moment",
    "one sec",
    "one second",
    "just a moment",
    "just a sec",
    "just a second",
    "give me a moment",
    "give me a sec",
    "hold on",
    "wait",
    "brb",
    "i don't know",
    "i dont know",
    "idk",
    "not sure",
    "maybe",
    "perhaps",
    "whatever",
    "nothing",
    "never mind",
    "nevermind",
    "nvm",
    "test",
    "testing",
    "ping",
    "...",
    "like",
    "you know",
]
_ACK = {tuple(p.split()) for p in _ACKNOWLEDGEMENTS}
_FILL = {tuple(p.split()) for p in _FILLER}
_LONGEST = max(len(p) for p in _ACK | _FILL)

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*", re.UNICODE)

# Fewer letters and digits than this cannot hold a fact ("blue", "yes", "42" alone); more can.
MIN_CHARS = 8
MIN_WORDS = 2


def _words(text: str) -> list[str]:
    folded = unicodedata.normalize("NFKC", text).lower().replace("’", "'")
    return _WORD.findall(folded)


def _covered(words: list[str], phrases: set[tuple[str, ...]]) -> bool:
    """Whether the words split wholly into known phrases ("ok great thanks", "thank you ok")."""
    n = len(words)
    reach = [False] * (n + 1)
    reach[0] = True
    for i in range(n):
        if not reach[i]:
            continue
        for size in range(1, min(_LONGEST, n - i) + 1):
            if tuple(words[i : i + size]) in phrases:
                reach[i + size] = True
    return reach[n]


_PADDING = {"so", "much", "very", "really", "a", "lot", "all", "the", "for", "that", "just", "and", "then"}


# A speaker's label in front of a chat line ("User: ", "[10:32] Assistant: ", "Maria: "): what follows is judged.
_SPEAKER = re.compile(r"^\s*(?:\[[^\]\n]{1,30}\]\s*)?[^\W\d_][\w.'-]*(?:\s[\w.'-]+){0,2}\s*:\s+(?=\S)")


def low_value_reason(text: str) -> str | None:
    """Why ``text`` is not worth remembering, or None if it should be kept.

    >>> low_value_reason("Thanks!") is not None
    True
    >>> low_value_reason("User: ok thanks") is not None
    True
    >>> low_value_reason("Alice is allergic to peanuts") is None
    True
    """
    words = _words(_SPEAKER.sub("", text, count=1))
    if not words:
        return "no words: only punctuation, symbols or emoji"
    # Padding words ("thanks so much", "ok then", "very nice") never make an acknowledgement a fact.
    core = [w for w in words if w not in _PADDING] or words
    if _covered(core, _ACK):
        return "acknowledgement: says nothing to remember"
    if _covered(core, _ACK | _FILL):
        return "filler: says nothing to remember"
    letters = sum(len(w) for w in words)
    if len(words) < MIN_WORDS and letters < MIN_CHARS:
        return f"too short to mean anything ({len(words)} word, {letters} characters)"
    return None
