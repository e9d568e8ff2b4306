"""Export, import (memdeck JSONL, Markdown folders, mem0) and sync, on real LanceDB stores."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import memdeck.core.exchange.importer as importer
from memdeck.cli import main
from memdeck.cli._common import TextProgress
from memdeck.core.exchange import (
    chunk_markdown,
    export_jsonl,
    import_path,
    iter_export,
    sync_markdown,
)
from memdeck.core.filters import Scope
from memdeck.core.storage.engine import Engine
from memdeck.core.store import Store


def _populate(store: Store) -> dict[str, str]:
    ids: dict[str, str] = {}
    ep = store.remember(
        "Sprint review with Bob: the launch moves to June.",
        tier="episodic",
        principal="alice",
        agent="assistant",
        session="s-42",
        started_at="2024-05-01T09:00:00Z",
        ended_at="2024-05-01T10:30:00Z",
        events=[{"role": "user", "text": "launch moves to June"}, "free-form note"],
        derived_facts=["The launch is in June"],
        tags=["work", "launch"],
        importance=0.8,
    )
    ids["episode"] = ep.memory.id  # type: ignore[union-attr]
    fact = store.remember(
        "The launch is in June",
        tier="semantic",
        principal="alice",
        agent="assistant",
        sources=[ids["episode"]],
        confidence=0.9,
        pinned=True,
        created_at="2024-05-01T10:31:00Z",
    )
    ids["fact"] = fact.memory.id  # type: ignore[union-attr]
    store.remember(
        "The launch is in June", tier="semantic", principal="alice", created_at="2024-05-02T08:00:00Z"
    )
    old = store.remember(
        "The launch is in May", tier="semantic", principal="alice", created_at="2024-04-01T08:00:00Z"
    )
    ids["old"] = old.memory.id  # type: ignore[union-attr]
    store.deprecate(ids["old"], "moved", superseded_by=ids["fact"])
    for n in (1, 2):
        r = store.remember(f"release\ntag v{n}\npush", tier="procedural", principal="alice", name="release")
        ids[f"proc{n}"] = r.memory.id  # type: ignore[union-attr]
    edited = store.remember(
        "Bob's desk is near the window", tier="semantic", principal="bob", tags=["office"]
    )
    ids["bob"] = edited.memory.id  # type: ignore[union-attr]
    store.edit(ids["bob"], "Bob's desk is near the kitchen")
    store.engine.record_access([("semantic", ids["fact"]), ("semantic", ids["fact"])])
    store.close()  # flushes the access counts
    return ids


def _records(store: Store, **kw: Any) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in iter_export(store.engine, **kw)}


def test_export_then_import_gives_the_same_records(open_store, tmp_path: Path) -> None:
    src = open_store(tmp_path / "a")
    ids = _populate(src)
    path = tmp_path / "all.jsonl"
    assert export_jsonl(src.engine, path) == 6
    header = json.loads(path.read_text().splitlines()[0])
    assert header["format"] == "memdeck.export/1" and "vectors" in header["note"]

    dst = open_store(tmp_path / "b")
    report = import_path(dst.engine, path)
    assert (report.imported, report.unchanged, report.malformed) == (6, 0, 0)
    before, after = _records(src), _records(dst)
    assert after == before
    fact = after[ids["fact"]]
    assert fact["pinned"] and fact["evidence_count"] == 2 and fact["access_count"] == 2
    assert after[ids["old"]]["state"] == "deprecated" and after[ids["old"]]["superseded_by"] == ids["fact"]
    assert after[ids["bob"]]["version"] == 2 and after[ids["proc2"]]["proc_version"] == 2
    assert after[ids["episode"]]["events"][0] == {"role": "user", "text": "launch moves to June"}
    # Vectors are recomputed by the importing store, not copied.
    memory = dst.get(ids["fact"])
    assert np.allclose(dst.engine.get_vector(memory), dst.engine.embedder.encode([memory.text])[0])
    # Recall and the procedure rule work on the imported store.
    assert dst.recall("launch June", principal="alice", k=1).items[0].memory.id == ids["fact"]


def test_reimport_adds_nothing_and_commits_nothing(open_store, tmp_path: Path) -> None:
    src = open_store(tmp_path / "a")
    _populate(src)
    path = tmp_path / "all.jsonl"
    export_jsonl(src.engine, path)
    dst = open_store(tmp_path / "b")
    import_path(dst.engine, path)
    versions = {t: dst.engine.table(t).version for t in dst.engine.tiers_present()}
    again = import_path(dst.engine, path)
    assert (again.imported, again.unchanged) == (0, 6)
    assert {t: dst.engine.table(t).version for t in dst.engine.tiers_present()} == versions
    assert dst.count() == 6


def test_export_filters(open_store, tmp_path: Path) -> None:
    store = open_store(tmp_path / "a")
    ids = _populate(store)
    store = open_store(tmp_path / "a")
    assert set(_records(store, scope=Scope.of("bob"))) == {ids["bob"]}
    assert {r["tier"] for r in _records(store, tier="procedural").values()} == {"procedural"}
    assert set(_records(store, state="deprecated")) == {ids["old"]}
    assert ids["old"] not in _records(store, state="active")
    # Streams in pages: a batch size of 2 still yields every record once.
    assert sorted(r["id"] for r in iter_export(store.engine, batch_size=2)) == sorted(_records(store))


def test_import_restricted_to_one_principal(open_store, tmp_path: Path) -> None:
    src = open_store(tmp_path / "a")
    ids = _populate(src)
    path = tmp_path / "all.jsonl"
    export_jsonl(src.engine, path)
    dst = open_store(tmp_path / "b")
    report = import_path(dst.engine, path, principal="bob")
    assert report.imported == 1 and report.skipped_other_principal == 5
    assert [m.id for m in dst.list()] == [ids["bob"]]


def test_malformed_lines_are_reported_and_skipped(open_store, tmp_path: Path) -> None:
    path = tmp_path / "mixed.jsonl"
    good = {"text": "Dana takes the 7:40 train", "tier": "semantic", "principal": "dana"}
    lines = [
        json.dumps(good),
        "{not json",
        json.dumps([1, 2]),
        "",
        json.dumps({"text": "   ", "principal": "dana"}),
        json.dumps({"text": "No owner here", "tier": "semantic"}),
        json.dumps({"text": "Bad tier", "tier": "working", "principal": "dana"}),
        json.dumps({"text": "Bad importance", "principal": "dana", "importance": 7}),
    ]
    path.write_bytes(("\n".join(lines) + "\n").encode() + b"\xff\xfe broken utf8\n")
    seen: list[tuple[str, str]] = []
    store = open_store(tmp_path / "s")
    report = import_path(store.engine, path, on_problem=lambda where, what: seen.append((where, what)))
    assert report.imported == 1
    assert [w for w, _ in seen] == ["line 2", "line 3", "line 5", "line 6", "line 7", "line 8", "line 9"]
    assert "principal" in dict(seen)["line 6"] and "UTF-8" in dict(seen)["line 9"]
    # Hand-written records (no id) dedupe on their import key.
    assert import_path(store.engine, path).imported == 0
    assert store.count() == 1


def test_interrupted_import_leaves_whole_batches_and_reruns_cleanly(
    open_store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = open_store(tmp_path / "a")
    for n in range(10):
        src.remember(f"Fact number {n} about the garden", tier="semantic", principal="eve")
    path = tmp_path / "eve.jsonl"
    export_jsonl(src.engine, path)
    dst = open_store(tmp_path / "b")
    real = importer.restore_many
    calls = {"n": 0}

    def flaky(store: Store, memories: list[Any]) -> list[Any]:
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real(store, memories)

    monkeypatch.setattr(importer, "restore_many", flaky)
    with pytest.raises(KeyboardInterrupt):
        import_path(dst.engine, path, batch_size=4)
    assert dst.count() == 8  # two whole batches
    monkeypatch.setattr(importer, "restore_many", real)
    report = import_path(dst.engine, path, batch_size=4)
    assert (report.imported, report.unchanged) == (2, 8)
    assert sorted(m.text for m in dst.list(limit=100)) == sorted(m.text for m in src.list(limit=100))


def test_all_writes_are_redacted(open_store, tmp_path: Path) -> None:
    @dataclass
    class Result:
        text: str

    class Stub:
        def redact(self, text: str, principal: str) -> Result:
            return Result(text.replace("hunter2", "[SECRET]"))

        def redact_value(self, value: Any, principal: str) -> Any:
            return json.loads(json.dumps(value).replace("hunter2", "[SECRET]"))

    path = tmp_path / "mem0.json"
    path.write_text(json.dumps([{"id": "m1", "memory": "Frank's password is hunter2", "user_id": "frank"}]))
    export = tmp_path / "exp.jsonl"
    export.write_text(
        json.dumps(
            {
                "id": "sem_x1",
                "tier": "semantic",
                "principal": "frank",
                "text": "Frank's other password is hunter2",
                "tags": ["hunter2"],
            }
        )
        + "\n"
    )
    store = open_store(tmp_path / "s")
    store.engine._redactor = Stub()
    import_path(store.engine, path)
    import_path(store.engine, export)
    texts = sorted(m.text + " " + ",".join(m.tags) for m in store.list())
    assert texts == ["Frank's other password is [SECRET] [SECRET]", "Frank's password is [SECRET] "]


# --- mem0 --------------------------------------------------------------------------------------------

MEM0 = [
    {
        "id": "a1",
        "memory": "Likes hiking in the Alps",
        "user_id": "gina",
        "created_at": "2024-07-20T01:58:24.016743-07:00",
        "metadata": {"source": "chat"},
        "categories": ["hobbies"],
    },
    {
        "id": "a2",
        "memory": "Is training for a marathon",
        "user_id": "gina",
        "created_at": "2024-07-21T10:00:00Z",
        "metadata": None,
    },
    {"id": "a3", "memory": "", "user_id": "gina"},
    "not an object",
    {"id": "a4", "memory": "Works night shifts", "user_id": "hal", "created_at": "2024-07-22T10:00:00Z"},
]


def test_mem0_import(open_store, tmp_path: Path) -> None:
    path = tmp_path / "mem0.json"
    path.write_text(json.dumps(MEM0))
    store = open_store(tmp_path / "s")
    problems: list[str] = []
    report = import_path(store.engine, path, on_problem=lambda w, p: problems.append(w))
    assert report.format == "mem0" and report.imported == 3
    assert problems == ["record 3", "record 4"]
    hiking = store.get(next(m.id for m in store.list(Scope.of("gina")) if "hiking" in m.text))
    assert hiking.tier == "semantic" and hiking.tags == ["hobbies"] and hiking.agent == "mem0"
    assert hiking.meta["mem0_id"] == "a1" and hiking.meta["mem0_metadata"] == {"source": "chat"}
    assert hiking.created_at.isoformat().startswith("2024-07-20T08:58:24")
    assert [m.text for m in store.list(Scope.of("hal"))] == ["Works night shifts"]
    again = import_path(store.engine, path)
    assert (again.imported, again.unchanged) == (0, 3)
    assert store.count() == 3
    # --principal puts every memory under one principal (dedupe is per principal).
    wrapped = tmp_path / "wrapped.json"
    wrapped.write_text(json.dumps({"results": MEM0[:2]}))
    assert import_path(store.engine, wrapped, principal="ivy", agent="importer").imported == 2
    assert {m.agent for m in store.list(Scope.of("ivy"))} == {"importer"}


# --- Markdown ----------------------------------------------------------------------------------------

MEMORY_MD = """# Memory

## Preferences
- Prefers tabs over spaces.
- Uses fish shell.

## Projects
### memdeck
A terminal memory manager.

```sh
# this is a comment, not a heading
make test
```

### garden
Tomatoes go in the south bed.
"""


def test_chunk_markdown_headings_fences_and_lines() -> None:
    chunks = chunk_markdown(MEMORY_MD)
    assert [c.heading for c in chunks] == [
        "Memory > Preferences",
        "Memory > Projects > memdeck",
        "Memory > Projects > garden",
    ]
    assert [(c.start, c.end) for c in chunks] == [(3, 5), (8, 14), (16, 17)]
    assert "# this is a comment" in chunks[1].text
    lines = MEMORY_MD.splitlines()
    for c in chunks:
        assert c.text == "\n".join(lines[c.start - 1 : c.end])
    long = "# Big\n" + "\n\n".join(f"paragraph {n} " + "word " * 60 for n in range(40))
    parts = chunk_markdown(long, max_chars=1000)
    assert len(parts) > 5 and all(len(p.text) <= 2000 for p in parts)
    assert all(p.heading == "Big" for p in parts)


def _memory_folder(root: Path) -> Path:
    (root / "memory").mkdir(parents=True)
    (root / "MEMORY.md").write_text(MEMORY_MD, encoding="utf-8")
    (root / "memory" / "2024-06-01.md").write_text(
        "# 2024-06-01\nCalled the plumber about the boiler.\n", encoding="utf-8"
    )
    (root / ".hidden").mkdir()
    (root / ".hidden" / "skip.md").write_text("# Skip\nnot imported\n", encoding="utf-8")
    return root


def _by_file(store: Store, principal: str = "jo") -> dict[tuple[str, str], Any]:
    full = [store.get(m.id) for m in store.list(Scope.of(principal), limit=500)]  # list() leaves meta out
    return {(m.meta["source"]["file"], m.meta["source"]["heading"]): m for m in full}


def test_markdown_import_and_reimport(open_store, tmp_path: Path) -> None:
    root = _memory_folder(tmp_path / "notes")
    store = open_store(tmp_path / "s")
    report = import_path(store.engine, root, principal="jo")
    assert report.format == "markdown" and report.imported == 4
    chunks = _by_file(store)
    assert set(chunks) == {
        ("MEMORY.md", "Memory > Preferences"),
        ("MEMORY.md", "Memory > Projects > memdeck"),
        ("MEMORY.md", "Memory > Projects > garden"),
        ("memory/2024-06-01.md", "2024-06-01"),
    }
    prefs = chunks[("MEMORY.md", "Memory > Preferences")]
    assert prefs.meta["source"]["lines"] == [3, 5] and prefs.meta["chunk_sha256"]
    assert prefs.tags == ["markdown"] and prefs.principal == "jo"
    versions = {t: store.engine.table(t).version for t in store.engine.tiers_present()}
    again = import_path(store.engine, root, principal="jo")
    assert (again.imported, again.unchanged) == (0, 4)
    assert {t: store.engine.table(t).version for t in store.engine.tiers_present()} == versions

    # Lines inserted above a chunk move it: same memory, line range updated, nothing re-added.
    (root / "MEMORY.md").write_text("<!-- header -->\n\n" + MEMORY_MD, encoding="utf-8")
    moved = import_path(store.engine, root, principal="jo")
    assert (moved.imported, moved.moved) == (0, 4 - 1)
    after = _by_file(store)
    assert after[("MEMORY.md", "Memory > Preferences")].id == prefs.id
    assert after[("MEMORY.md", "Memory > Preferences")].meta["source"]["lines"] == [5, 7]

    with pytest.raises(Exception, match="--principal"):
        import_path(store.engine, root)


def test_changed_chunk_replaces_the_old_one(open_store, tmp_path: Path) -> None:
    root = _memory_folder(tmp_path / "notes")
    store = open_store(tmp_path / "s")
    import_path(store.engine, root, principal="jo")
    old = _by_file(store)[("MEMORY.md", "Memory > Preferences")]
    (root / "MEMORY.md").write_text(MEMORY_MD.replace("Uses fish shell.", "Uses zsh."), encoding="utf-8")
    report = import_path(store.engine, root, principal="jo")
    assert (report.imported, report.replaced, report.unchanged) == (1, 1, 3)
    assert len(report.receipts) == 1
    new = _by_file(store)[("MEMORY.md", "Memory > Preferences")]
    assert "zsh" in new.text and new.id != old.id
    assert store.count(Scope.of("jo")) == 4
    from memdeck.core.errors import NotFound

    with pytest.raises(NotFound):
        store.get(old.id)


def test_sync_forgets_deleted_files_and_removed_sections(open_store, tmp_path: Path) -> None:
    root = _memory_folder(tmp_path / "notes")
    store = open_store(tmp_path / "s")
    sync_markdown(store.engine, root, "jo")
    (root / "memory" / "2024-06-01.md").unlink()
    (root / "MEMORY.md").write_text(MEMORY_MD.split("### garden")[0], encoding="utf-8")
    report = sync_markdown(store.engine, root, "jo")
    assert report.removed == 2 and len(report.receipts) == 2
    assert set(_by_file(store)) == {
        ("MEMORY.md", "Memory > Preferences"),
        ("MEMORY.md", "Memory > Projects > memdeck"),
    }
    assert sync_markdown(store.engine, root, "jo").removed == 0


def test_sync_of_an_unchanged_folder_changes_nothing(open_store, tmp_path: Path) -> None:
    root = _memory_folder(tmp_path / "notes")
    other = _memory_folder(tmp_path / "other")
    store = open_store(tmp_path / "s")
    first = sync_markdown(store.engine, root, "jo")
    assert first.imported == 4
    # Another folder's chunks (same relative paths) are separate memories and not touched by this sync.
    assert import_path(store.engine, other, principal="jo").imported == 0  # same texts: already known facts
    versions = {t: store.engine.table(t).version for t in store.engine.tiers_present()}
    report = sync_markdown(store.engine, root, "jo")
    assert (report.imported, report.removed, report.unchanged) == (0, 0, 4)
    assert {t: store.engine.table(t).version for t in store.engine.tiers_present()} == versions


def _emptied(root: Path) -> None:
    """The folder is still there but every note is gone (an unmounted drive looks like this)."""
    (root / "memory" / "2024-06-01.md").unlink()
    (root / "MEMORY.md").unlink()


def test_sync_of_an_emptied_folder_forgets_nothing_until_confirmed(open_store, tmp_path: Path) -> None:
    from memdeck.core.exchange import SyncRefused
    from memdeck.core.receipts import ReceiptBook

    root = _memory_folder(tmp_path / "notes")
    store = open_store(tmp_path / "s")
    sync_markdown(store.engine, root, "jo")
    ids = {m.id for m in store.list(Scope.of("jo"), limit=50)}
    pinned = next(iter(ids))
    store.pin(pinned)
    _emptied(root)
    versions = {t: store.engine.table(t).version for t in store.engine.tiers_present()}
    with pytest.raises(SyncRefused, match=r"would forget 4 of its 4 memories.*--dry-run.*--yes"):
        sync_markdown(store.engine, root, "jo")
    assert {m.id for m in store.list(Scope.of("jo"), limit=50)} == ids
    assert {t: store.engine.table(t).version for t in store.engine.tiers_present()} == versions
    assert ReceiptBook(store.root).list() == []

    report = sync_markdown(store.engine, root, "jo", confirm=True)
    assert report.removed == 4 and store.count(Scope.of("jo")) == 0


def test_sync_refuses_past_the_configured_count(open_store, tmp_path: Path) -> None:
    from memdeck.core.exchange import SyncRefused

    root = _memory_folder(tmp_path / "notes")
    store = open_store(tmp_path / "s", sync={"max_remove": 0, "max_remove_fraction": 1.0})
    sync_markdown(store.engine, root, "jo")
    (root / "memory" / "2024-06-01.md").unlink()  # one of four: under the fraction, over the count
    with pytest.raises(SyncRefused, match="would forget 1 of its 4"):
        sync_markdown(store.engine, root, "jo")
    assert store.count(Scope.of("jo")) == 4
    with pytest.raises(Exception, match="max_remove_fraction must be a number from 0 to 1"):
        sync_markdown(open_store(tmp_path / "t", sync={"max_remove_fraction": 2}).engine, root, "jo")


def test_a_sync_dry_run_lists_what_it_would_do_and_changes_nothing(open_store, tmp_path: Path) -> None:
    root = _memory_folder(tmp_path / "notes")
    store = open_store(tmp_path / "s")
    sync_markdown(store.engine, root, "jo")
    before = _by_file(store)
    (root / "memory" / "2024-06-01.md").unlink()
    text = MEMORY_MD.replace("Uses fish shell.", "Uses zsh.").split("### garden")[0]
    (root / "MEMORY.md").write_text(text + "\n# New\nKeeps bees.\n", encoding="utf-8")
    versions = {t: store.engine.table(t).version for t in store.engine.tiers_present()}
    report = sync_markdown(store.engine, root, "jo", dry_run=True)
    assert {t: store.engine.table(t).version for t in store.engine.tiers_present()} == versions
    assert report.receipts == [] and _by_file(store).keys() == before.keys()
    plan = {(step["action"], step["id"]) for step in report.plan}
    assert ("remove", before[("memory/2024-06-01.md", "2024-06-01")].id) in plan
    assert ("remove", before[("MEMORY.md", "Memory > Projects > garden")].id) in plan
    assert ("update", before[("MEMORY.md", "Memory > Preferences")].id) in plan
    assert ("add", None) in plan and len(report.plan) == 4
    assert (report.imported, report.replaced, report.removed) == (1, 1, 2)
    assert report.to_json()["dry_run"] is True and "dry run, nothing changed" in report.summary()


# --- the command line --------------------------------------------------------------------------------


@pytest.fixture
def hash_home(memdeck_home: Path) -> Path:
    (memdeck_home / "config.toml").write_text('[embedding]\nmodel = "hash-384"\n', encoding="utf-8")
    return memdeck_home


def test_cli_export_import_roundtrip(
    hash_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["add", "Kim waters the ferns on Sundays", "--tier", "semantic", "--principal", "kim"]) == 0
    assert main(["add", "Lee is on call this week", "--tier", "semantic", "--principal", "lee"]) == 0
    capsys.readouterr()
    out = tmp_path / "kim.jsonl"
    assert main(["export", str(out), "--principal", "kim"]) == 0
    assert "exported 1 memories" in capsys.readouterr().out
    assert main(["--store", str(tmp_path / "new"), "import", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["imported"] == 1 and summary["malformed"] == 0
    assert main(["export", "-", "--tier", "semantic", "--state", "active"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 3 and json.loads(lines[0])["format"] == "memdeck.export/1"


def test_cli_import_exit_codes_and_problem_lines(
    hash_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("nope\n{\n")
    assert main(["import", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0].startswith("memdeck: line 1: not valid JSON") and err[1].startswith("memdeck: line 2:")
    assert "nothing in" in err[-1] and len(err) == 3

    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text('{"text": "Max likes jazz", "principal": "max"}\n[]\n')
    assert main(["import", str(mixed)]) == 0
    captured = capsys.readouterr()
    assert "1 imported" in captured.out and "1 malformed" in captured.out
    assert captured.err.strip() == "memdeck: line 2: not a JSON object; skipped"

    assert main(["import", str(tmp_path / "missing.jsonl")]) == 2
    assert main(["import", str(tmp_path), "--format", "jsonl"]) == 2
    assert "folder" in capsys.readouterr().err
    garbage = tmp_path / "m.json"
    garbage.write_text("[{")
    assert main(["import", str(garbage), "--format", "mem0"]) == 2
    assert "not valid JSON" in capsys.readouterr().err


def test_cli_progress_is_plain_text_on_request(
    hash_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "many.jsonl"
    path.write_text(
        "".join(
            json.dumps({"text": f"Note {n} about the orchard", "principal": "nia"}) + "\n" for n in range(450)
        )
    )
    assert main(["import", str(path), "--progress"]) == 0
    err = capsys.readouterr().err
    assert "importing: 100%" in err and "\r" not in err
    assert main(["import", str(path)]) == 0
    assert capsys.readouterr().err == ""  # not a terminal and no --progress: silent


def test_text_progress_on_a_terminal_redraws_in_place() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Tty()
    bar = TextProgress("importing", "files", stream)
    bar(1, 4)
    bar(4, 4)
    bar.close()
    text = stream.getvalue()
    assert text.count("\r") == 2 and text.endswith("100%  4/4 files\n")


def test_cli_sync_of_an_emptied_folder_needs_yes_and_offers_a_dry_run(
    hash_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _memory_folder(tmp_path / "notes")
    assert main(["sync", str(root), "--principal", "jo"]) == 0
    _emptied(root)
    capsys.readouterr()
    assert main(["sync", str(root), "--principal", "jo"]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("memdeck: error: sync of ") and "--yes" in err[0]
    assert main(["sync", str(root), "--principal", "jo", "--dry-run"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert sum(line.startswith("would remove: ") for line in out) == 4 and "dry run" in out[-1]
    assert main(["list", "--principal", "jo", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 4
    assert main(["sync", str(root), "--principal", "jo", "--yes", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["removed"] == 4


@pytest.fixture
def fake_forget(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Stands in for memdeck.core.forget where only the calls matter: hides the rows, records the call."""
    from memdeck.core import filters as F

    calls: list[dict[str, Any]] = []

    def forget(store: Engine, ids: list[str], reason: str, scope: Scope) -> dict[str, Any]:
        for mem_id in ids:
            memory = store.get(mem_id, scope)
            store.table(memory.tier).delete(F.eq("id", mem_id))
        calls.append({"ids": list(ids), "reason": reason, "scope": scope})
        return {"receipt_id": f"r{len(calls)}"}

    monkeypatch.setattr(importer, "forget", forget)
    return calls


def test_changed_and_removed_chunks_call_forget_with_the_reason(
    open_store, tmp_path: Path, fake_forget: list[dict[str, Any]]
) -> None:
    root = _memory_folder(tmp_path / "notes")
    store = open_store(tmp_path / "s")
    import_path(store.engine, root, principal="jo")
    old = _by_file(store)[("MEMORY.md", "Memory > Preferences")]
    (root / "MEMORY.md").write_text(MEMORY_MD.replace("Uses fish shell.", "Uses zsh."), encoding="utf-8")
    report = import_path(store.engine, root, principal="jo")
    assert (report.imported, report.replaced, report.unchanged, report.receipts) == (1, 1, 3, ["r1"])
    assert fake_forget == [{"ids": [old.id], "reason": "sync: chunk changed", "scope": Scope.of("jo")}]
    assert "zsh" in _by_file(store)[("MEMORY.md", "Memory > Preferences")].text

    (root / "memory" / "2024-06-01.md").unlink()
    (root / "MEMORY.md").write_text(MEMORY_MD.replace("Uses fish shell.", "Uses zsh.").split("### garden")[0])
    report = sync_markdown(store.engine, root, "jo")
    assert report.removed == 2
    assert [c["reason"] for c in fake_forget[1:]] == ["sync: file deleted", "sync: chunk removed"]
    assert set(_by_file(store)) == {
        ("MEMORY.md", "Memory > Preferences"),
        ("MEMORY.md", "Memory > Projects > memdeck"),
    }
    assert sync_markdown(store.engine, root, "jo").removed == 0 and len(fake_forget) == 3


def test_an_interrupted_replacement_is_finished_by_the_next_run(
    open_store, tmp_path: Path, fake_forget: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _memory_folder(tmp_path / "notes")
    store = open_store(tmp_path / "s")
    import_path(store.engine, root, principal="jo")
    (root / "MEMORY.md").write_text(MEMORY_MD.replace("Uses fish shell.", "Uses zsh."), encoding="utf-8")

    def crash(*args: Any, **kwargs: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(importer, "remember_many", crash)
    with pytest.raises(KeyboardInterrupt):
        import_path(store.engine, root, principal="jo")
    assert store.count(Scope.of("jo")) == 3  # the old chunk is forgotten, the new one not yet written
    monkeypatch.undo()
    monkeypatch.setattr(importer, "forget", _recording(fake_forget))
    report = import_path(store.engine, root, principal="jo")
    assert (report.imported, report.unchanged) == (1, 3) and store.count(Scope.of("jo")) == 4
    assert "zsh" in _by_file(store)[("MEMORY.md", "Memory > Preferences")].text


def test_text_moved_between_files_in_one_run(
    open_store, tmp_path: Path, fake_forget: list[dict[str, Any]]
) -> None:
    # The same text leaves one file and appears in another: the new chunk must not be mistaken for the
    # old one (which is forgotten), nor reinforce it on the way out.
    root = tmp_path / "notes"
    root.mkdir()
    (root / "a.md").write_text("# Boiler\nServiced in March.\n", encoding="utf-8")
    store = open_store(tmp_path / "s")
    import_path(store.engine, root, principal="jo")
    (root / "a.md").write_text("# Boiler\nDue again in March.\n", encoding="utf-8")
    (root / "b.md").write_text("# Boiler\nServiced in March.\n", encoding="utf-8")
    report = import_path(store.engine, root, principal="jo")
    assert (report.imported, report.replaced) == (2, 1)
    texts = {k[0]: m.text for k, m in _by_file(store).items()}
    assert texts == {"a.md": "Boiler\nDue again in March.", "b.md": "Boiler\nServiced in March."}
    assert all(m.evidence_count == 1 for m in _by_file(store).values())


def _recording(calls: list[dict[str, Any]]) -> Any:
    from memdeck.core import filters as F

    def forget(store: Store, ids: list[str], reason: str, scope: Scope) -> dict[str, Any]:
        for mem_id in ids:
            store.engine.table(store.get(mem_id, scope).tier).delete(F.eq("id", mem_id))
        calls.append({"ids": list(ids), "reason": reason, "scope": scope})
        return {"receipt_id": "r"}

    return forget


@pytest.mark.parametrize("hostile", ["x' OR '1'='1", "bob' OR principal != '", "%"])
def test_hostile_principal_exports_nothing(open_store, tmp_path: Path, hostile: str) -> None:
    store = open_store(tmp_path / "a")
    _populate(store)
    store = open_store(tmp_path / "a")
    assert list(iter_export(store.engine, Scope.of(hostile))) == []


def test_expires_at_survives_export_then_import(hash_home: Path, tmp_path: Path) -> None:
    """A memory that expires in 7 days still expires in 7 days in the store it is imported into."""
    import subprocess
    import sys
    from datetime import UTC, datetime, timedelta

    memdeck = str(Path(sys.executable).with_name("memdeck"))

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([memdeck, *args], capture_output=True, text=True, timeout=120, check=False)

    a, b, out = tmp_path / "a", tmp_path / "b", tmp_path / "out.jsonl"
    for tier in ("semantic", "episodic", "procedural"):
        r = run(
            "--store",
            str(a),
            "add",
            f"the {tier} note about the blue door",
            "--tier",
            tier,
            "--principal",
            "kim",
            "--expires-in",
            "7d",
            "--json",
        )
        assert r.returncode == 0, r.stderr
    r = run("--store", str(a), "add", "kim likes ferns", "--tier", "semantic", "--principal", "kim")
    assert r.returncode == 0, r.stderr
    assert run("--store", str(a), "export", str(out)).returncode == 0
    hand = tmp_path / "hand.jsonl"
    hand.write_text(
        json.dumps(
            {
                "text": "a hand-written note for a week",
                "principal": "kim",
                "expires_at": "2031-01-02T03:04:05Z",
            }
        )
        + "\n"
    )
    for src in (out, hand):
        r = run("--store", str(b), "import", str(src))
        assert r.returncode == 0, r.stderr
    r = run("--store", str(b), "list", "--principal", "kim", "--json", "--limit", "50")
    assert r.returncode == 0, r.stderr
    listed = json.loads(r.stdout)
    rows = listed if isinstance(listed, list) else listed["memories"]
    expiry = {m["text"]: m.get("expires_at") for m in rows}
    soon = datetime.now(UTC) + timedelta(days=7)
    for tier in ("semantic", "episodic", "procedural"):
        when = expiry[f"the {tier} note about the blue door"]
        assert when is not None, f"{tier}: expires_at was dropped"
        assert abs(datetime.fromisoformat(when.replace("Z", "+00:00")) - soon) < timedelta(minutes=10)
    assert expiry["kim likes ferns"] is None
    assert expiry["a hand-written note for a week"] == "2031-01-02T03:04:05Z"
