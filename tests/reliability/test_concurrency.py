"""Concurrency: four writers adding and forgetting at once while a reader recalls in a loop.

Checked: no write is lost (each writer's surviving ids are exactly what it added minus what it forgot), the
reader never fails (not even on a table version a purge cleaned up), and the reader sees a new memory once
its refresh interval (``Store.open(read_consistency=seconds)``) has passed, without calling ``refresh()``.

The same worker functions run as threads (fast, each with its own Store and so its own LanceDB handles and
lock descriptor) and as separate processes (slow marker). This file is also the workers' entry point:
``python tests/reliability/test_concurrency.py writer|reader ARGS``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any

import pytest

from memdeck.core import Scope
from memdeck.core.embed import HashEmbedder
from memdeck.core.store import Store

INTERVAL = 0.5  # the reader's read_consistency, seconds
READ_DEADLINE = 240.0  # a reader gives up on its loop after this long, whatever happens


def forget_fn() -> Any:
    from memdeck.core.forget import forget

    return forget


# --- workers ----------------------------------------------------------------------------------------


def writer(store_path: str, principal: str, rounds: int, out: str) -> None:
    """Add three facts and an episode per round; every other round, forget one of its own memories."""
    store = Store.open(store_path, embedder=HashEmbedder())
    forget = forget_fn()
    added: list[str] = []
    forgotten: list[str] = []
    try:
        for r in range(rounds):
            items = [
                {
                    "text": f"{principal} fact {r}-{i} about the release train",
                    "tier": "semantic",
                    "principal": principal,
                }
                for i in range(3)
            ]
            items.append({"text": f"{principal} episode {r}", "tier": "episodic", "principal": principal})
            added += [w.memory.id for w in store.remember_many(items) if w.memory is not None]
            if r % 2 == 1:
                victim = added[len(forgotten) * 2]
                forget(store.engine, [victim], reason="concurrency test", scope=Scope.of(principal))
                forgotten.append(victim)
    finally:
        store.close()
        Path(out).write_text(json.dumps({"added": added, "forgotten": forgotten}))


def reader(store_path: str, principals: list[str], stop_file: str, probe_file: str, out: str) -> None:
    """Recall in a loop until told to stop; then check it sees the probe memory within its interval."""
    store = Store.open(store_path, embedder=HashEmbedder(), read_consistency=INTERVAL)
    errors: list[str] = []
    loops = 0
    deadline = time.monotonic() + READ_DEADLINE
    while not os.path.exists(stop_file) and time.monotonic() < deadline:
        for p in principals:
            try:
                result = store.recall("release train fact", principal=p, k=5)
                assert all(i.memory.principal == p for i in result.items), "another principal's memory"
                store.count(Scope.of(p))
                store.list(Scope.of(p), limit=20)
            except Exception:  # noqa: BLE001 - every failure is the finding
                errors.append(traceback.format_exc(limit=3)[-1500:])
        loops += 1
    seen_probe = None
    waited = time.monotonic() + 120
    while not os.path.exists(probe_file) and time.monotonic() < waited:
        time.sleep(0.02)
    if os.path.exists(probe_file):
        probe_id = Path(probe_file).read_text().strip()
        time.sleep(INTERVAL * 1.5)  # the interval has passed: the next read must check for new versions
        try:
            seen_probe = store.get(probe_id, Scope.of("probe")).id == probe_id
        except Exception as exc:  # noqa: BLE001
            seen_probe = False
            errors.append(f"probe not visible after the interval: {exc}")
    store.close()
    Path(out).write_text(json.dumps({"errors": errors, "loops": loops, "seen_probe": seen_probe}))


# --- the scenario -----------------------------------------------------------------------------------


def run_scenario(tmp_path: Path, *, processes: bool, rounds: int) -> None:
    store_path = tmp_path / "store"
    seed = Store.open(store_path, embedder=HashEmbedder())  # create the tables before the race begins
    seed.remember("seed fact about the release train", tier="semantic", principal="seed")
    seed.remember("seed episode", tier="episodic", principal="seed")
    principals = [f"w{i}" for i in range(4)]
    stop, probe = tmp_path / "stop", tmp_path / "probe"
    outs = {p: tmp_path / f"{p}.json" for p in principals}
    reader_out = tmp_path / "reader.json"

    if processes:
        env = {**os.environ}
        script = str(Path(__file__).resolve())
        read = subprocess.Popen(
            [
                sys.executable,
                script,
                "reader",
                str(store_path),
                ",".join(principals),
                str(stop),
                str(probe),
                str(reader_out),
            ],
            env=env,
            stderr=subprocess.PIPE,
        )
        writers = [
            subprocess.Popen(
                [sys.executable, script, "writer", str(store_path), p, str(rounds), str(outs[p])],
                env=env,
                stderr=subprocess.PIPE,
            )
            for p in principals
        ]
        for w in writers:
            _, err = w.communicate(timeout=600)
            assert w.returncode == 0, err.decode()[-3000:]
    else:
        failures: list[BaseException] = []

        def guarded(fn: Any, *args: Any) -> None:
            try:
                fn(*args)
            except BaseException as exc:  # noqa: BLE001 - a Rust panic is a BaseException
                failures.append(exc)
                traceback.print_exc()

        read_thread = threading.Thread(
            target=guarded, args=(reader, str(store_path), principals, str(stop), str(probe), str(reader_out))
        )
        read_thread.start()
        threads = [
            threading.Thread(target=guarded, args=(writer, str(store_path), p, rounds, str(outs[p])))
            for p in principals
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=600)
        assert not failures, failures

    stop.write_text("stop")
    probe_mem = seed.remember("probe written after the writers", tier="semantic", principal="probe").memory
    probe.write_text(probe_mem.id)
    if processes:
        _, err = read.communicate(timeout=300)
        assert read.returncode == 0, err.decode()[-3000:]
    else:
        read_thread.join(timeout=300)
        assert not failures, failures
    seed.close()

    result = json.loads(reader_out.read_text())
    assert result["errors"] == [], "\n---\n".join(result["errors"][:3])
    assert result["loops"] >= 1
    assert result["seen_probe"] is True

    final = Store.open(store_path, embedder=HashEmbedder(), read_consistency=0)
    forgets = 0
    for p in principals:
        log = json.loads(outs[p].read_text())
        assert len(log["added"]) == rounds * 4
        expected = set(log["added"]) - set(log["forgotten"])
        present = {m.id for m in final.list(Scope.of(p), limit=10_000)}
        assert present == expected, (
            f"{p}: lost {sorted(expected - present)[:5]}, kept {sorted(present - expected)[:5]}"
        )
        assert final.count(Scope.of(p)) == len(expected)
        forgets += len(log["forgotten"])
    assert forgets == 4 * (rounds // 2)
    final.close()


def test_four_writer_threads_and_a_reader(tmp_path):
    run_scenario(tmp_path, processes=False, rounds=3)


def test_a_writer_with_handles_from_before_a_purge_catches_up(tmp_path):
    """Two stores on one directory, as two processes would hold it, neither refreshing on its own: after one
    purges, the other's next write must not read the table version the purge removed."""
    from memdeck.core.forget import forget

    writer_store = Store.open(tmp_path / "store", embedder=HashEmbedder(), read_consistency=3600)
    purger = Store.open(tmp_path / "store", embedder=HashEmbedder(), read_consistency=3600)
    ids = [
        w.memory.id
        for w in writer_store.remember_many(
            [{"text": f"fact {i}", "tier": "semantic", "principal": "u"} for i in range(5)]
        )
    ]
    purger.engine.refresh()
    forget(purger.engine, [ids[0]], reason="test", scope=Scope.of("u"))
    results = writer_store.remember_many(
        [
            {"text": "fact 1", "tier": "semantic", "principal": "u"},
            {"text": "a new fact", "tier": "semantic", "principal": "u"},
        ]
    )
    assert [r.action for r in results] == ["reinforced", "added"]
    assert {m.id for m in writer_store.list(Scope.of("u"), limit=100)} == (set(ids) - {ids[0]}) | {
        results[1].memory.id
    }
    writer_store.close()
    purger.close()


@pytest.mark.slow
def test_four_writer_processes_and_a_reader_process(tmp_path):
    run_scenario(tmp_path, processes=True, rounds=4)


if __name__ == "__main__":
    role, *argv = sys.argv[1:]
    if role == "writer":
        writer(argv[0], argv[1], int(argv[2]), argv[3])
    elif role == "reader":
        reader(argv[0], argv[1].split(","), argv[2], argv[3], argv[4])
    else:
        raise SystemExit(f"unknown role {role!r}")
