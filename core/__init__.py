"""memdeck's core library: a local memory store for AI agents with explained, tunable recall."""

from .config import Profile, load_profile, parse_weights, save_profile
from .errors import IntegrityError, MemdeckError, NotFound, StoreLocked
from .filters import Scope
from .records import STORED_TIERS, TIERS, Memory
from .store import MemoryInput, Store, WriteResult, open_store

__all__ = [
    "STORED_TIERS",
    "TIERS",
    "IntegrityError",
    "Memory",
    "MemdeckError",
    "MemoryInput",
    "NotFound",
    "Profile",
    "Scope",
    "Store",
    "StoreLocked",
    "WriteResult",
    "load_profile",
    "open_store",
    "parse_weights",
    "save_profile",
]
