"""Issue #14: hostile JSONL imports. Whatever the bad lines are, the import never fails with an internal
error and never loses a valid record written beside them."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memdeck.core.embed import HashEmbedder
from memdeck.core.errors import MemdeckError
from memdeck.core.exchange import import_path
from memdeck.core.filters import Scope
from memdeck.core.store import Store

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40),
)
_json = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
_FIELDS = [
    "id",
    "tier",
    "text",
    "summary",
    "principal",
    "agent",
    "tags",
    "importance",
    "pinned",
    "state",
    "created_at",
    "updated_at",
    "last_accessed",
    "access_count",
    "version",
    "meta",
    "events",
    "derived_facts",
    "sources",
    "confidence",
    "evidence_count",
    "name",
    "steps",
    "session",
    "started_at",
]
_hostile_record = st.dictionaries(st.sampled_from(_FIELDS), _json, max_size=8).map(
    lambda r: {**r, "principal": r.get("principal", "alice")}
)
_hostile_line = st.one_of(
    _hostile_record.map(lambda r: json.dumps(r, allow_nan=True)),
    _json.map(lambda v: json.dumps(v, allow_nan=True)),
    st.text(max_size=60).filter(lambda t: "\n" not in t and "\r" not in t),
    st.integers(min_value=1, max_value=3000).map(
        lambda n: '{"text": "x", "meta": ' + "[" * n + "]" * n + "}"
    ),
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hostile=st.lists(_hostile_line, min_size=1, max_size=6), n_valid=st.integers(min_value=1, max_value=4))
def test_hostile_lines_lose_no_valid_record_and_raise_nothing_internal(
    hostile: list[str], n_valid: int
) -> None:
    valid = [
        json.dumps({"text": f"valid fuzz record number {i} about lanterns", "principal": "alice"})
        for i in range(n_valid)
    ]
    lines = [line for pair in zip(valid, hostile, strict=False) for line in pair]
    lines += valid[len(hostile) :] + hostile[len(valid) :]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "in.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
        store = Store.open(Path(tmp) / "store", embedder=HashEmbedder())
        try:
            try:
                import_path(store.engine, path, fmt="jsonl")
            except MemdeckError:
                pass  # a whole-file refusal (e.g. a newer export format header) is a clear error too
            else:
                texts = {m.text for m in store.list(Scope.of("alice"), limit=1000)}
                for i in range(n_valid):
                    assert f"valid fuzz record number {i} about lanterns" in texts
        finally:
            store.close()
