"""Corruption: a flipped byte in a Lance data file is found by `memdeck doctor`, with the affected ids.

Lance keeps no checksums, so a flipped byte either changes a value (found by re-hashing each row's text
against content_sha256) or breaks the page so the read fails (found by scanning every fragment, then
narrowed down to the file, the columns and the ids). Either way the rest of the store stays usable.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from lance.file import LanceFileReader

from memdeck.cli import main
from memdeck.core import Scope
from memdeck.core.embed import HashEmbedder
from memdeck.core.maintenance.doctor import diagnose
from memdeck.core.store import Store

MARKER = "QZXWVK"  # an ASCII run found nowhere else, so the flip lands in one known row's text


def cli(args: list[str], capfd: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """The command line in-process (a subprocess costs seconds of imports); capfd sees fd-level stderr too."""
    capfd.readouterr()
    code = main(args)
    out, err = capfd.readouterr()
    return code, out, err


@pytest.fixture
def home(memdeck_home: Path) -> Path:
    (memdeck_home / "config.toml").write_text('[embedding]\nmodel = "hash-384"\n')
    return memdeck_home


def build(path: Path) -> tuple[Store, dict[str, list[str]]]:
    """Three semantic fragments (one commit each), an episodic table, and an edit (the history table)."""
    store = Store.open(path, embedder=HashEmbedder())
    ids: dict[str, list[str]] = {}
    for batch in range(3):
        items = [
            {
                "text": f"batch {batch} note {i} on the quarterly budget review",
                "tier": "semantic",
                "principal": "alice",
            }
            for i in range(12)
        ]
        if batch == 1:
            items[5]["text"] = f"the {MARKER} vendor contract renews in March"
        written = store.remember_many(items)
        ids[f"semantic{batch}"] = [r.memory.id for r in written]  # type: ignore[union-attr]
    ids["episodic"] = [
        store.remember(
            f"bob met the auditors, day {i}", tier="episodic", principal="bob", closed=False
        ).memory.id
        for i in range(3)
    ]  # type: ignore[union-attr]
    store.edit(ids["episodic"][0], "bob met the external auditors on Monday")
    return store, ids


def data_file_holding(store_path: Path, table: str, needle: str | None = None) -> Path:
    files = sorted((store_path / "lance" / f"{table}.lance" / "data").glob("*.lance"), key=os.path.getmtime)
    if needle is None:
        return files[1]
    for f in files:
        if needle.encode() in f.read_bytes():
            return f
    return files[1]


def text_page(path: Path) -> tuple[int, int]:
    """(position, size) of the last buffer of the text column's first page: its offsets and values."""
    md = LanceFileReader(str(path)).metadata()
    names = [f.name for f in md.schema]
    buf = md.columns[names.index("text")].pages[0].buffers[-1]
    return buf.position, buf.size


def flip(path: Path, pos: int, mask: int) -> None:
    data = bytearray(path.read_bytes())
    data[pos] ^= mask
    path.write_bytes(bytes(data))


def test_healthy_store_passes(tmp_path, home, capfd):
    store, _ids = build(tmp_path / "s")
    report = diagnose(store.engine)
    assert report.ok, report.lines()
    by_name = {t.name: t for t in report.tables}
    assert by_name["semantic"].rows == 36 and by_name["semantic"].hashed == 36
    assert by_name["semantic"].fragments == 3
    assert by_name["history"].rows == 1 and by_name["history"].hashed == 1
    store.close()
    code, out, err = cli(["doctor", "--json", "--store", str(tmp_path / "s")], capfd)
    assert code == 0, err
    assert json.loads(out)["ok"] is True


def test_flipped_byte_in_a_text_value_is_found_with_its_id(tmp_path, home, capfd):
    path = tmp_path / "s"
    store, ids = build(path)
    victim = ids["semantic1"][5]
    store.close()
    f = data_file_holding(path, "semantic", MARKER)
    start, size = text_page(f)
    raw = f.read_bytes()
    at = raw.find(MARKER.encode(), start, start + size)
    if at >= 0:
        flip(f, at + 2, 0x01)  # 'X' -> 'Y': still valid UTF-8, so the read succeeds with a changed value
    else:  # a future encoding compresses the page: flip inside it and accept either kind of finding
        flip(f, start + size // 2, 0x01)

    reopened = Store.open(path, embedder=HashEmbedder())
    report = diagnose(reopened.engine)
    assert not report.ok
    if at >= 0:
        [problem] = report.problems
        assert problem.check == "row_hash" and problem.table == "semantic"
        assert problem.ids == [victim]
        # The changed value is what a read now returns: doctor is the only thing that notices.
        assert MARKER not in reopened.get(victim).text
    else:
        assert victim in report.affected_ids
    # Everything else still reads and recalls.
    assert reopened.get(ids["semantic2"][0]).text.startswith("batch 2")
    hits = reopened.recall("auditors", principal="bob", record_access=False)
    assert hits.items and {i.memory.principal for i in hits.items} == {"bob"}
    assert reopened.count(Scope.of("alice")) == 36
    reopened.close()

    code, out, err = cli(["doctor", "--json", "--store", str(path)], capfd)
    assert code == 5
    body = json.loads(out)
    assert body["ok"] is False and victim in body["affected_ids"]
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err


def test_unreadable_page_names_the_file_and_the_ids(tmp_path, home, capfd):
    path = tmp_path / "s"
    store, ids = build(path)
    store.close()
    f = data_file_holding(path, "semantic", MARKER)
    start, _ = text_page(f)
    flip(f, start + 2, 0xFF)  # an offset of the string page: the page no longer decodes

    reopened = Store.open(path, embedder=HashEmbedder())
    report = diagnose(reopened.engine, quiet=True)
    [problem] = report.problems
    assert problem.check == "unreadable_data" and problem.table == "semantic"
    assert problem.files == [str(f)]
    assert "text" in problem.columns and "id" not in problem.columns
    # The rows of that fragment are named (affected or still readable); no other fragment's are.
    assert set(problem.ids) | set(problem.readable_ids) == set(ids["semantic1"])
    assert set(problem.ids) & set(ids["semantic0"] + ids["semantic2"]) == set()
    assert ids["semantic1"][5] in problem.ids
    # The other tables are untouched and usable.
    assert reopened.recall("auditors", principal="bob", record_access=False).items
    assert {t.name: t.ok for t in report.tables} == {
        "episodic": True,
        "semantic": False,
        "history": True,
        "entities": True,
        "relations": True,
    }
    reopened.close()

    code, out, err = cli(["doctor", "--store", str(path)], capfd)
    assert code == 5
    assert str(f) in out and ids["semantic1"][5] in out
    # The reader's panic text stays out of the output: one line on stderr.
    assert "Traceback" not in err and "panicked" not in err and len(err.strip().splitlines()) == 1, err


def test_a_file_that_no_longer_opens_is_named(tmp_path):
    path = tmp_path / "s"
    store, ids = build(path)
    store.close()
    f = data_file_holding(path, "semantic", MARKER)
    flip(f, f.stat().st_size - 2, 0xFF)  # the footer magic: nothing in this file opens
    reopened = Store.open(path, embedder=HashEmbedder())
    report = diagnose(reopened.engine, quiet=True)
    [problem] = report.problems
    assert problem.check == "unreadable_data" and problem.files == [str(f)]
    assert "ids cannot be read" in problem.message
    assert reopened.get(ids["episodic"][1]).principal == "bob"
    reopened.close()


def test_doctor_never_creates_tables_and_refuses_bad_arguments(tmp_path, home, capfd):
    path = tmp_path / "s"
    store = Store.open(path, embedder=HashEmbedder())
    store.remember("only a fact", tier="semantic", principal="p")
    store.close()
    code, out, err = cli(
        ["doctor", "--tier", "procedural", "--tier", "semantic", "--json", "--store", str(path)], capfd
    )
    assert code == 0, err
    assert [t["name"] for t in json.loads(out)["tables"]] == ["semantic"]
    assert not (path / "lance" / "procedural.lance").exists()
    code, _, err = cli(["doctor", "--tier", "bogus", "--store", str(path)], capfd)
    assert code != 0 and "unknown table" in err and "Traceback" not in err
    code, _, err = cli(["doctor", "--store", str(tmp_path / "nothing")], capfd)
    assert code != 0 and "no memdeck store" in err and "Traceback" not in err


def test_an_unfinished_purge_is_reported(tmp_path):
    from memdeck.core.storage.locking import StoreLock

    path = tmp_path / "s"
    store, _ids = build(path)
    store.close()
    journal = path / "journal" / "purge-0123abcd.json"
    journal.parent.mkdir()
    journal.write_text("{}")
    with StoreLock(path / "store.lock").exclusive():  # another process is busy: the open cannot recover
        reopened = Store.open(path, embedder=HashEmbedder())
    report = diagnose(reopened.engine)
    [problem] = report.problems
    assert problem.check == "pending_purge" and problem.files == [str(journal)]
    reopened.close()


def test_another_model_than_the_stores_is_named_by_doctor_and_refused_by_recall(
    memdeck_home: Path, capfd
) -> None:
    """A store built with one model and opened with another: recall refuses with one line instead of an
    internal error, and doctor names both models; a store file that records other dimensions than the
    tables' vectors is named too."""
    (memdeck_home / "config.toml").write_text('[embedding]\nmodel = "hash-384"\n', encoding="utf-8")
    code, _, err = cli(["add", "tea at four", "--tier", "semantic", "--principal", "ann"], capfd)
    assert code == 0, err
    code, out, _ = cli(["doctor"], capfd)
    assert code == 0 and "no problems found" in out
    (memdeck_home / "config.toml").write_text('[embedding]\nmodel = "hash-256"\n', encoding="utf-8")
    code, out, err = cli(["recall", "tea", "--principal", "ann"], capfd)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "gives 256 dimensions but this store was built with 384 (hash-384)" in err
    code, out, _ = cli(["doctor"], capfd)
    assert code != 0 and "made with 'hash-384' (384 dimensions) but embedding.model is 'hash-256'" in out
    (memdeck_home / "config.toml").write_text('[embedding]\nmodel = "hash-384"\n', encoding="utf-8")
    meta = memdeck_home / "store" / "memdeck.json"
    meta.write_text(json.dumps({**json.loads(meta.read_text()), "dim": 256}), encoding="utf-8")
    code, out, _ = cli(["doctor"], capfd)
    assert code != 0 and "its vectors have 384 dimensions but the store records 256" in out
