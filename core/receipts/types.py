"""The receipt as a type: each field of ``memdeck.deletion-receipt/1`` (docs/receipts.md), its entries and checks.

The reserved fields (``format`` … ``signature``) are always present; the others were added by later
versions of memdeck, so an older receipt may lack them (``NotRequired``). A receipt read from a file is
only this shape once :func:`memdeck.core.receipts.verify.verify_receipt` accepts it: readers of files keep
using ``.get``.
"""

# No postponed annotations here: Python 3.11 reads NotRequired into __required_keys__ only from evaluated
# annotations, and the keys a receipt must have are checked at run time against them.
from typing import Literal, NotRequired, TypedDict

from memdeck.core.graph.types import GraphCounts

Outcome = Literal["verified", "checks_failed"]


class DeletedItem(TypedDict):
    """A memory asked for: never its text nor an unsalted hash."""

    id: str
    tier: str | None
    content_sha256_salted: str
    created_at: str | None


class CascadeItem(TypedDict):
    """A record removed because it depended on the deleted ones only (graph rows included)."""

    id: str
    tier: str | None
    why: str


class Check(TypedDict):
    """What the purge verified by reading the store back."""

    name: str
    passed: bool
    detail: NotRequired[str]


class TraceScrubCounts(TypedDict):
    """Rows deleted from each table of the trace log."""

    traces: int
    trace_candidates: int
    judgments: int
    feedback: int
    injections: int


class TraceScrub(TypedDict):
    """The trace log's scrub: rows deleted, whether the file was rewritten into a fresh one, and when the scrub
    began (naive UTC): rows recorded after it are questions asked after the forget, not copies of it."""

    deleted: TraceScrubCounts
    rewritten: bool
    scrubbed_at: NotRequired[str]


class VaultShred(TypedDict):
    """A whole principal's redaction vault destroyed, and how many values it held."""

    principal_vault_destroyed: bool
    tokens: int


class RescanMemory(TypedDict):
    """A memory a re-scan redacted: the value kinds and columns, never the values."""

    id: str
    tier: str
    kinds: dict[str, int]  # value kind -> how many
    columns: list[str]


class RescanHistory(TypedDict):
    """An earlier version (edit history) a re-scan redacted."""

    memory_id: str
    version: int
    kinds: dict[str, int]  # value kind -> how many


class RescanSummary(TypedDict):
    redacted: list[RescanMemory]
    history: list[RescanHistory]


class ReceiptExtra(TypedDict, total=False):
    """The fields beside the reserved ones that a purge, re-scan or recheck adds (:meth:`ReceiptBook.issue`);
    later versions of memdeck added them, so an older receipt may lack any of them."""

    outcome: Outcome
    trigger: str  # request, principal, ttl, limit, rescan or recheck
    whole_principal: bool
    history_versions: int
    cascade_deleted: int
    cascade_updated: int
    rechecks: str
    rescan: RescanSummary
    resumed: bool
    tombstones: int
    graph: GraphCounts
    fragments_rewritten: int
    rows_rewritten: int
    history_rows_rewritten: int
    trace_scrub: TraceScrub | list[TraceScrub]
    vault: VaultShred
    vault_pruned: int
    operator_vault_pruned: int | str


class Receipt(ReceiptExtra):
    """One deletion receipt, as signed and written to ``receipts/<issued_at>_<receipt_id>.json``."""

    format: str
    receipt_id: str
    issued_at: str
    principal: str
    reason: str
    deleted: list[DeletedItem]
    cascade: list[CascadeItem]
    actions: list[str]
    checks: list[Check]
    previous_receipt_sha256: str | None
    public_key: str
    signature: str


class ReceiptOutcome(TypedDict):
    """A receipt's outcome as its checks record it; a failed one may be settled by a verified recheck."""

    receipt_id: str
    outcome: str
    failed: list[str]
    settled_by: str | None
    machine: NotRequired[str | None]


class VerifyReportJSON(TypedDict):
    """What ``memdeck receipts verify --json`` prints."""

    ok: bool
    problems: list[str]
    checked: int
    warnings: list[str]
    public_key: str | None
    key_source: str
    head_count: int | None
    outcomes: list[ReceiptOutcome]
    unverified: list[str]


class ReceiptRow(TypedDict):
    """One line of ``memdeck receipts list``."""

    receipt_id: str | None
    issued_at: str | None
    principal: str | None
    reason: str | None
    n_deleted: int
    n_cascade: int
    all_checks_passed: bool
    outcome: str
    settled_by: str | None
    path: str | None
    issued_by: NotRequired[str]
