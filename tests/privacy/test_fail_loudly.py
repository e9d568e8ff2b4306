"""memdeck's own modules are never optional: a broken part fails the operation, never a check or a write."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memdeck.core.privacy.vault import Vault
from memdeck.core.store import Store


def test_a_vault_that_is_not_destroyed_fails_the_receipts_check(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.remember("Reach Dana at dana.k@example.com", tier="semantic", principal="alice")
    assert Vault(store.engine.layout.vault).exists("alice")

    def broken_destroy(self: Vault, principal: str) -> dict[str, Any]:
        return {"principal_vault_destroyed": True, "tokens": 1}  # says it did, did nothing

    monkeypatch.setattr(Vault, "destroy", broken_destroy)
    receipt = store.forget_principal("alice", "user request")
    check = next(c for c in receipt["checks"] if c["name"] == "vault_destroyed")
    assert check["passed"] is False and "still on disk" in check["detail"]
    assert receipt["outcome"] == "checks_failed"


def test_a_vault_that_raises_fails_the_forget(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    store.remember("Reach Dana at dana.k@example.com", tier="semantic", principal="alice")

    def failing_destroy(self: Vault, principal: str) -> dict[str, Any]:
        raise OSError("disk on fire")

    monkeypatch.setattr(Vault, "destroy", failing_destroy)
    with pytest.raises(OSError):
        store.forget_principal("alice", "user request")
    signed = (
        list(store.engine.layout.receipts.glob("*.json")) if store.engine.layout.receipts.exists() else []
    )
    assert signed == []  # no receipt for a purge that did not finish


@pytest.mark.parametrize("module", ["memdeck.core.privacy.vault", "memdeck.core.privacy.redact"])
def test_without_the_privacy_modules_nothing_is_written(tmp_path: Path, module: str) -> None:
    """A write must never be stored unredacted because redaction could not be loaded."""
    store = tmp_path / "s"
    code = (
        "import sys\n"
        f"sys.modules[{module!r}] = None  # the module cannot be imported\n"
        "from memdeck.cli import main\n"
        "sys.exit(main(['add', 'my card is 4111 1111 1111 1111', '--tier', 'semantic', '--principal', 'alice',"
        f" '--store', {str(store)!r}]))\n"
    )
    env = {**os.environ, "MEMDECK_HOME": str(tmp_path / "home")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode != 0
    assert not (store / "lance").exists() or not any((store / "lance").iterdir())
