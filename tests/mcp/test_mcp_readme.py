"""The manual's MCP tool table (docs/mcp.md) is the one the server's own tool list renders, exactly."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from memdeck.cli.mcp import TABLE_END, TABLE_START, tool_table
from tests.paths import ROOT

MANUAL = ROOT / "docs" / "mcp.md"


def _readme_table() -> str:
    text = MANUAL.read_text(encoding="utf-8")
    assert text.count(TABLE_START) == 1 and text.count(TABLE_END) == 1
    return text.split(TABLE_START, 1)[1].split(TABLE_END, 1)[0].removeprefix("\n")


def test_readme_table_is_the_servers() -> None:
    assert _readme_table() == tool_table()


def test_the_table_names_every_tool_and_its_bounds() -> None:
    table = tool_table()
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    names = [row.split("`")[1] for row in rows]
    assert names == [
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
    recall = rows[names.index("recall")]
    assert "`k` (integer 1-1000, default 10)" in recall
    assert "`tiers` (list of episodic / semantic / procedural, at most 16 items)" in recall
    assert "`tier` (episodic / semantic / procedural, default semantic)" in rows[0]
    assert "`limit` (integer 1-500, default 20)" in rows[names.index("list")]
    assert "`depth` (integer 1-6, default 1)" in rows[names.index("related")]


def test_tool_table_command_prints_the_table_and_updates_a_copy(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "memdeck.cli.mcp", "--tool-table"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert out.stdout == tool_table()

    stale = tmp_path / "README.md"
    stale.write_text(f"# x\n\n{TABLE_START}\n| old | table |\n{TABLE_END}\n\nafter\n", encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "memdeck.cli.mcp", "--update", str(stale)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert stale.read_text(encoding="utf-8") == f"# x\n\n{TABLE_START}\n{tool_table()}{TABLE_END}\n\nafter\n"

    unmarked = tmp_path / "other.md"
    unmarked.write_text("no table here\n", encoding="utf-8")
    bad = subprocess.run(
        [sys.executable, "-m", "memdeck.cli.mcp", "--update-readme", str(unmarked)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 2 and bad.stdout == ""
    assert len(bad.stderr.strip().splitlines()) == 1 and "markers" in bad.stderr
