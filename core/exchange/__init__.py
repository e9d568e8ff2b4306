"""Import, export and folder sync.

Formats:

- **memdeck JSONL** (what :func:`export_jsonl` writes): a header line ``{"format": "memdeck.export/1", ...}``
  then one memory a line in the shape of :meth:`Memory.to_json`. Records with an ``id`` are restored as
  they were (ids, tiers, principals, text, tags, importance, pinned, state, timestamps, access counts,
  tier fields); only the vectors are recomputed, with this store's model. A record already in the store
  (same id) is skipped, so an import can be re-run. Records without an ``id`` (hand-written JSONL) are
  remembered as new memories and deduplicated on ``meta.import_key``, a hash of the record.
- **Markdown memory files** (a folder with ``MEMORY.md``, ``memory/*.md``, ... or one ``.md`` file):
  chunked by heading; each chunk keeps its file, heading path and line range in ``meta.source`` and the
  hash of its text in ``meta.chunk_sha256``. Re-importing adds nothing for unchanged chunks; a changed
  chunk is written anew and the old one is forgotten (purged, with a receipt). :func:`sync_markdown` also
  forgets the chunks of deleted files and removed sections.
- **mem0 export**: a JSON list of ``{id, memory, user_id, created_at, metadata}`` (or ``{"results": [...]}``),
  imported as semantic facts, deduplicated on the mem0 id.

Every write goes through the store in batches (one commit per tier per batch), so an interrupted import
leaves whole records only and a re-run adds no duplicates. Redaction applies to everything written.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from memdeck.core.errors import MemdeckError
from memdeck.core.exchange.export import export_jsonl, export_record, iter_export
from memdeck.core.exchange.importer import (
    BATCH,
    FORMATS,
    Importer,
    ImportReport,
    ProblemFn,
    ProgressFn,
    detect_format,
    restore_many,
)
from memdeck.core.exchange.jsonl import import_jsonl, memory_from_export
from memdeck.core.exchange.markdown import RemovalLimit, SyncRefused, chunk_markdown, import_markdown
from memdeck.core.exchange.mem0 import import_mem0
from memdeck.core.records import check_principal

if TYPE_CHECKING:
    from memdeck.core.storage.engine import Engine

__all__ = [
    "ImportReport",
    "RemovalLimit",
    "SyncRefused",
    "chunk_markdown",
    "detect_format",
    "export_jsonl",
    "export_record",
    "import_path",
    "iter_export",
    "memory_from_export",
    "restore_many",
    "sync_markdown",
]


# --- entry points -----------------------------------------------------------------------------------


def import_path(
    store: Engine,
    path: str | Path,
    *,
    principal: str | None = None,
    agent: str | None = None,
    fmt: str = "auto",
    tier: str | None = None,
    on_problem: ProblemFn | None = None,
    progress: ProgressFn | None = None,
    batch_size: int = BATCH,
) -> ImportReport:
    """Import a file or folder into the store. See the module docstring for the formats."""
    if fmt not in FORMATS:
        raise MemdeckError(f"unknown format {fmt!r}; use one of: {', '.join(FORMATS)}")
    src = Path(path).expanduser()
    if not src.exists():
        raise MemdeckError(f"no such file or folder: {src}")
    if principal is not None:
        principal = check_principal(principal)
    fmt = detect_format(src) if fmt == "auto" else fmt
    if src.is_dir() and fmt != "markdown":
        raise MemdeckError(f"{src} is a folder; only --format markdown imports a folder")
    report = ImportReport(source=str(src), format=fmt)
    imp = Importer(store, report, agent=agent, tier=tier, on_problem=on_problem, batch_size=batch_size)
    if fmt == "jsonl":
        import_jsonl(imp, src, principal, progress)
    elif fmt == "mem0":
        import_mem0(imp, src, principal, progress)
    else:
        import_markdown(imp, src, principal, progress, remove=False)
    return report


def sync_markdown(
    store: Engine,
    folder: str | Path,
    principal: str,
    *,
    agent: str | None = None,
    tier: str | None = None,
    on_problem: ProblemFn | None = None,
    progress: ProgressFn | None = None,
    batch_size: int = BATCH,
    dry_run: bool = False,
    confirm: bool = False,
) -> ImportReport:
    """Re-index a folder of Markdown memory files: new and changed chunks written, changed and removed
    chunks (and those of deleted files) forgotten with a receipt.

    A sync that would forget more than ``[sync] max_remove`` memories, or more than
    ``max_remove_fraction`` of the folder's, raises :class:`SyncRefused` and changes nothing unless
    ``confirm`` is true (an emptied or unmounted folder looks like one whose notes were all deleted).
    ``dry_run`` changes nothing and lists what would be added, updated and removed in ``report.plan``.
    """
    src = Path(folder).expanduser()
    if not src.is_dir():
        raise MemdeckError(f"{src} is not a folder")
    limit = None if confirm else RemovalLimit.from_settings(store.settings.sync)
    report = ImportReport(source=str(src), format="markdown", dry_run=dry_run)
    imp = Importer(store, report, agent=agent, tier=tier, on_problem=on_problem, batch_size=batch_size)
    import_markdown(imp, src, principal, progress, remove=True, dry_run=dry_run, limit=limit)
    return report
