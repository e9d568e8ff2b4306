"""Contradictions that take a little world knowledge: a thing and its stated absence, a habit and having
given it up, a status that rules out a job, a diet and a food it excludes; and a denial said with "anymore".
Each shape has its near neighbours beside it, which must stay compatible (a wrong flag is worse than a
missed one). Read by the offline rules (:func:`compare`), both ways round."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from memdeck.core.consolidate import consolidate, contradictions
from memdeck.core.consolidate.contradict import CONTRADICTION, TOPIC_GATE, compare, mergeable
from memdeck.core.filters import Scope
from memdeck.core.store import Store
from tests.contradiction_pairs import both_ways, flags

ABSENCE = [
    ("Sam is allergic to penicillin", "Sam has no allergies"),
    ("Sam is allergic to peanuts", "Sam isn't allergic to anything"),
    ("Sam's allergic to cats", "Sam has no allergies"),
    ("I have no allergies", "I have a peanut allergy"),
    ("I don't have any pets", "I have a dog"),
    ("Tom has no pets", "Tom has two black cats"),
    ("I've never had a pet", "I have two cats"),
    ("The kids don't have any pets", "The kids have a hamster"),
    ("Anna has no children", "Anna has a daughter"),
    ("My sister has no kids", "My sister has two kids"),
    ("I have no siblings", "I have an older brother"),
    ("I'm an only child", "I have a sister"),
    ("Tom doesn't play any instruments", "Tom plays the piano"),
    ("I don't play any sports", "I play golf on weekends"),
]
ABSENCE_NEIGHBOURS = [
    ("Sam is allergic to penicillin", "Sam has no pets"),
    ("Sam has no allergies", "Ben is allergic to penicillin"),  # another person
    ("Sam isn't allergic to peanuts", "Sam is allergic to penicillin"),  # one thing denied, not all
    ("Sam has no food allergies", "Sam is allergic to penicillin"),  # a narrower absence
    ("I'm not allergic to anything", "My son is allergic to peanuts"),
    ("I don't have any pets", "I have a dog walker"),  # the noun is another thing
    ("I don't have any pets", "I have a hot dog for lunch"),
    ("I have no pets", "I have a pet peeve about noise"),
    ("I have no pets", "I have fish for dinner"),
    ("Tom has no pets", "Tom has a cat allergy"),
    ("I don't have any pets", "I had a dog as a kid"),  # past
    ("I don't have any pets", "I used to have a cat"),
    ("I don't have any pets", "I want a dog"),
    ("Anna has no children", "Anna has a sister"),  # another kind of relative
    ("Anna has no children", "Anna's sister has a daughter"),
    ("I have no siblings", "I have a son"),
    ("I have no siblings", "I have a sister-in-law"),
    ("I don't have any kids", "I have a kid brother"),
    ("I have no kids", "I have a baby on the way"),  # not yet
    ("I have no kids", "I have two kids in my class"),  # a teacher's pupils
    ("We have no pets", "We have a dog at the shelter"),
    ("I have no kids", "My sister has two kids"),
    ("Tom has no kids yet", "Tom wants two kids"),
    ("I was an only child", "I have a sister"),
    ("Tom doesn't play any instruments", "Tom plays tennis"),
]

QUIT = [
    ("I drink coffee every morning", "I quit coffee last month"),
    ("I smoke on weekends", "I gave up smoking"),
    ("I play tennis every Sunday", "I stopped playing tennis"),
    ("I've stopped drinking alcohol", "I drink alcohol"),
    ("I quit Twitter", "I use Twitter every day"),
    ("I go to the gym three times a week", "I quit the gym last year"),
    ("I stopped going to church", "I go to church every Sunday"),
    ("I gave up chocolate", "I eat chocolate every evening"),
    ("Sam stopped eating meat", "Sam eats meat every day"),
    ("My son quit football", "My son plays football on Saturdays"),
    ("The team stopped using Jenkins", "The team uses Jenkins"),
    ("Tom quit his job at the bank", "Tom works at the bank"),
    ("Tom stopped working at the bank", "Tom works at the bank"),
]
QUIT_NEIGHBOURS = [
    ("I drink coffee every morning", "I quit tea last month"),  # another thing
    ("I drink coffee every morning", "I quit coffee for Lent"),  # for a while
    ("I drink coffee every morning", "I stopped drinking coffee after noon"),  # only part of it
    ("I drink coffee every morning", "I quit drinking coffee after 3pm"),
    ("I drink coffee every morning", "I want to quit coffee"),  # not done
    ("I drink coffee every morning", "I tried to quit coffee"),
    ("I like coffee", "I quit coffee last month"),  # liking is not drinking
    ("I gave up chocolate", "I like chocolate"),
    ("I used to drink coffee", "I quit coffee last month"),
    ("I quit smoking in 2010", "I smoke again"),  # sequenced
    ("I quit coffee", "I drink decaf coffee"),
    ("I stopped running", "I run a small company"),  # another sense of the verb
    ("I stopped smoking", "I smoke salmon on weekends"),
    ("I stopped drinking", "I drink water every day"),
    ("I stopped running marathons", "I run every morning"),
    ("I stopped at the gym", "I go to the gym"),
    ("I gave up sugar for a month", "I eat sugar every day"),
    ("I stopped eating sugar", "I eat sugar-free candy"),
    ("My son quit football", "I play football"),  # another person
    ("I play tennis", "I stopped playing golf"),
    ("I quit Twitter", "I used Twitter daily"),
    ("Tom quit his job", "Tom works at Google"),  # a new job
    ("Tom quit his job at the bank", "Tom works at Google"),
    ("Tom stopped working at night", "Tom works at the bank"),
]

STATUS = [
    ("Tom is retired", "Tom works at the bank"),
    ("I'm retired", "I work for a hospital"),
    ("Tom is unemployed", "Tom works at Google"),
    ("Tom is unemployed", "Tom works as a freelancer"),
    ("Tom retired from the bank", "Tom works at the bank"),
    ("Tom retired last year", "Tom works at the bank"),
    ("Tom retired", "Tom is employed by the bank"),
]
STATUS_NEIGHBOURS = [
    ("Tom is retired", "Tom worked at the bank"),  # past
    ("Tom is retired", "Tom worked at the bank until 2019"),
    ("Tom was unemployed last year", "Tom works at Google"),
    ("Tom retired from the army", "Tom works at the bank"),  # left one job, has another
    ("I'm retired from the army", "I work at a bank"),
    ("Tom is retired", "Ben works at the bank"),
    ("Tom is retired", "Tom's wife works at the bank"),
    ("Tom is retired", "Tom works in the garden every day"),  # not a job
    ("Tom is retired", "Tom works on his novel"),
    ("Tom is retired", "Tom volunteers at the library"),
    ("Tom is retired", "Tom works as a volunteer"),
    ("Tom is retired", "Tom works at the church as a volunteer"),
    ("Tom is retired", "Tom works at the bank part-time"),
    ("Tom retired the old server", "Tom works at the bank"),
    ("Tom is a retired teacher", "Tom is a grandfather"),
]

DIET = [
    ("Lena is a vegetarian", "Lena eats steak"),
    ("Lena is vegetarian", "Lena eats fish on Fridays"),
    ("She's vegetarian", "She eats bacon"),
    ("I'm vegan", "I eat cheese every day"),
    ("Sam is vegan", "Sam eats eggs for breakfast"),
    ("I'm vegan", "I drink milk"),
    ("Priya is pescatarian", "Priya eats chicken"),
    ("I don't eat meat", "I eat chicken twice a week"),
    ("I don't eat dairy", "I eat butter"),
    ("I don't drink alcohol", "I drink wine every evening"),
    ("I don't drink", "I drink beer on Fridays"),  # "don't drink" alone: alcohol
    ("I don't drink caffeine", "I drink coffee every morning"),
]
DIET_NEIGHBOURS = [
    ("Lena is a vegetarian", "Lena eats veggie burgers"),
    ("Lena is a vegetarian", "Lena eats meat substitutes"),
    ("Lena is a vegetarian", "Lena eats chicken-free nuggets"),
    ("Lena is a vegetarian", "Lena cooks steak for her kids"),  # cooking is not eating
    ("Lena is a vegetarian", "Lena used to eat steak"),  # past
    ("I was vegetarian", "I eat steak"),
    ("Lena is a vegetarian", "Ben eats steak"),
    ("Lena is a vegetarian", "Lena eats eggs"),  # vegetarians may
    ("Lena is a vegetarian", "Lena eats cheese"),
    ("Priya is pescatarian", "Priya eats salmon"),
    ("I'm vegan", "I drink oat milk"),
    ("I'm vegan", "I drink coconut milk"),
    ("I'm vegan", "I eat vegan cheese"),
    ("I don't eat meat", "I eat fish"),
    ("I don't eat meat", "I eat meat substitutes"),
    ("I don't eat red meat", "I eat chicken"),  # a narrower denial
    ("I don't eat meat on Fridays", "I eat chicken"),
    ("Lena is vegetarian on weekdays", "Lena eats steak"),
    ("Lena is a vegetarian cook", "Lena eats steak"),
    ("I don't eat fish", "I eat fish fingers"),
    ("I don't drink alcohol", "I drink water every evening"),
    ("I don't drink alcohol", "I drink non-alcoholic beer"),
    ("I don't drink alcohol", "Tom drinks wine"),
    ("Tom doesn't drink", "Tom drinks tea every morning"),
]

ANYMORE = [
    ("I don't drink coffee anymore", "I drink coffee every morning"),
    ("I don't live in Paris anymore", "I live in Paris"),
    ("I don't work at Acme any longer", "I work at Acme"),
    ("I'm 29", "I'm 31 years old"),  # a number right after "I'm"
]
ANYMORE_NEIGHBOURS = [
    ("I don't live in Paris anymore", "I live in Berlin"),
    ("I don't like jazz anymore", "I like rock"),
    ("I don't have any more coffee", "I have coffee"),
    ("I used to live in Paris", "I live in Berlin"),
    ("Tom no longer works at Google", "Tom works at Microsoft"),
    ("I'm in Paris", "I'm in love"),
    ("I'm tall", "I'm kind"),
    ("I'm a doctor", "I'm a runner"),
    ("I'm 29", "My son is 3"),
    ("I'm 6 feet tall", "I'm 29"),  # a height, not an age
]


@pytest.mark.parametrize(("a", "b"), ABSENCE + QUIT + STATUS + DIET + ANYMORE)
def test_a_shape_that_takes_a_little_world_knowledge_is_a_contradiction(a: str, b: str) -> None:
    assert both_ways(a, b), (compare(a, b), compare(b, a))


@pytest.mark.parametrize(
    ("a", "b"),
    ABSENCE_NEIGHBOURS + QUIT_NEIGHBOURS + STATUS_NEIGHBOURS + DIET_NEIGHBOURS + ANYMORE_NEIGHBOURS,
)
def test_near_neighbours_of_those_shapes_stay_compatible(a: str, b: str) -> None:
    assert not flags(a, b), (compare(a, b), compare(b, a))


def test_the_reason_names_the_shape() -> None:
    assert (
        compare("Sam is allergic to penicillin", "Sam has no allergies").reason
        == "a thing and its stated absence"
    )
    assert compare("I drink coffee every morning", "I quit coffee").reason == "a habit and having given it up"
    assert compare("Tom is retired", "Tom works at the bank").reason == "a status that excludes a job"
    assert compare("Lena is a vegetarian", "Lena eats steak").reason == "a diet and a food it excludes"


def test_a_shape_below_the_topic_gate_is_not_read() -> None:
    assert compare("Lena is a vegetarian", "Lena eats steak", cosine=0.3).kind != CONTRADICTION


def test_a_found_conflict_blocks_a_merge() -> None:
    assert mergeable("Lena is a vegetarian", "Lena eats steak") is not None


# --- found however far apart the model puts their topics ------------------------------------------------

FAR_APART = [
    ("I'm vegan", "I eat cheese every day"),
    ("I'm retired", "I work for a hospital"),
    ("I smoke on weekends", "I gave up smoking"),
    ("Sam has no allergies", "Sam is allergic to penicillin"),
]


@pytest.mark.parametrize(("a", "b"), FAR_APART)
def test_a_world_knowledge_pair_is_found_whatever_its_cosine(a: str, b: str) -> None:
    from memdeck.core.consolidate import contradicting_pairs, parse_statement

    # orthogonal vectors: the model would call the topics unrelated, so the cosine never pairs them
    facts = [
        {"id": "a", "text": a, "vector": [1.0, 0.0, 0.0], "meta": {}},
        {"id": "b", "text": b, "vector": [0.0, 1.0, 0.0], "meta": {}},
    ]
    found = contradicting_pairs(facts, {f["id"]: parse_statement(f["text"]) for f in facts})
    assert list(found) == [("a", "b")]


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("I'm vegan", "Tom eats cheese every day"),  # another subject
        ("I'm vegan", "I eat vegan cheese"),  # another thing
        ("I'm retired", "I work as a volunteer"),
        ("I used to smoke", "I gave up smoking"),
    ],
)
def test_partner_shapes_that_do_not_conflict_stay_apart(a: str, b: str) -> None:
    from memdeck.core.consolidate import contradicting_pairs, parse_statement

    facts = [
        {"id": "a", "text": a, "vector": [1.0, 0.0, 0.0], "meta": {}},
        {"id": "b", "text": b, "vector": [0.0, 1.0, 0.0], "meta": {}},
    ]
    assert contradicting_pairs(facts, {f["id"]: parse_statement(f["text"]) for f in facts}) == {}


def test_consolidation_flags_a_pair_the_model_puts_on_different_topics(
    model_store: Store, real_embedder: Any
) -> None:
    for text in ("I'm vegan", "I eat cheese every day", "I moved to Lisbon last spring"):
        model_store.remember(text, tier="semantic", principal="alice")
    a, b = np.asarray(real_embedder.encode(["I'm vegan", "I eat cheese every day"]), dtype=np.float32)
    assert float(a @ b / np.linalg.norm(a) / np.linalg.norm(b)) < TOPIC_GATE  # below the model's gate
    consolidate(model_store.engine, "alice")
    [found] = contradictions(model_store.engine, Scope.of("alice"))
    assert {found.a_text, found.b_text} == {"I'm vegan", "I eat cheese every day"}


# --- values for different purposes ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (
            "Sentry is the source of truth for API v2 status",
            "Sentry is the source of truth for billing status",
        ),
        ("Dana is responsible for billing", "Dana is responsible for onboarding"),
        ("Alice prefers dark mode for reports", "Alice prefers light mode for notes"),
        ("Alice prefers Python for scripts", "Alice prefers Go for services"),
    ],
)
def test_values_for_different_purposes_both_hold(a: str, b: str) -> None:
    assert not flags(a, b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Alice prefers Python for scripts", "Alice prefers Go for scripts"),  # one purpose, two values
        ("Alice prefers tea for breakfast", "Alice prefers coffee for breakfast"),
        ("Tom works for Acme", "Tom works for Globex"),  # an employer, not a purpose
        ("The meeting is scheduled for Monday", "The meeting is scheduled for Tuesday"),  # a date
        ("Dinner is booked for 7pm", "Dinner is booked for 8pm"),
    ],
)
def test_one_purpose_or_a_when_after_for_still_conflicts(a: str, b: str) -> None:
    assert flags(a, b)


# --- one spelling, ability, handedness ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("I'm 34 years old", "I am 36"),  # one contracts, the other does not
        ("I'm from Spain", "I am from Italy"),
        ("I'm left-handed", "I am right-handed"),
        ("I can't swim", "I swim every morning"),  # what one cannot do, the other does
        ("I can't swim", "I can swim"),
        ("I own a Tesla", "I sold my Tesla"),  # a thing owned and sold
        ("I sold my car last year", "I have a car"),
        ("Tom sold his boat", "Tom owns a boat"),
        ("I am 29", "I am 31 years old"),  # one measure, two values
        ("The flight takes 3 hours", "The flight takes 90 minutes"),
    ],
)
def test_spelling_ability_handedness_selling_and_measures_conflict(a: str, b: str) -> None:
    assert both_ways(a, b), (compare(a, b), compare(b, a))


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("I'm tired", "I am hungry"),
        ("I can't make it on Friday", "I run on Fridays"),
        ("I can't swim", "Tom swims every morning"),
        ("I sold my old car", "I have a new car"),
        ("I sold a car to Tom", "I have a car"),
        ("I sold my car", "I have a car loan"),
        ("I used to own a Tesla", "I sold my Tesla"),
        ("I am 6 feet tall", "I am 29"),  # a height and an age
    ],
)
def test_their_neighbours_stay_compatible(a: str, b: str) -> None:
    assert not flags(a, b), (compare(a, b), compare(b, a))


def test_one_statement_in_two_spellings_is_the_same() -> None:
    assert compare("I'm vegan", "I am vegan").kind == "same"
