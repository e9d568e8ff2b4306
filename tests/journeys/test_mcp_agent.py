"""An agent's whole session with the MCP server: the installed `memdeck` command, launched over stdio the way
README.md's client configuration says, driven by the official SDK's client. Every tool is called with good
arguments (the answers' content checked) and with bad ones (a one-line tool error, and the server goes on
answering). The real embedding model is used, so the recall and context checks are about meaning."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from memdeck.core.graph.memory.tables import KINDS
from memdeck.core.records import STORED_TIERS

ROOT = Path(__file__).resolve().parents[2]
TOOLS = [
    "remember",
    "recall",
    "context",
    "list",
    "forget",
    "feedback",
    "close_session",
    "entities",
    "related",
    "path",
    "add_entity",
    "add_relation",
]


def _client_config(path: Path) -> dict[str, Any]:
    """The first client configuration block (a JSON block with ``mcpServers``) of a document."""
    blocks = [json.loads(b) for b in re.findall(r"```json\n(.*?)```", path.read_text(encoding="utf-8"), re.S)]
    configs = [b for b in blocks if isinstance(b, dict) and "mcpServers" in b]
    assert configs, f"{path.name} has no MCP client configuration"
    return dict(configs[0]["mcpServers"]["memdeck"])


def _readme_client_config() -> dict[str, Any]:
    """The client configuration README.md's quickstart gives, as an agent's client is given it (the manual's
    MCP page gives the same)."""
    config = _client_config(ROOT / "README.md")
    assert config == _client_config(ROOT / "docs" / "mcp.md")
    return config


def _server(home: Path) -> StdioServerParameters:
    config = _readme_client_config()
    assert config["command"] == "memdeck"
    # "If memdeck is not on the client's PATH, give the full path to the virtual environment's bin/memdeck".
    command = Path(sys.executable).parent / "memdeck"
    assert command.exists(), "the memdeck command is not installed beside this interpreter"
    return StdioServerParameters(
        command=str(command),
        args=list(config["args"]),
        env={**config.get("env", {}), "MEMDECK_HOME": str(home)},
    )


def _ok(result: Any) -> Any:
    assert not result.is_error, result.content[0].text
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


def _error(result: Any) -> str:
    assert result.is_error, f"expected a tool error, got {result.content}"
    [content] = result.content
    text = content.text
    assert "\n" not in text and "Traceback" not in text, text
    return str(text)


def _session(home: Path, body: Any) -> Any:
    async def main() -> Any:
        async with stdio_client(_server(home)) as (read, write), ClientSession(read, write) as session:
            with anyio.fail_after(240):
                await session.initialize()
                return await body(session)

    return anyio.run(main)


def test_an_agent_uses_every_tool_and_gets_clear_errors(memdeck_home: Path, packaged_model: Path) -> None:
    async def body(s: ClientSession) -> dict[str, Any]:
        out: dict[str, Any] = {"tools": {t.name: t.input_schema for t in (await s.list_tools()).tools}}
        call = s.call_tool

        # The conversation starts: nothing written yet, and closing it is still a success.
        out["close_empty"] = _ok(await call("close_session", {}))

        out["peanuts"] = _ok(
            await call(
                "remember", {"text": "Alice is allergic to peanuts", "tags": ["health"], "importance": 0.9}
            )
        )
        out["car"] = _ok(await call("remember", {"text": "Alice drives a blue Volvo estate"}))
        out["lisbon"] = _ok(
            await call(
                "remember",
                {
                    "text": "Alice's sister Marta moved to Lisbon last spring",
                    "entities": ["Marta", {"name": "Lisbon", "kind": "place"}],
                },
            )
        )
        out["routine"] = _ok(
            await call(
                "remember",
                {
                    "text": "water the plants\nfeed the cat\nlock the door",
                    "tier": "procedural",
                    "name": "leaving home",
                },
            )
        )
        out["episode"] = _ok(
            await call("remember", {"text": "Helped Alice plan a dinner without nuts", "tier": "episodic"})
        )
        out["recall"] = _ok(
            await call("recall", {"query": "which foods must Alice avoid?", "k": 3, "tiers": ["semantic"]})
        )
        out["feedback"] = _ok(
            await call("feedback", {"id": out["recall"]["results"][0]["id"], "useful": True})
        )
        out["feedback_trace"] = _ok(
            await call("feedback", {"id": out["recall"]["trace_id"], "useful": False})
        )
        out["context"] = _ok(await call("context", {"query": "cooking dinner for Alice", "budget": 200}))
        out["list"] = _ok(await call("list", {"tier": "semantic", "limit": 10}))
        out["add_entity"] = _ok(
            await call(
                "add_entity",
                {"name": "Porto Office", "kind": "organisation", "aliases": ["Marta's workplace"]},
            )
        )
        out["add_relation"] = _ok(
            await call(
                "add_relation",
                {"subject": "Marta", "predicate": "works at", "object": "Porto Office", "valid_from": "2024"},
            )
        )
        out["entities"] = _ok(await call("entities", {}))
        out["related"] = _ok(await call("related", {"name": "Marta", "depth": 1}))
        out["path"] = _ok(await call("path", {"a": "Lisbon", "b": "Marta's workplace"}))
        out["forget"] = _ok(await call("forget", {"ids": [out["car"]["id"]], "reason": "the user asked"}))
        out["after_forget"] = _ok(await call("recall", {"query": "what car does Alice drive", "k": 10}))
        out["close"] = _ok(await call("close_session", {}))

        bad: dict[str, list[str]] = {}
        for name, args in [
            ("remember", {"text": "Alice likes jazz", "tier": "working"}),
            ("remember", {"text": "Alice likes jazz", "importance": 2}),
            ("remember", {"text": ""}),
            ("remember", {"text": "Alice likes jazz", "entities": [{"name": "Jazz", "kind": "genre"}]}),
            ("remember", {"text": "Alice likes jazz", "tags": ["x" * 129]}),
            ("recall", {"query": "jazz", "k": 0}),
            ("recall", {"query": "jazz", "k": 1001}),
            ("recall", {"query": "jazz", "tiers": ["semantic", "dreams"]}),
            ("recall", {"query": "jazz", "since": "last week"}),
            ("context", {"query": "jazz", "budget": -1}),
            ("list", {"limit": 501}),
            ("list", {"tier": "working"}),
            ("list", {"offset": -1}),
            ("forget", {"ids": [], "reason": "the user asked"}),
            ("forget", {"ids": ["sem_doesnotexist"], "reason": "the user asked"}),
            ("feedback", {"id": "sem_doesnotexist", "useful": True}),
            ("feedback", {"id": "x"}),
            ("close_session", {"session": "a-session-never-written"}),
            ("related", {"name": "Marta", "depth": 7}),
            ("related", {"name": "Nobody Known"}),
            ("path", {"a": "Marta", "b": "x" * 201}),
            ("add_entity", {"name": "Jazz", "kind": "genre"}),
            ("add_relation", {"subject": "Marta", "predicate": "likes"}),
            ("add_relation", {"subject": "Marta", "predicate": "likes", "object": "Nobody Known"}),
        ]:
            bad.setdefault(name, []).append(_error(await call(name, args)))
        out["bad"] = bad
        # The server is still there after every refusal.
        out["still_there"] = _ok(await call("list", {"limit": 1}))
        return out

    out = _session(memdeck_home, body)

    # Every tool is there and takes no principal: whose memories they are was fixed at launch.
    assert list(out["tools"]) == TOOLS
    assert all("principal" not in schema.get("properties", {}) for schema in out["tools"].values())

    assert out["close_empty"]["episodes"] == 0 and out["close_empty"]["queued"] is False
    assert "nothing to consolidate" in out["close_empty"]["message"]

    assert out["peanuts"]["action"] == "added" and out["peanuts"]["tier"] == "semantic"
    assert out["routine"]["tier"] == "procedural" and out["routine"]["version"] == 1
    assert out["episode"]["tier"] == "episodic"
    session = out["episode"]["session"]

    # Meaning, not words: the allergy answers a question that shares no word with it but the name.
    results = out["recall"]["results"]
    assert results[0]["id"] == out["peanuts"]["id"] and results[0]["principal"] == "alice"
    assert {r["tier"] for r in results} == {"semantic"} and len(results) <= 3
    assert results[0]["components"]["relevance"] > results[-1]["components"]["relevance"] or len(results) == 1

    # Feedback on a memory and on the recall as a whole counts for the agent that wrote them.
    assert out["feedback"] == {
        "target": out["peanuts"]["id"],
        "useful": True,
        "agents": ["assistant"],
        "memory_ids": [out["peanuts"]["id"]],
    }
    assert (
        out["feedback_trace"]["useful"] is False
        and out["peanuts"]["id"] in out["feedback_trace"]["memory_ids"]
    )

    pack = out["context"]
    assert pack["tokens"] <= 200 and pack["session"] == session
    assert "Alice is allergic to peanuts" in pack["text"]
    assert out["peanuts"]["id"] in {item["id"] for item in pack["items"]}

    listed = {m["id"]: m for m in out["list"]["memories"]}
    assert set(listed) == {out["peanuts"]["id"], out["car"]["id"], out["lisbon"]["id"]}
    assert (
        listed[out["peanuts"]["id"]]["tags"] == ["health"]
        and listed[out["car"]["id"]]["agent"] == "assistant"
    )

    assert out["add_entity"]["name"] == "Porto Office" and out["add_entity"]["kind"] == "organisation"
    assert [a.casefold() for a in out["add_entity"]["aliases"]] == ["marta's workplace"]
    assert out["add_relation"]["predicate"] == "works at"
    names = {e["name"]: e for e in out["entities"]["entities"]}
    assert {"Marta", "Lisbon", "Porto Office"} <= set(names) and names["Lisbon"]["kind"] == "place"
    assert "Porto Office" in {r["name"] for r in out["related"]["related"]}
    assert out["path"]["found"] and out["path"]["path"][-1]["entity"]["name"] == "Porto Office"

    receipt = out["forget"]
    assert receipt["format"] == "memdeck.deletion-receipt/1" and receipt["principal"] == "alice"
    assert [d["id"] for d in receipt["deleted"]] == [out["car"]["id"]]
    assert out["car"]["id"] not in {r["id"] for r in out["after_forget"]["results"]}

    assert out["close"] == {
        "session": session,
        "principal": "alice",
        "episodes": 1,
        "closed": 1,
        "queued": True,
        "why": "closed",
    }

    bad = out["bad"]
    assert all(m.startswith(f"Error executing tool {name}: ") for name, ms in bad.items() for m in ms)
    remember, recall, context, listing, forget, close, related, path, entity, relation, verdict = (
        bad["remember"],
        bad["recall"],
        bad["context"],
        bad["list"],
        bad["forget"],
        bad["close_session"],
        bad["related"],
        bad["path"],
        bad["add_entity"],
        bad["add_relation"],
        bad["feedback"],
    )
    assert "sem_doesnotexist" in verdict[0] and "useful is required" in verdict[1]
    assert "tier: unknown tier \"working\"; use one of: 'episodic', 'semantic' or 'procedural'" in remember[0]
    assert "importance: input should be less than or equal to 1, got 2" in remember[1]
    assert "text: string should have at least 1 character" in remember[2]
    assert 'entities[0].kind: unknown kind "genre"' in remember[3]
    assert "tags[0]: string should have at most 128 characters" in remember[4]
    assert "k: input should be greater than or equal to 1, got 0" in recall[0]
    assert "k: input should be less than or equal to 1000, got 1001" in recall[1]
    assert 'tiers[1]: unknown tier "dreams"' in recall[2]
    assert "ISO 8601" in recall[3]
    assert "budget: input should be greater than or equal to 0, got -1" in context[0]
    assert "limit: input should be less than or equal to 500, got 501" in listing[0]
    assert 'tier: unknown tier "working"' in listing[1]
    assert "offset: input should be greater than or equal to 0, got -1" in listing[2]
    assert "ids: list should have at least 1 item" in forget[0]
    assert "sem_doesnotexist" in forget[1]
    assert "a-session-never-written" in close[0]
    assert "depth: input should be less than or equal to 6, got 7" in related[0]
    assert "Nobody Known" in related[1]
    assert "b: string should have at most 200 characters" in path[0]
    assert 'kind: unknown kind "genre"' in entity[0]
    assert "object is required" in relation[0]
    assert "Nobody Known" in relation[1]
    assert out["still_there"]["memories"]


def _resolve(schema: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in spec:
        return dict(schema["$defs"][spec["$ref"].rsplit("/", 1)[-1]])
    options = [s for s in spec.get("anyOf", ()) if s.get("type") != "null"]
    return _resolve(schema, options[0]) if len(options) == 1 else spec


def test_every_schema_names_its_enums_and_bounds(memdeck_home: Path, packaged_model: Path) -> None:
    async def body(s: ClientSession) -> dict[str, Any]:
        return {t.name: t.input_schema for t in (await s.list_tools()).tools}

    schemas = _session(memdeck_home, body)

    def arg(tool: str, name: str) -> dict[str, Any]:
        return _resolve(schemas[tool], schemas[tool]["properties"][name])

    tiers = list(STORED_TIERS)
    for tool, name in [("remember", "tier"), ("list", "tier")]:
        assert arg(tool, name)["enum"] == tiers, (tool, name)
    for tool in ("recall", "context"):
        spec = arg(tool, "tiers")
        assert spec["items"]["enum"] == tiers and spec["maxItems"] == 16, tool
    assert arg("add_entity", "kind")["enum"] == list(KINDS)
    entity_item = arg("remember", "entities")["items"]["anyOf"]
    entity_object = _resolve(schemas["remember"], next(i for i in entity_item if "$ref" in i))
    assert entity_object["properties"]["kind"]["enum"] == list(KINDS)

    bounds = {
        ("remember", "importance"): (0, 1),
        ("recall", "k"): (1, 1000),
        ("recall", "min_importance"): (0, 1),
        ("context", "budget"): (0, 1_000_000),
        ("list", "limit"): (1, 500),
        ("related", "depth"): (1, 6),
    }
    for (tool, name), (low, high) in bounds.items():
        spec = arg(tool, name)
        assert (spec["minimum"], spec["maximum"]) == (low, high), (tool, name)
    assert arg("list", "offset")["minimum"] == 0

    sizes = {
        ("remember", "tags"): 64,
        ("recall", "tags"): 64,
        ("forget", "ids"): 1000,
        ("remember", "entities"): 100,
        ("remember", "relations"): 100,
        ("add_entity", "aliases"): 100,
        ("add_relation", "sources"): 100,
    }
    for (tool, name), most in sizes.items():
        assert arg(tool, name)["maxItems"] == most, (tool, name)
    assert arg("forget", "ids")["minItems"] == 1
    for tool, name in [("remember", "tags"), ("recall", "tags")]:
        assert arg(tool, name)["items"]["maxLength"] == 128
    assert arg("list", "tag")["maxLength"] == 128
    for tool, name in [
        ("related", "name"),
        ("path", "a"),
        ("path", "b"),
        ("add_entity", "name"),
        ("add_relation", "subject"),
        ("add_relation", "predicate"),
        ("add_relation", "object"),
    ]:
        assert arg(tool, name)["maxLength"] == 200, (tool, name)
    for tool, name in [("remember", "text"), ("recall", "query"), ("context", "query"), ("forget", "reason")]:
        assert arg(tool, name)["minLength"] == 1, (tool, name)
    assert list(schemas["entities"].get("properties", {})) == []
