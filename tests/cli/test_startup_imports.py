"""What a command imports is what it costs to start: each command runs in a fresh interpreter and reports the
modules it imported. `--help` and an argument error import none of the library's heavy parts; reading
commands never import the model's torch, the app or the MCP SDK; nothing imports LanceDB's REST namespace
client's API classes, which no local or S3 store uses (bench/bench_startup.py measures the times)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = """
import json, sys
from memdeck.cli import main
code = None
try:
    code = main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
json.dump({"code": code, "modules": sorted(sys.modules)}, open(%r, "w"))
"""

HEAVY = {
    "lancedb",
    "lance",
    "pyarrow",
    "numpy",
    "duckdb",
    "torch",
    "sentence_transformers",
    "transformers",
    "cryptography",
    "pydantic",
    "mcp",
    "textual",
    "rich",
    "tokenizers",
    "safetensors",
    "wordfreq",
}
NEVER_FOR_READS = {"torch", "sentence_transformers", "transformers", "textual", "mcp"}
REST_CLIENT_API = "lance_namespace_urllib3_client.api"


def _imports(tmp_path: Path, home: Path, *argv: str) -> tuple[int | None, set[str]]:
    out = tmp_path / "modules.json"
    code = PROBE % str(out)
    run = subprocess.run(
        [sys.executable, "-c", code, *argv],
        capture_output=True,
        text=True,
        timeout=300,
        env={"MEMDECK_HOME": str(home), "PATH": "/usr/bin:/bin"},
    )
    assert out.exists(), run.stderr[-2000:]
    found = json.loads(out.read_text())
    return found["code"], set(found["modules"])


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory, packaged_model: Path) -> Path:
    """A one-memory store written with the packaged model (what a first `memdeck add` makes)."""
    home = tmp_path_factory.mktemp("home")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "memdeck.cli",
            "add",
            "Alice keeps her passport in the blue drawer",
            "--tier",
            "semantic",
            "--principal",
            "alice",
        ],
        check=True,
        capture_output=True,
        timeout=300,
        env={"MEMDECK_HOME": str(home), "PATH": "/usr/bin:/bin"},
    )
    return home


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["list", "--since", "yesterdayish"],
        ["recall"],
        ["show", " sem_padded "],
        ["receipts", "--help"],
        ["mcp", "--help"],
    ],
)
def test_help_and_argument_errors_import_nothing_heavy(tmp_path: Path, home: Path, argv: list[str]) -> None:
    code, modules = _imports(tmp_path, home, *argv)
    assert code in (0, 2), code
    heavy = {m for m in modules if m.split(".")[0] in HEAVY}
    assert not heavy, f"`memdeck {' '.join(argv)}` imported {sorted({m.split('.')[0] for m in heavy})}"


@pytest.mark.parametrize(
    "argv",
    [
        ["list", "--principal", "alice", "--limit", "5"],
        ["show", "sem_00000000000000000000"],
        ["receipts", "list"],
    ],
)
def test_reading_commands_load_no_model_app_or_server(tmp_path: Path, home: Path, argv: list[str]) -> None:
    code, modules = _imports(tmp_path, home, *argv)
    assert code in (0, 3), code
    assert not {m for m in modules if m.split(".")[0] in NEVER_FOR_READS}
    assert not any(m.startswith(REST_CLIENT_API) for m in modules)


def test_a_recall_embeds_without_torch_and_without_the_rest_client(tmp_path: Path, home: Path) -> None:
    code, modules = _imports(tmp_path, home, "recall", "where is the passport", "--principal", "alice")
    assert code == 0
    assert "lance" in modules  # it did read the store, through pylance: LanceDB itself is not imported
    assert "lancedb" not in modules
    assert not {m for m in modules if m.split(".")[0] in {"torch", "sentence_transformers", "textual", "mcp"}}
    assert not any(m.startswith(REST_CLIENT_API) for m in modules)
