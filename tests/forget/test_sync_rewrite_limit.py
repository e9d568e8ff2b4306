"""A sync that would rewrite every section (merge-conflict markers, a placeholder) forgets nothing without
--yes: a changed section is forgotten and written again, so it counts against the removal limit."""

from __future__ import annotations

from pathlib import Path

import pytest

from memdeck.core.exchange import SyncRefused, sync_markdown
from memdeck.core.filters import Scope

NOTES = {
    "home.md": "# Home\n\n## Garden\n\nWater the tomatoes on Sundays.\n\n## Kitchen\n\nThe kettle descales monthly.\n",
    "work.md": "# Work\n\n## Standup\n\nStandup is at 9:30 in room 4.\n\n## Laptop\n\nThe laptop charger is in the blue bag.\n",
}


def _write(root: Path, body: str | None = None) -> None:
    for name, text in NOTES.items():
        if body is not None:  # every section's text replaced, headings kept
            text = "\n".join(
                line if line.startswith("#") or not line.strip() else body for line in text.splitlines()
            )
        (root / name).write_text(text + "\n", encoding="utf-8")


@pytest.mark.parametrize("body", ["<<<<<<< HEAD", "TODO: write this up"])
def test_rewriting_every_section_needs_yes(open_store, tmp_path, body):
    root = tmp_path / "notes"
    root.mkdir()
    _write(root)
    store = open_store(tmp_path / "s")
    sync_markdown(store.engine, root, "jo")
    before = {m.id for m in store.list(Scope.of("jo"), limit=100)}
    assert len(before) == 4
    pinned = next(iter(before))
    store.pin(pinned)
    _write(root, body)
    with pytest.raises(SyncRefused, match="would forget 4 of its 4 memories \\(4 of them replaced"):
        sync_markdown(store.engine, root, "jo")
    assert {m.id for m in store.list(Scope.of("jo"), limit=100)} == before  # nothing changed
    assert store.get(pinned).pinned
    report = sync_markdown(store.engine, root, "jo", confirm=True)
    assert report.replaced == 4 and len(report.receipts) == 1
