"""An agent over MCP (a real client, the installed server on stdio) sets memory types, gets inferred ones,
narrows recall and list by type, and is told plainly when a type is not one of the list."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp import ClientSession

from tests.journeys.test_mcp_agent import _ok
from tests.journeys.test_mcp_agent import _session as _run


def test_an_agent_writes_and_narrows_by_memory_type(memdeck_home: Path) -> None:
    (memdeck_home / "config.toml").write_text(
        '[embedding]\nmodel = "hash-384"\n[maintenance]\nenabled = false\n', encoding="utf-8"
    )

    async def body(s: ClientSession) -> dict[str, Any]:
        call = s.call_tool
        out: dict[str, Any] = {}
        out["given"] = _ok(
            await call("remember", {"text": "Alice's flights go through Lisbon", "type": "observation"})
        )
        out["inferred"] = _ok(await call("remember", {"text": "Alice prefers aisle seats on flights"}))
        out["untyped"] = _ok(await call("remember", {"text": "flights, Lisbon, aisle", "force": True}))
        out["recall"] = _ok(await call("recall", {"query": "Alice flights", "types": ["preference"]}))
        out["recall_two"] = _ok(
            await call("recall", {"query": "Alice flights", "types": ["preference", "observation"]})
        )
        out["list"] = _ok(await call("list", {"type": "observation"}))
        out["bad"] = await call("remember", {"text": "Alice likes figs", "type": "opinion"})
        return out

    out = _run(memdeck_home, body)
    assert out["given"]["type"] == "observation"
    assert out["inferred"]["type"] == "preference"
    assert "type" not in out["untyped"]
    assert [r["id"] for r in out["recall"]["results"]] == [out["inferred"]["id"]]
    assert {r["type"] for r in out["recall"]["results"]} == {"preference"}
    assert {r["id"] for r in out["recall_two"]["results"]} == {out["inferred"]["id"], out["given"]["id"]}
    assert [m["id"] for m in out["list"]["memories"]] == [out["given"]["id"]]
    assert out["list"]["memories"][0]["type"] == "observation"
    bad = out["bad"]
    assert bad.is_error
    [content] = bad.content
    assert "\n" not in content.text and "Traceback" not in content.text
    assert "type" in content.text and "opinion" in content.text
