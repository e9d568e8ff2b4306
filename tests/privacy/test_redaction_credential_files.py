"""Credentials written the way their own files write them (.pgpass, .netrc, INI, Docker, kubeconfig, ...) are
redacted where they are written: through add, import and Markdown sync no file of the store holds them, and
`memdeck redact --rescan` finds them in memories stored before these rules."""

from __future__ import annotations

import base64
import importlib.util
import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from memdeck.core.privacy import Redactor
from tests.paths import ROOT as REPO
from tests.storefiles import holds  # every store file holding a value, raw or decoded

MEMDECK = Path(sys.executable).parent / "memdeck"

# a base64 client key as long as a real one (2 KB): a value past the first few hundred characters must go too
_CLIENT_KEY = base64.b64encode(
    (
        "-----BEGIN RSA PRIVATE KEY-----\nMII"
        + "".join("Kq7Vn2Lr5Tz0Wx3Jm1Hd4Gs6Fb9Ca2Ye5Uo8IpQ"[(i * 7) % 37] for i in range(1500))
        + "\n-----END RSA PRIVATE KEY-----\n"
    ).encode()
).decode()

# (format, text, secret values, values that must stay readable). Synthetic values, none of them real.
PROBE: list[tuple[str, str, list[str], list[str]]] = [
    ("pgpass", "db.example.com:5432:app:alice:S3cr3t!Qv9", ["S3cr3t!Qv9"], ["db.example.com", "alice"]),
    (
        "pgpass-escaped",
        "# ~/.pgpass\r\n*:*:*:report_ro:ma\\:ple\\\\77 tree\r\n",
        ["ma\\:ple\\\\77 tree"],
        ["report_ro"],
    ),
    (
        "pgpass-sentence",
        'my .pgpass line is "pg-main.corp.net:6432:billing:etl:Wy7#hollow-Kite"',
        ["Wy7#hollow-Kite"],
        ["pg-main.corp.net", "etl"],
    ),
    (
        "netrc",
        'machine ftp.corp.net\n    login mirror\n    password "tidal wave 62"\n    account Qe4!ledger\n',
        ["tidal wave 62", "Qe4!ledger"],
        ["ftp.corp.net", "mirror"],
    ),
    (
        "netrc-inline",
        "my netrc says `machine git.corp.net password Zk3!orbit login dana`",
        ["Zk3!orbit"],
        ["git.corp.net", "dana"],
    ),
    (
        "my.cnf",
        "[client]\nuser = backup\npassword = lemon grove 4417\nhost = db2\n",
        ["lemon grove 4417"],
        ["backup"],
    ),
    ("git-credentials", "https://rosa:p4ss@word!x@git.corp.net\n", ["p4ss@word!x"], ["git.corp.net"]),
    (
        "docker",
        '{"auths": {"reg.corp.net": {"auth": "' + "cm9zYTpRdjkh" + '"}}}',
        ["cm9zYTpRdjkh"],
        ["reg.corp.net"],
    ),
    (
        "kubeconfig",
        "users:\n- name: bootstrap\n  user:\n    token: k7q2zd.w8v1m3x9r4t6y0pe\n",
        ["k7q2zd.w8v1m3x9r4t6y0pe"],
        ["bootstrap"],
    ),
    (
        "yarnrc",
        '"//npm.corp.net/:_authToken" "f3a9c1e7b2d84a6c9e0f1a2b3c4d5e6f"',
        ["f3a9c1e7b2d84a6c9e0f1a2b3c4d5e6f"],
        ["npm.corp.net"],
    ),
    (
        "aws",
        "[ops]\naws_access_key_id = AKIAZ4Q7R2M9K8T3W6YB\naws_secret_access_key = "
        "q8Vn2Lr5Tz0Wx3Kp7Jm1Hd4Gs6Fb9Ca2Ye5Uo8Iq\n",
        ["AKIAZ4Q7R2M9K8T3W6YB", "q8Vn2Lr5Tz0Wx3Kp7Jm1Hd4Gs6Fb9Ca2Ye5Uo8Iq"],
        ["[ops]"],
    ),
    (
        "authorized_keys",
        'environment="SYNC_TOKEN=Hq82kLm3Pz7Rt5Vx",no-pty ssh-ed25519 '
        "AAAAC3NzaC1lZDI1NTE5AAAAIJ7f3qZp2Wm8Lr5Tz0Wx3Kp7Jm1Hd4Gs6Fb9Ca2Ye5U sync@nas",
        ["Hq82kLm3Pz7Rt5Vx"],
        ["sync@nas"],
    ),
    ("jdbc-oracle", "jdbc:oracle:thin:scott/Tiger~77x@db.corp.net:1521:ORCL", ["Tiger~77x"], ["scott"]),
    ("odbc", "Driver={PostgreSQL Unicode};Server=db;Uid=etl;Pwd={semi;colon9!};", ["semi;colon9!"], ["etl"]),
    (
        "htpasswd",
        "ana:$apr1$Zp4q8Lm2$Qv7Rt3Xy9Kp2Lm5Nb8Hd1F\n",
        ["$apr1$Zp4q8Lm2$Qv7Rt3Xy9Kp2Lm5Nb8Hd1F"],
        ["ana"],
    ),
    (
        "pgpass-inline",
        "add db.corp.net:5432:app:alice:Rq7vLx2 to your .pgpass and retry",
        ["Rq7vLx2"],
        ["db.corp.net", "alice"],
    ),
    ("pgpass-ipv6", "\\:\\:1:5432:app:alice:v6pass!9", ["v6pass!9"], ["alice"]),
    (
        "msmtprc",
        "account default\nhost smtp.corp.net\nport 587\nuser alice\npassword hunter2go\n",
        ["hunter2go"],
        ["smtp.corp.net"],
    ),
    (
        "fetchmailrc",
        'poll mail.corp.net protocol IMAP user "alice" password "blue kite 77" ssl',
        ["blue kite 77"],
        ["mail.corp.net", "alice"],
    ),
    (
        "wpa_supplicant",
        'network={\n    ssid="HomeNet"\n    psk="correct horse battery"\n}',
        ["correct horse battery"],
        ["HomeNet"],
    ),
    (
        "nmconnection",
        "[wifi]\nssid=Lab\n\n[wifi-security]\nkey-mgmt=wpa-psk\npsk=Sunny Day 2024\n",
        ["Sunny Day 2024"],
        ["Lab"],
    ),
    ("option-file", "user=root\npassword=lemon grove 44\n", ["lemon grove 44"], ["root"]),
    ("properties", "spring.datasource.password=Spr1ng meadow\n", ["Spr1ng meadow"], ["spring.datasource"]),
    (
        "rsyncd.secrets",
        "# /etc/rsyncd.secrets\nbackup:Rs9ncPass\nmirror:plainword\n",
        ["Rs9ncPass", "plainword"],
        ["backup", "mirror"],
    ),
    ("chap-secrets", '# /etc/ppp/chap-secrets\n"alice" * "ppp s3cret" *\n', ["ppp s3cret"], ["alice"]),
    (
        "kubeconfig-json",
        json.dumps(
            {"kind": "Config", "users": [{"name": "ops", "user": {"client-key-data": _CLIENT_KEY}}]}, indent=2
        ),
        [_CLIENT_KEY, _CLIENT_KEY[-400:]],
        ["ops"],
    ),
]

LOOKALIKES = [
    "web1:8080, web2:8080, db.internal:5432",
    "web3:443:nginx:www-data:512ms",
    "the format is hostname:port:database:username:password",
    "alice:x:1001:1001:Alice,,,:/home/alice:/bin/bash",
    "sha256:" + "3f" * 32 + "  app-1.2.tar.gz",
    "[security]\npassword_min_length = 12\npassword = ${DB_PASSWORD}\n",
    "users:\n- name: gke\n  user:\n    tokenFile: /var/run/secrets/token\n",
    "jdbc:oracle:thin:@//db.example.com:1521/ORCL",
    "Server=db;Database=app;Integrated Security=SSPI;",
    "prices: $5$10 and $6$12 for the two plans",
    "the default login shell is /bin/bash and passwords expire after 90 days",
    "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: laptop\nPublic-Lines: 2\n",
    "password = getpass()\nuser = os.environ['DB_USER']\n",
    "host smtp.corp.net\nuser alice\npassword ${SMTP_PASSWORD}\n",
    'network={\n    ssid="Cafe"\n    key_mgmt=NONE\n}',
    "the new user account password policy is strict",
    "add the entry to your .pgpass as hostname:port:database:username:password",
    "# users and roles\nalice:admin\nbob:viewer\n",
    "the rsyncd.secrets file is mode 600; sync runs at 12:30",
]


@pytest.mark.parametrize(("fmt", "text", "secrets", "kept"), PROBE, ids=[p[0] for p in PROBE])
def test_each_layout_loses_its_secret_and_keeps_the_rest(fmt, text, secrets, kept):
    res = Redactor().redact(text, "p")
    for value in secrets:
        assert value not in res.text, (fmt, res.text)
    for value in kept:
        assert value in res.text, (fmt, res.text)
    assert "<SECRET_" in res.text


@pytest.mark.parametrize(("fmt", "text", "secrets", "kept"), PROBE, ids=[p[0] for p in PROBE])
def test_the_same_secret_in_a_markdown_fence_is_redacted(fmt, text, secrets, kept):
    res = Redactor().redact(f"Notes for the box:\n\n```\n{text.strip()}\n```\nrotated last week.", "p")
    assert not any(v in res.text for v in secrets), res.text


@pytest.mark.parametrize("text", LOOKALIKES)
def test_look_alikes_get_no_secret_finding(text):
    assert [s for s in Redactor().detect(text) if s.kind == "SECRET"] == []


def test_a_password_with_printf_like_characters_in_a_layout_is_still_redacted():
    # '%s' inside a real password does not make it a template when the file's layout says password
    text = "DSN=warehouse;UID=etl;PWD=meadow1700%s;"
    assert "meadow1700%s" not in Redactor().redact(text, "p").text


def _load_set():
    path = REPO / "bench" / "redaction_credfiles.py"
    spec = importlib.util.spec_from_file_location("redaction_credfiles_for_test", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_labelled_set_meets_the_targets_per_format_and_part():
    module = _load_set()
    red = Redactor()
    stats: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for case in module.generate():
        res = red.redact(case["text"], "bench")
        row = stats[(case["format"], case["part"])]
        if case["secrets"]:
            row[0] += not any(module.leaked(v, case["text"], res.text) for v in case["secrets"])
            row[1] += 1
        else:
            row[2] += any(f.kind == "SECRET" for f in res.findings)
            row[3] += 1
    assert len(stats) == 34  # 17 formats, two parts each
    for key, (caught, n, flagged, looks) in stats.items():
        assert n and caught / n >= 0.98, (key, caught, n)
        assert looks and flagged / looks <= 0.02, (key, flagged, looks)


# --------------------------------------------------------------------------------------------------
# the installed command: add, import, Markdown sync, rescan; then every file of the store is read


def run(args: list[str], home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMDECK_HOME": str(home)}
    return subprocess.run(
        [str(MEMDECK), *args], env=env, capture_output=True, text=True, timeout=300, check=False
    )


@pytest.fixture
def home(memdeck_home: Path) -> Path:
    (memdeck_home / "config.toml").write_text('[embedding]\nmodel = "hash-384"\n', encoding="utf-8")
    return memdeck_home


ALL_SECRETS = [v for _, _, secrets, _ in PROBE for v in secrets]


def test_add_import_and_sync_leave_no_readable_value_in_the_store(home: Path, tmp_path: Path):
    store = tmp_path / "store"
    for _, text, _, _ in PROBE[:3]:
        r = run(["--store", str(store), "add", text, "--tier", "semantic", "--principal", "ops"], home)
        assert r.returncode == 0, r.stderr
    jsonl = tmp_path / "notes.jsonl"
    jsonl.write_text(
        "".join(json.dumps({"text": text, "principal": "imp"}) + "\n" for _, text, _, _ in PROBE),
        encoding="utf-8",
    )
    r = run(["--store", str(store), "import", str(jsonl), "--json"], home)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["imported"] == len(PROBE)
    folder = tmp_path / "md"
    folder.mkdir()
    body = "# Memory\n\n" + "".join(
        f"## {fmt}\n\nThe {fmt} file on the build box:\n\n```\n{text.strip()}\n```\n\n"
        for fmt, text, _, _ in PROBE
    )
    (folder / "MEMORY.md").write_text(body, encoding="utf-8")
    r = run(["--store", str(store), "sync", str(folder), "--principal", "md", "--json"], home)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["imported"] == len(PROBE)
    assert not any(v in r.stdout + r.stderr for v in ALL_SECRETS)
    # what the agent reads back holds tokens, and the readable parts are still there
    r = run(
        [
            "--store",
            str(store),
            "list",
            "--principal",
            "ops",
            "--principal",
            "imp",
            "--principal",
            "md",
            "--json",
            "--limit",
            "200",
        ],
        home,
    )
    assert r.returncode == 0, r.stderr
    listed = r.stdout
    assert "<SECRET_" in listed and "db.example.com" in listed and "scott" in listed
    for value in ALL_SECRETS:
        assert value not in listed
        assert holds(store, value) == [], value


def test_rescan_applies_the_layout_rules_to_memories_stored_without_them(home: Path, tmp_path: Path):
    store = tmp_path / "store"
    (home / "config.toml").write_text(
        '[embedding]\nmodel = "hash-384"\n\n[redaction]\ndisabled_principals = ["legacy"]\n', encoding="utf-8"
    )
    # Written in one import (memdeck add of each is covered above): one process instead of one per memory.
    jsonl = tmp_path / "legacy.jsonl"
    jsonl.write_text(
        "".join(
            json.dumps({"text": t, "principal": "legacy", "tier": "semantic"}) + "\n" for _, t, _, _ in PROBE
        ),
        encoding="utf-8",
    )
    r = run(["--store", str(store), "import", str(jsonl), "--json"], home)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["imported"] == len(PROBE)
    assert holds(store, "S3cr3t!Qv9"), "stored in clear while redaction was off for the principal"
    (home / "config.toml").write_text('[embedding]\nmodel = "hash-384"\n', encoding="utf-8")
    dry = run(["--store", str(store), "redact", "--rescan", "--dry-run", "--json"], home)
    assert dry.returncode == 0, dry.stderr
    assert json.loads(dry.stdout)["counts"]["memories"] == len(PROBE)
    assert not any(v in dry.stdout for v in ALL_SECRETS)
    done = run(["--store", str(store), "redact", "--rescan"], home)
    assert done.returncode == 0, done.stderr
    assert "outcome: verified" in done.stdout
    for value in ALL_SECRETS:
        assert holds(store, value) == [], value
