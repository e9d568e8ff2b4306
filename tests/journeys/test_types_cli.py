"""Memory types and procedure outcomes through the installed ``memdeck`` command, as a person types it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

MEMDECK = Path(sys.executable).with_name("memdeck")


def run(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMDECK_HOME": str(home)}
    env.pop("MEMDECK_DEBUG", None)
    return subprocess.run(
        [str(MEMDECK), *args, "--store", str(home / "store")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    return result.stdout


def test_types_are_set_inferred_filtered_and_bad_ones_refused_in_one_line(tmp_path: Path) -> None:
    home = tmp_path / "cli-home"
    home.mkdir()
    (home / "config.toml").write_text('[embedding]\nmodel = "hash-384"\n', encoding="utf-8")
    added = {}
    for text, extra in (
        ("I prefer the window table at Luigi's", []),
        ("Luigi's closes at ten on weekdays", ["--type", "fact"]),
        ("We decided to book Luigi's for the team dinner", []),
    ):
        out = json.loads(
            ok(run(home, "add", text, "--tier", "semantic", "--principal", "alice", "--json", *extra))
        )
        added[out["memory"]["type"]] = out["memory"]["id"]
    assert set(added) == {"preference", "fact", "decision"}

    listed = json.loads(ok(run(home, "list", "--principal", "alice", "--type", "decision", "--json")))
    assert [m["id"] for m in listed] == [added["decision"]]
    recalled = json.loads(
        ok(
            run(
                home,
                "recall",
                "Luigi's",
                "--principal",
                "alice",
                "--type",
                "fact",
                "--type",
                "preference",
                "--json",
            )
        )
    )
    assert {r["id"] for r in recalled} == {added["fact"], added["preference"]}
    assert {r["type"] for r in recalled} == {"fact", "preference"}
    shown = ok(run(home, "show", added["fact"]))
    assert any(line.split() == ["type", "fact"] for line in shown.splitlines())

    bad = run(home, "list", "--type", "opinion")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
    assert "invalid choice: 'opinion'" in bad.stderr


def test_a_procedure_shows_when_to_use_it_and_how_often_it_worked(tmp_path: Path) -> None:
    home = tmp_path / "cli-home"
    home.mkdir()
    (home / "config.toml").write_text('[embedding]\nmodel = "hash-384"\n', encoding="utf-8")
    steps = "1. Check the queue depth\n2. Restart the worker\n3. Post in #ops"
    out = ok(
        run(
            home,
            "add",
            steps,
            "--tier",
            "procedural",
            "--principal",
            "alice",
            "--name",
            "unstick the queue",
            "--when",
            "the export queue stops moving",
            "--json",
        )
    )
    proc = json.loads(out)["memory"]["id"]
    before = json.loads(ok(run(home, "show", proc, "--json")))
    assert before["outcomes"] == {"worked": 0, "failed": 0}
    ok(run(home, "feedback", proc, "--worked"))
    for _ in range(2):
        ok(run(home, "feedback", proc, "--failed"))
    shown = ok(run(home, "show", proc))
    assert "when to use  the export queue stops moving" in shown
    assert "outcomes     worked 1, failed 2" in shown
    assert json.loads(ok(run(home, "show", proc, "--json")))["outcomes"] == {"worked": 1, "failed": 2}
    # The same outcomes the review queue reads: failed twice and more often than it worked.
    review = json.loads(
        ok(run(home, "review", "--principal", "alice", "--kind", "failing_procedure", "--json"))
    )
    assert proc in json.dumps(review)

    wrong = run(home, "add", "Tea at four", "--tier", "semantic", "--principal", "alice", "--when", "always")
    assert wrong.returncode != 0 and wrong.stderr.strip().splitlines() == [
        "memdeck: error: --when is for procedures (--tier procedural)"
    ]
