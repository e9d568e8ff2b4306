"""Where the repository's files are, for tests that read its docs, bench scripts or the shared data beside it."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]  # the repository: README.md, docs/, bench/
