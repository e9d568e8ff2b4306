"""A journaled run, the shape a purge and a re-scan share: a JSON journal in ``<store>/journal/`` records each
step before the next starts, so a process killed at any point leaves a run that the next open finishes."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Self

from memdeck.core.errors import MemdeckError
from memdeck.core.files import write_atomic_text

if TYPE_CHECKING:
    from memdeck.core.store import Store

CRASH_ENV = "MEMDECK_TEST_CRASH_AT"  # tests: os._exit(137) right after this journal step is recorded
Progress = Callable[[str], None]


class JournaledRun:
    """The journal of one run: where it lives, its steps, and resuming it."""

    FORMAT: ClassVar[str]  # the journal's "format" field
    LABEL: ClassVar[str]  # what the run is called in messages
    CRASH_PREFIX: ClassVar[str] = ""  # CRASH_ENV names a step of this kind of run as PREFIX + step

    def __init__(self, store: Store, path: Path, journal: dict[str, Any], progress: Progress | None = None) -> None:
        self.store = store
        self.path = path
        self.journal = journal
        self.progress = progress or (lambda _msg: None)

    @classmethod
    def load(cls, store: Store, path: Path) -> Self:
        """A run a killed process left, to be finished (its journal says which steps are done)."""
        try:
            journal = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise MemdeckError(f"{cls.LABEL} journal {path} is unreadable: {exc}") from None
        if not isinstance(journal, dict) or journal.get("format") != cls.FORMAT:
            raise MemdeckError(f"{path} is not a memdeck {cls.LABEL} journal")
        journal.setdefault("extra", {})["resumed"] = True
        return cls(store, path, journal)

    def _mark(self, step: str) -> None:
        """Record ``step`` as done, durably, before the next one starts."""
        if step not in self.journal["steps"]:
            self.journal["steps"].append(step)
        write_atomic_text(self.path, json.dumps(self.journal, ensure_ascii=False, sort_keys=True), mode=0o600)
        if os.environ.get(CRASH_ENV) == f"{self.CRASH_PREFIX}{step}":
            os._exit(137)
