"""Still more contradictions that take a little world knowledge: "only X" against another X of its kind ("I
only speak English" / "I speak fluent Spanish"), a habit denied and done in an amount or with its own goods
("I don't smoke" / "I smoke a pack a day"), a denial of driving against driving a vehicle ("I can't drive" /
"I drive a Tesla"), meats some do not eat ("I don't eat pork" / "I had a ham sandwich for lunch"), a place
never been to and been to, and where one is from when the two places can't hold together ("I'm from Spain"
/ "I'm from Italy", not "I'm from Spain" / "I'm from Madrid"). Each shape has its near neighbours beside it,
which must stay compatible. Read by the offline rules (:func:`compare`) both ways round, and by the
consolidation's pair finder whatever the model's cosine (where-one-is-from only at one topic)."""

from __future__ import annotations

import pytest

from memdeck.core.consolidate.contradict import compare
from tests.contradiction_pairs import both_ways, flags, found

ONLY = [
    ("I only speak English", "I speak fluent Spanish"),
    ("I only speak English", "I'm fluent in French"),
    ("I speak only English", "I speak German at work"),
    ("I only drink tea", "I drink coffee every morning"),
    ("I only drink water", "I drink beer every weekend"),
    ("I only drink wine", "I drink beer"),
    ("I only eat chicken", "I eat beef"),
    ("I only eat fish", "I eat chicken on Mondays"),
    ("I only play the piano", "I play the guitar"),
    ("I only have a cat", "I have a dog"),
    ("Tom only speaks Italian", "Tom speaks Greek"),
]
ONLY_NEIGHBOURS = [
    ("I only eat fish on Fridays", "I eat chicken on Mondays"),  # qualified: may say when
    ("I only eat fish on Fridays", "I eat chicken"),
    ("I only speak English at home", "I speak French at work"),
    ("I only drink tea in the morning", "I drink coffee at work"),
    ("I only speak English", "I speak English fluently"),  # the same thing
    ("I only drink green tea", "I drink tea every morning"),
    ("I only speak English", "My wife speaks Spanish"),  # another person
    ("I only speak English", "I'm learning Spanish"),
    ("I only drink tea", "I used to drink coffee"),  # past
    ("I only drink tea", "I drink water"),  # another kind of drink
    ("I only drink decaf", "I drink decaf coffee"),
    ("I only drink coffee", "I drink caffeine"),
    ("I only eat fish", "I eat vegetables"),
    ("I only eat fish", "I eat salmon"),  # of the kind named
    ("I only eat meat", "I eat chicken"),
    ("I only play the piano", "I play tennis"),
    ("I only have one cat", "I have a dog"),  # a count: how many cats
    ("I only have a cat", "I have a car"),
    ("I only have a son", "I have a kid"),
    ("I'm an only child", "I have a cat"),
]

HABIT_AMOUNTS = [
    ("I don't smoke", "I smoke a pack a day"),
    ("I don't smoke", "I smoke cigarettes"),
    ("I don't smoke", "I smoke 20 cigarettes a day"),
    ("I've never smoked", "I smoke a pack a day"),
    ("I quit smoking", "I smoke a pack a day"),
    ("I don't drink", "I drink two glasses of wine a night"),
    ("I don't drink", "I drink a pint every night"),
    ("I don't drink alcohol", "I drink three beers a night"),
    ("I don't drink coffee", "I drink three cups of coffee a day"),
]
HABIT_AMOUNTS_NEIGHBOURS = [
    ("I don't smoke", "I smoke salmon at home"),  # another sense
    ("I don't smoke", "I smoke meat on weekends"),
    ("I don't smoke", "I used to smoke a pack a day"),  # past
    ("I don't smoke", "My dad smokes a pack a day"),  # another person
    ("I don't drink", "I drink two glasses of water a day"),  # not alcohol
    ("I don't drink", "I drink a lot of water"),
    ("I don't drink", "I drink tea every morning"),
    ("I don't drink coffee", "I drink three cups of tea a day"),
    ("I don't drink", "I used to drink two glasses of wine a night"),
    ("I don't run", "I run a company"),  # an object of another sense stays alone
]

DRIVING = [
    ("I can't drive", "I drive a Tesla"),
    ("I can't drive", "I drive a red Volvo"),
    ("I can't drive", "I drive a bus for a living"),
    ("I don't drive", "I drive a truck"),
    ("I don't have a car", "I drive my own car to work"),
]
DRIVING_NEIGHBOURS = [
    ("I can't drive", "My wife drives a Tesla"),
    ("I can't drive", "I want to drive a Tesla"),
    ("I can't drive", "I used to drive a Volvo"),
    ("I can't drive", "I drive a hard bargain"),
    ("I can't drive", "I drive my kids crazy"),
    # one may drive a car that is not one's own: a company car, a partner's, a rental
    ("I have no car", "I drive to work"),
    ("I don't have a car", "I drive a Tesla"),
    ("I don't have a car", "I drive a company car"),
    ("I don't have a car", "I drive my wife's car to work"),
]

MEATS = [
    ("I don't eat pork", "I had a ham sandwich for lunch"),
    ("I don't eat pork", "I eat bacon every morning"),
    ("I don't eat pork", "I had pepperoni pizza for dinner"),
    ("I don't eat beef", "I had a steak"),
    ("I don't eat beef", "I had a burger for lunch"),
    ("I don't eat meat", "I had a steak"),
    ("I'm vegetarian", "I had a bacon sandwich yesterday"),
    ("I've never eaten meat", "I had a burger for lunch"),
]
MEATS_NEIGHBOURS = [
    ("I don't eat pork", "I had a chicken sandwich for lunch"),
    ("I don't eat pork", "I had a turkey sandwich for lunch"),
    ("I don't eat pork", "I eat beef"),
    ("I don't eat beef", "I had a veggie burger"),
    ("I don't eat beef", "I had a chicken burger for lunch"),
    ("I don't eat beef", "I had a steak knife"),
    ("I don't eat beef", "I ate steak as a kid"),
    ("I don't eat beef", "I had a tuna steak"),
    ("I don't eat beef", "I had a steak in 2010"),  # long ago
    ("I'm vegetarian", "I had a sausage dog"),
    ("I'm vegetarian", "I had a chicken"),  # may be a pet
]

NEVER_BEEN = [
    ("I've never been to Japan", "I visited Japan last year"),
    ("I have never been to Paris", "I went to Paris in 2019"),
    ("Tom has never visited Rome", "Tom has been to Rome twice"),
]
NEVER_BEEN_NEIGHBOURS = [
    ("I've never been to Japan", "My wife visited Japan last year"),
    ("I've never been to Japan", "I visited China last year"),
    ("I've never been to Japan", "I want to go to Japan"),
    ("I haven't been to the gym this week", "I went to the gym on Monday"),
    ("I haven't been to the gym", "I went to the gym last year"),  # not "never"
    ("I've never been to Japan in winter", "I visited Japan last summer"),
]

FROM = [
    ("I'm from Spain", "I'm from Italy"),
    ("I'm from Madrid", "I'm from Lisbon"),
    ("I'm from Texas", "I'm from Ohio"),
    ("I'm from Spain", "I'm from Texas"),  # a region of another country
    ("I'm from England", "I'm from Scotland"),
    ("I'm from Canada", "I'm from Mexico"),
    ("I'm from the US", "I'm from Canada"),
]
FROM_NEIGHBOURS = [
    ("I'm from Spain", "I'm from Madrid"),  # a city may be in a country
    ("I'm from Spain", "I'm from Barcelona"),
    ("I'm from Texas", "I'm from Austin"),
    ("I'm from Europe", "I'm from Spain"),
    ("I'm from the UK", "I'm from England"),  # a region of its own country
    ("I'm from New York", "I'm from Brooklyn"),
    ("I'm from Scotland", "I'm from Glasgow"),
    ("I'm from Canada", "I'm from Ontario"),
    ("I'm from the US", "I'm from the USA"),  # one country said two ways
    ("I'm from Georgia", "I'm from Atlanta"),  # Georgia: a country and a US state
    ("I'm from Spain", "My husband is from Madrid"),
]

SHAPES = ONLY + HABIT_AMOUNTS + DRIVING + MEATS + NEVER_BEEN
NEIGHBOURS = (
    ONLY_NEIGHBOURS
    + HABIT_AMOUNTS_NEIGHBOURS
    + DRIVING_NEIGHBOURS
    + MEATS_NEIGHBOURS
    + NEVER_BEEN_NEIGHBOURS
    + FROM_NEIGHBOURS
)


@pytest.mark.parametrize(("a", "b"), SHAPES + FROM)
def test_the_shape_is_a_contradiction(a: str, b: str) -> None:
    assert both_ways(a, b), (compare(a, b), compare(b, a))


@pytest.mark.parametrize(("a", "b"), NEIGHBOURS)
def test_its_near_neighbours_stay_compatible(a: str, b: str) -> None:
    assert not flags(a, b), (compare(a, b), compare(b, a))
    assert not found(a, b, 0.0) and not found(a, b, 1.0)


@pytest.mark.parametrize(("a", "b"), SHAPES)
def test_the_shape_is_found_whatever_the_cosine(a: str, b: str) -> None:
    # orthogonal vectors: the model would call the topics unrelated, so only the shapes pair them
    assert found(a, b, 0.0)
    assert found(a, b, 1.0)


@pytest.mark.parametrize(("a", "b"), FROM)
def test_where_one_is_from_is_found_on_one_topic(a: str, b: str) -> None:
    assert found(a, b, 1.0)


def test_the_reason_names_the_shape() -> None:
    assert compare("I only speak English", "I speak Spanish").reason == "the only one of a kind and another"
    assert compare("I don't smoke", "I smoke a pack a day").reason == "a habit denied and done"
    assert (
        compare("I don't eat pork", "I had a ham sandwich for lunch").reason
        == "a diet and a food it excludes"
    )
    assert (
        compare("I've never been to Japan", "I visited Japan").reason == "a place never been to and been to"
    )


def test_only_is_read_as_part_of_the_statement_not_of_its_subject() -> None:
    # "I only eat fish" still says what I eat: against a vegetarian diet it conflicts as "I eat fish" does
    assert both_ways("I'm vegetarian", "I only eat fish")
    assert not flags("I'm an only child", "I have a cat")
