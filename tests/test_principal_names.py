"""Issue #14 item 11: a principal name means one principal however it is typed; look-alike names are refused."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest

from memdeck.cli import main
from memdeck.core.errors import MemdeckError
from memdeck.core.filters import Scope
from memdeck.core.forget import forget
from memdeck.core.privacy.vault import Vault
from memdeck.core.records import check_principal
from memdeck.core.store import Store

NFC = unicodedata.normalize("NFC", "José")
NFD = unicodedata.normalize("NFD", "José")
SSN = "078-05-1120"


def test_check_principal_normalises_and_refuses_lookalikes() -> None:
    assert NFC != NFD
    assert check_principal(NFD) == check_principal(NFC) == NFC
    assert check_principal("alice ") == check_principal(" alice") == "alice"
    assert check_principal("Дмитрий") == "Дмитрий" and check_principal("山田") == "山田"  # one script is fine
    for name in ("\u0430lice", "p\u0430ypal", "Ωmega", "bob\u202e", "a\nb", "al\u200bice", "x\x1b[31m"):
        with pytest.raises(MemdeckError):
            check_principal(name)


def test_forget_with_the_nfc_name_removes_rows_and_vault_written_as_nfd(store: Store) -> None:
    m = store.remember(f"my SSN is {SSN}", tier="semantic", principal=NFD).memory
    other = store.remember("a second note", tier="episodic", principal=NFD).memory
    assert m.principal == NFC  # stored normalised
    assert Vault(store.layout.vault).tokens(NFC)
    receipt = forget(store, [m.id, other.id], reason="user request", scope=Scope.of(NFC))
    assert receipt["outcome"] == "verified" and receipt["principal"] == NFC
    assert store.list(Scope.of(NFD), limit=10) == [] and store.list(Scope.of(NFC), limit=10) == []
    assert SSN not in Vault(store.layout.vault).tokens(NFC).values()
    assert store.count(Scope.everyone()) == 0


def test_a_trailing_space_names_the_same_principal_on_reads_and_writes(store: Store) -> None:
    a = store.remember("alice likes green tea", tier="semantic", principal="alice ").memory
    assert a.principal == "alice"
    assert [m.id for m in store.list(Scope.of(" alice"), limit=10)] == [a.id]
    assert [i.memory.id for i in store.recall("green tea", principal="alice", record_access=False).items] == [a.id]


@pytest.fixture
def cli_store(memdeck_home: Path, tmp_path: Path) -> Path:
    (memdeck_home / "config.toml").write_text('[embedding]\nmodel = "hash-384"\n')
    return tmp_path / "cli-store"


@pytest.mark.parametrize("name", ["\u0430lice", "bob\u202e", "a\x1bb"])
def test_the_cli_refuses_a_lookalike_or_control_name_with_one_line(cli_store: Path, capsys, name: str) -> None:
    code = main(["add", "note", "--tier", "semantic", "--principal", name, "--store", str(cli_store)])
    out, err = capsys.readouterr()
    assert code != 0 and out == ""
    assert err.startswith("memdeck: error: principal") and err.count("\n") == 1


def test_the_cli_lists_rows_written_as_nfd_by_the_nfc_name(cli_store: Path, capsys) -> None:
    assert main(["add", "josé's note", "--tier", "semantic", "--principal", NFD, "--store", str(cli_store)]) == 0
    capsys.readouterr()
    assert main(["list", "--principal", NFC, "--store", str(cli_store), "--json"]) == 0
    out, _ = capsys.readouterr()
    assert "josé's note" in out
