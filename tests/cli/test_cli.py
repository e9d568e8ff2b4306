"""The command line as a person runs it: a real subprocess, real store, exit codes and stderr lines."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def run(args: list[str], home: Path, *, input: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "MEMDECK_HOME": str(home)}
    env.pop("MEMDECK_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "memdeck.cli", *args], env=env, capture_output=True, input=input, timeout=300
    )


@pytest.fixture
def hash_home(memdeck_home: Path) -> Path:
    (memdeck_home / "config.toml").write_text('[embedding]\nmodel = "hash-384"\n')
    return memdeck_home


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    home = tmp_path_factory.mktemp("home")
    (home / "config.toml").write_text('[embedding]\nmodel = "hash-384"\n')
    store = home / "s"
    r = run(["add", "seed", "--tier", "semantic", "--principal", "p", "--store", str(store)], home)
    assert r.returncode == 0, r.stderr
    return home, store


def test_add_recall_json_contract_with_the_real_model(memdeck_home, tmp_path, packaged_model):
    store = str(tmp_path / "s")
    for text in (
        "credentials for the backend service",
        "the cafeteria opens at eight",
        "5 contacts on the free tier",
        "the team offsite is in June",
    ):
        r = run(
            ["add", text, "--tier", "semantic", "--principal", "alice", "--store", store, "--json"],
            memdeck_home,
        )
        assert r.returncode == 0, r.stderr
        body = json.loads(r.stdout)
        assert body["action"] == "added" and body["memory"]["text"] == text
    r = run(
        ["--store", store, "recall", "API keys", "--principal", "alice", "--json", "--k", "3"], memdeck_home
    )
    assert r.returncode == 0, r.stderr
    results = json.loads(r.stdout)
    assert results[0]["text"] == "credentials for the backend service"
    first = results[0]
    assert set(first) >= {"id", "tier", "text", "principal", "agent", "score", "components", "ranks"}
    assert set(first["components"]) == {
        "relevance",
        "recency",
        "frequency",
        "importance",
        "pinned",
        "trust",
        "graph",
    }
    assert set(first["ranks"]) == {"vector", "keyword", "graph"}
    from memdeck.core.config import DEFAULT_WEIGHTS as weights  # importance and trust count by default (#15)

    assert first["score"] == pytest.approx(
        sum(weights[k] * v for k, v in first["components"].items()), abs=1e-5
    )
    # -k is --k, as people type it.
    r = run(
        ["--store", store, "recall", "API keys", "--principal", "alice", "--json", "-k", "1"], memdeck_home
    )
    assert r.returncode == 0, r.stderr
    assert [m["id"] for m in json.loads(r.stdout)] == [first["id"]]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["add", "x", "--tier", "bogus", "--principal", "p"], "unknown tier"),
        (["add", "", "--tier", "semantic", "--principal", "p"], "empty"),
        (["add", "x", "--tier", "semantic"], "--principal"),
        (["add", "x", "--tier", "semantic", "--principal", "p", "--importance", "2"], "importance"),
        (["recall", "q", "--principal", "p", "--weights", "relevance=abc"], "weight"),
        (["recall", "q", "--principal", "p", "--weights", "nonsense"], "malformed"),
        (["recall", "q", "--principal", "p", "--weights", "speed=1"], "unknown weight"),
        (["recall", "q", "--principal", "p", "--k", "0"], "at least 1"),
        (["recall", "q", "--principal", "p", "-k", "0"], "at least 1"),
        (["show", "sem_doesnotexist"], "no memory"),
        (["list", "--sort", "colour"], "cannot sort"),
        (["list", "--since", "yesterday-ish"], "ISO"),
    ],
)
def test_bad_input_gets_one_line_and_nonzero_exit(seeded, args, message):
    home, store = seeded
    r = run([*args, "--store", str(store)], home)
    err = r.stderr.decode()
    assert r.returncode != 0
    assert message in err, err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err


def test_missing_store_and_invalid_utf8(hash_home, tmp_path):
    r = run(["list", "--store", str(tmp_path / "nothing-here")], hash_home)
    assert r.returncode != 0 and b"no memdeck store" in r.stderr
    r = run(
        ["add", "-", "--tier", "semantic", "--principal", "p", "--store", str(tmp_path / "s")],
        hash_home,
        input=b"\xff\xfe bad bytes",
    )
    assert r.returncode != 0 and b"UTF-8" in r.stderr and b"Traceback" not in r.stderr
    bad_arg = os.fsencode("caf\udce9")
    env = {**os.environ, "MEMDECK_HOME": str(hash_home)}
    r = subprocess.run(
        [
            sys.executable.encode(),
            b"-m",
            b"memdeck.cli",
            b"add",
            bad_arg,
            b"--tier",
            b"semantic",
            b"--principal",
            b"p",
            b"--store",
            os.fsencode(tmp_path / "s"),
        ],
        env=env,
        capture_output=True,
        timeout=120,
    )
    assert r.returncode != 0 and b"UTF-8" in r.stderr and b"Traceback" not in r.stderr


def test_lifecycle_commands_json(hash_home, tmp_path):
    store = str(tmp_path / "s")
    a = json.loads(
        run(
            ["add", "office in Lisbon", "--tier", "semantic", "--principal", "p", "--store", store, "--json"],
            hash_home,
        ).stdout
    )["memory"]["id"]
    b = json.loads(
        run(
            ["add", "office in Porto", "--tier", "semantic", "--principal", "p", "--store", store, "--json"],
            hash_home,
        ).stdout
    )["memory"]["id"]
    assert json.loads(run(["pin", a, "--store", store, "--json"], hash_home).stdout)[0]["pinned"] is True
    edited = json.loads(
        run(["edit", a, "office in Lisbon, Alfama", "--store", store, "--json"], hash_home).stdout
    )
    assert edited["version"] == 2
    dep = json.loads(
        run(
            ["deprecate", a, "--reason", "moved", "--superseded-by", b, "--store", store, "--json"], hash_home
        ).stdout
    )[0]
    assert dep["state"] == "deprecated" and dep["superseded_by"] == b
    shown = json.loads(run(["show", a, "--store", store, "--json"], hash_home).stdout)
    assert shown["history"][0]["text"] == "office in Lisbon"
    listed = json.loads(run(["list", "--state", "deprecated", "--store", store, "--json"], hash_home).stdout)
    assert [m["id"] for m in listed] == [a]
    r = run(["list", "--principal", "x' OR '1'='1", "--store", store, "--json"], hash_home)
    assert r.returncode == 0 and json.loads(r.stdout) == []


def test_a_misspelt_setting_is_named_not_silently_ignored(memdeck_home: Path) -> None:
    """A typo in config.toml ([recal], recall.kk) gets one warning line naming the nearest known setting from
    the command that read it, and a problem in `memdeck doctor`; known and open sections pass."""
    (memdeck_home / "config.toml").write_text(
        '[embedding]\nmodel = "hash-384"\n[recal]\nk = 5\n[recall]\nkk = 3\nkeyword_blend = 0.4\n[keys]\nquit = "ctrl+q"\n'
        "[limits]\nepisodic = 10\nepisodc = 5\n",
        encoding="utf-8",
    )
    added = run(["add", "tea at four", "--tier", "semantic", "--principal", "ann"], memdeck_home)
    assert added.returncode == 0, added.stderr
    err = added.stderr.decode().splitlines()
    assert len(err) == 3, err
    assert all(line.startswith("memdeck: warning: ") and line.endswith("; it is ignored") for line in err)
    said = "\n".join(err)
    assert "unknown section [recal] (did you mean 'recall'?)" in said
    assert "unknown setting recall.kk (did you mean 'k'?)" in said
    assert "unknown setting limits.episodc (did you mean 'episodic'?)" in said
    doctor = run(["doctor"], memdeck_home)
    out = doctor.stdout.decode()
    assert doctor.returncode != 0 and "no problems found" not in out
    assert "unknown section [recal]" in out and "recall.kk" in out and "limits.episodc" in out
    assert "[keys]" not in out and "limits.episodic " not in out
