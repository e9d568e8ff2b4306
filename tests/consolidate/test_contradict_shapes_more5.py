"""More contradictions as people say them: an allergy to a medicine and taking it ("I'm allergic to
penicillin" / "I take penicillin every day"), no exercise and a kind of exercise done as a habit ("I never
exercise" / "I go to the gym every day"), and where one lives when a city's name is also a smaller town's in
another state ("I live in Portland" / "I live in Maine": Portland, Maine). Beside them the compatible
look-alikes: another medicine, the past, a pet one is allergic to, walking to work, a habit denied that is not
exercise as a whole ("I never go to the gym" / "I run every morning"), other subjects, and what only looks like
exercise ("I run a company", "I swim in the sea"). Read by the offline rules (:func:`compare`) both ways
round, and by the consolidation's pair finder: the shapes of world knowledge whatever the model's cosine, the
rest on one topic."""

from __future__ import annotations

import pytest

from memdeck.core.consolidate.contradict import compare
from tests.contradiction_pairs import both_ways, flags, found

ALLERGY_TAKEN = [
    ("I'm allergic to penicillin", "I take penicillin every day"),
    ("I'm allergic to aspirin", "I take an aspirin every morning"),
    ("I have a penicillin allergy", "I take penicillin"),
    ("Sam is allergic to codeine", "Sam is on codeine"),
    ("I'm allergic to ibuprofen", "I take ibuprofen for my back"),
    ("I'm allergic to eggs", "I eat eggs every morning"),  # a food: already read
]
ALLERGY_TAKEN_NEIGHBOURS = [
    ("I'm allergic to penicillin", "I take amoxicillin"),  # another medicine
    ("I'm allergic to penicillin", "I used to take penicillin"),  # the past
    ("I'm allergic to penicillin", "My son takes penicillin every day"),  # another person
    ("I'm allergic to penicillin", "I don't take penicillin"),
    ("I'm allergic to aspirin", "I take ibuprofen instead"),
    ("I'm allergic to cats", "I have a cat"),  # people live with pets they are allergic to
    ("I'm allergic to dogs", "I take my dog for a walk every morning"),
    ("I'm allergic to bees", "I keep bees"),
    ("I'm allergic to pollen", "I take antihistamines every spring"),
    ("Sam isn't allergic to penicillin", "Sam takes penicillin"),
    ("I'm allergic to nuts", "I take vitamins"),
]

EXERCISE = [
    ("I never exercise", "I go to the gym every day"),
    ("I never exercise", "I work out every morning"),
    ("I don't exercise", "I run every morning"),
    ("I never exercise", "I go running three times a week"),
    ("I never exercise", "I do yoga every morning"),
    ("I never exercise", "I swim laps every morning"),
    ("I never exercise", "I lift weights at the gym"),
    ("I don't work out", "I go to the gym every day"),
    ("I don't do any exercise", "I go to pilates class on Mondays"),
    ("Tom never exercises", "Tom hits the gym every morning"),
    ("I never exercise", "I go for a run every evening"),
    ("I never exercise", "I run 5k every morning"),
    ("I never work out", "I jog every morning"),
]
EXERCISE_NEIGHBOURS = [
    ("I never exercise", "I walk to work"),  # a way to get about
    ("I never exercise", "I cycle to work"),
    ("I never go to the gym", "I run every morning"),  # the gym is one kind, not all
    ("I never exercise", "My wife goes to the gym every day"),  # another person
    ("I never exercise", "I used to go to the gym every day"),  # the past
    ("I never exercise", "I run a small company"),  # another sense of "run"
    ("I never exercise", "I swim in the sea"),  # not said as a habit
    ("I never exercise", "I go to the gym to pick up my son"),
    ("I never exercise", "I want to start running"),
    ("I can't exercise", "I go to the gym every day"),  # may be there for therapy, or with someone
    ("I never exercise in the morning", "I go to the gym every evening"),
    ("I never exercise", "I play golf every Sunday"),  # a pastime
    ("I never exercise", "I go to the gym on Mondays to teach a class"),
    ("I never exercise", "I'm running late"),
    ("I never exercise", "I work out of the office"),
    ("I never exercise", "I do the dishes every day"),
]

PLACES_NEIGHBOURS = [
    ("I live in Portland", "I live in Maine"),  # Portland, Maine
    ("I'm from Portland", "I'm from Maine"),
    ("I live in Springfield", "I live in Illinois"),
    ("I live in Paris", "I live in Texas"),  # Paris, Texas
    ("I grew up in Perth", "I grew up in Scotland"),
    ("I live in Boulder", "I live in Denver"),  # a town not in the list
    ("I live in New York", "I live in Buffalo"),  # a state and a city in it
    ("I live in Portland", "I live in Oregon"),
    ("I live in Manchester", "I live in New Hampshire"),  # Manchester, New Hampshire
    ("I live in Bristol", "I live in Tennessee"),
    ("I live in Vancouver", "I live in Washington"),  # Vancouver, Washington
]
PLACES = [
    ("I live in Portland", "I live in Seattle"),  # two cities of the list
    ("I live in Portland", "I live in Canada"),  # a city and a country it is not in
    ("I live in New York", "I live in Chicago"),  # "New York": a state and a city
    ("I'm from Texas", "I'm from Ohio"),  # two regions
    ("I'm from Lyon", "I'm from Italy"),
]

WORLD = ALLERGY_TAKEN + EXERCISE
ONE_TOPIC = PLACES
NEIGHBOURS = ALLERGY_TAKEN_NEIGHBOURS + EXERCISE_NEIGHBOURS + PLACES_NEIGHBOURS


@pytest.mark.parametrize(("a", "b"), WORLD + ONE_TOPIC)
def test_the_shape_is_a_contradiction(a: str, b: str) -> None:
    assert both_ways(a, b), (compare(a, b), compare(b, a))


@pytest.mark.parametrize(("a", "b"), NEIGHBOURS)
def test_its_near_neighbours_stay_compatible(a: str, b: str) -> None:
    assert not flags(a, b), (compare(a, b), compare(b, a))
    assert not found(a, b, 0.0) and not found(a, b, 1.0) and not found(b, a, 1.0)


@pytest.mark.parametrize(("a", "b"), WORLD)
def test_world_knowledge_is_found_whatever_the_cosine(a: str, b: str) -> None:
    assert found(a, b, 0.0) and found(b, a, 0.0)
    assert found(a, b, 1.0)


@pytest.mark.parametrize(("a", "b"), ONE_TOPIC)
def test_the_rest_is_found_on_one_topic(a: str, b: str) -> None:
    assert found(a, b, 1.0) and found(b, a, 1.0)


def test_the_reason_names_the_shape() -> None:
    assert (
        compare("I'm allergic to penicillin", "I take penicillin every day").reason
        == "an allergy to a medicine and taking it"
    )
    assert (
        compare("I never exercise", "I go to the gym every day").reason == "no exercise and a kind of it done"
    )
