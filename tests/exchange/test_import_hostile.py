"""Issue #14 item 8: one bad record is reported with its line and skipped; the rest of the batch is written."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from memdeck.core.exchange import import_path
from memdeck.core.filters import Scope
from memdeck.core.store import Store


def _texts(store: Store) -> set[str]:
    return {m.text for m in store.list(Scope.of("alice"), limit=1000)}


def _good(n: int) -> str:
    return json.dumps({"text": f"valid record number {n}", "principal": "alice"})


BAD_LINES = {
    "deep object": '{"text": "deep", "principal": "alice", "meta": '
    + '{"a":' * 5000
    + "1"
    + "}" * 5000
    + "}",
    "deep list": '{"text": "deep", "principal": "alice", "meta": {"a": ' + "[" * 100000 + "]" * 100000 + "}}",
    "time": json.dumps({"text": "t", "principal": "alice", "created_at": 1e20}),
    "access count": json.dumps(
        {"id": "m1", "tier": "semantic", "text": "ac", "principal": "alice", "access_count": 2**70}
    ),
    "version": json.dumps(
        {"id": "m2", "tier": "procedural", "text": "v", "principal": "alice", "version": 2**64, "name": "n"}
    ),
    "evidence": json.dumps(
        {"id": "m3", "tier": "semantic", "text": "e", "principal": "alice", "evidence_count": 2**63}
    ),
}


@pytest.mark.parametrize("name", sorted(BAD_LINES))
def test_a_bad_jsonl_record_is_reported_and_skipped(store: Store, tmp_path: Path, name: str) -> None:
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join([_good(1), BAD_LINES[name], _good(2)]) + "\n")
    report = import_path(store.engine, path)
    assert [p["where"] for p in report.problems] == ["line 2"], report.problems
    assert report.imported == 2
    assert {"valid record number 1", "valid record number 2"} <= _texts(store)


def test_a_million_character_text_does_not_abort_the_batch(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    big = json.dumps({"text": "x " * 500_000, "principal": "alice"})
    path.write_text("\n".join([_good(1), big, _good(2)]) + "\n")
    report = import_path(store.engine, path)
    assert {"valid record number 1", "valid record number 2"} <= _texts(store)
    assert report.imported + report.malformed == 3


def test_a_mem0_file_nested_too_deeply_is_one_clear_error(store: Store, tmp_path: Path) -> None:
    from memdeck.core.errors import MemdeckError

    path = tmp_path / "mem0.json"
    path.write_text("[" * 100000 + "]" * 100000)
    with pytest.raises(MemdeckError, match="nested too deeply"):
        import_path(store.engine, path, principal="alice", fmt="mem0")


def test_a_nul_in_one_markdown_section_skips_that_section_only(store: Store, tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "MEMORY.md").write_text(
        "# One\nfirst section survives\n\n# Two\nbad \x00 section\n\n# Three\nthird one too\n"
    )
    report = import_path(store.engine, folder, principal="alice")
    assert len(report.problems) == 1 and report.problems[0]["where"].startswith("MEMORY.md lines 4-")
    assert "NUL" in report.problems[0]["problem"]
    texts = " ".join(_texts(store))
    assert "first section survives" in texts and "third one too" in texts


def test_a_fifo_named_md_is_skipped_not_waited_on(store: Store, tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.md").write_text("# A\nreal notes here\n")
    os.mkfifo(folder / "b.md")
    done: list[object] = []
    worker = threading.Thread(
        target=lambda: done.append(import_path(store.engine, folder, principal="alice")), daemon=True
    )
    worker.start()
    worker.join(60)
    if worker.is_alive():  # unblock the hung reader so the test process can end
        fd = os.open(folder / "b.md", os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
        pytest.fail("import waited on a FIFO")
    (report,) = done
    assert [p["where"] for p in report.problems] == ["b.md"]  # type: ignore[attr-defined]
    assert "not a regular file" in report.problems[0]["problem"]  # type: ignore[attr-defined]
    assert "real notes here" in " ".join(_texts(store))


def test_a_symlink_to_a_file_outside_the_folder_is_skipped(store: Store, tmp_path: Path) -> None:
    secret = tmp_path / "outside.md"
    secret.write_text("# Secret\nssh key passphrase hunter2\n")
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.md").write_text("# A\nreal notes here\n")
    (folder / "b.md").write_text("# B\ninside target\n")
    (folder / "leak.md").symlink_to(secret)
    (folder / "alias.md").symlink_to(folder / "b.md")  # a link within the folder still reads
    report = import_path(store.engine, folder, principal="alice")
    assert [p["where"] for p in report.problems] == ["leak.md"]
    assert "outside the folder" in report.problems[0]["problem"]
    texts = " ".join(_texts(store))
    assert "hunter2" not in texts and "real notes here" in texts and "inside target" in texts
