"""Issue #14 item 9: agent-written text reaches the terminal and the app as text, never as commands or markup."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import DataTable, Input

from memdeck.cli import main
from memdeck.cli._common import safe
from memdeck.core.filters import Scope
from memdeck.core.store import Store
from memdeck.tui.screens.inspector import InspectorScreen

OSC52 = "\x1b]52;c;ZXZpbA==\x07"  # a clipboard write
FAKE = "harmless\nmemdeck: ok: every receipt verified"
EVIL = f"note {OSC52} {FAKE} \x9b2J \u202eeno"


@pytest.fixture
def cli_store(memdeck_home: Path, tmp_path: Path) -> Path:
    (memdeck_home / "config.toml").write_text('[embedding]\nmodel = "hash-384"\n')
    return tmp_path / "cli-store"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _no_controls(text: str) -> None:
    assert "\x1b" not in text and "\x07" not in text and "\x9b" not in text and "\u202e" not in text
    assert not any(line.startswith("memdeck: ok") for line in text.splitlines())  # no fake line of its own


def test_safe_escapes_every_control_character() -> None:
    assert safe("a\x1b]52;c;x\x07b") == "a\\x1b]52;c;x\\x07b"
    assert safe("one\ntwo\r\t") == "one\\ntwo\\r\\t"
    assert safe("\x9b \u202e \u2028 \x7f") == "\\x9b \\u202e \\u2028 \\x7f"
    assert safe("x\ny\x1b", keep_newlines=True) == "x\ny\\x1b"
    assert safe("plain José [b]") == "plain José [b]"


def test_list_recall_and_show_print_escape_sequences_escaped(cli_store: Path, capsys) -> None:
    code, out, err = _run(
        capsys,
        "add",
        EVIL,
        "--tier",
        "semantic",
        "--principal",
        "alice",
        "--tags",
        "t\x1bx",
        "--store",
        str(cli_store),
        "--json",
    )
    assert code == 0, err
    mem_id = json.loads(out)["memory"]["id"] if "memory" in json.loads(out) else json.loads(out)["id"]
    for argv in (["list"], ["recall", "note harmless", "--principal", "alice"], ["show", mem_id]):
        code, out, err = _run(capsys, *argv, "--store", str(cli_store))
        assert code == 0, err
        assert "\\x1b]52;c;ZXZpbA==\\x07" in out or "\\x1b]52" in out
        _no_controls(out + err)


def test_json_output_is_escaped_by_the_encoder(cli_store: Path, capsys) -> None:
    _run(capsys, "add", EVIL, "--tier", "semantic", "--principal", "alice", "--store", str(cli_store))
    code, out, _ = _run(capsys, "list", "--json", "--store", str(cli_store))
    assert code == 0
    assert "\x1b" not in out and "\x07" not in out and "\\u001b" in out
    assert any(OSC52 in r["text"] for r in json.loads(out))  # the text itself is unchanged inside the JSON


def test_an_error_quoting_hostile_input_prints_it_escaped(cli_store: Path, capsys) -> None:
    _run(capsys, "add", "x", "--tier", "semantic", "--principal", "alice", "--store", str(cli_store))
    code, out, err = _run(capsys, "show", f"m{OSC52}", "--store", str(cli_store))
    assert code != 0
    assert err.startswith("memdeck: error:") and err.count("\n") == 1
    _no_controls(out + err)


# --- the app: memory text is plain text in every widget ----------------------------------------------------


@pytest.mark.anyio
async def test_the_inspector_shows_markup_in_memories_literally(store: Store, host) -> None:
    closing = store.remember("deploy notes [/evil] end", tier="semantic", principal="alice").memory
    link = store.remember(
        "deploy [link=https://x]y[/link] here", tier="semantic", principal="alice", agent="[bold]agent"
    ).memory
    screen = InspectorScreen(store, Scope.of("alice"))
    app = host(screen)
    async with app.run_test(size=(200, 50)) as pilot:
        await pilot.pause()
        screen.query_one("#inspector-query", Input).value = "deploy"
        screen.query_one("#inspector-principal", Input).value = "alice"
        await pilot.press("ctrl+r")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert sorted(screen.ranked_ids) == sorted([closing.id, link.id])
        table = screen.query_one("#inspector-results", DataTable)
        rendered = []
        for row in range(table.row_count):
            for cell in table.get_row_at(row):
                rendered.append(str(cell))
        joined = "\n".join(rendered)
        assert "deploy notes [/evil] end" in joined
        assert "deploy [link=https://x]y[/link] here" in joined
        assert "[bold]agent" in joined
        # and what the terminal draws: the brackets are there, and no cell carries a link
        lines = [str(strip.text) for strip in (table.render_line(y) for y in range(table.size.height))]
        drawn = "\n".join(lines)
        assert "[/evil]" in drawn and "[link=https://x]y[/link]" in drawn
        for y in range(table.size.height):
            for segment in table.render_line(y):
                assert not (segment.style and segment.style.link), segment


def test_an_error_quoting_a_hostile_store_path_prints_it_escaped(cli_store: Path, capsys) -> None:
    code, out, err = _run(capsys, "list", "--store", str(cli_store.parent / f"s{OSC52}"))
    assert code != 0
    assert err.startswith("memdeck: error:") and err.count("\n") == 1 and "\\x1b]52" in err
    _no_controls(out + err)


@pytest.mark.anyio
async def test_an_error_quoting_markup_is_shown_literally(store: Store, host) -> None:
    screen = InspectorScreen(store, Scope.of("alice"))
    app = host(screen)
    async with app.run_test(size=(200, 50)) as pilot:
        await pilot.pause()
        screen.query_one("#inspector-query", Input).value = "deploy"
        screen.query_one("#inspector-principal", Input).value = "[/evil]"
        await pilot.press("ctrl+r")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert "[/evil]" in str(screen.query_one("#inspector-status").render())
        assert any("[/evil]" in str(n.message) for n in app._notifications)
