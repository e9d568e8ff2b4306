"""What the storage engine's own parts (writes, access counting, table upkeep, indices, object storage) use
of the :class:`~memdeck.core.storage.engine.Engine` that holds them: a Protocol, so that the engine imports
its parts and no part imports the engine."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

    from memdeck.core.config import Settings
    from memdeck.core.embed import Embedder
    from memdeck.core.paths import StoreLayout
    from memdeck.core.records import Memory
    from memdeck.core.storage.locking import StoreLock

T = TypeVar("T")


class Tables(Protocol):
    """A store's tables, settings and locks, as the engine's parts see them."""

    root: Path
    layout: StoreLayout
    settings: Settings
    meta: dict[str, Any]
    uri: str
    storage_options: dict[str, str] | None
    local_tables: bool
    lock: StoreLock
    embedder: Embedder  # the store's model: whether its vectors carry meaning, and its name
    write_hooks: list[Callable[[list[Memory]], None]]

    @property
    def dim(self) -> int: ...

    def table(self, tier: str) -> Any: ...

    def has_table(self, tier: str) -> bool: ...

    def tiers_present(self) -> list[str]: ...

    def scan(self, tier: str, columns: Sequence[str], where: str | None = None) -> pa.Table: ...

    def read_retry(self, read: Callable[[], T]) -> T: ...

    def refresh(self) -> None: ...

    def redact(self, text: str, principal: str) -> str: ...

    def redact_value(self, value: Any, principal: str) -> Any: ...

    def embed(self, texts: list[str]) -> tuple[np.ndarray, bool]: ...

    def after_write(self, tier: str) -> None: ...

    def maybe_compact(self, tier: str) -> None: ...

    def catch_up_recall(self, tiers: Sequence[str]) -> None: ...
