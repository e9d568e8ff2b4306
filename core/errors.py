"""Errors a person can act on. The CLI prints their message as one line; the app shows it."""

from __future__ import annotations


class MemdeckError(Exception):
    """A user-facing failure: bad input, a missing store, a refused action."""

    exit_code = 2


class NotFound(MemdeckError):
    """No memory with that id is visible in the caller's scope."""

    exit_code = 3


class StoreLocked(MemdeckError):
    """Another process holds the exclusive store lock (a purge is running)."""

    exit_code = 4


class FileBusy(MemdeckError):
    """Another process holds a file memdeck needs (its flock did not come free in time): retry, nothing is
    damaged."""


class IntegrityError(MemdeckError):
    """Verification failed: a receipt, a chain or a stored row does not check out."""

    exit_code = 5
