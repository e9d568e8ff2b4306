"""A fact said today and a fact said another way still meet: words that only say a statement holds now
("now", "currently", "these days") add nothing to it, and one relation said several ways ("works for",
"works at", "is employed by"; "lives in", "is based in", "moved to") is read as one. Pairs written in everyday phrasing, apart from the labelled set."""

from __future__ import annotations

import pytest

from memdeck.core.consolidate import consolidate, contradictions
from memdeck.core.consolidate.contradict import CONTRADICTION, SAME, compare
from memdeck.core.filters import Scope
from memdeck.core.store import Store

CONTRADICTIONS = [
    ("Tom works at Google.", "Tom now works for Microsoft."),
    ("Sara is currently based in Oslo.", "Sara is based in Bergen."),
    ("Jamal works for the BBC.", "Jamal works at Reuters these days."),
    ("Nina is employed by Siemens.", "Nina works at Bosch."),
    ("At the moment the build server runs Jenkins.", "The build server runs GitLab CI."),
    ("Omar lives in Cairo.", "Omar has moved to Dubai."),
    ("Sara is currently based in Oslo.", "Sara lives in Bergen."),
    ("Priya resides in Pune.", "Priya relocated to Chennai."),
    # a name said two ways
    ("The dog's name is Max.", "The dog is called Rocky."),
    ("The cat is named Luna.", "The cat's name is Miso."),
    # denied outright on one side, done at a time or in a way on the other
    ("I don't drink coffee.", "I drink coffee every morning."),
    ("She doesn't smoke.", "She smokes on weekends."),
    ("I never eat breakfast.", "I eat breakfast every day."),
    ("Maria doesn't speak French.", "Maria speaks French fluently."),  # how: an adverb of manner
    # opposite verbs, one side saying when
    ("I love hiking on weekends.", "I hate hiking."),
    # states a subject is in one at a time
    ("Maria is married to Tom.", "Maria is single."),
    ("I'm vegan.", "I'm vegetarian."),
    ("The car is red.", "The car is blue."),  # one colour at a time
    ("My eyes are blue.", "My eyes are brown."),
]
SAME_FACT = [
    ("Tom works at Google.", "Tom works at Google now."),
    ("Right now I am reading Dune.", "I am reading Dune."),
    ("Nina works for Bosch.", "Nina is employed by Bosch."),
    ("My sister is called Anna.", "My sister's name is Anna."),
]
NOT_CONTRADICTIONS = [
    ("Tom works at Google now.", "Tom worked at Microsoft until 2019."),
    ("Jamal works at the BBC.", "Priya works at Reuters these days."),
    ("Sara currently plays the violin.", "Sara plays the piano."),
    ("Lena moved to Rome in 2019.", "Lena lives in Rome."),
    ("Omar lives in Cairo.", "Priya has moved to Dubai."),
    # the other side does another thing, or the denial is the narrower one
    ("I don't eat meat.", "I eat meat substitutes."),
    ("Tom doesn't work at Google.", "Tom works at Google Cloud."),
    ("I don't drink coffee at night.", "I drink coffee."),
    ("The vegan menu is popular.", "The vegetarian menu is popular."),  # a kind of menu, no one's state
    ("The car is red.", "The car is red and white."),  # a second colour adds to the first
    ("The red car is mine.", "The blue car is mine."),  # two cars
    ("Her hair is blond.", "Her hair is blonde."),  # one colour spelled two ways
    ("The car is grey.", "The car is gray."),
    ("I love hiking.", "I hate hiking in the rain when the trail is muddy."),  # a clause of its own
    ("I don't speak French.", "I speak Spanish fluently."),
]


@pytest.mark.parametrize(("a", "b"), CONTRADICTIONS)
def test_a_changed_value_said_today_or_another_way_is_a_contradiction(a: str, b: str) -> None:
    assert compare(a, b).kind == CONTRADICTION, compare(a, b)


@pytest.mark.parametrize(("a", "b"), SAME_FACT)
def test_the_same_fact_said_today_or_another_way_is_the_same(a: str, b: str) -> None:
    assert compare(a, b).kind == SAME, compare(a, b)


@pytest.mark.parametrize(("a", "b"), NOT_CONTRADICTIONS)
def test_past_other_subjects_and_values_that_coexist_stay_compatible(a: str, b: str) -> None:
    assert compare(a, b).kind != CONTRADICTION, compare(a, b)


def test_consolidation_flags_a_job_change_said_another_way(model_store: Store) -> None:
    old = model_store.remember("Tom works at Google.", tier="semantic", principal="alice").memory.id
    new = model_store.remember("Tom now works for Microsoft.", tier="semantic", principal="alice").memory.id
    consolidate(model_store.engine, "alice")
    found = {frozenset((c.a_id, c.b_id)) for c in contradictions(model_store.engine, Scope.of("alice"))}
    assert frozenset((old, new)) in found


# Below MiniLM's topic gate (cosine 0.41-0.42): found because both parse to one subject and one single-valued
# relation, whatever person or verb says it.
BELOW_THE_GATE = [
    ("I live in Berlin.", "I moved to Lisbon."),
    ("The team is based in Austin.", "The team relocated to Denver."),
]


@pytest.mark.parametrize(("a", "b"), BELOW_THE_GATE)
def test_consolidation_flags_a_move_said_in_other_words(model_store: Store, a: str, b: str) -> None:
    old = model_store.remember(a, tier="semantic", principal="alice").memory.id
    new = model_store.remember(b, tier="semantic", principal="alice").memory.id
    # Other facts of the same person stay out of it.
    model_store.remember("I work at a bakery.", tier="semantic", principal="alice")
    model_store.remember("Ken moved to the back row.", tier="semantic", principal="alice")
    consolidate(model_store.engine, "alice")
    found = {frozenset((c.a_id, c.b_id)) for c in contradictions(model_store.engine, Scope.of("alice"))}
    assert found == {frozenset((old, new))}
