"""The MCP server, driven by the SDK's own client over stdio against a real store in a subprocess.

The server process uses the hash embedder (config.toml in its MEMDECK_HOME) so it starts fast; the
protocol, scoping and JSON shapes are what is tested here, not ranking.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from memdeck.core.filters import Scope
from memdeck.core.store import Store

COMPONENTS = {"relevance", "recency", "frequency", "importance", "pinned", "trust", "graph"}


@pytest.fixture
def home(memdeck_home: Path) -> Path:
    (memdeck_home / "config.toml").write_text('[embedding]\nmodel = "hash-384"\n', encoding="utf-8")
    store = Store.open(memdeck_home / "store")
    store.remember(
        "Alice keeps her passport in the blue drawer", tier="semantic", principal="alice", pinned=True
    )
    store.remember("Alice's dentist appointment is on Tuesday", tier="semantic", principal="alice")
    store.remember(
        "Bob's secret bank PIN hint is his first dog", tier="semantic", principal="bob", pinned=True
    )
    store.close()
    return memdeck_home


def _params(home: Path, *args: str, env: dict[str, str] | None = None) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "memdeck.cli", "mcp", *args],
        env={"MEMDECK_HOME": str(home), **(env or {})},
    )


def _data(result: Any) -> Any:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


def _run(params: StdioServerParameters, body: Any) -> Any:
    async def main() -> Any:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            with anyio.fail_after(120):
                await session.initialize()
                return await body(session)

    return anyio.run(main)


def test_tools_take_no_principal_and_stay_in_scope(home: Path) -> None:
    async def body(session: ClientSession) -> dict[str, Any]:
        out: dict[str, Any] = {}
        tools = (await session.list_tools()).tools
        out["tools"] = {t.name: t.input_schema for t in tools}
        out["remember"] = _data(
            await session.call_tool("remember", {"text": "Alice's cat is called Miso", "tags": ["pets"]})
        )
        out["recall"] = _data(await session.call_tool("recall", {"query": "what is the cat called", "k": 5}))
        out["recall_secret"] = _data(
            await session.call_tool("recall", {"query": "secret bank PIN hint dog", "k": 10})
        )
        out["list"] = _data(await session.call_tool("list", {"limit": 50}))
        pinned = await session.read_resource("memdeck://pinned")
        out["pinned"] = json.loads(pinned.contents[0].text)
        out["bad_tier"] = await session.call_tool(
            "remember", {"text": "Something worth keeping", "tier": "working"}
        )
        return out

    store = Store.open(home / "store")
    bob_id = store.list(_scope("bob"))[0].id
    store.close()

    async def with_bob(session: ClientSession) -> dict[str, Any]:
        out = await body(session)
        forget_bob = await session.call_tool(
            "forget", {"ids": [bob_id], "reason": "an agent trying its luck"}
        )
        out["forget_bob"] = forget_bob
        out["feedback_bob"] = await session.call_tool("feedback", {"id": bob_id, "useful": False})
        return out

    out = _run(_params(home, "--principal", "alice", "--agent", "assistant"), with_bob)

    assert set(out["tools"]) == {
        "remember",
        "recall",
        "forget",
        "feedback",
        "list",
        "context",
        "close_session",
        "entities",
        "related",
        "path",
        "add_entity",
        "add_relation",
    }
    for name, schema in out["tools"].items():
        assert "principal" not in json.dumps(schema.get("properties", {})), name
        assert "agent" not in schema.get("properties", {}), name

    assert out["remember"]["action"] == "added"
    cat_id = out["remember"]["id"]

    results = out["recall"]["results"]
    assert results and results[0]["id"] == cat_id
    for item in results:
        assert item["principal"] == "alice"
        assert set(item["components"]) == COMPONENTS
        assert set(item["ranks"]) == {"vector", "keyword", "graph"}
        assert isinstance(item["score"], float)
    assert all("Bob" not in r["text"] for r in out["recall_secret"]["results"])

    listed = {m["id"] for m in out["list"]["memories"]}
    assert cat_id in listed and bob_id not in listed and len(listed) == 3

    assert [m["text"] for m in out["pinned"]] == ["Alice keeps her passport in the blue drawer"]

    refused = out["forget_bob"]
    assert refused.is_error
    message = refused.content[0].text
    assert (
        bob_id in message
        and "PIN" not in message
        and "bob" not in message.lower().replace(bob_id.lower(), "")
    )
    assert out["bad_tier"].is_error and "unknown tier" in out["bad_tier"].content[0].text
    verdict = out["feedback_bob"]  # another principal's memory is not there to judge either
    assert verdict.is_error and f"no memory or trace with id {bob_id!r}" in verdict.content[0].text

    store = Store.open(home / "store")
    try:
        assert store.get(bob_id).state == "active"  # untouched
        cat = store.get(cat_id)
        assert (cat.agent, cat.principal, cat.tags) == ("assistant", "alice", ["pets"])
    finally:
        store.close()


def _scope(principal: str) -> Scope:
    return Scope.of(principal)


def test_identity_from_environment(home: Path) -> None:
    async def body(session: ClientSession) -> Any:
        written = _data(await session.call_tool("remember", {"text": "Bob parks on level three"}))
        found = _data(await session.call_tool("recall", {"query": "where does Bob park", "k": 10}))
        return written, found

    written, found = _run(_params(home, env={"MEMDECK_PRINCIPAL": "bob", "MEMDECK_AGENT": "codex"}), body)
    assert {r["principal"] for r in found["results"]} == {"bob"}
    assert found["results"][0]["id"] == written["id"]
    store = Store.open(home / "store")
    try:
        assert store.get(written["id"]).agent == "codex"
    finally:
        store.close()


def test_forget_returns_a_receipt(home: Path) -> None:
    store = Store.open(home / "store")
    target = next(m for m in store.list(_scope("alice")) if "dentist" in m.text)
    store.close()

    async def body(session: ClientSession) -> Any:
        receipt = _data(await session.call_tool("forget", {"ids": [target.id], "reason": "user request"}))
        after = _data(await session.call_tool("recall", {"query": "dentist appointment Tuesday", "k": 10}))
        return receipt, after

    receipt, after = _run(_params(home, "--principal", "alice", "--agent", "assistant"), body)
    assert receipt["format"] == "memdeck.deletion-receipt/1"
    assert receipt["principal"] == "alice"
    assert [d["id"] for d in receipt["deleted"]] == [target.id]
    assert target.id not in {r["id"] for r in after["results"]}


def test_mcp_without_principal_fails_with_one_line(memdeck_home: Path) -> None:
    env = {"MEMDECK_HOME": str(memdeck_home), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run(
        [sys.executable, "-m", "memdeck.cli", "mcp"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "--principal" in lines[0], proc.stderr
    assert proc.stdout == ""
