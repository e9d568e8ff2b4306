"""A command pays at start-up only for what it uses: the installed ``memdeck`` command runs as a subprocess with
``PYTHONPROFILEIMPORTTIME=1``, and the modules it reported importing are its budget.

Reading commands (``list``, ``show``) read the tables through pylance: no LanceDB, no DuckDB, no model, no
app, no MCP SDK, and no forget machinery unless a purge is waiting to be finished (then it is, and the read
shows the store as the finished purge left it). ``recall`` loads the packaged model's numpy port, never torch
or LanceDB, and prints its answer before the redaction rules load (they redact the trace log's copy of the
query, in the background). ``memdeck mcp`` answers ``initialize`` before anything of the store is imported. A
malformed id is refused before anything of the store is imported. The times themselves are
measured by bench/bench_startup.py.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

MEMDECK = Path(sys.executable).with_name("memdeck")
TEXT = "Alice keeps her passport in the blue drawer"

# Never imported by a command that only reads the local tables.
NOT_FOR_READS = {
    "lancedb",
    "duckdb",
    "torch",
    "sentence_transformers",
    "transformers",
    "textual",
    "rich",
    "mcp",
    "pydantic",
    "cryptography",
    "tokenizers",
}
FORGET = "memdeck.core.forget"
_IMPORT_LINE = re.compile(r"^import time:\s*\d+\s*\|\s*\d+\s*\|\s*(\S+)\s*$")


def run(home: Path, *args: str, **env: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """Run the installed command; its result and every module it imported."""
    assert MEMDECK.exists() or shutil.which("memdeck"), "the memdeck command is not installed"
    environ = {**os.environ, "MEMDECK_HOME": str(home), "PYTHONPROFILEIMPORTTIME": "1", **env}
    environ.pop("MEMDECK_DEBUG", None)
    done = subprocess.run(
        [str(MEMDECK), *args], env=environ, capture_output=True, text=True, timeout=300, check=False
    )
    modules = set()
    rest = []
    for line in done.stderr.splitlines():
        found = _IMPORT_LINE.match(line)
        if found:
            modules.add(found.group(1))
        elif not line.startswith("import time:"):
            rest.append(line)
    done.stderr = "\n".join(rest)
    return done, modules


def roots(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


def add(home: Path, text: str) -> str:
    done, _ = run(home, "add", text, "--tier", "semantic", "--principal", "alice")
    assert done.returncode == 0, done.stderr
    return done.stdout.split()[1]


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory, packaged_model: Path) -> tuple[Path, str]:
    """A store with one memory, written with the packaged model (what a first `memdeck add` makes), and recalled
    once, so that the store also holds a trace log (which a read of a fact has no need to open)."""
    home = tmp_path_factory.mktemp("home")
    memory_id = add(home, TEXT)
    done, _ = run(home, "recall", "passport", "--principal", "alice")
    assert done.returncode == 0 and memory_id in done.stdout, done.stderr
    assert any((home / "store").glob("analytics.duckdb*"))
    return home, memory_id


def test_list_and_show_read_the_store_without_lancedb_duckdb_the_model_or_forget(
    home: tuple[Path, str],
) -> None:
    path, memory_id = home

    listed, list_modules = run(path, "list", "--principal", "alice", "--limit", "5")
    shown, show_modules = run(path, "show", memory_id)
    missing, missing_modules = run(path, "show", "sem_00000000000000000000")

    assert listed.returncode == 0, listed.stderr
    assert memory_id in listed.stdout and TEXT in listed.stdout
    assert shown.returncode == 0, shown.stderr
    assert TEXT in shown.stdout and "alice" in shown.stdout
    assert missing.returncode == 3 and "no memory with id" in missing.stderr
    for modules in (list_modules, show_modules, missing_modules):
        assert "lance" in modules  # the tables were read, through pylance
        assert not roots(modules) & NOT_FOR_READS, sorted(roots(modules) & NOT_FOR_READS)
        assert not {m for m in modules if m == FORGET or m.startswith(FORGET + ".")}
        assert "memdeck.core.memtypes" not in modules  # the memory-type rules load with the first write


def test_recall_embeds_with_the_numpy_model_and_reads_without_lancedb_or_torch(
    home: tuple[Path, str],
) -> None:
    path, memory_id = home

    done, modules = run(
        path, "recall", "where does she keep her passport", "--principal", "alice", "--k", "5"
    )

    assert done.returncode == 0, done.stderr
    assert memory_id in done.stdout
    assert re.search(r"vector #1\b", done.stdout), done.stdout  # ranked by the model, not by keywords alone
    assert "memdeck.core.embed_numpy" in modules and "tokenizers" in modules
    assert "memdeck.core.memtypes" not in modules
    assert not roots(modules) & {
        "lancedb",
        "torch",
        "sentence_transformers",
        "transformers",
        "textual",
        "mcp",
    }


def test_recall_answers_before_the_redaction_rules_load_and_still_logs_a_redacted_query(
    home: tuple[Path, str],
) -> None:
    """The trace log keeps a redacted copy of the query, written in the background: the redaction rules load
    there, after the answer is printed, and the trace is still written before the process exits."""
    path, memory_id = home
    query = "where does she keep her passport, call 555-867-5309"

    done = subprocess.run(
        [str(MEMDECK), "recall", query, "--principal", "alice", "--k", "5"],
        env={
            **os.environ,
            "MEMDECK_HOME": str(path),
            "PYTHONPROFILEIMPORTTIME": "1",
            "PYTHONUNBUFFERED": "1",
        },
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,  # one pipe: each import is reported before or after the answer's lines
        text=True,
        timeout=300,
        check=False,
    )

    assert done.returncode == 0, done.stdout
    lines = done.stdout.splitlines()
    answer = next(n for n, line in enumerate(lines) if memory_id in line)
    before = {m.group(1) for m in map(_IMPORT_LINE.match, lines[:answer]) if m}
    after = {m.group(1) for m in map(_IMPORT_LINE.match, lines[answer:]) if m}
    assert "memdeck.core.embed_numpy" in before  # the answer was ranked with the model
    assert not {m for m in before if m.startswith("memdeck.core.privacy")}, sorted(before)
    assert "memdeck.core.privacy.redact" in after  # the logged query was redacted, after the answer
    listed, _ = run(path, "traces", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    logged = json.loads(listed.stdout)[0]
    assert logged["query"].startswith("where does she keep her passport, call ")
    assert "555-867-5309" not in listed.stdout


def test_mcp_initialize_is_answered_before_any_of_the_store_is_imported(home: tuple[Path, str]) -> None:
    """`memdeck mcp` answers the client's `initialize` before it imports the store (pyarrow, pylance, LanceDB,
    DuckDB) or the model; the store opens once the client says it is initialized, and a recall then works."""
    from mcp.types import LATEST_PROTOCOL_VERSION

    path, memory_id = home
    errors = path / "mcp-stderr.txt"
    with errors.open("w") as err:
        server = subprocess.Popen(
            [str(MEMDECK), "mcp", "--principal", "alice", "--agent", "tester"],
            env={**os.environ, "MEMDECK_HOME": str(path), "PYTHONPROFILEIMPORTTIME": "1"},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
        )
    assert server.stdin is not None and server.stdout is not None

    def ask(message: dict[str, object]) -> dict[str, object]:
        assert server.stdin is not None and server.stdout is not None
        server.stdin.write(json.dumps(message) + "\n")
        server.stdin.flush()
        while "id" in message:  # the answer to this request (a notification may come first)
            reply = dict(json.loads(server.stdout.readline()))
            if reply.get("id") == message["id"]:
                return reply
        return {}

    try:
        hello = ask(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": LATEST_PROTOCOL_VERSION,
                    "capabilities": {},
                    "clientInfo": {"name": "import-budget", "version": "1"},
                },
            }
        )
        # Read before the client says it is initialized, which is when the store starts to open.
        at_initialize = {m.group(1) for m in map(_IMPORT_LINE.match, errors.read_text().splitlines()) if m}
        ask({"jsonrpc": "2.0", "method": "notifications/initialized"})
        answer = ask(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "recall", "arguments": {"query": "where is the passport", "k": 3}},
            }
        )
    finally:
        server.stdin.close()
        server.wait(timeout=120)

    assert hello["result"]["serverInfo"]["name"] == "memdeck"  # type: ignore[index]
    assert "mcp" in roots(at_initialize)  # the SDK served it
    store_side = {"pyarrow", "numpy", "lance", "lancedb", "duckdb", "torch", "tokenizers"}
    assert not roots(at_initialize) & store_side, sorted(roots(at_initialize) & store_side)
    assert not answer["result"].get("isError"), answer  # type: ignore[attr-defined]
    assert memory_id in json.dumps(answer["result"])


def test_a_malformed_id_is_refused_before_anything_of_the_store_is_imported(home: tuple[Path, str]) -> None:
    path, _ = home

    done, modules = run(path, "show", " sem_padded ")

    assert done.returncode != 0
    assert done.stderr.count("\n") == 0 and done.stderr.startswith("memdeck: error: not a memory id")
    assert not roots(modules) & {"lance", "pyarrow", "numpy", *NOT_FOR_READS}


def test_a_read_still_finishes_a_purge_a_killed_process_left(tmp_path: Path, packaged_model: Path) -> None:
    home = tmp_path / "home"
    secret = add(home, "The garage code is 4417, keep it quiet")
    kept = add(home, TEXT)

    killed, _ = run(home, "forget", secret, "--reason", "asked to", MEMDECK_TEST_CRASH_AT="deleted")
    assert killed.returncode == 137, killed.stderr
    assert any((home / "store" / "journal").glob("purge-*.json"))

    listed, modules = run(home, "list", "--principal", "alice")

    assert listed.returncode == 0, listed.stderr
    assert FORGET in modules  # the journal made the read load the recovery, and it ran
    assert kept in listed.stdout and secret not in listed.stdout
    assert not any((home / "store" / "journal").glob("purge-*.json"))
    receipts, _ = run(home, "receipts", "list", "--json")
    assert receipts.returncode == 0, receipts.stderr
    assert len(json.loads(receipts.stdout)) == 1  # the finished purge signed its receipt
