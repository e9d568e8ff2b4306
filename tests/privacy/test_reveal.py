"""Reveal: only an explicit request for the memory's own principal shows the originals."""

from __future__ import annotations

import pytest

from memdeck.core import NotFound
from memdeck.core.privacy.reveal import reveal_memory


def test_reveal_needs_the_memorys_principal(store):
    m = store.remember("Dana's email is dana.k@example.com", tier="semantic", principal="alice").memory
    assert "dana.k@example.com" not in m.text and "<EMAIL_1>" in m.text
    shown = reveal_memory(store.engine, m.id, "alice")
    assert shown.text == "Dana's email is dana.k@example.com" and shown.revealed == 1
    with pytest.raises(NotFound):
        reveal_memory(store.engine, m.id, "mallory")
