"""The embedding model as the app sees it: whether it has loaded, loading it, and recall while it loads.

Loading takes seconds (torch), so the app recalls by keyword only until then rather than wait.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memdeck.core.embed import EmbeddingUnavailable, UnavailableEmbedder

if TYPE_CHECKING:
    from memdeck.core.embed import Embedder
    from memdeck.core.recall.search import RecallResult
    from memdeck.core.store import Store

LOADING = "the embedding model is still loading"


def is_loaded(embedder: Embedder) -> bool:
    """Whether a recall now would use the model without first waiting for it to load."""
    # core's Embedder protocol has no ``loaded``: only the lazily loading model (and test doubles of it)
    # define one; every other embedder is ready once it exists. The one probe left in the app.
    return bool(getattr(embedder, "loaded", True))


def load(embedder: Embedder) -> str | None:
    """Load the model (blocking: call it from a worker); None when it is ready, else why not."""
    try:
        embedder.load()  # type: ignore[attr-defined]  # every core embedder has load(); the protocol omits it
    except EmbeddingUnavailable as exc:
        return str(exc)
    except Exception as exc:  # noqa: BLE001 - any load failure means keyword-only search, which is shown
        return f"{type(exc).__name__}: {exc}"
    return None if embedder.available else "the embedding model is not available"


class KeywordOnlyStore:
    """The store as recall sees it while the model loads: no embedder, so recall answers by keyword."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self.embedder = UnavailableEmbedder(LOADING, store.dim)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


def recall(store: Store, query: str, *, semantic: bool, **options: Any) -> RecallResult:
    """``store.recall(query, **options)``; by keyword only (and unlogged) when ``semantic`` is false."""
    if semantic:
        return store.recall(query, **options)
    # Store.recall over the stand-in: the same filters, scoring and retries, with no query embedding.
    return type(store).recall(KeywordOnlyStore(store), query, **{**options, "trace": False})  # type: ignore[arg-type]
