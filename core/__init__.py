"""memdeck's core library: a local memory store for AI agents with explained, tunable recall.

Names are loaded on first use, so importing a light submodule (``memdeck.core.privacy``, the CLI parser)
does not pay for LanceDB.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "Profile": "config",
    "load_profile": "config",
    "parse_weights": "config",
    "save_profile": "config",
    "IntegrityError": "errors",
    "MemdeckError": "errors",
    "NotFound": "errors",
    "StoreLocked": "errors",
    "Scope": "filters",
    "STORED_TIERS": "records",
    "TIERS": "records",
    "Memory": "records",
    "MemoryInput": "store",
    "Store": "store",
    "WriteResult": "store",
    "open_store": "store",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'memdeck.core' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
