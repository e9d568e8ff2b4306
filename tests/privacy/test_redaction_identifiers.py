"""Personal data and credentials in more real shapes are redacted where they are written: national ids by
their structure and check digits, what has no structure (passports, dates of birth, door codes) by the words
that name it, street addresses, spelled-out e-mail addresses and vendor tokens. Through the installed
`memdeck add` and through the store no file of the store holds a value afterwards; look-alikes stay."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from memdeck.core.privacy import KINDS, TOKEN_RE, Redactor
from memdeck.core.store import Store
from tests.paths import ROOT as REPO
from tests.storefiles import holds  # every store file holding a value, raw or decoded

MEMDECK = Path(sys.executable).parent / "memdeck"

# (text, value that must go, kind of its token). Synthetic values; the checksummed ones are valid.
PROBES: list[tuple[str, str, str]] = [
    ("door code is 4481#", "4481#", "SECRET"),
    ("alice dot smith at gmail dot com", "alice dot smith at gmail dot com", "EMAIL"),
    ("write to bob.jones(at)proton(dot)me for the keys", "bob.jones(at)proton(dot)me", "EMAIL"),
    ("card <CARD_1> exp 12/27 cvv 123", "123", "SECRET"),
    ("NI number QQ 12 34 56 C", "QQ 12 34 56 C", "NATIONAL_ID"),
    ("passport number 533380006", "533380006", "PASSPORT"),
    ("born on 14 March 1987", "14 March 1987", "DOB"),
    ("DOB: 1987-03-14", "1987-03-14", "DOB"),
    ("I live at 221B Baker Street, London NW1 6XE", "221B Baker Street, London NW1 6XE", "ADDRESS"),
    (
        "my address is 1600 Amphitheatre Parkway, Mountain View, CA 94043",
        "1600 Amphitheatre Parkway, Mountain View, CA 94043",
        "ADDRESS",
    ),
    ("send it to Hauptstraße 12, 10115 Berlin", "Hauptstraße 12, 10115 Berlin", "ADDRESS"),
    ("sk_live_51HxYzAbCdEfGhIjKlMnOpQr", "sk_live_51HxYzAbCdEfGhIjKlMnOpQr", "SECRET"),
    ("the vault token is hvs.CAESIJ1b2c3d4e5f6g7h8i9j0k", "hvs.CAESIJ1b2c3d4e5f6g7h8i9j0k", "SECRET"),
    ("My bank account is 12345678 sort code 20-00-00", "12345678", "BANK_ACCOUNT"),
    ("My bank account is 12345678 sort code 20-00-00", "20-00-00", "BANK_ACCOUNT"),
    ("routing number 021000021 for the wire", "021000021", "BANK_ACCOUNT"),
    ("Her medical record number is MRN 00482913", "00482913", "MEDICAL_ID"),
    ("the safe combination is 12-34-56", "12-34-56", "SECRET"),
    ("my mother's maiden name is Whitfield", "Whitfield", "SECRET"),
    ("BTC wallet 1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa", "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa", "WALLET"),
    (
        "tips to bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4",
        "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4",
        "WALLET",
    ),
    ("Steuer-ID 12 345 678 901", "12 345 678 901", "NATIONAL_ID"),
    ("her Aadhaar is 2345 6789 0123", "2345 6789 0123", "NATIONAL_ID"),
    ("mi DNI es 12345678Z", "12345678Z", "NATIONAL_ID"),
    ("codice fiscale RSSMRA85T10A562S", "RSSMRA85T10A562S", "NATIONAL_ID"),
    ("personnummer 19850315-1234", "19850315-1234", "NATIONAL_ID"),
    ("My Social Insurance Number is 046 454 286", "046 454 286", "NATIONAL_ID"),
    ("CPF 529.982.247-25 do cliente", "529.982.247-25", "NATIONAL_ID"),
    (
        "bot token 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawq",
        "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawq",
        "SECRET",
    ),
    ("the gate code is #7310", "#7310", "SECRET"),
    ("garage door opener code: 5521", "5521", "SECRET"),
    ("PIN: 4921", "4921", "SECRET"),
    ("DL number: A1234567", "A1234567", "NATIONAL_ID"),
    ("Security question: first pet? Answer: Rex", "Rex", "SECRET"),
    # the answer after a question said again: the name, not the question's first word
    ("Security question answer: first pet was Biscuit", "Biscuit", "SECRET"),
    ("security question answer - mother's maiden name is Kowalski", "Kowalski", "SECRET"),
    ("mailgun key-3ax6xnjp29jd6fds4gc373sgvjxteol0", "key-3ax6xnjp29jd6fds4gc373sgvjxteol0", "SECRET"),
    ("mail alice@example[.]com for the form", "alice@example[.]com", "EMAIL"),
    ("routing 021000021 account 123456789", "123456789", "BANK_ACCOUNT"),
    ("date of birth \u2014 14 March 1987", "14 March 1987", "DOB"),
    ("The answer to my security question is Fluffy", "Fluffy", "SECRET"),
    ("my driver's license number is D1234567", "D1234567", "NATIONAL_ID"),
    ("born on 14 March, a Pisces", "14 March", "DOB"),
    ("my PAN is ABCPD1234E", "ABCPD1234E", "NATIONAL_ID"),
    ("refresh with 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", "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", "SECRET"),
    (
        "the deploy uses pul-3f9c1e7b2d84a6c9e0f1a2b3c4d5e6f7a8b9c0d1",
        "pul-3f9c1e7b2d84a6c9e0f1a2b3c4d5e6f7a8b9c0d1",
        "SECRET",
    ),
    ('{"name": "Sam", "passport_number": "C01X00T47"}', "C01X00T47", "PASSPORT"),
    ("customer:\n  date_of_birth: October 25, 1993\n", "October 25, 1993", "DOB"),
    ("name,sort_code\nSam Doe,40-45-85\n", "40-45-85", "BANK_ACCOUNT"),
]

LOOKALIKES = [
    "on 14 March we went hiking",
    "on 14 March 1987 we went hiking",
    "I live in London",
    "we walked down Baker Street after lunch",
    "the passport office opens at 9",
    "the error code is 404",
    "use discount code SAVE20",
    "order 123456789 shipped",
    "invoice 87654321X",
    "ref 2345 6789 0125 noted",  # Aadhaar shape, Verhoeff check fails
    "ticket QQ123456C closed",  # no NINO starts with Q, and nothing names one
    "the build 20231015-1234 passed",
    "meet me at the dot com party",
    "I work at Pets dot com",
    "the id 1BoatSLRHtKNngkdXEeobR76b53LETtpyX is a test",  # base58check fails
    "my mother's maiden name field is empty",
    "she has 3 Oak trees in the garden",
    "the score was 123 456 789",
    "the security question was silly",
    "I was born on a Tuesday",
    "her birthday is in May",
    "my passport expired in 2019",
    "my account 12345678 is overdrawn",
    "meet at 5 PM Central Park",
    "pin 12 and 13 on the header",
    "Answer: 42",
]


def _token_of(text: str, kind: str) -> bool:
    return any(m.group(1) == kind for m in TOKEN_RE.finditer(text))


@pytest.mark.parametrize(("text", "value", "kind"), PROBES, ids=[f"{p[2]}-{i}" for i, p in enumerate(PROBES)])
def test_each_value_goes_and_gets_a_token_of_its_own_kind(text: str, value: str, kind: str) -> None:
    res = Redactor().redact(text, "p")
    assert value not in res.text, res.text
    assert _token_of(res.text, kind), (res.text, [f.kind for f in res.findings])


def test_a_social_insurance_number_is_not_taken_for_a_phone_number() -> None:
    res = Redactor().redact("My Social Insurance Number is 046 454 286", "p")
    assert [f.kind for f in res.findings] == ["NATIONAL_ID"]


@pytest.mark.parametrize("text", LOOKALIKES)
def test_look_alikes_are_left_as_written(text: str) -> None:
    res = Redactor().redact(text, "p")
    assert res.text == text and res.findings == [], [(f.kind, f.rule) for f in res.findings]


def test_every_new_kind_is_listed_and_its_tokens_are_recognised() -> None:
    for kind in ("NATIONAL_ID", "DOB", "ADDRESS", "PASSPORT", "BANK_ACCOUNT", "MEDICAL_ID", "WALLET"):
        assert kind in KINDS
        assert TOKEN_RE.fullmatch(f"<{kind}_12>")


def _load_set():
    path = REPO / "bench" / "redaction_identifiers.py"
    spec = importlib.util.spec_from_file_location("redaction_identifiers_for_test", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_labelled_set_meets_the_targets_per_kind_and_part() -> None:
    module = _load_set()
    red = Redactor()
    stats: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for case in module.build():
        res = red.redact(case["text"], "bench")
        row = stats[(case["kind"], case["part"])]
        if case["values"]:
            row[0] += not any(module.leaked(v, res.text) for v in case["values"])
            row[1] += 1
        else:
            row[2] += bool(res.findings)
            row[3] += 1
    assert {part for _, part in stats} == {"dev", "held-out"}
    for key, (caught, n, flagged, _looks) in stats.items():
        if n:
            assert caught / n >= 0.98, (key, caught, n)
        assert flagged == 0, key


# --------------------------------------------------------------------------------------------------
# through the store and the installed command: then every file of the store is read

# the values looked for in the store's files (a look-alike, stored as written, may hold the same date)
VALUES = sorted({v for _, v, _ in PROBES if len(v) >= 6 and not any(v in look for look in LOOKALIKES)})


def test_through_the_store_no_file_holds_a_value_and_reveal_gives_it_back(store: Store) -> None:
    from memdeck.core.privacy.reveal import reveal_memory

    ids = [store.remember(text, tier="semantic", principal="ana").memory.id for text, _, _ in PROBES]
    kept = [store.remember(text, tier="semantic", principal="ana").memory.id for text in LOOKALIKES[:6]]
    store.engine.compact("semantic")
    store.engine.ensure_indexes("semantic")
    for mid, (text, value, kind) in zip(ids, PROBES, strict=True):
        stored = store.get(mid).text
        assert value not in stored and _token_of(stored, kind), stored
        # a token written by the person (<CARD_1>) is not one memdeck issued: it is kept, neutralised
        assert (
            reveal_memory(store.engine, mid, "ana").text
            == text.replace("<CARD_1>", "\u2039CARD_1\u203a").strip()
        )
    for mid, text in zip(kept, LOOKALIKES, strict=False):
        assert store.get(mid).text == text
    root = store.root
    store.close()
    for value in VALUES:
        assert holds(root, value) == [], value


def run(args: list[str], home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMDECK_HOME": str(home)}
    return subprocess.run(
        [str(MEMDECK), *args], env=env, capture_output=True, text=True, timeout=300, check=False
    )


@pytest.fixture
def home(memdeck_home: Path) -> Path:
    (memdeck_home / "config.toml").write_text('[embedding]\nmodel = "hash-384"\n', encoding="utf-8")
    return memdeck_home


def test_memdeck_add_and_import_store_tokens_and_no_file_holds_a_value(home: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    # a few through `memdeck add` one by one (each start of the command costs seconds), the rest imported
    by_add = [PROBES[i] for i in (0, 4, 8, 13, 19, 23)]
    added = []
    for text, _, _ in by_add:
        r = run(
            ["--store", str(store), "add", text, "--tier", "semantic", "--principal", "ops", "--json"], home
        )
        assert r.returncode == 0, r.stderr
        added.append(r.stdout)
    out = "".join(added)
    assert not any(v in out for _, v, _ in by_add)
    jsonl = tmp_path / "notes.jsonl"
    done = {t for t, _, _ in by_add}
    texts = dict.fromkeys(t for t in [p[0] for p in PROBES] + LOOKALIKES if t not in done)
    rows = [{"text": t, "principal": "ops"} for t in texts]
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    r = run(["--store", str(store), "import", str(jsonl), "--json"], home)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["imported"] == len(rows), r.stdout
    r = run(["--store", str(store), "list", "--principal", "ops", "--json", "--limit", "200"], home)
    assert r.returncode == 0, r.stderr
    listed = r.stdout
    for kind in (
        "NATIONAL_ID",
        "DOB",
        "ADDRESS",
        "PASSPORT",
        "BANK_ACCOUNT",
        "MEDICAL_ID",
        "WALLET",
        "SECRET",
    ):
        assert f"<{kind}_" in listed, kind
    for text in LOOKALIKES:
        assert json.dumps(text)[1:-1] in listed, text  # look-alikes are stored as written
    for value in VALUES:
        assert value not in listed
        assert holds(store, value) == [], value


def test_rescan_dry_run_lists_the_new_kinds_for_memories_stored_before(home: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    (home / "config.toml").write_text(
        '[embedding]\nmodel = "hash-384"\n\n[redaction]\ndisabled_principals = ["legacy"]\n', encoding="utf-8"
    )
    for text in (
        "passport number 533380006",
        "born on 14 March 1987",
        "I live at 221B Baker Street, London NW1 6XE",
    ):
        r = run(["--store", str(store), "add", text, "--tier", "semantic", "--principal", "legacy"], home)
        assert r.returncode == 0, r.stderr
    assert holds(store, "533380006"), "stored in clear while redaction was off for the principal"
    (home / "config.toml").write_text('[embedding]\nmodel = "hash-384"\n', encoding="utf-8")
    dry = run(["--store", str(store), "redact", "--rescan", "--dry-run", "--json"], home)
    assert dry.returncode == 0, dry.stderr
    kinds = json.loads(dry.stdout)["counts"]["kinds"]
    assert kinds == {"PASSPORT": 1, "DOB": 1, "ADDRESS": 1}
    assert "533380006" not in dry.stdout
    done = run(["--store", str(store), "redact", "--rescan"], home)
    assert done.returncode == 0, done.stderr
    assert "outcome: verified" in done.stdout
    for value in ("533380006", "14 March 1987", "221B Baker Street"):
        assert holds(store, value) == [], value


def test_memdeck_reveal_gives_back_a_value_behind_a_two_word_token(home: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    r = run(
        [
            "--store",
            str(store),
            "add",
            "NI number QQ 12 34 56 C",
            "--tier",
            "semantic",
            "--principal",
            "ops",
            "--json",
        ],
        home,
    )
    assert r.returncode == 0, r.stderr
    memory = json.loads(r.stdout)["memory"]
    assert re.fullmatch(r"NI number <NATIONAL_ID_\d+>", memory["text"])
    shown = run(["--store", str(store), "reveal", memory["id"], "--principal", "ops", "--json"], home)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["text"] == "NI number QQ 12 34 56 C"
