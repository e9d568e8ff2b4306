"""memdeck's Textual app. Start it with :func:`memdeck.tui.app.run`; it talks to the store only
through ``memdeck.core``'s public API."""
