"""An agent ends its session with what it learned, judged by its own model: a summary, facts with their
episodes, a procedure. Driven by the official SDK's client over stdio against the installed command."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp import ClientSession
from mcp.shared.exceptions import MCPError

from memdeck.core.filters import Scope
from memdeck.core.store import Store
from tests.journeys.test_mcp_agent import _error, _ok
from tests.journeys.test_mcp_agent import _session as _run


def test_a_session_digest_becomes_facts_with_provenance_and_a_conflict_goes_to_review(
    memdeck_home: Path, packaged_model: Path
) -> None:
    (memdeck_home / "config.toml").write_text("[maintenance]\nenabled = false\n", encoding="utf-8")

    async def body(s: ClientSession) -> dict[str, Any]:
        call = s.call_tool
        out: dict[str, Any] = {}
        out["old"] = _ok(await call("remember", {"text": "Alice lives in Lisbon"}))
        out["ep1"] = _ok(
            await call(
                "remember", {"text": "Alice said she moved from Lisbon to Porto in May", "tier": "episodic"}
            )
        )
        out["ep2"] = _ok(
            await call(
                "remember", {"text": "Alice told me she stopped eating meat this year", "tier": "episodic"}
            )
        )
        prompt = await s.get_prompt("reflect", {})
        out["prompt"] = [m.content.text for m in prompt.messages]
        try:
            await s.get_prompt("reflect", {"session": "never-written"})
        except MCPError as exc:
            out["reflect_unknown"] = str(exc)
        bad = await call(
            "close_session",
            {"facts": [{"text": "Alice is vegetarian", "sources": ["epi_00000000000000000000"]}]},
        )
        out["bad"] = bad.content[0].text if bad.is_error else None
        out["unknown_session"] = _error(
            await call("close_session", {"session": "never-written", "facts": ["Alice collects stamps"]})
        )
        out["closed"] = _ok(
            await call(
                "close_session",
                {
                    "summary": "Talked about Alice's move to Porto and her diet.",
                    "facts": [
                        "Alice lives in Porto",
                        {"text": "Alice is vegetarian", "sources": [out["ep2"]["id"]]},
                        "ok thanks",
                    ],
                    "procedures": [
                        {
                            "name": "plan a dinner for Alice",
                            "steps": ["pick a vegetarian place in Porto", "book a table for two"],
                            "when": "Alice asks for dinner plans",
                        }
                    ],
                },
            )
        )
        out["recall"] = _ok(
            await call("recall", {"query": "Where does Alice live now?", "k": 3, "tiers": ["semantic"]})
        )
        return out

    out = _run(memdeck_home, body)

    # The reflect prompt hands the agent this session's two episodes, as data, and says what to send back.
    [text] = out["prompt"]
    assert out["ep1"]["id"] in text and out["ep2"]["id"] in text and out["old"]["id"] not in text
    assert "moved from Lisbon to Porto" in text and "close_session" in text
    assert "never-written" in out["reflect_unknown"]

    # A source that is not one of alice's episodes refuses the whole digest, and nothing of it is written.
    assert out["bad"] and "epi_00000000000000000000" in out["bad"] and "\n" not in out["bad"]
    assert "never-written" in out["unknown_session"]

    closed = out["closed"]
    assert closed["episodes"] == 3 and closed["queued"] is True  # the two episodes and the summary
    digest = closed["digest"]
    assert digest["summary"]["action"] == "added"
    porto, veggie, noise = digest["facts"]
    assert porto["action"] == "added" and veggie["action"] == "added"
    assert noise["action"] == "skipped"  # an agent's noise is kept out here too
    assert porto.get("in_review") is True and porto["contradicts"] == out["old"]["id"]
    assert "in_review" not in veggie
    [routine] = digest["procedures"]
    assert routine["action"] == "added"

    assert out["recall"]["results"][0]["id"] == porto["id"]

    store = Store.open(memdeck_home / "store")
    try:
        alice = Scope.of("alice")
        fact = store.get(porto["id"], alice)
        assert sorted(fact.sources) == sorted([out["ep1"]["id"], out["ep2"]["id"]])
        assert fact.meta["proposed_by"] == "assistant" and fact.agent == "assistant"
        assert store.get(veggie["id"], alice).sources == [out["ep2"]["id"]]
        procedure = store.get(routine["id"], alice)
        assert (
            procedure.name == "plan a dinner for Alice"
            and procedure.meta["when_to_use"] == "Alice asks for dinner plans"
        )
        assert procedure.steps == ["pick a vegetarian place in Porto", "book a table for two"]
        summary = store.get(digest["summary"]["id"], alice)
        assert summary.tier == "episodic" and summary.closed is True
        texts = [m.text for m in store.list(alice, limit=50)]
        assert texts.count("Alice is vegetarian") == 1  # the refused digest wrote nothing
        assert "Alice collects stamps" not in texts  # nor did the one for a session never written
        from memdeck.core.consolidate.review import review_queue

        pairs = {(i.kind, i.left["id"], (i.right or {}).get("id")) for i in review_queue(store.engine, alice)}
        assert any(kind == "contradiction" and porto["id"] in (a, b) for kind, a, b in pairs), pairs
    finally:
        store.close()
