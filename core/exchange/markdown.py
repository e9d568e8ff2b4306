"""Markdown memory files (MEMORY.md and friends): chunked by heading, re-imported and synced by chunk hash."""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from memdeck.core import filters as F
from memdeck.core.errors import MemdeckError
from memdeck.core.exchange.importer import MAX_CHUNK_CHARS, Importer, ProgressFn
from memdeck.core.records import (
    MemoryInput,
    check_principal,
    check_text,
    now,
    sha256_text,
)

if TYPE_CHECKING:
    from memdeck.core.config import SyncSettings
    from memdeck.core.storage.engine import Engine

# --- Markdown ---------------------------------------------------------------------------------------

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_COMMENT = re.compile(r"^\s*<!--.*-->\s*$")  # a comment-only line (e.g. a file header) is not content
_SKIP_DIRS = {"node_modules", "__pycache__", ".git", ".venv", "venv"}


@dataclass
class Chunk:
    """A heading's section of a Markdown file: its text, heading path and 1-based inclusive lines.

    ``text`` is the section's lines as written (its heading line included); ``title`` is the section's own
    heading without its ``#`` marks ("" before the first heading). :func:`memory_text` makes what is stored.
    """

    heading: str
    start: int
    end: int
    text: str
    title: str = ""


def memory_text(chunk: Chunk) -> str:
    """What a section is stored as: its title on the first line (the ``#`` marks dropped), then its lines
    as written, so lists, numbered steps and code blocks keep their lines. Comment-only lines outside code
    go; trailing spaces go. The heading path stays in the memory's ``meta.source.heading``."""
    lines = chunk.text.split("\n")
    if lines and not _FENCE.match(lines[0]) and _HEADING.match(lines[0]):
        lines = lines[1:]
    body: list[str] = []
    fenced = False
    for line in lines:
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced and _COMMENT.match(line):
            continue
        body.append(line.rstrip())
    while body and not body[0].strip():
        body = body[1:]
    while body and not body[-1].strip():
        body = body[:-1]
    return "\n".join([chunk.title, *body] if chunk.title else body)


def chunk_digest(chunk: Chunk) -> str:
    """A section's identity (``meta.chunk_sha256``): its source lines with all whitespace folded, the digest
    a section has had since the first import, so a folder imported before is found unchanged."""
    return sha256_text(" ".join(chunk.text.split()))


_DATED_NAME = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?!\d)")


def note_date(rel: str, at: datetime | None = None) -> datetime | None:
    """The day a dated note is about, from its file name (``memory/2025-03-04.md``,
    ``2025-03-04-standup.md``): midnight UTC of that day. None for other names, impossible dates and days
    after ``at`` (default: now)."""
    match = _DATED_NAME.match(PurePosixPath(rel).name)
    if match is None:
        return None
    try:
        day = datetime(int(match.group(1)), int(match.group(2)), int(match.group(3)), tzinfo=UTC)
    except ValueError:
        return None
    if day.year < 1000 or day > (at or now()):
        return None
    return day


def chunk_markdown(text: str, max_chars: int = MAX_CHUNK_CHARS) -> list[Chunk]:
    """Split Markdown at ATX headings (not inside code fences). Long sections split at blank lines."""
    lines = text.splitlines()
    sections: list[tuple[str, str, int, list[str]]] = []
    path: list[tuple[int, str]] = []
    current: list[str] = []
    start = 1
    heading = title = ""
    fenced = False
    for n, line in enumerate(lines, start=1):
        if _FENCE.match(line):
            fenced = not fenced
        m = None if fenced else _HEADING.match(line)
        if m:
            sections.append((heading, title, start, current))
            level = len(m.group(1))
            title = m.group(2).strip()
            path = [p for p in path if p[0] < level] + [(level, title)]
            heading = " > ".join(p[1] for p in path)
            current, start = [line], n
        else:
            current.append(line)
    sections.append((heading, title, start, current))
    chunks: list[Chunk] = []
    for head, own_title, first, body in sections:
        # A heading with nothing under it says nothing on its own; its title lives on in its children's path.
        content = [ln for ln in body if ln.strip() and not _HEADING.match(ln) and not _COMMENT.match(ln)]
        if not content:
            continue
        for sub_start, sub_lines in _split_long(first, body, max_chars):
            while sub_lines and not sub_lines[-1].strip():
                sub_lines = sub_lines[:-1]
            while sub_lines and not sub_lines[0].strip():
                sub_lines, sub_start = sub_lines[1:], sub_start + 1
            if sub_lines:
                chunks.append(
                    Chunk(head, sub_start, sub_start + len(sub_lines) - 1, "\n".join(sub_lines), own_title)
                )
    return chunks


def _split_long(first: int, body: list[str], max_chars: int) -> list[tuple[int, list[str]]]:
    if sum(len(ln) + 1 for ln in body) <= max_chars:
        return [(first, body)]
    parts: list[tuple[int, list[str]]] = []
    cur: list[str] = []
    cur_start = first
    size = 0
    for n, line in enumerate(body):
        if (
            cur
            and (size + len(line) + 1 > max_chars)
            and (not line.strip() or size + len(line) + 1 > 2 * max_chars)
        ):
            parts.append((cur_start, cur))
            cur, cur_start, size = [], first + n, 0
        cur.append(line)
        size += len(line) + 1
    if cur:
        parts.append((cur_start, cur))
    return parts


def markdown_files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in _SKIP_DIRS)
        for name in sorted(filenames):
            if name.lower().endswith((".md", ".markdown")) and not name.startswith("."):
                found.append(Path(dirpath) / name)
    return found


class _NotAFile(Exception):
    """A path in the folder that is not a regular file inside it: skipped with one line."""


def _read_regular(file: Path, root: Path) -> bytes:
    """The bytes of a regular file inside ``root``; a FIFO, a device or a link leading outside is refused.

    The file is opened without blocking (a FIFO would otherwise wait for a writer for ever) and checked on
    the open descriptor, so a path swapped for something else after the check is refused too.
    """
    target = file
    if file.is_symlink():
        target = file.resolve()
        if not target.is_relative_to(root):
            raise _NotAFile("a symbolic link to a file outside the folder; skipped")
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(target, flags)
    except OSError:
        if file is not target or not os.path.islink(target):
            raise
        raise _NotAFile("a symbolic link that changed while reading; skipped") from None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise _NotAFile("not a regular file (a FIFO, device or socket); skipped")
        return fh.read()


def _chunk_key(root: str, rel: str, heading: str, occurrence: int) -> str:
    return "md:" + sha256_text("\x00".join([root, rel, heading, str(occurrence)]))


@dataclass(frozen=True)
class RemovalLimit:
    """How much one sync may forget before it asks to be told to go ahead (``[sync]`` in the config).

    An emptied or unmounted folder looks exactly like one whose notes were all deleted on purpose; past
    this limit a sync forgets nothing (and writes nothing) unless it is confirmed.
    """

    count: int  # ``max_remove``: more memories than this
    fraction: float  # ``max_remove_fraction``: more than this share of the folder's memories

    @classmethod
    def from_settings(cls, settings: SyncSettings) -> RemovalLimit:
        return cls(settings.max_remove, settings.max_remove_fraction)

    def exceeded(self, removing: int, existing: int) -> bool:
        return removing > self.count or (existing > 0 and removing > self.fraction * existing)


class SyncRefused(MemdeckError):
    """A sync would forget more than its limit allows; nothing was changed."""


@dataclass
class _File:
    rel: str
    chunks: list[Chunk] | None  # None: skipped or unreadable, which is not deleted


def _read_files(imp: Importer, root: Path, files: list[Path]) -> list[_File]:
    out = []
    for file in files:
        rel = file.relative_to(root).as_posix()
        try:
            text = _read_regular(file, root).decode("utf-8-sig")
        except _NotAFile as exc:
            imp.problem(rel, str(exc))
        except OSError as exc:
            imp.problem(rel, f"cannot read: {exc.strerror or exc}")
        except UnicodeDecodeError:
            imp.problem(rel, "not valid UTF-8")
        else:
            out.append(_File(rel, chunk_markdown(text)))
            continue
        out.append(_File(rel, None))
    return out


def _planned_keys(read: list[_File], root_s: str, index: dict[str, list[dict[str, Any]]]) -> set[str]:
    """The import keys this run keeps: every chunk found, and every key of a file that could not be read."""
    seen: set[str] = set()
    for f in read:
        if f.chunks is None:
            _keep_file_keys(index, root_s, f.rel, seen)
            continue
        occurrences: dict[str, int] = {}
        for chunk in f.chunks:
            occurrences[chunk.heading] = occurrences.get(chunk.heading, 0) + 1
            seen.add(_chunk_key(root_s, f.rel, chunk.heading, occurrences[chunk.heading]))
    return seen


def import_markdown(
    imp: Importer,
    path: Path,
    principal: str | None,
    progress: ProgressFn | None,
    *,
    remove: bool,
    dry_run: bool = False,
    limit: RemovalLimit | None = None,
) -> None:
    """Import (``remove=False``) or sync a folder. A sync first works out what it would forget: past
    ``limit`` it raises :class:`SyncRefused` before changing anything; ``dry_run`` only fills the report's
    ``plan``."""
    if not principal:
        raise MemdeckError("importing Markdown files needs --principal (whose memories they are)")
    principal = check_principal(principal)
    if not path.exists():
        raise MemdeckError(f"no such file or folder: {path}")
    root = (path if path.is_dir() else path.parent).resolve()
    root_s = str(root)
    files = markdown_files(path.resolve())
    if not files and not remove:
        raise MemdeckError(f"no Markdown files (*.md) in {path}")
    tier = imp.tier or "semantic"
    index = imp.keys(principal)
    read = _read_files(imp, root, files)
    seen_keys = _planned_keys(read, root_s, index)
    gone_files: list[str] = []
    gone_sections: list[str] = []
    if remove:
        existing = 0
        for key, rows in index.items():
            for r in rows:
                meta = r["meta"]
                if (
                    r["id"] is None
                    or meta.get("import_source") != "markdown"
                    or meta.get("source_root") != root_s
                ):
                    continue
                existing += 1
                if key in seen_keys:
                    continue
                rel = (meta.get("source") or {}).get("file", "")
                is_file = bool(rel) and (root / rel).is_file()
                (gone_sections if is_file else gone_files).append(r["id"])
                imp.plan("remove", f"{rel} ({(meta.get('source') or {}).get('heading') or 'top'})", r["id"])
        # A section whose text changed is forgotten and written again: rewrites count against the limit like
        # removed sections (a rewrite of every section, by a merge gone wrong or a placeholder, loses as
        # much), except a single edited section, which is what editing a note is.
        replacing = _replacing(read, root_s, index)
        replacing = replacing if replacing > 1 else 0
        removing = len(gone_files) + len(gone_sections) + replacing
        if not dry_run and limit is not None and limit.exceeded(removing, existing):
            raise SyncRefused(
                f"sync of {root_s} would forget {removing} of its {existing} memories ({replacing} of them "
                f"replaced by changed text; limit: more than {limit.count} or more than {limit.fraction:.0%}); "
                "nothing was changed. See them with --dry-run; go ahead with --yes"
            )
    for n, f in enumerate(read, start=1):
        if progress:
            progress(n - 1, len(files))
        if f.chunks is None:
            continue
        rel = f.rel
        dated = note_date(rel)  # a dated note (memory/2025-03-04.md) is about that day, not the import's
        occurrences: dict[str, int] = {}
        for chunk in f.chunks:
            occurrences[chunk.heading] = occurrences.get(chunk.heading, 0) + 1
            key = _chunk_key(root_s, rel, chunk.heading, occurrences[chunk.heading])
            where = f"{rel} lines {chunk.start}-{chunk.end}"
            text = memory_text(chunk)
            try:  # one bad section (a NUL byte, say) is skipped, not the batch it would have been written in
                check_text(text)
            except MemdeckError as exc:
                imp.problem(where, str(exc))
                continue
            digest = chunk_digest(chunk)
            source = {"file": rel, "lines": [chunk.start, chunk.end], "heading": chunk.heading}
            rows = [r for r in index.get(key, []) if r["id"] is not None]
            same = [r for r in rows if r["meta"].get("chunk_sha256") == digest]
            if same:
                imp.report.unchanged += 1
                stale = [r for r in rows if r not in same]
                if stale and not dry_run:
                    imp.queue_stale(principal, stale)
                if same[0]["meta"].get("source") != source:
                    imp.report.moved += 1
                    imp.plan("update", f"{where} (lines moved)", same[0]["id"])
                    if not dry_run:
                        _update_source(imp.store, same[0], principal, source)
                continue
            if rows:
                imp.report.replaced += 1
                imp.plan("update", f"{where} (text changed)", rows[0]["id"])
                if dry_run:
                    continue
                imp.queue_stale(principal, rows)
            elif imp.known_text(principal, tier, text):
                imp.report.unchanged += 1
                continue
            elif dry_run:
                imp.report.imported += 1
                imp.plan("add", where, None)
                continue
            meta = {
                "import_key": key,
                "import_source": "markdown",
                "source_root": root_s,
                "source": source,
                "chunk_sha256": digest,
            }
            item = MemoryInput(
                text=text,
                tier=tier,
                principal=principal,
                agent=imp.agent or "import",
                tags=["markdown"],
                meta=meta,
                created_at=dated,
            )
            index[key] = [r for r in index.get(key, []) if r["id"] is not None]
            imp.add(item, key, where)
    if dry_run:
        imp.report.removed += len(gone_files) + len(gone_sections)
        if progress:
            progress(len(files), len(files))
        return
    imp.flush()
    if gone_files:
        imp.report.receipts += imp.forget(principal, gone_files, "sync: file deleted")
    if gone_sections:
        imp.report.receipts += imp.forget(principal, gone_sections, "sync: chunk removed")
    imp.report.removed += len(gone_files) + len(gone_sections)
    if progress:
        progress(len(files), len(files))


def _replacing(read: list[_File], root_s: str, index: dict[str, list[dict[str, Any]]]) -> int:
    """How many stored memories of the folder a run would forget because their section's text changed."""
    count = 0
    for f in read:
        occurrences: dict[str, int] = {}
        for chunk in f.chunks or []:
            occurrences[chunk.heading] = occurrences.get(chunk.heading, 0) + 1
            rows = [
                r
                for r in index.get(_chunk_key(root_s, f.rel, chunk.heading, occurrences[chunk.heading]), [])
                if r["id"] is not None
            ]
            digest = chunk_digest(chunk)
            if rows and not any(r["meta"].get("chunk_sha256") == digest for r in rows):
                count += len(rows)
    return count


def _keep_file_keys(index: dict[str, list[dict[str, Any]]], root: str, rel: str, seen: set[str]) -> None:
    for key, rows in index.items():
        if any(
            r["meta"].get("source_root") == root and (r["meta"].get("source") or {}).get("file") == rel
            for r in rows
        ):
            seen.add(key)


def _update_source(store: Engine, row: dict[str, Any], principal: str, source: dict[str, Any]) -> None:
    """Lines moved but the text did not: only the recorded line range changes."""
    meta = {**row["meta"], "source": source}
    with store.lock.shared():
        store.table(row["tier"]).update(
            where=F.all_of(F.eq("id", row["id"]), F.eq("principal", principal)),
            values={"meta": json.dumps(meta, ensure_ascii=False, sort_keys=True)},
        )
    row["meta"] = meta
