"""A damaged store file never leaves a forget half done: truncate or delete each kind of file in turn, then
forget through the command line. Either the memory is gone and a receipt was signed (verified, or naming the
check that failed), or nothing was deleted and one line says what to do; never a raw traceback, never a purge
left pending."""

from __future__ import annotations

from pathlib import Path

import pytest

from memdeck.cli import main as cli_main
from memdeck.core.filters import Scope
from memdeck.core.forget import pending


@pytest.fixture(autouse=True)
def hash_model(memdeck_home: Path) -> None:
    (memdeck_home / "config.toml").write_text('[embedding]\nmodel = "hash-384"\n')


def _files(root: Path) -> dict[str, Path]:
    """One file of each kind a used store holds."""
    lance = root / "lance" / "episodic.lance"
    kinds = {
        "trace log": root / "analytics.duckdb",
        "vault file": next(root.glob("vault/*/vault.bin")),
        "vault key": next(root.glob("vault/*/key")),
        "receipt key": root / "keys" / "receipt_ed25519.key",
        "receipt salt": root / "keys" / "receipt_salt",
        "journal key": root / "keys" / "journal.key",
        "receipt HEAD": root / "receipts" / "HEAD",
        "tombstones": root / "tombstones" / "tombstones.jsonl",
        "store config": root / "memdeck.json",
        "lance manifest": max(lance.glob("_versions/*.manifest")),
    }
    return {k: v for k, v in kinds.items() if v.exists()}


def _used_store(open_store, path: Path):
    store = open_store(path)
    store.remember(
        "alice's mail is fern.okafor@example.com for the Quenwood trip", tier="episodic", principal="alice"
    )
    keep = store.remember("alice waters the ferns on Sundays", tier="episodic", principal="alice").memory
    gone = store.remember(
        "alice parks at the Brackwater garage, level 3", tier="episodic", principal="alice"
    ).memory
    store.recall("ferns", principal="alice")
    first = store.remember("an earlier note to forget", tier="episodic", principal="alice").memory
    from memdeck.core.forget import forget

    forget(store.engine, [first.id], "user request")  # receipts, keys, tombstones exist
    store.close()
    return keep, gone


KINDS = [
    "trace log",
    "vault file",
    "vault key",
    "receipt key",
    "receipt salt",
    "journal key",
    "receipt HEAD",
    "tombstones",
    "store config",
    "lance manifest",
]


@pytest.mark.parametrize("how", ["truncate", "delete"])
@pytest.mark.parametrize("kind", KINDS)
def test_a_damaged_file_never_leaves_a_forget_half_done(open_store, tmp_path, capsys, kind, how):
    root = tmp_path / "s"
    _, gone = _used_store(open_store, root)
    path = _files(root)[kind]
    receipts_before = len(list((root / "receipts").glob("*.json")))
    if how == "truncate":
        path.write_bytes(path.read_bytes()[: max(1, path.stat().st_size // 3)])
    else:
        path.unlink()
    capsys.readouterr()
    code = cli_main(["--store", str(root), "forget", gone.id, "--reason", "user request"])
    out = capsys.readouterr()
    assert "Traceback" not in out.err and "internal error" not in out.err, out.err
    receipts_after = len(list((root / "receipts").glob("*.json"))) if (root / "receipts").is_dir() else 0
    if code in (0, 5):  # done: a receipt, verified or naming what failed
        assert receipts_after == receipts_before + 1 or (how == "delete" and kind == "receipt HEAD"), out
        if code == 5:
            assert "check(s.engine) failed" in out.err
    else:  # refused: one line, and the memory is still there
        assert len(out.err.strip().splitlines()) == 1, out.err
        assert receipts_after == receipts_before
        try:
            store = open_store(root)
        except Exception:  # noqa: BLE001 - a store that no longer opens deleted nothing either
            return
        assert gone.id in {m.id for m in store.list(Scope.of("alice"), limit=50)}, out.err
        assert not pending(store.engine)


@pytest.mark.parametrize(
    "kind",
    ["trace log", "vault file", "vault key", "receipt key", "receipt salt", "journal key", "lance manifest"],
)
def test_doctor_names_each_damaged_file_and_what_to_do(open_store, tmp_path, capsys, kind):
    root = tmp_path / "s"
    _used_store(open_store, root)
    assert cli_main(["--store", str(root), "doctor"]) == 0
    path = _files(root)[kind]
    path.write_bytes(path.read_bytes()[: max(1, path.stat().st_size // 3)])
    capsys.readouterr()
    code = cli_main(["--store", str(root), "doctor"])
    out = capsys.readouterr()
    assert code != 0, out.out
    assert "no problems found" not in out.out
    text = out.out + out.err
    assert "Traceback" not in text
    assert path.name in text or str(path.parent) in text, text


def test_a_trace_log_busy_in_another_process_is_not_damage(open_store, tmp_path, capsys):
    """A reader elsewhere holding the trace log is no reason to refuse a forget: the scrub waits for it."""
    import subprocess
    import sys

    from memdeck.core.forget import preflight

    root = tmp_path / "s"
    _, gone = _used_store(open_store, root)
    lock = root / "analytics.duckdb.lock"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys, time\n"
            f"fd = os.open({str(lock)!r}, os.O_RDWR | os.O_CREAT, 0o600)\n"
            "fcntl.flock(fd, fcntl.LOCK_EX)\nprint('held', flush=True)\nsys.stdin.readline()\n",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        store = open_store(root)
        assert preflight.trace_log(store.engine) is None  # held past the probe's wait: busy, not damaged
        store.close()
        assert holder.stdin is not None
        holder.stdin.write("release\n")
        holder.stdin.flush()
        capsys.readouterr()
        code = cli_main(["--store", str(root), "forget", gone.id, "--reason", "user request"])
        out = capsys.readouterr()
        assert code == 0, out.err
    finally:
        holder.wait(timeout=30)
    store = open_store(root)
    assert gone.id not in {m.id for m in store.list(Scope.of("alice"), limit=50)}
