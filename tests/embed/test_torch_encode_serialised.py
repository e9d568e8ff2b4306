"""Torch batches in one process run one at a time: each already uses every core, and the graph indexer's
thread embeds names while a write embeds its batch. The lock is held per batch, not per call, and a query
asked while torch is busy is answered by the packaged model in numpy."""

from __future__ import annotations

import signal
import threading
import time

import numpy as np
import pytest

from memdeck.core.embed import PackagedMiniLM, SentenceTransformerEmbedder, TurnLock


class _CountingModel:
    """Stands in for a loaded SentenceTransformer and records how many encodes overlap."""

    def __init__(self) -> None:
        self.inside = 0
        self.most = 0
        self.calls = 0
        self._lock = threading.Lock()

    def get_embedding_dimension(self) -> int:
        return 4

    def encode(self, texts: list[str], **_: object) -> np.ndarray:
        with self._lock:
            self.inside += 1
            self.calls += 1
            self.most = max(self.most, self.inside)
        time.sleep(0.02)
        with self._lock:
            self.inside -= 1
        return np.ones((len(texts), 4), dtype=np.float32) / 2


def test_encodes_from_several_threads_never_overlap(monkeypatch):
    model = _CountingModel()
    monkeypatch.setitem(SentenceTransformerEmbedder._cache, ("stand-in/counting", "cpu"), model)
    # Two embedders of the same model, as a store's writer and its graph indexer hold.
    embedders = [
        SentenceTransformerEmbedder("stand-in/counting"),
        SentenceTransformerEmbedder("stand-in/counting"),
    ]
    results: list[np.ndarray] = []
    start = threading.Barrier(6)

    def work(embedder: SentenceTransformerEmbedder) -> None:
        start.wait()
        for _ in range(5):
            results.append(embedder.encode(["a name", "another"]))

    threads = [threading.Thread(target=work, args=(embedders[n % 2],)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)

    assert model.calls == 30 and len(results) == 30
    assert all(r.shape == (2, 4) for r in results)
    assert model.most == 1


def test_a_long_call_lets_another_caller_in_between_its_batches(monkeypatch):
    model = _CountingModel()
    monkeypatch.setitem(SentenceTransformerEmbedder._cache, ("stand-in/counting", "cpu"), model)
    long_call = SentenceTransformerEmbedder("stand-in/counting", batch_size=4)
    short_call = SentenceTransformerEmbedder("stand-in/counting")
    texts = [f"text number {n}" + "x" * (n % 7) for n in range(40)]  # ten batches of four
    done: dict[str, float] = {}

    def long_() -> None:
        out = long_call.encode(texts)
        assert out.shape == (40, 4)
        done["long"] = time.monotonic()

    worker = threading.Thread(target=long_)
    worker.start()
    while model.calls == 0:
        time.sleep(0.001)
    short_call.encode(["a query"])
    done["short"] = time.monotonic()
    worker.join(timeout=30)
    assert done["short"] < done["long"]  # answered between the long call's batches, not after all of them
    assert model.most == 1 and model.calls == 11


def test_the_packaged_model_answers_a_query_in_numpy_while_torch_encodes_a_batch(monkeypatch):
    torch = SentenceTransformerEmbedder()
    monkeypatch.setattr(SentenceTransformerEmbedder, "loaded", property(lambda self: True))
    asked: list[int] = []
    monkeypatch.setattr(SentenceTransformerEmbedder, "encode", lambda self, texts: asked.append(len(texts)))
    packaged = PackagedMiniLM(torch=torch)

    with SentenceTransformerEmbedder._encode_lock:  # a batch in progress in another thread
        assert torch.busy
        vector = packaged.encode(["where is the passport"])
    assert asked == [] and vector.shape == (1, 384)
    packaged.encode(["where is the passport"])  # torch free and loaded: it answers
    assert asked == [1]


def test_the_encode_lock_goes_to_the_waiting_thread_before_its_holder_takes_it_again():
    # A plain threading.Lock usually goes back to the thread that just released it; the encode lock is
    # handed to whoever waited first, so "held per batch" lets a waiting caller in.
    lock = TurnLock()
    order: list[str] = []
    lock.acquire()
    waiting = threading.Thread(target=lambda: (lock.acquire(), order.append("waiter"), lock.release()))
    waiting.start()
    while not lock._waiters:
        time.sleep(0.001)
    lock.release()
    lock.acquire()  # the holder asks again at once, as a long encode does for its next batch
    order.append("holder")
    lock.release()
    waiting.join(timeout=10)
    assert order == ["waiter", "holder"]
    assert not lock.locked()
    with pytest.raises(RuntimeError):
        lock.release()


def test_a_wait_for_the_encode_lock_that_is_interrupted_leaves_the_lock_usable():
    # Ctrl-C while the main thread waits for the lock: the waiter leaves the queue, so the holder's release
    # frees the lock instead of handing it to nobody.
    lock = TurnLock()
    holding, release = threading.Event(), threading.Event()

    def holder() -> None:
        lock.acquire()
        holding.set()
        release.wait(10)
        lock.release()

    class _Interrupt(Exception):
        pass

    def interrupt(*_: object) -> None:
        raise _Interrupt

    thread = threading.Thread(target=holder)
    thread.start()
    holding.wait(10)
    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.05)
        with pytest.raises(_Interrupt):
            lock.acquire()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert not lock._waiters
    release.set()
    thread.join(timeout=10)
    assert not lock.locked()
    with lock:
        assert lock.locked()
