"""A labelled set of credentials in their native files, and of look-alikes that must be left alone.

    python bench/redaction_credfiles.py [--seed N] [--part dev|held-out] [--show FORMAT]

Each case is ``{"format", "part", "wrapper", "template", "text", "secrets"}``. ``secrets`` lists the values
that must not survive redaction (no piece of eight characters or more of them may be left either); an empty
list marks a look-alike, in which nothing may be redacted.

Values are synthetic random draws (fixed seed), never real credentials. Every format has several templates
(file layouts: comments, whitespace, quoting, sections); the even-numbered templates make the development
part, the odd-numbered ones the held-out part, so the held-out part holds layouts the detectors were not
written against. The held-out part was scored once blind and then used to fix what it found (see
bench/RESULTS-redaction.md); the formats keyword-config and wifi and secrets-file were added after their
detectors, so none of their parts is blind. Every positive is also shown through wrappers: as written, with Windows line endings,
inside a Markdown code fence, after a comment line naming the file, and (one-line entries) quoted in a
sentence.
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import string
import urllib.parse
from collections.abc import Callable

SEED = 20261127
PER_TEMPLATE = 3  # draws per (template, wrapper)
LOOK_DRAWS = 8  # draws per look-alike template

UPPER = string.ascii_uppercase
LOWER = string.ascii_lowercase
DIGITS = string.digits
ALNUM = UPPER + LOWER + DIGITS
B64 = ALNUM + "+/"
HEX = "0123456789abcdef"
CRYPT = "./" + ALNUM
WORDS = [
    "falcon",
    "river",
    "maple",
    "orbit",
    "tango",
    "quartz",
    "summer",
    "delta",
    "copper",
    "meadow",
    "harbor",
    "violet",
    "thunder",
    "pepper",
    "glacier",
    "lantern",
]
HOSTS = [
    "db.internal",
    "10.0.3.7",
    "pg-main.corp.example.net",
    "localhost",
    "127.0.0.1",
    "warehouse-02.lan",
    "*",
    "db1",
    "analytics.eu-west-1.rds.amazonaws.com",
]
USERS = ["alice", "app", "svc_reader", "deploy", "postgres", "etl-runner", "bob.smith", "root", "ci"]
DBS = ["app", "shop", "analytics", "*", "billing_prod", "postgres", "metrics-v2"]


def draw(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def password(rng: random.Random, *, symbols: str = "!#%&*?@$^+=_.-~", spaces: bool = False) -> str:
    """A password in one of the shapes people use: random, word + digits + symbol, or a passphrase."""
    shape = rng.choice(["random", "random", "word", "word", "phrase" if spaces else "random", "short"])
    if shape == "random":
        return draw(rng, ALNUM, 1) + draw(rng, ALNUM + symbols, rng.randint(11, 23))
    if shape == "word":
        w = rng.choice(WORDS)
        return (
            (w.capitalize() if rng.random() < 0.6 else w)
            + draw(rng, DIGITS, rng.randint(2, 4))
            + (rng.choice(symbols) if symbols else "")
            + draw(rng, ALNUM, rng.randint(1, 4))
        )
    if shape == "phrase":
        return " ".join(rng.sample(WORDS, 3)) + " " + draw(rng, DIGITS, 2)
    return (
        draw(rng, LOWER, 3)
        + draw(rng, DIGITS, 2)
        + (rng.choice(symbols) if symbols else "")
        + draw(rng, UPPER, 2)
    )


def b64(s: str) -> str:
    return base64.b64encode(s.encode()).decode()


def aws_key_id(rng: random.Random) -> str:
    return rng.choice(["AKIA", "ASIA"]) + draw(rng, UPPER + DIGITS, 16)


def aws_secret(rng: random.Random) -> str:
    while True:
        v = draw(rng, B64, 40)
        if any(c.isdigit() for c in v) and any(c.isupper() for c in v) and any(c.islower() for c in v):
            return v


def jwt(rng: random.Random) -> str:
    h = base64.urlsafe_b64encode(json.dumps({"alg": "RS256", "kid": draw(rng, ALNUM, 8)}).encode()).decode()
    p = base64.urlsafe_b64encode(
        json.dumps({"iss": "kubernetes/serviceaccount", "sub": draw(rng, LOWER, 8)}).encode()
    )
    return f"{h.rstrip('=')}.{p.decode().rstrip('=')}.{draw(rng, ALNUM + '-_', 86)}"


def pem_b64(rng: random.Random, kind: str = "RSA PRIVATE KEY") -> str:
    body = "\n".join(draw(rng, B64, 64) for _ in range(6))
    return b64(f"-----BEGIN {kind}-----\nMII{body}\n-----END {kind}-----\n")


# ----------------------------------------------------------------------------------------------------
# positives: each template returns (text, secrets, one_line)

Pos = Callable[[random.Random], tuple[str, list[str], bool]]


def _pg_escape(v: str) -> str:
    return v.replace("\\", "\\\\").replace(":", "\\:")


def pgpass_templates() -> list[Pos]:
    def t0(r: random.Random):
        pw = password(r, symbols="!#%&*?@$^+=_.-~")
        return f"{r.choice(HOSTS)}:5432:{r.choice(DBS)}:{r.choice(USERS)}:{pw}", [pw], True

    def t1(r: random.Random):
        pw = password(r, spaces=True)
        return (
            (
                f"# host:port:db:user:password\n{r.choice(HOSTS)}:{r.choice(['5432', '6432', '*'])}:"
                f"{r.choice(DBS)}:{r.choice(USERS)}:{pw}\n"
            ),
            [pw],
            False,
        )

    def t2(r: random.Random):
        pws = [password(r, symbols="!#%&*?@") for _ in range(3)]
        lines = [
            f"{r.choice(HOSTS)}:{r.choice(['5432', '5433', '*'])}:{r.choice(DBS)}:{r.choice(USERS)}:{p}"
            for p in pws
        ]
        return "\n".join(lines), pws, False

    def t3(r: random.Random):
        raw = password(r, symbols="!#%&") + ":" + draw(r, ALNUM, 4)
        esc = _pg_escape(raw)
        return f"*:*:*:{r.choice(USERS)}:{esc}", [esc], True

    def t4(r: random.Random):
        pw = password(r, symbols="!#%&*?@$^")
        return f"  {r.choice(HOSTS)}:5432:*:{r.choice(USERS)}:{pw}   ", [pw], True

    def t5(r: random.Random):
        pw = password(r, spaces=True)
        return (
            (
                f"# ~/.pgpass (chmod 600)\n\n# staging\n{r.choice(HOSTS)}:5432:{r.choice(DBS)}:{r.choice(USERS)}:{pw}\n"
                f"# end\n"
            ),
            [pw],
            False,
        )

    return [t0, t1, t2, t3, t4, t5]


def _netrc_val(r: random.Random, pw: str) -> str:
    return f'"{pw}"' if " " in pw else pw


def netrc_templates() -> list[Pos]:
    def t0(r: random.Random):
        pw = password(r, symbols="!#%&*?@$^+=_.-~")
        return (
            f"machine api.{r.choice(['example.com', 'github.com', 'corp.net'])} login {r.choice(USERS)} password {pw}",
            [pw],
            True,
        )

    def t1(r: random.Random):
        pw = password(r, symbols="!#%&*?@$^", spaces=True)
        return (
            (
                f"machine {r.choice(['ftp.example.org', 'git.corp.net', 'urs.earthdata.nasa.gov'])}\n"
                f"    login {r.choice(USERS)}\n    password {_netrc_val(r, pw)}\n"
            ),
            [pw],
            False,
        )

    def t2(r: random.Random):
        a, b = password(r, symbols="!#%&*"), password(r, symbols="?@$^")
        return (
            (
                f"machine a.example.com login {r.choice(USERS)} password {a}\n"
                f"default login anonymous password {b}\n"
            ),
            [a, b],
            False,
        )

    def t3(r: random.Random):
        pw = password(r, symbols="!#%&*?@$^")
        return f"machine gitlab.corp.net password {pw} login {r.choice(USERS)}", [pw], True

    def t4(r: random.Random):
        pw, acct = password(r, symbols="!#%&*"), draw(r, ALNUM, 10) + r.choice("!#") + draw(r, DIGITS, 2)
        return (
            (
                f"# _netrc\r\nmachine ftp.corp.net\r\n\tlogin {r.choice(USERS)}\r\n\tpassword {pw}\r\n\t"
                f"account {acct}\r\n"
            ),
            [pw, acct],
            False,
        )

    def t5(r: random.Random):
        pw = draw(r, ALNUM, 40)
        return (
            f"machine api.heroku.com\n  login {r.choice(USERS)}@example.com\n  password {pw}\n",
            [pw],
            False,
        )

    return [t0, t1, t2, t3, t4, t5]


def ini_templates() -> list[Pos]:
    def t0(r: random.Random):
        pw = password(r, spaces=True)
        return f"[client]\nuser={r.choice(USERS)}\npassword={pw}\nhost={r.choice(HOSTS)}\n", [pw], False

    def t1(r: random.Random):
        pw = password(r)
        return (
            (
                f'# ~/.my.cnf\n[mysql]\nuser = {r.choice(USERS)}\npassword = "{pw}"\n\n[mysqldump]\n'
                f'user = {r.choice(USERS)}\npassword = "{pw}"\n'
            ),
            [pw],
            False,
        )

    def t2(r: random.Random):
        pw = password(r, spaces=True)
        return (
            (
                f"[ODBC Data Sources]\nwarehouse = PostgreSQL Unicode\n\n[warehouse]\nDriver = PostgreSQL Unicode\n"
                f"Servername = {r.choice(HOSTS)}\nUsername = {r.choice(USERS)}\nPassword = {pw}\n"
            ),
            [pw],
            False,
        )

    def t3(r: random.Random):
        pw = password(r, spaces=True)
        return (
            (f"; settings.ini\n[database]\nhost: {r.choice(HOSTS)}\nport: 5432\npasswd: {pw}\n"),
            [pw],
            False,
        )

    def t4(r: random.Random):
        pw = password(r)
        return f"[smtp]\nserver = mail.example.com\nuser = {r.choice(USERS)}\npass = '{pw}'\n", [pw], False

    def t5(r: random.Random):
        pw = password(r, spaces=True)
        return (
            (
                f"[client]\r\nhost = {r.choice(HOSTS)}\r\nuser = {r.choice(USERS)}\r\npassword = {pw}\r\n"
                f"ssl-mode = REQUIRED\r\n"
            ),
            [pw],
            False,
        )

    return [t0, t1, t2, t3, t4, t5]


def git_credentials_templates() -> list[Pos]:
    def t0(r: random.Random):
        pw = password(r, symbols="!*-_.~")
        return f"https://{r.choice(USERS)}:{pw}@github.com", [pw], True

    def t1(r: random.Random):
        tok = "glpat-" + draw(r, ALNUM + "_-", 20)
        pw = password(r, symbols="!*")
        return (
            (f"https://oauth2:{tok}@gitlab.com\nhttps://{r.choice(USERS)}:{pw}@git.corp.net\n"),
            [tok, pw],
            False,
        )

    def t2(r: random.Random):
        raw = password(r, symbols="@#:/%!")
        enc = urllib.parse.quote(raw, safe="")
        return f"https://{r.choice(USERS)}:{enc}@bitbucket.org", [enc], True

    def t3(r: random.Random):
        pw = password(r, symbols="!*") + "@" + draw(r, ALNUM, 4)
        return f"https://{r.choice(USERS)}:{pw}@git.example.org", [pw], True

    def t4(r: random.Random):
        tok = "ghp_" + draw(r, ALNUM, 36)
        return f"https://x-access-token:{tok}@github.com\n", [tok], False

    def t5(r: random.Random):
        pw = draw(r, ALNUM, 32)
        return f"# ~/.git-credentials\nhttps://{r.choice(USERS)}:{pw}@dev.azure.com\n", [pw], False

    return [t0, t1, t2, t3, t4, t5]


def docker_templates() -> list[Pos]:
    def t0(r: random.Random):
        a = b64(f"{r.choice(USERS)}:{password(r)}")
        return json.dumps({"auths": {"registry.example.com": {"auth": a}}}), [a], False

    def t1(r: random.Random):
        a = b64(f"{r.choice(USERS)}:{password(r)}")
        return (
            json.dumps(
                {"auths": {"https://index.docker.io/v1/": {"auth": a}}, "credsStore": "desktop"}, indent=2
            ),
            [a],
            False,
        )

    def t2(r: random.Random):
        pw = password(r, symbols="!#")
        a = b64(f"u:{pw[:4]}")
        return json.dumps({"auths": {"ghcr.io": {"auth": a}}}, indent="\t"), [a], False

    def t3(r: random.Random):
        a = b64(f"{r.choice(USERS)}:{password(r)}")
        it = jwt(r)
        return (
            json.dumps({"auths": {"registry.gitlab.com": {"auth": a, "identitytoken": it}}}, indent=4),
            [a, it],
            False,
        )

    def t4(r: random.Random):
        a1, a2 = b64(f"ci:{password(r)}"), b64(f"AWS:{draw(r, ALNUM, 60)}")
        return (
            json.dumps(
                {
                    "auths": {
                        "quay.io": {"auth": a1},
                        "123456789012.dkr.ecr.us-east-1.amazonaws.com": {"auth": a2},
                    }
                }
            ),
            [a1, a2],
            False,
        )

    def t5(r: random.Random):
        pw = password(r)
        a = b64(f"{r.choice(USERS)}:{pw}")
        return (
            (
                '{\n  "auths": {\n    "nexus.corp.net:8443": {\n      "auth": "' + a + '"\n    }\n  },\n'
                '  "HttpHeaders": {"User-Agent": "Docker-Client/24.0.7 (linux)"}\n}'
            ),
            [a],
            False,
        )

    return [t0, t1, t2, t3, t4, t5]


def kubeconfig_templates() -> list[Pos]:
    head = (
        "apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n    certificate-authority-data: {ca}\n"
        "    server: https://10.0.0.1:6443\n  name: prod\ncontexts:\n- context:\n    cluster: prod\n"
        "    user: admin\n  name: prod\ncurrent-context: prod\nusers:\n- name: admin\n  user:\n"
    )

    def ca(r: random.Random) -> str:
        return b64("-----BEGIN CERTIFICATE-----\nMII" + draw(r, B64, 120) + "\n-----END CERTIFICATE-----\n")

    def t0(r: random.Random):
        tok = jwt(r)
        return head.format(ca=ca(r)) + f"    token: {tok}\n", [tok], False

    def t1(r: random.Random):
        key = pem_b64(r)
        return (
            head.format(ca=ca(r)) + f"    client-certificate-data: {ca(r)}\n    client-key-data: {key}\n",
            [key],
            False,
        )

    def t2(r: random.Random):
        tok = draw(r, LOWER + DIGITS, 6) + "." + draw(r, LOWER + DIGITS, 16)
        return f"users:\n- name: kubelet-bootstrap\n  user:\n    token: {tok}\n", [tok], False

    def t3(r: random.Random):
        pw = password(r)
        return (
            (f"users:\n- name: basic\n  user:\n    username: {r.choice(USERS)}\n    password: {pw}\n"),
            [pw],
            False,
        )

    def t4(r: random.Random):
        sec, rt = draw(r, ALNUM, 32), draw(r, ALNUM + "-_", 48)
        return (
            (
                "users:\n- name: oidc\n  user:\n    auth-provider:\n      config:\n"
                f"        client-id: kubernetes\n        client-secret: {sec}\n        id-token: {jwt(r)}\n"
                f"        idp-issuer-url: https://login.example.com\n        refresh-token: {rt}\n"
                "      name: oidc\n"
            ),
            [sec, rt],
            False,
        )

    def t5(r: random.Random):
        tok = "sha256~" + draw(r, ALNUM + "-_", 43)
        return f"users:\r\n- name: ops/api-cluster:6443\r\n  user:\r\n    token: {tok}\r\n", [tok], False

    return [t0, t1, t2, t3, t4, t5]


def npmrc_templates() -> list[Pos]:
    def t0(r: random.Random):
        tok = "npm_" + draw(r, ALNUM, 36)
        return f"//registry.npmjs.org/:_authToken={tok}", [tok], True

    def t1(r: random.Random):
        pw = b64(password(r))
        return (
            (
                f"registry=https://npm.corp.net/\n//npm.corp.net/:username={r.choice(USERS)}\n"
                f"//npm.corp.net/:_password={pw}\n//npm.corp.net/:email=ci@example.com\n"
            ),
            [pw],
            False,
        )

    def t2(r: random.Random):
        a = b64(f"{r.choice(USERS)}:{password(r)}")
        return f"always-auth=true\n_auth = {a}\n", [a], False

    def t3(r: random.Random):
        tok = (
            draw(r, HEX, 8)
            + "-"
            + draw(r, HEX, 4)
            + "-"
            + draw(r, HEX, 4)
            + "-"
            + draw(r, HEX, 4)
            + "-"
            + draw(r, HEX, 12)
        )
        return (
            f"@acme:registry=https://npm.pkg.github.com\n//npm.pkg.github.com/:_authToken = {tok}\n",
            [tok],
            False,
        )

    def t4(r: random.Random):
        tok = draw(r, ALNUM, 64)
        return (
            f"; project .npmrc\r\n//gitlab.com/api/v4/projects/42/packages/npm/:_authToken={tok}\r\n",
            [tok],
            False,
        )

    def t5(r: random.Random):
        tok = draw(r, B64, 44)
        return f'//pkgs.dev.azure.com/acme/_packaging/feed/npm/registry/:_password="{tok}"', [tok], True

    return [t0, t1, t2, t3, t4, t5]


def pypirc_templates() -> list[Pos]:
    def tok(r: random.Random) -> str:
        return "pypi-AgEIcHlwaS5vcmc" + draw(r, ALNUM + "-_", 120)

    def t0(r: random.Random):
        t = tok(r)
        return (
            f"[distutils]\nindex-servers =\n    pypi\n\n[pypi]\nusername = __token__\npassword = {t}\n",
            [t],
            False,
        )

    def t1(r: random.Random):
        pw = password(r, spaces=True)
        return (
            (
                f"[testpypi]\nrepository = https://test.pypi.org/legacy/\nusername = {r.choice(USERS)}\n"
                f"password = {pw}\n"
            ),
            [pw],
            False,
        )

    def t2(r: random.Random):
        pw = password(r)
        return (
            f"[internal]\r\nrepository: https://pypi.corp.net/\r\nusername: {r.choice(USERS)}\r\npassword: {pw}\r\n",
            [pw],
            False,
        )

    def t3(r: random.Random):
        t = tok(r)
        return f"[pypi]\n  username = __token__\n  password = {t}\n", [t], False

    def t4(r: random.Random):
        pw = password(r, spaces=True)
        return (
            f"# ~/.pypirc\n[nexus]\nrepository=https://nexus.corp.net/repository/pypi/\nusername=ci\npassword={pw}\n",
            [pw],
            False,
        )

    def t5(r: random.Random):
        t = tok(r)
        return f"[pypi]\nusername: __token__\npassword: {t}", [t], False

    return [t0, t1, t2, t3, t4, t5]


def yarnrc_templates() -> list[Pos]:
    def t0(r: random.Random):
        t = "npm_" + draw(r, ALNUM, 36)
        return f'npmAuthToken: "{t}"', [t], True

    def t1(r: random.Random):
        t = draw(r, HEX, 40)
        return f'"//registry.yarnpkg.com/:_authToken" "{t}"', [t], True

    def t2(r: random.Random):
        ident = f"{r.choice(USERS)}:{password(r, symbols='!#%&*')}"
        return (
            (f'npmRegistryServer: "https://npm.corp.net"\nnpmAlwaysAuth: true\nnpmAuthIdent: "{ident}"\n'),
            [ident.split(":", 1)[1]],
            False,
        )

    def t3(r: random.Random):
        t = draw(r, ALNUM, 40)
        return (
            (
                f'npmScopes:\n  acme:\n    npmRegistryServer: "https://npm.pkg.github.com"\n'
                f"    npmAuthToken: {t}\n"
            ),
            [t],
            False,
        )

    def t4(r: random.Random):
        t = draw(r, ALNUM, 36)
        return f'# yarn lockfile v1 settings\r\n"//npm.corp.net/:_authToken" {t}\r\n', [t], False

    def t5(r: random.Random):
        t = draw(r, ALNUM, 48)
        return (
            (
                f'npmRegistries:\n  "https://npm.corp.net":\n    npmAlwaysAuth: true\n    npmAuthToken: "{t}"\n'
            ),
            [t],
            False,
        )

    return [t0, t1, t2, t3, t4, t5]


def aws_templates() -> list[Pos]:
    def t0(r: random.Random):
        k, s = aws_key_id(r), aws_secret(r)
        return f"[default]\naws_access_key_id = {k}\naws_secret_access_key = {s}\n", [k, s], False

    def t1(r: random.Random):
        k, s = aws_key_id(r), aws_secret(r)
        st = "IQoJb3JpZ2luX2Vj" + draw(r, B64, 300)
        return (
            (
                f"[profile dev]\nregion=eu-west-1\naws_access_key_id={k}\naws_secret_access_key={s}\n"
                f"aws_session_token={st}\n"
            ),
            [k, s, st],
            False,
        )

    def t2(r: random.Random):
        k, s = aws_key_id(r), aws_secret(r)
        return (
            (f"# ~/.aws/credentials\r\n[prod]\r\naws_access_key_id = {k}\r\naws_secret_access_key = {s}\r\n"),
            [k, s],
            False,
        )

    def t3(r: random.Random):
        k, s = aws_key_id(r), aws_secret(r)
        return (
            (
                f"[default]\n  aws_access_key_id     = {k}\n  aws_secret_access_key = {s}\n  region = us-east-1\n"
                f"  output = json\n"
            ),
            [k, s],
            False,
        )

    def t4(r: random.Random):
        s = aws_secret(r)
        return f"aws_secret_access_key={s}", [s], True

    def t5(r: random.Random):
        k, s = aws_key_id(r), aws_secret(r)
        st = "FwoGZXIvYXdzE" + draw(r, B64, 200)
        return (
            (
                f"[sso-session]\n[temp]\naws_access_key_id: {k}\naws_secret_access_key: {s}\n"
                f"aws_security_token: {st}\n"
            ),
            [k, s, st],
            False,
        )

    return [t0, t1, t2, t3, t4, t5]


def ssh_templates() -> list[Pos]:
    def pub(r: random.Random) -> str:
        return "AAAAC3NzaC1lZDI1NTE5AAAAI" + draw(r, B64, 43)

    def t0(r: random.Random):
        body = (
            "b3BlbnNzaC1rZXktdjEAAAAA"
            + draw(r, B64, 40)
            + "\n"
            + "\n".join(draw(r, B64, 70) for _ in range(4))
        )
        text = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH PRIVATE KEY-----\n"
        return text, body.splitlines(), False

    def t1(r: random.Random):
        tok = draw(r, ALNUM, 32)
        return f'environment="DEPLOY_TOKEN={tok}",no-pty ssh-ed25519 {pub(r)} ci@build', [tok], True

    def t2(r: random.Random):
        pw = password(r, symbols="!#%&*")
        return (
            (
                f'command="/usr/local/bin/backup --password {pw} --target /srv",no-port-forwarding,no-X11-forwarding '
                f"ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ{draw(r, B64, 200)} backup@nas"
            ),
            [pw],
            True,
        )

    def t3(r: random.Random):
        priv = [draw(r, B64, 64) for _ in range(3)] + [draw(r, B64, 20) + "="]
        mac = draw(r, HEX, 64)
        text = (
            "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: eddsa-key-20261127\n"
            f"Public-Lines: 2\n{draw(r, B64, 64)}\n{draw(r, B64, 4)}\nPrivate-Lines: {len(priv)}\n"
            + "\n".join(priv)
            + f"\nPrivate-MAC: {mac}\n"
        )
        return text, priv + [mac], False

    def t4(r: random.Random):
        body = "\n".join(draw(r, B64, 64) for _ in range(5))
        text = f"-----BEGIN RSA PRIVATE KEY-----\r\nMII{body}\r\n-----END RSA PRIVATE KEY-----\r\n".replace(
            "\n", "\r\n"
        ).replace("\r\r", "\r")
        return text, body.splitlines(), False

    def t5(r: random.Random):
        key = draw(r, ALNUM, 24)
        return (
            (f'from="10.0.0.0/8",environment="API_KEY={key}",restrict ssh-ed25519 {pub(r)} deploy@ci\n'),
            [key],
            False,
        )

    return [t0, t1, t2, t3, t4, t5]


def jdbc_templates() -> list[Pos]:
    def t0(r: random.Random):
        pw = password(r, symbols="!*-_.~")
        return (
            f"jdbc:postgresql://{r.choice(HOSTS[:6])}:5432/app?user={r.choice(USERS)}&password={pw}&ssl=true",
            [pw],
            True,
        )

    def t1(r: random.Random):
        pw = password(r, symbols="!#%*-_")
        return f"jdbc:oracle:thin:{r.choice(USERS)}/{pw}@//db.example.com:1521/ORCL", [pw], True

    def t2(r: random.Random):
        pw = password(r, symbols="!#%*-_")
        return (
            (
                f"jdbc:sqlserver://{r.choice(HOSTS[:6])}:1433;databaseName=app;user={r.choice(USERS)};password={pw};"
                f"encrypt=true;"
            ),
            [pw],
            True,
        )

    def t3(r: random.Random):
        pw = password(r, symbols="!#%*-_")
        return (
            f"spring.datasource.url=jdbc:mysql://{r.choice(USERS)}:{pw}@{r.choice(HOSTS[:6])}:3306/shop",
            [pw],
            True,
        )

    def t4(r: random.Random):
        pw = password(r, symbols="!#%*-_")
        return f'url: "jdbc:oracle:thin:{r.choice(USERS)}/{pw}@{r.choice(HOSTS[:6])}:1521:XE"', [pw], True

    def t5(r: random.Random):
        pw = password(r, symbols="!#%*-_")
        return (
            (f"jdbc:db2://{r.choice(HOSTS[:6])}:50000/SAMPLE:user={r.choice(USERS)};password={pw};"),
            [pw],
            True,
        )

    return [t0, t1, t2, t3, t4, t5]


def odbc_templates() -> list[Pos]:
    def t0(r: random.Random):
        pw = password(r, symbols="!#%*-_")
        return (
            f"Driver={{ODBC Driver 18 for SQL Server}};Server={r.choice(HOSTS[:6])};Database=app;Uid=sa;Pwd={pw};",
            [pw],
            True,
        )

    def t1(r: random.Random):
        pw = password(r, symbols="!#%*") + ";" + draw(r, ALNUM, 4)
        return (
            f"DRIVER={{PostgreSQL Unicode}};SERVER=db;PORT=5432;DATABASE=app;UID=etl;PWD={{{pw}}};",
            [pw],
            True,
        )

    def t2(r: random.Random):
        pw = password(r, spaces=True)
        return (
            f"Server=tcp:db.example.net,1433;Initial Catalog=app;User ID=app;Password={pw};Encrypt=True;",
            [pw],
            True,
        )

    def t3(r: random.Random):
        pw = password(r, symbols="!#%*-_")
        return f"DSN=warehouse;UID={r.choice(USERS)};PWD={pw}", [pw], True

    def t4(r: random.Random):
        pw = password(r, symbols="!#%*-_")
        return (
            (
                f"Provider=Microsoft.ACE.OLEDB.12.0;Data Source=C:\\data\\app.accdb;"
                f"Jet OLEDB:Database Password={pw};"
            ),
            [pw],
            True,
        )

    def t5(r: random.Random):
        pw = password(r, spaces=True)
        return (
            (f'Host={r.choice(HOSTS[:6])};Port=5432;Username={r.choice(USERS)};Password="{pw}";Database=app'),
            [pw],
            True,
        )

    return [t0, t1, t2, t3, t4, t5]


def htpasswd_templates() -> list[Pos]:
    def bcrypt(r: random.Random) -> str:
        return f"$2{r.choice(['y', 'b', 'a'])}${r.choice(['05', '10', '12'])}${draw(r, CRYPT, 53)}"

    def apr1(r: random.Random) -> str:
        return f"$apr1${draw(r, CRYPT, 8)}${draw(r, CRYPT, 22)}"

    def sha(r: random.Random) -> str:
        return "{SHA}" + base64.b64encode(bytes(r.getrandbits(8) for _ in range(20))).decode()

    def t0(r: random.Random):
        h = bcrypt(r)
        return f"{r.choice(USERS)}:{h}", [h], True

    def t1(r: random.Random):
        hs = [apr1(r), bcrypt(r), sha(r)]
        return "\n".join(f"{u}:{h}" for u, h in zip(r.sample(USERS, 3), hs, strict=True)) + "\n", hs, False

    def t2(r: random.Random):
        h = sha(r)
        return f"{r.choice(USERS)}:{h}", [h], True

    def t3(r: random.Random):
        h = f"$6$rounds=5000${draw(r, CRYPT, 16)}${draw(r, CRYPT, 86)}"
        return f"{r.choice(USERS)}:{h}:19700:0:99999:7:::", [h], True

    def t4(r: random.Random):
        h = apr1(r)
        return f"# /etc/nginx/.htpasswd\r\n{r.choice(USERS)}:{h}\r\n", [h], False

    def t5(r: random.Random):
        h = draw(r, CRYPT, 2) + draw(r, CRYPT, 8) + draw(r, DIGITS, 1) + draw(r, UPPER, 2)
        return f"# htpasswd -d (crypt)\n{r.choice(USERS)}:{h}\n", [h], False

    return [t0, t1, t2, t3, t4, t5]


def keyword_config_templates() -> list[Pos]:
    def t0(r: random.Random):
        pw = password(r, symbols="!#%&*?@")
        return (
            (
                f"account default\nhost smtp.{r.choice(['corp.net', 'example.org'])}\nport 587\nauth on\n"
                f"user {r.choice(USERS)}\npassword {pw}\n"
            ),
            [pw],
            False,
        )

    def t1(r: random.Random):
        pw = password(r, spaces=True)
        return f'poll mail.corp.net protocol IMAP user "{r.choice(USERS)}" password "{pw}" ssl', [pw], True

    def t2(r: random.Random):
        pw = password(r, symbols="!#%&*?@")
        return (
            (
                f"# ~/.msmtprc\r\ndefaults\r\ntls on\r\n\r\naccount work\r\nhost mail.corp.net\r\n"
                f'from {r.choice(USERS)}@corp.net\r\nuser {r.choice(USERS)}\r\npassword "{pw}"\r\n'
            ),
            [pw],
            False,
        )

    def t3(r: random.Random):
        pw = password(r, symbols="!#%&*")
        return (
            (
                f"poll imap.corp.net with proto IMAP\n  user '{r.choice(USERS)}' there with password '{pw}' "
                f"is {r.choice(USERS)} here\n"
            ),
            [pw],
            False,
        )

    return [t0, t1, t2, t3]


def wifi_templates() -> list[Pos]:
    def t0(r: random.Random):
        pw = password(r, spaces=True)
        return f'network={{\n    ssid="{r.choice(WORDS).capitalize()}Net"\n    psk="{pw}"\n}}\n', [pw], False

    def t1(r: random.Random):
        pw = password(r, spaces=True)
        return (
            (
                f"[connection]\nid={r.choice(WORDS)}\ntype=wifi\n\n[wifi]\nssid={r.choice(WORDS)}\n\n"
                f"[wifi-security]\nkey-mgmt=wpa-psk\npsk={pw}\n"
            ),
            [pw],
            False,
        )

    def t2(r: random.Random):
        pw, hexpsk = password(r), draw(r, HEX, 64)
        return (
            (f'network={{\n\tssid="Lab{r.randint(1, 9)}"\n\t#psk="{pw}"\n\tpsk={hexpsk}\n}}\n'),
            [pw, hexpsk],
            False,
        )

    def t3(r: random.Random):
        pw = password(r, spaces=True)
        return (
            (
                f'ctrl_interface=/run/wpa_supplicant\r\nnetwork={{\r\n  ssid="Office"\r\n  key_mgmt=SAE\r\n'
                f'  sae_password="{pw}"\r\n}}\r\n'
            ),
            [pw],
            False,
        )

    return [t0, t1, t2, t3]


def secrets_file_templates() -> list[Pos]:
    def t0(r: random.Random):
        pws = [password(r, symbols="!#%&*?@"), password(r, symbols="")]
        return (
            (
                "# /etc/rsyncd.secrets\n"
                + "\n".join(f"{u}:{p}" for u, p in zip(r.sample(USERS, 2), pws, strict=True))
                + "\n"
            ),
            pws,
            False,
        )

    def t1(r: random.Random):
        pw = password(r, symbols="!#%&*?@")
        return (
            (
                f'# /etc/ppp/chap-secrets\n# client\tserver\tsecret\tIP addresses\n"{r.choice(USERS)}"\t*\t'
                f'"{pw}"\t*\n'
            ),
            [pw],
            False,
        )

    def t2(r: random.Random):
        pw = password(r, symbols="!#%&*?")
        return f"# .htpasswd made with htpasswd -bp (plain text)\r\n{r.choice(USERS)}:{pw}\r\n", [pw], False

    def t3(r: random.Random):
        pw = password(r, symbols="!#%&*")
        return (f"rsync module secrets (rsync.secrets):\n\n- {r.choice(USERS)}:{pw}\n"), [pw], False

    return [t0, t1, t2, t3]


POSITIVES: dict[str, Callable[[], list[Pos]]] = {
    "pgpass": pgpass_templates,
    "netrc": netrc_templates,
    "ini": ini_templates,
    "git-credentials": git_credentials_templates,
    "docker-config": docker_templates,
    "kubeconfig": kubeconfig_templates,
    "npmrc": npmrc_templates,
    "pypirc": pypirc_templates,
    "yarnrc": yarnrc_templates,
    "aws": aws_templates,
    "ssh": ssh_templates,
    "jdbc": jdbc_templates,
    "odbc": odbc_templates,
    "htpasswd": htpasswd_templates,
    "keyword-config": keyword_config_templates,
    "wifi": wifi_templates,
    "secrets-file": secrets_file_templates,
}
FILE_NAMES = {
    "pgpass": "~/.pgpass",
    "netrc": "~/.netrc",
    "ini": "~/.my.cnf",
    "git-credentials": "~/.git-credentials",
    "docker-config": "~/.docker/config.json",
    "kubeconfig": "~/.kube/config",
    "npmrc": "~/.npmrc",
    "pypirc": "~/.pypirc",
    "yarnrc": ".yarnrc",
    "aws": "~/.aws/credentials",
    "ssh": "~/.ssh/authorized_keys",
    "jdbc": "application.properties",
    "odbc": "odbc.ini",
    "htpasswd": ".htpasswd",
    "keyword-config": "~/.msmtprc",
    "wifi": "wpa_supplicant.conf",
    "secrets-file": "/etc/rsyncd.secrets",
}


# ----------------------------------------------------------------------------------------------------
# wrappers


def w_plain(r: random.Random, fmt: str, text: str) -> str:
    return text


def w_crlf(r: random.Random, fmt: str, text: str) -> str:
    return text.replace("\r\n", "\n").replace("\n", "\r\n")


def w_fence(r: random.Random, fmt: str, text: str) -> str:
    lang = r.choice(["", "ini", "text", "json", "yaml", "conf"])
    intro = r.choice(["Here is the file:\n\n", "My config, for reference:\n", "", "Setup notes\n\n"])
    return f"{intro}```{lang}\n{text.rstrip()}\n```\nthat works now."


def w_comment(r: random.Random, fmt: str, text: str) -> str:
    name = FILE_NAMES[fmt]
    return f"{r.choice(['#', '//', ';'])} {name}\n{text}" if fmt != "docker-config" else f"{name}:\n{text}"


def w_sentence(r: random.Random, fmt: str, text: str) -> str:
    name = FILE_NAMES[fmt]
    line = text.strip()
    return r.choice(
        [
            f'my {name} line is "{line}"',
            f"I put `{line}` in {name} and it still fails",
            f"the entry in {name} is '{line}', can you check why the login fails?",
            f"Remember: {name} has `{line}` for the staging box.",
        ]
    )


WRAPPERS: dict[str, Callable[[random.Random, str, str], str]] = {
    "plain": w_plain,
    "crlf": w_crlf,
    "fence": w_fence,
    "comment": w_comment,
    "sentence": w_sentence,
}


# ----------------------------------------------------------------------------------------------------
# look-alikes per format: nothing in these may be redacted

Look = Callable[[random.Random], str]


def _time(r: random.Random) -> str:
    return f"{r.randint(0, 23):02d}:{r.randint(0, 59):02d}"


LOOKALIKES: dict[str, list[Look]] = {
    "pgpass": [
        lambda r: ", ".join(f"{r.choice(HOSTS[:6])}:{r.choice([5432, 6379, 8080, 443])}" for _ in range(4)),
        lambda r: (
            "start,end\n"
            + "\n".join(
                f"{_time(r)}:{r.randint(0, 59):02d},{_time(r)}:{r.randint(0, 59):02d}" for _ in range(3)
            )
        ),
        lambda r: (
            f"lap times {_time(r)}:{r.randint(10, 59)}:{r.randint(10, 99)}:{r.randint(10, 99)}:{r.randint(10, 99)}"
        ),
        lambda r: "\n".join(
            f"sha256:{draw(r, HEX, 64)}  {r.choice(['app', 'lib', 'cli'])}-{r.randint(1, 9)}.tar.gz"
            for _ in range(3)
        ),
        lambda r: (
            f"{draw(r, HEX, 4)}:{draw(r, HEX, 4)}:{draw(r, HEX, 4)}:{r.randint(0, 9)}:{r.randint(0, 9)}:{draw(r, HEX, 4)}:{draw(r, HEX, 3)}:{draw(r, HEX, 4)}"
        ),
        lambda r: f"web{r.randint(1, 9)}:{r.choice([80, 443, 8080])}:nginx:www-data:{r.randint(10, 999)}ms",
        lambda r: "the format is hostname:port:database:username:password, one entry per line",
        lambda r: (
            f"{r.choice(USERS)}:x:{r.randint(1000, 1999)}:{r.randint(1000, 1999)}:{r.choice(['Alice', 'App'])},,,:/home/x:/bin/bash"
        ),
        lambda r: (
            f"MAC {':'.join(draw(r, HEX.upper()[:16], 2) for _ in range(6))} on port {r.randint(1, 48)}"
        ),
        lambda r: (
            f"WARNING:{r.choice(['urllib3', 'root', 'app.db'])}:retrying {r.randint(1, 5)}:{r.randint(1, 5)}:timeout"
        ),
    ],
    "netrc": [
        lambda r: "the machine login screen asks for a password every time",
        lambda r: "a machine learning login page with password reset is on the roadmap",
        lambda r: "machine api.example.com login ops",
        lambda r: (
            f"default login shell is /bin/{r.choice(['bash', 'zsh'])}; password aging is {r.randint(30, 90)} days"
        ),
        lambda r: "machine example.com login alice password ${NETRC_PASSWORD}",
        lambda r: "# .netrc: machine <host> login <user> password <password>",
        lambda r: "the default login for the router is printed on the label, change the password after setup",
        lambda r: (
            f"machine {r.choice(['build', 'gpu'])}-{r.randint(1, 40)} is down, login fails with password expired"
        ),
    ],
    "ini": [
        lambda r: f"[security]\npassword_min_length = {r.randint(8, 16)}\npassword_policy = strict\n",
        lambda r: "[client]\nuser = app\npassword =\nhost = db\n",
        lambda r: "[database]\npassword = ${DB_PASSWORD}\nhost = db.internal\n",
        lambda r: "[mysql]\npassword_file = /run/secrets/db_password\n",
        lambda r: "[app]\npassword_hint = the name of your first pet\nlogin_attempts = 5\n",
        lambda r: f"[server]\nport = {r.randint(1000, 9000)}\nhost = 0.0.0.0\nworkers = {r.randint(1, 8)}\n",
        lambda r: "[auth]\npassword_reset_url = https://example.com/reset\npassword_expiry_days = 90\n",
        lambda r: "[pypi]\nusername = __token__\npassword = %(PYPI_TOKEN)s\n",
    ],
    "git-credentials": [
        lambda r: f"https://github.com/{r.choice(USERS)}/{r.choice(WORDS)}.git",
        lambda r: f"git@github.com:{r.choice(USERS)}/{r.choice(WORDS)}.git",
        lambda r: f"https://{r.choice(USERS)}@bitbucket.org/acme/{r.choice(WORDS)}.git",
        lambda r: f"ssh://git@git.corp.net:{r.choice([22, 2222])}/acme/{r.choice(WORDS)}.git",
        lambda r: "[credential]\n\thelper = store --file ~/.git-credentials\n",
        lambda r: f"mail {r.choice(USERS)}@example.com about https://example.com/@{r.choice(USERS)}",
        lambda r: f"https://medium.com/@{r.choice(USERS)}/notes-{r.randint(1, 99)}",
    ],
    "docker-config": [
        lambda r: json.dumps({"auths": {"registry.example.com": {}}, "credsStore": "desktop"}),
        lambda r: json.dumps({"credHelpers": {"gcr.io": "gcloud", "public.ecr.aws": "ecr-login"}}),
        lambda r: json.dumps(
            {"auths": {}, "currentContext": "desktop-linux", "plugins": {"-x-cli-hints": {"enabled": "true"}}}
        ),
        lambda r: json.dumps({"auth": "oauth2", "scopes": ["read", "write"]}),
        lambda r: json.dumps({"auth": {"type": "basic"}, "endpoint": "https://api.example.com"}),
        lambda r: json.dumps(
            {"proxies": {"default": {"httpProxy": "http://proxy.corp:3128", "noProxy": "*.corp"}}}
        ),
    ],
    "kubeconfig": [
        lambda r: (
            "apiVersion: v1\nclusters:\n- cluster:\n    certificate-authority-data: "
            + b64("-----BEGIN CERTIFICATE-----\nMII" + draw(r, B64, 120) + "\n-----END CERTIFICATE-----\n")
            + "\n    server: https://10.0.0.1:6443\n  name: prod\n"
        ),
        lambda r: (
            "users:\n- name: gke\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n"
            "      command: gke-gcloud-auth-plugin\n      provideClusterInfo: true\n"
        ),
        lambda r: (
            "users:\n- name: admin\n  user:\n    client-certificate: /etc/kubernetes/pki/admin.crt\n"
            "    client-key: /etc/kubernetes/pki/admin.key\n"
        ),
        lambda r: (
            "users:\n- name: sa\n  user:\n    tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token\n"
        ),
        lambda r: (
            f"contexts:\n- context:\n    cluster: prod\n    namespace: {r.choice(WORDS)}\n    user: admin\n  name: prod\ncurrent-context: prod\n"
        ),
        lambda r: (
            "users:\n- name: oidc\n  user:\n    auth-provider:\n      config:\n        client-id: kubernetes\n        idp-issuer-url: https://login.example.com\n      name: oidc\n"
        ),
    ],
    "npmrc": [
        lambda r: "registry=https://registry.npmjs.org/\nsave-exact=true\nengine-strict=true\n",
        lambda r: "//registry.npmjs.org/:_authToken=${NPM_TOKEN}\n",
        lambda r: "@acme:registry=https://npm.pkg.github.com\nalways-auth=true\n",
        lambda r: "//npm.corp.net/:username=ci\n//npm.corp.net/:email=ci@example.com\n",
        lambda r: f"fund=false\naudit-level=high\nfetch-retries={r.randint(2, 5)}\n",
    ],
    "pypirc": [
        lambda r: "[distutils]\nindex-servers =\n    pypi\n    testpypi\n",
        lambda r: "[testpypi]\nrepository = https://test.pypi.org/legacy/\nusername = __token__\n",
        lambda r: "[pypi]\nusername = __token__\npassword = ${PYPI_API_TOKEN}\n",
        lambda r: "[global]\nindex-url = https://pypi.corp.net/simple\ntrusted-host = pypi.corp.net\n",
    ],
    "yarnrc": [
        lambda r: 'npmRegistryServer: "https://registry.yarnpkg.com"\nnpmAlwaysAuth: true\n',
        lambda r: 'npmAuthToken: "${NPM_TOKEN}"\n',
        lambda r: (
            "nodeLinker: node-modules\nenableTelemetry: false\nyarnPath: .yarn/releases/yarn-4.1.0.cjs\n"
        ),
        lambda r: 'registry "https://registry.npmjs.org"\nlastUpdateCheck 1700000000000\n',
    ],
    "aws": [
        lambda r: f"[profile dev]\nregion = {r.choice(['eu-west-1', 'us-east-1'])}\noutput = json\n",
        lambda r: (
            f"[profile ops]\nrole_arn = arn:aws:iam::{draw(r, DIGITS, 12)}:role/Ops\nsource_profile = default\n"
        ),
        lambda r: (
            "[profile sso]\nsso_start_url = https://acme.awsapps.com/start\nsso_region = us-east-1\nsso_role_name = ReadOnly\n"
        ),
        lambda r: "[default]\ncredential_process = /opt/bin/aws-vault exec dev --json\n",
        lambda r: (
            "[default]\naws_access_key_id = ${AWS_ACCESS_KEY_ID}\naws_secret_access_key = ${AWS_SECRET_ACCESS_KEY}\n"
        ),
        lambda r: (
            f"[profile ci]\nregion = us-east-2\nmax_attempts = {r.randint(3, 10)}\nretry_mode = adaptive\n"
        ),
    ],
    "ssh": [
        lambda r: f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{draw(r, B64, 43)} {r.choice(USERS)}@laptop",
        lambda r: (
            f'from="10.0.0.0/8",no-port-forwarding ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{draw(r, B64, 43)} ci'
        ),
        lambda r: (
            f'command="/usr/bin/rrsync -ro /srv/backup",restrict ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{draw(r, B64, 43)} nas'
        ),
        lambda r: f'environment="LANG=C.UTF-8" ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ{draw(r, B64, 100)} ops',
        lambda r: f"github.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{draw(r, B64, 43)}",
        lambda r: f"The key fingerprint is SHA256:{draw(r, B64, 43)} {r.choice(USERS)}@host",
        lambda r: (
            "-----BEGIN PUBLIC KEY-----\nMFkw"
            + draw(r, B64, 60)
            + "\n"
            + draw(r, B64, 60)
            + "\n-----END PUBLIC KEY-----"
        ),
        lambda r: (
            f"PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: key\nPublic-Lines: 2\n{draw(r, B64, 64)}\n{draw(r, B64, 4)}\n"
        ),
    ],
    "jdbc": [
        lambda r: f"jdbc:postgresql://{r.choice(HOSTS[:6])}:5432/app?ssl=true&sslmode=require",
        lambda r: "jdbc:oracle:thin:@//db.example.com:1521/ORCL",
        lambda r: f"jdbc:mysql://{r.choice(HOSTS[:6])}:3306/shop?useSSL=false&serverTimezone=UTC",
        lambda r: "spring.datasource.password=${DB_PASSWORD}\nspring.datasource.username=app\n",
        lambda r: "jdbc:sqlserver://db:1433;databaseName=app;integratedSecurity=true;encrypt=true;",
        lambda r: "jdbc:h2:mem:testdb;DB_CLOSE_DELAY=-1;MODE=PostgreSQL",
    ],
    "odbc": [
        lambda r: "Driver={ODBC Driver 18 for SQL Server};Server=db;Database=app;Trusted_Connection=yes;",
        lambda r: "Server=db;Database=app;Integrated Security=SSPI;TrustServerCertificate=True;",
        lambda r: "DSN=warehouse;UID=etl;PWD=;",
        lambda r: "Host=db;Port=5432;Username=app;Password=${DB_PASSWORD};Database=app",
        lambda r: "Data Source=app.db;Cache=Shared;Mode=ReadWriteCreate;",
        lambda r: "the password for the DSN is kept in the vault; ask ops for it; do not paste it here",
    ],
    "htpasswd": [
        lambda r: f"{r.choice(USERS)}:x:{r.randint(1000, 1999)}:{r.randint(1000, 1999)}::/home/u:/bin/bash",
        lambda r: f"prices: $5$10 and $6$12 for the two plans, {r.randint(2, 9)} seats",
        lambda r: 'echo "$1$2$3" >> out.txt',
        lambda r: "\n".join(f"{u}:{r.choice(['admin', 'editor', 'viewer'])}" for u in r.sample(USERS, 3)),
        lambda r: f"{draw(r, HEX, 64)}  {r.choice(WORDS)}.tar.gz",
        lambda r: f"{r.choice(USERS)}:{draw(r, HEX, 40)}",
        lambda r: "htpasswd -c /etc/nginx/.htpasswd alice   # prompts for the password",
    ],
    "keyword-config": [
        lambda r: (
            f"account default\nhost smtp.corp.net\nport 587\nuser {r.choice(USERS)}\npasswordeval pass show mail\n"
        ),
        lambda r: f"user {r.choice(USERS)} forgot the password again, reset it",
        lambda r: "host smtp.corp.net\nuser alice\npassword ${SMTP_PASSWORD}\n",
        lambda r: f'poll mail.corp.net protocol IMAP user "{r.choice(USERS)}" is {r.choice(USERS)} here\n',
        lambda r: "the new user password policy asks for 12 characters",
        lambda r: f"set the user {r.choice(USERS)} password via the admin page",
    ],
    "wifi": [
        lambda r: f'network={{\n    ssid="Cafe{r.randint(1, 9)}"\n    key_mgmt=NONE\n}}\n',
        lambda r: "[wifi]\nssid=Guest\nmode=infrastructure\n\n[wifi-security]\nkey-mgmt=wpa-eap\n",
        lambda r: f"the ssid is Cafe{r.randint(1, 9)} and the psk is on the fridge",
        lambda r: 'network={\n    ssid="Lab"\n    psk=${WIFI_PSK}\n}\n',
    ],
    "secrets-file": [
        lambda r: (
            "# users and roles\n"
            + "\n".join(f"{u}:{r.choice(['admin', 'viewer'])}" for u in r.sample(USERS, 3))
        ),
        lambda r: f"rsync runs at {_time(r)}; the rsyncd.secrets file is mode 600 and owned by root",
        lambda r: (
            f"# /etc/rsyncd.conf\n[backup]\npath = /srv/backup\nauth users = {r.choice(USERS)}\n"
            "secrets file = /etc/rsyncd.secrets\n"
        ),
        lambda r: "# /etc/ppp/chap-secrets\n# client\tserver\tsecret\tIP addresses\n",
    ],
}


# ----------------------------------------------------------------------------------------------------


def generate(seed: int = SEED) -> list[dict]:
    """The whole set, in a fixed order for a given seed."""
    rng = random.Random(seed)
    cases: list[dict] = []
    for fmt, make in POSITIVES.items():
        for i, template in enumerate(make()):
            part = "dev" if i % 2 == 0 else "held-out"
            for wname, wrap in WRAPPERS.items():
                for _ in range(PER_TEMPLATE):
                    text, secrets, one_line = template(rng)
                    if wname == "sentence" and not one_line:
                        continue
                    cases.append(
                        {
                            "format": fmt,
                            "part": part,
                            "wrapper": wname,
                            "template": i,
                            "text": wrap(rng, fmt, text),
                            "secrets": secrets,
                        }
                    )
    for fmt, looks in LOOKALIKES.items():
        for i, look in enumerate(looks):
            part = "dev" if i % 2 == 0 else "held-out"
            for k in range(LOOK_DRAWS):
                text = look(rng)
                wname = ("plain", "fence", "crlf", "plain")[k % 4]
                cases.append(
                    {
                        "format": fmt,
                        "part": part,
                        "wrapper": wname,
                        "template": i,
                        "text": WRAPPERS[wname](rng, fmt, text),
                        "secrets": [],
                    }
                )
    return cases


def leaked(secret: str, original: str, redacted: str) -> bool:
    """A secret survives when it, or any piece of 8 characters of it, is still in the redacted text (a piece
    that the rest of the original text also holds, such as the base64 of "-----BEGIN " shared by a
    certificate beside a key, does not count)."""
    if secret in redacted:
        return True
    n = 8
    rest = original.replace(secret, "\0")
    return len(secret) > n and any(
        secret[i : i + n] in redacted and secret[i : i + n] not in rest for i in range(len(secret) - n + 1)
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--part", choices=["dev", "held-out"])
    ap.add_argument("--show", help="print the cases of one format")
    args = ap.parse_args(argv)
    cases = [c for c in generate(args.seed) if args.part is None or c["part"] == args.part]
    counts: dict[tuple[str, bool], int] = {}
    for c in cases:
        key = (c["format"], bool(c["secrets"]))
        counts[key] = counts.get(key, 0) + 1
    for (fmt, pos), n in sorted(counts.items()):
        print(f"{fmt:18} {'positives' if pos else 'look-alikes':12} {n}")
    if args.show:
        for c in cases:
            if c["format"] == args.show:
                print(f"{c['part']:9} {c['wrapper']:8} {c['text']!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
