"""More contradictions that take a little world knowledge: exclusive kinds of person ("a morning person" /
"a night owl"), a medicine and taking none, a partner and being single, a car and having none, two relations
of one named person to the speaker, a diet and a dish (or a meal) that holds what it excludes, a diet said
as a change ("became a vegetarian"), two counts of one thing, a bare denial of an act against doing it
somewhere, and where one is from said with "I'm" on both sides. Each shape has its near neighbours beside
it, which must stay compatible (a wrong flag is worse than a missed one). Read by the offline rules
(:func:`compare`) both ways round, and by the consolidation's pair finder whatever the model's cosine."""

from __future__ import annotations

import pytest

from memdeck.core.consolidate.contradict import CONTRADICTION, compare
from tests.contradiction_pairs import both_ways, flags, found

STATES = [
    ("I'm a morning person", "I'm a night owl"),
    ("I'm an early bird", "I'm a night owl"),
    ("Tom is a night person", "Tom is an early riser"),
    ("I am a morning person", "I'm a night owl"),
    ("I'm an introvert", "I'm an extrovert"),
    ("I'm introverted", "I'm an extrovert"),
    ("I'm single", "I'm married"),
]
STATES_NEIGHBOURS = [
    ("I'm a morning person", "I'm an early bird"),  # one state said two ways
    ("I'm an introvert", "I'm introverted"),
    ("I'm a morning person", "My husband is a night owl"),  # another person
    ("I'm a night owl", "I used to be a morning person"),  # past
    ("I'm a night owl", "I'm a nurse"),
    ("I'm a night owl", "I work night shifts"),
    ("I'm a morning person", "I'm a coffee person"),
    ("I'm an introvert", "I'm an extrovert at work"),  # a qualifier
    ("I'm married", "I'm a single mom"),  # not the state "single"
]

MEDICATION = [
    ("I'm not on any medication", "I take insulin daily"),
    ("I don't take any medication", "I'm on antibiotics"),
    ("I don't take any meds", "I'm taking ibuprofen for my back"),
    ("Tom isn't on any medication", "Tom takes a statin"),
    ("I take no medication", "I take metformin"),
]
MEDICATION_NEIGHBOURS = [
    ("I'm not on any medication", "My mother takes insulin"),  # another person
    ("I'm not on any medication", "I take vitamins"),  # not a medicine
    ("I'm not on any medication", "I take vitamins daily"),
    ("I'm not on any medication", "I used to take insulin"),  # past
    ("I don't take any meds", "I used to take lithium"),
    ("I'm not on any medication", "I take the bus"),
    ("I'm not on any medication", "I'm on call tonight"),
    ("I'm not on any medication", "I'm on a diet"),
    ("I take insulin daily", "I take metformin"),  # several medicines at once
    ("I take aspirin", "I take ibuprofen"),
]

PARTNER_AND_CAR = [
    ("I'm single", "I have a girlfriend"),
    ("Tom is single", "Tom has a wife"),
    ("I don't have a partner", "I have a husband"),
    ("I'm single", "I'm in a relationship"),
    ("I don't have a car", "I drive my car to work"),
    ("I don't own a car", "I have a red car"),
]
PARTNER_AND_CAR_NEIGHBOURS = [
    ("I'm single", "I have a business partner"),
    ("I'm single", "I have a partner in crime"),
    ("I'm single", "My sister has a husband"),
    ("I'm single", "I had a girlfriend"),  # past
    ("I'm single", "I want a husband"),
    ("I'm single", "I'm in a relationship with my work"),
    ("I'm single", "I used to be in a relationship"),
    ("I'm single", "I'm looking for a girlfriend"),
    ("I'm a single mom", "I have a husband"),
    ("I don't have a car", "I drive my dad's car"),  # someone else's
    ("I don't have a car", "I drive a car for Uber"),
    ("I don't have a car", "I have a car seat"),  # another thing
    ("I don't have a car", "I have a bike"),
    ("I don't have a car", "My wife has a car"),
]

KIN = [
    ("Sarah is my sister", "Sarah is my cousin"),
    ("Sarah is my older sister", "Sarah is my aunt"),
    ("Tom is my brother", "Tom is my husband"),
    ("Sam is my brother", "Sam is my sister"),
    ("Anna is my mom", "Anna is my grandmother"),
    ("Ben is our son", "Ben is our nephew"),
]
KIN_NEIGHBOURS = [
    ("Sarah is my sister", "Sarah is my friend"),  # a friend or colleague may be family too
    ("Sarah is my sister", "Sarah is my colleague"),
    ("Sarah is my cousin", "Sarah is my best friend"),
    ("Tom is my boss", "Tom is my brother"),
    ("Tom is my brother", "Tom is my business partner"),
    ("Sarah is my sister", "Anna is my cousin"),  # another person
    ("Sarah is my sister", "Sarah is a nurse"),
    ("Sarah is my sister", "Sarah is his cousin"),  # someone else's relative
    ("Sarah is my sister", "Sarah is my little sister"),  # one relation said with more words
    ("Sarah is my mom", "Sarah is my mother"),  # one relation said two ways
    ("Tom is my husband", "Tom is my boyfriend"),
    ("Sarah is my sister", "Sarah is my half-sister"),  # unknown words: left alone
    ("Sarah is my sister", "Sarah is my sister-in-law"),
    ("Sarah is my sister", "Sarah is my sister's friend"),
    ("Sarah is my sister", "Sarah was my cousin's wife"),
    ("She is my sister", "She is my cousin"),  # "she" may be two people
    ("He is my brother", "He is my dad"),
]

DISHES = [
    ("I'm vegetarian", "I had a burger for lunch"),
    ("I'm vegetarian", "I ate a chicken sandwich for lunch"),
    ("Lena is a vegetarian", "Lena had a bacon sandwich for breakfast"),
    ("I'm vegetarian", "I had pepperoni pizza for dinner"),
    ("I'm vegetarian", "I eat chicken nuggets"),
    ("I'm vegetarian", "I had sushi for lunch"),
    ("I'm vegan", "I had a cheese sandwich for lunch"),
    ("I'm vegan", "I had a cheeseburger for dinner"),
    ("I don't eat meat", "I eat burgers"),
    ("I don't eat fish", "I eat sushi"),
    ("I became a vegetarian", "I eat steak"),
    ("I became vegetarian in 2015", "I eat bacon every morning"),
    ("I went vegan", "I eat cheese"),
    ("I've become a vegetarian", "I eat steak"),
]
DISHES_NEIGHBOURS = [
    ("I'm vegetarian", "I had a veggie burger for lunch"),
    ("I'm vegetarian", "I had a Beyond burger"),
    ("I'm vegetarian", "I had a meat-free burger"),
    ("I'm vegetarian", "I had a black bean burger for lunch"),
    ("I'm vegetarian", "I had a tofu stir-fry for lunch"),
    ("I'm vegetarian", "I had a salad for lunch"),
    ("I'm vegetarian", "I had a cheese sandwich for lunch"),  # vegetarians may
    ("I'm vegetarian", "I had fish fingers for dinner"),  # not a dish of the list: left alone
    ("I'm vegetarian", "My husband had a burger for lunch"),  # another person
    ("I was vegetarian", "I had a burger for lunch"),  # past
    ("I'm vegetarian", "I cooked a burger for my son"),  # cooking is not eating
    ("I'm vegetarian", "I have chickens"),  # animals kept, not a meal
    ("I'm vegetarian", "I have a pet chicken"),
    ("I'm vegetarian", "I had a chicken"),
    ("I'm vegetarian", "I ate steak as a kid"),
    ("I don't eat fish", "I eat avocado sushi"),
    ("I became a vegetarian", "I eat tofu"),
    ("I became a vegetarian in 2015", "I used to eat steak"),
    ("I went vegan for a month", "I eat cheese"),
]

COUNTS = [
    ("I have one child", "I have two kids"),
    ("I have two kids", "I have three children"),
    ("I have one brother", "I have two brothers"),
    ("I have two cars", "I have one car"),
    ("Tom has 2 dogs", "Tom has three dogs"),
]
COUNTS_NEIGHBOURS = [
    ("I have one child", "I have two cats"),  # different things counted
    ("I have one brother", "I have two sisters"),
    ("I have one brother", "I have two siblings"),
    ("I have one car", "I have two bikes"),
    ("I have one dog", "I have two cats"),
    ("I have two kids", "I have two cats"),
    ("I have two kids", "I have 2 children"),  # one count said two ways
    ("I have one child", "My sister has two kids"),  # another person
    ("I have two kids", "We have three kids"),
    ("I have two young kids", "I have three kids"),  # two of the three may be young
    ("I have three cats", "I have two cats and a dog"),
]

ABILITY = [
    ("I can't drive", "I drive to work every day"),
    ("I don't drive", "I drive to work"),
    ("I can't walk", "I walk to school"),
    ("I don't work", "I work from home"),
]
ABILITY_NEIGHBOURS = [
    ("I can't drive", "My wife drives to work every day"),  # another person
    ("I can't drive", "I take the bus to work"),
    ("I can't drive", "I used to drive to work"),  # past
    ("I can't drive", "I drive a hard bargain"),  # an object that is no vehicle: left alone
    ("I don't run", "I run a company"),  # another sense
    ("I don't care", "I care for my mother"),
    ("I can't make it on Friday", "I go to the gym on Friday"),
    ("I don't like coffee", "I like coffee from that shop"),
]

FROM = [
    ("I'm from Spain", "I'm from Italy"),
    ("I'm from Canada", "I'm from Australia"),
]
FROM_NEIGHBOURS = [
    ("I'm from London", "I'm from a small town"),  # not two names
    ("I'm from Canada", "I live in Australia"),
    ("I'm from Spain", "My wife is from Italy"),
]


@pytest.mark.parametrize(
    ("a", "b"), STATES + MEDICATION + PARTNER_AND_CAR + KIN + DISHES + COUNTS + ABILITY + FROM
)
def test_the_shape_is_a_contradiction(a: str, b: str) -> None:
    assert both_ways(a, b), (compare(a, b), compare(b, a))


@pytest.mark.parametrize(
    ("a", "b"),
    STATES_NEIGHBOURS
    + MEDICATION_NEIGHBOURS
    + PARTNER_AND_CAR_NEIGHBOURS
    + KIN_NEIGHBOURS
    + DISHES_NEIGHBOURS
    + COUNTS_NEIGHBOURS
    + ABILITY_NEIGHBOURS
    + FROM_NEIGHBOURS,
)
def test_its_near_neighbours_stay_compatible(a: str, b: str) -> None:
    assert not flags(a, b), (compare(a, b), compare(b, a))
    assert not found(a, b, 0.0) and not found(a, b, 1.0)


@pytest.mark.parametrize(
    ("a", "b"),
    STATES + MEDICATION + PARTNER_AND_CAR + KIN + DISHES + COUNTS + ABILITY,
)
def test_the_shape_is_found_whatever_the_cosine(a: str, b: str) -> None:
    # orthogonal vectors: the model would call the topics unrelated, so only the shapes pair them
    assert found(a, b, 0.0)
    assert found(a, b, 1.0)


def test_the_reason_names_the_shape() -> None:
    assert compare("I'm a morning person", "I'm a night owl").reason == "states that exclude each other"
    assert compare("I'm not on any medication", "I take insulin").reason == "a thing and its stated absence"
    assert compare("Sarah is my sister", "Sarah is my cousin").reason == "two relations to one person"
    assert compare("I'm vegetarian", "I had a burger for lunch").reason == "a diet and a food it excludes"
    assert compare("I have one child", "I have two kids").reason == "different counts"


def test_a_shape_below_the_topic_gate_is_not_read_by_compare() -> None:
    assert compare("Sarah is my sister", "Sarah is my cousin", cosine=0.3).kind != CONTRADICTION


def test_the_same_count_is_not_a_conflict_of_counts() -> None:
    assert compare("I have two kids", "I have 2 children").kind != CONTRADICTION
    assert compare("I have two kids", "I have three kids").kind == CONTRADICTION
