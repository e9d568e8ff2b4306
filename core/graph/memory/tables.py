"""The graph's two LanceDB tables (defined with the engine's tables in
:mod:`memdeck.core.storage.graph_tables`, which creates them)."""

from __future__ import annotations

from memdeck.core.storage.graph_tables import KINDS, entity_schema, graph_schema, relation_schema

__all__ = ["KINDS", "entity_schema", "graph_schema", "relation_schema"]
