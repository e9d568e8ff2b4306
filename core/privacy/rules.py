"""The rule tables of secret detection: issuer-prefixed token formats and the vocabulary of secret names.

Data only; the code that applies them is in :mod:`.detectors`.
"""

from __future__ import annotations

import re

# Tokens with a recognisable issuer prefix or shape. Written for this project from the public formats
# of each provider. ``loose`` means the prefix itself is strong evidence, so only blatant placeholders
# (xxxx, 0000, <...>) are refused; otherwise the random part must also look random.
PREFIXED_RULES: list[tuple[str, str, bool]] = [
    (
        "aws-access-key",
        (
            r"(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|A3T[A-Z0-9])"
            r"[A-Z0-9]{16}(?![A-Za-z0-9])"
        ),
        False,
    ),
    ("github-token", r"(?<![A-Za-z0-9_])gh[pousr]_[A-Za-z0-9]{36,251}(?![A-Za-z0-9])", False),
    ("github-fine-grained-pat", r"(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{60,255}", False),
    (
        "gitlab-token",
        (
            r"(?<![\w-])gl(?:pat|ptt|rt|dt|ft|cbt|oas|soat|imt|agent|ffct|rrt|cf)-[\w-]{20,}"
            r"(?:\.[\w-]{2,})?"
        ),
        False,
    ),
    ("gitlab-runner-registration", r"(?<![\w])GR1348941[\w-]{20,}", False),
    (
        "openai-key",
        (
            r"(?<![\w-])sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{16,}T3BlbkFJ"
            r"[A-Za-z0-9_-]{16,}"
        ),
        True,
    ),
    ("openai-legacy-key", r"(?<![\w-])sk-[A-Za-z0-9]{48}(?![\w-])", False),
    # any other sk- key (project, service-account, admin keys without the T3BlbkFJ marker, proxies that
    # mint OpenAI-style keys): the random part must look random, which a slug such as sk-learn does not
    ("sk-key", r"(?<![\w-])sk-(?:[a-z]{2,8}\d{0,2}-){0,2}[A-Za-z0-9_-]{20,}(?![\w-])", False),
    ("anthropic-key", r"(?<![\w-])sk-ant-(?:api|admin|sid|oat)\d{2}-[A-Za-z0-9_-]{80,}AA(?![\w-])", True),
    (
        "slack-token",
        r"(?<![\w-])xox[a-z]-(?:\d+-)*\d{6,}-(?:\d+-)*(?=[A-Za-z0-9]*[A-Za-z])[A-Za-z0-9]{8,}",
        True,
    ),
    ("slack-any-token", r"(?<![\w-])xox[abposre]-(?=[A-Za-z0-9-]*\d)[A-Za-z0-9-]{20,}(?![\w-])", False),
    ("slack-config-token", r"(?<![\w-])xoxe(?:\.xox[a-z])?-\d-[A-Za-z0-9]{40,}", False),
    ("slack-app-token", r"(?<![\w-])xapp-\d-[A-Z0-9]{6,}-\d{6,}-[A-Za-z0-9]{16,}", True),
    (
        "slack-webhook",
        r"(?:https?://)?hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,}",
        True,
    ),
    ("discord-webhook", r"https?://(?:\w+\.)?discord(?:app)?\.com/api/webhooks/\d+/[\w-]{20,}", True),
    ("teams-webhook", r"https://[\w.-]+\.webhook\.office\.com/webhookb2/[\w@/-]{30,}", True),
    ("stripe-key", r"(?<![\w])(?:sk|rk)_(?:test|live|prod)_[A-Za-z0-9]{10,}", False),
    # a live or production key: the prefix is the evidence, so only blatant placeholders are refused
    ("stripe-live-key", r"(?<![\w])(?:sk|rk)_(?:live|prod)_[A-Za-z0-9]{16,}(?![\w])", True),
    ("stripe-webhook-secret", r"(?<![\w])whsec_[A-Za-z0-9+/=]{24,}", False),
    # RevenueCat: secret keys sk_..., SDK keys per store (appl_, goog_, amzn_, strp_, rcb_)
    ("revenuecat-key", r"(?<![\w])(?:sk|appl|goog|amzn|strp|rcb)_[A-Za-z0-9]{20,}(?![\w])", False),
    ("plane-api-key", r"(?<![\w])plane_api_[A-Za-z0-9]{20,}(?![\w])", False),
    ("jwt", r"(?<![\w-])eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*", True),
    (
        "huggingface-token",
        (
            r"(?<![A-Za-z0-9_])hf_(?=[A-Za-z0-9]*[A-Z])(?=[A-Za-z0-9]*[a-z])[A-Za-z0-9]{30,40}"
            r"(?![\w-])"
        ),
        False,
    ),
    ("huggingface-org-token", r"(?<![A-Za-z0-9_])api_org_[A-Za-z]{34}(?![A-Za-z0-9])", False),
    ("google-api-key", r"(?<![\w-])AIza[\w-]{35}(?![\w-])", False),
    ("npm-token", r"(?<![\w])npm_[A-Za-z0-9]{36}(?![\w])", False),
    ("pypi-token", r"pypi-AgEIcHlwaS5vcmc[\w-]{50,}", True),
    ("databricks-token", r"(?<![\w])dapi[a-f0-9]{32}(?:-\d)?(?![\w])", False),
    ("vault-token", r"(?<![\w])hv[sbr]\.[\w-]{90,}", False),
    # service, batch and recovery tokens shorter than the CAES-prefixed form (older or namespaced servers)
    (
        "vault-short-token",
        r"(?<![\w.])hv[sbr]\.(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{20,89}(?![\w-])",
        False,
    ),
    (
        "vault-legacy-token",
        (
            r"(?<![\w.])s\.(?=[A-Za-z0-9]*\d)(?=[A-Za-z0-9]*[a-z])(?=[A-Za-z0-9]*[A-Z])"
            r"[A-Za-z0-9]{24}(?![\w.])"
        ),
        False,
    ),
    ("notion-token", r"(?<![\w])ntn_\d{11}[A-Za-z0-9]{35}(?![\w])", False),
    ("sentry-token", r"(?<![\w])sntry[su]_[A-Za-z0-9+/=_]{40,}", True),
    ("perplexity-key", r"(?<![\w])pplx-[A-Za-z0-9]{48}(?![\w])", False),
    (
        "grafana-token",
        (
            r"(?<![\w])(?:glc_[A-Za-z0-9+/]{32,}={0,2}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|"
            r"eyJrIjoi[A-Za-z0-9]{40,}={0,2})"
        ),
        False,
    ),
    ("flyio-token", r"(?<![\w])(?:fo1_[\w-]{43}|fm[12][ar]?_[A-Za-z0-9+/]{100,}={0,3})", False),
    ("openshift-token", r"(?<![\w])sha256~[\w-]{43}(?![\w-])", False),
    ("facebook-token", r"(?<![\w])(?:EAA[A-Za-z0-9_-]{60,}|\d{15,16}(?:\||%7C)[\w-]{27}(?![\w-]))", False),
    ("square-token", r"(?<![\w])(?:sq0atp-[\w-]{22}|sq0csp-[\w-]{43})", False),
    ("sendgrid-key", r"(?<![\w])SG\.[\w-]{22}\.[\w-]{43}", False),
    ("sendinblue-key", r"(?<![\w])xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}", False),
    ("age-secret-key", r"AGE-SECRET-KEY-1[0-9A-Z]{58}", False),
    (
        "1password-secret-key",
        (
            r"(?<![\w])A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})"
            r"-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}(?![\w])"
        ),
        False,
    ),
    ("1password-service-token", r"(?<![\w])ops_eyJ[A-Za-z0-9+/]{100,}={0,3}", False),
    (
        "aws-bedrock-key",
        (
            r"(?<![\w])(?:ABSK[A-Za-z0-9+/]{100,}={0,2}|"
            r"bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t[A-Za-z0-9+/=]*)"
        ),
        False,
    ),
    ("alibaba-key", r"(?<![\w])LTAI[A-Za-z0-9]{20}(?![\w])", False),
    ("artifactory-key", r"(?<![\w])(?:AKCp[A-Za-z0-9]{69}|cmVmd[A-Za-z0-9]{59})(?![\w])", False),
    ("atlassian-token", r"(?<![\w])ATATT3[A-Za-z0-9_=-]{180,}", False),
    ("infracost-key", r"(?<![\w.])ico-[A-Za-z0-9]{32}(?![\w])", False),
    ("octopus-key", r"(?<![\w])API-(?=[A-Z0-9]*\d)[A-Z0-9]{26}(?![\w])", False),
    ("heroku-key", r"(?<![\w])HRKU-[\w-]{58,60}(?![\w-])", False),
    ("intra42-secret", r"(?<![\w])s-s4t2(?:ud|af)-[a-f0-9]{64}(?![\w])", False),
    ("scalingo-token", r"(?<![\w])tk-us-[\w-]{48}(?![\w])", False),
    ("sourcegraph-token", r"(?<![\w])sgp_(?:(?:[a-fA-F0-9]{16}|local)_)?[a-fA-F0-9]{40}(?![\w])", False),
    ("shippo-token", r"(?<![\w])shippo_(?:live|test)_[a-f0-9]{40}(?![\w])", False),
    ("rubygems-token", r"(?<![\w])rubygems_[a-f0-9]{48}(?![\w])", False),
    ("planetscale-token", r"(?<![\w])pscale_(?:tkn|oauth|pw)_[\w=.-]{32,64}", False),
    ("linear-key", r"(?<![\w])lin_api_[A-Za-z0-9]{40}(?![\w])", False),
    ("flutterwave-key", r"(?<![\w])FLW(?:SECK|PUBK)_TEST-?[a-hA-H0-9]{12,32}(?:-X)?", False),
    ("duffel-token", r"(?<![\w])duffel_(?:test|live)_[\w=-]{43}", False),
    ("easypost-token", r"(?<![\w+/=.])EZ[AT]K[A-Za-z0-9]{54}", False),
    ("clojars-token", r"(?<![\w])CLOJARS_[a-z0-9]{60}(?![\w])", False),
    ("doppler-token", r"(?<![\w])dp\.(?:pt|st|ct|sa|scim|audit)\.[A-Za-z0-9]{40,44}", False),
    ("digitalocean-token", r"(?<![\w])do[opr]_v1_[a-f0-9]{64}(?![\w])", False),
    ("shopify-token", r"(?<![\w])shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}(?![\w])", False),
    ("mailchimp-key", r"(?<![\w])[a-f0-9]{32}-us\d{1,2}(?![\w])", False),
    ("mailgun-key", r"(?<![\w])key-[a-f0-9]{32}(?![\w])", False),
    # Mailgun's older private API keys: key- and 32 lower-case letters and digits
    (
        "mailgun-legacy-key",
        r"(?<![\w-])key-(?=[a-z0-9]*\d)(?=[a-z0-9]*[a-z])[a-z0-9]{32}(?![\w-])",
        False,
    ),
    ("mailgun-private-key", r"(?<![\w-])[a-f0-9]{32}-[a-f0-9]{8}-[a-f0-9]{8}(?![\w-])", False),
    ("telegram-bot-token", r"(?<![\w])\d{8,10}:AA[A-Za-z0-9_-]{33}(?![\w-])", False),
    # the token inside a Bot API URL: api.telegram.org/bot123456789:AA.../sendMessage
    ("telegram-bot-url-token", r"(?<=bot)\d{8,10}:AA[A-Za-z0-9_-]{33}(?![\w-])", False),
    ("azure-ad-client-secret", r"(?<![\w~.-])[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![\w~.-])", False),
    ("cloudflare-origin-ca-key", r"(?<![\w])v1\.0-[a-f0-9]{24}-[a-f0-9]{146}", False),
    ("clickhouse-secret", r"(?<![\w.])4b1d[A-Za-z0-9]{38}(?![\w])", False),
    ("maxmind-license-key", r"(?<![\w.])[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk(?![\w])", False),
    # AI and developer-tool keys people paste into agents
    # Google OAuth access tokens, refresh tokens and client secrets
    ("google-oauth-access-token", r"(?<![\w.])ya29\.[A-Za-z0-9_-]{30,}(?![\w-])", False),
    ("google-oauth-refresh-token", r"(?<![\w/])1//0[A-Za-z0-9_-]{40,}(?![\w-])", False),
    ("google-oauth-client-secret", r"(?<![\w])GOCSPX-[A-Za-z0-9_-]{28}(?![\w-])", False),
    ("terraform-cloud-token", r"(?<![\w])[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}(?![\w-])", False),
    ("pulumi-token", r"(?<![\w-])pul-[a-f0-9]{40}(?![\w])", False),
    ("nuget-api-key", r"(?<![\w])oy2[a-z0-9]{43}(?![\w])", False),
    ("netlify-token", r"(?<![\w])nf[pc]_[A-Za-z0-9]{36,40}(?![\w])", False),
    ("groq-key", r"(?<![\w])gsk_[A-Za-z0-9]{40,}(?![\w])", False),
    ("xai-key", r"(?<![\w-])xai-[A-Za-z0-9]{40,}(?![\w-])", False),
    ("replicate-token", r"(?<![\w])r8_[A-Za-z0-9]{30,}(?![\w])", False),
    ("langsmith-key", r"(?<![\w])lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}(?![\w])", False),
    ("tavily-key", r"(?<![\w-])tvly-(?:dev-|prod-)?[A-Za-z0-9]{24,}(?![\w-])", False),
    ("resend-key", r"(?<![\w])re_[A-Za-z0-9]{8,}_[A-Za-z0-9]{16,}(?![\w])", False),
    ("figma-token", r"(?<![\w])figd_[\w-]{30,}(?![\w-])", False),
    ("postman-key", r"(?<![\w])PMAK-[a-f0-9]{24}-[a-f0-9]{34}(?![\w])", False),
    ("newrelic-key", r"(?<![\w])NR(?:AK|II|JS)-[A-Za-z0-9]{20,42}(?![\w])", False),
    ("dockerhub-token", r"(?<![\w])dckr_pat_[\w-]{24,}(?![\w-])", False),
    ("supabase-secret-key", r"(?<![\w])sb_secret_[\w-]{20,}(?![\w-])", False),
    ("notion-legacy-token", r"(?<![\w])secret_[A-Za-z0-9]{43}(?![\w])", False),
    ("airtable-pat", r"(?<![\w])pat[A-Za-z0-9]{14}\.[a-f0-9]{64}(?![\w])", False),
    ("mapbox-secret-token", r"(?<![\w.])sk\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}", False),
    (
        "discord-bot-token",
        r"(?<![\w.-])[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}(?![\w-])",
        False,
    ),
    ("twilio-key", r"(?<![\w])(?:SK|AC)[0-9a-f]{32}(?![\w])", False),
]
PREFIXED = [(name, re.compile(rx), loose) for name, rx, loose in PREFIXED_RULES]
# Issuers whose literal prefix names a credential on its own: a body after it is judged only for filler
# (xxxx, <token>), so a sequential or EXAMPLE body is still kept out of a memory.
NAMED_BY_PREFIX = frozenset(
    {
        "aws-access-key",
        "github-token",
        "github-fine-grained-pat",
        "gitlab-token",
        "gitlab-runner-registration",
        "stripe-key",
        "stripe-live-key",
        "stripe-webhook-secret",
        "huggingface-token",
        "huggingface-org-token",
        "google-api-key",
        "google-oauth-client-secret",
        "npm-token",
        "pypi-token",
        "databricks-token",
        "notion-token",
        "perplexity-key",
        "sendgrid-key",
        "sendinblue-key",
        "age-secret-key",
        "atlassian-token",
        "heroku-key",
        "sourcegraph-token",
        "shippo-token",
        "rubygems-token",
        "planetscale-token",
        "linear-key",
        "duffel-token",
        "clojars-token",
        "doppler-token",
        "digitalocean-token",
        "shopify-token",
        "pulumi-token",
        "netlify-token",
        "groq-key",
        "xai-key",
        "replicate-token",
        "langsmith-key",
        "tavily-key",
        "figma-token",
        "postman-key",
        "dockerhub-token",
        "supabase-secret-key",
    }
)
LONG_TOKEN = re.compile(r"[A-Za-z0-9_\-+/=.~|%]{20,}")

PEM = re.compile(
    r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----(?P<body>[\s\S]*?)"
    r"(?:(?P<end>-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----)|\Z)"
)
# One line of a PEM body: the line break before it (a real one, or the "\n" of a JSON string; a YAML block
# indents it) or, for the first line and for a body pasted onto one line, spaces; then either a run of
# base64 or an RFC 1421 header (Proc-Type, DEK-Info). The base64 run must end where a line would: at a
# space, a quote, a comma, a brace or a line break, never inside a word ("thanks.").
PEM_LINE = re.compile(
    r"[ \t]*(?P<nl>(?:(?:\r?\n|(?:\\r)?\\n)[ \t]*)+)?"
    r"(?:(?P<b64>[A-Za-z0-9+/=]+)(?=[\s\"'`,}\]]|\\[rn]|$)|(?:Proc-Type|DEK-Info|Comment):[^\n\\]{0,200})"
)

# Credentials inside URLs: scheme://user:password@host
URL_CREDS = re.compile(
    r"(?i)\b[a-z][a-z0-9+.-]{1,15}://(?P<user>[^\s:/@\"'<>]{0,100}):(?P<pw>[^\s/@\"'<>]{1,200})@(?=[\w\[])"
)
# curl -u user:password / --user "user:password"
CURL_USER = re.compile(
    r"(?:^|[\s;|&(])(?:-u|--user)(?:\s+|\s*\\?\s*\n\s*|=)"
    r"(?P<cred>\"[^\"\n]*\"(?::\"[^\"\n]*\")?|'[^'\n]*'|[^\s'\"]+(?:'[^'\n]*')?)"
)
# Authorization: Bearer xyz / Basic xyz / token xyz
AUTH_HEADER = re.compile(
    r"(?i)\b(?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?(?:(?:bearer|basic|token|digest|api-token|apikey|"
    r"sso-key|negotiate|bot)\s+)?(?P<val>[^\s\"',;)]+)"
)
BEARER = re.compile(r"(?<![\w-])[Bb]earer\s+(?P<val>[A-Za-z0-9_~+/.=-]{12,})")
# Bundler per-host credentials (BUNDLE_GEMS__EXAMPLE__COM=user:password)
BUNDLER = re.compile(r"\bBUNDLE_[A-Z0-9_]*__[A-Z]{2,}[\"']?\s*[:=]\s*[\"']?(?P<val>[^\s\"';&]+:[^\s\"';&]+)")
# Kubernetes Secret manifests: base64 values under data:
K8S_KIND = re.compile(r"(?im)^\s*kind:\s*[\"']?secret[\"']?\s*$")
K8S_VALUE = re.compile(
    r"(?m)^[ \t]+[\w.-]+:[ \t]*(?:[|>][-+]?[ \t]*\n[ \t]+)?[\"']?(?P<val>[A-Za-z0-9+/]{12,}={0,2})[\"']?"
    r"[ \t]*$"
)
# vendor-specific key names whose value is a credential although the name holds no "secret" word
VENDOR_ASSIGN = re.compile(
    r"(?i)\b(?:sonar[\w.]*(?:login|token)|sumo[\w.]*access[._-]?id)[\"']?\s*(?::{1,3}=|\?=|=|:)\s*[\"']?"
    r"(?P<val>[A-Za-z0-9_-]{12,})"
)

# key = value assignments whose key names a secret (a value may be long: a base64 client key in a JSON
# kubeconfig, a session token)
PASSWORD_WORDS = {"pass", "pw", "psw", "pwd", "pin", "passcode", "passphrase"}
TOKEN_STEMS = (
    "secret",
    "token",
    "credential",
    "creds",
    "apikey",
    "accesskey",
    "privatekey",
    "authkey",
    "bearer",
    "jwt",
)
KEY_QUALIFIERS = {
    "api",
    "access",
    "secret",
    "private",
    "auth",
    "signing",
    "encryption",
    "master",
    "account",
    "client",
    "app",
    "application",
    "license",
    "session",
    "service",
    "admin",
    "root",
    "consumer",
    "shared",
    "storage",
    "subscription",
    "webhook",
    "sas",
    "ssh",
    "gpg",
    "pgp",
    "encrypt",
    "decrypt",
    "hmac",
    "jwt",
    "secure",
    "user",
    "personal",
    "developer",
    "dev",
    "prod",
    "live",
    "x",
}
NAME_NEG_LAST = {
    "id",
    "ids",
    "name",
    "names",
    "length",
    "len",
    "size",
    "url",
    "uri",
    "urls",
    "endpoint",
    "file",
    "files",
    "path",
    "paths",
    "dir",
    "type",
    "types",
    "audience",
    "version",
    "field",
    "fields",
    "header",
    "headers",
    "param",
    "params",
    "prefix",
    "suffix",
    "format",
    "policy",
    "count",
    "expiry",
    "expires",
    "expiration",
    "ttl",
    "timeout",
    "label",
    "mode",
    "enabled",
    "required",
    "pattern",
    "regex",
    "hint",
    "min",
    "max",
    "message",
    "placeholder",
    "location",
    "store",
    "provider",
    "method",
    "class",
    "manager",
    "service",
    "generator",
    "validator",
    "strength",
    "rules",
    "reset",
    "changed",
    "change",
    "hash",
    "salt",
    "alg",
    "algorithm",
    "scope",
    "scopes",
    "kind",
    "ref",
    "reference",
    "source",
    "env",
    "var",
    "variable",
    "key_id",
    "input",
    "filter",
    "lifetime",
    "issuer",
    "uses",
    "limit",
    "duration",
    "host",
    "server",
    "user",
    "username",
    "owner",
    "usage",
    "date",
    "time",
    "at",
    "tokens",
    "keys",
    "secrets",
    "passwords",
    "attempts",
    "error",
    "errors",
    "valid",
    "invalid",
    "bytes",
    "bits",
    "separator",
    "char",
    "chars",
    "index",
    "template",
    "mapping",
}
NAME_NEG_ANY = {
    "public",
    "pub",
    "csrf",
    "xsrf",
    "publishable",
    "anon",
    "next",
    "page",
    "cursor",
    "authenticity",
}

KEYWORD_PREFILTER = (
    "pass",
    "pwd",
    "secret",
    "token",
    "key",
    "auth",
    "cred",
    "bearer",
    "login",
    "--user",
    "-u ",
    "://",
    "kind:",
    "bundle_",
    "pw",
    "pin",
    "jwt",
    "sonar",
    "sumo",
    "sig=",
    "code=",
    "signature",
    "basic",
    "identified",
    "securestring",
    "cookie",
    "phrase",
    "mnemonic",
    "seed",
    "recovery words",
    "codes",
    " code",
    # the words for a password the stated-secret rules read in other languages (NL_SECRET)
    "kennwort",
    "contrase",
    "senha",
    "wachtwoord",
    "senord",
    "hasło",
    "haslo",
    "mdp",
    "clave",
)
NAME_KEYWORD = re.compile(
    r"(?i)pass|pwd|secret|token|credential|creds|key|auth|bearer|\bpw\b|\bpsw\b|\bpin\b|jwt"
)
ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
ASSIGN_TAIL = re.compile(
    r"(?P<nq>[\"'`]?)[ \t]*(?:\])?[ \t]*(?P<op>:{1,3}=|\?=|\+=|=>|<-|==?|:|,|\s(?=[\"'`]?\S))"
    r"[ \t]*(?:\[[ \t]*)?"
    r"(?:(?P<q>[\"'`])(?P<qval>[^\"'`\n]{1,16384})(?P=q)|(?P<val>[^\s\"'`,;<>)\]}]{1,16384}))"
)
# where a secret is for: "for the bank", "at the cabin", "at mum's house", "on my laptop"
WHERE_FOR = (
    # (and the Portuguese and Polish ones: "senha do banco", "hasło do poczty")
    r"(?:\s+(?:for|of|on|at|in|to|from|with|del|della|di|de|du|des|do|da|dos|das|dla|von|vom|f[üu]r|pour|para|"
    r"per|van|voor|"
    # a German genitive names it with no preposition: "die PIN meiner Bankkarte ist ..."
    r"der|des|meiner|meines|unserer|unseres|deiner|deines|seiner|seines|ihrer|ihres)\s+"
    r"(?:the\s+|my\s+|our\s+|his\s+|her\s+|their\s+|your\s+)?"
    r"[\w'-]+(?:\s+[\w'-]+){0,2}?)?"
)
# A short aside between a secret's name and its colon: "Grandma's PIN, in case: 2019", "PIN (Visa card): 8830",
# "the gate code - for the back gate - is 4471". Words only (no digit, no sentence end); an aside that names
# another field ("password, username: jdoe42", "PIN, expiry: 1227") is refused where it is used
# (ASIDE_NAMES_OTHER).
ASIDE = (
    r"(?P<aside>,[ \t]+[^\W\d_][^\n,:;.!?()\"\d=<>]{0,40}?|[ \t]*\([^\W\d_][^\n()\d:=<>]{0,40}\)|"
    r"[ \t]+[-\u2013\u2014][ \t]+[^\W\d_][^\n,:;.!?()\d\u2013\u2014-]{0,40}?[ \t]+[-\u2013\u2014])"
)
ASIDE_NAMES_OTHER = re.compile(
    r"(?i)\b(?:user(?:\s*name)?|login|e-?mail|mail|id|name|account|acct|number|no|nr|host|server|url|link|port|"
    r"hint|expiry|expires?|expiration|exp|date|time|length|version|policy|rules?|requirements?|strength|format|"
    r"digits?|characters?|chars|e\.?g|i\.?e|example|like|type|see|ask|phone|tel|mobile|room|floor|flat|unit|"
    r"apartment|serial|model|old|previous|former|wrong|default|reset)\b"
)
NL_SECRET = re.compile(
    # the word for a password in German, French, Spanish, Portuguese, Dutch, Swedish and Polish too
    r"(?i)\b(?:password|passcode|passphrase|passwd|pin(?:\s+code)?|pw|api\s+key|secret\s+key|access\s+token|"
    r"passwort|kennwort|mot\s+de\s+passe|mdp|contrase[ñn]a|clave|senha|wachtwoord|l[öo]senord|has[łl]o|"
    r"token|secret|(?:wi-?fi|wpa2?|wpa3|network|wireless|router|licen[cs]e|product|activation|encryption|"
    r"recovery|backup)\s+key|(?:recovery|backup|2fa|mfa|otp)\s+code|"
    # "pass for the wifi", "wifi pass is", "key for the weather API"
    r"pass(?=\s+(?:for|to)\s+(?:the\s+|my\s+|our\s+)?(?:wi-?fi|wlan|wireless|network|router|hotspot)\b)|"
    r"(?:wi-?fi|wlan)\s+(?:pass|code)|key\s+(?:for|to)\s+(?:the\s+|my\s+|our\s+)?(?:[\w-]+\s+){0,2}api)"
    # the French and Spanish name the network after the word: "mot de passe Wi-Fi :", "contraseña wifi:"
    + r"(?:\s+(?:wi-?fi|wlan|du\s+wi-?fi|del\s+wi-?fi))?"
    + WHERE_FOR
    # "is", "=", ":" (a colon also straight after the words for where: "wifi password for the cabin: ...")
    + r"(?:(?:\s+(?:(?:(?:got|has\s+been|was)\s+)?(?:changed|set|reset|updated)\s+to|is\s+now|is|was|=|:|->|to|"
    r"ist|lautet|est|es|è|é|är|jest)|\s*:|'s|" + ASIDE + r"[ \t]*:)"
    # "the password is literally Popcorn77", "the PIN is still 4455"
    r"(?:\s+(?:literally|just|actually|basically|simply|still|now))?\s+"
    # or straight after its name when it is a UUID: "my heroku api key 5f1d7c2e-8a4b-..."
    r"|\s+(?=[0-9A-Fa-f]{8}(?:-[0-9A-Fa-f]{4}){3}-[0-9A-Fa-f]{12}(?![\w-])))"
    r"[\"']?(?P<val>[^\s\"']{4,200})"
)
# a password or PIN named with no link word, its value straight after the name: "the cabin wifi is TroutRiver,
# password trout2291", "login: admin, password hunter22", "iPhone passcode 482913". The value must read as a
# secret (checked in detectors: six characters or more with a digit or a symbol, not a date, time, version or
# measure), so "password reset", "password manager", "PIN number" stay. PIN only in capitals: a pin is a pin.
# Also after the words for what it opens, with no link word: "password for the NAS n4sAdm1n!", "pwd for my laptop
# Tr33house$" (the value must then read as a password, not as a name or a number: checked in detectors).
NL_SECRET_BARE = re.compile(
    r"(?i)\b(?:password|passwort|passcode|passphrase|passwd|pwd?|(?-i:PIN))(?P<where>"
    + WHERE_FOR
    + r")[ \t]+[\"'`]?"
    # a digit or a symbol in it (as detectors require), so a word after the name ("password for the joint
    # account Rosebud#77") is read on from rather than taken and refused
    r"(?=[^\s\"'`]*[\d!@#$%^&*?~+=])(?P<val>[\w!#%&*+?@^~][^\s\"'`]{5,127})"
)
# a bare "key" given about a Wi-Fi network: "wifi is called HomeNet, the key is blue-banana-77", "Network:
# CoffeeShop, key: latte2024", "key for the wifi: Bananas2024". Taken only when NETWORK_WORD stands before it on
# its line or in its "for the ..." phrase ("the key is under the mat" is not one); a WPA key has 8 to 63
# characters.
NL_NETWORK_KEY = re.compile(
    r"(?i)\bkey" + WHERE_FOR + r"(?:\s+(?:is|was|=|:)|\s*[:=])\s*[\"']?(?P<val>[^\s\"']{8,80})"
)
# the same words with no link word: "the wifi is TalkTalk-88, pass Kettle2019", "SSID Cabin, key Bananas2024"
# (the network named before it on its line; the value must read as a secret, as a bare password's does)
NL_NETWORK_BARE = re.compile(r"(?i)\b(?:pass|key|code)[ \t]+[\"'`]?(?P<val>[^\s\"'`]{8,80})")
NETWORK_WORD = re.compile(
    r"(?i)(?<![a-z])(?:wi-?fi|wlan|ssid|network|router|hotspot|wireless|wpa[23]?)(?![a-z])"
)
# a list of one-time codes: "recovery codes: 8d2k-1m3n, 7f4j-2k8l"
NL_CODES = re.compile(
    r"(?i)\b(?:recovery|backup|2fa|mfa|otp|one[- ]time|scratch)\s+codes\b[^:=\n]{0,24}?(?:\s+are|:|=)\s*"
    r"(?P<val>[A-Za-z0-9]{3,}(?:-[A-Za-z0-9]{3,})*(?:\s*[,;]\s*[A-Za-z0-9]{3,}(?:-[A-Za-z0-9]{3,})*)+)"
)
# a phrase of plain words that is itself the secret: a passphrase, a wallet's seed or recovery phrase
NL_PHRASE = re.compile(
    r"(?i)\b(?:pass\s*phrase|seed\s+phrase|seed\s+words|recovery\s+(?:phrase|words)|mnemonic(?:\s+phrase)?|"
    r"backup\s+phrase|wallet\s+seed|seed(?=\s*[:=]))"
    + WHERE_FOR
    + r"\s*(?:\s(?:is|was|are)\s*:?|:|=)\s*[\"']?"
    r"(?P<val>[a-z]+(?:[ -][a-z]+){2,23})"
)
# a password that is itself a phrase of plain words (the xkcd or Diceware way): "my password is correct horse
# battery staple", "wifi password: purple monkey dishwasher lamp". Four to eight words that end the clause; none
# may be a word of a sentence, nor the first one read as a participle or an adverb (checked in detectors), so
# "the password is stored hashed using bcrypt" and "the password is on the fridge" stay.
NL_PASSWORD_PHRASE = re.compile(
    r"(?i)\b(?:password|passwort|kennwort|mot\s+de\s+passe|contrase[ñn]a|senha|wachtwoord)"
    + WHERE_FOR
    + r"(?:\s+(?:is|was|ist|est|es)\b[ \t]*:?|\s*[:=])[ \t]*[\"'\u201c\u2018]?"
    # ended by the sentence's end, or by a word that goes on to another clause ("... lamp and I never change it")
    r"(?P<val>[a-z]+(?:[ -][a-z]+){3,7})"
    r"(?=[\"'\u201d\u2019]{0,2}[ \t]*(?:[.!?,;)\n]|$)|[ \t]+(?:and|but|so|because|which)\b)"
)
NL_USE_AS = re.compile(
    r"(?i)\buse\s+[\"'`]?(?P<val>[^\s\"'`]{6,200}?)[\"'`]?\s+as\s+(?:the|my|our|your)\s+(?:[\w-]+\s+){0,2}"
    r"(?:password|passphrase|passcode|pin|secret|token|api\s+key|key|"
    r"(?:alarm|door|gate|safe|lock|locker|garage|keypad|entry|security|access)\s+code)\b"
)
# a login given as a pair: "the router admin login is admin / hunter2!", "creds: deploy:Tr0ub4dor&3", "the nas
# creds are admin and N4s!2023" (after "and" the value must read as a password, checked in detectors)
NL_LOGIN_PAIR = re.compile(
    r"(?i)\b(?:login|log-in|credentials|creds|user(?:name)?\s+and\s+password)\b"
    + WHERE_FOR
    # or no link word before a pair written with a slash: "login admin/hunter22"
    + r"(?:\s+(?:is|are)\b|\s*[:=]|[ \t]+(?=[\"'`]?[\w.@+-]{1,64}[ \t]*/))\s*"
    r"[\"'`]?(?P<user>[\w.@+-]{1,64})(?:[ \t]*[/:][ \t]*|(?P<and>[ \t]+(?:and|&)[ \t]+))"
    r"(?P<val>[^\s\"'`/][^\s\"'`]{3,127})"
)
# a secret given to an act: 'use passphrase "purple monkey dishwasher"', "log in with password hunter2!"
NL_GIVEN = re.compile(
    r"(?i)\b(?:use|using|enter|type|with|try)\s+(?:the\s+|my\s+|our\s+|your\s+)?"
    r"(?:password|passphrase|pass\s*phrase|passcode|pin(?:\s+code)?|pw)\s+"
    r"(?:[\"'\u201c\u2018](?P<qval>[^\"'\u201d\u2019\n]{4,200})[\"'\u201d\u2019]|(?P<val>[^\s\"']{4,200}))"
)
# a login given as a pair after a label, with no word for login or password: "router: admin / Pa55word!",
# "NAS: root / N4s#2020" (the part after the slash must read as a password: letters, digits and a symbol)
LABELED_LOGIN_PAIR = re.compile(
    r"(?<=[A-Za-z0-9')]):[ \t]+"
    r"[\"'`]?(?P<user>[\w.@+-]{2,64})[ \t]*/[ \t]*[\"'`]?(?P<val>[^\s\"'`/]{8,64})"
)
# an account given as e-mail and password: "Netflix: jane@mail.com / Popcorn77", "login jane@mail.com pw
# Popcorn77"; the password must read as one (a digit or a symbol in it)
EMAIL_PASSWORD_PAIR = re.compile(  # from the '@' on: the local part tells nothing, and '@' is a cheap anchor
    r"(?i)(?<=[\w.+-])@[\w-]{1,63}(?:\.[\w-]{1,63}){1,4}"
    r"(?:[ \t]*[/|][ \t]*|[ \t]+(?:pw|pwd|pass|password|passwort|mdp|contrase[ñn]a)[ \t]*[:=]?[ \t]*)"
    r"[\"'`]?(?P<val>[^\s\"'`/|]{6,64})"
)
# name/value pairs: Kubernetes and Compose env lists, JSON {"name": ..., "value": ...}
NAME_VALUE_PAIR = re.compile(
    r"(?i)[\"']?name[\"']?\s*[:=]\s*[\"']?(?P<name>[\w.-]{2,80})[\"']?\s*[,\n]\s*(?:-\s*)?"
    r"[\"']?value[\"']?\s*[:=]\s*(?:[\"'](?P<qval>[^\"'\n]{1,16384})[\"']|(?P<val>[^\s,}\"']{1,16384}))"
)
REFERENCE_SCHEMES = ("http://", "https://", "file:", "env:", "vault:", "secret:", "arn:", "ref+", "op://")
ENV_NAME = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")
HOSTNAME = re.compile(r"^(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,}$")
# human-readable identifiers: lower-case words and short numbers (jjwt-jackson-0.11.2, my-app_v2)
SLUG = re.compile(r"^(?:[a-z]+|v?\d{1,3})(?:[ ._-](?:[a-z]+|v?\d{1,3}))*$")
TOKEN68 = re.compile(r"^[A-Za-z0-9_~+/.=:@!#*-]+$")
XML_KEY_VALUE = re.compile(r'(?i)\bkey\s*=\s*"(?P<name>[^"<>]{1,80})"\s+value\s*=\s*"(?P<val>[^"<>]{0,300})"')
CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
CODE_REF = re.compile(r"^[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)+(?:\(.*)?$|^[A-Za-z_]\w*\(.*$")
FILEISH = re.compile(
    r"^(?:[~.]?/|[A-Za-z]:\\)|^[\w.-]+/[\w./-]+$|"
    r"^[\w-]+\.(?:pem|key|p12|pfx|json|ya?ml|txt|env|cfg|conf|ini|crt|cer|jks|keystore|xml|properties|toml)$",
    re.IGNORECASE,
)


# Context words. A random-looking string is a secret when the nearest of these words before it on its line
# (or its table row) names a secret or a provider, and not when it names a hash or an identifier.
SECRET_WORD = re.compile(
    r"(?i)(?<![a-z])(?:api[ _-]?keys?|access[ _-]?keys?|secret(?:[ _-]?keys?)?|secrets|tokens?|passwords?|"
    r"passwd|pwd|passphrase|credentials?|creds|auth|bearer|private[ _-]?keys?|client[ _-]?secret|"
    r"signing[ _-]?keys?|pats?|keys?|licen[cs]e[ _-]?keys?)(?![a-z])"
)
HASH_WORD = re.compile(
    r"(?i)(?<![a-z])(?:sha\d*|md5|hash(?:es)?|digest|checksum|sum|commits?|rev(?:ision)?|uuid|guid|ids?|"
    r"fingerprint|etag|nonce|salt|trace|request|build|version|tag|integrity|cid|ref|object|blob|tree|head|"
    r"public|publishable|pub|csrf|xsrf|authenticity)(?![a-z])"
)
PROVIDER_WORD = re.compile(
    r"(?i)(?<![a-z])(?:aws|amazon|github|gitlab|openai|anthropic|claude|hugging ?face|hf|npm|pypi|slack|stripe|"
    r"twilio|sendgrid|google|gcp|firebase|azure|plane|revenuecat|sourcegraph|heroku|vercel|netlify|cloudflare|"
    r"digitalocean|datadog|sentry|mailgun|mailchimp|postmark|pagerduty|linear|notion|airtable|shopify|paypal|"
    r"okta|auth0|supabase|mongodb|redis|docker|dockerhub|jira|atlassian|discord|telegram|dropbox|figma|algolia|"
    r"segment|mixpanel|hubspot|salesforce|snyk|sonar|circleci|bitbucket|replicate|cohere|mistral|groq|"
    r"perplexity|pinecone|openrouter|deepseek|elevenlabs|resend|clerk|posthog|brevo|mapbox|postgres|mysql)"
    r"(?![a-z])"
)
# header cells that name a secret column on their own
SECRET_HEADERS = {
    "key",
    "keys",
    "token",
    "tokens",
    "secret",
    "secrets",
    "password",
    "passwords",
    "pwd",
    "passphrase",
    "credential",
    "credentials",
    "api key",
    "apikey",
    "pat",
    "value",
}
# a candidate for "random-looking string in a secret context"
RANDOM_CAND = re.compile(r"(?<![\w+/~.-])[A-Za-z0-9+/][A-Za-z0-9_+/~.-]{15,511}={0,3}")
UUID_RE = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
HEX_RE = re.compile(r"^[0-9a-fA-F]+$")
MD_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$")
# an AWS secret access key: 40 base64 characters
AWS_SECRET_BARE = re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
# an AWS secret access key named as one (aws_secret_access_key = ..., "AWS secret: ...")
AWS_SECRET_NAMED = re.compile(
    r"(?i)\baws[\s_-]*(?:secret|sk\b)[\w\s\"':=-]{0,30}?(?<![A-Za-z0-9/+])(?P<val>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
)
# HTTP Basic credentials anywhere (the value decodes to user:password)
BASIC = re.compile(r"(?<![\w-])[Bb]asic\s+(?P<val>[A-Za-z0-9+/]{8,}={0,2})(?![\w+/=])")
# signatures and keys in URL query strings: Azure SAS sig=, Logic Apps sig=, Functions code=, S3 presigned
URL_SIG = re.compile(r"(?i)[?&](?:sig|signature|x-amz-signature|code)=(?P<val>[A-Za-z0-9%+/=_-]{16,})")
# passwords given on a command line: mysql -pSECRET, docker login -p SECRET, sshpass -p, redis-cli -a
CLI_PASSWORD = re.compile(
    r"\b(?:(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n|;&]*?\s-p(?P<att>[^\s-]\S*)|"
    r"(?:docker|podman|nerdctl|helm|oras|skopeo)\s+(?:registry\s+)?login\b[^\n|;&]*?\s(?:-p|--password)[\s=]+"
    r"(?P<dl>[^\s-]\S*)|sshpass\s+-p\s*(?P<sp>\S+)|redis-cli\b[^\n|;&]*?\s-a\s+(?P<rc>[^\s-]\S*))"
)
# SQL: CREATE USER ... IDENTIFIED BY 'pw', ALTER ROLE ... WITH PASSWORD 'pw'; PowerShell plain-text secure strings
SQL_PASSWORD = re.compile(
    r"(?i)\b(?:identified\s+by|with\s+(?:encrypted\s+)?password|password)\s+'(?P<val>[^'\n]{4,200})'"
)
PS_SECURE_STRING = re.compile(
    r"(?i)ConvertTo-SecureString\s+(?:-String\s+)?[\"'](?P<val>[^\"'\n]{4,200})[\"']"
)
# <password>...</password>, <apiKey>...</apiKey>
XML_ELEMENT = re.compile(r"<(?P<name>[A-Za-z][\w.:-]{0,60})>(?P<val>[^<>\n]{4,300})</(?P=name)>")
# Cookie / Set-Cookie headers: session and token cookies
COOKIE_LINE = re.compile(r"(?im)^[ \t\"'-]*(?:-H\s*[\"']?)?(?:set-)?cookie\s*:\s*(?P<body>[^\n]+)")
COOKIE_PAIR = re.compile(r"(?P<name>[\w.-]{1,64})=(?P<val>[^;,\s\"']{8,4096})")
# .netrc: machine host login user password secret
NETRC = re.compile(r"\blogin\s+\S+\s+password\s+(?P<val>\S+)")
