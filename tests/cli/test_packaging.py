"""The package shape: core never imports the UI, nothing heavy loads at import, no top-level `core`."""

from __future__ import annotations

import importlib.util
import subprocess
import sys


def _modules_after(statement: str) -> set[str]:
    code = f"import sys; {statement}; print('\\n'.join(sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    return set(out.stdout.split())


def test_core_imports_neither_textual_nor_rich_nor_torch():
    loaded = _modules_after(
        "import memdeck.core, memdeck.cli, memdeck.core.store, memdeck.core.recall.search"
    )
    assert "textual" not in loaded
    assert "rich" not in loaded
    assert "torch" not in loaded and "sentence_transformers" not in loaded


def test_cli_parser_builds_without_heavy_imports():
    loaded = _modules_after("from memdeck.cli import build_parser; build_parser()")
    assert "torch" not in loaded and "textual" not in loaded


def test_installed_as_memdeck_core_not_top_level_core(tmp_path):
    assert importlib.util.find_spec("memdeck.core") is not None
    # From a directory outside the checkout, `core` and `tui` must not import as top-level modules.
    code = "import importlib.util as u; print(u.find_spec('memdeck.tui') is not None, u.find_spec('core'), u.find_spec('tui'))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=60
    )
    assert out.stdout.split() == ["True", "None", "None"], out.stdout + out.stderr


def test_the_public_api_is_literal_and_every_name_resolves():
    import memdeck.core as api

    assert isinstance(api.__all__, list) and len(api.__all__) == len(set(api.__all__))
    for name in api.__all__:
        assert getattr(api, name) is not None
    assert api.Store.__module__ == "memdeck.core.store"
