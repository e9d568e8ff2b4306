"""A folder that holds other things never becomes a store, whichever door opens it: the Python API and the
app refuse it as the command line does, before a file in it is created or its mode changes."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from memdeck.core.embed import HashEmbedder
from memdeck.core.errors import MemdeckError
from memdeck.core.store import Store


def _state(folder: Path) -> tuple[list[str], int]:
    return sorted(os.listdir(folder)), stat.S_IMODE(folder.stat().st_mode)


def test_the_api_refuses_a_folder_holding_other_things(tmp_path: Path) -> None:
    folder = tmp_path / "Documents"
    folder.mkdir(mode=0o755)
    os.chmod(folder, 0o755)
    (folder / "taxes-2025.pdf").write_bytes(b"%PDF-1.7")
    before = _state(folder)
    with pytest.raises(MemdeckError, match="not a memdeck store and not empty"):
        Store.open(folder, embedder=HashEmbedder())
    assert _state(folder) == before  # no memdeck.json, no lock file, mode unchanged


def test_an_empty_or_new_folder_still_becomes_a_store(tmp_path: Path) -> None:
    for folder in (tmp_path / "new", tmp_path / "empty"):
        if folder.name == "empty":
            folder.mkdir()
        store = Store.open(folder, embedder=HashEmbedder())
        store.close()
        assert (folder / "memdeck.json").exists()
        assert Store.open(folder, embedder=HashEmbedder(), create=False).count() == 0


@pytest.mark.anyio
async def test_the_app_refuses_the_default_folder_holding_other_things(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memdeck.core.filters import Scope
    from memdeck.tui.app import MemdeckApp

    home = tmp_path / "home"
    (home / "store").mkdir(parents=True)
    (home / "store" / "notes.txt").write_text("mine", encoding="utf-8")
    monkeypatch.setenv("MEMDECK_HOME", str(home))

    def opener() -> tuple[Store, Scope]:  # what `memdeck` with no command opens: the default store
        return Store.open(None, embedder=HashEmbedder()), Scope.everyone()

    app = MemdeckApp(opener=opener)
    async with app.run_test(size=(120, 30)) as pilot:
        for _ in range(50):
            await pilot.pause(0.1)
            if app.open_error:
                break
    assert app.return_code == 1
    assert app.open_error is not None and "not a memdeck store and not empty" in app.open_error
    assert sorted(os.listdir(home / "store")) == ["notes.txt"]
