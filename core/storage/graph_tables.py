"""The graph's two LanceDB tables, one row per entity and per relation, each carrying its principal.

``entities``: a name as first written, its ``key`` (:func:`~memdeck.core.graph.extract.normalise_name`),
the other keys it was written as (``aliases``), the memories that mention it (``mentions``) and the
embedding of its name (for near-match resolution). ``relations``: subject and object entity ids, a
predicate, whether it is negated, when it held (``valid_from`` / ``valid_until``, as written: "2019",
"2023-05-01") and the memories that support it (``sources``). A forget removes a memory's id from both
lists; a row with none left, that had some, goes.
"""

from __future__ import annotations

import pyarrow as pa

from memdeck.core.records import ENTITIES, RELATIONS, TS

KINDS = ("person", "place", "organisation", "product", "date", "handle", "title", "other")


def entity_schema(dim: int) -> pa.Schema:
    return pa.schema(
        [
            pa.field("id", pa.string(), nullable=False),
            pa.field("principal", pa.string(), nullable=False),
            pa.field("name", pa.string()),
            pa.field("key", pa.string()),
            pa.field("kind", pa.string()),
            pa.field("aliases", pa.list_(pa.string())),
            pa.field("mentions", pa.list_(pa.string())),
            pa.field("vector", pa.list_(pa.float32(), dim)),
            pa.field("created_at", TS),
            pa.field("updated_at", TS),
        ],
        metadata={"memdeck.schema_version": "1"},
    )


def relation_schema() -> pa.Schema:
    return pa.schema(
        [
            pa.field("id", pa.string(), nullable=False),
            pa.field("principal", pa.string(), nullable=False),
            pa.field("subject_id", pa.string()),
            pa.field("predicate", pa.string()),
            pa.field("object_id", pa.string()),
            pa.field("negated", pa.bool_()),
            pa.field("valid_from", pa.string()),
            pa.field("valid_until", pa.string()),
            pa.field("sources", pa.list_(pa.string())),
            pa.field("created_at", TS),
            pa.field("updated_at", TS),
        ],
        metadata={"memdeck.schema_version": "1"},
    )


def graph_schema(name: str, dim: int) -> pa.Schema:
    if name == ENTITIES:
        return entity_schema(dim)
    if name == RELATIONS:
        return relation_schema()
    raise ValueError(f"not a graph table: {name!r}")
