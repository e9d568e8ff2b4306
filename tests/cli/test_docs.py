"""The manual stays true: the command reference is what the parsers say, every link in README.md and docs/
leads to a file that exists, every command has its section, and the README stays a short front page."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from memdeck.cli import build_parser
from memdeck.cli._reference import render
from tests.paths import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_the_command_reference_is_what_the_parsers_say() -> None:
    assert (ROOT / "docs" / "cli.md").read_text(encoding="utf-8") == render(), (
        "docs/cli.md is out of date: python -m memdeck.cli._reference --write docs/cli.md"
    )


def test_the_check_command_fails_on_a_stale_reference(tmp_path: Path) -> None:
    stale = tmp_path / "cli.md"
    stale.write_text(render().replace("remember one memory", "something else"), encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "memdeck.cli._reference", "--check", str(stale)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 1 and "out of date" in run.stderr
    fresh = subprocess.run(
        [sys.executable, "-m", "memdeck.cli._reference", "--check", str(ROOT / "docs" / "cli.md")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert fresh.returncode == 0, fresh.stderr


def test_every_command_and_subcommand_has_its_section() -> None:
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    for name in sub.choices:  # type: ignore[attr-defined]
        assert f"`memdeck {name}`" in text, name
    for nested in ("receipts verify", "review keep-left", "traces show", "session close"):
        assert f"## `memdeck {nested}`" in text or f"### `memdeck {nested}`" in text, nested


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_relative_link_leads_to_a_file(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    text = re.sub(r"```.*?```", "", text, flags=re.S)  # code blocks hold no links
    targets = re.findall(r"\]\(([^)\s]+)\)", text)
    for target in targets:
        if re.match(r"^(https?:|mailto:|#)", target):
            continue
        path = (page.parent / target.split("#", 1)[0]).resolve()
        assert path.exists(), f"{page.name} links to {target}, which does not exist"


def test_the_readme_is_a_front_page_and_links_every_manual_page() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    for page in sorted((ROOT / "docs").glob("*.md")):
        assert f"docs/{page.name}" in readme, f"README.md does not link docs/{page.name}"
