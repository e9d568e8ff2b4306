"""A keypress in the app while the maintenance scheduler works, against the same keypress without it.

The real app (``MemdeckApp`` with ``maintenance=True``, driven by Pilot) over a store with work for the
scheduler: memories expiring through the run (each expiry a purge with a receipt), a closed session to
consolidate, index upkeep every few seconds. Keys (``down``/``up``) are handed to the app as its terminal
driver does and timed until every message they caused is handled and the frame is composed (as
``bench_app.py``'s *key to frame*). Blocks with the scheduler stopped and running alternate, so a change in
machine load hits both alike.

    .venv/bin/python bench/bench_app_maintenance.py [--memories 5000] [--rounds 10] [--block 30] [--out FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import emit, machine_info, percentiles

from memdeck.core.config import load_config
from memdeck.core.embed import HashEmbedder
from memdeck.core.filters import Scope
from memdeck.core.store import Store
from memdeck.tui.app import MemdeckApp
from memdeck.tui.widgets.memory_table import MemoryTable

WORDS = ["tea", "garden", "deploy", "server", "cat", "lisbon", "budget", "report", "bike", "trip", "dentist"]


def build(n: int, run_s: float) -> Store:
    config = load_config()
    config["maintenance"] = {
        **config["maintenance"],
        "evict_interval_s": 0.5,
        "consolidate_interval_s": 0.5,
        "index_interval_s": 5,
        "retry_s": 1,
    }
    root = Path(tempfile.mkdtemp(prefix="memdeck-bench-app-maint-")) / "store"
    store = Store.open(root, embedder=HashEmbedder(), config=config)
    rng = random.Random(7)
    for start in range(0, n, 1000):
        store.remember_many(
            [
                {
                    "text": " ".join(rng.choice(WORDS) for _ in range(10)) + f" #{i}",
                    "tier": ("semantic", "episodic")[i % 2],
                    "principal": f"user-{i % 5}",
                    "session": f"s{i % 40}",
                    "force": True,
                }
                for i in range(start, min(n, start + 1000))
            ]
        )
    store.close_session("s1", "user-1")
    now = datetime.now(UTC)
    # Memories that expire through the run, so the expiry task purges (with receipts) while keys are pressed.
    store.remember_many(
        [
            {
                "text": f"short-lived note {i} about the garden",
                "tier": "semantic",
                "principal": f"user-{i % 5}",
                "expires_at": now + timedelta(seconds=5 + i * run_s / 40),
            }
            for i in range(40)
        ]
    )
    return store


async def measure(store: Store, rounds: int, block: int) -> dict[str, Any]:
    app = MemdeckApp(store=store, scope=Scope.everyone(), maintenance=True, load_model=False)
    samples: dict[bool, list[float]] = {False: [], True: []}
    async with app.run_test(size=(140, 42)) as pilot:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            await pilot.pause(0.1)
            try:
                if app.screen.query_one(MemoryTable).visible_loaded():
                    break
            except Exception:  # noqa: BLE001 - the browse screen is not mounted yet
                continue
        scheduler = app.scheduler
        assert scheduler is not None and scheduler.running
        runs_before = sum(t.runs for t in scheduler.status())

        async def key_to_frame(key: str) -> float:
            from textual import events

            t0 = time.perf_counter()
            event = events.Key(key, None)
            event.set_sender(app)
            app._driver.send_message(event)
            await pilot._wait_for_screen()  # every message the key caused has been handled
            app.screen._on_timer_update()  # and the frame is composed now, not at the next tick
            return (time.perf_counter() - t0) * 1000

        n = 0
        for _ in range(rounds):
            for running in (False, True):
                if running:
                    scheduler.start()
                else:
                    scheduler.stop()
                for _ in range(block):
                    samples[running].append(await key_to_frame("down" if n % 20 < 10 else "up"))
                    n += 1
                    await asyncio.sleep(0.05)  # a person's typing, not a flood: the scheduler gets its turn
        status = {t.name: t.to_json() for t in scheduler.status()}
        runs = sum(t.runs for t in scheduler.status()) - runs_before
    from memdeck.core.receipts import ReceiptBook

    purges = len([r for r in ReceiptBook(store.root).list() if r.get("reason") == "ttl"])
    return {
        "off": percentiles(samples[False]),
        "on": percentiles(samples[True]),
        "task_runs": runs,
        "ttl_purges": purges,
        "scheduler": status,
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--memories", type=int, default=5000)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--block", type=int, default=30)
    ap.add_argument("--out")
    args = ap.parse_args()
    load_before = [round(x, 2) for x in os.getloadavg()]
    run_s = args.rounds * args.block * 0.06 * 2
    t0 = time.perf_counter()
    store = build(args.memories, run_s)
    built = time.perf_counter() - t0
    result = asyncio.run(measure(store, args.rounds, args.block))
    store.close()
    off, on = result["off"], result["on"]
    emit(
        {
            "benchmark": "app keypress to frame with the maintenance scheduler running",
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "machine": machine_info(),
            "load_avg_before": load_before,
            "memories": args.memories,
            "build_seconds": round(built, 1),
            "key_to_frame_ms_without_scheduler": off,
            "key_to_frame_ms_with_scheduler": on,
            "p50_ratio": round(on["p50"] / off["p50"], 3),
            "p95_ratio": round(on["p95"] / off["p95"], 3),
            "task_runs_while_running": result["task_runs"],
            "ttl_purges": result["ttl_purges"],
            "scheduler": result["scheduler"],
        },
        args.out,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
