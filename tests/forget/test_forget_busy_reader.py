"""A forget is not held up by an agent that keeps recalling in the same process.

Each recall queues a trace, and the background trace writer writes the queue under the trace log's lock.
While recalls kept coming, that writer never let go, so the forget's scrub of the log waited until the
recalls stopped (in a test, four minutes, and every other forget behind it timed out on the store lock).
"""

from __future__ import annotations

import threading
import time
import traceback

from memdeck.core import Scope
from memdeck.core.embed import HashEmbedder
from memdeck.core.forget import forget
from memdeck.core.recall.traces import count_traces
from memdeck.core.receipts import ReceiptBook
from memdeck.core.store import Store

READER_LIMIT_S = 90.0  # the reader stops by itself after this long, so a held-up forget fails, not hangs


def test_a_forget_finishes_while_an_agent_keeps_recalling(tmp_path):
    store = Store.open(tmp_path / "store", embedder=HashEmbedder())
    ids = [
        w.memory.id
        for w in store.remember_many(
            [
                {"text": f"the release train leaves on day {i}", "tier": "semantic", "principal": "u"}
                for i in range(30)
            ]
        )
        if w.memory is not None
    ]
    reader_store = Store.open(tmp_path / "store", embedder=HashEmbedder())
    stop = threading.Event()
    state: dict[str, object] = {"recalls": 0, "timed_out": False, "errors": []}

    def keep_recalling() -> None:
        deadline = time.monotonic() + READER_LIMIT_S
        while not stop.is_set():
            if time.monotonic() > deadline:
                state["timed_out"] = True
                return
            try:
                reader_store.recall("when does the release train leave", principal="u", k=5)
                state["recalls"] = int(state["recalls"]) + 1  # type: ignore[call-overload]
            except Exception:  # noqa: BLE001 - every failure is the finding
                state["errors"].append(traceback.format_exc(limit=3))  # type: ignore[attr-defined]

    reader = threading.Thread(target=keep_recalling)
    reader.start()
    try:
        while int(state["recalls"]) < 20:  # type: ignore[call-overload]
            time.sleep(0.05)
        time.sleep(1.5)  # the trace writer is at work, and recalls keep queueing traces
        receipt = forget(store.engine, [ids[0]], reason="user request", scope=Scope.of("u"))
        finished_while_recalling = reader.is_alive() and not state["timed_out"]
    finally:
        stop.set()
        reader.join(READER_LIMIT_S + 30)
    assert finished_while_recalling, "the forget waited for the recalls to stop"
    assert state["errors"] == []
    assert receipt["outcome"] == "verified"
    assert ReceiptBook(tmp_path / "store").get(receipt["receipt_id"])["outcome"] == "verified"
    reader_store.close()
    assert count_traces(store.engine) > 0  # the recalls after the forget were logged: the writer went on
    store.close()
