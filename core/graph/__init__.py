"""Graph memory: entities and their relations beside the memory tiers, per principal."""
