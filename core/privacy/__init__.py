"""Privacy: write-time redaction of PII and secrets, and the per-principal encrypted token vault."""

from __future__ import annotations

from memdeck.core.privacy.redact import KINDS, TOKEN_RE, Finding, RedactionResult, Redactor
from memdeck.core.privacy.vault import Vault

__all__ = ["KINDS", "TOKEN_RE", "Finding", "RedactionResult", "Redactor", "Vault"]
