"""After a purge: read every file of the store back and check that nothing of the forgotten memories remains."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from memdeck.core import filters as F
from memdeck.core.forget.needles import json_strings
from memdeck.core.forget.plan import chunks
from memdeck.core.privacy.vault import Vault
from memdeck.core.records import (
    HISTORY,
)
from memdeck.core.storage.tables import dataset, table_names, table_uri

if TYPE_CHECKING:
    from memdeck.core.receipts.types import Check
    from memdeck.core.storage.engine import Engine

log = logging.getLogger("memdeck.forget")

MAX_TEXT_NEEDLES = 64  # substring searches per column; tokens have no limit (one vectorised pass)
ROWID_COLUMNS = ("_rowid", "ids", "row_id", "__rowid")
# Written by memdeck itself (opaque ids, hashes, enums): searched for ids, never for text.
SYSTEM_COLUMNS = frozenset({"id", "memory_id", "tier", "state", "content_sha256"})
_TOKEN_SPLIT = r"[^\pL\pN_]+"
_DUCKDB_MAGIC = b"DUCK"
# The trace log's tables: (columns holding what a person or agent typed, the column naming whose row it is).
# Per table of the trace log: the columns a person or agent typed, the principal column, and when the row
# was recorded (a row recorded after the purge's scrub began is a question asked after the forget).
_LOG_TABLES: dict[str, tuple[tuple[str, ...], str, str]] = {
    "traces": (("query",), "principals", "recalled_at"),
    "judgments": (("query",), "principal", "judged_at"),
    "trace_candidates": ((), "principal", ""),
    "feedback": ((), "principal", "given_at"),
    "injections": ((), "principal", "given_at"),
}


def _scrub_began(journal: dict[str, Any]) -> datetime | None:
    """When the purge's scrub of the trace log began (the earliest, for a whole principal's two), if recorded."""
    scrub = (journal.get("extra") or {}).get("trace_scrub")
    found = []
    for one in scrub if isinstance(scrub, list) else [scrub]:
        at = one.get("scrubbed_at") if isinstance(one, dict) else None
        if isinstance(at, str):
            with contextlib.suppress(ValueError):
                found.append(datetime.fromisoformat(at))
    return min(found) if found else None


# --- the checks ---------------------------------------------------------------------------------------


class _Needles:
    """What the checks look for, lower-cased: ids, whole texts and pieces, tokens."""

    def __init__(self, ids: Iterable[str], texts: Iterable[str], tokens: Iterable[str]) -> None:
        self.ids = sorted(set(ids))
        self.texts = list(dict.fromkeys(texts))
        self.tokens = sorted(set(tokens))
        self._token_set = pa.array(self.tokens, pa.string())
        self._id_set = pa.array(self.ids, pa.string())
        self._token_bytes = [t.encode("utf-8") for t in self.tokens]
        self._id_bytes = {i.lower().encode("utf-8") for i in self.ids}

    def without(self, texts: set[str], tokens: set[str]) -> _Needles:
        return _Needles(
            self.ids, [t for t in self.texts if t not in texts], [t for t in self.tokens if t not in tokens]
        )

    def search_texts(self) -> list[str]:
        return self.texts[:MAX_TEXT_NEEDLES]

    def hits_in_strings(self, arr: pa.Array, *, with_ids: bool) -> tuple[set[str], set[str], set[str]]:
        """(texts, tokens, ids) found in a string array."""
        texts: set[str] = set()
        tokens: set[str] = set()
        ids: set[str] = set()
        if len(arr) == 0:
            return texts, tokens, ids
        if with_ids and self.ids:
            ids = set(pc.unique(arr.filter(pc.is_in(arr, value_set=self._id_set))).to_pylist())
        lower = pc.utf8_lower(arr)
        wanted = self.search_texts()
        # One pass for all texts; only when something matched, one more per text to name it.
        if (
            wanted
            and pc.any(pc.match_substring_regex(lower, "|".join(_re2_literal(t) for t in wanted))).as_py()
        ):
            hit = lower.filter(pc.match_substring_regex(lower, "|".join(_re2_literal(t) for t in wanted)))
            texts = {t for t in wanted if pc.any(pc.match_substring(hit, t)).as_py()}
        if self.tokens:
            if len(self.tokens) <= 500:
                # One regex pass picks the strings that contain a token at all; only those are split.
                lower = lower.filter(pc.match_substring_regex(lower, "|".join(self.tokens)))
            if len(lower):
                flat = pc.list_flatten(pc.split_pattern_regex(lower, _TOKEN_SPLIT))
                tokens = set(pc.unique(flat.filter(pc.is_in(flat, value_set=self._token_set))).to_pylist())
        return texts, tokens, ids

    def hits_in_bytes(self, data: bytes, *, with_ids: bool) -> list[str]:
        """Kinds of needle found in raw bytes (ASCII case folded)."""
        low = data.lower()
        found = []
        if any(t.encode("utf-8") in low for t in self.search_texts()):
            found.append("text")
        ids = self._id_bytes if with_ids else set()
        if not self.tokens and not ids:
            return found
        # Few needles: a substring search each (C speed); many: every ASCII word of the bytes once, then lookups.
        words = None if len(self.tokens) + len(ids) <= 64 else set(_ASCII_WORDS.findall(low))
        if self.tokens and _has_token(low, words, self._token_bytes):
            found.append("token")
        if ids and (_has_token(low, None, list(ids)) if words is None else not words.isdisjoint(ids)):
            found.append("id")
        return found


_WORD = frozenset(b"abcdefghijklmnopqrstuvwxyz0123456789_")
_ASCII_WORDS = re.compile(rb"[a-z0-9_]+")


def _has_token(data: bytes, words: set[bytes] | None, tokens: list[bytes]) -> bool:
    """Whether a whole-word token occurs in lower-cased bytes (whose ASCII words are ``words``, if given)."""
    for token in tokens:
        if words is not None and token.isascii():
            if token in words:
                return True
            continue
        at = data.find(token)  # the substring search, then a word-boundary check
        while at >= 0:
            end = at + len(token)
            if (at == 0 or data[at - 1] not in _WORD) and (end == len(data) or data[end] not in _WORD):
                return True
            at = data.find(token, at + 1)
    return False


def _string_arrays(table: pa.Table) -> Iterator[tuple[str, pa.Array]]:
    for name in table.column_names:
        yield from _strings_of(name, table[name].combine_chunks())


def _strings_of(name: str, arr: pa.Array) -> Iterator[tuple[str, pa.Array]]:
    t = arr.type
    if pa.types.is_dictionary(t):
        yield from _strings_of(name, arr.dictionary_decode())
    elif pa.types.is_string(t) or pa.types.is_large_string(t):
        yield name, arr
    elif pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        if pa.types.is_floating(t.value_type) or pa.types.is_integer(t.value_type):
            return
        yield from _strings_of(name, arr.flatten())
    elif pa.types.is_struct(t):
        for i in range(t.num_fields):
            yield from _strings_of(f"{name}.{t.field(i).name}", arr.field(i))


def _may_hold_text(t: pa.DataType) -> bool:
    if pa.types.is_dictionary(t):
        return _may_hold_text(t.value_type)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return _may_hold_text(t.value_type)
    if pa.types.is_struct(t):
        return any(_may_hold_text(t.field(i).type) for i in range(t.num_fields))
    return (
        pa.types.is_string(t)
        or pa.types.is_large_string(t)
        or pa.types.is_binary(t)
        or pa.types.is_large_binary(t)
    )


def _read_lance_file(path: Path, columns: list[str] | None = None) -> pa.Table:
    from lance.file import LanceFileReader

    if columns:
        try:
            return LanceFileReader(str(path), columns=columns).read_all(batch_size=65536).to_table()
        except Exception as exc:  # noqa: BLE001 - this file lacks one of the columns: read it whole
            log.debug("reading all of %s: %s", path.name, exc)
    return LanceFileReader(str(path)).read_all(batch_size=65536).to_table()


def _re2_literal(text: str) -> str:
    """A literal for an RE2 pattern: every regex metacharacter escaped (RE2 has no re.escape)."""
    return re.sub(r"([\\.^$|?*+()\[\]{}])", r"\\\1", text)


def _all_strings(table: pa.Table, skip: frozenset[str] = frozenset()) -> pa.Array:
    parts = [
        arr.cast(pa.large_string()) for name, arr in _string_arrays(table) if len(arr) and name not in skip
    ]
    return pa.concat_arrays(parts) if parts else pa.array([], pa.large_string())


def _binary_arrays(table: pa.Table) -> Iterator[tuple[str, pa.Array]]:
    for name in table.column_names:
        arr = table[name].combine_chunks()
        t = arr.type
        if (pa.types.is_list(t) or pa.types.is_large_list(t)) and (
            pa.types.is_binary(t.value_type) or pa.types.is_large_binary(t.value_type)
        ):
            arr = arr.flatten()
            t = arr.type
        if pa.types.is_binary(t) or pa.types.is_large_binary(t):
            yield name, arr


def _binary_bytes(arr: pa.Array) -> bytes:
    buffers = arr.buffers()
    data = buffers[2] if len(buffers) > 2 and buffers[2] is not None else None
    return data.to_pybytes() if data is not None else b""


_PEM_KEY = re.compile(
    rb"-----BEGIN (?:ENCRYPTED )?PRIVATE KEY-----\n(?:[A-Za-z0-9+/=]{1,76}\n)+-----END (?:ENCRYPTED )?PRIVATE KEY-----\n?"
)
KEY_BYTES = 32  # the raw keys memdeck writes (journal key, receipt salt, vault keys)


def _is_key_material(path: Path, data: bytes) -> bool:
    """A key file memdeck writes, and nothing but key material: a PEM private key (header, base64, footer)
    that loads as a key, or 32 raw bytes in a key file's place. Its words ("PRIVATE KEY") are not text."""
    if _PEM_KEY.fullmatch(data):
        from cryptography.hazmat.primitives.serialization import load_pem_private_key

        try:
            load_pem_private_key(data, password=None)
        except (ValueError, TypeError):
            return False
        return True
    return len(data) == KEY_BYTES and (path.parent.name == "keys" or path.name == "key")


def _metadata_words(store: Engine, name: str) -> set[str]:
    """Lower-cased words that a table's manifest holds of itself: field names (and their parts), index
    names and the schema's metadata keys and values."""
    words: set[str] = set()
    try:
        tbl = store.table(name)
        parts: list[str] = list(tbl.schema.names)
        parts += [k.decode() if isinstance(k, bytes) else str(k) for k in (tbl.schema.metadata or {})]
        parts += [
            v.decode() if isinstance(v, bytes) else str(v) for v in (tbl.schema.metadata or {}).values()
        ]
        for idx in tbl.list_indices():
            parts.append(str(idx.name))
            parts.append(str(getattr(idx, "index_type", "")))
    except Exception:  # noqa: BLE001 - without the schema every token stays a needle (stricter)
        return words
    for part in parts:
        low = part.lower()
        words.add(low)
        words.update(w for w in re.split(r"[^a-z0-9]+", low) if w)
    return words


class Verifier:
    """Reads every file of the store and reports, as receipt checks, whether anything forgotten remains."""

    def __init__(
        self,
        store: Engine,
        journal: dict[str, Any],
        secret: dict[str, Any] | None,
        *,
        exclude: frozenset[Path] | set[Path] = frozenset(),
        strict: bool = False,
    ) -> None:
        # strict: the needles may occur in no row at all, kept ones included (a re-scan keeps the rows and
        # must have removed the old values from them); by default a needle a kept row also holds is shared.
        self.strict = strict
        self.store = store
        self.journal = journal
        self.principal = journal["principal"]
        self.whole = bool(journal["whole_principal"])
        self.ids = [d["id"] for d in journal["deleted"]] + list(journal["cascade_delete_ids"])
        self.tiers: dict[str, str] = journal["tiers"]
        self.secret = secret
        texts, tokens = (secret.get("texts", []), secret.get("tokens", [])) if secret else ([], [])
        self.needles = _Needles(self.ids, texts, tokens)
        self.vectors: dict[str, list[float]] = dict(secret.get("vectors", {})) if secret else {}
        self.exclude = {Path(p).resolve() for p in exclude}
        self.checks: list[Check] = []
        self._live_rowids: dict[str, pa.Array] = {}
        self.scrubbed_at = _scrub_began(journal)

    def add(self, name: str, passed: bool, detail: str) -> None:
        self.checks.append({"name": name, "passed": bool(passed), "detail": detail})

    def run(self) -> list[Check]:
        lance_dir = Path(self.store.layout.lance)
        if not lance_dir.is_dir():
            self.add("local_store", False, "the store is not on a local disk; its files cannot be read back")
            return self.checks
        if self.secret is None:
            self.add(
                "needles_available",
                False,
                "the texts to search for were lost with an interrupted purge; ids were checked, texts not",
            )
        self._check_versions()
        self._check_data_files()
        self._check_index_files()
        self._check_table_metadata()
        self._check_queries()
        self._check_vector_search()
        self._check_keyword_search()
        self._check_duckdb_files()
        self._check_other_files()
        if self.whole:
            self._check_vault()
        return self.checks

    def _check_vault(self) -> None:
        """For a whole principal: the shred step ran and no vault of the principal is left on disk."""
        principal = self.journal["principal"]
        shredded = "crypto_shred" in self.journal["actions"]
        left = Vault(self.store.layout.vault).exists(principal)
        if shredded and not left:
            detail = "the principal's vault key was destroyed"
        elif not shredded:
            detail = "the shred step did not run"
        else:
            detail = "the principal's vault is still on disk"
        self.add("vault_destroyed", shredded and not left, detail)

    # -- table layout --

    def _tables(self) -> list[str]:
        return table_names(self.store)

    def _check_versions(self) -> None:
        problems = []
        deletion_files = 0
        unreferenced = []
        for name in self._tables():
            ds = dataset(self.store, name)
            versions = ds.versions()
            if len(versions) != 1:
                problems.append(f"{name} keeps {len(versions)} versions")
            # Time travel: every version the dataset still lists is opened and searched by id.
            for v in versions:
                if v["version"] == ds.version:
                    continue
                old = dataset(self.store, name).checkout_version(v["version"])
                column = "memory_id" if name == HISTORY else "id"
                for chunk in chunks(self.ids):
                    if old.count_rows(filter=F.is_in(column, chunk)):
                        problems.append(f"{name} version {v['version']} still holds forgotten rows")
                        break
            fragments = ds.get_fragments()
            deletion_files += sum(1 for f in fragments if f.metadata.deletion_file is not None)
            root = Path(table_uri(self.store, name))
            referenced = {Path(df.path).name for f in fragments for df in f.data_files()}
            for path in (root / "data").glob("*"):
                if path.name not in referenced:
                    unreferenced.append(f"{name}/data/{path.name}")
            index_dirs = {str(idx["uuid"]) for idx in ds.list_indices()}
            for path in (root / "_indices").glob("*"):
                if path.name not in index_dirs:
                    unreferenced.append(f"{name}/_indices/{path.name}")
            unreferenced.extend(f"{name}/_deletions/{p.name}" for p in (root / "_deletions").glob("*"))
            manifests = list((root / "_versions").glob("*.manifest"))
            if len(manifests) > 1:
                unreferenced.append(f"{name}/_versions: {len(manifests) - 1} older manifests")
        self.add(
            "no_older_version_holds_it",
            not problems,
            "; ".join(problems) or f"each of {len(self._tables())} tables keeps only its current version",
        )
        self.add(
            "deletions_materialized",
            deletion_files == 0,
            "no fragment keeps deleted rows"
            if not deletion_files
            else f"{deletion_files} fragments keep deleted rows",
        )
        self.add(
            "no_unreferenced_files",
            not unreferenced,
            "every data, index and deletion file belongs to the current version"
            if not unreferenced
            else f"{len(unreferenced)} files outside the current version: {', '.join(unreferenced[:5])}",
        )

    def _live_rowid_set(self, name: str) -> pa.Array:
        cached = self._live_rowids.get(name)
        if cached is None:
            cached = (
                dataset(self.store, name).to_table(columns=[], with_row_id=True)["_rowid"].combine_chunks()
            )
            self._live_rowids[name] = cached
        return cached

    # -- data files --

    def _check_data_files(self) -> None:
        leaks: list[str] = []
        refs: list[str] = []
        shared_texts: set[str] = set()
        shared_tokens: set[str] = set()
        files = rows = 0
        for name in self._tables():
            id_column = "memory_id" if name == HISTORY else "id"
            # Every column that can hold text; vectors are skipped (floats hold no text, and are 90 % of
            # the bytes). A file that lacks one of these columns is read whole.
            text_columns = [f.name for f in dataset(self.store, name).schema if _may_hold_text(f.type)]
            for path in sorted((Path(table_uri(self.store, name)) / "data").glob("*.lance")):
                table = _read_lance_file(path, text_columns)
                files += 1
                rows += table.num_rows
                label = f"{name}/data/{path.name[:12]}…"
                if id_column in table.column_names:
                    gone_mask = pc.is_in(table[id_column], value_set=pa.array(self.ids, pa.string()))
                    n = pc.sum(gone_mask.cast(pa.int64())).as_py() or 0
                    if n:
                        leaks.append(f"{n} forgotten rows in {label}")
                    live = table.filter(pc.invert(gone_mask)) if n else table
                else:  # a file without ids (added columns): any hit counts as a leak
                    live = None
                if self.whole and "principal" in table.column_names:
                    n = pc.sum(pc.equal(table["principal"], self.principal).cast(pa.int64())).as_py() or 0
                    if n:
                        leaks.append(f"{n} rows of {self.principal!r} in {label}")
                scan = live if live is not None else table
                # Every string of the file in one array: one pass per needle instead of one per column.
                texts, tokens, _ = self.needles.hits_in_strings(
                    _all_strings(scan, SYSTEM_COLUMNS), with_ids=False
                )
                if live is None and (texts or tokens):
                    leaks.append(f"forgotten text in {label}, a file without ids")
                elif self.strict and (texts or tokens):
                    leaks.append(f"a removed value in {label}")
                if not self.strict:
                    shared_texts |= texts
                    shared_tokens |= tokens
                for column in ("sources", "learned_from", "superseded_by", "mentions"):
                    if column in scan.column_names:
                        _, _, ids = self.needles.hits_in_strings(
                            _all_strings(scan.select([column])), with_ids=True
                        )
                        same = self._rows_citing(scan, column, ids) if ids else 0
                        if same:
                            refs.append(
                                f"{same} rows of {self.principal!r} in {label} still cite a forgotten id"
                            )
        skipped = len(shared_texts) + len(shared_tokens)
        self.needles = self.needles.without(shared_texts, shared_tokens)
        searched = f"{len(self.needles.texts)} texts/pieces and {len(self.needles.tokens)} tokens"
        detail = (
            f"read {files} data files ({rows} rows) with LanceFileReader: no row of the {len(self.ids)} "
            f"forgotten ids; the other rows hold none of {searched} ({skipped} needles also occur in kept "
            "memories and are not searched for elsewhere)"
        )
        self.add("no_row_in_any_data_file", not leaks, "; ".join(leaks) or detail)
        self.add(
            "no_reference_to_forgotten_ids",
            not refs,
            "; ".join(refs) or "no kept memory of the principal cites a forgotten id",
        )

    def _rows_citing(self, table: pa.Table, column: str, ids: set[str]) -> int:
        if "principal" not in table.column_names:
            return 0
        own = table.filter(pc.equal(table["principal"], self.principal))
        count = 0
        for value in own[column].to_pylist():
            values = value if isinstance(value, list) else [value]
            if any(v in ids for v in values if v):
                count += 1
        return count

    # -- index files --

    def _check_index_files(self) -> None:
        from lance.file import LanceFileReader

        leaks: list[str] = []
        files = 0
        for name in self._tables():
            root = Path(table_uri(self.store, name)) / "_indices"
            for path in sorted(p for p in root.rglob("*") if p.is_file()):
                files += 1
                label = f"{name}/_indices/{path.parent.name[:8]}…/{path.name}"
                try:
                    table = LanceFileReader(str(path)).read_all(batch_size=65536).to_table()
                except Exception:  # noqa: BLE001 - not a Lance file: read its bytes
                    found = self.needles.hits_in_bytes(path.read_bytes(), with_ids=True)
                    if found:
                        leaks.append(f"{'/'.join(found)} in {label}")
                    continue
                texts, tokens, ids = self.needles.hits_in_strings(_all_strings(table), with_ids=True)
                if texts or tokens or ids:
                    leaks.append(f"forgotten {'text' if texts or tokens else 'id'} in {label}")
                for column, arr in _binary_arrays(table):
                    found = self.needles.hits_in_bytes(_binary_bytes(arr), with_ids=True)
                    if found:
                        leaks.append(f"{'/'.join(found)} in {label} ({column})")
                for column in ROWID_COLUMNS:
                    if column in table.column_names and pa.types.is_uint64(table[column].type):
                        col = table[column].combine_chunks()
                        unknown = pc.invert(pc.is_in(col, value_set=self._live_rowid_set(name)))
                        unknown = pc.and_(
                            unknown, pc.not_equal(col, pa.scalar(2**64 - 1, pa.uint64()))
                        )  # "no row"
                        stale = pc.sum(unknown.cast(pa.int64())).as_py() or 0
                        if stale:
                            leaks.append(
                                f"{stale} index entries in {label} point at rows that no longer exist"
                            )
        self.add(
            "index_files_clean",
            not leaks,
            "; ".join(leaks[:8])
            or (
                f"read {files} index files (full-text, vector, scalar): no forgotten text, token or id, and every "
                "row they point at exists (the full-text token dictionary is FST-encoded: it is covered by the "
                "posting row check and by keyword_search_misses_it)"
            ),
        )

    def _check_table_metadata(self) -> None:
        """Manifests, transaction files and deletion vectors as raw bytes: a delete predicate lands there."""
        leaks = []
        files = 0
        for name in self._tables():
            root = Path(table_uri(self.store, name))
            # A manifest spells out the schema and the index names: a memory whose text says "agent" or
            # "session" must not count as a leak there, so words of the table's own metadata are not needles.
            needles = self.needles.without(set(), _metadata_words(self.store, name))
            for sub in ("_versions", "_transactions", "_deletions"):
                for path in (root / sub).glob("*"):
                    if not path.is_file():
                        continue
                    files += 1
                    found = needles.hits_in_bytes(path.read_bytes(), with_ids=True)
                    if found:
                        leaks.append(f"{'/'.join(found)} in {name}/{sub}/{path.name}")
        self.add(
            "table_metadata_clean",
            not leaks,
            "; ".join(leaks[:8]) or f"{files} manifests and transaction files hold no forgotten id or text",
        )

    # -- queries --

    def _check_queries(self) -> None:
        problems = []
        for tier in self.store.tiers_present():
            tbl = self.store.table(tier)
            ids = [i for i in self.ids if self.tiers.get(i) == tier]
            for chunk in chunks(ids):
                n = tbl.count_rows(F.is_in("id", chunk))
                if n:
                    problems.append(f"{n} rows still in {tier}")
            if self.whole:
                n = tbl.count_rows(F.eq("principal", self.principal))
                if n:
                    problems.append(f"{n} rows of the principal still in {tier}")
        self.add("no_row_by_query", not problems, "; ".join(problems) or "no query returns a forgotten id")
        history_left = 0
        if self.store.has_table(HISTORY):
            hist = self.store.table(HISTORY)
            for chunk in chunks(self.ids):
                history_left += hist.count_rows(F.is_in("memory_id", chunk))
            if self.whole:
                history_left += hist.count_rows(F.eq("principal", self.principal))
        self.add(
            "edit_history_purged",
            history_left == 0,
            f"{self.journal.get('history_versions', 0)} earlier versions purged; none left"
            if not history_left
            else f"{history_left} history rows left",
        )

    def _check_vector_search(self) -> None:
        problems = []
        probes = 0
        for mem_id, vec in self.vectors.items():
            tier = self.tiers.get(mem_id)
            if not tier or not self.store.has_table(tier):
                continue
            tbl = self.store.table(tier)
            query = np.asarray(vec, dtype=np.float32)

            def search(tbl: Any = tbl, query: np.ndarray = query) -> Any:
                return (
                    tbl.search(query, vector_column_name="vector")
                    .distance_type("cosine")
                    .limit(10)
                    .select(["id", "_distance"])
                )

            # As recall searches: the principal's rows only (prefiltered), through the ANN index when there is
            # one, exhaustively when not (the data files were read row by row above). A memory still there
            # would be its own nearest neighbour; after a whole-principal forget nothing may come back.
            found = {
                r["id"] for r in search().where(F.eq("principal", self.principal), prefilter=True).to_list()
            }
            if found & set(self.ids):
                problems.append(f"vector search in {tier} returns a forgotten memory")
            elif self.whole and found:
                problems.append(f"vector search in {tier} still finds {len(found)} memories of the principal")
            probes += 1
        self.add(
            "vector_search_misses_it",
            not problems,
            "; ".join(problems) or f"searched with {probes} forgotten memories' own vectors: none came back",
        )

    def _check_keyword_search(self) -> None:
        from memdeck.core.recall.search import keyword_search

        problems = []
        queries = 0
        # Words found nowhere else first: a kept memory sharing common words could outrank a leftover. This
        # check asks the index, not bytes, so every word of the text is a fair query.
        all_words = (self.secret.get("words") or self.secret.get("tokens") or []) if self.secret else []
        active = set(self.needles.tokens)
        words = self.needles.tokens + [w for w in all_words if w not in active]
        batches = [words[i : i + 12] for i in range(0, min(len(words), 12 * 8), 12)]
        for tier in {self.tiers[i] for i in self.ids if i in self.tiers}:
            if not self.store.has_table(tier):
                continue
            tbl = self.store.table(tier)
            for batch in batches:
                queries += 1
                rows = keyword_search(tbl, " ".join(batch), None, 50, ["id"])
                if {r["id"] for r in rows} & set(self.ids):
                    problems.append(f"keyword search in {tier} returns a forgotten memory")
                    break
        self.add(
            "keyword_search_misses_it",
            not problems,
            "; ".join(problems) or f"{queries} full-text queries with the forgotten words: none came back",
        )

    # -- DuckDB and other files --

    def _store_files(self) -> Iterator[Path]:
        root = Path(self.store.root)
        for dirpath, dirnames, filenames in os.walk(root):
            here = Path(dirpath)
            if here == Path(self.store.layout.lance) or Path(self.store.layout.lance) in here.parents:
                dirnames[:] = []
                continue
            for fn in filenames:
                yield here / fn

    def _duckdb_files(self) -> list[Path]:
        out = []
        for path in self._store_files():
            try:
                with path.open("rb") as fh:
                    head = fh.read(16)
            except OSError:
                continue
            if head[8:12] == _DUCKDB_MAGIC:
                out.append(path)
        return out

    def _check_duckdb_files(self) -> None:
        files = self._duckdb_files()
        if not files:
            self.add("analytics_clean", True, "no DuckDB file in the store")
            return
        leaks = []
        rows = 0
        for path in files:
            try:
                n, found_tables, shared = self._query_duckdb(path)
            except Exception as exc:  # noqa: BLE001 - an unreadable analytics file is a failed check
                leaks.append(f"{path.name} could not be queried: {type(exc).__name__}: {exc}")
                shared = (set(), set())
                n, found_tables = 0, []
            rows += n
            leaks.extend(f"forgotten {what} in {path.name} table {table}" for table, what in found_tables)
            # The raw bytes (deleted rows a rewrite left behind): ids, texts, and the tokens no row the
            # principal does not own holds (another principal's query, a name memdeck stores in its columns).
            needles = self.needles.without(*shared)
            for extra in (path, path.with_name(path.name + ".wal")):
                if extra.exists():
                    found = needles.hits_in_bytes(extra.read_bytes(), with_ids=True)
                    if found:
                        leaks.append(f"{'/'.join(found)} in the bytes of {extra.name}")
        self.add(
            "analytics_clean",
            not leaks,
            "; ".join(leaks[:8])
            or f"{len(files)} DuckDB files: every table ({rows} rows) holds no forgotten id, "
            f"and no text the principal could have typed holds the forgotten text; raw bytes neither",
        )

    def _query_duckdb(self, path: Path) -> tuple[int, list[tuple[str, str]], tuple[set[str], set[str]]]:
        """Rows read, (table, what) found, and the (texts, tokens) that rows outside the search hold."""
        import duckdb

        with contextlib.ExitStack() as stack:
            try:
                con = duckdb.connect(str(path), read_only=True)
            except duckdb.Error:
                # Another process holds it for writing: read a copy instead.
                tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="memdeck-check-")))
                shutil.copy2(path, tmp / path.name)
                wal = path.with_name(path.name + ".wal")
                if wal.exists():
                    shutil.copy2(wal, tmp / wal.name)
                con = duckdb.connect(str(tmp / path.name), read_only=True)
            stack.callback(con.close)
            tables = con.execute(
                "select database_name, schema_name, table_name from duckdb_tables() where not internal"
            ).fetchall()
            is_log = path.resolve() == Path(self.store.layout.analytics).resolve()
            rows = 0
            found: list[tuple[str, str]] = []
            shared_texts: set[str] = set()
            shared_tokens: set[str] = set()
            for db, schema, table in tables:
                ident = ".".join('"' + part.replace('"', '""') + '"' for part in (db, schema, table))
                data = con.sql(f"select * from {ident}").to_arrow_table()
                rows += data.num_rows
                _, _, ids = self.needles.hits_in_strings(_all_strings(data), with_ids=True)
                layout = _LOG_TABLES.get(table) if is_log else None
                if layout is None:
                    # A table memdeck does not know: every string of every row may hold the text.
                    texts, tokens, _ = self.needles.hits_in_strings(_all_strings(data), with_ids=False)
                else:
                    # The trace log: the columns a person or agent typed, in the rows the principal could see.
                    # The others hold ids, names and enums memdeck wrote: searched for ids only.
                    text_columns, scope_column, time_column = layout
                    mine = self._principal_rows(data, scope_column)
                    if self.scrubbed_at is not None and time_column in data.column_names:
                        # Judged as of the scrub: what was recorded after it the asker typed after the forget
                        # (its ids are still searched, below, like every row's).
                        before = pc.fill_null(pc.less(data[time_column], pa.scalar(self.scrubbed_at)), True)
                        mine = pc.and_(mine, before)
                    typed = data.select([c for c in text_columns if c in data.column_names])
                    texts, tokens, _ = self.needles.hits_in_strings(
                        _all_strings(typed.filter(mine)), with_ids=False
                    )
                    other_texts, other_tokens, _ = self.needles.hits_in_strings(
                        _all_strings(data.filter(pc.invert(mine))), with_ids=False
                    )
                    system = data.drop_columns([c for c in text_columns if c in data.column_names])
                    sys_texts, sys_tokens, _ = self.needles.hits_in_strings(
                        _all_strings(system), with_ids=False
                    )
                    shared_texts |= (other_texts | sys_texts) - texts
                    shared_tokens |= (other_tokens | sys_tokens) - tokens
                if texts or tokens:
                    found.append((table, "text"))
                elif ids:
                    found.append((table, "id"))
            return rows, found, (shared_texts, shared_tokens)

    def _principal_rows(self, data: pa.Table, column: str) -> pa.Array:
        """A mask of the log rows the forgotten principal could see: theirs, the operator's whole-store ones."""
        from memdeck.core.privacy.vault import OPERATOR_VAULT

        if column not in data.column_names:
            return pa.array([True] * data.num_rows, pa.bool_())
        col = data[column].combine_chunks()
        if pa.types.is_list(col.type) or pa.types.is_large_list(col.type):
            return pa.array([v is None or self.principal in v for v in col.to_pylist()], pa.bool_())
        return pc.fill_null(
            pc.is_in(col, value_set=pa.array([self.principal, OPERATOR_VAULT], pa.string())), True
        )

    def _check_other_files(self) -> None:
        """Every other file of the store, raw: journals, vault, configuration, anything an analytics
        feature wrote. Receipts and tombstones are left out: they hold ids and hashes by construction, and
        the reason a person typed."""
        skip_dirs = {Path(self.store.layout.receipts).resolve(), Path(self.store.layout.tombstones).resolve()}
        duck = {p.resolve() for p in self._duckdb_files()}
        duck |= {p.with_name(p.name + ".wal") for p in duck}
        leaks = []
        files = 0
        for path in self._store_files():
            resolved = path.resolve()
            if resolved in self.exclude or resolved in duck or any(d in resolved.parents for d in skip_dirs):
                continue
            if resolved == Path(self.store.layout.lock).resolve():
                continue
            try:
                data = path.read_bytes()
            except OSError:
                continue
            files += 1
            found = self._file_hits(path, data)
            if found:
                leaks.append(f"{'/'.join(found)} in {path.relative_to(self.store.root)}")
        self.add(
            "store_files_clean",
            not leaks,
            "; ".join(leaks[:8])
            or (
                f"{files} other files of the store hold none of the forgotten text (key files parsed as keys, "
                "JSON files by their values, the rest read raw)"
            ),
        )

    def _file_hits(self, path: Path, data: bytes) -> list[str]:
        """Kinds of needle in one file: a file of a format memdeck writes is parsed, and only what can hold a
        person's text is searched; any other file, or one that does not parse as its kind, is read raw."""
        if _is_key_material(path, data):
            return []
        if path.suffix == ".json" or path.name == "HEAD":
            try:
                value = json.loads(data)
            except ValueError:
                return self.needles.hits_in_bytes(data, with_ids=False)
            strings = pa.array(list(json_strings(value)), pa.large_string())
            texts, tokens, _ = self.needles.hits_in_strings(strings, with_ids=False)
            return (["text"] if texts else []) + (["token"] if tokens else [])
        return self.needles.hits_in_bytes(data, with_ids=False)
