"""The embedding model as the app sees it: whether it has loaded, loading it, and recall while it loads.

Loading takes seconds (torch), so the app recalls by keyword only until then rather than wait.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memdeck.core.embed import EmbeddingUnavailable

if TYPE_CHECKING:
    from memdeck.core.embed import Embedder
    from memdeck.core.recall.search import RecallResult
    from memdeck.core.store import Store

LOADING = "the embedding model is still loading"


def is_loaded(embedder: Embedder) -> bool:
    """Whether a recall now would use the model without first waiting for it to load."""
    return embedder.loaded


def load(embedder: Embedder) -> str | None:
    """Load the model (blocking: call it from a worker); None when it is ready, else why not."""
    try:
        embedder.load()
    except EmbeddingUnavailable as exc:
        return str(exc)
    except Exception as exc:  # noqa: BLE001 - any load failure means keyword-only search, which is shown
        return f"{type(exc).__name__}: {exc}"
    return None if embedder.available else "the embedding model is not available"


def recall(store: Store, query: str, *, semantic: bool, **options: Any) -> RecallResult:
    """``store.recall(query, **options)``; by keyword only (and unlogged) when ``semantic`` is false."""
    if semantic:
        return store.recall(query, **options)
    return store.recall(query, **{**options, "trace": False}, keyword_only=LOADING)
