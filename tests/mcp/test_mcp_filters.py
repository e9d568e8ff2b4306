"""MCP recall takes the recall filters and returns each result's source (hash embedder: protocol only)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from memdeck.core.store import Store


def _params(home: Path, *args: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "memdeck.cli", "mcp", *args], env={"MEMDECK_HOME": str(home)}
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


@pytest.fixture
def home(memdeck_home: Path) -> Path:
    (memdeck_home / "config.toml").write_text('[embedding]\nmodel = "hash-384"\n', encoding="utf-8")
    store = Store.open(memdeck_home / "store")
    store.remember(
        "the garden shed key is under the blue pot",
        tier="semantic",
        principal="alice",
        agent="planner",
        tags=["home"],
        importance=0.9,
        meta={"source": {"file": "notes/home.md", "heading": "Keys", "lines": [3, 7]}},
    )
    store.remember("the garden shed key has a spare with the neighbour", tier="semantic", principal="alice")
    store.close()
    return memdeck_home


def test_recall_filters_and_source(home: Path) -> None:
    async def body(session: ClientSession) -> Any:
        everything = _data(await session.call_tool("recall", {"query": "garden shed key", "k": 10}))
        narrowed = _data(
            await session.call_tool(
                "recall",
                {
                    "query": "garden shed key",
                    "k": 10,
                    "written_by": "planner",
                    "tags": ["home"],
                    "min_importance": 0.5,
                    "since": "2000-01-01",
                },
            )
        )
        bad = await session.call_tool("recall", {"query": "garden shed key", "since": "soon"})
        return everything, narrowed, bad

    everything, narrowed, bad = _run(_params(home, "--principal", "alice"), body)
    assert len(everything["results"]) == 2
    assert [r["agent"] for r in narrowed["results"]] == ["planner"]
    assert narrowed["results"][0]["source"] == {"file": "notes/home.md", "heading": "Keys", "lines": [3, 7]}
    assert bad.is_error and "ISO 8601" in bad.content[0].text
