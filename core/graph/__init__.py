"""Graph memory: entities and relations extracted from memory text, offline and deterministic."""
