"""What the recall tests ask of a store: one recall under some ``[recall]`` settings, the store's own settings
put back after it (tests/recall/test_recall_optional_channels.py, tests/recall/test_time_cue.py)."""

from __future__ import annotations

from typing import Any

from memdeck.core.store import Store


def recall_with(store: Store, query: str, k: int, principal: str = "pat", **settings: object) -> Any:
    """``store.recall`` (unrecorded, untraced) with these ``[recall]`` settings for this call only."""
    saved = store.settings
    store.settings = saved.with_changes(recall=settings)
    try:
        return store.recall(query, principal=principal, k=k, record_access=False, trace=False)
    finally:
        store.settings = saved
