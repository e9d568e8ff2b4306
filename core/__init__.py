"""memdeck's core library: a local memory store for AI agents with explained, tunable recall.

The public API is the names below. They load on first use, so importing a light submodule (the command
line's parser, ``memdeck.core.privacy``) does not pay for LanceDB; type checkers see the real types
through the ``TYPE_CHECKING`` imports.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from memdeck.core.thirdparty import prepare_lancedb

prepare_lancedb()  # LanceDB, when a module imports it, without its REST client's 1.8 s start-up

if TYPE_CHECKING:
    from memdeck.core.config import Profile, load_profile, parse_weights, save_profile
    from memdeck.core.errors import IntegrityError, MemdeckError, NotFound, StoreLocked
    from memdeck.core.filters import Scope
    from memdeck.core.forget import ForgetPlan
    from memdeck.core.recall.search import RecallResult
    from memdeck.core.records import STORED_TIERS, TIERS, Memory, MemoryInput, WriteResult
    from memdeck.core.store import Store, open_store

__all__ = [
    "STORED_TIERS",
    "TIERS",
    "ForgetPlan",
    "IntegrityError",
    "MemdeckError",
    "Memory",
    "MemoryInput",
    "NotFound",
    "Profile",
    "RecallResult",
    "Scope",
    "Store",
    "StoreLocked",
    "WriteResult",
    "load_profile",
    "open_store",
    "parse_weights",
    "save_profile",
]

_HOME = {
    "Profile": "config",
    "load_profile": "config",
    "parse_weights": "config",
    "save_profile": "config",
    "IntegrityError": "errors",
    "MemdeckError": "errors",
    "NotFound": "errors",
    "StoreLocked": "errors",
    "Scope": "filters",
    "ForgetPlan": "forget",
    "RecallResult": "recall.search",
    "STORED_TIERS": "records",
    "TIERS": "records",
    "Memory": "records",
    "MemoryInput": "records",
    "WriteResult": "records",
    "Store": "store",
    "open_store": "store",
}


def __getattr__(name: str) -> Any:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module 'memdeck.core' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"memdeck.core.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
