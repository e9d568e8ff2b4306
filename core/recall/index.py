"""The recall index: what recall needs of one scope's rows of one tier, held in memory, rebuilt from LanceDB.

A partition holds the rows of one tier that a scope may see (the principal filter is the scan's filter,
so another principal's rows never enter it): the float32 vectors, the columns the filters and the score
read, the rest of each row as Arrow (what a candidate's Memory is made of, the vector left out) and the
postings of an in-memory BM25 (``recall.bm25``). A recall then costs one matrix-vector product and a few
array operations per tier instead of two LanceDB searches and a row-by-row read of every candidate.

LanceDB stays the store of record. A partition is loaded on the scope's first recall and follows the
table's version: on a new version only the fragments that changed are read again (new fragments, those
whose files or deletions changed; rows of fragments compaction removed are dropped), so the commit an
access-count update makes after every recall costs a read of its few new rows. Nothing is written to
disk; a purge in this process or another (the store lock's epoch) clears every partition
(``Store.refresh``). Memory is bounded by ``recall.index_max_rows`` rows in all (least recently used
partitions are dropped first); a scope with more rows than that is recalled through LanceDB.
"""

from __future__ import annotations

import copy
import json
import logging
import sys
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from memdeck.core.recall import bm25, projection, timecue
from memdeck.core.recall.scoring import frequency, reinforced, similarities
from memdeck.core.records import (
    LIST_COLUMNS,
    MAX_MICROS,
    MIN_MICROS,
    TIER_LIST_COLUMNS,
    Memory,
    table_to_memories,
)
from memdeck.core.storage.expiry import ttl_cutoff
from memdeck.core.storage.tables import HeldDataset, latest_dataset

if TYPE_CHECKING:
    from memdeck.core.filters import RecallFilter, Scope
    from memdeck.core.storage.engine import Engine

log = logging.getLogger("memdeck.recall")

MEMO_ROWS = 20_000  # converted rows kept per partition (every row of a partition this small)
NULL = np.iinfo(np.int64).min  # a missing time
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
STATE_CODES = {"active": 0, "deprecated": 1, "forgotten-pending": 2}
_TIMES = ("created_at", "expires_at", "last_accessed", "started_at")


def row_columns(tier: str) -> list[str]:
    """The columns a candidate's Memory is made of (as the LanceDB path reads them, the vector apart)."""
    return LIST_COLUMNS + TIER_LIST_COLUMNS[tier] + ["deprecation_reason", "meta"]


_LIST_FIELDS = ("tags", "events", "derived_facts", "sources", "steps", "learned_from", "unreadable_times")


def _json_copy(value: Any) -> Any:
    """A deep copy of parsed JSON (dicts, lists and scalars), three times faster than ``copy.deepcopy``."""
    if isinstance(value, dict):
        return {k: _json_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_copy(v) for v in value]
    return value if isinstance(value, str | int | float | bool | None) else copy.deepcopy(value)


def _copy(memory: Memory) -> Memory:
    """A copy whose lists and meta are its own (what ``copy.copy`` and setattr did, in a fifth of the time:
    a recall copies every candidate)."""
    fields = memory.__dict__.copy()
    for name in _LIST_FIELDS:
        value = fields[name]
        fields[name] = list(value) if value else []
    fields["meta"] = _json_copy(memory.meta) if memory.meta else {}
    out = Memory.__new__(Memory)
    out.__dict__ = fields
    return out


def micros(value: datetime) -> int:
    return (value.astimezone(UTC) - _EPOCH) // timedelta(microseconds=1)


def _times(col: pa.ChunkedArray | pa.Array) -> np.ndarray:
    values = pc.fill_null(col.cast(pa.timestamp("us", tz="UTC")).cast(pa.int64()), NULL)
    return np.asarray(values.to_numpy(zero_copy_only=False), dtype=np.int64)


# The times recency is measured from, by tier, first present first (``Memory.anchor_time``).
_ANCHORS = {
    "semantic": ("last_reinforced_at", "updated_at", "created_at"),
    "episodic": ("ended_at", "started_at", "created_at"),
    "procedural": ("updated_at", "created_at"),
}


def _score_columns(tier: str, table: pa.Table, read: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """What scoring reads of each row, computed once as the row is read (a row never changes: an update
    writes a new one), exactly as scoring computes it from the row's Memory: the anchor time recency is
    measured from (a time outside the years Memory reads is no time), frequency from the access count, and
    importance reinforced by the evidence count. ``read``: the row's times already read (``_TIMES``)."""
    anchor = np.full(table.num_rows, NULL, dtype=np.int64)
    for name in reversed(_ANCHORS[tier]):  # the first present wins: fill from the last
        if name in table.column_names:
            times = read[name] if name in read else _times(table.column(name))
            readable = (times != NULL) & (times >= MIN_MICROS) & (times < MAX_MICROS)
            anchor = np.where(readable, times, anchor)
    # As Memory reads them: importance rounded to 4 places (Python's rounding), counts None as 0 and 1.
    importance = np.fromiter(
        (0.5 if v is None else round(float(v), 4) for v in table.column("importance").to_pylist()),
        np.float64,
        table.num_rows,
    )
    access = np.asarray(
        pc.fill_null(table.column("access_count"), 0).to_numpy(zero_copy_only=False), dtype=np.float64
    )
    if "evidence_count" in table.column_names:
        evidence = pc.fill_null(table.column("evidence_count"), 1).to_numpy(zero_copy_only=False)
        evidence = np.where(evidence == 0, 1, evidence).astype(np.float64)
    else:
        evidence = np.ones(table.num_rows, dtype=np.float64)
    return {"anchor": anchor, "frequency": frequency(access), "reinforced": reinforced(importance, evidence)}


def rows_as_memories(table: pa.Table, rows: Sequence[int]) -> list[Memory]:
    """These rows of a partition's Arrow as Memory objects."""
    return table_to_memories(table.take(pa.array(np.asarray(rows, dtype=np.int64))))


def _signature(fragment: Any) -> tuple[str, str]:
    """(data files and overlays, deletion file) of a fragment: what a new version may change."""
    md = dict(fragment.metadata.to_json())
    deletion = json.dumps(md.pop("deletion_file", None), sort_keys=True)
    files = json.dumps(
        {k: md.get(k) for k in ("files", "overlays", "physical_rows")}, sort_keys=True, default=str
    )
    return files, deletion


_EMPTY: dict[str, Any] = {
    "alive": bool,
    "pinned": bool,
    "addr": np.uint64,
    "vector": np.float32,
    "norm": np.float32,
    "state": np.int8,
    "agent": np.int32,
    "principal": np.int32,
    "session": np.int32,
    "importance": np.float64,
    "frequency": np.float64,
    "reinforced": np.float64,
}


def _deleted(ds: Any, fragment: Any, addr: np.ndarray) -> np.ndarray:
    """Which of these row addresses the fragment's deletion file names (rows of other fragments: False).

    On a local disk an 'array' deletion file is a small Arrow file of row offsets, read directly (~0.1 ms);
    otherwise the fragment's live row addresses are scanned (a few ms per fragment on a busy machine).
    """
    fid = int(fragment.fragment_id)
    mine = (addr >> np.uint64(32)) == np.uint64(fid)
    deletion = fragment.metadata.deletion_file
    if deletion is None:
        return np.zeros(len(addr), dtype=bool)
    uri = str(ds.uri)
    if deletion.file_type == "array" and "://" not in uri:
        path = f"{uri.rstrip('/')}/_deletions/{fid}-{deletion.read_version}-{deletion.id}.arrow"
        try:
            with pa.memory_map(path) as source:
                table = pa.ipc.open_file(source).read_all()
        except (OSError, pa.ArrowInvalid) as exc:
            log.debug("deletion file %s not read directly: %s", path, exc)
        else:
            offsets = np.concatenate(
                [
                    np.asarray(c.to_numpy(zero_copy_only=False), dtype=np.uint64)
                    for c in table.column(0).chunks
                ]
                or [np.zeros(0, np.uint64)]
            )
            return mine & np.isin(addr & np.uint64(0xFFFFFFFF), offsets)
    live = fragment.to_table(columns=[], with_row_address=True)["_rowaddr"].to_numpy()
    return mine & ~np.isin(addr, live)


class _Grow:
    """Numpy columns that grow by doubling (an append copies nothing already held, mostly)."""

    def __init__(self, expected: int = 0) -> None:
        self.n = 0
        self.expected = expected  # rows a first load will bring: allocated at once, never doubled
        self.arrays: dict[str, np.ndarray] = {}

    def append(self, cols: dict[str, np.ndarray]) -> None:
        m = len(next(iter(cols.values())))
        for name, values in cols.items():
            arr = self.arrays.get(name)
            if arr is None:
                arr = np.zeros((max(m, 16, self.expected), *values.shape[1:]), dtype=values.dtype)
            elif self.n + m > len(arr):
                bigger = np.zeros((max(2 * len(arr), self.n + m), *arr.shape[1:]), dtype=arr.dtype)
                bigger[: self.n] = arr[: self.n]
                arr = bigger
            arr[self.n : self.n + m] = values
            self.arrays[name] = arr
        self.n += m

    def __getitem__(self, name: str) -> np.ndarray:
        arr = self.arrays.get(name)
        if arr is None:  # nothing appended yet
            return np.zeros((0, 0) if name == "vector" else 0, dtype=_EMPTY.get(name, np.int64))
        return arr[: self.n]

    def nbytes(self) -> int:
        return sum(a.nbytes for a in self.arrays.values())


class Partition:
    """The rows of one tier within one scope."""

    def __init__(self, tier: str, where: str | None) -> None:
        self.tier = tier
        self.where = where
        self.lock = threading.RLock()
        self.version: int | None = None
        self.fragments: dict[int, tuple[str, str]] = {}
        self.cols = _Grow()
        self.tables: list[pa.Table] = []
        self.table: pa.Table | None = None
        self.postings: bm25.Postings | bm25.QueryPostings = bm25.Postings()
        self.codes: dict[str, dict[str | None, int]] = {"agent": {}, "principal": {}, "session": {}}
        self.dead = 0
        self.memo: dict[int, Memory] = {}
        self.projection: projection.Projection | None = None
        self.ids: list[str] = []  # each row's memory id
        self.id_bytes = 0
        self.row_of: dict[str, int] | None = None  # id -> newest row, made on first use (the graph's ids)
        self.generation = 0  # counts renumberings of the rows (``_compact``)
        self.changes = 0  # counts every change of the rows (appended, killed, renumbered)
        self._plain: tuple[int, np.ndarray] | None = None  # (changes, mask) of what an unfiltered recall sees
        self._expiry = (-1, False)  # (changes, whether any row has an expiry time)
        self._previous: tuple[int, np.ndarray, np.ndarray] | None = None  # (changes, mask, ``previous``)
        self._id_ranks: tuple[int, np.ndarray] = (-1, np.zeros(0, dtype=np.int64))  # (changes, ``id_ranks``)
        self._id_array: tuple[int, np.ndarray] = (-1, np.zeros(0, dtype=object))  # (changes, ``id_array``)
        # (generation, each row's ``timecue.states_time`` as 1 / 0, -1 not read yet): read for the rows a
        # "when" query scores, kept until the rows are renumbered (a row's text never changes in place).
        self._time_cue: tuple[int, np.ndarray] = (-1, np.zeros(0, dtype=np.int8))

    @property
    def rows(self) -> int:
        return self.cols.n - self.dead

    # --- following the table ----------------------------------------------------------------------

    def refresh(self, ds: Any, expected: int = 0) -> None:
        """Catch up with the dataset's version, reading only the fragments that changed (``expected``: the
        rows a first load will bring, when known)."""
        version = int(ds.version)
        if version == self.version:
            return
        frags = {int(f.fragment_id): f for f in ds.get_fragments()}
        sigs = {fid: _signature(f) for fid, f in frags.items()}
        if self.version is None:
            # Batch by batch: a whole scan held as Arrow next to its numpy copy would double the peak memory
            # of a large partition's load.
            self.cols = _Grow(expected)
            scan = ds.scanner(
                columns=self._columns(), filter=self.where, with_row_address=True, batch_size=8192
            )
            for batch in scan.to_batches():
                self._append(pa.Table.from_batches([batch]))
            if len(self.tables) > 1:  # one chunk: a take across a dozen batches cost 8 ms for 50 rows at 100k
                self.tables, self.table = [pa.concat_tables(self.tables).combine_chunks()], None
            self.projected()  # part of the load, not of its first recall
        else:
            old = self.fragments
            reread = [fid for fid in sigs if fid not in old or old[fid][0] != sigs[fid][0]]
            gone = [fid for fid in old if fid not in sigs or old[fid][0] != sigs[fid][0]]
            deletions = [
                fid
                for fid in sigs
                if fid in old and old[fid][0] == sigs[fid][0] and old[fid][1] != sigs[fid][1]
            ]
            frag_of = (self.cols["addr"] >> np.uint64(32)).astype(np.int64)
            alive = self.cols["alive"]
            if gone:
                self._kill(alive & np.isin(frag_of, gone))
            for fid in deletions:
                mine = alive & (frag_of == fid)
                if mine.any():
                    self._kill(mine & _deleted(ds, frags[fid], self.cols["addr"]))
            if reread:
                scan = ds.scanner(
                    columns=self._columns(),
                    filter=self.where,
                    with_row_address=True,
                    fragments=[frags[fid] for fid in reread],
                )
                self._append(scan.to_table())
        self.fragments = sigs
        self.version = version
        if self.dead > 1000 and self.dead > self.cols.n // 4:
            self._compact()

    def _columns(self) -> list[str]:
        return [*row_columns(self.tier), "vector"]

    def _kill(self, mask: np.ndarray) -> None:
        if not mask.any():  # also a partition that never held a row, which has no columns yet
            return
        self.changes += 1
        self.dead += int(mask.sum())
        self.cols.arrays["alive"][: self.cols.n][mask] = False

    def _code(self, kind: str, values: list[Any]) -> np.ndarray:
        codes = self.codes[kind]
        return np.fromiter((codes.setdefault(v, len(codes)) for v in values), np.int32, len(values))

    def _append(self, table: pa.Table) -> None:
        if table.num_rows == 0:
            return
        vec = table.column("vector").combine_chunks()
        dim = vec.type.list_size
        vectors = np.asarray(vec.flatten().to_numpy(zero_copy_only=False), dtype=np.float32).reshape(-1, dim)
        texts = table.column("text").to_pylist()
        state = table.column("state").to_pylist()
        cols: dict[str, np.ndarray] = {
            "alive": np.ones(table.num_rows, dtype=bool),
            "addr": np.asarray(table.column("_rowaddr").to_numpy(), dtype=np.uint64),
            "vector": vectors,
            "norm": np.linalg.norm(vectors, axis=1).astype(np.float32),
            "state": np.fromiter((STATE_CODES.get(s, 3) for s in state), np.int8, len(state)),
            "agent": self._code("agent", table.column("agent").to_pylist()),
            "principal": self._code("principal", table.column("principal").to_pylist()),
            "pinned": np.asarray(
                pc.fill_null(table.column("pinned"), False).to_numpy(zero_copy_only=False), dtype=bool
            ),
            "importance": np.asarray(
                pc.fill_null(table.column("importance").cast(pa.float64()), float("nan")).to_numpy(
                    zero_copy_only=False
                )
            ),
        }
        for name in _TIMES:
            if name in table.column_names:
                cols[name] = _times(table.column(name))
        cols.update(_score_columns(self.tier, table, cols))
        if self.tier == "episodic":
            cols["session"] = self._code("session", table.column("session").to_pylist())
        self._index_texts(self.cols.n, texts)
        start = self.cols.n
        ids = table.column("id").to_pylist()
        self._add_ids(ids)
        if self.row_of is not None:
            self.row_of.update(zip(ids, range(start, start + table.num_rows), strict=True))
        self.cols.append(cols)
        self.changes += 1
        # One chunk per column: taking rows from a table of many small batches costs ~70 us a row.
        rows = table.drop_columns(["vector", "_rowaddr"]).combine_chunks()
        self.tables.append(rows)
        self._convert_small(start, rows)
        if len(self.tables) > 16:
            self.tables = [pa.concat_tables(self.tables).combine_chunks()]
        self.table = None

    def _index_texts(self, first_row: int, texts: list[str | None]) -> None:
        postings = self.postings
        assert isinstance(postings, bm25.Postings)  # a partition that follows its table indexes every word
        postings.add(first_row, texts)

    def _add_ids(self, ids: list[str]) -> None:
        self.ids += ids
        self.id_bytes += sum(57 + len(i) for i in ids)  # a list slot and a short str object each

    def _compact(self) -> None:
        """Drop dead rows from memory (after many updates or a compaction of the table)."""
        keep = np.flatnonzero(self.cols["alive"])
        table = self.arrow().take(pa.array(keep))
        arrays = {name: self.cols[name][keep] for name in self.cols.arrays}
        postings = bm25.Postings()
        postings.add(0, table.column("text").to_pylist())
        self.cols, self.postings, self.dead = _Grow(), postings, 0
        if keep.size:
            self.cols.append(arrays)
        self.tables, self.table = [table], table
        self.memo.clear()
        self.generation += 1
        self.changes += 1
        self.projection = None  # rows were renumbered
        ids, self.ids, self.id_bytes = self.ids, [], 0
        self._add_ids([ids[i] for i in keep.tolist()])
        self.row_of = None
        self._convert_small(0, table)

    def _convert_small(self, start: int, table: pa.Table) -> None:
        """Convert the rows of a partition of at most ``MEMO_ROWS`` rows as they are read (about 5 us a
        row): a recall then copies its candidates rather than converting them, a fifth of the cost."""
        if self.cols.n <= MEMO_ROWS:
            self.memo.update(zip(range(start, start + table.num_rows), table_to_memories(table), strict=True))

    def arrow(self) -> pa.Table:
        if self.table is None:
            self.table = pa.concat_tables(self.tables) if self.tables else pa.table({})
        return self.table

    def nbytes(self) -> int:
        ids = self.id_bytes + (
            60 * len(self.row_of) if self.row_of is not None else 0
        )  # a dict slot each, about
        return int(self.cols.nbytes() + self.postings.nbytes() + sum(t.nbytes for t in self.tables) + ids)

    def rows_with_ids(self, ids: Sequence[str]) -> list[int]:
        """The newest row of each id the partition holds (an update's row comes after the one it replaced)."""
        return list(self.rows_of_ids(ids).values())

    def rows_of_ids(self, ids: Sequence[str]) -> dict[str, int]:
        """``rows_with_ids`` by id."""
        if self.row_of is None:
            self.row_of = dict(zip(self.ids, range(len(self.ids)), strict=True))
        return {i: r for i, r in ((i, self.row_of.get(i)) for i in ids) if r is not None}

    # --- what a recall may see --------------------------------------------------------------------

    def allowed(
        self, include_deprecated: bool, written_by: str | None, filters: RecallFilter | None
    ) -> np.ndarray:
        """The rows the state filter, ``written_by`` and the recall filter keep (as the LanceDB ``where``).
        Read only: a recall without filters is given the same array until the rows change."""
        plain = not include_deprecated and written_by is None and filters is None
        if plain and self._plain is not None and self._plain[0] == self.changes:
            return self._plain[1]
        mask = self._allowed(include_deprecated, written_by, filters)
        if plain:
            mask.flags.writeable = False
            self._plain = (self.changes, mask)
        return mask

    def _allowed(
        self, include_deprecated: bool, written_by: str | None, filters: RecallFilter | None
    ) -> np.ndarray:
        c = self.cols
        mask = c["alive"].copy()
        mask &= (
            (c["state"] != STATE_CODES["forgotten-pending"]) & (c["state"] != 3)
            if include_deprecated
            else (c["state"] == STATE_CODES["active"])
        )
        agents = [
            a for a in (written_by, filters.written_by if filters is not None else None) if a is not None
        ]
        for agent in agents:
            mask &= c["agent"] == self.codes["agent"].get(agent, -1)
        if filters is not None:
            created = c["created_at"]
            if filters.since is not None:
                mask &= (created != NULL) & (created >= micros(filters.since))
            if filters.until is not None:
                mask &= (created != NULL) & (created <= micros(filters.until))
            for tag in filters.tags:
                mask &= self._tagged(tag)
            for tag in filters.without_tags:
                mask &= ~self._tagged(tag)
            if filters.min_importance is not None:
                mask &= c["importance"] >= float(filters.min_importance)
            if filters.types:
                mask &= self._typed(filters.types)
        return mask

    def _typed(self, types: Sequence[str]) -> np.ndarray:
        if not self.cols.n:  # an empty partition has no columns at all
            return np.zeros(0, dtype=bool)
        kinds = self.arrow().column("type")
        return np.asarray(
            pc.is_in(kinds, pa.array(list(types))).fill_null(False).to_numpy(zero_copy_only=False)
        )

    def _tagged(self, tag: str) -> np.ndarray:
        out = np.zeros(self.cols.n, dtype=bool)
        if not self.cols.n:  # an empty partition has no columns at all
            return out
        tags = self.arrow().column("tags").combine_chunks()
        values = np.asarray(
            pc.equal(pc.list_flatten(tags), tag).fill_null(False).to_numpy(zero_copy_only=False)
        )
        parents = np.asarray(pc.list_parent_indices(tags).to_numpy())
        out[parents[values]] = True
        return out

    def live(self, store: Engine, at: datetime, mask: np.ndarray) -> np.ndarray:
        """The rows of ``mask`` not expired at ``at`` (``filters.live`` as these arrays read it): ``mask``
        itself when no row can expire."""
        c = self.cols
        cutoff, start = ttl_cutoff(store, self.tier, at)
        if cutoff is None and not self._expiring():
            return mask
        expires = c["expires_at"] if "expires_at" in c.arrays else np.full(c.n, NULL)
        expired = (expires != NULL) & (expires <= micros(at))
        if cutoff is not None:
            created = c["created_at"]
            anchor = (
                np.where(c["last_accessed"] != NULL, c["last_accessed"], created)
                if start == "last_used"
                else created
            )
            # SQL: a missing anchor makes the TTL test NULL, and NOT NULL keeps no row
            expired |= ~c["pinned"] & ((anchor == NULL) | (anchor <= micros(cutoff)))
        return mask & ~expired

    def previous(self, mask: np.ndarray) -> np.ndarray:
        """Each row's previous row in its session among the rows of ``mask`` (ordered by start time, then
        write time, then id, as ``index_search.session_neighbours``), -1 for none (the first of its session, a
        row outside a session or outside ``mask``). Vectorised; kept until the rows change for the same mask
        (a recall without filters is given the same mask array)."""
        cached = self._previous
        if cached is not None and cached[0] == self.changes and cached[1] is mask:
            return cached[2]
        c = self.cols
        prev = np.full(c.n, -1, dtype=np.int64)
        if self.tier == "episodic" and c.n:
            session = c["session"][: c.n]
            blank = [
                k for k in (self.codes["session"].get(None), self.codes["session"].get("")) if k is not None
            ]
            rows = (
                np.flatnonzero(mask[: c.n] & ~np.isin(session, blank))
                if blank
                else np.flatnonzero(mask[: c.n])
            )
            started, created = c["started_at"][rows], c["created_at"][rows]
            anchor = np.where(started != NULL, started, created)
            ordered = rows[np.lexsort((self.id_ranks()[rows], created, anchor, session[rows]))]
            same = session[ordered[1:]] == session[ordered[:-1]]
            prev[ordered[1:][same]] = ordered[:-1][same]
        self._previous = (self.changes, mask, prev)
        return prev

    def time_cues(self, rows: np.ndarray) -> np.ndarray:
        """Whether each of these rows' texts states a time (``timecue.states_time``), 1.0 or 0.0; each row's
        text is read once, when a query that asks when first scores it."""
        generation, cue = self._time_cue
        if generation != self.generation:
            cue = np.zeros(0, dtype=np.int8)
        if cue.size < self.cols.n:
            cue = np.concatenate([cue, np.full(self.cols.n - cue.size, -1, dtype=np.int8)])
        todo = rows[cue[rows] < 0]
        if todo.size:
            texts = self.arrow().column("text").take(pa.array(todo)).to_pylist()
            cue[todo] = timecue.cues(texts).astype(np.int8)
        self._time_cue = (self.generation, cue)
        return cue[rows].astype(np.float64)

    def id_array(self) -> np.ndarray:
        """The rows' ids as an object array (kept until the rows change)."""
        if self._id_array[0] != self.changes:
            ids = np.empty(len(self.ids), dtype=object)
            ids[:] = self.ids
            self._id_array = (self.changes, ids)
        return self._id_array[1]

    def id_ranks(self) -> np.ndarray:
        """Each row's position among the rows' ids in sorted order (kept until the rows change)."""
        if self._id_ranks[0] != self.changes:
            ranks = np.empty(len(self.ids), dtype=np.int64)
            ranks[np.argsort(np.asarray(self.ids, dtype=str), kind="stable")] = np.arange(len(self.ids))
            self._id_ranks = (self.changes, ranks)
        return self._id_ranks[1]

    def _expiring(self) -> bool:
        """Whether any row has an expiry time (remembered until the rows change)."""
        if self._expiry[0] != self.changes:
            expires = (
                self.cols["expires_at"] if "expires_at" in self.cols.arrays else np.zeros(0, dtype=np.int64)
            )
            self._expiry = (self.changes, bool((expires != NULL).any()))
        return self._expiry[1]

    def memories(self, rows: Sequence[int]) -> list[Memory]:
        """The candidate rows as Memory objects (each a copy of its own: callers may change them).

        A row never changes (an update writes a new one), so each is converted once: turning Arrow rows
        into Python objects was most of what a recall cost once the searches were in memory.
        """
        missing = [i for i in rows if i not in self.memo]
        if missing:
            if len(self.memo) + len(missing) > MEMO_ROWS:
                self.memo.clear()
            taken = rows_as_memories(self.arrow(), missing)
            for i, memory in zip(missing, taken, strict=True):
                self.memo[i] = memory
        return [_copy(self.memo[i]) for i in rows]

    def memories_at(self, generation: int, table: pa.Table, rows: Sequence[int]) -> list[Memory]:
        """``memories`` of rows numbered as at ``generation``, when ``table`` was the partition's Arrow: a
        recall's candidates made after the partition dropped its dead rows are read from that table."""
        with self.lock:
            if generation == self.generation:
                return self.memories(rows)
        return rows_as_memories(table, rows)

    def projected(self) -> projection.Projection | None:
        """The partition's projected vectors when it is large enough to want them (``recall.projection``),
        made on first use and extended once enough rows were written since."""
        if self.rows < projection.MIN_ROWS:
            return None
        if self.projection is None:
            self.projection = projection.Projection.fit(self.cols["vector"])
        elif self.projection.stale(self.cols.n):
            self.projection = self.projection.extended(self.cols["vector"])
        return self.projection

    def nearest(self, qvec: np.ndarray, mask: np.ndarray, limit: int) -> tuple[list[int], np.ndarray | None]:
        """The ``limit`` rows of ``mask`` nearest the query by cosine, nearest first; and each row's dot
        product with the query when every row's was computed (what ``scoring.similarities`` gives a row),
        else None."""
        rows = np.flatnonzero(mask)
        if not rows.size:
            return [], None
        c = self.cols
        q = np.asarray(qvec, dtype=np.float32)
        qnorm = float(np.linalg.norm(q)) or 1.0
        projected = self.projected()
        # One thread, no BLAS: OpenBLAS's threads wait on each other when the cores are busy (a 0.3 ms
        # product took 10-30 ms under load), and the product is memory-bound anyway.
        if projected is not None and rows.size > projection.EXACT_ROWS:
            rows = projected.shortlist(q, mask, limit)
        every = None
        if rows.size == c.n:  # every row
            dots = every = similarities(c["vector"], q)
            norms = c["norm"]
        elif rows.size * 4 < c.n:  # a shortlist or a narrow filter: read those rows alone
            dots, norms = similarities(c["vector"][rows], q), c["norm"][rows]
        else:
            every = similarities(c["vector"], q)
            dots, norms = every[rows], c["norm"][rows]
        sims = np.where(norms > 0, dots / np.where(norms > 0, norms, 1.0) / qnorm, 0.0)
        if rows.size > limit:
            top = np.argpartition(-sims, limit - 1)[:limit]
            rows, sims = rows[top], sims[top]
        order = np.lexsort((rows, -sims))
        return rows[order].tolist(), (every if qvec.dtype == np.float32 else None)


class OneRecallPartition(Partition):
    """A scope's rows of one tier read from LanceDB for one recall and dropped after it: what LanceDB's engine
    scores when it scores every row a recall may see (``[recall] score_all_rows``), so that it ranks them as
    the recall index does, from columns, with no Memory made but for the results. Cheaper than a partition
    that follows its table: postings of the query's terms only (``bm25.QueryPostings``), no row converted
    ahead, no projection; one read of the rows, never refreshed."""

    def __init__(self, tier: str, where: str | None, ds: Any, terms: Sequence[str]) -> None:
        super().__init__(tier, where)
        self._terms = list(terms)
        table = ds.to_table(columns=self._columns(), filter=where, with_row_address=True)
        self._append(table)
        self.version = int(ds.version)

    def _index_texts(self, first_row: int, texts: list[str | None]) -> None:
        assert first_row == 0  # read once
        self.postings = bm25.QueryPostings(texts, self._terms)

    def _convert_small(self, start: int, table: pa.Table) -> None:
        return  # the recall converts the rows it returns

    def projected(self) -> projection.Projection | None:
        return None  # fitting one costs more than scanning the rows of one recall


class RecallIndex:
    """The partitions of one store, least recently used first out past ``max_rows``."""

    def __init__(self, max_rows: int, sync_rows: int, background: bool = True) -> None:
        self.max_rows = max_rows
        self.sync_rows = sync_rows  # a larger scope is loaded in a background thread (or not at all)
        self.background = background
        self.partitions: OrderedDict[tuple[str, str | None], Partition] = OrderedDict()
        self.loading: dict[tuple[str, str | None], threading.Thread] = {}
        self.lock = threading.Lock()
        self.datasets: dict[str, HeldDataset] = {}
        self.loads: list[dict[str, Any]] = []  # (tier, rows, seconds) of each first load, for the benchmark

    def clear(self) -> None:
        with self.lock:
            self.partitions.clear()
            self.datasets.clear()

    def rows(self) -> int:
        return sum(p.rows for p in self.partitions.values())

    def nbytes(self) -> int:
        return sum(p.nbytes() for p in list(self.partitions.values()))

    def dataset(self, store: Engine, tier: str, fallback: Callable[[], Any]) -> Any:
        """The tier's Lance dataset at its latest version (``storage.tables.latest_dataset``): every recall
        sees every commit, this process's and others'; on object storage, ``fallback``'s."""
        ds = latest_dataset(store, tier, self.datasets)
        return fallback() if ds is None else ds

    def catch_up(self, store: Engine, tier: str) -> None:
        """Refresh every held partition of a tier to the latest version (a background thread's job)."""
        with self.lock:
            parts = [p for (t, _), p in self.partitions.items() if t == tier]
        if not parts:
            return
        ds = self.dataset(store, tier, lambda: store.table(tier).to_lance())
        for part in parts:
            with part.lock:
                part.refresh(ds)

    def partition(self, tier: str, scope: Scope, ds: Any) -> Partition | None:
        """The scope's partition of a tier at the dataset's version, or None when it would hold more than
        ``max_rows`` rows (recall then reads LanceDB)."""
        key = (tier, scope.where())
        with self.lock:
            part = self.partitions.get(key)
            if part is not None:
                self.partitions.move_to_end(key)
            elif key in self.loading:
                return None
        count = 0
        if part is None:
            count = int(ds.count_rows(filter=key[1])) if key[1] else int(ds.count_rows())
            if count > self.max_rows:
                return None
            if count > self.sync_rows:
                # Seconds of loading: this recall reads LanceDB, and a process that lives on (the app, the
                # MCP server, a program) has the partition for the next ones; a one-shot command never loads it.
                if self.background:
                    self._load_in_background(tier, key, ds, count)
                return None
            part = Partition(tier, key[1])
        return self._refreshed(tier, key, part, ds, count)

    def _refreshed(
        self, tier: str, key: tuple[str, str | None], part: Partition, ds: Any, count: int
    ) -> Partition:
        import time

        t0 = time.perf_counter()
        with part.lock:
            first = part.version is None
            before = part.cols.n
            part.refresh(ds, count)
            grew = part.cols.n != before
        if first:
            self.loads.append(
                {"tier": tier, "rows": part.rows, "seconds": time.perf_counter() - t0, "bytes": part.nbytes()}
            )
            if part.rows > self.sync_rows:
                _return_freed_memory()
        with self.lock:
            added = key not in self.partitions  # new, or dropped by another thread's load meanwhile
            self.partitions[key] = part
            # Only a partition that came in or took rows can push the total past the bound (summing every
            # partition's rows on each recall cost 0.1 ms with 30 partitions held).
            while (added or grew) and len(self.partitions) > 1 and self.rows() > self.max_rows:
                self.partitions.popitem(last=False)
        return part

    def _load_in_background(self, tier: str, key: tuple[str, str | None], ds: Any, count: int) -> None:
        def load() -> None:
            try:
                self._refreshed(tier, key, Partition(tier, key[1]), ds, count)
            except Exception as exc:  # noqa: BLE001 - recall goes on reading LanceDB; the next one retries
                log.warning("loading the recall index of %s (%s rows) failed: %s", tier, count, exc)
            finally:
                with self.lock:
                    self.loading.pop(key, None)

        with self.lock:
            # One load at a time: a server recalling for many large scopes would otherwise hold several
            # partitions' worth of Arrow batches at once, past the memory bound.
            if self.loading or key in self.partitions:
                return
            thread = threading.Thread(target=load, name=f"memdeck-index-{tier}", daemon=True)
            self.loading[key] = thread
        thread.start()

    def wait(self, timeout: float | None = None) -> None:
        """Wait for the partitions loading in the background."""
        with self.lock:
            threads = list(self.loading.values())
        for thread in threads:
            thread.join(timeout)


def _return_freed_memory() -> None:
    """Hand the C heap's freed pages back to the system (glibc keeps them): loading a 100k-row partition
    leaves some 200 MB of the scan's buffers freed but resident."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError) as exc:  # not glibc (musl has no malloc_trim)
        log.debug("malloc_trim unavailable: %s", exc)


# The recall index of each open store: dropped at every refresh (a purge), caught up after this process's
# own background commits.
_INDEXES: weakref.WeakKeyDictionary[Engine, RecallIndex] = weakref.WeakKeyDictionary()


def store_index(store: Engine) -> RecallIndex:
    """The store's recall index, made on first use."""
    index = _INDEXES.get(store)
    if index is None:
        settings = store.settings.recall
        index = _INDEXES[store] = RecallIndex(
            settings.index_max_rows,
            settings.index_sync_rows,
            store.index_loads_in_background,
        )
        store.refresh_hooks.append(index.clear)
        store.catch_up_hooks.append(partial(_catch_up, weakref.ref(store), index))
    return index


def recall_index(store: Engine) -> RecallIndex | None:
    """The store's recall index if a recall made one yet."""
    return _INDEXES.get(store)


def _catch_up(ref: weakref.ReferenceType[Engine], index: RecallIndex, tier: str) -> None:
    store = ref()
    if store is not None:
        index.catch_up(store, tier)


def uses_index(store: Engine) -> bool:
    """Whether recall runs on the in-memory index (config ``[recall] engine``) rather than LanceDB's searches."""
    settings = store.settings.recall
    # The index scores keywords with the principal's statistics only; the index's own (whole-table)
    # statistics are LanceDB's to give.
    return settings.engine == "memory" and settings.keyword_statistics == "principal"
