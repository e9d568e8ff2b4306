"""Switching a store to another embedding model: every vector re-embedded, resumable, switched at once.

``memdeck model use NAME`` runs :func:`switch`, in two phases.

1. **Embed** (the store keeps answering on its old vectors): each table's texts (a memory's ``text``, an
   entity's ``name``) are embedded with the new model in batches, each batch appended to a shadow table
   under ``<store>/reembed/vectors`` (row id, sha256 of the text, vector). Every batch is a LanceDB commit,
   so a process killed at any point resumes from the last batch: the next run embeds only rows whose id
   and text are not in the shadow yet.
2. **Switch** (under the store's exclusive lock, so no write can slip between): rows written or edited
   since phase 1 are embedded too; each table is written whole with its new vectors (any dimension) into
   ``<store>/reembed/stage``; then ``reembed/switch.json`` is written (atomically) and each table folder is
   swapped for its staged copy, and the store's memdeck.json records the new model. A process killed
   during the swap leaves ``switch.json``: the next open of the store finishes the swap before anything
   reads (:func:`recover`), so a reader sees all tables on the old model or all on the new.

Only stores whose tables are on this machine's disk can switch (a store on object storage is refused).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from memdeck.core.embed import Embedder, EmbeddingUnavailable
from memdeck.core.errors import MemdeckError
from memdeck.core.files import write_atomic_text
from memdeck.core.records import ENTITIES, STORED_TIERS, sha256_text

if TYPE_CHECKING:
    from memdeck.core.storage.engine import Engine

log = logging.getLogger("memdeck.reembed")

# Each table with vectors, and the column its vectors embed.
EMBEDDED_TABLES: tuple[tuple[str, str], ...] = (
    *((tier, "text") for tier in STORED_TIERS),
    (ENTITIES, "name"),
)
BATCH = 64

Progress = Callable[[str, int, int], None]  # table, rows done, rows in the table


def _work(store: Engine) -> Path:
    return store.root / "reembed"


def _switch_file(store: Engine) -> Path:
    return _work(store) / "switch.json"


def _state_file(store: Engine) -> Path:
    return _work(store) / "state.json"


def pending(store: Engine) -> dict[str, Any] | None:
    """The switch a killed `memdeck model use` left unfinished (phase 1 or the swap), or None."""
    for path in (_switch_file(store), _state_file(store)):
        if path.exists():
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if isinstance(data, dict):
                return data
    return None


def _check_local(store: Engine) -> None:
    if not store.local_tables:
        raise MemdeckError(
            "switching the model of a store on object storage is not supported; export it, import it into "
            "a local store with the new model instead"
        )


def _shadow_schema(dim: int) -> pa.Schema:
    return pa.schema(
        [
            pa.field("id", pa.string(), nullable=False),
            pa.field("sha", pa.string()),
            pa.field("vector", pa.list_(pa.float32(), dim)),
        ]
    )


def _texts(store: Engine, table: str, column: str) -> pa.Table:
    if not store.has_table(table):
        return pa.table({"id": pa.array([], pa.string()), column: pa.array([], pa.string())})
    return store.scan(table, ["id", column])


def _encode(embedder: Embedder, texts: list[str], dim: int) -> np.ndarray:
    try:
        vectors = embedder.encode(texts)
    except EmbeddingUnavailable as exc:
        raise MemdeckError(f"the model {embedder.name!r} cannot embed: {exc}") from None
    if vectors.shape != (len(texts), dim):
        raise MemdeckError(
            f"the model {embedder.name!r} gave vectors of {vectors.shape[1]} dimensions, not {dim}"
        )
    return np.asarray(vectors, dtype=np.float32)


def _shadow_done(shadow: Any, names: set[str], table: str) -> dict[str, str]:
    if table not in names:
        return {}
    done = shadow.open_table(table).to_lance().to_table(columns=["id", "sha"])
    return dict(zip(done.column("id").to_pylist(), done.column("sha").to_pylist(), strict=True))


def embed_phase(
    store: Engine, embedder: Embedder, dim: int, *, batch: int = BATCH, progress: Progress | None = None
) -> None:
    """Phase 1: embed every table's texts into the shadow tables, resuming where an earlier run stopped."""
    _check_local(store)
    work = _work(store)
    state = {"model": embedder.name, "dim": dim}
    previous = pending(store)
    if previous is not None and (previous.get("model"), previous.get("dim")) != (embedder.name, dim):
        shutil.rmtree(work / "vectors", ignore_errors=True)  # an unfinished switch to another model
    work.mkdir(parents=True, exist_ok=True, mode=0o700)
    write_atomic_text(_state_file(store), json.dumps(state) + "\n", 0o600)
    import lancedb

    shadow = lancedb.connect(str(work / "vectors"))
    names = set(shadow.table_names())
    for table, column in EMBEDDED_TABLES:
        rows = _texts(store, table, column)
        ids = rows.column("id").to_pylist()
        texts = [t or "" for t in rows.column(column).to_pylist()]
        done = _shadow_done(shadow, names, table)
        todo = [
            i
            for i, (rid, text) in enumerate(zip(ids, texts, strict=True))
            if done.get(rid) != sha256_text(text)
        ]
        total = len(ids)
        finished = total - len(todo)
        if progress is not None:
            progress(table, finished, total)
        target = shadow.open_table(table) if table in names else None
        for start in range(0, len(todo), batch):
            chunk = todo[start : start + batch]
            vectors = _encode(embedder, [texts[i] for i in chunk], dim)
            data = pa.table(
                {
                    "id": pa.array([ids[i] for i in chunk], pa.string()),
                    "sha": pa.array([sha256_text(texts[i]) for i in chunk], pa.string()),
                    "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1)), dim),
                },
                schema=_shadow_schema(dim),
            )
            if target is None:
                target = shadow.create_table(table, data=data, schema=_shadow_schema(dim))
                names.add(table)
            else:
                target.add(data)
            finished += len(chunk)
            if progress is not None:
                progress(table, finished, total)


def _new_vectors(
    store: Engine, embedder: Embedder, dim: int, table: str, column: str, full: pa.Table
) -> pa.Array:
    """The new vector of every row of ``full``: from the shadow, or embedded now when written since."""
    import lancedb

    shadow = lancedb.connect(str(_work(store) / "vectors"))
    names = set(shadow.table_names())
    known: dict[str, tuple[str, np.ndarray]] = {}
    if table in names:
        done = shadow.open_table(table).to_lance().to_table()
        vecs = np.asarray(done.column("vector").combine_chunks().values.to_numpy(zero_copy_only=False))
        vecs = vecs.reshape(-1, dim)
        for n, (rid, sha) in enumerate(
            zip(done.column("id").to_pylist(), done.column("sha").to_pylist(), strict=True)
        ):
            known[rid] = (sha, vecs[n])  # a later batch's row (an edit re-embedded) wins
    ids = full.column("id").to_pylist()
    texts = [t or "" for t in full.column(column).to_pylist()]
    out = np.zeros((len(ids), dim), dtype=np.float32)
    missing: list[int] = []
    for n, (rid, text) in enumerate(zip(ids, texts, strict=True)):
        hit = known.get(rid)
        if hit is not None and hit[0] == sha256_text(text):
            out[n] = hit[1]
        else:
            missing.append(n)
    for start in range(0, len(missing), BATCH):
        chunk = missing[start : start + BATCH]
        out[chunk] = _encode(embedder, [texts[i] for i in chunk], dim)
    return pa.FixedSizeListArray.from_arrays(pa.array(out.reshape(-1)), dim)


def _stage_table(store: Engine, table: str, column: str, embedder: Embedder, dim: int) -> bool:
    """Write ``table`` whole, with new vectors, into the stage; False when the store has no such table."""
    if not store.has_table(table):
        return False
    import lance

    full = store.table(table).to_lance().to_table()
    vectors = _new_vectors(store, embedder, dim, table, column, full)
    at = full.schema.get_field_index("vector")
    field = full.schema.field(at).with_type(pa.list_(pa.float32(), dim))
    schema = full.schema.set(at, field)
    staged = pa.Table.from_arrays(
        [vectors if i == at else full.column(i) for i in range(full.num_columns)], schema=schema
    )
    per_file = store.settings.store.max_rows_per_fragment
    lance.write_dataset(
        staged, str(_work(store) / "stage" / f"{table}.lance"), schema=schema, max_rows_per_file=per_file
    )
    if table in STORED_TIERS:
        import lancedb

        from memdeck.core.storage.indexing import ensure_fts

        ensure_fts(lancedb.connect(str(_work(store) / "stage")).open_table(table))
    return True


def switch_phase(store: Engine, embedder: Embedder, dim: int) -> None:
    """Phase 2: under the exclusive lock, stage every table with its new vectors, then swap them in."""
    _check_local(store)
    work = _work(store)
    with store.lock.exclusive():
        shutil.rmtree(work / "stage", ignore_errors=True)  # an earlier switch killed while staging
        (work / "stage").mkdir(parents=True, exist_ok=True, mode=0o700)
        staged = [t for t, column in EMBEDDED_TABLES if _stage_table(store, t, column, embedder, dim)]
        plan = {"model": embedder.name, "dim": dim, "tables": staged}
        write_atomic_text(_switch_file(store), json.dumps(plan) + "\n", 0o600)
        _finish(store, plan)
    _after_switch(store, embedder)


def _finish(store: Engine, plan: dict[str, Any]) -> None:
    """Swap each staged table in, record the model, remove the work folder. Idempotent: a run killed at
    any step is finished by the next."""
    work = _work(store)
    live_dir = Path(store.uri)
    old_dir = work / "old"
    old_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    with store._tables_lock:
        store._tables.clear()
        for table in plan["tables"]:
            stage = work / "stage" / f"{table}.lance"
            live = live_dir / f"{table}.lance"
            old = old_dir / f"{table}.lance"
            if not stage.exists():
                continue  # swapped in already
            if live.exists():
                if old.exists():
                    shutil.rmtree(old)  # an earlier swap moved the old table there: this live one is not it
                os.replace(live, old)
            os.replace(stage, live)
    meta = dict(store.meta)
    meta.update({"embedding_model": plan["model"], "dim": int(plan["dim"]), "chosen_model": plan["model"]})
    write_atomic_text(store.layout.meta, json.dumps(meta, indent=2) + "\n", 0o600)
    store.meta = meta
    shutil.rmtree(work)


def _after_switch(store: Engine, embedder: Embedder | None) -> None:
    """Forget what this process held of the old tables; build the new tables' other indices."""
    if embedder is not None:
        store.embedder = embedder
    store._fts_ready.clear()
    store._indexed_cache.clear()
    store.refresh()
    from memdeck.core.storage.indexing import ensure_indexes

    for tier in STORED_TIERS:
        if store.has_table(tier):
            try:
                ensure_indexes(store, tier)
            except Exception as exc:  # noqa: BLE001 - built again by maintenance or the next write
                log.info("indices on %s not rebuilt after the switch: %s", tier, exc)


def recover(store: Engine) -> bool:
    """Finish a swap that a killed `memdeck model use` left half done (called when a store opens)."""
    if not _switch_file(store).exists():
        return False
    plan = pending(store)
    if plan is None:
        return False
    with store.lock.exclusive():
        if _switch_file(store).exists():
            _finish(store, plan)
    from memdeck.core.embed import make_embedder

    if store.embedder.name != plan["model"]:
        store.embedder = make_embedder(store.settings.embedding, plan["model"])
    _after_switch(store, None)
    return True


def switch(
    store: Engine, embedder: Embedder, *, batch: int = BATCH, progress: Progress | None = None
) -> dict[str, Any]:
    """Re-embed every table of ``store`` with ``embedder`` and switch the store to it (both phases)."""
    _check_local(store)
    try:
        embedder.load()
    except EmbeddingUnavailable as exc:
        raise MemdeckError(str(exc)) from None
    dim = int(embedder.dim or 0)
    if dim <= 0:
        raise MemdeckError(f"the model {embedder.name!r} does not report its embedding size")
    before = {"model": store.embedding_model, "dim": store.dim}
    embed_phase(store, embedder, dim, batch=batch, progress=progress)
    switch_phase(store, embedder, dim)
    return {"from": before, "to": {"model": embedder.name, "dim": dim}}
