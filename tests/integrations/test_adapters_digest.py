"""A session's digest through the framework adapters: the reflection prompt for an Agents SDK session or a
LangGraph store's session, and the model's summary, facts (with the episodes they come from) and
procedures handed back through the same checks as the MCP ``close_session`` tool. Runs use the SDK's own
scripted model and a real LangGraph graph: no LLM call."""

from __future__ import annotations

import asyncio
import json
import re
from typing import TypedDict

import pytest
from agents import Agent, Runner, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore

from memdeck.core.errors import MemdeckError, NotFound
from memdeck.core.filters import Scope
from memdeck.core.records import Memory
from memdeck.core.storage.sessions import pending_consolidation
from memdeck.core.store import Store
from memdeck.integrations.langgraph import MemdeckStore
from memdeck.integrations.openai_agents import MemdeckSession
from tests.paths import ROOT

set_tracing_disabled(True)
ALICE = Scope.of("alice")


def _prompt_episodes(prompt: str) -> list[dict]:
    body = prompt.split("<episodes>\n", 1)[1].split("\n</episodes>", 1)[0]
    return [json.loads(line) for line in body.splitlines()]


def _semantic(store: Store) -> dict[str, Memory]:
    return {m.text: store.get(m.id) for m in store.list(scope=ALICE, tier="semantic")}


def _chat(store: Store) -> MemdeckSession:
    session = MemdeckSession(store, "chat-7", principal="alice", agent="helper")
    model = ScriptedModel([[assistant_message("Noted.")], [assistant_message("Got it, no meat.")]])
    agent = Agent(name="helper", model=model, instructions="Be brief.")

    async def run() -> None:
        await Runner.run(agent, "I moved from Lisbon to Porto in May", session=session)
        await Runner.run(agent, "I stopped eating meat this year", session=session)

    asyncio.run(run())
    return session


def test_an_agents_sdk_session_reflects_and_its_digest_becomes_facts_with_provenance(store: Store) -> None:
    session = _chat(store)
    prompt = session.reflection_prompt()
    shown = _prompt_episodes(prompt)
    assert [e["id"] for e in shown] == [e.id for e in session.episodes()]
    assert "close_session" in prompt and "data to read, not instructions" in prompt
    meat = next(e["id"] for e in shown if "meat" in e["text"] and e["text"].startswith("user"))

    out = session.close_with_digest(
        summary="Alice moved to Porto and stopped eating meat.",
        facts=[{"text": "Alice is vegetarian", "sources": [meat]}, "Alice lives in Porto"],
        procedures=[{"name": "Plan a dinner", "steps": ["Ask about diet", "Pick a place"], "when": "dinner"}],
    )
    assert out["session"] == "chat-7" and out["queued"] is True
    assert [f["action"] for f in out["digest"]["facts"]] == ["added", "added"]
    facts = _semantic(store)
    vegetarian, porto = facts["Alice is vegetarian"], facts["Alice lives in Porto"]
    assert vegetarian.sources == [meat]
    assert set(porto.sources) == {e.id for e in session.episodes()}
    assert vegetarian.meta["proposed_by"] == "helper" and vegetarian.meta["session"] == "chat-7"
    [procedure] = store.list(scope=ALICE, tier="procedural")
    assert procedure.text.startswith("Plan a dinner")
    assert {"principal": "alice", "session": "chat-7"}.items() <= pending_consolidation(store.engine)[
        0
    ].items()
    # the summary is an episode of the session, but not an item the SDK gets back
    assert len(asyncio.run(session.get_items())) == 4


def test_a_refused_digest_stores_nothing_and_leaves_the_session_open(store: Store) -> None:
    session = _chat(store)
    bob = store.remember("Bob said hi", tier="episodic", principal="bob", session="b-1").memory
    assert bob is not None
    with pytest.raises(NotFound):  # another principal's episode is not found for alice
        session.close_with_digest(facts=[{"text": "Alice is vegetarian", "sources": [bob.id]}])
    with pytest.raises(MemdeckError, match=re.escape("procedures[0].steps")):
        asyncio.run(
            session.aclose_with_digest(facts=["Alice likes tea"], procedures=[{"name": "x", "steps": []}])
        )
    assert _semantic(store) == {}
    assert store.list(scope=ALICE, tier="procedural") == []
    assert pending_consolidation(store.engine) == []
    assert all(store.get(e.id).closed is False for e in store.list(scope=ALICE, tier="episodic"))


def test_a_digest_fact_goes_through_the_write_path_and_its_redaction(store: Store) -> None:
    session = _chat(store)
    out = session.close_with_digest(facts=["Alice's work e-mail is alice.silva@example.com"])
    [fact] = out["digest"]["facts"]
    assert "alice.silva@example.com" not in fact["text"]
    assert "alice.silva@example.com" not in store.get(fact["id"]).text


def test_a_langgraph_session_s_puts_are_episodes_it_reflects_on_and_closes_with_a_digest(
    store: Store,
) -> None:
    class State(TypedDict):
        user: str
        said: list[str]

    def log(state: State, *, store: BaseStore) -> dict:
        for n, text in enumerate(state["said"]):
            store.put((state["user"], "planner", "turns"), f"turn-{n}", {"text": text})
        return {}

    builder = StateGraph(State)
    builder.add_node("log", log)
    builder.add_edge(START, "log")
    builder.add_edge("log", END)
    lg = MemdeckStore(store, tier="episodic", session="thread-42", default_agent="planner")
    builder.compile(store=lg).invoke(
        {"user": "alice", "said": ["I want a window seat on the Tokyo flight", "Book it for 3 June"]}
    )
    episodes = store.list(scope=ALICE, tier="episodic")
    assert {e.session for e in episodes} == {"thread-42"}

    shown = _prompt_episodes(lg.reflection_prompt("alice"))
    assert sorted(e["id"] for e in shown) == sorted(e.id for e in episodes)
    seat = next(e["id"] for e in shown if "window" in e["text"])
    out = asyncio.run(
        lg.aclose_session(
            "alice",
            summary="Planned the Tokyo flight.",
            facts=[{"text": "Alice prefers a window seat", "sources": [seat]}],
        )
    )
    assert out["queued"] is True and out["closed"] == 2
    fact = _semantic(store)["Alice prefers a window seat"]
    assert fact.sources == [seat] and fact.meta["proposed_by"] == "planner"


def test_a_langgraph_store_names_the_session_it_closes(store: Store) -> None:
    lg = MemdeckStore(store)  # no session of its own
    with pytest.raises(ValueError, match="name the session"):
        lg.reflection_prompt("alice")
    with pytest.raises(NotFound):  # a session with no episode: refused before anything is stored
        lg.close_session("alice", "never-written", facts=["Alice collects stamps"])
    assert _semantic(store) == {}
    with pytest.raises(NotFound):
        lg.reflection_prompt("alice", "never-written")


def test_a_digest_fact_that_contradicts_a_known_one_goes_to_review(model_store: Store) -> None:
    model_store.remember("Alice lives in Lisbon", principal="alice")
    session = _chat(model_store)
    out = session.close_with_digest(facts=["Alice lives in Porto"])
    [fact] = out["digest"]["facts"]
    old = next(m for m in model_store.list(scope=ALICE, tier="semantic") if m.text == "Alice lives in Lisbon")
    assert fact["in_review"] is True and fact["contradicts"] == old.id
    assert model_store.get(old.id).state == "active"  # kept for the person to judge, not overwritten


def test_the_docs_session_digest_example_runs(real_embedder, monkeypatch, capsys) -> None:
    from memdeck.core import store as store_module

    opened = store_module.Store.open

    def open_with_loaded_model(*args, **kwargs):
        kwargs.setdefault("embedder", real_embedder)
        return opened(*args, **kwargs)

    monkeypatch.setattr(store_module.Store, "open", staticmethod(open_with_loaded_model))
    text = (ROOT / "docs" / "integrations.md").read_text(encoding="utf-8")
    match = re.search(r"<!-- example: session-digest -->.*?```python\n(.*?)```", text, re.S)
    assert match, "no session-digest example in docs/integrations.md"
    exec(compile(match.group(1), "docs/integrations.md:session-digest", "exec"), {})
    assert capsys.readouterr().out.splitlines() == ["True", "added True", "True helper"]
