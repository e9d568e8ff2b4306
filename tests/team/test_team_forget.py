"""Forgetting on a team store holds on every machine: tombstones and vaults follow the bucket's purges.

Machines are separate processes with their own MEMDECK_HOME and local store directory on one bucket prefix of
moto's S3 server (started on loopback by the ``s3_endpoint`` fixture); each runs the installed
``memdeck`` command, as a person or an agent would.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from memdeck.core import Scope
from memdeck.core.consolidate import consolidate
from memdeck.core.embed import HashEmbedder
from memdeck.core.exchange import export_jsonl, import_path
from memdeck.core.forget import forget, tombstones
from memdeck.core.maintenance.scheduler import Scheduler
from memdeck.core.paths import StoreLayout
from memdeck.core.privacy.vault import OPERATOR_VAULT, Vault
from memdeck.core.storage.lease import S3Objects
from memdeck.core.store import Store
from tests.teamkit import Machines, nothing_forgotten_in_the_prefix, options

MEMDECK = str(Path(sys.executable).with_name("memdeck"))
SSN, CARD, OTHER_CARD, EMAIL = (
    "078-05-1120",
    "4111 1111 1111 1111",
    "5555 5555 5555 4444",
    "bob.k@example.com",
)
FACT = "Bob's locker code is 4417"

# memdeck's command line run for several commands in one process, one after the other, each as `memdeck` runs
# it (its own store opened and closed): a machine's read-only checks, without an interpreter start each.
READS = textwrap.dedent("""
    import contextlib, io, json, sys
    from memdeck.cli import main
    done = []
    for args in json.loads(sys.argv[1]):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            status = main(args)
        done.append({"args": args, "status": status, "stdout": out.getvalue()})
    print(json.dumps(done))
""")


class Team(Machines):
    """Machines whose default store is the team store in the bucket (``[storage] uri`` in their config)."""

    def env(self, name: str, **extra: str) -> dict[str, str]:
        env = super().env(name, **extra)
        config = Path(env["MEMDECK_HOME"]) / "config.toml"
        config.write_text(
            config.read_text() + f'uri = "{self.uri}"\n'
        )  # [storage] is the file's last section
        return env

    def memdeck(self, name: str, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            [MEMDECK, *args], env=self.env(name), capture_output=True, text=True, timeout=300, cwd=self.tmp
        )
        if ok:
            assert proc.returncode == 0, f"{name}: memdeck {' '.join(args)}\n{proc.stderr[-3000:]}"
        return proc

    def json(self, name: str, *args: str) -> Any:
        return json.loads(self.memdeck(name, *args, "--json").stdout)

    def reads(self, name: str, *commands: list[str]) -> list[Any]:
        """The JSON each command prints, the commands run in turn in one process of this machine."""
        proc = subprocess.run(
            [sys.executable, "-c", READS, json.dumps([[*c, "--json"] for c in commands])],
            env=self.env(name),
            capture_output=True,
            text=True,
            timeout=300,
            cwd=self.tmp,
        )
        assert proc.returncode == 0, f"{name}: {proc.stderr[-3000:]}"
        done = json.loads(proc.stdout.splitlines()[-1])
        failed = [d["args"] for d in done if d["status"] != 0]
        assert not failed, f"{name}: memdeck {failed}\n{proc.stderr[-3000:]}"
        return [json.loads(d["stdout"]) for d in done]

    def add(self, name: str, text: str, principal: str, tier: str = "semantic") -> str:
        return str(self.json(name, "add", text, "--tier", tier, "--principal", principal)["memory"]["id"])

    def vault_values(self, name: str) -> set[str]:
        """Every value any vault of this machine's store decrypts (the principals here, and the operator's)."""
        vault = Vault(StoreLayout(self.tmp / f"home-{name}" / "store").vault)
        return {v for p in ("alice", "bob", OPERATOR_VAULT) for v in vault.tokens(p).values()}

    def listed(self, name: str) -> dict[str, str]:
        return {m["id"]: m["text"] for m in self.json(name, "list", "--limit", "1000")}


def episodes(path: Path, *facts: str) -> Path:
    """A JSONL file of new episodes of bob (no ids), each with these derived facts: what an agent writes."""
    path.write_text(
        "".join(
            json.dumps(
                {
                    "text": f"Gym visit {i}, talked about the locker",
                    "tier": "episodic",
                    "principal": "bob",
                    "session": f"{path.stem}-{i}",
                    "derived_facts": list(facts),
                }
            )
            + "\n"
            for i in range(2)
        )
    )
    return path


def test_what_one_machine_forgot_stays_forgotten_on_every_machine(tmp_path, s3_endpoint, bucket):
    team = Team(tmp_path, f"s3://{bucket}/team", s3_endpoint)
    # ben writes: alice's SSN, bob's card and e-mail (each value goes into ben's own vault), an episode whose
    # consolidation makes a fact, a Markdown folder synced; cal, a third machine, vaults another of alice's.
    alice = [
        team.add("ben", f"Alice's SSN is {SSN}", "alice"),
        team.add("ben", "Alice prefers window seats", "alice"),
    ]
    alice.append(team.add("cal", f"Alice's backup card is {OTHER_CARD}", "alice"))
    card = team.add("ben", f"Bob paid the gym with card {CARD}", "bob")
    kept = team.add("ben", f"Bob's e-mail is {EMAIL}", "bob")
    team.memdeck("ben", "import", str(episodes(tmp_path / "first.jsonl", FACT)))
    team.memdeck("ben", "consolidate", "--principal", "bob")
    fact = next(i for i, t in team.listed("ben").items() if "locker code" in t)
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "MEMORY.md").write_text(
        "# Health\nBob takes insulin every morning.\n\n# Food\nBob likes figs.\n"
    )
    team.memdeck("ben", "sync", str(notes), "--principal", "bob")
    insulin = next(i for i, t in team.listed("ben").items() if "insulin" in t)
    team.memdeck("ben", "export", str(tmp_path / "old.jsonl"))
    assert {SSN, CARD, EMAIL} <= team.vault_values("ben") and OTHER_CARD in team.vault_values("cal")

    # ann, who wrote none of it, forgets alice entirely and three of bob's memories by id.
    forgot = team.json("ann", "forget", "--principal", "alice", "--reason", "user request")
    assert forgot["outcome"] == "verified"
    forgot = team.json("ann", "forget", card, fact, insulin, "--reason", "user request")
    assert forgot["outcome"] == "verified"
    gone = {*alice, card, fact, insulin}

    # ben brings back what it can: the old export, the fact from a new episode, the folder, reveal.
    imported = team.json("ben", "import", str(tmp_path / "old.jsonl"))
    assert imported["forgotten"] >= len(gone), imported
    team.memdeck("ben", "import", str(episodes(tmp_path / "again.jsonl", FACT)))
    team.memdeck("ben", "consolidate", "--principal", "bob")
    team.memdeck("ben", "sync", str(notes), "--principal", "bob")
    assert team.memdeck("ben", "reveal", card, "--principal", "bob", ok=False).returncode != 0
    assert (
        EMAIL in team.memdeck("ben", "reveal", kept, "--principal", "bob").stdout
    )  # what was kept still shows

    for name in ("ann", "ben", "cal"):
        rows, alices, recalled = team.reads(
            name,
            ["list", "--limit", "1000"],
            ["list", "--principal", "alice"],
            ["recall", "locker code insulin gym card", "--principal", "bob"],
        )
        listed = {m["id"]: m["text"] for m in rows}
        assert kept in listed, name  # the kept memory lists everywhere: the machine's answers were read
        assert not gone & set(listed), name
        assert not [t for t in listed.values() if "locker code" in t or "insulin" in t], name
        assert not alices, name
        assert not [r for r in recalled if r["id"] in gone or "locker code" in r["text"]], name
        values = team.vault_values(name)
        assert not values & {SSN, CARD, OTHER_CARD}, name  # no vault anywhere decrypts a forgotten value
    assert EMAIL in team.vault_values("ben")
    # The bucket's tombstones name nothing in clear (receipts aside, no object holds a forgotten id).
    nothing_forgotten_in_the_prefix(s3_endpoint, bucket, "team", sorted(gone), "insulin")


def test_a_running_machine_and_its_scheduler_honour_another_machines_forget(
    tmp_path, s3_endpoint, bucket, monkeypatch
):
    team = Team(tmp_path, f"s3://{bucket}/team", s3_endpoint)
    ben = team.open("ben", monkeypatch)  # stays open, as an agent's process or the app does
    try:
        ben.remember("Gym visit", tier="episodic", principal="bob", session="s1", derived_facts=[FACT])
        consolidate(ben.engine, "bob")
        fact = next(m for m in ben.list(Scope.of("bob"), limit=10) if m.tier == "semantic")
        card = ben.remember(f"Bob paid the gym with card {CARD}", tier="semantic", principal="bob").memory
        ben.remember(f"Bob's e-mail is {EMAIL}", tier="semantic", principal="bob")
        before = Vault(ben.engine.layout.vault).tokens("bob")
        assert CARD in before.values() and EMAIL in before.values()

        forgot = team.json("ann", "forget", fact.id, card.id, "--reason", "user request")
        assert forgot["outcome"] == "verified"

        # ben sees the purge on its next write; the scheduler's consolidation of a new session then refuses
        # the fact, and ben's vault drops the card (not the e-mail, which a kept memory still uses).
        ben.remember("Gym visit again", tier="episodic", principal="bob", session="s2", derived_facts=[FACT])
        assert tombstones.is_forgotten(ben.engine, "bob", id=fact.id)
        status = Scheduler(ben.engine).run("sessions")
        assert status.ok, status
        ben.engine.background.join()
        facts = [m for m in ben.list(Scope.of("bob"), limit=10) if m.tier == "semantic"]
        assert [m.text for m in facts if "locker" in m.text] == []
        values = set(Vault(ben.engine.layout.vault).tokens("bob").values())
        assert CARD not in values and EMAIL in values
        # its exports now carry the ids forgotten elsewhere, so a store they are imported into forgets them
        assert {fact.id, card.id} <= {e["id"] for e in tombstones.forgotten_ids(ben.engine, ["bob"])}
    finally:
        ben.close()
    for name in ("ann", "ben"):
        assert not [t for t in team.listed(name).values() if "locker code" in t], name
    salt = S3Objects(team.uri, options(s3_endpoint)).get(tombstones.SALT_KEY)
    assert salt is not None  # one store-wide salt, created by the first forget


def test_tombstones_an_export_brings_to_one_machine_hold_on_every_machine(
    tmp_path, s3_endpoint, bucket, monkeypatch
):
    personal = Store.open(
        tmp_path / "personal", embedder=HashEmbedder()
    )  # someone's own store, not the team's
    gone = personal.remember("Bob's passcode hint is zebraquartz", tier="semantic", principal="bob").memory
    export_jsonl(personal.engine, tmp_path / "old.jsonl")
    forget(personal.engine, [gone.id], reason="user request")
    export_jsonl(personal.engine, tmp_path / "new.jsonl")  # made after the forget: it carries the tombstone
    personal.close()
    team = Team(tmp_path, f"s3://{bucket}/team", s3_endpoint)
    ben = team.open("ben", monkeypatch)
    try:
        assert import_path(ben.engine, tmp_path / "new.jsonl").imported == 0  # ben adopts the tombstone
    finally:
        ben.close()
    ann = team.open("ann", monkeypatch)  # another machine, handed the old export
    try:
        report = import_path(ann.engine, tmp_path / "old.jsonl")
        assert (report.forgotten, report.imported) == (1, 0)
        assert not ann.list(Scope.everyone(), limit=10)
    finally:
        ann.close()
