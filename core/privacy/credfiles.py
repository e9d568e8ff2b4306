"""Credentials written the way their own files write them: found by the file's layout, not by a key name.

A ``.pgpass`` line, a ``.netrc`` entry, an ``htpasswd`` hash or an Oracle ``user/password@`` descriptor has
no "password =" beside its secret; what tells is the line's shape, a section header or a field that only
appears in one kind of file. Each detector below reads one layout:

* ``.pgpass``: ``host:port:database:user:password`` (``*`` wildcards, ``\\:`` escapes, the password runs
  to the end of the line; inside quotes or backticks in a sentence, to the closing quote);
* ``.netrc`` / ``_netrc``: ``machine HOST`` or ``default`` followed by ``login`` / ``password`` /
  ``account`` tokens in any order, on one line or several, values quoted or not;
* INI files (``.my.cnf``, ``.pypirc``, AWS credentials, ``odbc.ini``...): under a ``[section]`` header a
  password field's value is the whole rest of the line, spaces included;
* credential URLs (``.git-credentials``): ``scheme://user:password@host`` where the password itself holds
  an unescaped ``@``;
* Docker ``config.json``: an ``"auth"`` under ``"auths"`` is base64 of ``user:password``, however short;
* ``.yarnrc`` (v1): ``"//registry/:_authToken" "value"``, key and value separated by a space;
* SSH: PuTTY ``.ppk`` private keys, ``authorized_keys`` lines whose options carry a secret
  (``environment="TOKEN=..."``, ``command="... --password ..."``);
* JDBC / ODBC / ADO.NET: ``jdbc:oracle:thin:user/password@``, ``Pwd={...;...}`` and ``Password=...`` up to
  the next ``;`` (spaces included);
* ``htpasswd`` and ``shadow`` lines: ``user:HASH`` where HASH is a modular-crypt or ``{SHA}`` hash of the
  exact published length.

Look-alikes are refused by structure: a ``host:port`` list has no database and user fields, times and
version lists have no letters where a database and user must be, a checksum list has no ``user:`` before
its digests. Every detector is behind a substring test, so text without the layout costs microseconds.
"""

from __future__ import annotations

import base64
import binascii
import re

from memdeck.core.privacy.detectors import Span, _is_placeholder, _secret_name_class
from memdeck.core.privacy.rules import CODE_REF

# --------------------------------------------------------------------------------------------------
# helpers

_DIGIT = re.compile(r"\d")
_TEMPLATE = re.compile(r"^(?:\$\{.*\}|\$\(.*\)|\$[A-Z_][A-Z0-9_]*|%\(\w+\)s|\{\{.*\}\}|<[^<>]*>|%[A-Z_]+%)$")
_NOT_SET = {
    "password",
    "passwd",
    "secret",
    "token",
    "changeme",
    "change_me",
    "none",
    "null",
    "prompt",
    "ask",
    "xxx",
    "***",
    "...",
    "redacted",
    "hidden",
    "your_password",
    "yourpassword",
    "<password>",
}


def _no_value(v: str) -> bool:
    """A field the file's layout calls a secret, but which holds no secret: empty, a template reference
    (${VAR}, %(name)s, {{ x }}, <password>), a masked or stock word, one repeated character.

    The layout is the evidence here, so a value need not look random: a printf-like '%s' inside a real
    password does not make it a placeholder."""
    v = v.strip()
    if len(v) < 3:
        return True
    low = v.lower()
    return (
        low in _NOT_SET
        or _TEMPLATE.match(v) is not None
        or len(set(low)) <= 2
        or "xxxx" in low
        or "****" in low
        or "\u2026" in v
        or low.startswith(("your_", "your-", "<your"))
    )


# --------------------------------------------------------------------------------------------------
# .pgpass

_PG_FIELD_HOST = r"(?:\*|(?:[A-Za-z0-9_]|\\:)(?:[A-Za-z0-9_.-]|\\:)*|\[[0-9A-Fa-f:.]+\])"
_PG_FIELD_NAME = r"(?:[^:\s\\\"'`]|\\.)*[A-Za-z*](?:[^:\s\\\"'`]|\\.)*"
PGPASS_LINE = re.compile(
    r"(?P<lead>^[ \t]*(?:[>*+-][ \t]+|\d+\.[ \t]+)?|[\"'`])"
    rf"{_PG_FIELD_HOST}:(?:\d{{1,5}}|\*):{_PG_FIELD_NAME}:{_PG_FIELD_NAME}:"
    r"(?P<val>(?:[^\n\\]|\\.)+)",
    re.MULTILINE,
)
# in a sentence that names the file: "add db:5432:app:alice:S3cr3t to your .pgpass" (the value ends at a space)
PGPASS_INLINE = re.compile(
    rf"(?<![\w:.\\-]){_PG_FIELD_HOST}:(?:\d{{1,5}}|\*):{_PG_FIELD_NAME}:{_PG_FIELD_NAME}:"
    r"(?P<val>(?:[^\s\\\"'`]|\\.)+)"
)
_PG_UNIT = re.compile(r"(?i)^[\d.,]+\s*(?:ms|s|m|h|d|%|kb|mb|gb|b)?$")


def _pgpass(text: str, spans: list[Span]) -> None:
    for m in PGPASS_LINE.finditer(text):
        lead = m.group("lead").strip()
        raw = m.group("val")
        if lead in ('"', "'", "`"):
            end = raw.find(lead)
            if end < 0:
                continue  # an opening quote with no close: not one quoted entry
            val = raw[:end]
        else:
            val = raw.rstrip(" \t\r")
            if val.endswith("`") and "`" not in val[:-1]:
                val = val[:-1].rstrip()  # the end of an inline code span
        if len(val) < 4 or _PG_UNIT.match(val) or _no_value(val):
            continue
        start = m.start("val")
        spans.append(Span(start, start + len(val), "SECRET", "pgpass"))
    if "pgpass" in text.lower():
        for m in PGPASS_INLINE.finditer(text):
            val = m.group("val")
            if val[-1] in ".,;)" and len(val) > 4:
                val = val[:-1]  # the sentence's punctuation
            if len(val) >= 4 and not _PG_UNIT.match(val) and not _no_value(val):
                spans.append(Span(m.start("val"), m.start("val") + len(val), "SECRET", "pgpass"))


# --------------------------------------------------------------------------------------------------
# .netrc / _netrc

_NETRC_VALUE = r"(?:\"(?:[^\"\\\n]|\\.)*\"|[^\s\"]+)"
NETRC_ENTRY = re.compile(
    rf"(?<![\w-])(?:machine\s+{_NETRC_VALUE}|default)(?:\s+(?:login|password|account|port)\s+{_NETRC_VALUE})+"
)
_PROSE_BEFORE = re.compile(r"[A-Za-z,]+[ \t]+$")
NETRC_SECRET = re.compile(rf"(?<![\w-])(?:password|account)\s+(?P<val>{_NETRC_VALUE})")


def _netrc(text: str, spans: list[Span]) -> None:
    for entry in NETRC_ENTRY.finditer(text):
        body = entry.group(0)
        if "login" not in body and "password" not in body:
            continue
        # an entry that starts mid-sentence ("a machine learning login page with password reset") is prose
        # unless its password looks like one: quoted, or with a digit, a symbol or a capital
        in_prose = _PROSE_BEFORE.search(text, max(0, entry.start() - 40), entry.start()) is not None
        for m in NETRC_SECRET.finditer(text, entry.start(), entry.end()):
            a, b = m.start("val"), m.end("val")
            if text[a] == '"':
                a, b = a + 1, b - 1
            val = text[a:b].rstrip("`'")
            b = a + len(val)
            if in_prose and text[m.start("val")] != '"' and re.fullmatch(r"[a-z]+", val):
                continue
            if len(val) >= 3 and not _no_value(val):
                spans.append(Span(a, b, "SECRET", "netrc"))


# --------------------------------------------------------------------------------------------------
# INI files: the value of a password field runs to the end of its line, a token's to its end however long

INI_SECTION = re.compile(r"(?m)^[ \t]*\[[^\]\n]{1,80}\][ \t]*\r?$")
_EQUALS = re.compile(r"[ \t]*=")
_INI_WORDS = re.compile(r"pass|pwd|secret|token|key|auth|cred")
INI_FIELD = re.compile(r"(?m)^[ \t]*(?P<name>[A-Za-z_][\w.-]{0,60})[ \t]*[=:][ \t]*(?P<val>[^\n]*)$")


def _ini(text: str, spans: list[Span]) -> None:
    first = INI_SECTION.search(text)
    for m in INI_FIELD.finditer(text):
        name_class = _secret_name_class(m.group("name"))
        if name_class is None:
            continue
        if first is None or m.start() < first.start():
            # no section above: an option file's or a .properties line "name = value" still ends at the
            # line's end, but a name: value line may be prose, and code is not a value
            if name_class != "password" or not _EQUALS.match(text, m.end("name")):
                continue
            raw = m.group("val")
            if any(c in raw for c in "()[]{}") or CODE_REF.match(raw.strip()):
                continue
        val = m.group("val").rstrip(" \t\r")
        a = m.start("val")
        if len(val) >= 2 and val[0] == val[-1] and val[0] in "\"'":
            val, a = val[1:-1], a + 1
        if len(val) < 4 or _no_value(val):
            continue
        if name_class != "password" and (len(val) < 8 or " " in val or not _DIGIT.search(val)):
            continue  # a token, key or session token is one long random run (of any length)
        spans.append(Span(a, a + len(val), "SECRET", f"ini-{name_class}"))


# --------------------------------------------------------------------------------------------------
# "keyword value" configs (.msmtprc, .fetchmailrc, mutt): a password line beside user/host lines,
# and "user NAME password VALUE" pairs

SPACE_PASSWORD = re.compile(
    r"(?m)^[ \t]*(?:password|passwd|pass|passphrase)[ \t]+(?:\"(?P<dq>[^\"\n]+)\"|'(?P<sq>[^'\n]+)'|"
    r"(?P<val>[^\s\"']+))[ \t]*\r?$"
)
SPACE_SIBLING = re.compile(
    r"(?m)^[ \t]*(?:user|username|login|host|account|from|port|auth|machine|tls)[ \t]+\S+[ \t]*\r?$"
)
USER_PASSWORD_PAIR = re.compile(
    r"(?<![\w-])(?:user|username)[ \t]+(?:\"[^\"\n]+\"|'[^'\n]+'|\S+)(?:[ \t]+there)?(?:[ \t]+with)?[ \t]+"
    r"(?:password|pass)[ \t]+(?:\"(?P<dq>[^\"\n]+)\"|'(?P<sq>[^'\n]+)'|(?P<val>[^\s\"']+))"
)


def _keyword_value(text: str, spans: list[Span]) -> None:
    if SPACE_SIBLING.search(text):
        for m in SPACE_PASSWORD.finditer(text):
            g = next(k for k in ("dq", "sq", "val") if m.group(k) is not None)
            if not _no_value(m.group(g)):
                spans.append(Span(m.start(g), m.end(g), "SECRET", "config-password"))
    for m in USER_PASSWORD_PAIR.finditer(text):
        g = next(k for k in ("dq", "sq", "val") if m.group(k) is not None)
        val = m.group(g)
        if g == "val" and not (_DIGIT.search(val) or re.search(r"[^A-Za-z]", val) or val != val.lower()):
            continue  # a bare lower-case word after "password" in prose is not a value
        if not _no_value(val):
            spans.append(Span(m.start(g), m.end(g), "SECRET", "config-password"))


# Wi-Fi: wpa_supplicant network blocks (psk="..."), NetworkManager [wifi-security] psk=...

WIFI_PSK = re.compile(
    r"(?m)^[ \t]*#?[ \t]*(?:psk|wpa_psk|wpa-psk|sae_password|password|leap-password|wep-key\d)[ \t]*=[ \t]*"
    r"(?:\"(?P<dq>[^\"\n]*)\"|(?P<val>[^\n]*?))[ \t]*\r?$"
)


def _wifi(text: str, spans: list[Span]) -> None:
    for m in WIFI_PSK.finditer(text):
        g = "dq" if m.group("dq") is not None else "val"
        val = m.group(g)
        if val and not _no_value(val):
            spans.append(Span(m.start(g), m.start(g) + len(val), "SECRET", "wifi-psk"))


# --------------------------------------------------------------------------------------------------
# credential URLs whose password holds an unescaped '@' (the last '@' before the host ends it)

CRED_URL = re.compile(
    r"(?i)\b[a-z][a-z0-9+.-]{1,15}://[^\s:/@\"'<>]{1,100}:(?P<pw>[^\s/\"'<>]{1,200})@"
    r"(?=[A-Za-z0-9\[][A-Za-z0-9.\-\[\]:]*(?:[/?#\s\"'<>`]|$))"
)


def _cred_urls(text: str, spans: list[Span]) -> None:
    for m in CRED_URL.finditer(text):
        pw = m.group("pw")
        if "@" in pw and not _no_value(pw):
            spans.append(Span(m.start("pw"), m.end("pw"), "SECRET", "url-credentials"))


# --------------------------------------------------------------------------------------------------
# Docker config.json

DOCKER_AUTH = re.compile(r"\"auth\"\s*:\s*\"(?P<val>[A-Za-z0-9+/]{4,}={0,2})\"")


def _docker(text: str, spans: list[Span]) -> None:
    for m in DOCKER_AUTH.finditer(text):
        val = m.group("val")
        try:
            raw = base64.b64decode(val + "=" * (-len(val) % 4), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            continue
        if ":" in raw and raw.isprintable() and raw.split(":", 1)[1]:
            spans.append(Span(m.start("val"), m.end("val"), "SECRET", "docker-auth"))


# --------------------------------------------------------------------------------------------------
# kubeconfig: the credential fields of a user entry, whatever the value's shape (a bootstrap token
# abcdef.0123456789abcdef looks like a dotted name)

KUBE_USER = re.compile(r"(?m)^[ \t]*(?:-[ \t]+)?user:[ \t]*\r?$")
KUBE_FIELD = re.compile(
    r"(?m)^[ \t]+(?:token|password|client-key-data|client-secret|id-token|refresh-token|access-token)"
    r"[ \t]*:[ \t]*[\"']?(?P<val>[^\s\"'#]+)"
)


def _kubeconfig(text: str, spans: list[Span]) -> None:
    first = KUBE_USER.search(text)
    if first is None:
        return
    for m in KUBE_FIELD.finditer(text, first.end()):
        val = m.group("val")
        if not _no_value(val) and not val.startswith(("/", "~/", "./")):
            spans.append(Span(m.start("val"), m.end("val"), "SECRET", "kubeconfig-credential"))


# --------------------------------------------------------------------------------------------------
# passwords as URL query parameters (JDBC, database URLs): the value ends at & ; # or a quote

URL_QUERY_PASSWORD = re.compile(r"(?i)[?&;](?:password|passwd|pwd|pass)=(?P<val>[^&;#\s\"'`<>]+)")


def _url_query_passwords(text: str, spans: list[Span]) -> None:
    for m in URL_QUERY_PASSWORD.finditer(text):
        val = m.group("val")
        if not _no_value(val):
            spans.append(Span(m.start("val"), m.end("val"), "SECRET", "url-query-password"))


# --------------------------------------------------------------------------------------------------
# .yarnrc (v1): "//registry/:_authToken" "value", _auth value

YARNRC = re.compile(
    r"(?m)^[ \t]*[\"']?(?://[^\s\"']*:)?_(?:authToken|auth|password)[\"']?[ \t]+[\"']?(?P<val>[^\s\"']{4,})[\"']?"
)


def _yarnrc(text: str, spans: list[Span]) -> None:
    for m in YARNRC.finditer(text):
        val = m.group("val")
        if not _no_value(val):
            spans.append(Span(m.start("val"), m.end("val"), "SECRET", "yarnrc-token"))


# --------------------------------------------------------------------------------------------------
# SSH: PuTTY private keys, authorized_keys options

PPK_PRIVATE = re.compile(
    r"(?m)^[ \t]*Private-Lines:[ \t]*(?P<n>\d{1,3})[ \t]*\r?\n(?P<body>(?:[ \t]*[A-Za-z0-9+/=]+[ \t]*\r?\n?)+)"
)
PPK_MAC = re.compile(r"(?m)^[ \t]*Private-(?:MAC|Hash):[ \t]*(?P<val>[0-9a-fA-F]{20,})")
_KEY_TYPES = r"(?:ssh-(?:rsa|ed25519|ed448|dss)|ecdsa-sha2-nistp\d+|sk-(?:ssh-ed25519|ecdsa-sha2-nistp256)@openssh\.com)"
_OPT = r"[A-Za-z][\w-]*(?:=\"(?:[^\"\\\n]|\\.)*\")?"
AUTHORIZED_KEY = re.compile(
    rf"(?m)^[ \t]*(?P<opts>{_OPT}(?:,{_OPT})*)[ \t]+{_KEY_TYPES}[ \t]+AAAA[A-Za-z0-9+/=]+"
)
_OPT_ENV = re.compile(r"environment=\"(?P<name>[A-Za-z_]\w*)=(?P<val>(?:[^\"\\\n]|\\.)*)\"")
_OPT_COMMAND = re.compile(r"command=\"(?P<cmd>(?:[^\"\\\n]|\\.)*)\"")
_CMD_SECRET = re.compile(
    r"(?i)(?:^|\s)--?[\w-]*(?:pass|pwd|token|secret|key|auth)[\w-]*(?:=|\s+)(?P<val>[^\s\"'\\]+)"
    r"|(?:^|\s)-p(?P<att>[^\s\"'\\-][^\s\"'\\]*)"
)


def _ssh(text: str, spans: list[Span]) -> None:
    if "Private-Lines" in text:
        for m in PPK_PRIVATE.finditer(text):
            lines = m.group("body").splitlines(keepends=True)[: int(m.group("n"))]
            end = m.start("body") + len("".join(lines).rstrip())
            spans.append(Span(m.start("body"), end, "SECRET", "putty-private-key"))
        for m in PPK_MAC.finditer(text):
            spans.append(Span(m.start("val"), m.end("val"), "SECRET", "putty-private-key"))
    if "AAAA" not in text:
        return
    for line in AUTHORIZED_KEY.finditer(text):
        base, opts = line.start("opts"), line.group("opts")
        for m in _OPT_ENV.finditer(opts):
            val = m.group("val")
            if (
                len(val) >= 4
                and not _no_value(val)
                and (_secret_name_class(m.group("name")) is not None or _randomish(val))
            ):
                spans.append(
                    Span(base + m.start("val"), base + m.end("val"), "SECRET", "authorized-keys-option")
                )
        for m in _OPT_COMMAND.finditer(opts):
            cbase = base + m.start("cmd")
            for c in _CMD_SECRET.finditer(m.group("cmd")):
                g = "val" if c.group("val") is not None else "att"
                val = c.group(g)
                if len(val) >= 4 and not _no_value(val) and not val.startswith(("/", "$")):
                    spans.append(
                        Span(cbase + c.start(g), cbase + c.end(g), "SECRET", "authorized-keys-option")
                    )


def _randomish(v: str) -> bool:
    return len(v) >= 12 and bool(re.search(r"\d", v)) and bool(re.search(r"[A-Za-z]", v)) and " " not in v


# --------------------------------------------------------------------------------------------------
# JDBC / ODBC / ADO.NET connection strings

ORACLE_THIN = re.compile(
    r"(?i)jdbc:oracle:(?:thin|oci8?):(?P<user>[\w$#.-]{1,64})/(?P<val>[^\s@/\"']{1,128})@"
)
CONN_PASSWORD = re.compile(
    r"(?i)(?:^|[;\s\"'{])(?:pwd|password|passwd|database\s+password|jet\s+oledb:database\s+password)[ \t]*=[ \t]*"
    r"(?:\{(?P<brace>(?:[^}\n]|\}\})*)\}|\"(?P<dq>[^\"\n]*)\"|'(?P<sq>[^'\n]*)'|(?P<val>[^;\n\"'`]+))"
)


def _connection_strings(text: str, low: str, spans: list[Span]) -> None:
    if "jdbc:oracle" in low:
        for m in ORACLE_THIN.finditer(text):
            val = m.group("val")
            if len(val) >= 3 and not _no_value(val):
                spans.append(Span(m.start("val"), m.end("val"), "SECRET", "jdbc-oracle"))
    if ";" not in text:
        return
    for m in CONN_PASSWORD.finditer(text):
        g = next(k for k in ("brace", "dq", "sq", "val") if m.group(k) is not None)
        val = m.group(g)
        a = m.start(g)
        if g == "val":
            val = val.rstrip(" \t\r")
        if (
            ";" not in text[m.end(g) : m.end(g) + 2]
            and ";" not in text[max(0, m.start() - 80) : m.start() + 1]
        ):
            continue  # not a key=value;key=value string
        if len(val) < 3 or _no_value(val) or val.startswith(("${", "%")):
            continue
        spans.append(Span(a, a + len(val), "SECRET", "connection-string-password"))


# --------------------------------------------------------------------------------------------------
# htpasswd / shadow hashes

CRYPT_HASH = re.compile(
    r"(?P<val>\$2[abxy]?\$\d{2}\$[./A-Za-z0-9]{53}"
    r"|\$(?:1|apr1)\$[./A-Za-z0-9]{0,8}\$[./A-Za-z0-9]{22}"
    r"|\$[56]\$(?:rounds=\d{1,9}\$)?[./A-Za-z0-9]{1,16}\$[./A-Za-z0-9]{43}(?:[./A-Za-z0-9]{43})?"
    r"|\$(?:y|gy|7)\$[./A-Za-z0-9]{1,}\$[./A-Za-z0-9]{1,}\$[./A-Za-z0-9]{20,}"
    r"|\$argon2(?:id|i|d)\$v=\d+\$m=\d+,t=\d+,p=\d+\$[A-Za-z0-9+/]{8,}\$[A-Za-z0-9+/]{16,}"
    r"|\{SSHA\}[A-Za-z0-9+/]{30,}={0,2}|\{SHA\}[A-Za-z0-9+/]{27}="
    r"|\$pbkdf2-sha(?:1|256|512)\$\d+\$[./A-Za-z0-9+]{8,}\$[./A-Za-z0-9+]{16,})"
    r"(?![./A-Za-z0-9$])"
)
HTPASSWD_DES = re.compile(r"(?m)^[ \t]*[\w.@-]{1,64}:(?P<val>[./A-Za-z0-9]{13})[ \t]*\r?$")


def _hashes(text: str, low: str, spans: list[Span]) -> None:
    if "$" in text or "{SHA}" in text or "{SSHA}" in text:
        for m in CRYPT_HASH.finditer(text):
            spans.append(Span(m.start("val"), m.end("val"), "SECRET", "password-hash"))
    if "htpasswd" in low:
        for m in HTPASSWD_DES.finditer(text):
            val = m.group("val")
            if re.search(r"\d", val) and re.search(r"[A-Za-z]", val) and not _is_placeholder(val):
                spans.append(Span(m.start("val"), m.end("val"), "SECRET", "password-hash"))


# --------------------------------------------------------------------------------------------------
# files of user:secret lines, named in the text (rsyncd.secrets, .passwd-s3fs, a plain-text .htpasswd),
# and pppd's chap-secrets / pap-secrets (client server secret addresses)

SECRETS_FILE_NAME = re.compile(r"(?i)rsyncd?\.secrets|passwd-s3fs|htpasswd|(?:chap|pap)-secrets")
COLON_LINE = re.compile(
    r"(?m)^[ \t]*(?:[>*+-][ \t]+)?[\w.@-]{1,128}:(?P<val>[^\s:`\"']{3,})[ \t]*`?[ \t]*\r?$"
)
PPP_LINE = re.compile(
    r"(?m)^[ \t]*(?:\"[^\"\n]+\"|[\w.@*-]+)[ \t]+(?:\"[^\"\n]*\"|[\w.@*-]+)[ \t]+"
    r"(?:\"(?P<dq>[^\"\n]+)\"|(?P<val>[^\s#\"]+))(?:[ \t]+(?:\"[^\"\n]*\"|[\w.:/*-]+))?[ \t]*\r?$"
)
_PPP_NAME = re.compile(r"(?i)(?:chap|pap)-secrets")


def _secrets_files(text: str, spans: list[Span]) -> None:
    named = SECRETS_FILE_NAME.search(text)
    if named is None:
        return
    for m in COLON_LINE.finditer(text):
        val = m.group("val")
        if not _no_value(val) and not val.isdigit():
            spans.append(Span(m.start("val"), m.end("val"), "SECRET", "secrets-file"))
    if _PPP_NAME.search(text):
        for m in PPP_LINE.finditer(text):
            line = m.group(0)
            if line.lstrip().startswith("#") or not ("*" in line or '"' in line):
                continue  # a comment, or words: an entry quotes its names or has a '*' wildcard
            g = "dq" if m.group("dq") is not None else "val"
            if not _no_value(m.group(g)):
                spans.append(Span(m.start(g), m.end(g), "SECRET", "secrets-file"))


# --------------------------------------------------------------------------------------------------


def find_credential_files(text: str, spans: list[Span]) -> None:
    """Append a Span for every secret that a credentials file's layout gives away."""
    colons = text.count(":")
    if colons >= 4:
        _pgpass(text, spans)
    low = text.lower()
    if "machine" in low or "default" in low:
        _netrc(text, spans)
    if ("=" in text or ("[" in text and "\n" in text)) and _INI_WORDS.search(low):
        _ini(text, spans)
    if ("pass" in low or "pwd" in low) and (" " in text or "\t" in text) and ("user" in low or "\n" in text):
        _keyword_value(text, spans)
    if ("ssid" in low or "wifi-security" in low or "network={" in low) and ("psk" in low or "pass" in low):
        _wifi(text, spans)
    if "://" in text and text.count("@") >= 2:
        _cred_urls(text, spans)
    if "user:" in text:
        _kubeconfig(text, spans)
    if ("://" in text or "jdbc:" in low) and "=" in text:
        _url_query_passwords(text, spans)
    if '"auth"' in text:
        _docker(text, spans)
    if "_auth" in text or "_password" in text:
        _yarnrc(text, spans)
    if "Private-Lines" in text or "AAAA" in text:
        _ssh(text, spans)
    if "jdbc:oracle" in low or "pwd" in low or "password" in low or "passwd" in low:
        _connection_strings(text, low, spans)
    if "secrets" in low or "s3fs" in low or "htpasswd" in low:
        _secrets_files(text, spans)
    if "$" in text or "{S" in text or "htpasswd" in low:
        _hashes(text, low, spans)
