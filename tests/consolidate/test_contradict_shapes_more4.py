"""More contradictions as people say them: an act one can't do and doing it ("I can't cook" / "I cook for my
family on Sundays"), an intolerance or a food allergy and having the food ("I'm lactose intolerant" / "I drink
a glass of milk every morning"), quitting drinking or never having smoked and doing it, two jobs one has one
of at a time ("I'm a nurse" / "I'm a software engineer"), having no car and driving one's own make of car, and where
one lives, works, grew up or is from when the two places can't hold together ("I live in Berlin" / "I live in
Paris", "I'm from Lyon" / "I'm from Italy"; not "I live in Kreuzberg" / "I live in Berlin", a district and its
city). Beside them the compatible look-alikes: a place in another ("I live in Berlin" / "I live in Germany"),
different sides of one thing ("The meeting is on Tuesday" / "The meeting is at 3pm", "I work as a nurse" / "I
work at the hospital"), values for two occasions ("I prefer tea in the morning" / "I prefer coffee at work"),
other subjects, the past, hedges and lists. Read by the offline rules (:func:`compare`) both ways round, and
by the consolidation's pair finder: the shapes of world knowledge whatever the model's cosine, the rest on one
topic."""

from __future__ import annotations

import pytest

from memdeck.core.consolidate.contradict import compare
from tests.contradiction_pairs import both_ways, flags, found

UNABLE = [
    ("I can't cook", "I cook for my family on Sundays"),
    ("I can't cook", "I cook dinner every night"),
    ("I can't swim", "I swim every morning"),
    ("I don't know how to swim", "I swim every weekend"),
    ("I can't ride a bike", "I ride my bike to work"),
    ("I can't dance", "I dance salsa every Friday"),
    ("Anna can't bake", "Anna bakes bread every weekend"),
]
UNABLE_NEIGHBOURS = [
    ("I can't cook", "My husband cooks for the family"),  # another person
    ("I can't cook", "I'm learning to cook"),
    ("I can't cook well", "I cook pasta sometimes"),  # a qualifier: how well
    ("I couldn't cook as a kid", "I cook for my family on Sundays"),  # the past
    ("I can't cook", "I can bake"),
    ("I can't swim", "My son swims every morning"),
    ("I can't ride a bike", "I ride the bus to work"),  # another thing ridden
    ("I can't ride a horse", "I ride my bike to work"),
]

INTOLERANT = [
    ("I'm lactose intolerant", "I drink a glass of milk every morning"),
    ("I'm lactose intolerant", "I eat cheese every day"),
    ("I'm gluten intolerant", "I eat bread every day"),
    ("I'm coeliac", "I have pasta for dinner"),
    ("I'm allergic to peanuts", "I eat peanut butter every morning"),
    ("I'm allergic to nuts", "I eat almonds every day"),
    ("I'm allergic to shellfish", "I eat shrimp every week"),
    ("I have a peanut allergy", "I eat peanuts every day"),
    ("Sam is allergic to strawberries", "Sam eats strawberries for breakfast"),
]
INTOLERANT_NEIGHBOURS = [
    ("I'm lactose intolerant", "I drink oat milk every morning"),  # not dairy
    ("I'm lactose intolerant", "I drink lactose-free milk"),
    ("I'm lactose intolerant", "My son drinks milk every morning"),
    ("I'm lactose intolerant", "I drink coffee every morning"),
    ("I'm lactose intolerant", "I used to drink milk every morning"),  # the past
    ("I'm allergic to peanuts", "I eat almonds"),
    ("I'm allergic to peanuts", "I eat almond butter every morning"),
    ("I'm allergic to peanuts", "I'm allergic to shellfish"),
    ("I'm allergic to cats", "I have a dog"),
    ("I'm gluten intolerant", "I eat gluten-free bread"),
    ("I'm vegan", "I eat peanut butter every morning"),  # named after peanuts, not butter
    ("Sam is allergic to penicillin", "Tom has no allergies"),
]

HABITS = [
    ("I quit drinking", "I drink beer every weekend"),
    ("I stopped drinking alcohol", "I drink wine every night"),
    ("I've never smoked", "I smoke every day"),
    ("I don't drink", "I drink every weekend"),
]
HABITS_NEIGHBOURS = [
    ("I used to smoke", "I quit smoking"),
    ("I quit drinking", "I drink water every day"),
    ("I quit drinking", "I used to drink beer every weekend"),
    ("I've never smoked", "I smoke salmon every weekend"),
    ("I quit coffee", "I drink decaf every morning"),
]

JOBS = [
    ("I'm a nurse", "I'm a software engineer"),
    ("I'm a teacher", "I'm a lawyer"),
    ("Maria is a doctor", "Maria is an architect"),
]
JOBS_NEIGHBOURS = [
    ("I'm a nurse", "I'm a mother"),
    ("I'm a teacher", "I'm a runner"),
    ("I'm a nurse", "My wife is a teacher"),
    ("I'm a nurse", "I was a teacher"),
    ("I'm an engineer", "I'm a software engineer"),  # one is the other said more exactly
    # two jobs of one field: one job said two ways, or one held beside the other
    ("I'm a doctor", "I'm a surgeon"),
    ("I'm a lawyer", "I'm an attorney"),
    ("I'm a developer", "I'm a software engineer"),
    ("I'm a vet", "I'm a veterinarian"),
    ("I'm a waiter", "I'm a bartender"),
    ("Tom is a plumber", "Tom is an electrician"),
]

CARS = [
    ("I don't own a car", "I drive my Honda"),
    ("I don't have a car", "I drive my Toyota to work"),
]
CARS_NEIGHBOURS = [
    ("I don't have a car", "I drive a Honda"),  # may be another's: a company's, a hired one
    ("I don't have a car", "I drive our bus to school"),
    ("I don't own a car", "I drive my dad's Honda"),
    ("I don't have a car", "My wife drives a Ford"),
]

PLACES = [
    ("I live in Berlin", "I live in Paris"),
    ("I live in London", "I live in Manchester"),
    ("My sister lives in Madrid", "My sister lives in Barcelona"),
    ("I live in Berlin", "I live in France"),
    ("I live in Canada", "I live in Germany"),
    ("I work in Boston", "I work in Chicago"),
    ("I grew up in Texas", "I grew up in Ohio"),
    ("I'm from Lyon", "I'm from Italy"),
    ("I'm from Lyon", "I'm from Spain"),
    ("I'm from Toronto", "I'm from Australia"),
    ("I live in Kreuzberg", "I live in Neukölln"),  # two districts
]
PLACES_NEIGHBOURS = [
    ("I live in Kreuzberg", "I live in Berlin"),  # a district and its city
    ("I'm from Kreuzberg", "I'm from Berlin"),
    ("I live in Camden", "I live in London"),
    ("I live in Brooklyn", "I live in New York"),
    ("I work in Manhattan", "I work in New York"),
    ("I live in Berlin", "I live in Germany"),  # a city and its country
    ("I'm from Lyon", "I'm from France"),
    ("I'm from Texas", "I'm from Austin"),  # a city and its state
    ("I grew up in Austin", "I grew up in Texas"),
    ("I live in Seattle", "I live in Washington"),
    ("I live in Berlin", "I live in a flat in Berlin"),
    ("I live in Paris", "I work in London"),
    ("I live in Berlin", "My sister lives in Paris"),
    ("I used to live in Paris", "I live in Berlin"),
    ("I live in Berlin", "I might move to Paris"),
]

SIDES_NEIGHBOURS = [
    ("The meeting is on Tuesday", "The meeting is at 3pm"),  # a day and a time
    ("The meeting is on Tuesday", "The meeting is in room 4"),
    ("The meeting is at 3pm", "The meeting is in the main office"),
    ("I work as a nurse", "I work at the hospital"),  # a role and a place
    ("I prefer tea in the morning", "I prefer coffee at work"),  # two occasions
]
SIDES_STILL = [
    ("The meeting is on Tuesday", "The meeting is on Thursday"),
    ("The meeting is at 3pm", "The meeting is at 5pm"),
    ("I work as a nurse", "I work as a teacher"),
    ("The dentist appointment is on June 3", "The dentist appointment is on June 10"),
    ("I prefer tea", "I prefer coffee"),
]

# Everyday contradictions the rules already read; kept here beside the new shapes so that none is lost.
EVERYDAY = [
    ("I'm 34", "I'm 41 years old"),
    ("Tom is 52 years old", "Tom is 45"),
    ("Tom works at Google", "Tom works at Microsoft"),
    ("Tom is retired", "Tom works at the bank"),
    ("I'm married", "I'm single"),
    ("I have two kids", "I have three kids"),
    ("I'm an only child", "I have a sister"),
    ("I don't have any pets", "I have a cat named Luna"),
    ("My dog's name is Max", "My dog's name is Rocky"),
    ("I'm vegetarian", "I had a burger for lunch"),
    ("I drink coffee every morning", "I quit coffee last month"),
    ("Sam is allergic to penicillin", "Sam has no allergies"),
    ("My favourite colour is blue", "My favourite colour is green"),
    ("I drive a Toyota", "I drive a Ford"),
    ("My flight leaves on Monday", "My flight leaves on Friday"),
    ("Yoga class starts at 7am", "Yoga class starts at 9am"),
    ("My rent is $1200 a month", "My rent is $1500 a month"),
    ("I weigh 70 kg", "I weigh 85 kg"),
    ("Tom is my brother", "Tom is my cousin"),
    ("I was born in Dublin", "I was born in Rome"),
]
EVERYDAY_NEIGHBOURS = [
    ("The team meeting is on Tuesday", "The budget meeting is on Thursday"),
    ("The meeting was on Tuesday", "The meeting is on Thursday"),
    ("I have yoga on Mondays", "I have yoga on Wednesdays"),
    ("I'm 34", "My wife is 36"),
    ("I'm 34", "I'm 6 feet tall"),
    ("My rent is $1200 a month", "My car payment is $300 a month"),
    ("I have two kids", "I have two cats"),
    ("I have a dog and a cat", "I have a dog"),
    ("I'm vegetarian", "My husband eats steak"),
    ("I was vegetarian in college", "I eat steak"),
    ("I worked as a nurse", "I work as a teacher"),
    ("Tom is retired", "Tom volunteers at the library"),
]

WORLD = UNABLE + INTOLERANT + HABITS + JOBS + CARS
ONE_TOPIC = PLACES + SIDES_STILL + EVERYDAY
NEIGHBOURS = (
    UNABLE_NEIGHBOURS
    + INTOLERANT_NEIGHBOURS
    + HABITS_NEIGHBOURS
    + JOBS_NEIGHBOURS
    + CARS_NEIGHBOURS
    + PLACES_NEIGHBOURS
    + SIDES_NEIGHBOURS
    + EVERYDAY_NEIGHBOURS
)


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
    assert compare("I can't cook", "I cook for my family").reason == "an act one can't do and doing it"
    assert compare("I'm a nurse", "I'm a software engineer").reason == "two jobs one has one of at a time"
    assert (
        compare("I'm lactose intolerant", "I drink a glass of milk every morning").reason
        == "a diet and a food it excludes"
    )
