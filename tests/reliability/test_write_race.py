"""Issue #14 item 15: a write whose table version a purge in another process removed is committed again
after a refresh, or fails with one clear line; never a raw ``lance error: Not found``."""

from __future__ import annotations

from pathlib import Path

import pytest

from memdeck.cli import main
from memdeck.core.errors import MemdeckError
from memdeck.core.filters import Scope
from memdeck.core.store import Store

RAW = "lance error: Not found: /s/lance/episodic.lance/_versions/3.manifest, /home/runner/lance/src/io.rs:42"


def _fail_adds(store: Store, tier: str, times: int, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    tbl = store.engine.table(tier)
    real = tbl.add
    calls: list[int] = []

    def add(*args, **kwargs):
        calls.append(1)
        if len(calls) <= times:
            raise RuntimeError(RAW)  # what Lance raises when a purge removed the handle's version
        return real(*args, **kwargs)

    monkeypatch.setattr(tbl, "add", add)
    return calls


def test_a_write_that_meets_a_removed_version_is_committed_after_a_refresh(store: Store, monkeypatch) -> None:
    refreshed: list[int] = []
    real_refresh = store.engine.refresh
    monkeypatch.setattr(store.engine, "refresh", lambda: (refreshed.append(1), real_refresh())[1])
    calls = _fail_adds(store, "episodic", 1, monkeypatch)
    m = store.remember("met the plumber on Tuesday", tier="episodic", principal="alice").memory
    assert len(calls) == 2 and refreshed == [1]
    assert [x.id for x in store.list(Scope.of("alice"))] == [m.id]


def test_twice_is_one_clear_retryable_error(store: Store, monkeypatch) -> None:
    _fail_adds(store, "episodic", 2, monkeypatch)
    with pytest.raises(MemdeckError, match=r"nothing was written \(try again\)") as info:
        store.remember("met the plumber on Tuesday", tier="episodic", principal="alice")
    assert "lance error" not in str(info.value)
    assert store.list(Scope.of("alice")) == []


def test_other_errors_are_not_retried(store: Store, monkeypatch) -> None:
    tbl = store.engine.table("episodic")
    calls: list[int] = []

    def add(*args, **kwargs):
        calls.append(1)
        raise RuntimeError("lance error: something else entirely")

    monkeypatch.setattr(tbl, "add", add)
    with pytest.raises(RuntimeError, match="something else"):
        store.remember("x y z", tier="episodic", principal="alice")
    assert calls == [1]


def test_the_cli_prints_one_line(memdeck_home: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    (memdeck_home / "config.toml").write_text('[embedding]\nmodel = "hash-384"\n')
    real_open = Store.open

    def open_failing(*args, **kwargs):
        s = real_open(*args, **kwargs)
        _fail_adds(s, "episodic", 2, monkeypatch)
        return s

    monkeypatch.setattr(Store, "open", open_failing)
    code = main(
        [
            "add",
            "met the plumber",
            "--tier",
            "episodic",
            "--principal",
            "alice",
            "--store",
            str(tmp_path / "s"),
        ]
    )
    _, err = capsys.readouterr()
    assert code != 0 and err.count("\n") == 1 and "try again" in err and "lance error" not in err
