"""Forgetting a memory removes its entities and relations from every file of the graph tables."""

from __future__ import annotations

from pathlib import Path

import lance
import pyarrow as pa
from lance.file import LanceFileReader

from memdeck.core import Scope
from memdeck.core.forget import forget, forget_principal

ONLY = "Zorbulon"  # an entity only the forgotten memory mentions
SHARED = "Quillfeather"  # an entity a kept memory mentions too


def _strings(arr: pa.Array) -> list[str]:
    t = arr.type
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return [v for v in arr.to_pylist() if v is not None]
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return _strings(arr.flatten())
    return []


def graph_files_holding(store, needle: str) -> list[str]:
    """Every data file and every version of the graph tables, read raw with LanceFileReader."""
    found = []
    for name in ("entities", "relations"):
        root = Path(store.root) / "lance" / f"{name}.lance"
        for path in sorted((root / "data").glob("*.lance")):
            table = LanceFileReader(str(path)).read_all().to_table()
            if any(
                needle.lower() in v.lower()
                for c in table.column_names
                for v in _strings(table[c].combine_chunks())
            ):
                found.append(f"{name}/{path.name}")
        for v in lance.dataset(str(root)).versions():
            data = lance.dataset(str(root), version=v["version"]).to_table()
            if any(
                needle.lower() in s.lower()
                for c in data.column_names
                for s in _strings(data[c].combine_chunks())
            ):
                found.append(f"{name}@{v['version']}")
    return found


def _setup(store):
    gone = store.remember(
        f"{ONLY} visited {SHARED} in the spring.", tier="semantic", principal="alice"
    ).memory
    kept = store.remember(
        f"{SHARED} is a quiet village by the lake.", tier="semantic", principal="alice"
    ).memory
    store.add_relation("alice", ONLY, "visited", SHARED, sources=[gone.id])
    return gone, kept


def test_forget_purges_entities_and_relations_only_it_supported(store):
    gone, kept = _setup(store)
    before = {e["name"] for e in store.entities(Scope.of("alice"))}
    assert {ONLY, SHARED} <= before
    receipt = forget(store.engine, [gone.id], reason="user request", scope=Scope.of("alice"))
    assert all(c["passed"] for c in receipt["checks"]), receipt["checks"]
    names = {e["name"]: e for e in store.entities(Scope.of("alice"))}
    assert ONLY not in names
    assert names[SHARED]["mentions"] == 1
    assert store.entity("alice", SHARED)["mentions"] == [kept.id]
    assert store.entity("alice", SHARED)["relations"] == []
    tiers = {c["tier"] for c in receipt["cascade"]}
    assert {"entities", "relations"} <= tiers
    assert ONLY not in str(receipt)  # the receipt names ids and reasons, never an entity's name
    assert graph_files_holding(store, ONLY) == []
    assert all(gone.id not in s for s in graph_files_holding(store, gone.id))


def test_the_verifier_flags_an_entity_still_citing_a_forgotten_memory(store, monkeypatch):
    import memdeck.core.forget.purge as purge

    gone, _kept = _setup(store)
    monkeypatch.setattr(purge, "apply_graph", lambda *a, **k: {})  # a purge that forgot the graph
    receipt = forget(store.engine, [gone.id], reason="user request", scope=Scope.of("alice"))
    failed = {c["name"] for c in receipt["checks"] if not c["passed"]}
    assert "no_reference_to_forgotten_ids" in failed


def test_forget_principal_removes_their_whole_graph_and_leaves_others(store):
    _setup(store)
    store.remember(f"{ONLY} writes letters to Bob.", tier="semantic", principal="bob")
    receipt = forget_principal(store.engine, "alice", reason="account closed")
    assert all(c["passed"] for c in receipt["checks"]), receipt["checks"]
    assert store.entities(Scope.of("alice")) == []
    assert ONLY in {e["name"] for e in store.entities(Scope.of("bob"))}
