"""Explicit statements become facts without any agent: the extractor per kind, its look-alikes, the
consolidation path through a real store, and the precision gate on the held-out labelled set."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memdeck.core.consolidate import consolidate
from memdeck.core.consolidate.statements import explicit_facts, explicit_statements
from memdeck.core.filters import Scope
from memdeck.core.store import Store
from tests.paths import ROOT

BENCH = ROOT / "bench"
MEMDECK = Path(sys.executable).with_name("memdeck")


@pytest.mark.parametrize(
    ("text", "kind", "fact"),
    [
        (
            "Alice said: remember that my daughter's school is St Mary's",
            "remember",
            "Alice's daughter's school is St Mary's",
        ),
        ("remember that my daughter's school is St Mary's", "remember", "My daughter's school is St Mary's"),
        (
            "Please remember the clinic opens at 8 am on weekdays.",
            "remember",
            "The clinic opens at 8 am on weekdays",
        ),
        ("Don't forget that Sam only drinks oat milk.", "remember", "Sam only drinks oat milk"),
        (
            "Note that the board meets on the second Tuesday of each month.",
            "remember",
            "The board meets on the second Tuesday of each month",
        ),
        ("Bob: I prefer window seats.", "preference", "Bob prefers window seats"),
        ("Oh, my favourite colour is green!", "preference", "My favourite colour is green"),
        ("I hate cilantro.", "preference", "I hate cilantro"),
        (
            'Caroline said, "I love hiking in the mountains"',
            "preference",
            "Caroline loves hiking in the mountains",
        ),
        ("We decided to ship on Fridays.", "decision", "We decided to ship on Fridays"),
        (
            "We agreed on Postgres for the new service.",
            "decision",
            "We agreed on Postgres for the new service",
        ),
        ("We'll use Kafka for the event bus.", "decision", "We will use Kafka for the event bus"),
        ("We use Terraform for all infrastructure.", "usage", "We use Terraform for all infrastructure"),
        ("Jake: my manager is Karen Li.", "attribute", "Jake's manager is Karen Li"),
        ("Our dog's name is Rex.", "attribute", "Our dog's name is Rex"),
        ("My name's Priya, by the way.", "attribute", "My name is Priya"),
        ("I'm allergic to penicillin.", "personal", "I am allergic to penicillin"),
        ("Sofia: I live in Brooklyn.", "personal", "Sofia lives in Brooklyn"),
        ("Dana: I work as a nurse", "personal", "Dana works as a nurse"),
        ("Alice: I'm originally from Kenya.", "personal", "Alice is originally from Kenya"),
        ("I'm based in Madrid.", "personal", "I am based in Madrid"),
        ("We're going to use Next.js for the site.", "decision", "We are going to use Next.js for the site"),
        ("My partner's name is Sam and she works at the BBC.", "attribute", "My partner's name is Sam"),
    ],
)
def test_each_kind_becomes_a_standalone_fact(text: str, kind: str, fact: str) -> None:
    found = explicit_statements(text)
    assert [(s.kind, s.text) for s in found] == [(kind, fact)]


@pytest.mark.parametrize(
    "text",
    [
        "Do you remember that trip to Rome?",  # a question
        "I remember that we laughed a lot that night.",  # reminiscing, not a request
        "Would you prefer tea or coffee?",
        "If I lived in Paris I would be happy.",  # hypothetical
        "Maybe we'll use Kafka.",
        "We might go with Vercel.",
        "I'd like a coffee please.",
        "I don't like mushrooms.",  # negated
        "We decided not to ship on Fridays.",
        "I'm not allergic to anything.",
        "She said she prefers tea.",  # about someone else
        "He told me his favourite band is Muse.",
        "John loves hiking.",
        "Alice said I live in Porto.",  # whose home? the writer's, reported by Alice
        "She said: I love jazz.",
        '"I prefer the red one," she laughed.',  # quoted third-party text
        'The sign said "remember that you are mortal".',
        "We were going to use Mongo but changed our mind.",  # a plan called off
        "We decided to go with AWS. Actually scratch that, we cancelled it.",
        "I used to live in Boston.",
        "My phone is dead.",  # a passing state
        "My head is killing me today.",
        "Our flight is delayed.",
        "My point is that we need more tests.",
        "I love that!",  # a reaction
        "I love your new haircut.",
        "Remember to call mom.",  # a to-do, not a fact
        "Assistant: I prefer concise answers.",  # not the person speaking
        "We'll use whatever works.",
        "I prefer the second option.",  # a choice among things just shown
        "We decided to wait.",  # nothing decided to keep
        "I am allergic to bullshit lol",  # a joke
        "I live on coffee.",
        "I'm from work, so busy.",
        "Remember that it takes time to form a bond, don't rush.",  # encouragement, not a fact
        "Remember, the experience matters just as much as the end result.",
        "Deborah: my mom's house had a special bench near the window.",  # a memory of the past, not "my mom is"
    ],
)
def test_look_alikes_give_nothing(text: str) -> None:
    assert explicit_facts(text) == []


def test_several_statements_in_one_text_each_once() -> None:
    text = (
        "Alice: I live in Porto. I work at Acme Corp.\nBob: We use Slack for team chat.\n"
        "Alice: I live in Porto.\nAssistant: Noted, I love Porto."
    )
    assert explicit_facts(text) == [
        "Alice lives in Porto",
        "Alice works at Acme Corp",
        "We use Slack for team chat",
    ]


@pytest.mark.parametrize(
    ("line", "fact"),
    [
        ("The user said: remember that my wife's birthday is 3 June.", "My wife's birthday is 3 June"),
        ("**Alice**: I prefer tea over coffee.", "Alice prefers tea over coffee"),
        ("- Bob: We decided to use Postgres for billing.", "We decided to use Postgres for billing"),
        ("[10:32] Bob: I live in Leeds.", "Bob lives in Leeds"),
        ("Alice (10:32): my dog's name is Rex", "Alice's dog's name is Rex"),
        ("[user] I work at Shopify.", "I work at Shopify"),
        ("Reminder: my passport expires in March 2030.", "My passport expires in March 2030"),
        ("Update: we decided to move the standup to 10am.", "We decided to move the standup to 10am"),
    ],
)
def test_transcript_lines_name_their_speaker(line: str, fact: str) -> None:
    assert explicit_facts(line) == [fact]


@pytest.mark.parametrize(
    "line",
    [
        "Alice (assistant): I prefer concise answers.",
        "AI: I love helping people.",
        "Assistant: Got it, I'll remember that your daughter's school is St Mary's.",
    ],
)
def test_lines_of_an_assistant_are_not_the_persons_statements(line: str) -> None:
    assert explicit_facts(line) == []


def test_a_plan_called_off_later_voids_the_decision_but_not_one_made_after() -> None:
    assert explicit_facts("We decided to use Redis for sessions. Then we scrapped it.") == []
    assert explicit_facts("We scrapped the old plan. We decided to use Redis for sessions.") == [
        "We decided to use Redis for sessions"
    ]
    assert explicit_facts("We decided to use ruff instead of flake8.") == [
        "We decided to use ruff instead of flake8"
    ]


def test_a_line_without_a_speaker_continues_the_turn_above() -> None:
    text = (
        "Alice: hi there\nI live in Porto.\nAssistant: Nice!\nI love Porto too.\n\nUser: my dog's name is Rex"
    )
    assert explicit_facts(text) == ["Alice lives in Porto", "My dog's name is Rex"]


def test_text_without_trigger_words_is_skipped() -> None:
    assert explicit_statements("The weather was lovely and we walked along the beach.") == []
    assert explicit_statements("") == []


def _episode(store: Store, text: str, when: str, principal: str = "alice", **extra: Any) -> str:
    result = store.remember(
        text, tier="episodic", principal=principal, started_at=when, ended_at=when, **extra
    )
    assert result.memory is not None
    return result.memory.id


def _facts(store: Store, principal: str = "alice") -> dict[str, Any]:
    return {m.text: m for m in store.list(Scope.of(principal), tier="semantic", limit=1000)}


def test_explicit_statement_in_an_episode_becomes_a_fact_with_that_source(store: Store) -> None:
    e1 = _episode(
        store, "Alice said: remember that my daughter's school is St Mary's", "2024-03-01T10:00:00Z"
    )
    e2 = _episode(
        store,
        "Chat about travel.",
        "2024-04-01T10:00:00Z",
        events=[
            {"role": "Alice", "text": "Oh and I prefer aisle seats on long flights."},
            {"role": "assistant", "text": "Noted. I love helping with travel plans."},
            {"role": "Alice", "text": "Do you remember my daughter's school?"},
        ],
    )
    _episode(store, "Nothing explicit was said here.", "2024-04-02T10:00:00Z")

    first = consolidate(store.engine, "alice")
    facts = _facts(store)
    assert set(facts) == {
        "Alice's daughter's school is St Mary's",
        "Alice prefers aisle seats on long flights",
    }
    school = facts["Alice's daughter's school is St Mary's"]
    assert school.sources == [e1] and school.evidence_count == 1 and school.agent == "consolidate"
    stored = store.get(school.id)
    assert (
        stored is not None
        and stored.meta["kinds"] == ["explicit"]
        and stored.meta["origin"] == "consolidation"
    )
    assert facts["Alice prefers aisle seats on long flights"].sources == [e2]
    assert len(first.facts_added) == 2

    versions = {t: store.engine.table(t).version for t in store.engine.tiers_present()}
    second = consolidate(store.engine, "alice")
    assert not second.changed, second.to_json()
    assert {t: store.engine.table(t).version for t in store.engine.tiers_present()} == versions
    assert {m.id: (m.evidence_count, tuple(m.sources)) for m in _facts(store).values()} == {
        m.id: (m.evidence_count, tuple(m.sources)) for m in facts.values()
    }

    # The same statement in a later episode reinforces the fact instead of adding another.
    e3 = _episode(store, "Alice: remember that my daughter's school is St Mary's.", "2024-05-01T10:00:00Z")
    third = consolidate(store.engine, "alice")
    school = _facts(store)["Alice's daughter's school is St Mary's"]
    assert school.sources == [e1, e3] and school.evidence_count == 2
    assert not third.facts_added and len(_facts(store)) == 2
    assert _facts(store, "bob") == {}


def test_explicit_facts_are_redacted_like_every_write(store: Store) -> None:
    _episode(store, "Alice: remember that my work email is alice.smith@example.com", "2024-03-01T10:00:00Z")
    consolidate(store.engine, "alice")
    texts = list(_facts(store))
    assert len(texts) == 1
    assert texts[0].startswith("Alice's work email is ") and "alice.smith@example.com" not in texts[0]


def test_precision_on_the_held_out_set_is_at_least_0_9() -> None:
    sys.path.insert(0, str(BENCH))
    try:
        from bench_statements import score
        from statements_set import HELDOUT
    finally:
        sys.path.remove(str(BENCH))
    result = score(HELDOUT)
    positives = sum(item.kind is not None for item in HELDOUT)
    assert positives >= 70 and len(HELDOUT) - positives >= 70
    assert result.precision() >= 0.9, result.errors
    assert result.recall() >= 0.5, result.errors  # precision from extracting next to nothing would not count


def test_a_forgotten_explicit_fact_is_not_derived_again(store: Store) -> None:
    _episode(store, "Alice: I live in Porto.", "2024-03-01T10:00:00Z")
    consolidate(store.engine, "alice")
    fact = _facts(store)["Alice lives in Porto"]
    store.forget([fact.id], "asked to forget where she lives", scope=Scope.of("alice"))
    assert "Alice lives in Porto" not in _facts(store)
    # its source episode is still there, and says the same thing
    assert [m.text for m in store.list(Scope.of("alice"), tier="episodic", limit=10)] == [
        "Alice: I live in Porto."
    ]
    again = consolidate(store.engine, "alice")
    assert not again.facts_added and "Alice lives in Porto" not in _facts(store)


def test_the_memdeck_command_turns_a_remember_request_into_a_fact(tmp_path: Path) -> None:
    home = tmp_path / "cli-home"
    home.mkdir()
    (home / "config.toml").write_text('[embedding]\nmodel = "hash-384"\n', encoding="utf-8")
    env = {**os.environ, "MEMDECK_HOME": str(home)}
    env.pop("MEMDECK_DEBUG", None)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        r = subprocess.run(
            [str(MEMDECK), *args, "--store", str(tmp_path / "cli-store")],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
        return r

    added = json.loads(
        run(
            "add",
            "Alice said: remember that my daughter's school is St Mary's",
            "--tier",
            "episodic",
            "--principal",
            "alice",
            "--json",
        ).stdout
    )
    run(
        "add",
        "Alice asked whether we should use Redis. Maybe later.",
        "--tier",
        "episodic",
        "--principal",
        "alice",
    )
    assert "1 facts added" in run("consolidate", "--principal", "alice").stdout
    consolidated = run("consolidate", "--principal", "alice").stdout
    assert "nothing to consolidate" in consolidated  # a second run finds nothing new
    rows = json.loads(run("list", "--principal", "alice", "--tier", "semantic", "--json").stdout)
    assert [(m["text"], m["sources"], m["agent"]) for m in rows] == [
        ("Alice's daughter's school is St Mary's", [added["memory"]["id"]], "consolidate")
    ]
