"""Issue #14: forgotten stays forgotten, and hostile input breaks nothing. One test (or a few) per item."""

from __future__ import annotations

from memdeck.core.filters import Scope
from memdeck.core.forget import forget
from memdeck.core.privacy.reveal import reveal_memory
from memdeck.core.privacy.vault import Vault

SSN = "078-05-1120"


# --- 1. the vault forgets with the memory, and token-shaped input never resolves ------------------------


def test_forgotten_ssn_cannot_be_revealed_through_a_literal_token(store):
    m = store.remember(f"my SSN is {SSN}", tier="semantic", principal="alice").memory
    token = next(t for t in Vault(store.layout.vault).tokens("alice"))
    assert token in m.text and SSN not in m.text
    receipt = forget(store, [m.id], reason="user request", scope=Scope.of("alice"))
    assert receipt["outcome"] == "verified"
    assert any(c["name"] == "vault_pruned" and c["passed"] for c in receipt["checks"])
    assert "vault_prune" in receipt["actions"]
    assert SSN not in Vault(store.layout.vault).tokens("alice").values()
    # what an MCP agent can send
    note = store.remember(f"note {token}", tier="semantic", principal="alice").memory
    assert SSN not in reveal_memory(store, note.id, "alice").text


def test_token_shaped_input_is_neutralised_while_the_value_is_still_live(store):
    store.remember(f"my SSN is {SSN}", tier="semantic", principal="alice")
    token = next(iter(Vault(store.layout.vault).tokens("alice")))
    note = store.remember(f"note {token}", tier="episodic", principal="alice", tags=[token]).memory
    assert token not in note.text and token not in note.tags
    assert SSN not in reveal_memory(store, note.id, "alice").text


def test_a_pruned_token_number_is_never_issued_again(store):
    m = store.remember(f"my SSN is {SSN}", tier="semantic", principal="alice").memory
    old = next(iter(Vault(store.layout.vault).tokens("alice")))
    forget(store, [m.id], reason="x", scope=Scope.of("alice"))
    m2 = store.remember("other SSN 219-09-9999", tier="semantic", principal="alice").memory
    assert old not in m2.text


def test_values_still_used_by_a_surviving_memory_stay_revealable(store):
    a = store.remember(f"SSN {SSN} on the form", tier="semantic", principal="alice").memory
    b = store.remember(f"the SSN {SSN} again, elsewhere", tier="semantic", principal="alice").memory
    forget(store, [a.id], reason="x", scope=Scope.of("alice"))
    assert SSN in reveal_memory(store, b.id, "alice").text


def test_edit_keeps_the_memorys_own_tokens(store):
    m = store.remember(f"SSN {SSN} on file", tier="semantic", principal="alice").memory
    edited = store.edit(m.id, m.text + " (checked)")
    assert SSN in reveal_memory(store, edited.id, "alice").text
