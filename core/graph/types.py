"""What the graph's functions return, as types (no imports beyond typing: readers of receipts use them)."""

from __future__ import annotations

from typing import TypedDict


class GraphCounts(TypedDict, total=False):
    """What a forget (or a re-scan) changed in the graph: rows deleted, and rows whose mentions or sources
    lost the forgotten ids (a whole principal's forget deletes only)."""

    entities_deleted: int
    relations_deleted: int
    entities_updated: int
    relations_updated: int
