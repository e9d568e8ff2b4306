"""A value typed into a whole-store recall (the operator's vault, where the trace log's redacted queries
resolve) is pruned when the memory that held it is forgotten, by id or with its whole principal."""

from __future__ import annotations

import pytest

from memdeck.core.filters import Scope
from memdeck.core.forget import forget, forget_principal
from memdeck.core.privacy.vault import OPERATOR_VAULT, Vault

SSN = "078-05-1120"
EMAIL = "kestrel.v@example.net"


@pytest.mark.parametrize("whole", [False, True])
def test_the_operators_copy_of_a_forgotten_value_goes(store, whole):
    m = store.remember(
        f"alice's SSN is {SSN} and her mail {EMAIL}", tier="semantic", principal="alice"
    ).memory
    store.remember("bob's note about lunch", tier="semantic", principal="bob")
    store.recall(f"who has SSN {SSN}", scope=Scope.everyone())  # the operator typed the value
    store.recall("mail kestrel.v@example.org", scope=Scope.everyone())  # a different value: stays
    store.close()  # the trace writer's redaction has run
    store = type(store).open(store.root, embedder=store.engine.embedder, config=store.settings)
    vault = Vault(store.engine.layout.vault)
    assert SSN in vault.tokens(OPERATOR_VAULT).values()
    receipt = (
        forget_principal(store.engine, "alice", "erase me")
        if whole
        else forget(store.engine, [m.id], "user request")
    )
    assert receipt["outcome"] == "verified", [c for c in receipt["checks"] if not c["passed"]]
    left = set(vault.tokens(OPERATOR_VAULT).values())
    assert SSN not in left
    assert "kestrel.v@example.org" in left
    store.close()
