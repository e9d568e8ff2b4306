"""Signed, chained deletion receipts. The format is specified in docs/receipts.md.

``format`` holds the byte-level rules (canonical JSON, hashes), ``keys`` the signing key and salt on disk,
``verify`` the checks of one receipt or file, ``book`` a store's receipts (issue, list, chain), ``markdown``
the summary a person can email.
"""

from __future__ import annotations

from memdeck.core.receipts.book import ReceiptBook
from memdeck.core.receipts.format import FORMAT, canonical_json, receipt_sha256, salted_hash
from memdeck.core.receipts.markdown import to_markdown
from memdeck.core.receipts.types import Receipt, ReceiptRow
from memdeck.core.receipts.verify import VerifyReport, verify_file, verify_receipt

__all__ = [
    "FORMAT",
    "Receipt",
    "ReceiptBook",
    "ReceiptRow",
    "VerifyReport",
    "canonical_json",
    "receipt_sha256",
    "salted_hash",
    "to_markdown",
    "verify_file",
    "verify_receipt",
]
