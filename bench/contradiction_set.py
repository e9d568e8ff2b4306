"""A labelled set of statement pairs for contradiction detection and merge safety.

Each pair is (a, b, label) with label one of: ``contradiction`` (same subject and attribute, values that
cannot both hold), ``compatible`` (look-alikes that can both be true: values that coexist, different
subjects, different attributes, past and present), ``paraphrase`` (the same fact in other words) and
``refinement`` (one adds details). Pairs are built from generic frames (an attribute with a slot and
values of one kind) crossed with several subjects, plus hand-written pairs; the frames cover every
value kind the detector must know about (time, date, place, number, language, version, owner, product,
preference) and the hard negatives next to them.
"""

from __future__ import annotations

import itertools
import random

SUBJECTS = ["Alice", "The user", "Marco", "Dr. Chen", "My sister", "Priya", "The customer", "Jonas"]
THINGS = ["The API", "The billing service", "Our mobile app", "The data pipeline", "The website", "The CLI"]

# Exclusive attributes: (frame with {s} and {v}, values). Any two different values contradict.
EXCLUSIVE = [
    ("{s} lives in {v}", ["Lisbon", "Berlin", "Toronto", "Osaka", "Nairobi"]),
    ("{s}'s favourite colour is {v}", ["blue", "green", "orange", "purple"]),
    ("{s} prefers {v} units", ["metric", "imperial"]),
    ("{s} prefers {v}", ["tea", "coffee", "hot chocolate"]),
    ("{s} prefers {v} seats", ["window", "aisle"]),
    ("{s} works at {v}", ["Acme", "Globex", "Initech", "Umbrella"]),
    ("{s} was born in {v}", ["1984", "1991", "2002"]),
    ("{s} is {v} years old", ["34", "41", "29"]),
    ("{s}'s native language is {v}", ["Portuguese", "Japanese", "German", "Swahili"]),
    ("{s}'s time zone is {v}", ["UTC", "PST", "CET", "IST"]),
    ("{s}'s phone number is {v}", ["555-0134", "555-8812"]),
    ("{s} is married to {v}", ["Sam", "Robin", "Kai"]),
    ("{s}'s manager is {v}", ["Dana", "Lee", "Morgan"]),
    ("{s} drives a {v}", ["Toyota", "Volvo", "Tesla"]),
]
THING_EXCLUSIVE = [
    ("{s} uses {v} for authentication", ["OAuth 2.0", "API keys", "SAML", "basic auth"]),
    ("{s} uses {v}", ["PostgreSQL", "MySQL", "SQLite", "MongoDB"]),
    ("{s} is written in {v}", ["Python", "Go", "Rust", "TypeScript"]),
    ("{s} is hosted on {v}", ["AWS", "Azure", "Hetzner"]),
    ("{s} runs on port {v}", ["8080", "3000", "443"]),
    ("The current version of {s} is {v}", ["2.3.1", "3.0.0", "1.9"]),
    ("{s} is owned by {v}", ["the platform team", "the payments team", "Ravi"]),
    ("{s}'s default language is {v}", ["English", "French", "Spanish"]),
    ("{s} deploys every {v}", ["Monday", "Thursday", "Friday"]),
    ("{s} times out after {v} seconds", ["30", "60", "5"]),
    ("{s} stores data in {v}", ["Frankfurt", "Virginia", "Singapore"]),
    ("{s}'s release is scheduled for {v}", ["March 3", "April 14", "June 1"]),
]
EVENTS = ["The weekly sync", "The standup", "The board meeting", "The dentist appointment", "The demo"]
EVENT_EXCLUSIVE = [
    ("{s} is at {v}", ["9am", "3pm", "4:30pm", "noon"]),
    ("{s} is on {v}", ["Monday", "Tuesday", "Friday", "March 12"]),
    ("{s} takes place in {v}", ["room 4B", "the main hall", "Lisbon"]),
]
# Negations and opposites: (positive, negative-or-opposite).
POLAR = [
    ("{s} likes dark mode", "{s} does not like dark mode"),
    ("{s} likes dark mode", "{s} dislikes dark mode"),
    ("{s} is vegetarian", "{s} is not vegetarian"),
    ("{s} eats meat", "{s} never eats meat"),
    ("{s} drinks alcohol", "{s} doesn't drink alcohol"),
    ("{s} works at Acme", "{s} no longer works at Acme"),
    ("{s} has a driving licence", "{s} does not have a driving licence"),
    ("{s} is available on weekends", "{s} is unavailable on weekends"),
    ("{s} agrees with the proposal", "{s} disagrees with the proposal"),
    ("{s} loves jazz", "{s} hates jazz"),
    ("{s} is allowed to deploy on Fridays", "{s} is forbidden to deploy on Fridays"),
    ("{s} always takes the train", "{s} never takes the train"),
]
THING_POLAR = [
    ("{s} is enabled", "{s} is disabled"),
    ("Two-factor login is required for {t}", "Two-factor login is optional for {t}"),
    ("{s} is public", "{s} is private"),
    ("{s} supports dark mode", "{s} does not support dark mode"),
    ("{s} is online", "{s} is offline"),
    ("Caching is turned on for {t}", "Caching is turned off for {t}"),
]
# Values that coexist: the same frame with two values is compatible.
MULTI = [
    ("{s} plays the {v}", ["piano", "guitar", "violin", "drums"]),
    ("{s} has a {v}", ["sister", "brother", "dog", "cat"]),
    ("{s} speaks {v}", ["French", "Spanish", "Mandarin", "Italian"]),
    ("{s} likes {v}", ["cats", "dogs", "hiking", "jazz"]),
    ("{s} visited {v}", ["Paris", "Rome", "Kyoto", "Cairo"]),
    ("{s} is allergic to {v}", ["peanuts", "shellfish", "pollen"]),
    ("{s} enjoys {v}", ["swimming", "chess", "baking"]),
    ("{s} owns a {v}", ["bicycle", "car", "kayak"]),
    ("{s} reads {v}", ["science fiction", "poetry", "history books"]),
]
THING_MULTI = [
    ("{s} supports {v}", ["CSV export", "JSON export", "dark mode"]),
    ("{s} has an endpoint for {v}", ["invoices", "refunds", "users"]),
    ("{s} sends alerts to {v}", ["email", "Slack", "PagerDuty"]),
]
# Past and present: both can be true.
PAST_PRESENT = [
    ("{s} worked at {v} until 2018", "{s} works at {w}", ["Acme", "Globex", "Initech"]),
    ("{s} used to live in {v}", "{s} lives in {w}", ["Lisbon", "Berlin", "Osaka"]),
    ("{s} lived in {v}", "{s} lives in {w}", ["Toronto", "Nairobi", "Madrid"]),
    ("{s} was previously married to {v}", "{s} is married to {w}", ["Sam", "Robin", "Kai"]),
    ("{s} formerly used {v}", "{s} uses {w}", ["MySQL", "PostgreSQL", "SQLite"]),
]
# Paraphrases: (a, b) of one fact.
PARAPHRASE = [
    ("{s}'s favourite colour is blue", "{s}'s favorite color is blue"),
    ("{s} lives in Lisbon", "{s} lives in Lisbon."),
    ("{s} prefers tea", "{s} prefers tea over other drinks"),
    ("{s} likes dark mode", "{s} likes using dark mode"),
    ("{s} is 34 years old", "{s} is thirty-four years old"),
    ("{s} works at Acme", "{s} is employed at Acme"),
    ("{s} lives in Lisbon", "{s} is based in Lisbon"),
    ("{s} plays the piano", "{s} plays piano"),
]
THING_PARAPHRASE = [
    ("{s} uses PostgreSQL", "{s} uses Postgres as its database"),
    ("{s} is written in Python", "{s} is implemented in Python"),
    ("{s} uses OAuth 2.0 for authentication", "{s} authenticates with OAuth 2.0"),
]
REFINEMENT = [
    ("{s} is allergic to peanuts", "{s} is allergic to peanuts and shellfish"),
    ("{s} lives in Lisbon", "{s} lives in Lisbon with two cats"),
    ("{s} prefers tea", "{s} prefers green tea in the morning"),
    ("{s} works at Acme", "{s} works at Acme as a data engineer"),
]
EVENT_REFINEMENT = [
    ("{s} is at 3pm", "{s} is at 3pm on Fridays"),
    ("{s} is on Monday", "{s} is on Monday in room 4B"),
]

HAND = [
    ("The API uses OAuth 2.0", "The API uses API keys", "contradiction"),
    ("The user prefers metric units", "The user prefers imperial units", "contradiction"),
    ("We use PostgreSQL", "We use MySQL", "contradiction"),
    ("The user likes dark mode", "The user dislikes dark mode", "contradiction"),
    ("The office is open on Sundays", "The office is closed on Sundays", "contradiction"),
    ("Our team has 5 engineers", "Our team has 8 engineers", "contradiction"),
    ("Alice has two children", "Alice has three children", "contradiction"),
    ("The flight leaves at 07:15", "The flight leaves at 09:40", "contradiction"),
    ("The database is PostgreSQL", "The database is MySQL", "contradiction"),
    ("The library's latest release is v4.2", "The library's latest release is v5.0", "contradiction"),
    ("The capital of the project is Lisbon", "The capital of the project is Porto", "contradiction"),
    ("Sam's birthday is on May 3", "Sam's birthday is on June 9", "contradiction"),
    ("The rent is 1200 euros a month", "The rent is 1500 euros a month", "contradiction"),
    ("Backups run at midnight", "Backups run at noon", "contradiction"),
    ("The repository belongs to the infra team", "The repository belongs to the data team", "contradiction"),
    ("Alice is tall", "Alice is kind", "compatible"),
    ("Alice is a doctor", "Alice is a runner", "compatible"),
    ("Alice has a sister", "Alice has a brother", "compatible"),
    ("Alice plays the piano", "Alice plays the guitar", "compatible"),
    ("Alice lives in Paris", "Bob lives in Berlin", "compatible"),
    ("Alice lives in Paris", "Bob lives in Paris", "compatible"),
    ("Alice's favourite colour is blue", "Alice's favourite food is pizza", "compatible"),
    ("Alice worked at Acme until 2018", "Alice works at Globex", "compatible"),
    ("The API does not use OAuth", "The API uses API keys", "compatible"),
    ("Alice does not like tea", "Alice does not like coffee", "compatible"),
    ("The meeting is at 3pm", "The meeting room is on floor 3", "compatible"),
    ("The user likes dark mode", "The user likes large fonts", "compatible"),
    ("Bob is learning Spanish", "Bob is learning Italian", "compatible"),
    ("Bob met Sarah in Rome", "Bob met Sarah in 2019", "compatible"),
    ("The user prefers metric units", "The user prefers metric units", "paraphrase"),
]


def _frame_pairs(
    frames: list[tuple[str, list[str]]], subjects: list[str], label: str, rng: random.Random, per_frame: int
) -> list[tuple[str, str, str]]:
    out = []
    for frame, values in frames:
        combos = list(itertools.combinations(values, 2))
        subs = rng.sample(subjects, min(per_frame, len(subjects)))
        for i, s in enumerate(subs):
            v, w = combos[i % len(combos)]
            out.append((frame.format(s=s, v=v), frame.format(s=s, v=w), label))
    return out


def _pairs(
    frames: list[tuple[str, str]],
    subjects: list[str],
    label: str,
    rng: random.Random,
    n: int,
    thing: bool = False,
) -> list[tuple[str, str, str]]:
    out = []
    for a, b in frames:
        for s in rng.sample(subjects, min(n, len(subjects))):
            t = s.lower().replace("the ", "the ") if thing else s
            out.append((a.format(s=s, t=t), b.format(s=s, t=t), label))
    return out


def labelled_pairs(seed: int = 15) -> list[tuple[str, str, str]]:
    """Every labelled pair (about 400), in a fixed order."""
    rng = random.Random(seed)
    pairs: list[tuple[str, str, str]] = []
    pairs += _frame_pairs(EXCLUSIVE, SUBJECTS, "contradiction", rng, 3)
    pairs += _frame_pairs(THING_EXCLUSIVE, THINGS, "contradiction", rng, 3)
    pairs += _frame_pairs(EVENT_EXCLUSIVE, EVENTS, "contradiction", rng, 3)
    pairs += _pairs(POLAR, SUBJECTS, "contradiction", rng, 3)
    pairs += _pairs(THING_POLAR, THINGS, "contradiction", rng, 3, thing=True)
    pairs += _frame_pairs(MULTI, SUBJECTS, "compatible", rng, 4)
    pairs += _frame_pairs(THING_MULTI, THINGS, "compatible", rng, 3)
    for a, b, values in PAST_PRESENT:
        for s, (v, w) in zip(rng.sample(SUBJECTS, 3), itertools.permutations(values, 2), strict=False):
            pairs.append((a.format(s=s, v=v), b.format(s=s, w=w), "compatible"))
    # Different subjects and different attributes of the exclusive frames: look-alikes, both true.
    for frame, values in EXCLUSIVE[:10]:
        s, t = rng.sample(SUBJECTS, 2)
        pairs.append((frame.format(s=s, v=values[0]), frame.format(s=t, v=values[1]), "compatible"))
    for (f1, v1), (f2, v2) in itertools.islice(itertools.combinations(EXCLUSIVE, 2), 0, 40, 3):
        s = rng.choice(SUBJECTS)
        pairs.append((f1.format(s=s, v=v1[0]), f2.format(s=s, v=v2[0]), "compatible"))
    pairs += _pairs(PARAPHRASE, SUBJECTS, "paraphrase", rng, 3)
    pairs += _pairs(THING_PARAPHRASE, THINGS, "paraphrase", rng, 3)
    pairs += _pairs(REFINEMENT, SUBJECTS, "refinement", rng, 3)
    pairs += _pairs(EVENT_REFINEMENT, EVENTS, "refinement", rng, 3)
    pairs += HAND
    return pairs
