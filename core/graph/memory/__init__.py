"""The graph as stored and used: tables, write-time resolution, the per-principal cache, related and path,
the recall channel, forget and analytics. (The extractor beside it, in ``memdeck.core.graph``, needs only
the standard library; this package uses the store.)"""
