"""The one way a failed background task becomes a message: a line a person can read, never a traceback.

Screens (through their shared base) and widgets that run workers call :func:`report_failure`; the
traceback goes to the log only.
"""

from __future__ import annotations

import logging
from typing import Any

from textual.app import App
from textual.widget import Widget
from textual.worker import Worker

from memdeck.core.errors import MemdeckError

log = logging.getLogger("memdeck.tui")


def failure_text(error: BaseException | None) -> str:
    """A MemdeckError in its own words; anything else as its type and message."""
    return str(error) if isinstance(error, MemdeckError) else f"{type(error).__name__}: {error}"


def report_failure(node: Widget | App[Any], worker: Worker[Any]) -> str:
    """Log the failure (with its traceback unless it is a MemdeckError), notify, and return the line."""
    error = worker.error
    text = failure_text(error)
    what = worker.description or worker.name
    log.error("%s failed: %s", what, text, exc_info=None if isinstance(error, MemdeckError) else error)
    node.notify(f"{what} failed: {text}", title="Error", severity="error", timeout=10)
    return text
