"""What a person decided on the review queue that the store itself does not record: dismissed items.

Keeping or merging a pair deprecates a memory, which the store records; a dismissal ("nothing to do
here") changes no memory, so its key is kept in ``review-dismissed.json`` in the store directory. Both
the review queue and :func:`memdeck.core.consolidate.contradictions` leave dismissed pairs out.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from memdeck.core.files import write_atomic_text

if TYPE_CHECKING:
    from memdeck.core.storage.engine import Engine

DISMISSED_FILE = "review-dismissed.json"


def pair_key(kind: str, a: str, b: str) -> str:
    """A pair's key in the review queue: its kind and the two ids in order, whichever side is which."""
    return f"{kind}:{':'.join(sorted((a, b)))}"


def dismissed(store: Engine) -> set[str]:
    """The keys of the review items a person dismissed."""
    path = store.root / DISMISSED_FILE
    if not path.exists():
        return set()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set()
    return {str(k) for k in data} if isinstance(data, list) else set()


def save_dismissed(store: Engine, keys: set[str]) -> None:
    write_atomic_text(store.root / DISMISSED_FILE, json.dumps(sorted(keys), indent=0) + "\n", 0o600)


__all__ = ["DISMISSED_FILE", "dismissed", "pair_key", "save_dismissed"]
