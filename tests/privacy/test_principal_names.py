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
from memdeck.core.records import SCHEMA_VERSION, check_principal
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
    assert Vault(store.engine.layout.vault).tokens(NFC)
    receipt = forget(store.engine, [m.id, other.id], reason="user request", scope=Scope.of(NFC))
    assert receipt["outcome"] == "verified" and receipt["principal"] == NFC
    assert store.list(Scope.of(NFD), limit=10) == [] and store.list(Scope.of(NFC), limit=10) == []
    assert SSN not in Vault(store.engine.layout.vault).tokens(NFC).values()
    assert store.count(Scope.everyone()) == 0


def test_a_trailing_space_names_the_same_principal_on_reads_and_writes(store: Store) -> None:
    a = store.remember("alice likes green tea", tier="semantic", principal="alice ").memory
    assert a.principal == "alice"
    assert [m.id for m in store.list(Scope.of(" alice"), limit=10)] == [a.id]
    assert [i.memory.id for i in store.recall("green tea", principal="alice", record_access=False).items] == [
        a.id
    ]


@pytest.fixture
def cli_store(memdeck_home: Path, tmp_path: Path) -> Path:
    (memdeck_home / "config.toml").write_text('[embedding]\nmodel = "hash-384"\n')
    return tmp_path / "cli-store"


@pytest.mark.parametrize("name", ["\u0430lice", "bob\u202e", "a\x1bb"])
def test_the_cli_refuses_a_lookalike_or_control_name_with_one_line(
    cli_store: Path, capsys, name: str
) -> None:
    code = main(["add", "note", "--tier", "semantic", "--principal", name, "--store", str(cli_store)])
    out, err = capsys.readouterr()
    assert code != 0 and out == ""
    assert err.startswith("memdeck: error: principal") and err.count("\n") == 1


def test_the_cli_lists_rows_written_as_nfd_by_the_nfc_name(cli_store: Path, capsys) -> None:
    assert (
        main(["add", "josé's note", "--tier", "semantic", "--principal", NFD, "--store", str(cli_store)]) == 0
    )
    capsys.readouterr()
    assert main(["list", "--principal", NFC, "--store", str(cli_store), "--json"]) == 0
    out, _ = capsys.readouterr()
    assert "josé's note" in out


def _plant(store: Store, tier: str, template_id: str, new_id: str, principal: str, text: str) -> None:
    """A row as an older memdeck wrote it: the principal's name as typed, added straight through LanceDB."""
    import pyarrow as pa

    from memdeck.core.records import sha256_text

    tbl = store.engine.table(tier)
    rows = tbl.to_lance().to_table(filter=f"id = '{template_id}'")
    for column, value in (
        ("id", new_id),
        ("principal", principal),
        ("text", text),
        ("content_sha256", sha256_text(text)),
    ):
        i = rows.schema.get_field_index(column)
        rows = rows.set_column(i, rows.schema.field(i), pa.array([value], rows.schema.field(i).type))
    tbl.add(rows)


def test_a_store_with_unnormalised_principal_names_is_migrated_on_open_and_forgotten_by_the_nfc_name(
    tmp_path: Path,
) -> None:
    import json

    from memdeck.core.embed import HashEmbedder
    from memdeck.core.forget import forget_principal
    from memdeck.core.recall.traces import log_injection

    root = tmp_path / "old"
    store = Store.open(root, embedder=HashEmbedder())
    sem = store.remember("template fact", tier="semantic", principal="zed").memory
    epi = store.remember("template episode", tier="episodic", principal="zed").memory
    token = Vault(store.engine.layout.vault).token_for(
        NFD, "SSN", SSN
    )  # the vault an older memdeck keyed by NFD
    _plant(store, "semantic", sem.id, "sem_nfd00000000000000000", NFD, f"José's SSN is {token}")
    _plant(store, "episodic", epi.id, "epi_nfd00000000000000000", NFD, "José called about the lease")
    _plant(store, "semantic", sem.id, "sem_space000000000000000", "José ", "José likes figs")
    log_injection(
        store.engine,
        principal=NFD,
        agent="bot",
        session="s1",
        kind="context",
        ids=["sem_nfd00000000000000000"],
    )
    store.close()
    meta = json.loads((root / "memdeck.json").read_text())
    (root / "memdeck.json").write_text(json.dumps({**meta, "schema_version": 2}))

    store = Store.open(root, embedder=HashEmbedder())
    try:
        planted = {"sem_nfd00000000000000000", "epi_nfd00000000000000000", "sem_space000000000000000"}
        assert {m.id for m in store.list(Scope.of(NFC), limit=10)} == planted
        assert {m.principal for m in store.list(Scope.of(NFC), limit=10)} == {NFC}
        from memdeck.core.privacy.reveal import reveal_memory

        assert reveal_memory(store.engine, "sem_nfd00000000000000000", NFC).text.endswith(
            SSN
        )  # the vault moved too
        assert not Vault(store.engine.layout.vault).exists(NFD)
        assert json.loads((root / "memdeck.json").read_text())["schema_version"] == SCHEMA_VERSION

        receipt = forget_principal(store.engine, NFC, "user request")
        assert receipt["outcome"] == "verified"
        assert {d["id"] for d in receipt["deleted"]} == planted
        assert store.count(Scope.everyone()) == 2  # zed's templates
        assert not Vault(store.engine.layout.vault).exists(NFC)
        from memdeck.core.recall.traces import injections

        assert injections(store.engine) == []
    finally:
        store.close()


DISGUISED = {
    "\u0430\u04cf\u0456\u0441\u0435": "alice",  # all Cyrillic: а ӏ і с е
    "\uff41\uff4c\uff49\uff43\uff45": "alice",  # full-width
    "\u0391\u0399": "AI",  # all Greek capitals
    "\U0001d41a\U0001d425\U0001d422\U0001d41c\U0001d41e": "alice",  # mathematical bold
    "bob\u00a0smith": "bob smith",  # a no-break space
}


@pytest.mark.parametrize("name", sorted(DISGUISED))
def test_a_name_disguised_as_another_is_refused_by_the_installed_command(cli_store: Path, name: str) -> None:
    """Such a name would list like the one it imitates while holding other memories: refused with one line
    that says what it reads as, and nothing is stored."""
    import subprocess
    import sys

    memdeck = str(Path(sys.executable).with_name("memdeck"))
    r = subprocess.run(
        [memdeck, "--store", str(cli_store), "add", "a note", "--tier", "semantic", "--principal", name],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert r.returncode != 0 and r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("memdeck: error: principal"), lines
    assert repr(DISGUISED[name]) in lines[0]
    r = subprocess.run(
        [memdeck, "--store", str(cli_store), "list", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert name not in r.stdout


def test_names_in_one_script_that_cannot_be_taken_for_latin_are_kept() -> None:
    for name in ("алиса", "Дмитрий", "Ελένη", "山田", "José", "Ωμέγα"):
        assert check_principal(name) == name
    for name in DISGUISED:
        with pytest.raises(MemdeckError):
            check_principal(name)
