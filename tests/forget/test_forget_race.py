"""Forgotten stays forgotten while others write and read: two writer processes, a reader process recalling
with traces on (and recording context packs in the injection ledger), and a process forgetting in a loop.

At the end every receipt verifies (signature, chain and outcome), the store's own verifier (every Lance
data and index file decoded, the trace log queried, every other file read raw) finds nothing of the
forgotten memories, and a raw byte scan of every file under the store directory finds none of their ids
(receipts and tombstones, which hold ids by design, aside) and none of their texts.

This file is the workers' entry point: ``python tests/forget/test_forget_race.py writer|reader|forgetter ARGS``.
"""

from __future__ import annotations

import json
import os
import random
import secrets
import subprocess
import sys
import time
import traceback
from pathlib import Path

import pytest

from memdeck.cli import main
from memdeck.core import Scope
from memdeck.core.embed import HashEmbedder
from memdeck.core.forget import forget
from memdeck.core.forget.needles import needles_of
from memdeck.core.forget.verify import Verifier
from memdeck.core.receipts import ReceiptBook
from memdeck.core.store import Store

WRITERS = ("w0", "w1")
ROUNDS = 14
DEADLINE = 150.0  # a worker gives up on its loop after this long, whatever happens


# --- workers ----------------------------------------------------------------------------------------


def writer(store_path: str, principal: str, log_path: str) -> None:
    """Write three facts and an episode a round; each written id and text is logged at once."""
    store = Store.open(store_path, embedder=HashEmbedder())
    try:
        with open(log_path, "a", encoding="utf-8") as log:
            for r in range(ROUNDS):
                items = [
                    {
                        "text": f"{principal} note {r}-{i} codeword {secrets.token_hex(6)}",
                        "tier": tier,
                        "principal": principal,
                    }
                    for i, tier in enumerate(("semantic", "semantic", "semantic", "episodic"))
                ]
                for item, w in zip(items, store.remember_many(items), strict=True):
                    assert w.memory is not None
                    log.write(
                        json.dumps({"id": w.memory.id, "text": item["text"], "tier": w.memory.tier}) + "\n"
                    )
                log.flush()
                time.sleep(0.15)
    finally:
        store.close()


def reader(store_path: str, stop_file: str, out: str) -> None:
    """Recall (traced) and build context packs (ledgered) until told to stop."""
    store = Store.open(store_path, embedder=HashEmbedder(), read_consistency=0.2)
    errors: list[str] = []
    loops = 0
    deadline = time.monotonic() + DEADLINE
    while not os.path.exists(stop_file) and time.monotonic() < deadline:
        # The writers' traces go with the purges (their query shares words with every forgotten text);
        # the seed's name nothing forgotten and stay.
        for p, query in (*((w, "codeword note") for w in WRITERS), ("seed", "seed fact")):
            try:
                result = store.recall(query, principal=p, k=8, agent="reader")
                assert all(i.memory.principal == p for i in result.items), "another principal's memory"
                store.context(query, principal=p, budget_tokens=200, agent="reader", session="race")
            except Exception:  # noqa: BLE001 - every failure is the finding
                errors.append(traceback.format_exc(limit=3)[-1500:])
        loops += 1
    store.close()  # writes the queued traces
    Path(out).write_text(json.dumps({"errors": errors, "loops": loops}))


def _logged(tmp: Path) -> dict[str, dict[str, str]]:
    found: dict[str, dict[str, str]] = {}
    for p in WRITERS:
        path = tmp / f"{p}.log"
        if path.exists():
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.endswith("}"):
                    entry = json.loads(line)
                    found[entry["id"]] = {**entry, "principal": p}
    return found


def forgetter(store_path: str, tmp_dir: str, out: str) -> None:
    """Forget one logged memory at a time until the writers are done and the reader has stopped, then once
    more, so that the store's last change is a purge."""
    tmp = Path(tmp_dir)
    store = Store.open(store_path, embedder=HashEmbedder())
    rng = random.Random(7)
    forgotten: list[dict[str, str]] = []
    receipts: list[str] = []
    deadline = time.monotonic() + DEADLINE

    def forget_one() -> bool:
        done = {f["id"] for f in forgotten}
        candidates = [e for i, e in sorted(_logged(tmp).items()) if i not in done]
        if not candidates:
            return False
        victim = rng.choice(candidates)
        receipt = forget(
            store.engine, [victim["id"]], reason="race test", scope=Scope.of(victim["principal"])
        )
        forgotten.append(victim)
        receipts.append(receipt["receipt_id"])
        return True

    try:
        while not (tmp / "reader-stopped").exists() and time.monotonic() < deadline:
            # A trace queued before a purge is dropped, not written: with no pause between purges the
            # reader's traces (written a second after the recall) would never reach the log at all.
            time.sleep(1.5 if forget_one() else 0.1)
        forget_one()
    finally:
        store.close()
        Path(out).write_text(json.dumps({"forgotten": forgotten, "receipts": receipts}))


# --- the scenario -----------------------------------------------------------------------------------


def _spawn(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, str(Path(__file__).resolve()), *args], stderr=subprocess.PIPE)


def _finish(proc: subprocess.Popen[bytes], timeout: float) -> None:
    _, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err.decode()[-3000:]


@pytest.mark.slow
def test_writers_a_tracing_reader_and_a_forget_loop_leave_every_receipt_verified_and_nothing_forgotten(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store_path = tmp_path / "store"
    seed = Store.open(store_path, embedder=HashEmbedder())  # the tables exist before the race begins
    seed.remember("seed fact codeword", tier="semantic", principal="seed")
    seed.remember("seed episode codeword", tier="episodic", principal="seed")
    seed.close()

    stop = tmp_path / "stop"
    reading = _spawn("reader", str(store_path), str(stop), str(tmp_path / "reader.json"))
    forgetting = _spawn("forgetter", str(store_path), str(tmp_path), str(tmp_path / "forgetter.json"))
    writing = [_spawn("writer", str(store_path), p, str(tmp_path / f"{p}.log")) for p in WRITERS]
    for proc in writing:
        _finish(proc, 300)
    stop.write_text("stop")
    _finish(reading, 300)
    (tmp_path / "reader-stopped").write_text("")
    _finish(forgetting, 300)

    read = json.loads((tmp_path / "reader.json").read_text())
    assert read["errors"] == [], "\n---\n".join(read["errors"][:3])
    assert read["loops"] >= 3
    log = json.loads((tmp_path / "forgetter.json").read_text())
    forgotten = log["forgotten"]
    written = _logged(tmp_path)
    assert len(written) == len(WRITERS) * ROUNDS * 4
    assert len(forgotten) >= 3, "the forget loop should have run several purges during the writes"
    gone = {f["id"] for f in forgotten}

    # Every receipt: the chain verifies and each one records verified checks.
    assert main(["--store", str(store_path), "receipts", "verify", "--all"]) == 0
    capsys.readouterr()
    book = ReceiptBook(store_path)
    ids_in_receipts = {d["id"] for r in book.list() for d in book.get(r["receipt_id"])["deleted"]}
    assert {r["receipt_id"] for r in book.list()} == set(log["receipts"])
    assert all(book.get(r)["outcome"] == "verified" for r in log["receipts"])
    assert ids_in_receipts == gone

    # Nothing lost but what was forgotten; the trace log did record recalls and context packs.
    from memdeck.core.recall.traces import count_traces, injections

    store = Store.open(store_path, embedder=HashEmbedder(), read_consistency=0)
    try:
        for p in WRITERS:
            mine = {i for i, e in written.items() if e["principal"] == p}
            assert {m.id for m in store.list(Scope.of(p), limit=10_000)} == mine - gone
        assert count_traces(store.engine, scope=Scope.of("seed")) > 0 and injections(
            store.engine, agent="reader"
        )
        assert not {i for row in injections(store.engine, agent="reader") for i in row["ids"]} & gone

        # The store's own verifier over everything forgotten in the run, one principal at a time.
        for p in WRITERS:
            mine = [f for f in forgotten if f["principal"] == p]
            if not mine:
                continue
            journal = {
                "principal": p,
                "whole_principal": False,
                "deleted": [{"id": f["id"]} for f in mine],
                "cascade_delete_ids": [],
                "tiers": {f["id"]: f["tier"] for f in mine},
                "actions": [],
            }
            texts, tokens, words = needles_of([f["text"] for f in mine])
            checks = Verifier(
                store.engine, journal, {"texts": texts, "tokens": tokens, "words": words, "vectors": {}}
            ).run()
            failed = [c for c in checks if not c["passed"]]
            assert not failed, failed
    finally:
        store.close()

    # Raw bytes of every file under the store: no forgotten id (receipts and tombstones name them by
    # design), and no forgotten text's unique codeword anywhere.
    ids = [i.encode() for i in gone]
    codewords = [f["text"].rsplit(" ", 1)[1].encode() for f in forgotten]
    for path in sorted(p for p in store_path.rglob("*") if p.is_file()):
        data = path.read_bytes().lower()
        rel = path.relative_to(store_path)
        assert not [c for c in codewords if c in data], f"forgotten text in {rel}"
        if rel.parts[0] not in ("receipts", "tombstones"):
            assert not [i for i in ids if i in data], f"forgotten id in {rel}"


if __name__ == "__main__":
    role, *argv = sys.argv[1:]
    if role == "writer":
        writer(argv[0], argv[1], argv[2])
    elif role == "reader":
        reader(argv[0], argv[1], argv[2])
    elif role == "forgetter":
        forgetter(argv[0], argv[1], argv[2])
    else:
        raise SystemExit(f"unknown role {role!r}")
