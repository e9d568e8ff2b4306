"""`memdeck redact --rescan`: values that older rules missed are tokenised and purged from every file."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memdeck.core.config import load_config
from memdeck.core.embed import HashEmbedder
from memdeck.core.forget import CRASH_ENV
from memdeck.core.forget.rescan import pending_rescans, plan_rescan, rescan
from memdeck.core.privacy.reveal import reveal_memory
from memdeck.core.receipts import ReceiptBook
from memdeck.core.records import HISTORY
from memdeck.core.store import Store
from tests.storefiles import holds

EMAIL = "carol.wexley@example.org"
GITHUB = "ghp_" + "R7kq2Lm9Xz4Tb8Vn1Wc6Yd3Hf5Js0Pa2Qe7U"
AWS = "AKIA" + "QX7RT2ZK5MWP9LDE"
PHONE = "+44 20 7946 0958"
VALUES = [EMAIL, GITHUB, AWS, PHONE]


def config(*, old_rules: bool) -> dict:
    cfg = load_config()
    cfg["redaction"] = {**cfg.get("redaction", {}), "disabled_principals": ["alice"] if old_rules else []}
    return cfg


def open_store(root: Path, *, old_rules: bool = False) -> Store:
    return Store.open(root, embedder=HashEmbedder(), config=config(old_rules=old_rules))


def make_old_store(root: Path) -> dict[str, str]:
    """A store written while redaction was off for alice (the "old rules"), with secrets in every field."""
    store = open_store(root, old_rules=True)
    for i in range(20):
        store.remember(f"alice note {i} about the garden", tier="episodic", principal="alice")
    fact = store.remember(
        f"Carol's address is {EMAIL}",
        tier="semantic",
        principal="alice",
        tags=["contact", EMAIL],
        meta={"note": f"call {PHONE}"},
    ).memory
    edited = store.remember(f"the deploy token is {GITHUB}", tier="semantic", principal="alice").memory
    store.edit(edited.id, "the deploy token was rotated")  # the old text, with the token, is in the history
    episode = store.remember(
        "set up the CI runner",
        tier="episodic",
        principal="alice",
        events=[{"role": "user", "content": f"use key {AWS}"}],
        derived_facts=[f"the CI key is {AWS}"],
    ).memory
    proc = store.remember(
        f"rotate keys\nrevoke {AWS}\nissue a new one",
        tier="procedural",
        principal="alice",
        name="rotate keys",
    ).memory
    bob = store.remember("bob likes tea", tier="semantic", principal="bob").memory
    store.engine.compact("episodic")
    store.engine.ensure_indexes("episodic")
    store.engine.ensure_indexes("semantic")
    store.recall(f"what is {EMAIL}", principal="alice")
    store.close()
    store = open_store(root, old_rules=True)
    for value in VALUES:
        assert holds(root, value), f"{value} should be stored in clear by the old rules"
    store.close()
    return {"fact": fact.id, "edited": edited.id, "episode": episode.id, "proc": proc.id, "bob": bob.id}


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    base = tmp_path_factory.mktemp("rescan-template")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MEMDECK_HOME", str(base / "home"))
        ids = make_old_store(base / "store")
    return base / "store", ids


def copy_of(template: tuple[Path, dict[str, str]], tmp_path: Path) -> tuple[Path, dict[str, str]]:
    root = tmp_path / "store"
    shutil.copytree(template[0], root)
    return root, template[1]


def assert_all_gone(root: Path, store: Store, ids: dict[str, str]) -> None:
    for value in VALUES:
        assert holds(root, value) == [], value
    fact = store.get(ids["fact"])
    assert EMAIL not in fact.text and "<EMAIL_" in fact.text
    assert EMAIL not in json.dumps(fact.tags) and PHONE not in json.dumps(fact.meta)
    episode = store.get(ids["episode"])
    assert AWS not in json.dumps(episode.events) and AWS not in json.dumps(episode.derived_facts)
    assert AWS not in store.get(ids["proc"]).text
    history = store.history(ids["edited"])
    assert history and all(GITHUB not in h["text"] for h in history)
    # the originals went into alice's vault: reveal gives them back, and bob is untouched
    assert EMAIL in reveal_memory(store.engine, ids["fact"], "alice").text
    assert store.get(ids["bob"]).text == "bob likes tea"


def test_dry_run_lists_ids_and_kinds_and_writes_nothing(template, tmp_path):
    root, ids = copy_of(template, tmp_path)
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    store = open_store(root)
    plan = plan_rescan(store.engine).to_json()
    found = {m["id"]: m for m in plan["memories"]}
    assert set(found) == {ids["fact"], ids["episode"], ids["proc"]}
    assert found[ids["fact"]]["kinds"] == {"EMAIL": 2, "PHONE": 1}
    assert set(found[ids["fact"]]["columns"]) == {"text", "tags", "meta"}
    assert {"events", "derived_facts"} <= set(found[ids["episode"]]["columns"])
    assert [h["memory_id"] for h in plan["history"]] == [ids["edited"]]
    assert plan["counts"]["kinds"]["SECRET"] >= 4
    text = json.dumps(plan)
    assert not any(v in text for v in VALUES)  # ids and kinds, never values
    store.close()
    after = {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and p.name != "analytics.duckdb"}
    assert {p: b for p, b in before.items() if p.name != "analytics.duckdb"} == after
    assert not (root / "vault").exists() or not any((root / "vault").iterdir())


def test_rescan_purges_old_values_from_every_file_and_signs_verified_receipts(template, tmp_path):
    root, ids = copy_of(template, tmp_path)
    store = open_store(root)
    old_vec = store.engine.get_vector(store.get(ids["fact"]))
    summary = rescan(store.engine)
    assert summary["outcome"] == "verified"
    assert summary["counts"]["memories"] == 3 and summary["counts"]["history_versions"] == 1
    (receipt_id,) = summary["receipts"]  # one principal, one receipt
    receipt = ReceiptBook(root).get(receipt_id)
    assert receipt["outcome"] == "verified", [c for c in receipt["checks"] if not c["passed"]]
    assert receipt["trigger"] == "rescan" and receipt["principal"] == "alice"
    assert {d["id"] for d in receipt["deleted"]} == {ids["fact"], ids["episode"], ids["proc"]}
    assert {r["id"]: r["kinds"] for r in receipt["rescan"]["redacted"]}[ids["fact"]] == {
        "EMAIL": 2,
        "PHONE": 1,
    }
    names = {c["name"] for c in receipt["checks"]}
    assert {
        "no_row_in_any_data_file",
        "index_files_clean",
        "analytics_clean",
        "store_files_clean",
        "no_older_version_holds_it",
        "deletions_materialized",
        "journal_secret_removed",
    } <= names
    assert not any(v in json.dumps(receipt) for v in VALUES)
    assert ReceiptBook(root).verify_chain().ok
    # the embedding is the redacted text's
    fact = store.get(ids["fact"])
    new_vec = store.engine.get_vector(fact)
    assert new_vec is not None and old_vec is not None and not (new_vec == old_vec).all()
    assert (new_vec == HashEmbedder().encode([fact.text])[0]).all()
    assert_all_gone(root, store, ids)
    store.close()
    # a second re-scan finds nothing
    store = open_store(root)
    assert plan_rescan(store.engine).empty
    assert rescan(store.engine)["outcome"] == "nothing_to_do"
    store.close()


def test_rescan_of_one_principal_leaves_others_alone(template, tmp_path):
    root, ids = copy_of(template, tmp_path)
    store = open_store(root)
    assert plan_rescan(store.engine, "bob").empty
    assert rescan(store.engine, "bob")["receipts"] == []
    assert holds(root, EMAIL)
    assert rescan(store.engine, "alice")["outcome"] == "verified"
    assert_all_gone(root, store, ids)
    store.close()


RESCAN = """
import sys
from memdeck.core.config import load_config
from memdeck.core.embed import HashEmbedder
from memdeck.core.forget.rescan import rescan
from memdeck.core.store import Store

store = Store.open(sys.argv[1], embedder=HashEmbedder(), config=load_config())
rescan(store.engine)
print("the re-scan was not interrupted")
"""


@pytest.mark.parametrize("step", ["planned", "rewritten", "compacted", "scrubbed", "checked", "receipted"])
def test_a_killed_rescan_is_finished_on_the_next_open(template, tmp_path, step):
    root, ids = copy_of(template, tmp_path)
    env = {**os.environ, CRASH_ENV: f"rescan:{step}"}
    done = subprocess.run(
        [sys.executable, "-c", RESCAN, str(root)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 137, done.stderr[-2000:]
    journals = list((root / "journal").glob("rescan-*.json"))
    assert len(journals) == 1
    assert not any(v in journals[0].read_text() for v in VALUES)  # ids and kinds only
    # The values kept for the checks are encrypted: no file in journal/ holds one in the clear.
    assert not any(
        v.encode() in p.read_bytes() for p in (root / "journal").iterdir() if p.is_file() for v in VALUES
    )

    store = open_store(root)  # finishes the re-scan

    assert pending_rescans(store.engine) == [] and list((root / "journal").glob("rescan-*")) == []
    receipts = ReceiptBook(root).list()
    assert len(receipts) == 1
    receipt = ReceiptBook(root).get(receipts[0]["receipt_id"])
    assert receipt["outcome"] == "verified", [c for c in receipt["checks"] if not c["passed"]]
    assert ReceiptBook(root).verify_chain().ok
    assert_all_gone(root, store, ids)
    store.close()


def test_kill_9_in_the_middle_of_a_rescan(template, tmp_path):
    """A real SIGKILL from outside while the re-scan runs (not at a chosen step)."""
    root, ids = copy_of(template, tmp_path)
    slow = RESCAN.replace(
        "rescan(store.engine)",
        "import time, memdeck.core.forget.rescan as r\n"
        "orig = r.Rescan._compacted\n"
        "def slow(self):\n    print('compacting', flush=True); time.sleep(30); orig(self)\n"
        "r.Rescan._compacted = slow\nrescan(store.engine)",
    )
    proc = subprocess.Popen([sys.executable, "-c", slow, str(root)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "compacting"
    os.kill(proc.pid, 9)
    proc.wait(timeout=60)
    assert len(list((root / "journal").glob("rescan-*.json"))) == 1
    store = open_store(root)
    receipts = ReceiptBook(root).list()
    assert len(receipts) == 1 and ReceiptBook(root).get(receipts[0]["receipt_id"])["outcome"] == "verified"
    assert_all_gone(root, store, ids)
    store.close()


def test_history_table_is_covered(template, tmp_path):
    root, _ = copy_of(template, tmp_path)
    store = open_store(root)
    rescan(store.engine)
    texts = store.engine.scan(HISTORY, ["text"])["text"].to_pylist()
    assert texts and all(GITHUB not in t for t in texts) and any("<SECRET_" in t for t in texts)
    store.close()


def run_cli(args: list[str], home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMDECK_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "memdeck.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_cli_redact_rescan(template, tmp_path, memdeck_home):
    root, ids = copy_of(template, tmp_path)
    dry = run_cli(["--store", str(root), "redact", "--rescan", "--dry-run", "--json"], memdeck_home)
    assert dry.returncode == 0, dry.stderr
    plan = json.loads(dry.stdout)
    assert plan["dry_run"] is True and plan["counts"]["memories"] == 3
    assert not any(v in dry.stdout for v in VALUES)
    assert holds(root, EMAIL)
    done = run_cli(["--store", str(root), "redact", "--rescan", "--principal", "alice"], memdeck_home)
    assert done.returncode == 0, done.stderr
    assert "outcome: verified" in done.stdout and ids["fact"] in done.stdout
    assert not any(v in done.stdout for v in VALUES)
    for value in VALUES:
        assert holds(root, value) == []
    again = run_cli(["--store", str(root), "redact", "--rescan", "--json"], memdeck_home)
    assert again.returncode == 0 and json.loads(again.stdout)["outcome"] == "nothing_to_do"


def test_cli_redact_needs_rescan(tmp_path, memdeck_home):
    r = run_cli(["--store", str(tmp_path / "s"), "redact"], memdeck_home)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "--rescan" in lines[0]
