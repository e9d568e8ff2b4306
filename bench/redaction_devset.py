"""A generated development set for secret redaction: every provider format in every place people paste it.

    python bench/redaction_devset.py [--seed N] [--show CONTEXT]

Each case is ``{"context", "rule", "text", "secrets"}``: ``secrets`` lists the values that must not survive
redaction; an empty list marks a look-alike (``context == "lookalike"``) in which nothing may be redacted.
Values are random draws in each provider's published format (fixed seed, so the set is the same on every
run); the surrounding text is one of several templates per context. Nothing here is taken from the shared
evaluation data.
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import string
import urllib.parse
import uuid
from collections.abc import Callable

SEED = 20261124
PER_CELL = 4  # cases per (provider, context) pair

UPPER = string.ascii_uppercase
LOWER = string.ascii_lowercase
DIGITS = string.digits
ALNUM = UPPER + LOWER + DIGITS
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"


def draw(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


# ----------------------------------------------------------------------------------------------------
# values in each provider's format


def aws_access_key_id(rng: random.Random) -> str:
    body = draw(rng, UPPER + DIGITS, 16)
    # at least one of the digits 0, 1, 8, 9 (outside base32) in half the draws
    if rng.random() < 0.5:
        i = rng.randrange(16)
        body = body[:i] + rng.choice("0189") + body[i + 1 :]
    return rng.choice(["AKIA", "ASIA"]) + body


def aws_secret_key(rng: random.Random) -> str:
    while True:
        v = draw(rng, B64, 40)
        if rng.random() < 0.5 and "/" not in v:
            i = rng.randrange(1, 39)
            v = v[:i] + "/" + v[i + 1 :]
        if any(c.isdigit() for c in v) and any(c.isupper() for c in v) and any(c.islower() for c in v):
            return v


def jwt(rng: random.Random) -> str:
    header = b64url(json.dumps({"alg": rng.choice(["HS256", "RS256", "ES256"]), "typ": "JWT"}).encode())
    payload = {
        "sub": str(rng.randrange(10**6, 10**9)),
        "name": rng.choice(["Ana", "Bo", "Chen"]),
        "iat": rng.randrange(1_600_000_000, 1_800_000_000),
    }
    return f"{header}.{b64url(json.dumps(payload).encode())}.{draw(rng, B64URL, 43)}"


def pem_body(rng: random.Random, lines: int = 8) -> list[str]:
    return (
        ["MII" + draw(rng, B64, 61)]
        + [draw(rng, B64, 64) for _ in range(lines - 2)]
        + [draw(rng, B64, 24) + "=="]
    )


def password(rng: random.Random) -> str:
    word = rng.choice(["Falcon", "river", "Maple", "orbit", "Tango", "quartz", "Summer", "delta"])
    return (
        word
        + draw(rng, DIGITS, rng.randint(2, 4))
        + rng.choice("!#%&*?@$")
        + draw(rng, ALNUM, rng.randint(2, 6))
    )


PROVIDERS: dict[str, Callable[[random.Random], str]] = {
    "aws-access-key-id": aws_access_key_id,
    "aws-secret-key": aws_secret_key,
    "github-classic": lambda r: "gh" + r.choice("pousr") + "_" + draw(r, ALNUM, 36),
    "github-fine-grained": lambda r: "github_pat_" + draw(r, ALNUM, 22) + "_" + draw(r, ALNUM, 59),
    "gitlab": lambda r: r.choice(["glpat-", "gldt-", "glrt-", "glptt-"]) + draw(r, ALNUM + "_-", 20),
    "openai": lambda r: r.choice(
        [
            "sk-" + draw(r, ALNUM, 48),
            "sk-proj-" + draw(r, B64URL, 74) + "T3BlbkFJ" + draw(r, B64URL, 74),
            "sk-proj-" + draw(r, B64URL, 120),
            "sk-svcacct-" + draw(r, B64URL, 96),
            "sk-" + draw(r, B64URL, 32),
        ]
    ),
    "anthropic": lambda r: "sk-ant-" + r.choice(["api03", "admin01"]) + "-" + draw(r, B64URL, 93) + "AA",
    "huggingface": lambda r: "hf_" + draw(r, UPPER + LOWER, 34),
    "npm": lambda r: "npm_" + draw(r, ALNUM, 36),
    "pypi": lambda r: "pypi-AgEIcHlwaS5vcmc" + draw(r, B64URL, 150),
    "slack-token": lambda r: r.choice(
        [
            f"xoxb-{draw(r, DIGITS, 12)}-{draw(r, DIGITS, 13)}-{draw(r, ALNUM, 24)}",
            f"xoxp-{draw(r, DIGITS, 12)}-{draw(r, DIGITS, 12)}-{draw(r, DIGITS, 13)}-{draw(r, HEX, 32)}",
            f"xapp-1-A{draw(r, UPPER + DIGITS, 10)}-{draw(r, DIGITS, 13)}-{draw(r, HEX, 64)}",
        ]
    ),
    "stripe": lambda r: r.choice(["sk_live_", "rk_live_", "sk_test_"]) + draw(r, ALNUM, r.choice([24, 99])),
    "twilio": lambda r: r.choice(["SK", "AC"]) + draw(r, HEX, 32),
    "sendgrid": lambda r: "SG." + draw(r, B64URL, 22) + "." + draw(r, B64URL, 43),
    "google-api-key": lambda r: "AIza" + draw(r, B64URL, 35),
    "azure-storage-key": lambda r: draw(r, B64, 86) + "==",
    "azure-client-secret": lambda r: (
        draw(r, ALNUM, 3) + r.choice(DIGITS) + "Q~" + draw(r, ALNUM + "_~.-", 34)
    ),
    "plane": lambda r: "plane_api_" + draw(r, HEX, 32),
    "revenuecat": lambda r: r.choice(["sk_", "appl_", "goog_"]) + draw(r, ALNUM, r.choice([27, 32])),
    "jwt": jwt,
    "groq": lambda r: "gsk_" + draw(r, ALNUM, 52),
    "replicate": lambda r: "r8_" + draw(r, ALNUM, 37),
    "dockerhub": lambda r: "dckr_pat_" + draw(r, B64URL, 27),
    "discord-bot": lambda r: (
        r.choice("MNO") + draw(r, ALNUM, 25) + "." + draw(r, B64URL, 6) + "." + draw(r, B64URL, 38)
    ),
    "generic-hex": lambda r: draw(r, HEX, r.choice([32, 40, 64])),
    "generic-base62-40": lambda r: draw(r, ALNUM, 40),
    "password": password,
}

# what a provider's value is called in configs, env files and tables
NAMES = {
    "aws-access-key-id": ("aws_access_key_id", "AWS_ACCESS_KEY_ID", "Access key ID"),
    "aws-secret-key": ("aws_secret_access_key", "AWS_SECRET_ACCESS_KEY", "Secret access key"),
    "github-classic": ("github_token", "GITHUB_TOKEN", "GitHub token"),
    "github-fine-grained": ("gh_pat", "GH_PAT", "GitHub PAT"),
    "gitlab": ("gitlab_token", "GITLAB_TOKEN", "GitLab token"),
    "openai": ("openai_api_key", "OPENAI_API_KEY", "OpenAI key"),
    "anthropic": ("anthropic_api_key", "ANTHROPIC_API_KEY", "Anthropic key"),
    "huggingface": ("hf_token", "HF_TOKEN", "Hugging Face token"),
    "npm": ("npm_token", "NPM_TOKEN", "npm token"),
    "pypi": ("pypi_token", "PYPI_TOKEN", "PyPI token"),
    "slack-token": ("slack_bot_token", "SLACK_BOT_TOKEN", "Slack token"),
    "stripe": ("stripe_secret_key", "STRIPE_SECRET_KEY", "Stripe secret key"),
    "twilio": ("twilio_api_key", "TWILIO_API_KEY", "Twilio key"),
    "sendgrid": ("sendgrid_api_key", "SENDGRID_API_KEY", "SendGrid key"),
    "google-api-key": ("google_api_key", "GOOGLE_API_KEY", "Google API key"),
    "azure-storage-key": ("account_key", "AZURE_STORAGE_KEY", "Storage account key"),
    "azure-client-secret": ("client_secret", "AZURE_CLIENT_SECRET", "Client secret"),
    "plane": ("plane_api_key", "PLANE_API_KEY", "Plane API key"),
    "revenuecat": ("revenuecat_api_key", "REVENUECAT_API_KEY", "RevenueCat key"),
    "jwt": ("access_token", "ACCESS_TOKEN", "Access token"),
    "groq": ("groq_api_key", "GROQ_API_KEY", "Groq key"),
    "replicate": ("replicate_api_token", "REPLICATE_API_TOKEN", "Replicate token"),
    "dockerhub": ("docker_token", "DOCKERHUB_TOKEN", "Docker Hub token"),
    "discord-bot": ("discord_bot_token", "DISCORD_BOT_TOKEN", "Bot token"),
    "generic-hex": ("api_secret", "API_SECRET", "API secret"),
    "generic-base62-40": ("api_key", "SERVICE_API_KEY", "API key"),
    "password": ("db_password", "DB_PASSWORD", "Password"),
}
# the provider as a person names it in a table row or a sentence
LABELS = {
    "aws-access-key-id": "AWS",
    "aws-secret-key": "AWS",
    "github-classic": "GitHub",
    "github-fine-grained": "GitHub",
    "gitlab": "GitLab",
    "openai": "OpenAI",
    "anthropic": "Anthropic",
    "huggingface": "Hugging Face",
    "npm": "npm",
    "pypi": "PyPI",
    "slack-token": "Slack",
    "stripe": "Stripe",
    "twilio": "Twilio",
    "sendgrid": "SendGrid",
    "google-api-key": "Google Maps",
    "azure-storage-key": "Azure Storage",
    "azure-client-secret": "Azure AD",
    "plane": "Plane",
    "revenuecat": "RevenueCat",
    "jwt": "staging API",
    "groq": "Groq",
    "replicate": "Replicate",
    "dockerhub": "Docker Hub",
    "discord-bot": "Discord",
    "generic-hex": "Mailer",
    "generic-base62-40": "Analytics",
    "password": "Postgres",
}


# ----------------------------------------------------------------------------------------------------
# contexts: each takes (rng, provider, value) and returns the text


def ctx_assignment(rng: random.Random, p: str, v: str) -> str:
    name = NAMES[p][0]
    camel = "".join(w.capitalize() if i else w for i, w in enumerate(name.split("_")))
    return rng.choice(
        [
            f'{name} = "{v}"',
            f"{name} = '{v}'",
            f"const {camel} = '{v}';",
            f'config["{name}"] = "{v}"',
            f'client = Client({name}="{v}")',
            f"{name}: {v}",
            f"set {name} {v}" if p == "password" else f'{name} := "{v}"',
            f"mytool login --{name.replace('_', '-')} {v}",
        ]
    )


def ctx_env(rng: random.Random, p: str, v: str) -> str:
    env = NAMES[p][1]
    return rng.choice(
        [
            f"{env}={v}",
            f"export {env}={v}",
            f'export {env}="{v}"',
            f"# .env\nDEBUG=false\n{env}={v}\nPORT=8080",
            f"{env}='{v}' python app.py",
            f"docker run -e {env}={v} app:latest",
        ]
    )


def ctx_json(rng: random.Random, p: str, v: str) -> str:
    name = NAMES[p][0]
    camel = "".join(w.capitalize() if i else w for i, w in enumerate(name.split("_")))
    return rng.choice(
        [
            json.dumps({name: v}),
            json.dumps({"service": LABELS[p], "credentials": {name: v, "region": "eu-west-1"}}, indent=2),
            json.dumps({camel: v, "timeout": 30}),
            json.dumps({"env": [{"name": NAMES[p][1], "value": v}]}),
        ]
    )


def ctx_yaml(rng: random.Random, p: str, v: str) -> str:
    name = NAMES[p][0]
    return rng.choice(
        [
            f"{LABELS[p].lower().replace(' ', '_')}:\n  {name}: {v}\n  retries: 3",
            f'env:\n  - name: {NAMES[p][1]}\n    value: "{v}"',
            f"services:\n  api:\n    environment:\n      {NAMES[p][1]}: '{v}'",
            f'{name}: "{v}"',
        ]
    )


def ctx_table(rng: random.Random, p: str, v: str) -> str:
    label = LABELS[p]
    return rng.choice(
        [
            f"| Service | Key |\n|---|---|\n| {label} | {v} |",
            f"| {label} | {v} |",
            f"| name | value | notes |\n| --- | --- | --- |\n| {NAMES[p][2]} | `{v}` | prod |",
            f"| {label} | prod | {v} |",
            f"|Provider|Token|Owner|\n|:--|:--|:--|\n|{label}|{v}|ops|",
        ]
    )


def ctx_csv(rng: random.Random, p: str, v: str) -> str:
    return rng.choice(
        [
            f"service,{NAMES[p][2].lower().replace(' ', '_')}\n{LABELS[p]},{v}",
            f"User name,{NAMES[p][2]},Console login link\nops-bot,{v},https://console.example.com",
            f"name,secret,created\n{LABELS[p]},{v},2024-05-01",
        ]
    )


def ctx_header(rng: random.Random, p: str, v: str) -> str:
    return rng.choice(
        [
            f"Authorization: Bearer {v}",
            f'curl -H "Authorization: Bearer {v}" https://api.example.com/v1/items',
            f"X-Api-Key: {v}",
            f"curl https://api.example.com -H 'x-api-key: {v}'",
            f"GET /v1/me HTTP/1.1\nHost: api.example.com\nAuthorization: token {v}\nAccept: */*",
            f"headers = {{'Authorization': 'Bearer {v}'}}",
        ]
    )


def ctx_prose(rng: random.Random, p: str, v: str) -> str:
    label = LABELS[p]
    what = {"password": "password", "jwt": "token", "generic-hex": "API secret"}.get(p, "key")
    return rng.choice(
        [
            f"here is my {label} {what}: {v} - please use it for the demo",
            f"The {label} {what} is {v}, rotate it after the launch.",
            f"Use {v} as the {label} {what} when you deploy.",
            f"I set the {what} for {label} to {v} yesterday.",
        ]
    )


def ctx_url(rng: random.Random, p: str, v: str) -> str:
    # a token in a query string, percent-encoded as a client would send it
    v = urllib.parse.quote(v, safe="")
    return rng.choice(
        [
            f"https://api.example.com/v2/data?api_key={v}&format=json",
            f"GET https://service.example.org/feed?token={v}",
            f"wss://stream.example.net/socket?access_token={v}&v=2",
        ]
    )


CONTEXTS = {
    "assignment": ctx_assignment,
    "env": ctx_env,
    "json": ctx_json,
    "yaml": ctx_yaml,
    "table": ctx_table,
    "csv": ctx_csv,
    "header": ctx_header,
    "prose": ctx_prose,
    "url-query": ctx_url,
}
# a password is not sent as a bearer token or an API-key header
SKIP = {("password", "header")}


# ----------------------------------------------------------------------------------------------------
# contexts with their own shape: URL credentials, connection strings, credential files, private keys,
# webhooks


def special_cases(rng: random.Random) -> list[dict]:
    out: list[dict] = []

    def add(context: str, rule: str, text: str, *secrets: str) -> None:
        out.append({"context": context, "rule": rule, "text": text, "secrets": list(secrets)})

    for _ in range(PER_CELL * 3):
        pw = password(rng)
        user = rng.choice(["app", "admin", "svc_reader", "deploy"])
        host = rng.choice(["db.internal", "10.0.3.7", "cluster0.ab1cd.mongodb.net", "cache.example.com"])
        scheme = rng.choice(
            ["postgres", "postgresql", "mysql", "mongodb+srv", "redis", "amqp", "https", "ftp"]
        )
        add("url-userinfo", scheme, f"{scheme}://{user}:{pw}@{host}/app", pw)
        add("url-userinfo", "redis-no-user", f"REDIS_URL=redis://:{pw}@{host}:6379/0", pw)
        tok = PROVIDERS["github-classic"](rng)
        add("url-userinfo", "token-as-user", f"git clone https://{tok}@github.com/acme/app.git", tok)
        add(
            "url-userinfo",
            "in-prose",
            f"connect with mysql://{user}:{pw}@{host}:3306/shop and run the migration",
            pw,
        )

    for _ in range(PER_CELL * 2):
        key = PROVIDERS["azure-storage-key"](rng)
        acct = "st" + draw(rng, LOWER + DIGITS, 10)
        add(
            "connection-string",
            "azure-storage",
            f"DefaultEndpointsProtocol=https;AccountName={acct};AccountKey={key};EndpointSuffix=core.windows.net",
            key,
        )
        pw = password(rng)
        add(
            "connection-string",
            "sql-server",
            f"Server=tcp:{acct}.database.windows.net,1433;Database=app;User ID=admin;Password={pw};Encrypt=True;",
            pw,
        )
        add("connection-string", "odbc", f"Driver={{ODBC Driver 18}};Server=db;Uid=sa;Pwd={pw};", pw)
        sak = draw(rng, B64, 43) + "="
        add(
            "connection-string",
            "service-bus",
            f"Endpoint=sb://{acct}.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;"
            f"SharedAccessKey={sak}",
            sak,
        )
        sig = draw(rng, ALNUM, 30) + "%2B" + draw(rng, ALNUM, 10) + "%3D"
        add(
            "connection-string",
            "sas-url",
            f"https://{acct}.blob.core.windows.net/backups?sv=2022-11-02&ss=b&srt=co&sp=rl"
            f"&se=2025-01-01T00:00:00Z&sig={sig}",
            sig,
        )
        add(
            "connection-string",
            "jdbc",
            f"jdbc:postgresql://db.internal:5432/app?user=app&password={pw}&ssl=true",
            pw,
        )

    for _ in range(PER_CELL * 2):
        kid, sk = aws_access_key_id(rng), aws_secret_key(rng)
        add(
            "credentials-file",
            "aws",
            f"[default]\naws_access_key_id = {kid}\naws_secret_access_key = {sk}\nregion = us-east-1",
            kid,
            sk,
        )
        add("credentials-file", "aws-csv", f"Access key ID,Secret access key\n{kid},{sk}", kid, sk)
        add("credentials-file", "aws-prose", f"new keys: {kid} / {sk}", kid, sk)
        pw = password(rng)
        add("credentials-file", "netrc", f"machine api.example.com login ops password {pw}", pw)
        add("credentials-file", "pgpass", f"# ~/.pgpass\ndb.internal:5432:app:app:{pw}", pw)
        add("credentials-file", "sql", f"CREATE USER app IDENTIFIED BY '{pw}';", pw)
        add("credentials-file", "xml", f"<datasource>\n  <password>{pw}</password>\n</datasource>", pw)
        tok = PROVIDERS["npm"](rng)
        add("credentials-file", "npmrc", f"//registry.npmjs.org/:_authToken={tok}", tok)
        add("credentials-file", "cli-flag", f"mysql -h db -u root --password {pw} shop", pw)
        add("credentials-file", "cli-flag", f'psql "host=db user=app password={pw} dbname=app"', pw)

    for _ in range(PER_CELL * 2):
        kind = rng.choice(["RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY"])
        body = pem_body(rng)
        pem = f"-----BEGIN {kind}-----\n" + "\n".join(body) + f"\n-----END {kind}-----"
        add("private-key", "pem", f"here is the deploy key:\n{pem}\n", *body)
        escaped = pem.replace("\n", "\\n") + "\\n"
        sa = (
            '{"type": "service_account", "project_id": "demo-123", "private_key_id": "'
            + draw(rng, HEX, 40)
            + '", "private_key": "'
            + escaped
            + '", "client_email": '
            '"svc@demo-123.iam.gserviceaccount.com"}'
        )
        add("private-key", "json-escaped", sa, *body)
        yaml = "tls:\n  private_key: |\n    " + pem.replace("\n", "\n    ") + "\n  port: 443"
        add("private-key", "yaml-block", yaml, *body)
        bare = "ssh_private_key: " + "".join(body)
        add("private-key", "bare-base64", bare, "".join(body))

    for _ in range(PER_CELL * 2):
        path = f"T{draw(rng, UPPER + DIGITS, 10)}/B{draw(rng, UPPER + DIGITS, 10)}/{draw(rng, ALNUM, 24)}"
        add(
            "webhook", "slack", f"post alerts to https://hooks.slack.com/services/{path}", path.split("/")[-1]
        )
        dpath = f"{draw(rng, DIGITS, 19)}/{draw(rng, B64URL, 68)}"
        add(
            "webhook",
            "discord",
            f"DISCORD_WEBHOOK=https://discord.com/api/webhooks/{dpath}",
            dpath.split("/")[-1],
        )
        g1, g2, g3 = (
            uuid.UUID(int=rng.getrandbits(128)),
            uuid.UUID(int=rng.getrandbits(128)),
            draw(rng, HEX, 32),
        )
        teams = f"https://acme.webhook.office.com/webhookb2/{g1}@{g2}/IncomingWebhook/{g3}/{g1}"
        add("webhook", "teams", f"Teams channel hook: {teams}", g3)
        sig = draw(rng, B64URL, 43)
        add(
            "webhook",
            "logic-apps",
            f"https://prod-12.westus.logic.azure.com:443/workflows/{draw(rng, HEX, 32)}/triggers/manual/paths/"
            f"invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={sig}",
            sig,
        )

    for _ in range(PER_CELL * 2):
        basic = base64.b64encode(f"{rng.choice(['admin', 'ops', 'ci'])}:{password(rng)}".encode()).decode()
        add("header", "basic", f"Authorization: Basic {basic}", basic)
        add(
            "header",
            "basic-curl",
            f"curl -H 'Authorization: Basic {basic}' https://registry.example.com/v2/",
            basic,
        )
        tok = draw(rng, ALNUM, 32)
        add(
            "header",
            "private-token",
            f'curl --header "PRIVATE-TOKEN: {tok}" https://gitlab.example.com/api/v4',
            tok,
        )
        cookie = draw(rng, ALNUM, 32)
        add("header", "cookie", f"Cookie: theme=dark; sessionid={cookie}; lang=en", cookie)
        sub = draw(rng, HEX, 32)
        add("header", "subscription-key", f"Ocp-Apim-Subscription-Key: {sub}", sub)
    return out


# ----------------------------------------------------------------------------------------------------
# look-alikes: nothing in these may be redacted


def lookalikes(rng: random.Random) -> list[dict]:
    out: list[dict] = []

    def add(rule: str, text: str) -> None:
        out.append({"context": "lookalike", "rule": rule, "text": text, "secrets": []})

    for _ in range(PER_CELL * 2):
        u = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        sha = draw(rng, HEX, 40)
        h256 = draw(rng, HEX, 64)
        short = sha[:7]
        add(
            "uuid",
            rng.choice(
                [
                    f"request {u} failed with a 502",
                    f"the run id is {u}",
                    f"trace_id: {u}",
                    f"| run | {u} | done |",
                    f'{{"id": "{u}", "status": "ok"}}',
                ]
            ),
        )
        add(
            "git-sha",
            rng.choice(
                [
                    f"commit {sha}\nAuthor: Ana Lima",
                    f"fixed in {sha}",
                    f"git checkout {sha}",
                    f"revert {short} and cherry-pick {sha}",
                    f"| {short} | fix typo | {sha} |",
                    f"HEAD is now at {sha}",
                    f"https://github.com/acme/app/commit/{sha}",
                ]
            ),
        )
        add(
            "sha256",
            rng.choice(
                [
                    f"sha256: {h256}",
                    f"checksum {h256}  app.tar.gz",
                    f"sha256sum = {h256}",
                    f"docker pull app@sha256:{h256}",
                    f"| app.tar.gz | {h256} |",
                    f"Digest: sha256:{h256}",
                    f'"hash": "{h256}"',
                ]
            ),
        )
        png = "iVBORw0KGgoAAAANSUhEUgAA" + draw(rng, B64, 120) + "=="
        add(
            "data-uri",
            rng.choice(
                [
                    f'<img src="data:image/png;base64,{png}">',
                    f"![logo](data:image/png;base64,{png})",
                    f'{{"icon": "data:image/png;base64,{png}"}}',
                    f"background: url(data:image/png;base64,{png})",
                ]
            ),
        )
        add(
            "version",
            rng.choice(
                [
                    "upgraded torch to 2.13.0+cpu and numpy==1.26.4",
                    "release v1.24.3-rc.2 is out",
                    "node v20.11.1, npm 10.2.4",
                    "build 10.0.19045.3803 of windows",
                    "| package | version |\n|---|---|\n| lancedb | 0.40.0 |",
                ]
            ),
        )
        add(
            "words",
            rng.choice(
                [
                    "I clicked password reset but the email never came",
                    "the token limit is 4096 per request",
                    "the key is in the drawer next to the door",
                    "Authorization header is missing in the request",
                    "we use a bearer token for auth",
                    "my api key expired yesterday, I will ask for a new one",
                    "Secret Santa at the office on Friday",
                    "the password must be at least 12 characters",
                    "tokenization splits text into tokens",
                    "she gave me the key to her flat",
                    "the auth flow redirects to the login page",
                    "remember to rotate credentials every 90 days",
                ]
            ),
        )
        add(
            "path",
            rng.choice(
                [
                    "the key lives in ~/.ssh/id_ed25519",
                    "key_file: /etc/ssl/private/server.key",
                    "edit src/core/privacy/redact.py and core/privacy/rules.py",
                    "credentials are read from ~/.aws/credentials",
                    "token_path = /var/run/secrets/token",
                    "password_file: /run/secrets/db_password",
                ]
            ),
        )
        add(
            "url",
            rng.choice(
                [
                    "https://github.com/acme/app/blob/main/README.md",
                    "postgres://db.internal:5432/app",
                    "https://example.com/search?page=2&sort=desc",
                    "redis://localhost:6379/0",
                    "see https://docs.example.com/auth/tokens#rotation",
                    "mongodb+srv://cluster0.ab1cd.mongodb.net/app?retryWrites=true",
                ]
            ),
        )
        add(
            "public",
            rng.choice(
                [
                    f"Stripe publishable key pk_live_{draw(rng, ALNUM, 40)}",
                    f"my public key is ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAA{draw(rng, B64, 44)} ana@laptop",
                    f"trace id {draw(rng, HEX, 32)} in the logs",
                    f"The key fingerprint is SHA256:{draw(rng, B64, 43)}",
                ]
            ),
        )
        add(
            "reference",
            rng.choice(
                [
                    "API_KEY=${API_KEY}",
                    "password: ${{ secrets.DB_PASSWORD }}",
                    "token = os.environ['GITHUB_TOKEN']",
                    "OPENAI_API_KEY=<your key here>",
                    "api_key: !vault secret/data/app#key",
                    "password = getpass()",
                    "export AWS_SECRET_ACCESS_KEY=$(cat secret.txt)",
                ]
            ),
        )
        add(
            "table",
            rng.choice(
                [
                    "| Service | Port | Owner |\n|---|---|---|\n| billing | 8080 | ana |",
                    "| Key | Action |\n|---|---|\n| Ctrl+S | save |\n| Ctrl+Q | quit |",
                    "| Token type | Lifetime |\n|---|---|\n| access | 1 hour |\n| refresh | 30 days |",
                    "name,version,licence\nlancedb,0.40.0,Apache-2.0",
                ]
            ),
        )
    return out


# ----------------------------------------------------------------------------------------------------


def generate(seed: int = SEED, per_cell: int = PER_CELL) -> list[dict]:
    """The whole set, in a fixed order for a given seed."""
    rng = random.Random(seed)
    cases: list[dict] = []
    for p, make in PROVIDERS.items():
        for ctx, render in CONTEXTS.items():
            if (p, ctx) in SKIP:
                continue
            for _ in range(per_cell):
                v = make(rng)
                shown = urllib.parse.quote(v, safe="") if ctx == "url-query" else v
                cases.append({"context": ctx, "rule": p, "text": render(rng, p, v), "secrets": [shown]})
    cases.extend(special_cases(rng))
    cases.extend(lookalikes(rng))
    return cases


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--show", help="print the cases of one context")
    args = ap.parse_args(argv)
    cases = generate(args.seed)
    counts: dict[str, int] = {}
    for c in cases:
        counts[c["context"]] = counts.get(c["context"], 0) + 1
    for ctx, n in counts.items():
        print(f"{ctx:20} {n}")
    if args.show:
        for c in cases:
            if c["context"] == args.show:
                print(f"{c['rule']:22} {c['text']!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
