"""memdeck.integrations.openai_agents: an Agents SDK session kept as one memdeck session's episodes, and a
context pack in an Agent's instructions. Runs use the SDK's own scripted model: no LLM call."""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from agents import Agent, Runner, set_tracing_disabled
from agents.memory import Session
from agents.testing import ScriptedModel, assistant_message

from memdeck.core.errors import NotFound
from memdeck.core.filters import Scope
from memdeck.core.recall.traces import injections
from memdeck.core.receipts.verify import verify_receipt
from memdeck.core.storage.sessions import pending_consolidation
from memdeck.integrations.openai_agents import MARKER_TAG, MemdeckSession, context_instructions, render_item
from tests.paths import ROOT

set_tracing_disabled(True)


def user(text: str) -> dict:
    return {"role": "user", "content": text}


def assistant(text: str) -> dict:
    return {
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "id": "m",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


@pytest.fixture
def session(store):
    return MemdeckSession(store, "chat-1", principal="alice", agent="helper")


def test_it_is_an_sdk_session(session):
    assert isinstance(session, Session)
    assert session.session_id == "chat-1"


def test_items_are_one_sessions_episodes_in_order(session, store):
    items = [user(f"turn {n}") for n in range(12)]
    asyncio.run(session.add_items(items[:5]))
    asyncio.run(session.add_items(items[5:]))
    assert asyncio.run(session.get_items()) == items
    assert asyncio.run(session.get_items(limit=3)) == items[-3:]
    assert asyncio.run(session.get_items(limit=0)) == []
    episodes = store.list(Scope.of("alice"), tier="episodic", limit=100)
    assert len(episodes) == 12
    assert {(m.principal, m.agent, m.session) for m in episodes} == {("alice", "helper", "chat-1")}
    assert all(MARKER_TAG in m.tags for m in episodes)
    assert {m.text for m in episodes} == {f"user: turn {n}" for n in range(12)}


def test_sessions_and_principals_do_not_mix(store, session):
    other = MemdeckSession(store, "chat-2", principal="alice", agent="helper")
    bob = MemdeckSession(store, "chat-1", principal="bob", agent="helper")
    asyncio.run(session.add_items([user("alice in chat 1")]))
    asyncio.run(other.add_items([user("alice in chat 2")]))
    asyncio.run(bob.add_items([user("bob in chat 1")]))
    assert asyncio.run(session.get_items()) == [user("alice in chat 1")]
    assert asyncio.run(other.get_items()) == [user("alice in chat 2")]
    assert asyncio.run(bob.get_items()) == [user("bob in chat 1")]


def test_a_reopened_session_continues_in_order(store, session):
    asyncio.run(session.add_items([user("one"), user("two")]))
    again = MemdeckSession(store, "chat-1", principal="alice", agent="helper")
    asyncio.run(again.add_items([user("three")]))
    assert [i["content"] for i in asyncio.run(again.get_items())] == ["one", "two", "three"]


def test_reading_items_again_parses_only_the_items_returned_and_new_rows(session, store, monkeypatch):
    from memdeck.integrations import openai_agents

    items = [user(f"turn {n}") for n in range(30)]
    session.add_items_sync(items)
    assert session.get_items_sync() == items
    parsed = []
    counting = type(
        "json",
        (),
        {
            "loads": staticmethod(lambda s: parsed.append(s) or json.loads(s)),
            "dumps": staticmethod(json.dumps),
        },
    )
    monkeypatch.setattr(openai_agents, "json", counting)
    assert session.get_items_sync(limit=5) == items[-5:]
    assert len(parsed) == 5  # the rows read before keep their position; only the returned items are parsed
    got = session.get_items_sync(limit=2)
    got[0]["content"] = "changed by the caller"
    assert session.get_items_sync(limit=2) == items[-2:]  # each read returns items of its own
    other = MemdeckSession(store, "chat-1", principal="alice", agent="helper")
    other.add_items_sync([user("from another writer")])
    parsed.clear()
    assert session.get_items_sync(limit=2) == [items[-1], user("from another writer")]
    assert len(parsed) == 3  # the new row once for its position, then the two returned


def test_pop_item_forgets_the_latest_with_a_receipt(session, store):
    asyncio.run(session.add_items([user("one"), assistant("two")]))
    popped = asyncio.run(session.pop_item())
    assert popped == assistant("two")
    assert asyncio.run(session.get_items()) == [user("one")]
    assert session.last_receipt["outcome"] == "verified" and verify_receipt(session.last_receipt) == []
    assert [m.text for m in store.list(Scope.of("alice"), tier="episodic")] == ["user: one"]
    asyncio.run(session.add_items([user("three")]))
    assert [i["content"] for i in asyncio.run(session.get_items())] == ["one", "three"]
    assert asyncio.run(session.pop_item()) == user("three")
    assert asyncio.run(session.pop_item()) == user("one")
    assert asyncio.run(session.pop_item()) is None


def test_clear_session_forgets_every_item_with_a_receipt(session, store):
    asyncio.run(session.add_items([user("one"), assistant("two"), user("three")]))
    ids = {m.id for m in store.list(Scope.of("alice"), tier="episodic")}
    asyncio.run(session.clear_session())
    assert asyncio.run(session.get_items()) == []
    receipt = session.last_receipt
    assert receipt["outcome"] == "verified" and verify_receipt(receipt) == []
    for memory_id in ids:
        assert memory_id in str(receipt)
        with pytest.raises(NotFound):
            store.get(memory_id)
    asyncio.run(session.clear_session())  # nothing left: no second receipt
    assert len(session.receipts) == 1


def test_close_queues_the_session_for_consolidation(session, store):
    assert session.close() is None  # nothing written yet
    asyncio.run(session.add_items([user("I moved to Porto last month"), assistant("Noted!")]))
    ids = [m.id for m in store.list(Scope.of("alice"), tier="episodic")]
    assert {store.get(i).closed for i in ids} == {False}  # open until closed (or idle)
    report = session.close()
    assert report["episodes"] == 2 and report["closed"] == 2
    assert {store.get(i).closed for i in ids} == {True}
    assert {"principal": "alice", "session": "chat-1"}.items() <= pending_consolidation(store.engine)[
        0
    ].items()


def test_render_item():
    assert render_item(user("hi")) == "user: hi"
    assert render_item(assistant("hello")) == "assistant: hello"
    assert (
        render_item(
            {
                "role": "user",
                "content": [{"type": "input_text", "text": "a"}, {"type": "input_image", "image_url": "x"}],
            }
        )
        == "user: a [input_image]"
    )
    assert (
        render_item(
            {"type": "function_call", "name": "weather", "arguments": '{"city": "Porto"}', "call_id": "c"}
        )
        == 'tool call weather({"city": "Porto"})'
    )
    assert (
        render_item({"type": "function_call_output", "call_id": "c", "output": "sunny"})
        == "tool output: sunny"
    )
    assert render_item({"type": "reasoning", "id": "r"}) == '{"id": "r", "type": "reasoning"}'


def test_bad_input_gets_a_clear_error(store, session):
    with pytest.raises(ValueError, match="session id"):
        MemdeckSession(store, "", principal="alice")
    with pytest.raises(Exception, match="principal"):
        MemdeckSession(store, "s", principal="")
    with pytest.raises(TypeError, match="must be a dict"):
        asyncio.run(session.add_items(["just text"]))  # type: ignore[list-item]
    with pytest.raises(TypeError, match="JSON-serialisable"):
        asyncio.run(session.add_items([{"role": "user", "content": object()}]))  # type: ignore[list-item]
    with pytest.raises(ValueError, match="limit"):
        asyncio.run(session.get_items(limit=-1))
    with pytest.raises(ValueError, match="query or a session"):
        context_instructions(store, principal="alice")
    assert asyncio.run(session.get_items()) == []


def test_a_run_leaves_its_turns_as_one_sessions_episodes_and_the_pack_in_the_prompt(store, session):
    store.remember("Alice is allergic to peanuts", principal="alice", tags=["health"])
    model = ScriptedModel([[assistant_message("Hello Alice")], [assistant_message("No peanuts, then.")]])
    agent = Agent(
        name="helper",
        model=model,
        instructions=context_instructions(
            store, principal="alice", instructions="Be brief.", session=session, tiers=("semantic",)
        ),
    )

    async def run():
        await Runner.run(agent, "Hi, it's Alice", session=session)
        await Runner.run(agent, "Are peanuts OK for me?", session=session)
        return await session.get_items()

    items = asyncio.run(run())
    assert [(i["role"], render_item(i)) for i in items] == [
        ("user", "user: Hi, it's Alice"),
        ("assistant", "assistant: Hello Alice"),
        ("user", "user: Are peanuts OK for me?"),
        ("assistant", "assistant: No peanuts, then."),
    ]
    prompt = model.calls[-1].system_instructions
    assert prompt.startswith("Be brief.") and "Alice is allergic to peanuts" in prompt
    assert "Hello Alice" not in prompt  # tiers=("semantic",): the conversation is not repeated
    given = injections(store.engine, agent="helper", session="chat-1")
    assert given and given[0]["ids"]
    assert {m.session for m in store.list(Scope.of("alice"), tier="episodic")} == {"chat-1"}
    model.assert_complete()


def test_instructions_without_a_user_message_are_the_base_instructions(store, session):
    build = context_instructions(store, principal="alice", instructions="Be brief.", session=session)
    assert asyncio.run(build(None, None)) == "Be brief."
    fixed = context_instructions(store, principal="alice", instructions="", query="anything")
    assert asyncio.run(fixed(None, None)) == ""  # nothing stored: no pack heading


def test_session_turns_are_recallable_by_meaning(model_store):
    session = MemdeckSession(model_store, "trip", principal="alice", agent="helper")
    asyncio.run(
        session.add_items(
            [
                user("Book me a table for two on Friday"),
                assistant("Done, 8pm at Taberna."),
                user("My passport expires next March"),
                assistant("I'll remind you in January."),
                user("The cat needs her vaccine"),
                assistant("Vet booked for Tuesday."),
            ]
        )
    )
    result = model_store.recall("travel documents", principal="alice", tiers=["episodic"], k=3)
    assert result.items[0].memory.text == "user: My passport expires next March"
    assert result.items[0].memory.session == "trip"


def readme_block(marker: str) -> str:
    text = (ROOT / "docs" / "integrations.md").read_text(encoding="utf-8")
    match = re.search(re.escape(marker) + r".*?```python\n(.*?)```", text, re.S)
    assert match, f"no example after {marker!r} in docs/integrations.md"
    return match.group(1)


def test_readme_openai_agents_example_runs(real_embedder, monkeypatch, capsys):
    from memdeck.core import store as store_module

    opened = store_module.Store.open

    def open_with_loaded_model(*args, **kwargs):
        kwargs.setdefault("embedder", real_embedder)
        return opened(*args, **kwargs)

    monkeypatch.setattr(store_module.Store, "open", staticmethod(open_with_loaded_model))
    exec(
        compile(
            readme_block("<!-- example: openai-agents -->"), "docs/integrations.md:openai-agents", "exec"
        ),
        {},
    )
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "['user', 'assistant', 'user', 'assistant']"
    assert lines[1] == "True" and lines[2] == "4"
    assert lines[3].startswith("chat-2024-05-01 ")
    assert lines[3].endswith(("Try the fruit salad.", "Which snack is safe for me?"))


def test_an_expired_episode_leaves_the_session_at_once(session, store):
    asyncio.run(session.add_items([user("one"), user("two")]))
    [first] = [m for m in store.list(Scope.of("alice"), tier="episodic") if m.text == "user: one"]
    store.set_expiry(first.id, "2000-01-01T00:00:00Z")
    assert asyncio.run(session.get_items()) == [user("two")]
