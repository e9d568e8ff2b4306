"""Recall latency with the maintenance scheduler running beside it, against recall without it.

One store (real all-MiniLM-L6-v2, LoCoMo texts when the shared data is there, generated ones otherwise),
one process, both conditions interleaved in rounds (a block of recalls with the scheduler stopped, then a
block with it running) so a change in machine load hits both alike. The scheduler runs with short
intervals and real work to do: memories written with expiries spread over the run (so purges with
receipts happen while recalls run), a closed session queued for consolidation, and index upkeep.

    .venv/bin/python bench/bench_scheduler.py [--memories 3000] [--rounds 12] [--block 25]
        [--intervals short|default] [--out FILE]

``--intervals short`` (the default here) runs expiry and sessions every 0.5 s and index upkeep every 5 s, so
the scheduler works through the whole run; ``default`` keeps the config's intervals (60 s / 300 s / 3600 s).

Target: recall p50 with the scheduler running within 1.2x of recall without it.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import emit, locomo_texts, machine_info, percentiles

from memdeck.core.config import load_config
from memdeck.core.embed import SentenceTransformerEmbedder
from memdeck.core.maintenance.scheduler import Scheduler
from memdeck.core.store import Store


def texts(n: int) -> list[str]:
    try:
        found = locomo_texts(n)
    except Exception:  # noqa: BLE001 - no shared data on this machine: generated sentences instead
        found = []
    rng = random.Random(7)
    words = [
        "tea",
        "garden",
        "deploy",
        "server",
        "cat",
        "lisbon",
        "budget",
        "report",
        "bike",
        "trip",
        "dentist",
        "passport",
        "drawer",
    ]
    while len(found) < n:
        found.append(" ".join(rng.choice(words) for _ in range(12)))
    return found[:n]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--memories", type=int, default=3000)
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--block", type=int, default=25)
    ap.add_argument("--intervals", choices=["short", "default"], default="short")
    ap.add_argument("--out")
    args = ap.parse_args()

    config = load_config()
    if args.intervals == "short":
        config["maintenance"] = {
            **config["maintenance"],
            "evict_interval_s": 0.5,
            "consolidate_interval_s": 0.5,
            "index_interval_s": 5,
            "retry_s": 1,
        }
    embedder = SentenceTransformerEmbedder()
    embedder.load()
    root = Path(tempfile.mkdtemp(prefix="memdeck-bench-scheduler-")) / "store"
    store = Store.open(root, embedder=embedder, config=config)
    corpus = texts(args.memories)
    t0 = time.perf_counter()
    store.remember_many(
        [
            {
                "text": t,
                "tier": ("semantic", "episodic")[i % 2],
                "principal": f"user-{i % 5}",
                "session": f"s{i % 40}",
            }
            for i, t in enumerate(corpus)
        ]
    )
    build_s = time.perf_counter() - t0
    store.close_session("s1", "user-1")
    total_s = args.rounds * args.block * 0.06 * 2
    now = datetime.now(UTC)
    # Memories that expire through the run, so the expiry task purges (with receipts) while recalls run.
    store.remember_many(
        [
            {
                "text": f"short-lived note {i} about the garden",
                "tier": "semantic",
                "principal": f"user-{i % 5}",
                "expires_at": now + timedelta(seconds=2 + i * total_s / 40),
            }
            for i in range(40)
        ]
    )
    queries = [" ".join(t.split()[:6]) for t in random.Random(3).sample(corpus, 50)]
    for q in queries[:5]:  # warm caches
        store.recall(q, principal="user-0", trace=False)

    scheduler = Scheduler(store.engine)
    without: list[float] = []
    with_running: list[float] = []
    n = 0
    for _ in range(args.rounds):
        for running, sink in ((False, without), (True, with_running)):
            if running:
                scheduler.start()
            for _ in range(args.block):
                q = queries[n % len(queries)]
                n += 1
                t = time.perf_counter()
                store.recall(q, principal=f"user-{n % 5}", k=10)
                sink.append((time.perf_counter() - t) * 1000)
            if running:
                scheduler.stop()
    store.close()
    load_after = [round(x, 2) for x in os.getloadavg()]
    off, on = percentiles(without), percentiles(with_running)
    result = {
        "benchmark": "recall with the maintenance scheduler running",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine_info(),
        "memories": args.memories,
        "build_seconds": round(build_s, 1),
        "recall_ms_without_scheduler": off,
        "recall_ms_with_scheduler": on,
        "p50_ratio": round(on["p50"] / off["p50"], 3),
        "p95_ratio": round(on["p95"] / off["p95"], 3),
        "intervals": args.intervals,
        "seconds": round(time.perf_counter() - t0, 1),
        "load_avg_after": load_after,
        "scheduler": {t.name: t.to_json() for t in scheduler.status()},
        "target": "p50 ratio <= 1.2",
    }
    emit(result, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
