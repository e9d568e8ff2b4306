"""Reveal: a memory's text with its redaction tokens replaced by the originals, for its own principal only."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from memdeck.core.filters import Scope
from memdeck.core.privacy.vault import Vault

if TYPE_CHECKING:
    from memdeck.core.paths import StoreLayout
    from memdeck.core.records import Memory


class Memories(Protocol):
    """What a reveal reads of a store's engine (:class:`memdeck.core.storage.engine.Engine`, which itself
    redacts with this package: privacy does not import the storage engine)."""

    layout: StoreLayout

    def get(self, memory_id: str, scope: Scope = ...) -> Memory: ...


@dataclass(frozen=True, slots=True)
class Revealed:
    """A memory's text with this principal's tokens replaced; other principals' tokens stay tokens."""

    id: str
    principal: str
    text: str
    revealed: int  # how many distinct tokens were replaced

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "principal": self.principal, "text": self.text, "revealed": self.revealed}


def reveal_memory(store: Memories, memory_id: str, principal: str) -> Revealed:
    """Look the memory up within ``principal``'s scope (another principal's memory is not found)."""
    memory = store.get(memory_id, Scope.of(principal))
    vault = Vault(store.layout.vault)
    if not vault.exists(principal):
        return Revealed(memory.id, principal, memory.text, 0)
    text = vault.reveal(principal, memory.text)
    revealed = sum(1 for token in vault.tokens(principal) if token in memory.text)
    return Revealed(memory.id, principal, text, revealed)
