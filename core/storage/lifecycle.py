"""A memory's lifecycle state: deprecated (kept, left out of recall, with a reason and what supersedes it)
or active again."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memdeck.core.errors import MemdeckError
from memdeck.core.filters import Scope
from memdeck.core.records import Memory, check_text, neutralise_tokens, now

if TYPE_CHECKING:
    from memdeck.core.storage.engine import Engine


def deprecate(
    engine: Engine,
    memory_id: str,
    reason: str,
    *,
    superseded_by: str | None = None,
    scope: Scope = Scope.everyone(),
) -> Memory:
    """Mark a memory deprecated, the reason redacted like any text written."""
    memory = engine.get(memory_id, scope)
    reason = engine.redact(neutralise_tokens(check_text(reason, "reason")), memory.principal)
    if superseded_by:
        other = engine.get(superseded_by, scope)
        if other.principal != memory.principal:
            raise MemdeckError("a memory can only be superseded by one of the same principal")
        if other.id == memory.id:
            raise MemdeckError("a memory cannot supersede itself")
    values = {
        "state": "deprecated",
        "deprecation_reason": reason,
        "superseded_by": superseded_by,
        "updated_at": now(),
    }
    engine._update_one(memory, values)
    memory.state, memory.deprecation_reason, memory.superseded_by = "deprecated", reason, superseded_by
    return memory


def undeprecate(engine: Engine, memory_id: str, scope: Scope = Scope.everyone()) -> Memory:
    memory = engine.get(memory_id, scope)
    engine._update_one(
        memory,
        {"state": "active", "deprecation_reason": None, "superseded_by": None, "updated_at": now()},
    )
    memory.state, memory.deprecation_reason, memory.superseded_by = "active", None, None
    return memory
