"""Reads on a local store skip Lance's version listing while the table's ``_versions`` directory is as it
was when the handle was last found latest (``storage.tables.latest_dataset``), and still see every commit:
this process's and another store handle's (what another process does on disk)."""

from __future__ import annotations

import os
import time
from typing import Any

import pytest

from memdeck.core import Scope
from memdeck.core.storage import tables
from memdeck.core.storage.tables import SETTLED_NS, HeldDataset, latest_dataset, table_uri, versions_stamp


def _settle(store: Any, tier: str) -> None:
    """Wait until the tier's ``_versions`` directory last changed longer than ``SETTLED_NS`` ago."""
    uri = table_uri(store.engine, tier)
    st = os.stat(os.path.join(uri, "_versions"))
    wait = (max(st.st_mtime_ns, st.st_ctime_ns) + SETTLED_NS - time.time_ns()) / 1e9
    if wait > 0:
        time.sleep(wait + 0.05)
    assert versions_stamp(uri) is not None


def test_a_settled_table_is_read_from_the_held_handle(open_store):
    store = open_store()
    store.remember("the spare key is under the blue pot", principal="ana")
    held: dict[str, HeldDataset] = {}
    first = latest_dataset(store.engine, "semantic", held)
    _settle(store, "semantic")
    trusted = latest_dataset(store.engine, "semantic", held)  # the stamp is recorded now
    assert held["semantic"].stamp is not None
    assert latest_dataset(store.engine, "semantic", held) is trusted
    assert int(trusted.version) == int(first.version)


def test_a_fresh_change_is_never_trusted(open_store):
    store = open_store()
    store.remember("the boiler was serviced in May", principal="ana")
    assert versions_stamp(table_uri(store.engine, "semantic")) is None  # changed a moment ago


def test_a_commit_by_another_handle_after_a_trusted_read_is_seen(open_store, tmp_path):
    first = open_store(tmp_path / "store")
    first.remember("the bins go out on Tuesday", principal="ana")
    first.close()
    # Opened on tables that exist, the reader reads them through pylance (``LocalTable``); a handle that
    # created a table reads it through LanceDB's, refreshed every ``read_consistency`` seconds instead.
    reader = open_store(tmp_path / "store")
    assert len(reader.list(Scope.of("ana"))) == 1
    _settle(reader, "semantic")
    assert len(reader.list(Scope.of("ana"))) == 1  # read on a settled directory: the stamp is kept
    writer = open_store(tmp_path / "store")  # another handle on the same folder, as another process
    writer.remember("the recycling goes out on Friday", principal="ana")
    texts = sorted(m.text for m in reader.list(Scope.of("ana")))
    assert texts == ["the bins go out on Tuesday", "the recycling goes out on Friday"]
    found = reader.recall("recycling", principal="ana", k=5, record_access=False, trace=False)
    assert [s.memory.text for s in found.items][:1] == ["the recycling goes out on Friday"]


def test_a_stamp_that_moved_asks_lance_again(open_store, monkeypatch: pytest.MonkeyPatch):
    store = open_store()
    store.remember("the piano tuner comes in June", principal="ana")
    held: dict[str, HeldDataset] = {}
    latest_dataset(store.engine, "semantic", held)
    _settle(store, "semantic")
    latest_dataset(store.engine, "semantic", held)
    kept = held["semantic"]
    assert kept.stamp is not None
    asked: list[int] = []

    class Counting:
        def __init__(self, ds: Any) -> None:
            self.ds = ds

        @property
        def latest_version(self) -> int:
            asked.append(1)
            return int(self.ds.latest_version)

        def __getattr__(self, name: str) -> Any:
            return getattr(self.ds, name)

    held["semantic"] = HeldDataset(Counting(kept.ds), kept.stamp)
    latest_dataset(store.engine, "semantic", held)
    assert asked == []  # the directory is as it was: no listing
    moved = (kept.stamp[0], kept.stamp[1], kept.stamp[2] - 1, kept.stamp[3])
    held["semantic"] = HeldDataset(Counting(kept.ds), moved)
    latest_dataset(store.engine, "semantic", held)
    assert asked == [1]
    monkeypatch.setattr(tables, "SETTLED_NS", 10**18)  # nothing counts as settled: always list
    held["semantic"] = HeldDataset(Counting(kept.ds), kept.stamp)
    latest_dataset(store.engine, "semantic", held)
    assert asked == [1, 1]
