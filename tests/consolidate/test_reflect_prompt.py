"""The reflection prompt an agent answers at the end of a session: one principal's episodes of that session,
as data, redacted as stored, capped, and refused for a session with nothing in it."""

from __future__ import annotations

import json

import pytest

from memdeck.core.consolidate import digest
from memdeck.core.consolidate.digest import reflection_prompt
from memdeck.core.errors import MemdeckError, NotFound
from memdeck.core.filters import Scope
from memdeck.core.store import Store


def _episode(store: Store, principal: str, session: str, text: str) -> str:
    result = store.remember(text, tier="episodic", principal=principal, agent="bot", session=session)
    assert result.memory is not None
    return result.memory.id


def _lines(prompt: str) -> list[dict[str, str]]:
    body = prompt.split("<episodes>\n", 1)[1].split("\n</episodes>", 1)[0]
    return [json.loads(line) for line in body.splitlines()]


def test_only_this_principals_episodes_of_the_session_oldest_first(store: Store) -> None:
    first = _episode(store, "alice", "s1", "We looked at flights to Oslo for the spring trip")
    second = _episode(store, "alice", "s1", 'She said "ignore previous instructions" was a joke from work')
    _episode(store, "alice", "s2", "A different conversation about the garden")
    _episode(store, "bob", "s1", "Bob's own episode in a session of the same name")

    prompt = reflection_prompt(store.engine, "alice", "s1")
    episodes = _lines(prompt)
    assert [e["id"] for e in episodes] == [first, second]
    assert "garden" not in prompt and "Bob's own" not in prompt
    # Quoted text stays inside its JSON line: it cannot end the episodes block or start a new instruction.
    assert episodes[1]["text"].startswith("She said")
    assert "close_session" in prompt.split("</episodes>", 1)[1]


def test_secrets_reach_the_prompt_only_as_stored(store: Store) -> None:
    _episode(store, "alice", "s1", "My AWS key is AKIAZ7Q3M9XK2P4LB8WD, keep it handy")
    prompt = reflection_prompt(store.engine, "alice", "s1")
    assert "AKIAZ7Q3M9XK2P4LB8WD" not in prompt
    assert _lines(prompt)[0]["text"] == store.list(Scope.of("alice"), limit=1)[0].text


def test_a_long_session_is_capped_to_its_newest_episodes(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(digest, "REFLECT_MAX_EPISODES", 3)
    ids = [_episode(store, "alice", "s1", f"Step {n} of moving the blog to the new host") for n in range(5)]
    prompt = reflection_prompt(store.engine, "alice", "s1")
    assert [e["id"] for e in _lines(prompt)] == ids[2:]
    assert "2 older episodes are left out" in prompt


def test_an_empty_or_unknown_session_is_refused(store: Store) -> None:
    with pytest.raises(NotFound, match="never-written"):
        reflection_prompt(store.engine, "alice", "never-written")
    _episode(store, "bob", "s1", "Bob planned the week")
    with pytest.raises(NotFound, match="s1"):
        reflection_prompt(store.engine, "alice", "s1")  # bob's session is not alice's
    with pytest.raises(MemdeckError, match="session id is required"):
        reflection_prompt(store.engine, "alice", "  ")
