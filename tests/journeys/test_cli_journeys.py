"""The command line as a person uses it: the installed ``memdeck`` command run as a subprocess on a scratch
store. Add, import, list, show, export, recall and context, with their ``--json`` outputs compared field by
field; the trace log and the injection ledger read back through the CLI after one-shot commands; Markdown
import round trips; relative ``--since``; the hints a listing gives on stderr.

Plumbing runs on the hash embedder (``[embedding] model = "hash-384"`` in the scratch MEMDECK_HOME); the one
test about meaning loads the packaged model.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

MEMDECK = Path(sys.executable).with_name("memdeck")


def memdeck(
    home: Path, store: Path, *args: str, input: bytes | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the installed command with MEMDECK_HOME=home on ``store``."""
    assert MEMDECK.exists() or shutil.which("memdeck"), "the memdeck command is not installed"
    env = {**os.environ, "MEMDECK_HOME": str(home)}
    env.pop("MEMDECK_DEBUG", None)
    return subprocess.run(
        [str(MEMDECK), *args, "--store", str(store)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        input=None if input is None else input.decode(),
    )


def ok(result: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    # A one-shot command writes its traces before it exits; nothing is lost at interpreter shutdown.
    assert "trace write failed" not in result.stderr and "traces dropped" not in result.stderr, result.stderr
    return result


def hash_home(root: Path) -> Path:
    home = root / "home"
    home.mkdir(parents=True)
    (home / "config.toml").write_text('[embedding]\nmodel = "hash-384"\n', encoding="utf-8")
    return home


MEMORY_MD = """<!-- kept by the assistant -->
# Notes

## Deploy steps
1. Build the image
2. Push it to the registry
   (the staging one first)
3. Roll out with helm

## Preferences
- Prefers short answers
- Works from Lisbon

### Shell
Uses fish.

```sh
# not a heading: a comment in the code
make deploy{trailing}
echo done
```
""".format(trailing="   ")  # trailing spaces in the file are not kept

DATED_MD = "# Standup\nBob fixed the login bug.\nCarol reviewed it.\n"

EXPECTED_TEXTS = {
    "Notes > Deploy steps": (
        "Deploy steps\n1. Build the image\n2. Push it to the registry\n   (the staging one first)\n3. Roll out with helm"
    ),
    "Notes > Preferences": "Preferences\n- Prefers short answers\n- Works from Lisbon",
    "Notes > Preferences > Shell": (
        "Shell\nUses fish.\n\n```sh\n# not a heading: a comment in the code\nmake deploy\necho done\n```"
    ),
    "Standup": "Standup\nBob fixed the login bug.\nCarol reviewed it.",
}


def notes_folder(root: Path) -> Path:
    (root / "memory").mkdir(parents=True)
    (root / "MEMORY.md").write_text(MEMORY_MD, encoding="utf-8")
    (root / "memory" / "2025-03-04.md").write_text(DATED_MD, encoding="utf-8")
    return root


N_BULK = 52


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One store built through the CLI: bulk facts from JSONL (with meta and old dates), a Markdown folder,
    an episode, a procedure, and a deprecated fact."""
    root = tmp_path_factory.mktemp("cli-world")
    home = hash_home(root)
    store = root / "store"
    old = (datetime.now(UTC) - timedelta(days=30)).isoformat()
    lines = [
        json.dumps(
            {
                "text": f"Bulk fact number {n} about the orchard",
                "principal": "alice",
                "tier": "semantic",
                "tags": ["bulk", f"n{n}"],
                "meta": {"batch": "orchard", "n": n},
                **({"created_at": old} if n % 2 else {}),
            }
        )
        for n in range(N_BULK)
    ] + [json.dumps({"text": "Bob keeps bees", "principal": "bob", "tier": "semantic"})]
    bulk = root / "bulk.jsonl"
    bulk.write_text("\n".join(lines) + "\n", encoding="utf-8")
    ok(memdeck(home, store, "import", str(bulk)))
    ok(memdeck(home, store, "import", str(notes_folder(root / "notes")), "--principal", "alice"))
    episode = json.loads(
        ok(
            memdeck(
                home,
                store,
                "add",
                "Met Dana to plan the Lisbon offsite",
                "--tier",
                "episodic",
                "--principal",
                "alice",
                "--agent",
                "planner",
                "--session",
                "s-42",
                "--tags",
                "offsite,dana",
                "--importance",
                "0.8",
                "--json",
            )
        ).stdout
    )["memory"]
    procedure = json.loads(
        ok(
            memdeck(
                home,
                store,
                "add",
                "-",
                "--tier",
                "procedural",
                "--principal",
                "alice",
                "--name",
                "release",
                "--json",
                input=b"tag the release\npush the tag\nannounce it",
            )
        ).stdout
    )["memory"]
    old_fact = json.loads(
        ok(
            memdeck(
                home,
                store,
                "add",
                "The office is in Porto",
                "--tier",
                "semantic",
                "--principal",
                "alice",
                "--json",
            )
        ).stdout
    )["memory"]
    new_fact = json.loads(
        ok(
            memdeck(
                home,
                store,
                "add",
                "The office moved to Lisbon",
                "--tier",
                "semantic",
                "--principal",
                "alice",
                "--pinned",
                "--json",
            )
        ).stdout
    )["memory"]
    ok(
        memdeck(
            home,
            store,
            "deprecate",
            old_fact["id"],
            "--reason",
            "the office moved",
            "--superseded-by",
            new_fact["id"],
        )
    )
    return {
        "home": home,
        "store": store,
        "episode": episode["id"],
        "procedure": procedure["id"],
        "deprecated": old_fact["id"],
        "successor": new_fact["id"],
        "root": root,
    }


def listed(world: dict[str, Any], *args: str) -> list[dict[str, Any]]:
    out = ok(memdeck(world["home"], world["store"], "list", "--json", *args))
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def test_list_show_and_export_agree_field_by_field(world: dict[str, Any]) -> None:
    home, store = world["home"], world["store"]
    rows = listed(world, "--limit", "500")
    total = N_BULK + len(EXPECTED_TEXTS) + 5
    assert len(rows) == total
    export = ok(memdeck(home, store, "export", "-")).stdout.splitlines()
    exported = {r["id"]: r for r in map(json.loads, export[1:])}
    assert set(exported) == {r["id"] for r in rows}
    for row in rows:
        ex = exported[row["id"]]
        derived = {"summary": ex["text"], "deprecated": ex["state"] == "deprecated"}  # not written to a file
        for key, value in row.items():
            assert key in ex or key in derived, (row["id"], key)
            assert ex.get(key, derived.get(key)) == value, (row["id"], key, value, ex.get(key))
    by_id = {r["id"]: r for r in rows}
    # Every record kind, listed and shown: the same fields with the same values, none silently empty.
    bulk = next(r for r in rows if r["text"] == "Bulk fact number 7 about the orchard")
    markdown = next(r for r in rows if r["text"].startswith("Deploy steps"))
    for mem_id in (world["episode"], world["procedure"], world["deprecated"], markdown["id"]):
        shown = json.loads(ok(memdeck(home, store, "show", mem_id, "--json")).stdout)
        assert shown.pop("history") == []
        # show adds, for a procedure, how often it worked when followed (list leaves it out, as history)
        outcomes = shown.pop("outcomes", None)
        assert outcomes == ({"failed": 0, "worked": 0} if by_id[mem_id]["tier"] == "procedural" else None)
        assert shown == by_id[mem_id]
    assert (bulk["meta"]["batch"], bulk["meta"]["n"], bulk["meta"]["import_source"]) == (
        "orchard",
        7,
        "jsonl",
    )
    assert bulk["tags"] == ["bulk", "n7"]
    assert markdown["meta"]["source"] == {
        "file": "MEMORY.md",
        "lines": [4, 8],
        "heading": "Notes > Deploy steps",
    }
    dep = by_id[world["deprecated"]]
    assert dep["state"] == "deprecated" and dep["deprecation_reason"] == "the office moved"
    assert dep["superseded_by"] == world["successor"]
    episode = by_id[world["episode"]]
    assert (episode["session"], episode["agent"], episode["importance"]) == ("s-42", "planner", 0.8)
    assert episode["tags"] == ["offsite", "dana"] and episode["summary"] == episode["text"]
    assert episode["closed"] is True and episode["started_at"] and episode["ended_at"]
    proc = by_id[world["procedure"]]
    assert proc["name"] == "release" and proc["proc_version"] == 1
    assert proc["text"] == "tag the release\npush the tag\nannounce it"
    assert by_id[world["successor"]]["pinned"] is True


def test_one_shot_recall_and_context_are_traced_and_ledgered(world: dict[str, Any], tmp_path: Path) -> None:
    # A store of its own: these commands bump access counts that the listing test compares.
    home = world["home"]
    store = tmp_path / "traced"
    fact = json.loads(
        ok(
            memdeck(
                home,
                store,
                "add",
                "The office is in Lisbon",
                "--tier",
                "semantic",
                "--principal",
                "alice",
                "--json",
            )
        ).stdout
    )["memory"]["id"]
    recalled = json.loads(
        ok(
            memdeck(home, store, "recall", "office", "--principal", "alice", "--agent", "mario", "--json")
        ).stdout
    )
    assert [r["id"] for r in recalled] == [fact]
    pack = ok(
        memdeck(
            home,
            store,
            "context",
            "where is the office",
            "--principal",
            "alice",
            "--agent",
            "mario",
            "--session",
            "sess-1",
            "--json",
        )
    )
    assert [e["id"] for e in json.loads(pack.stdout)["items"]] == [fact]

    traces = json.loads(ok(memdeck(home, store, "traces", "list", "--json")).stdout)
    assert sorted((t["query"], t["source"], t["agent"]) for t in traces) == [
        ("office", "cli", "mario"),
        ("where is the office", "cli-context", "mario"),
    ]
    assert all(t["returned"] == [fact] and t["principals"] == ["alice"] for t in traces)
    first = next(t for t in traces if t["source"] == "cli")
    shown = json.loads(ok(memdeck(home, store, "traces", "show", first["trace_id"], "--json")).stdout)
    [candidate] = shown["candidates"]
    assert candidate["id"] == fact and candidate["returned_rank"] == 1
    assert candidate["score"] == pytest.approx(recalled[0]["score"], abs=1e-5)
    assert candidate["components"] == pytest.approx(recalled[0]["components"], abs=1e-5)

    ledger = json.loads(ok(memdeck(home, store, "ledger", "--json")).stdout)
    assert [(g["agent"], g["session"], g["kind"], g["ids"], g["principal"]) for g in ledger] == [
        ("mario", "sess-1", "cli-context", [fact], "alice"),
    ]
    context_trace = next(t for t in traces if t["source"] == "cli-context")
    assert ledger[0]["trace_id"] == context_trace["trace_id"]
    used = json.loads(ok(memdeck(home, store, "ledger", "--memory", fact, "--json")).stdout)
    assert [(u["agent"], u["session"], u["times"]) for u in used] == [("mario", "sess-1", 1)]


def test_markdown_import_keeps_lines_titles_and_the_date_in_the_name(world: dict[str, Any]) -> None:
    rows = [r for r in listed(world, "--limit", "500") if r["tags"] == ["markdown"]]
    by_heading = {r["meta"]["source"]["heading"]: r for r in rows}
    assert {h: r["text"] for h, r in by_heading.items()} == EXPECTED_TEXTS
    assert all("#" not in r["text"].split("\n", 1)[0] for r in rows)  # titles, not "## " headings
    dated = by_heading["Standup"]
    assert dated["meta"]["source"]["file"] == "memory/2025-03-04.md"
    assert (
        dated["created_at"] == "2025-03-04T00:00:00Z"
        and dated["last_reinforced_at"] == "2025-03-04T00:00:00Z"
    )
    undated = by_heading["Notes > Preferences"]
    made = datetime.fromisoformat(undated["created_at"].replace("Z", "+00:00"))
    assert datetime.now(UTC) - made < timedelta(hours=1)
    # The human-readable show prints the lines as lines.
    shown = ok(
        memdeck(world["home"], world["store"], "show", by_heading["Notes > Deploy steps"]["id"])
    ).stdout
    assert "1. Build the image\n" in shown and "3. Roll out with helm\n" in shown
    # Dates filter on the note's own day.
    day = listed(world, "--since", "2025-03-04", "--until", "2025-03-04", "--principal", "alice")
    assert [r["id"] for r in day] == [dated["id"]]
    # Importing the folder again finds every section unchanged.
    again = ok(
        memdeck(
            world["home"],
            world["store"],
            "import",
            str(world["root"] / "notes"),
            "--principal",
            "alice",
            "--json",
        )
    )
    report = json.loads(again.stdout)
    assert (report["imported"], report["unchanged"]) == (0, len(EXPECTED_TEXTS))


def test_since_takes_relative_durations(world: dict[str, Any]) -> None:
    recent = listed(world, "--since", "7d", "--limit", "500", "--tag", "bulk")
    assert len(recent) == N_BULK // 2
    assert all(int(r["tags"][1][1:]) % 2 == 0 for r in recent)  # the odd ones were written 30 days ago
    assert listed(world, "--since", "12h", "--until", "1h", "--tag", "bulk") == []
    out = ok(
        memdeck(
            world["home"],
            world["store"],
            "recall",
            "orchard fact",
            "--principal",
            "alice",
            "--since",
            "7d",
            "--k",
            "50",
            "--json",
        )
    )
    bulk = [r for r in json.loads(out.stdout) if r["text"].startswith("Bulk fact")]
    assert bulk and {int(r["text"].split()[3]) % 2 for r in bulk} == {0}  # none of those written 30 days ago
    help_text = ok(memdeck(world["home"], world["store"], "list", "--help")).stdout
    assert "7d" in help_text and "2w" in help_text and "ISO 8601" in help_text


def test_list_says_how_many_more_rows_there_are(world: dict[str, Any]) -> None:
    home, store = world["home"], world["store"]
    total = N_BULK + len(EXPECTED_TEXTS) + 5
    out = ok(memdeck(home, store, "list"))
    assert len(out.stdout.splitlines()) == 50
    [hint] = out.stderr.splitlines()
    assert f"rows 1-50 of {total}" in hint and f"{total - 50} more" in hint
    assert "--offset 50" in hint and "--limit" in hint
    rows = json.loads(ok(memdeck(home, store, "list", "--json")).stdout)  # stdout stays pure JSON
    assert len(rows) == 50
    rest = ok(memdeck(home, store, "list", "--offset", "50"))
    assert len(rest.stdout.splitlines()) == total - 50 and rest.stderr == ""


def test_an_unknown_principal_is_named_on_stderr(world: dict[str, Any]) -> None:
    home, store = world["home"], world["store"]
    for args, empty in (
        (["list", "--principal", "alcie", "--json"], "[]\n"),
        (["recall", "office", "--principal", "alcie"], "no memories matched\n"),
        (["context", "office", "--principal", "alcie", "--json"], None),
    ):
        out = ok(memdeck(home, store, *args))
        [hint] = out.stderr.splitlines()
        assert "no memory has principal 'alcie'" in hint and "2 principals" in hint, hint
        assert "alice" not in hint and "bob" not in hint  # nothing of who else is in the store
        if empty is not None:
            assert out.stdout == empty
        else:
            assert json.loads(out.stdout)["items"] == []
    # A known principal with nothing matching gets no such hint, only that nothing matched.
    quiet = ok(memdeck(home, store, "list", "--principal", "bob", "--tag", "nothing-tagged-so"))
    assert quiet.stdout == "" and quiet.stderr == "memdeck: note: no memory matches these filters\n"


def test_imported_sections_are_recalled_by_meaning(
    tmp_path: Path, memdeck_home: Path, packaged_model: Path
) -> None:
    """With the packaged model: a question finds the section that answers it, and --since 7d leaves the
    dated note of 2025 out."""
    store = tmp_path / "store"
    ok(memdeck(memdeck_home, store, "import", str(notes_folder(tmp_path / "notes")), "--principal", "jo"))
    found = json.loads(
        ok(
            memdeck(
                memdeck_home,
                store,
                "recall",
                "how do I ship a new version to production",
                "--principal",
                "jo",
                "--json",
                "--k",
                "4",
            )
        ).stdout
    )
    assert found[0]["text"] == EXPECTED_TEXTS["Notes > Deploy steps"]

    def texts(*args: str) -> list[str]:
        out = ok(
            memdeck(
                memdeck_home,
                store,
                "recall",
                "who fixed the login problem",
                "--principal",
                "jo",
                "--json",
                "--k",
                "4",
                *args,
            )
        )
        return [r["text"] for r in json.loads(out.stdout)]

    # The note of 4 March 2025 is dated that day: older than a week, it is all --until 7d finds ...
    assert texts("--until", "7d") == [EXPECTED_TEXTS["Standup"]]
    # ... and --since 7d leaves it out.
    assert EXPECTED_TEXTS["Standup"] not in texts("--since", "7d")
