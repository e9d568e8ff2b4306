"""The formation filter: low-value writes are skipped with a reason when enabled, and force overrides."""

from __future__ import annotations

from pathlib import Path

import pytest

from memdeck.cli import main
from memdeck.core.storage.formation import low_value_reason


@pytest.mark.parametrize(
    "text",
    [
        "ok",
        "OK!",
        "thanks!",
        "Thank you so much.",
        "sounds good",
        "Ok, great, thanks!!",
        "got it 👍",
        "lgtm",
        "Sure, why not?",
        "yes please",
        "no",
        "np",
        "you're welcome",
    ],
)
def test_acknowledgements_are_skipped(text: str) -> None:
    assert low_value_reason(text) == "acknowledgement: says nothing to remember"


@pytest.mark.parametrize("text", ["hmm", "um, let me think", "one sec...", "hold on", "idk"])
def test_filler_is_skipped(text: str) -> None:
    assert low_value_reason(text) == "filler: says nothing to remember"


@pytest.mark.parametrize("text", ["👍🎉", "...", "?!", "   --  "])
def test_no_words(text: str) -> None:
    assert (low_value_reason(text) or "").startswith("no words")


@pytest.mark.parametrize("text", ["blue", "42", "Vegan.", "Berlin"])
def test_too_short(text: str) -> None:
    assert (low_value_reason(text) or "").startswith("too short")


@pytest.mark.parametrize(
    "text",
    [
        "Alice is allergic to peanuts",
        "Prefers tea",
        "Use pnpm, not npm",
        "ok so the deploy key rotates monthly",  # an acknowledgement that carries a fact is kept
        "Thanks to Bob the build is green again",
        "No meetings on Fridays",
        "Sounds good: ship the release on Monday",
        "Vegetarian",  # one word, but long enough to carry a fact
    ],
)
def test_meaningful_text_is_kept(text: str) -> None:
    assert low_value_reason(text) is None


def test_store_skips_only_when_enabled_and_force_overrides(open_store, tmp_path: Path) -> None:
    on = open_store(tmp_path / "on", formation_filter={"enabled": True})
    skipped = on.remember("ok thanks!", tier="semantic", principal="alice")
    assert skipped.action == "skipped" and skipped.memory is None
    assert skipped.reason == "acknowledgement: says nothing to remember"
    kept = on.remember("Alice's flat is on the fourth floor", tier="semantic", principal="alice")
    forced = on.remember("ok thanks!", tier="semantic", principal="alice", force=True)
    assert kept.action == "added" and forced.action == "added"
    assert on.count() == 2

    off = open_store(tmp_path / "off")
    assert off.remember("ok thanks!", tier="semantic", principal="alice").action == "added"


def test_cli_add_reports_the_reason_and_force_stores(
    memdeck_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (memdeck_home / "config.toml").write_text(
        '[embedding]\nmodel = "hash-384"\n\n[formation_filter]\nenabled = true\n', encoding="utf-8"
    )
    assert main(["add", "sounds good", "--tier", "semantic", "--principal", "alice"]) == 0
    assert "skipped: acknowledgement" in capsys.readouterr().out
    assert main(["add", "sounds good", "--tier", "semantic", "--principal", "alice", "--force"]) == 0
    assert capsys.readouterr().out.startswith("added ")


@pytest.mark.parametrize("agents", [None, False])
def test_an_agents_noise_is_kept_out_by_default_and_a_persons_writes_are_unchanged(
    memdeck_home: Path, tmp_path: Path, agents: bool | None
) -> None:
    """MCP `remember("ok thanks")` is skipped with its reason (formation_filter.agents, on by default), force
    stores it, a real fact is kept; the person's own `memdeck add` of the same words is stored as before; with
    agents = false the agent's write is stored too."""
    from memdeck.cli.mcp import _Backend

    config = '[embedding]\nmodel = "hash-384"\n[maintenance]\nenabled = false\n'
    if agents is not None:
        config += f"\n[formation_filter]\nagents = {str(agents).lower()}\n"
    (memdeck_home / "config.toml").write_text(config, encoding="utf-8")
    backend = _Backend("alice", "assistant", tmp_path / "store")
    try:
        noise = backend.remember("ok thanks!")
        fact = backend.remember("Alice's flat is on the fourth floor")
        forced = backend.remember("sounds good", force=True)
    finally:
        backend.store.close()
    assert fact["action"] == "added" and forced["action"] == "added"
    if agents is None:
        assert noise["action"] == "skipped" and "acknowledgement" in noise["reason"]
    else:
        assert noise["action"] == "added"
    assert (
        main(
            [
                "--store",
                str(tmp_path / "store"),
                "add",
                "ok thanks!",
                "--tier",
                "semantic",
                "--principal",
                "alice",
            ]
        )
        == 0
    )
