"""Waiting for the app in Pilot tests: every worker finished and every message it posted handled."""

from __future__ import annotations

from typing import Any

from textual.worker import WorkerCancelled


async def settle(app: Any, pilot: Any, rounds: int = 4) -> None:
    """Let the app's workers finish and their messages be handled, ``rounds`` quiet times over. A worker
    cancelled because a newer one of its exclusive group replaced it (a key pressed again, a cursor moved on)
    is no error: the newer one is awaited in another round. Fails if workers keep being replaced."""
    quiet = 0
    for _ in range(rounds * 5):
        try:
            await app.workers.wait_for_complete()
        except WorkerCancelled:
            continue
        await pilot.pause()
        quiet += 1
        if quiet == rounds:
            return
    raise AssertionError(f"the app's workers were still being replaced after {rounds * 5} rounds")
