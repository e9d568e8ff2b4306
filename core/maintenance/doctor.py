"""Store health check: every table opens and scans, every row's text still matches its ``content_sha256``.

Lance keeps no checksums of its own, so a flipped bit in a data file either fails a read (a broken page
layout, invalid UTF-8) or silently changes a value. The first is found by reading every fragment, the second
by hashing each row's text again. When a fragment cannot be read, the check narrows it down: which file,
which columns, which ids it can still read and which rows it cannot.

Nothing here writes to the store.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from memdeck.core.forget import pending
from memdeck.core.records import GRAPH_TABLES, HISTORY, MAX_TIME, MIN_TIME, STORED_TIERS, sha256_text
from memdeck.core.storage.browse import principals

if TYPE_CHECKING:
    from memdeck.core.storage.engine import Engine

SCAN_BATCH = 1024
# Reads spent narrowing a broken fragment down to rows; past it, the fragment is reported as a whole.
NARROW_BUDGET = 400


@dataclass
class Problem:
    """One thing wrong, with what a person needs to act on it."""

    check: str  # table_open | unreadable_data | row_hash | unreadable_time | index | pending_purge | receipts
    # | receipt_outcome | auxiliary_file | vault | config | embedding
    message: str
    table: str | None = None
    ids: list[str] = field(default_factory=list)  # the rows affected, where known
    fragment: int | None = None
    files: list[str] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)
    readable_ids: list[str] = field(default_factory=list)  # rows of a broken fragment that still read whole

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"check": self.check, "message": self.message}
        for key in ("table", "fragment"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        for key in ("ids", "files", "columns", "readable_ids"):
            if getattr(self, key):
                out[key] = list(getattr(self, key))
        return out


@dataclass
class TableHealth:
    name: str
    rows: int = 0  # rows read and checked
    fragments: int = 0
    hashed: int = 0  # rows whose text hash was checked
    ok: bool = True

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "rows": self.rows,
            "fragments": self.fragments,
            "hashed": self.hashed,
            "ok": self.ok,
        }


@dataclass
class DoctorReport:
    store: str
    storage: str
    tables: list[TableHealth] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    receipts_checked: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def affected_ids(self) -> list[str]:
        return list(dict.fromkeys(i for p in self.problems for i in p.ids))

    def to_json(self) -> dict[str, Any]:
        return {
            "store": self.store,
            "storage": self.storage,
            "ok": self.ok,
            "tables": [t.to_json() for t in self.tables],
            "receipts_checked": self.receipts_checked,
            "problems": [p.to_json() for p in self.problems],
            "affected_ids": self.affected_ids,
        }

    def lines(self) -> list[str]:
        out = [f"store {self.store} (tables: {self.storage})"]
        for t in self.tables:
            mark = "ok" if t.ok else "PROBLEM"
            out.append(f"  {t.name:<11} {t.rows:>8} rows  {t.fragments:>4} fragments  {mark}")
        if self.receipts_checked:
            out.append(f"  receipts    {self.receipts_checked:>8} checked")
        for p in self.problems:
            where = f"{p.table}: " if p.table else ""
            out.append(f"problem: {where}{p.message}")
            if p.files:
                out.append(f"    files: {', '.join(p.files)}")
            if p.ids:
                out.append(f"    affected ids: {', '.join(p.ids)}")
            if p.readable_ids:
                out.append(f"    still readable: {len(p.readable_ids)} ids of that fragment")
        out.append("no problems found" if self.ok else f"{len(self.problems)} problem(s) found")
        return out


def diagnose(
    store: Engine, *, tables: list[str] | None = None, receipts: bool = True, quiet: bool = False
) -> DoctorReport:
    """Check a store (see the module docstring); ``quiet`` keeps the Rust reader's panic text off fd 2."""
    from memdeck.core.storage.objectstore import StorageLocation

    location = StorageLocation(
        None if store.uri == str(store.layout.lance) else store.uri, dict(store.storage_options or {})
    )
    report = DoctorReport(store=str(store.root), storage=location.describe())
    # has_table first: store.table() would create a missing table, and doctor never writes.
    names = [t for t in (tables or (*STORED_TIERS, HISTORY, *GRAPH_TABLES)) if store.has_table(t)]
    with _silenced_stderr(quiet):
        for name in names:
            report.tables.append(_check_table(store, name, report.problems))
    _check_pending_purges(store, report)
    _check_auxiliary(store, report)
    _check_config(store, report)
    _check_embedding(store, report, names)
    if receipts:
        _check_receipts(store, report)
    return report


def _model_key(name: str) -> str:
    return name.strip().lower().removeprefix("sentence-transformers/")


def _check_embedding(store: Engine, report: DoctorReport, names: list[str]) -> None:
    """The configured model is the one the store's vectors were made with, and every table's vectors have the
    store's dimensions: vectors of two models are not comparable, and a recall with the wrong one fails."""
    built, configured = store.embedding_model, store.embedder.name
    if built and configured != "unavailable" and _model_key(built) != _model_key(configured):
        report.problems.append(
            Problem(
                "embedding",
                f"the store's vectors were made with {built!r} ({store.dim} dimensions) but "
                f"embedding.model is {configured!r}: recall would compare vectors of two models. Set embedding.model "
                f"to {built!r}, or export and import into a new store to move to the new model",
            )
        )
    for name in names:
        if name not in STORED_TIERS:
            continue
        try:
            field = store.table(name).schema.field("vector")
        except Exception:  # noqa: BLE001 - a table that does not open is reported by its own check
            continue
        size = getattr(field.type, "list_size", None)
        if size is not None and int(size) != store.dim:
            report.problems.append(
                Problem(
                    "embedding",
                    f"its vectors have {size} dimensions but the store records {store.dim} "
                    f"({store.layout.meta}): restore that file or the table from a backup",
                    table=name,
                )
            )


def _check_config(store: Engine, report: DoctorReport) -> None:
    """Settings memdeck does not read (a misspelt section or key is otherwise silently ignored)."""
    for line in store.settings.unknown:
        report.problems.append(Problem("config", f"config.toml: {line}; it is ignored"))


def _check_auxiliary(store: Engine, report: DoctorReport) -> None:
    """The files a forget writes or scrubs besides the tables: each damaged one is named with what to do
    (the same advice a forget gives when it refuses)."""
    from memdeck.core.forget import preflight
    from memdeck.core.privacy.vault import KEY_LEN, MAGIC, NONCE_LEN, OPERATOR_VAULT, principal_dirname

    for probe in preflight.STORE_PROBES:
        advice = probe(store)
        if advice:
            report.problems.append(Problem("auxiliary_file", advice))
    vault_root = Path(store.layout.vault)
    if not vault_root.is_dir():
        return
    # A vault decrypts only with its principal's name: the store's principals (and the operator's) are tried.
    known = {principal_dirname(p): p for p in [*principals(store), OPERATOR_VAULT]}
    for folder in sorted(p for p in vault_root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        key, data = folder / "key", folder / "vault.bin"
        problem = None
        if folder.name in known and (damage := preflight.vault_damage(store, known[folder.name])):
            problem = damage
        elif key.exists() and len(key.read_bytes()) != KEY_LEN:
            problem = "its key file is damaged"
        elif data.exists() and (
            not data.read_bytes().startswith(MAGIC) or data.stat().st_size < len(MAGIC) + NONCE_LEN + 16
        ):
            problem = "its vault file is truncated or not a memdeck vault"
        elif data.exists() and not key.exists():
            problem = "its key file is missing (its values can never be read)"
        if problem:
            report.problems.append(
                Problem(
                    "vault",
                    f"the redaction vault in {folder} is damaged: {problem}. A forget of that principal's "
                    "memories is refused until it is restored from a backup; forgetting the whole principal "
                    "(`memdeck forget --principal P`) destroys it",
                    files=[str(folder)],
                )
            )


def _check_pending_purges(store: Engine, report: DoctorReport) -> None:
    """A purge journal still there after the open means forgotten text may still be on disk."""
    for path in pending(store):
        report.problems.append(
            Problem(
                "pending_purge",
                f"an interrupted forget ({path.name}) is not finished; it completes on the next open that gets "
                "the store lock (stop other memdeck processes and run any command)",
                files=[str(path)],
            )
        )


# --- tables -----------------------------------------------------------------------------------------


def _check_table(store: Engine, name: str, problems: list[Problem]) -> TableHealth:
    health = TableHealth(name)
    try:
        ds = store.table(name).to_lance()
        fragments = ds.get_fragments()
    except Exception as exc:  # noqa: BLE001 - any failure to open is the finding itself
        problems.append(Problem("table_open", f"the table does not open: {_short(exc)}", table=name))
        health.ok = False
        return health
    health.fragments = len(fragments)
    columns = list(ds.schema.names)
    # The edit history names its rows by the memory they belong to.
    id_col = "id" if "id" in columns else "memory_id"
    hashable = "text" in columns and "content_sha256" in columns and id_col in columns
    # Every column is read (that is the readability check); only these become Python objects.
    hashed_cols = [c for c in (id_col, "text", "content_sha256", "state") if c in columns]
    time_cols = [f.name for f in ds.schema if pa.types.is_timestamp(f.type)] if id_col in columns else []
    before = len(problems)
    for frag in fragments:
        try:
            for batch in frag.to_batches(columns=columns, batch_size=SCAN_BATCH):
                health.rows += batch.num_rows
                if hashable:
                    health.hashed += _hash_batch(
                        _columns(batch, hashed_cols), id_col, name, frag.fragment_id, problems
                    )
                if time_cols:
                    _time_batch(batch, id_col, time_cols, name, frag.fragment_id, problems)
        except Exception as exc:  # noqa: BLE001
            problems.append(_narrow(ds, frag, columns, id_col, name, exc))
    if len(problems) == before:
        _check_indices(store, name, problems)
    health.ok = len(problems) == before
    return health


_MIN_US = int(MIN_TIME.timestamp()) * 1_000_000
_MAX_US = int(MAX_TIME.timestamp()) * 1_000_000


def _time_batch(
    batch: Any, id_col: str, time_cols: list[str], table: str, fragment: int, problems: list[Problem]
) -> None:
    """Rows whose times cannot be read back (outside the years 1000-8999 that ``records.parse_time``
    accepts): written before times were validated. Read as raw microseconds, so a value beyond what Python's
    datetime holds is found rather than failing the scan."""
    bad: dict[str, list[str]] = {}
    ids = batch.column(id_col).to_pylist()
    for col in time_cols:
        raw = pc.cast(batch.column(col), pa.int64()).to_pylist()
        for mem_id, micros in zip(ids, raw, strict=True):
            if micros is not None and not _MIN_US <= micros < _MAX_US:
                bad.setdefault(mem_id, []).append(col)
    if bad:
        cols = sorted({c for names in bad.values() for c in names})
        problems.append(
            Problem(
                "unreadable_time",
                f"{len(bad)} row(s) with a time outside the years 1000-8999 in {', '.join(cols)} "
                f"(fragment {fragment}; written before times were validated: edit or forget them)",
                table=table,
                ids=list(bad),
                fragment=fragment,
                columns=cols,
            )
        )


def _columns(batch: Any, names: list[str]) -> dict[str, list[Any]]:
    return {n: batch.column(n).to_pylist() for n in names}


def _hash_batch(
    data: dict[str, list[Any]], id_col: str, table: str, fragment: int, problems: list[Problem]
) -> int:
    states = data.get("state") or [None] * len(data[id_col])
    checked = 0
    bad: list[str] = []
    for mem_id, text, digest, state in zip(
        data[id_col], data["text"], data["content_sha256"], states, strict=True
    ):
        if state == "forgotten-pending":  # mid-purge: its text may already be gone, the purge finishes it
            continue
        checked += 1
        if text is None or digest is None or sha256_text(text) != digest:
            bad.append(mem_id)
    if bad:
        problems.append(
            Problem(
                "row_hash",
                f"{len(bad)} row(s) whose text no longer matches content_sha256 (fragment {fragment})",
                table=table,
                ids=bad,
                fragment=fragment,
            )
        )
    return checked


def _narrow(ds: Any, frag: Any, columns: list[str], id_col: str, table: str, error: Exception) -> Problem:
    """A fragment failed to read: find its files, the columns that fail, and the rows that still read."""
    files = [_join(ds.uri, "data", f.path) for f in frag.data_files()]
    problem = Problem(
        "unreadable_data",
        f"fragment {frag.fragment_id} cannot be read: {_short(error)}",
        table=table,
        fragment=frag.fragment_id,
        files=files,
    )
    problem.columns = [c for c in columns if not _reads(frag, [c])]
    ids = _read_ids(frag, id_col)
    if ids is None:
        problem.message += "; its ids cannot be read either"
        return problem
    budget = [NARROW_BUDGET]
    bad_cols = problem.columns or columns
    good_rows = _readable_ranges(frag, [id_col, *[c for c in bad_cols if c != id_col]], 0, len(ids), budget)
    if good_rows is None:  # out of budget: every row of the fragment counts as affected
        problem.ids = ids
        return problem
    readable: set[int] = set()
    for start, stop in good_rows:
        readable.update(range(start, stop))
    problem.ids = [i for n, i in enumerate(ids) if n not in readable]
    problem.readable_ids = [i for n, i in enumerate(ids) if n in readable]
    return problem


def _reads(frag: Any, columns: list[str], offset: int | None = None, limit: int | None = None) -> bool:
    try:
        frag.to_table(columns=columns, offset=offset, limit=limit)
    except Exception:  # noqa: BLE001
        return False
    return True


def _read_ids(frag: Any, id_col: str) -> list[str] | None:
    try:
        return [str(v) for v in frag.to_table(columns=[id_col])[id_col].to_pylist()]
    except Exception:  # noqa: BLE001
        return None


def _readable_ranges(
    frag: Any, columns: list[str], start: int, stop: int, budget: list[int]
) -> list[tuple[int, int]] | None:
    """Row ranges of [start, stop) that read whole, by bisection; None when the read budget runs out."""
    if start >= stop:
        return []
    if budget[0] <= 0:
        return None
    budget[0] -= 1
    if _reads(frag, columns, offset=start, limit=stop - start):
        return [(start, stop)]
    if stop - start == 1:
        return []
    mid = (start + stop) // 2
    left = _readable_ranges(frag, columns, start, mid, budget)
    right = _readable_ranges(frag, columns, mid, stop, budget)
    if left is None or right is None:
        return None
    return left + right


def _check_indices(store: Engine, name: str, problems: list[Problem]) -> None:
    """Each index answers a query; a broken index file fails searches even when the data is fine."""
    tbl = store.table(name)
    try:
        indices = list(tbl.list_indices())
    except Exception as exc:  # noqa: BLE001
        problems.append(Problem("index", f"its indices cannot be listed: {_short(exc)}", table=name))
        return
    for idx in indices:
        cols = list(idx.columns or [])
        try:
            if "text" in cols and "FTS" in str(idx.index_type).upper():
                tbl.search("memdeck", query_type="fts").limit(1).to_arrow()
            elif "vector" in cols:
                tbl.search([0.0] * store.dim, vector_column_name="vector").limit(1).to_arrow()
            else:
                tbl.index_stats(idx.name)
        except Exception as exc:  # noqa: BLE001
            problems.append(
                Problem(
                    "index",
                    f"index {idx.name} on {', '.join(cols)} fails: {_short(exc)}; rebuild it (drop and "
                    "create it again)",
                    table=name,
                    columns=cols,
                )
            )


# --- receipts ---------------------------------------------------------------------------------------


def _check_receipts(store: Engine, report: DoctorReport) -> None:
    if not store.layout.receipts.is_dir():
        return
    try:
        from memdeck.core.receipts import ReceiptBook

        result = ReceiptBook(store.root).verify_chain()
    except Exception as exc:  # noqa: BLE001
        report.problems.append(Problem("receipts", f"the receipt chain cannot be checked: {_short(exc)}"))
        return
    report.receipts_checked = result.checked
    for line in result.problems:
        report.problems.append(Problem("receipts", line))
    for o in result.unverified:
        report.problems.append(
            Problem(
                "receipt_outcome",
                f"receipt {o['receipt_id']} is signed but its purge's checks failed ({', '.join(o['failed']) or '?'}): "
                f"see `memdeck receipts show {o['receipt_id'][:12]}`, remove what the checks found, then run "
                f"`memdeck forget --recheck {o['receipt_id'][:12]}`",
            )
        )


# --- helpers ----------------------------------------------------------------------------------------


def _join(base: str, *parts: str) -> str:
    base = str(base).rstrip("/")
    if "://" in base:
        return "/".join([base, *parts])
    return os.path.join(base, *parts)


def _short(exc: BaseException, width: int = 300) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    # Lance appends the Rust source location; it helps nobody reading the report.
    cut = text.find(", /home/")
    if cut > 0:
        text = text[:cut]
    return text if len(text) <= width else text[: width - 1] + "…"


@contextlib.contextmanager
def _silenced_stderr(enabled: bool) -> Iterator[None]:
    """The Rust reader prints panic messages straight to fd 2; keep them out of the CLI's one-line output."""
    if not enabled:
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)
