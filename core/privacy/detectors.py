"""Secret detection, in three layers (rule tables in :mod:`.rules`):

* pem: private-key blocks (PEM, JSON with escaped newlines, YAML block scalars), found first and blanked;
* prefix: tokens whose own format names the issuer (AKIA..., ghp_..., sk-..., xoxb-..., AIza..., JWTs);
* context: values that something around them calls a secret - a key name (``password = ...``, ``"api_key":``,
  ``--token ...``, ``export X_SECRET=...``), an HTTP header, URL userinfo or a signature parameter, a
  connection string, a Markdown/CSV column or row, a sentence ("the staging key is ..."). Without a name,
  a value must also look random; hex needs its secret word right next to it, since hashes are hex too.

Each layer is behind a cheap test (a long token, a keyword, a '|'), so plain sentences cost microseconds.
"""

from __future__ import annotations

import base64
import binascii
import itertools
import math
import re
from dataclasses import dataclass

from memdeck.core.privacy.rules import (
    ASIDE_NAMES_OTHER,
    ASSIGN_TAIL,
    AUTH_HEADER,
    AWS_SECRET_BARE,
    AWS_SECRET_NAMED,
    BASIC,
    BEARER,
    BUNDLER,
    CAMEL,
    CLI_PASSWORD,
    CODE_REF,
    COOKIE_LINE,
    COOKIE_PAIR,
    CURL_USER,
    EMAIL_PASSWORD_PAIR,
    ENV_NAME,
    FILEISH,
    HASH_WORD,
    HEX_RE,
    HOSTNAME,
    ID_CHARS,
    K8S_KIND,
    K8S_VALUE,
    KEY_QUALIFIERS,
    KEYWORD_PREFILTER,
    LABELED_LOGIN_PAIR,
    LONG_TOKEN,
    MD_SEPARATOR,
    NAME_KEYWORD,
    NAME_NEG_ANY,
    NAME_NEG_LAST,
    NAME_VALUE_PAIR,
    NAMED_BY_PREFIX,
    NETRC,
    NETWORK_WORD,
    NL_CODES,
    NL_GIVEN,
    NL_LOGIN_PAIR,
    NL_NETWORK_BARE,
    NL_NETWORK_KEY,
    NL_PASSWORD_PHRASE,
    NL_PHRASE,
    NL_SECRET,
    NL_SECRET_BARE,
    NL_USE_AS,
    PASSWORD_WORDS,
    PEM,
    PEM_LINE,
    PREFIXED,
    PROVIDER_WORD,
    PS_SECURE_STRING,
    RANDOM_CAND,
    REFERENCE_SCHEMES,
    SECRET_HEADERS,
    SECRET_WORD,
    SLUG,
    SQL_PASSWORD,
    TOKEN68,
    TOKEN_STEMS,
    URL_CREDS,
    URL_SIG,
    UUID_RE,
    VENDOR_ASSIGN,
    XML_ELEMENT,
    XML_KEY_VALUE,
)


@dataclass(frozen=True, slots=True)
class Span:
    """A detection: [start, end) in the text, its kind (EMAIL, SECRET, ...) and the rule that found it."""

    start: int
    end: int
    kind: str
    rule: str


# --------------------------------------------------------------------------------------------------
# helpers

_DIGIT = re.compile(r"\d")


def _entropy(s: str) -> float:
    if not s:
        return 0.0
    counts: dict[str, int] = {}
    for ch in s:
        counts[ch] = counts.get(ch, 0) + 1
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _longest_sequence(s: str) -> int:
    """Longest run of consecutive ascending or descending characters (abcd, 1234, 9012 wraps)."""
    best = run_up = run_down = 1
    low = s.lower()
    for a, b in itertools.pairwise(low):
        if "0" <= a <= "9" and "0" <= b <= "9":
            up = (int(b) - int(a)) % 10 == 1
            down = (int(a) - int(b)) % 10 == 1
        else:
            up = ord(b) - ord(a) == 1
            down = ord(a) - ord(b) == 1
        run_up = run_up + 1 if up else 1
        run_down = run_down + 1 if down else 1
        best = max(best, run_up, run_down)
    return best


def _repeat_fraction(s: str) -> float:
    """Share of characters that sit in runs of 4 or more identical characters."""
    if not s:
        return 0.0
    total = 0
    i = 0
    n = len(s)
    while i < n:
        j = i
        while j < n and s[j] == s[i]:
            j += 1
        if j - i >= 4:
            total += j - i
        i = j
    return total / n


_PLACEHOLDER_WORDS = (
    "xxxx",
    "****",
    "...",
    "####",
    "\u2026",
    "example",
    "placeholder",
    "redacted",
    "changeme",
    "change_me",
    "your_",
    "your-",
    "yourtoken",
    "yourkey",
    "yourpassword",
    "your token",
    "your key",
    "insert",
    "dummy",
    "sample",
    "here>",
    "_here",
    "-here",
    "here_",
    "todo",
    "fixme",
    "replace",
    "<",
    ">",
    "${",
    "{{",
    "}}",
    "$(",
    "\\(",
)
_PERCENT_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")  # %2B: URL encoding, not a printf directive
_FORMAT_DIRECTIVE = re.compile(r"%[sdrx](?![A-Za-z0-9])|%\(\w+\)[sd]")
_PLACEHOLDER_EXACT = {
    "password",
    "passwd",
    "pass",
    "pwd",
    "secret",
    "token",
    "apikey",
    "api_key",
    "key",
    "test",
    "testing",
    "null",
    "none",
    "nil",
    "true",
    "false",
    "undefined",
    "empty",
    "string",
    "required",
    "optional",
    "username",
    "user",
    "admin",
    "root",
    "guest",
    "default",
    "hidden",
    "mypassword",
    "yourpassword",
    "secret123",
    "password123",
    "foobar",
    "foo",
    "bar",
    "baz",
    "abc",
    "abc123",
    "123456",
    "qwerty",
    "value",
    "env",
    "auto",
    "n/a",
    "na",
    "tbd",
    "unset",
    "disabled",
    "enabled",
    "mysecret",
    "mytoken",
}


def _is_placeholder(value: str, *, loose: bool = False) -> bool:
    """True for values that are obviously not real secrets: xxxx, ${VAR}, <token>, 000000, abcdef..."""
    v = value.strip()
    if not v:
        return True
    low = v.lower()
    if low in _PLACEHOLDER_EXACT:
        return True
    # a short word inside a long random token is chance (...WTodo7...), not a placeholder
    long_value = len(v) >= 32
    if any(w in low and not (long_value and w.isalpha() and len(w) < 6) for w in _PLACEHOLDER_WORDS):
        return True
    if "%" in v and _FORMAT_DIRECTIVE.search(v):
        return True
    if (
        v[0] in "$["
        or (v[0] == "%" and not _PERCENT_ESCAPE.match(v))
        or (v[0] == "{" and not _DIGIT.search(v))
    ):
        return True
    if len(set(low)) <= 2:
        return True
    if loose:
        return _repeat_fraction(v) > 0.8
    return _repeat_fraction(v) > 0.5 or _longest_sequence(v) >= 12 or (len(v) >= 16 and _entropy(v) < 2.6)


_FILLER_WORDS = (
    "xxxx",
    "****",
    "####",
    "...",
    "\u2026",
    "<",
    ">",
    "your",
    "placeholder",
    "redacted",
    "changeme",
)


def _is_filler(value: str) -> bool:
    """True for a value that only fills a slot (xxxx, <token>, ${VAR}, your_key, a character or a short
    group repeated).
    Used where the shape alone names a credential (an issuer's prefix): a body that runs abc..xyz, or the
    word EXAMPLE, is then still a credential's shape, and is kept out of a memory like any other."""
    v = value.strip()
    low = v.lower()
    if not v or low in _PLACEHOLDER_EXACT or v[0] in "$[{%":
        return True
    if any(w in low for w in _FILLER_WORDS) or len(set(low)) <= 2:
        return True
    return _repeat_fraction(v) > 0.5 or (len(v) >= 16 and _entropy(v) < 2.6)  # 0000..., 123123123...


def _name_words(name: str) -> list[str]:
    words: list[str] = []
    for part in re.split(r"[^A-Za-z0-9]+", name):
        if not part:
            continue
        words.extend(w.lower() for w in CAMEL.findall(part))
    return words


def _secret_name_class(name: str) -> str | None:
    """'password' / 'token' when an identifier names a secret, else None."""
    words = _name_words(name)
    if not words:
        return None
    if words[-1] in NAME_NEG_LAST or any(w in NAME_NEG_ANY for w in words):
        return None
    joined = "".join(words)
    for w in words:
        if "passw" in w or "pwd" in w or w in PASSWORD_WORDS:
            return "password"
    for stem in TOKEN_STEMS:
        if stem in joined:
            if stem == "token" and any(w.startswith("tokeniz") for w in words):
                return None
            return "token"
    for a, b in itertools.pairwise(words):
        if b == "key" and a in KEY_QUALIFIERS:
            return "token"
    if words[-1] == "key" and len(words) > 1 and ENV_NAME.match(name):
        return "token"  # SERVICE_KEY style environment variables
    if any(w in ("auth", "authentication", "cred", "sas") for w in words):
        return "token"
    return None


def _value_is_secretish(value: str, name_class: str, quoted: bool) -> bool:
    v = value.strip()
    if name_class == "password":
        if len(v) < 6:
            return False
    elif len(v) < 10:
        return False
    if _is_placeholder(v):
        return False
    if v.lower().startswith(REFERENCE_SCHEMES):
        return False
    if "@" in v and "." in v.split("@")[-1] and " " not in v:  # e-mail addresses are handled as EMAIL
        return False
    if (FILEISH.search(v) and not (_random_with_slashes(v) or _base64_blob(v))) or HOSTNAME.match(v):
        return False
    if v.startswith(("ENC[", "enc:", "sops:")):  # already encrypted (SOPS and friends)
        return False
    if _KEY_ALGORITHM.match(v):  # PuTTY-User-Key-File-3: ssh-ed25519 names the key's type
        return False
    if not quoted:
        if any(c in v for c in "[({"):
            return False
        if CODE_REF.match(v) or _CMDLET.match(v):
            return False
        if re.fullmatch(r"[A-Za-z_]+", v):  # a bare identifier is a variable, not a value
            return False
    return not (name_class != "password" and (v.isdigit() or any(c.isspace() for c in v) or SLUG.match(v)))


def find_secrets(text: str, spans: list[Span]) -> None:
    """Append a Span for every secret in text: private keys, issuer-prefixed tokens, then secrets named by
    their context."""
    text = _private_keys(text, spans)
    longs = _prefixed_tokens(text, spans)
    _shaped_contexts(text, spans, longs)
    low = text.lower()
    if "@" in text:
        _email_password_pairs(text, spans)
    if "/" in text and ": " in text:
        _labeled_login_pairs(text, spans)
    if _KEYWORD_RE.search(low) is None:
        return
    _named_contexts(text, low, spans)
    _assignments(text, low, spans)
    _stated_secrets(text, spans)
    if ("key" in low or "pass" in low or "code" in low) and NETWORK_WORD.search(text):
        _network_keys(text, spans)


def _email_password_pairs(text: str, spans: list[Span]) -> None:
    """An account written as e-mail and password (EMAIL_PASSWORD_PAIR): the part after the address is a
    password when it has letters and digits and is no address itself ("jane@mail.com / bob@mail.com",
    "jane@mail.com / Marketing" stay)."""
    for m in EMAIL_PASSWORD_PAIR.finditer(text):
        val = _sentence_end_stripped(m.group("val"))
        if (
            len(val) >= 6
            and _DIGIT.search(val)
            and any(c.isalpha() for c in val)
            and "@" not in val
            and not _is_placeholder(val)
        ):
            spans.append(Span(m.start("val"), m.start("val") + len(val), "SECRET", "email-password-pair"))


def _labeled_login_pairs(text: str, spans: list[Span]) -> None:
    """A user and a password after a label (LABELED_LOGIN_PAIR): the part after the slash is taken when it
    reads as a password (letters, digits and a symbol; not a path, a version, an address or a URL) and the
    user is no number ("ratio: 3 / 4", "router: TP-Link / Archer C7", "Sizes: S / M" stay)."""
    for m in LABELED_LOGIN_PAIR.finditer(text):
        val = _sentence_end_stripped(m.group("val"))
        if m.group("user").replace(".", "").isdigit() or _EMAILISH.search(val):
            continue
        if _password_shaped(val):
            spans.append(Span(m.start("val"), m.start("val") + len(val), "SECRET", "labeled-login-pair"))


def _network_keys(text: str, spans: list[Span]) -> None:
    """A bare "key" about a Wi-Fi network (NL_NETWORK_KEY): the network named before it on its line (within
    100 characters) or in its own "for the wifi" phrase, and a value that reads as a secret, 8 to 63
    characters as WPA keys are; "pass", "key" or "code" with no link word (NL_NETWORK_BARE) after the network
    is named on the line."""
    for m in NL_NETWORK_KEY.finditer(text):
        line_start = text.rfind("\n", 0, m.start()) + 1
        if not NETWORK_WORD.search(text, max(line_start, m.start() - 100), m.start("val")):
            continue
        val = _sentence_end_stripped(m.group("val"))
        if not 8 <= len(val) <= 63 or not _SECRET_SHAPED.search(val) or _is_placeholder(val):
            continue
        if _EMAILISH.search(val) or "://" in val or any(c in val for c in "([{<"):
            continue
        spans.append(Span(m.start("val"), m.start("val") + len(val), "SECRET", "network-key"))
    for m in NL_NETWORK_BARE.finditer(text):
        # no link word: only on a line that names the network first, and a value that reads as a password
        line_start = text.rfind("\n", 0, m.start()) + 1
        if not NETWORK_WORD.search(text, max(line_start, m.start() - 100), m.start()):
            continue
        val = _sentence_end_stripped(m.group("val"))
        if 8 <= len(val) <= 63 and _bare_secret_ok(val) and not _EMAILISH.search(val):
            spans.append(Span(m.start("val"), m.start("val") + len(val), "SECRET", "network-key-bare"))


def _private_keys(text: str, spans: list[Span]) -> str:
    """PEM blocks (also JSON-escaped and YAML-indented), returned blanked out (same length, so positions
    hold): their base64 lines would otherwise be read token by token by every rule below."""
    if "-----BEGIN" not in text:
        return text
    for m in PEM.finditer(text):
        body = re.sub(r"\\n|\s", "", m.group("body"))
        if len(re.findall(r"[A-Za-z0-9+/=]", body)) >= 40 or _short_key_material(text, m):
            spans.append(Span(m.start(), m.end(), "SECRET", "private-key"))
            text = text[: m.start()] + " " * (m.end() - m.start()) + text[m.end() :]
    return text


_PEM_GAP = re.compile(r"(?:\s|\\r|\\n)*")  # what may stand between the last base64 line and END


def _pem_lines(text: str, pos: int) -> tuple[str, int]:
    """The base64 lines of a PEM body starting at pos, joined, and where they end. A line after a line break
    always belongs; a piece after spaces only continues a body pasted onto one line, whose lines are full
    (60 and more characters), or is the first piece after the BEGIN line."""
    parts: list[str] = []
    prev = -1  # length of the previous base64 line; -1 before the first
    while True:
        m = PEM_LINE.match(text, pos)
        if m is None or m.end() == pos:
            break
        b64 = m.group("b64")
        if m.group("nl") is None and prev >= 0 and prev < 60:
            break
        if b64 is not None:
            parts.append(b64)
            prev = len(b64)
        pos = m.end()
    return "".join(parts), pos


def _short_key_material(text: str, m: re.Match[str]) -> bool:
    """A private-key block too short for the 40-character rule (a test key, a key cut short when pasted):
    it is one when its body is base64 that reads as key material, whatever its length: lines of base64
    only (a header such as DEK-Info aside), with two of upper case, lower case and digits or a '+' or '/'.
    A body of plain words ("anything", "...", "<your key here>") or no body at all holds no key and is left
    alone. Without an END line the block runs to the end of the text, as a long one always did."""
    body, end = _pem_lines(text, m.start("body"))
    if not body:
        return False
    if m.group("end") is not None and not _PEM_GAP.fullmatch(text, end, m.start("end")):
        return False  # more than base64 lines between BEGIN and END: prose, an elision ("MII...")
    classes = any(c.isupper() for c in body) + any(c.islower() for c in body) + any(c.isdigit() for c in body)
    return (classes >= 2 or "+" in body or "/" in body) and not _is_filler(body)


def _prefixed_tokens(text: str, spans: list[Span]) -> list[re.Match[str]]:
    """Tokens with an issuer prefix, looked for only around long tokens (which it returns)."""
    seen: set[tuple[str, int, int]] = set()
    n = len(text)
    aws_ids = False
    longs = list(LONG_TOKEN.finditer(text))
    for lm in longs:
        lo = max(0, lm.start() - 24)
        hi = lm.end()
        for name, rx, loose in PREFIXED:
            # a match starts near the long token but may run past it (a webhook URL holds '@')
            for m in rx.finditer(text, lo, min(n, hi + 256)):
                if m.start() >= hi:
                    break
                key = (name, m.start(), m.end())
                if key in seen:
                    continue
                seen.add(key)
                value = m.group(0)
                if name in ("jwt", "mailchimp-key", "slack-webhook", "teams-webhook", "discord-webhook"):
                    ok = not _is_placeholder(value, loose=True) or name == "jwt"
                elif name in ("sk-key", "revenuecat-key", "slack-any-token"):
                    # broad shapes: the part after the prefix must also look random (not sk-learn-...)
                    rand = _BROAD_PREFIX.sub("", value)
                    ok = _looks_random(rand, hex_ok=True) and not _is_placeholder(rand, loose=loose)
                elif name in NAMED_BY_PREFIX:
                    # an issuer's prefix (ghp_, npm_, AKIA ...) names a credential on its own: only a filler
                    # (xxxx, <token>) makes it a placeholder, not a body that runs abc..xyz or says EXAMPLE
                    ok = not _is_filler(_strip_prefix(value))
                else:
                    ok = not _is_placeholder(_strip_prefix(value), loose=loose)
                if ok:
                    spans.append(Span(m.start(), m.end(), "SECRET", name))
                    aws_ids = aws_ids or name == "aws-access-key"
    # the secret access key pasted beside its key id ("AKIA... / wJalr...", a credentials CSV row) or after
    # its name: its 40 characters are the credential's shape, EXAMPLE or not
    found = [(m.start(), m.end()) for m in AWS_SECRET_BARE.finditer(text)] if aws_ids else []
    found += [m.span("val") for m in AWS_SECRET_NAMED.finditer(text)]
    for start, end in dict.fromkeys(found):
        v = text[start:end]
        if _looks_random(v, hex_ok=False) and not _is_filler(v):
            spans.append(Span(start, end, "SECRET", "aws-secret-key"))
    return longs


def _shaped_contexts(text: str, spans: list[Span], longs: list[re.Match[str]]) -> None:
    """Contexts recognised by their shape, with no keyword needed: tables, .pgpass lines, random strings
    near a telling word, passwords on command lines."""
    if text.count("|") >= 2 or ("," in text and "\n" in text):
        _table_cells(text, spans)
    if longs or _RUN16.search(text):
        _random_near_words(text, spans)
    if "-p" in text or "-a " in text or "--password" in text:
        for m in CLI_PASSWORD.finditer(text):
            g = next(k for k in ("att", "dl", "sp", "rc") if m.group(k) is not None)
            val = m.group(g).strip("\"'")
            if len(val) >= 4 and not _is_placeholder(val, loose=True) and val[0] not in "$<":
                a = m.start(g) + m.group(g).index(val)
                spans.append(Span(a, a + len(val), "SECRET", "cli-password"))


def _named_contexts(text: str, low: str, spans: list[Span]) -> None:
    """Credentials in URLs, curl -u, HTTP headers and cookies, SQL, PowerShell, signatures, .netrc, Bundler,
    Kubernetes Secret manifests."""
    if "://" in text and "@" in text:
        for m in URL_CREDS.finditer(text):
            pw = m.group("pw")
            if not _is_placeholder(pw, loose=True) and len(pw) >= 3:
                spans.append(Span(m.start("pw"), m.end("pw"), "SECRET", "url-credentials"))
    if "-u" in text or "--user" in text:
        for m in CURL_USER.finditer(text):
            span = _curl_secret_span(m)
            if span:
                spans.append(Span(span[0], span[1], "SECRET", "curl-user"))
    if "auth" in low:
        for m in AUTH_HEADER.finditer(text):
            val = m.group("val")
            if len(val) >= 8 and TOKEN68.match(val) and not _is_placeholder(val, loose=True):
                spans.append(Span(m.start("val"), m.end("val"), "SECRET", "authorization-header"))
    if "earer" in text:
        for m in BEARER.finditer(text):
            if not _is_placeholder(m.group("val"), loose=True):
                spans.append(Span(m.start("val"), m.end("val"), "SECRET", "bearer-token"))
    if "BUNDLE_" in text:
        for m in BUNDLER.finditer(text):
            if not _is_placeholder(m.group("val"), loose=True):
                spans.append(Span(m.start("val"), m.end("val"), "SECRET", "bundler-credentials"))
    if "kind" in low and K8S_KIND.search(text):
        for m in K8S_VALUE.finditer(text):
            val = m.group("val")
            if re.search(r"[\d+=]", val) and not _is_placeholder(val, loose=True):
                spans.append(Span(m.start("val"), m.end("val"), "SECRET", "k8s-secret-data"))
    if "asic" in text:
        for m in BASIC.finditer(text):
            if _is_basic_credentials(m.group("val")):
                spans.append(Span(m.start("val"), m.end("val"), "SECRET", "basic-credentials"))
    if "=" in text and ("sig" in low or "code=" in low or "signature" in low):
        for m in URL_SIG.finditer(text):
            val = m.group("val")
            # the parameter name is the evidence: a signature is random by construction
            if not _is_placeholder(val, loose=True) and _entropy(val) >= 3.0:
                spans.append(Span(m.start("val"), m.end("val"), "SECRET", "url-signature"))
    if "'" in text and ("identified" in low or "password" in low):
        for m in SQL_PASSWORD.finditer(text):
            if not _is_placeholder(m.group("val"), loose=True):
                spans.append(Span(m.start("val"), m.end("val"), "SECRET", "sql-password"))
    if "securestring" in low:
        for m in PS_SECURE_STRING.finditer(text):
            if not _is_placeholder(m.group("val"), loose=True):
                spans.append(Span(m.start("val"), m.end("val"), "SECRET", "securestring"))
    if "</" in text:
        for m in XML_ELEMENT.finditer(text):
            name_class = _secret_name_class(m.group("name").rsplit(":", 1)[-1])
            if name_class and _value_is_secretish(m.group("val"), name_class, True):
                spans.append(Span(m.start("val"), m.end("val"), "SECRET", f"xml-{name_class}"))
    if "ookie" in low:
        for line in COOKIE_LINE.finditer(text):
            base = line.start("body")
            for m in COOKIE_PAIR.finditer(line.group("body")):
                name, val = m.group("name"), m.group("val")
                words = _name_words(name)
                if any(w in NAME_NEG_ANY for w in words) or name.lower() in _COOKIE_ATTRS:
                    continue
                named = _secret_name_class(name) is not None or any(w in _SESSION_WORDS for w in words)
                if (named and len(val) >= 8 and not _is_placeholder(val)) or _looks_random(val, hex_ok=True):
                    spans.append(Span(base + m.start("val"), base + m.end("val"), "SECRET", "cookie"))
    if "login" in low and "password" in low:
        for m in NETRC.finditer(text):
            if not _is_placeholder(m.group("val"), loose=True) and len(m.group("val")) >= 4:
                spans.append(Span(m.start("val"), m.end("val"), "SECRET", "netrc"))
    if "sonar" in low or "sumo" in low:
        for m in VENDOR_ASSIGN.finditer(text):
            if not _is_placeholder(m.group("val"), loose=True):
                spans.append(Span(m.start("val"), m.end("val"), "SECRET", "vendor-assignment"))


def _assignments(text: str, low: str, spans: list[Span]) -> None:
    """name = value (and name: value, --name value, "name": "value", <key name value>) where the name says
    secret."""
    n = len(text)
    last_end = -1
    for km in NAME_KEYWORD.finditer(text):
        if km.start() < last_end:
            continue
        start = km.start()
        while start > 0 and text[start - 1] in ID_CHARS and km.start() - start < 80:
            start -= 1
        end = km.end()
        while end < n and text[end] in ID_CHARS and end - km.end() < 80:
            end += 1
        last_end = end
        name = text[start:end].strip(".-")
        if not name or "authorization" in name.lower():
            continue
        name_class = _secret_name_class(name)
        if name_class is None:
            continue
        tail = ASSIGN_TAIL.match(text, end)
        if tail is None:
            continue
        op = tail.group("op")
        name_quoted = start > 0 and text[start - 1] in "\"'`"
        if op == "," and not name_quoted:
            continue
        bare_pair = op.isspace() and (name_quoted or not text.startswith("-", start))
        if bare_pair and tail.group("val") is None:
            continue
        if bare_pair and not (
            _password_shaped(tail.group("val")) or _looks_random(tail.group("val"), hex_ok=False)
        ):
            continue  # "name value" with a plain word: only command-line flags (--password hunter2) take those
        if tail.group("qval") is not None:
            if tail.group("q") == "`":
                continue  # shell command substitution
            value, vstart, quoted = tail.group("qval"), tail.start("qval"), True
        else:
            value, vstart, quoted = tail.group("val"), tail.start("val"), False
        if not quoted and start > 0 and text[start - 1] in "?&" and "&" in value:
            value = value[: value.index("&")]  # a query parameter ends at the next '&'
        # a sentence's full stop is not part of the value; an elision ("abc...") marks a placeholder
        stripped = value[:-1] if value.endswith(".") and not value.endswith("..") else value
        if not _value_is_secretish(stripped, name_class, quoted):
            continue
        spans.append(Span(vstart, vstart + len(stripped), "SECRET", f"assignment-{name_class}"))
    if "value" in low:
        for m in NAME_VALUE_PAIR.finditer(text):
            name_class = _secret_name_class(m.group("name"))
            quoted = m.group("qval") is not None
            val = m.group("qval") if quoted else m.group("val")
            if name_class and _value_is_secretish(val, name_class, quoted):
                g = "qval" if quoted else "val"
                spans.append(Span(m.start(g), m.end(g), "SECRET", f"name-value-{name_class}"))
        for m in XML_KEY_VALUE.finditer(text):
            name_class = _secret_name_class(m.group("name"))
            val = m.group("val")
            if name_class and _value_is_secretish(val, name_class, True):
                spans.append(Span(m.start("val"), m.end("val"), "SECRET", f"xml-{name_class}"))


_PHRASE_STOPWORDS = frozenset(
    [
        "the",
        "a",
        "an",
        "not",
        "no",
        "is",
        "was",
        "are",
        "be",
        "been",
        "to",
        "of",
        "and",
        "or",
        "but",
        "my",
        "your",
        "our",
        "his",
        "her",
        "their",
        "it",
        "its",
        "that",
        "this",
        "these",
        "in",
        "on",
        "for",
        "with",
        "very",
        "too",
        "so",
        "as",
        "than",
        "same",
        "just",
        "really",
        "still",
        "also",
        "only",
    ]
)


# A stated value that reads as a secret, not a word: a digit, a symbol or a change of case in it.
_SECRET_SHAPED = re.compile(r"\d|[^\w']|[a-z][A-Z]")

# Words of a sentence, not of a pass phrase: 'enter the PIN "you were sent"'.
_SENTENCE_WORDS = _PHRASE_STOPWORDS | frozenset(
    [
        "i",
        "you",
        "we",
        "he",
        "she",
        "they",
        "them",
        "me",
        "us",
        "were",
        "will",
        "would",
        "can",
        "could",
        "should",
        "have",
        "has",
        "had",
        "do",
        "does",
        "did",
        "sent",
        "given",
        "here",
        "there",
        "what",
        "which",
        "when",
        "where",
    ]
)


_END_PUNCT = ".,;:!?)"
_HAS_SYMBOL_OR_DIGIT = re.compile(r"\d|[^\w\s]")


def _sentence_end_stripped(val: str) -> str:
    """A stated value without the sentence's punctuation after it.

    '.', ',', ';', ':', '?' and ')' at the end are the sentence's. A trailing '!' is the sentence's only on a
    plain word ("my password is sunshine!"); on a value that already holds a digit or a symbol
    ("Kp2#mQx9!", "hunter22!") it is kept in the value, because people end passwords in '!' and a secret
    stored less its last character is half stored, while a token that also swallowed an exclamation mark
    costs the sentence nothing."""
    core = val.rstrip(_END_PUNCT)
    if not core or core == val:
        return core
    tail = val[len(core) :]
    bangs = len(tail) - len(tail.lstrip("!"))  # the '!' run right after the value
    if bangs and _HAS_SYMBOL_OR_DIGIT.search(core):
        return core + tail[:bangs]
    return core


def _stated_secrets(text: str, spans: list[Span]) -> None:
    """Natural language: "my password is hunter22", "use hunter22 as the db password"."""
    for m in NL_USE_AS.finditer(text):
        val = m.group("val")
        if not _is_placeholder(val) and (_DIGIT.search(val) or re.search(r"[^\w']", val)):
            spans.append(Span(m.start("val"), m.end("val"), "SECRET", "stated-secret"))
    for m in NL_LOGIN_PAIR.finditer(text):
        # the password of the pair: one token that reads as a secret (not "admin / admin", not a URL's path)
        val = m.group("val").rstrip(".,;:)")
        if m.group("user").isdigit():
            continue  # a time ("login: 10:30pm"), not a user
        if m.group("and") is not None and not _bare_secret_ok(_sentence_end_stripped(m.group("val"))):
            continue  # "the login is Monday and 10:30": after "and" only a value that reads as a password
        if _SECRET_SHAPED.search(val) and not _is_placeholder(val) and not _EMAILISH.search(val):
            spans.append(Span(m.start("val"), m.start("val") + len(val), "SECRET", "stated-secret"))
    for m in NL_GIVEN.finditer(text):
        # quoted: the words between the quotes, unless they read as a sentence
        if m.group("qval") is not None:
            val, at = m.group("qval"), m.start("qval")
            if _SENTENCE_WORDS.intersection(val.lower().split()):
                continue
        else:  # unquoted: one token that reads as one (below)
            val, at = _sentence_end_stripped(m.group("val")), m.start("val")
            if len(val) < 4 or not _SECRET_SHAPED.search(val):
                continue
        if not _is_placeholder(val) and not _EMAILISH.search(val) and not val.lower().startswith("<"):
            spans.append(Span(at, at + len(val), "SECRET", "stated-secret"))
    for m in NL_SECRET.finditer(text):
        val = _sentence_end_stripped(m.group("val"))
        if len(val) < 4 or _is_placeholder(val):
            continue
        if m.group("aside") is not None and ASIDE_NAMES_OTHER.search(m.group("aside")):
            continue  # "password, username: jdoe42": the aside names the value that follows
        if not (_SECRET_SHAPED.search(val) or _plain_word_stated(text, m, val)):
            continue
        if _EMAILISH.search(val) or val.lower().startswith(("http", "<", "the ", "a ")):
            continue
        if any(c in val for c in "([{") or CODE_REF.match(val) or _CMDLET.match(val):
            continue  # code: password = getpass(), token = os.environ[...]
        if _LENGTH_WORD.match(val):
            continue  # "bank PIN is four-digit: 3188": the PIN's length (the code after it is identifiers')
        spans.append(Span(m.start("val"), m.start("val") + len(val), "SECRET", "stated-secret"))
    for m in NL_SECRET_BARE.finditer(text):
        val = _sentence_end_stripped(m.group("val"))
        if m.group("where") and not _reads_as_password(val, m.group("where")):
            continue
        if _bare_secret_ok(val):
            spans.append(Span(m.start("val"), m.start("val") + len(val), "SECRET", "stated-secret-bare"))
    for m in NL_CODES.finditer(text):
        for code in re.finditer(r"[A-Za-z0-9]{3,}(?:-[A-Za-z0-9]{3,})*", m.group("val")):
            if _DIGIT.search(code.group(0)) and not _is_placeholder(code.group(0), loose=True):
                at = m.start("val") + code.start()
                spans.append(Span(at, at + len(code.group(0)), "SECRET", "one-time-codes"))
    for m in NL_PHRASE.finditer(text):
        words = m.group("val").lower().split()
        # a seed or pass phrase is a run of unrelated words; "is not the one I use" is a sentence. A wallet's
        # seed of 12 to 24 words may hold a few common ones ("abandon ability able about above ..."), never
        # a sentence's share of them.
        common = len(_PHRASE_STOPWORDS.intersection(words))
        if (
            len(words) >= 3
            and (common == 0 or (len(words) >= 12 and common <= len(words) // 6))
            and not _is_placeholder(m.group("val"))
        ):
            spans.append(Span(m.start("val"), m.end("val"), "SECRET", "stated-phrase"))
    for m in NL_PASSWORD_PHRASE.finditer(text):
        words = m.group("val").lower().replace("-", " ").split()
        if (
            not _SENTENCE_WORDS.intersection(words)
            and not _LENGTH_WORDS.intersection(words)
            and not _PREDICATE_START.match(words[0])
            and not _is_placeholder(m.group("val"))
        ):
            spans.append(Span(m.start("val"), m.end("val"), "SECRET", "stated-password-phrase"))


# a password's length, not the password: "seven words long", "twelve characters at least"
_LENGTH_WORDS = frozenset(
    ["long", "characters", "chars", "digits", "letters", "symbols", "minimum", "maximum"]
)

# what opens a sentence about a password rather than the password itself: a participle, an adverb or a state
# ("stored hashed using bcrypt", "usually changed every month", "being reset by the admin", "written down
# somewhere safe"). Participles by their ending ("-ed", "-ing" after three letters or more), adverbs and the
# irregular participles by name: a suffix rule for "-ly" or "-en" would pass over "jelly", "garden", "kitten",
# words a pass phrase is made of.
_PREDICATE_START = re.compile(
    r"(?i)^(?:\w{3,}(?:ed|ing)|being|using|going|now|always|never|often|usually|probably|definitely|currently|"
    r"literally|basically|simply|actually|certainly|obviously|apparently|supposedly|generally|normally|"
    r"typically|easily|hardly|rarely|clearly|surely|totally|completely|fully|pretty|quite|rather|fairly|"
    r"set|kept|known|shown|seen|written|taken|given|broken|hidden|chosen|forgotten|stolen|frozen|spoken|done|"
    r"due|valid|invalid|wrong|right|required|needed|optional|case|long|short|weak|strong|secure|insecure|"
    r"expired|empty|blank|missing|unknown|new|old|temporary)$"
)


# a secret's length in words: "four-digit", "6-digit", "twelve-character"
_LENGTH_WORD = re.compile(
    r"(?i)^(?:\d{1,2}|three|four|five|six|seven|eight|nine|ten|twelve)-(?:digits?|chars?|characters?|letters?):?$"
)


# what a value straight after "password" is when it is no password: a date, a version, a time, a measure or
# a count ("password 2024-03-01 rotation", "password v10.2.1", "every 90days", "12+ characters")
_NOT_A_BARE_SECRET = re.compile(
    r"(?i)^(?:v?\d+(?:[._/:-]\d+)+(?:am|pm)?|\d+(?:[.,]\d+)?(?:%|\+|x|k|m|mm|cm|km|kg|g|mb|gb|tb|kb|ms|s|"
    r"secs?|mins?|h|hrs?|hours?|days?|weeks?|months?|years?|chars?|characters?|digits?|bits?|bytes?|"
    r"st|nd|rd|th|am|pm))$"
)

# or the name of how a password is hashed, encrypted, encoded or sent: "store the password sha256-hashed",
# "password argon2id", "wifi password WPA2-PSK"
_ALGORITHM_WORD = re.compile(
    r"(?i)^(?:sha-?\d*|md[45]|argon2(?:id|i|d)?|pbkdf2|bcrypt|scrypt|aes-?\d*|rsa-?\d*|base\d+|utf-?\d+|rot\d+|"
    r"ntlm(?:v\d)?|des3?|3des|wpa\d?|wep|tkip|ccmp|hmac|x509|pkcs\d*|ed25519)(?![a-z])"
)


# the words that make a compound with "password" ("password reset", "password manager"): a bare value that is
# one of them with a number after it ("password Reset2024 page", "password Manager2024 review", "password
# policy_v2") names a page, a product or a document, not the password
_PASSWORD_COMPOUND = re.compile(
    r"(?i)^(?:reset|resets|change|changes|manager|managers|policy|policies|hint|hints|field|fields|strength|"
    r"rules?|recovery|expiry|expiration|generator|protected|protection|prompt|page|form|screen|dialog|input|"
    r"list|file|vault|store|requirements?|rotation|update|history|sync|check|checker|audit|leak|breach|spray|"
    r"cracker|dump|hash|hashing|safe|review|guide|doc|docs|template|flow|module|service|api|endpoint|test|"
    r"tests|spec|ticket|issue|setting|settings|config)[-_.]?v?\d[\d.]*$"
)


def _bare_secret_ok(val: str) -> bool:
    """A value named only by the word before it (NL_SECRET_BARE): 6 to 64 characters with a digit or a
    symbol, and none of a date, a version, a time, a measure, an address, a link, a path, code or a word that
    makes a compound with "password" numbered ("Reset2024")."""
    if not 6 <= len(val) <= 64 or not (_DIGIT.search(val) or _PW_SYMBOL.search(val)):
        return False
    if (
        _NOT_A_BARE_SECRET.match(val)
        or _PASSWORD_COMPOUND.match(val)
        or _ALGORITHM_WORD.match(val)
        or _is_placeholder(val)
        or _EMAILISH.search(val)
        or "://" in val
    ):
        return False
    if any(c in val for c in "([{<") or FILEISH.search(val) or CODE_REF.match(val) or _CMDLET.match(val):
        return False
    return not HOSTNAME.match(val)


# the last word of a "for ..." phrase that takes a name or a number after it: "password for user JDoe42",
# "password for ticket PROJ-4821" name the user and the ticket, not the password
_LABEL_NOUNS = frozenset(
    {
        "user", "username", "login", "account", "acct", "id", "ticket", "issue", "case", "order", "version",
        "release", "build", "model", "room", "number", "no", "ref", "reference", "customer", "member", "team",
        "project", "repo", "branch", "task", "item", "step", "page", "section", "chapter", "group", "role",
    }
)  # fmt: skip


def _reads_as_password(val: str, where: str) -> bool:
    """A value after a secret's name and a "for ..." phrase with no link word ("password for the NAS
    n4sAdm1n!"): letters and digits with a symbol or both cases, the way passwords are made, and not after a
    word that takes a name or a number ("password for user JDoe42"), unless it also holds a symbol."""
    words = re.findall(r"[\w'-]+", where.lower())
    if not words:
        return False
    if words[-1] in _LABEL_NOUNS:
        return _password_shaped(val)  # "password for the joint account Rosebud#77"
    if not (_DIGIT.search(val) and any(c.isalpha() for c in val)):
        return False
    return _PW_SYMBOL.search(val) is not None or (
        any(c.isupper() for c in val) and any(c.islower() for c in val)
    )


# Words that say what a secret is like, not what it is: "the password is correct", "... is too short".
_NOT_A_PLAIN_SECRET = frozenset(
    {
        "correct",
        "incorrect",
        "wrong",
        "right",
        "required",
        "invalid",
        "valid",
        "weak",
        "strong",
        "long",
        "short",
        "same",
        "different",
        "new",
        "old",
        "secure",
        "insecure",
        "safe",
        "unsafe",
        "empty",
        "blank",
        "missing",
        "unknown",
        "simple",
        "easy",
        "hard",
        "complicated",
        "complex",
        "good",
        "bad",
        "fine",
        "okay",
        "great",
        "terrible",
        "awful",
        "random",
        "unique",
        "private",
        "public",
        "secret",
        "temporary",
        "permanent",
        "mandatory",
        "optional",
        "sensitive",
        "here",
        "there",
        "none",
        "null",
        "nothing",
        "gone",
        "lost",
        "useless",
        "obvious",
        "memorable",
        "personal",
        "shared",
        "default",
        "generic",
        "standard",
        "familiar",
        "annoying",
        "ridiculous",
        "tricky",
        "special",
        "mine",
        "yours",
        "ours",
        "theirs",
        "this",
        "that",
        "what",
        "which",
        "also",
        "still",
        "just",
        "only",
        "really",
        "very",
        "too",
        "not",
        "never",
        "always",
        "somewhere",
        "elsewhere",
        "written",
        "hidden",
        "broken",
        "stolen",
        "forgotten",
        "known",
        "unset",
        "set",
        "reset",
        "off",
        "case",
        "free",
        "needed",
        "necessary",
        "important",
    }
)
_STATED_WITH_IS = re.compile(r"(?i)\s(?:is\s+now|is|was|(?:changed|set|reset)\s+to|to)\s+[\"']?$")


def _plain_word_stated(text: str, m: re.Match[str], val: str) -> bool:
    """A password said in a sentence that is one plain word ("my password is sunshine"): after "is" (not a
    code-like ':' or '='), the sentence's last word, and not a word that says what the secret is like."""
    if not val.isalpha() or len(val) < 4 or val.lower() in _NOT_A_PLAIN_SECRET:
        return False
    if not re.match(r"(?i)pass(?:word|code|phrase|wd)\b|pw\b", m.group(0)):
        return False  # "the secret is patience", "the token is gold": only a password is a plain word
    if val.lower().endswith(("ed", "ing", "ly")):
        return False  # "is expired", "is changing", "is probably ..."
    if not _STATED_WITH_IS.search(text[m.start() : m.start("val")]):
        return False
    after = text[m.start("val") + len(val) :]
    return not after.strip() or bool(re.match(r"^[\"']?\s*(?:[.,;!?)]|\s(?:and|but|so)\b)", after))


# --------------------------------------------------------------------------------------------------
# random-looking strings in a secret context


def _looks_random(v: str, *, hex_ok: bool) -> bool:
    """True for strings that look machine-generated: several character classes, cut into short pieces.

    Lower-case hex only counts when hex_ok (a hash, a git SHA and a UUID are hex too: the caller must
    have a context that names a secret). Split at case and digit changes, a random base62 string falls
    into pieces of about two characters; CamelCase identifiers and slugs into words of four or more."""
    n = len(v)
    if n < 16 or n > 1024 or UUID_RE.match(v):
        return False
    if _hash_like(v):
        if not hex_ok or n < 32:
            return False
        return _DIGIT.search(v) is not None and any(c.isalpha() for c in v) and _entropy(v) >= 3.0
    pieces = CAMEL.findall(v)
    if not pieces:
        return False
    up = any(c.isupper() for c in v)
    lo = any(c.islower() for c in v)
    dg = _DIGIT.search(v) is not None
    if up + lo + dg < 2 or (not dg and n < 20):
        return False
    if not dg:
        # letters only: in random text an upper-case letter is often followed by another one, in CamelCase
        # words almost never
        uppers = sum(c.isupper() for c in v)
        pairs = sum(a.isupper() and b.isupper() for a, b in itertools.pairwise(v))
        letters = [c for c in v if c.isalpha()]
        vowels = sum(c in "aeiouAEIOU" for c in letters)
        return (pairs / uppers >= 0.2 or vowels / len(letters) < 0.25) and _entropy(v) >= 3.5
    if _entropy(v) < 3.3 or (((up and lo) or _SEPARATOR.search(v)) and _wordy(pieces, v)):
        return False
    mean = sum(len(p) for p in pieces) / len(pieces)
    if mean < 2.8:
        return True
    # longer runs: random if the letters are mostly consonants, as in random text
    letters = [c for c in v if c.isalpha()]
    vowels = sum(c in "aeiouyAEIOUY" for c in letters)
    return mean < 4.5 and bool(letters) and vowels / len(letters) < 0.35


_KEY_ALGORITHM = re.compile(r"^(?:ssh-(?:rsa|dss|ed25519|ed448)|ecdsa-sha2-nistp\d+|rsa-sha2-(?:256|512))$")
_SEPARATOR = re.compile(r"[-_.]")
_EMAILISH = re.compile(r"@[\w-]+\.[A-Za-z]{2,}")
_B64_BLOB = re.compile(r"[A-Za-z0-9+][A-Za-z0-9+/]{29,}={0,2}")


def _wordy(pieces: list[str], v: str) -> bool:
    """Most letters sit in pronounceable pieces of four or more (Windows10Pro22H2Build, my-app-v2-production,
    jjwt-jackson-0.11.2): an identifier, a slug or a version, not random text."""
    letters = sum(c.isalpha() for c in v)
    if not letters:
        return False
    in_words = 0
    for p in pieces:
        if len(p) >= 4 and p.isalpha():
            ratio = sum(c in "aeiouyAEIOUY" for c in p) / len(p)
            if 0.25 <= ratio <= 0.75:
                in_words += len(p)
    return in_words / letters >= 0.6


def _hash_like(v: str) -> bool:
    """Hex in one case, as hashes, SHAs and ids are printed (6d2FabeB6ADd... is not a digest)."""
    return HEX_RE.match(v) is not None and (v.islower() or v.isupper() or v.isdigit())


_PW_SYMBOL = re.compile(r"[!@#$%^&*?~+=]")
_VERSIONISH = re.compile(r"^v?\d+(?:[._-]\d+)+")


def _password_shaped(v: str) -> bool:
    """Letters, digits and a symbol such as ! # & in 8-64 characters without spaces: how people make passwords
    (a version, a date or an e-mail address is not one)."""
    if not 8 <= len(v) <= 64 or any(c.isspace() for c in v) or _VERSIONISH.match(v):
        return False
    if not (_DIGIT.search(v) and any(c.isalpha() for c in v) and _PW_SYMBOL.search(v)):
        return False
    if "@" in v and "." in v.split("@")[-1]:
        return False
    return not _is_placeholder(v) and not FILEISH.search(v) and "://" not in v


def _base64_blob(v: str) -> bool:
    """30+ base64 characters mixing upper case, lower case and digits: a key, not a relative path."""
    return (
        _B64_BLOB.fullmatch(v) is not None
        and _DIGIT.search(v) is not None
        and any(c.isupper() for c in v)
        and any(c.islower() for c in v)
    )


def _random_with_slashes(v: str) -> bool:
    """A base64 value with '/' in it (an AWS secret key, a storage key) rather than a file path."""
    return re.fullmatch(r"[A-Za-z0-9+/=_-]{16,}", v) is not None and _looks_random(
        v.replace("/", ""), hex_ok=False
    )


def _is_basic_credentials(val: str) -> bool:
    """HTTP Basic credentials decode to printable user:password."""
    try:
        raw = base64.b64decode(val + "=" * (-len(val) % 4), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return False
    if ":" not in raw or not raw.isprintable():
        return False
    return not _is_placeholder(raw.split(":", 1)[1], loose=True)


_RUN16 = re.compile(r"[A-Za-z0-9+/_~.=-]{16}")
_KEYWORD_RE = re.compile("|".join(re.escape(k) for k in KEYWORD_PREFILTER))
_BROAD_PREFIX = re.compile(r"^(?:sk-(?:[a-z]{2,8}\d{0,2}-){0,2}|[a-z]{2,4}_|xox[a-z]-)")
_CMDLET = re.compile(r"^[A-Z][a-z]+[A-Za-z]*-[A-Z][A-Za-z]+$")  # PowerShell Verb-Noun
_COOKIE_ATTRS = {"path", "domain", "expires", "max-age", "samesite", "priority"}
_SESSION_WORDS = {
    "session",
    "sess",
    "sessionid",
    "sid",
    "jsessionid",
    "phpsessid",
    "connect",
    "remember",
    "auth",
}
_FILLER = {
    "is",
    "was",
    "are",
    "the",
    "my",
    "our",
    "your",
    "a",
    "an",
    "to",
    "for",
    "here",
    "it",
    "its",
    "this",
    "that",
    "new",
    "be",
    "now",
    "value",
    "val",
}
_SSH_PUBLIC = re.compile(r"(?:ssh-(?:rsa|ed25519|dss)|ecdsa-sha2-nistp\d+|sk-ssh-ed25519@openssh\.com)\s+$")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*")
_VALUE_KEY = re.compile(r"(?i)^[\s\-{,\"']*\"?value\"?\s*[:=]\s*[\"']?$")


def _context_decides(before: str, *, hex_value: bool) -> bool | None:
    """Does the nearest telling word before a value name a secret (or, for non-hex values, a provider)
    rather than a hash, an identifier or a public value? Words that tell nothing ("the", "is") are skipped;
    an identifier counts as a whole (authenticity_token is a form nonce, LLM_SECRET_NAME a name)."""
    idents = _WORD.findall(before)
    for i in range(len(idents) - 1, -1, -1):
        ident = idents[i].strip("._-")
        if not ident or ident.lower() in _FILLER:
            continue
        if _secret_name_class(ident) is not None:
            return True
        words = _name_words(ident)
        if any(w in NAME_NEG_ANY or HASH_WORD.fullmatch(w) for w in words) or (
            len(words) > 1 and words[-1] in NAME_NEG_LAST
        ):
            return False
        if SECRET_WORD.fullmatch(ident):
            # "public key", "publishable key", "anon key" name values that are meant to be shared
            prev = _name_words(idents[i - 1]) if i > 0 else []
            return not any(w in NAME_NEG_ANY for w in prev)
        if not hex_value and PROVIDER_WORD.fullmatch(ident):
            return True
        if hex_value:
            return None  # a hex string is a secret only right after the word: "api key: 3f9c..."
    return None


_AFTER_NAMES_SECRET = re.compile(
    r"(?i)[\s\"'`]{0,3}(?:as|is)\s+(?:the|my|our|your)?\s*(?:[\w-]+\s+){0,2}"
    r"(?:api\s+)?(?:key|token|secret|password|passphrase|credentials?)\b"
)


def _random_near_words(text: str, spans: list[Span]) -> None:
    """A random-looking string on a line whose nearest context word names a secret or a provider:
    "the Analytics key is 8Hq...", "sourcegraph: 6d2F...", "use 8Hq... as the staging token"."""
    for m in RANDOM_CAND.finditer(text):
        v = m.group(0).rstrip(".")
        start = m.start()
        if len(v) < 16 or text.startswith(("..", "\u2026"), start + len(v)):
            continue  # elided: ops_eyJzaWdu..., a sample cut short
        # part of a URL, a data: URI or a path: those have their own rules
        chunk_start = start
        while chunk_start > 0 and not text[chunk_start - 1].isspace() and start - chunk_start < 200:
            chunk_start -= 1
        chunk = text[chunk_start:start]
        if "://" in chunk or "data:" in chunk or chunk.endswith(("/", "\\", "@", "#", "?", "=", "%")):
            continue
        if _SSH_PUBLIC.search(text, max(0, start - 40), start):
            continue  # ssh-ed25519 AAAA...: a public key
        hex_value = _hash_like(v)
        if not _looks_random(v, hex_ok=True) or _is_placeholder(v) or CODE_REF.match(v):
            continue
        if FILEISH.search(v) and not _random_with_slashes(v):
            continue
        line_start = text.rfind("\n", 0, start) + 1
        before = text[max(line_start, start - 64) : start]
        decided = _context_decides(before, hex_value=hex_value)
        if decided is None and line_start > 0 and _VALUE_KEY.search(before):
            # "- name: API_TOKEN" on one line, "value: ..." on the next (Kubernetes, Compose, JSON env lists)
            prev_start = text.rfind("\n", 0, line_start - 1) + 1
            decided = _context_decides(text[prev_start:line_start], hex_value=hex_value)
        if decided or _AFTER_NAMES_SECRET.match(text, start + len(v), start + len(v) + 60):
            spans.append(Span(start, start + len(v), "SECRET", "random-in-context"))


# --------------------------------------------------------------------------------------------------
# Markdown and CSV tables


_SHORTCUT = re.compile(r"(?i)^(?:ctrl|control|cmd|command|alt|option|opt|shift|meta|super|win|fn)\b")


def _cells(line: str, sep: str) -> list[tuple[int, int]]:
    """[start, end) of each cell's stripped content in a table line."""
    out = []
    pos = 0
    for part in line.split(sep):
        a, b = pos, pos + len(part)
        pos = b + 1
        while a < b and line[a] in " \t`\"'":
            a += 1
        while b > a and line[b - 1] in " \t`\"'":
            b -= 1
        out.append((a, b))
    return out


def _table_cells(text: str, spans: list[Span]) -> None:
    """Secrets in Markdown (| a | b |) and CSV tables: a cell under a header that names a secret, a
    random-looking cell in a row that names a secret or a provider, or a strongly random cell anywhere."""
    lines: list[tuple[int, str]] = []
    pos = 0
    for line in text.split("\n"):
        lines.append((pos, line))
        pos += len(line) + 1
    blocks: list[tuple[str, list[tuple[int, str]]]] = []
    i = 0
    while i < len(lines):
        off, line = lines[i]
        if line.count("|") >= 2:
            j = i
            while j < len(lines) and lines[j][1].count("|") >= 2:
                j += 1
            blocks.append(("|", lines[i:j]))
            i = j
        elif line.count(",") >= 1 and i + 1 < len(lines) and lines[i + 1][1].count(",") == line.count(","):
            j = i
            while j < len(lines) and lines[j][1].count(",") == line.count(","):
                j += 1
            blocks.append((",", lines[i:j]))
            i = j
        else:
            i += 1
    for sep, rows in blocks:
        header: list[str] = []
        body = rows
        if sep == "|" and len(rows) >= 2 and MD_SEPARATOR.match(rows[1][1]):
            header = [rows[0][1][a:b] for a, b in _cells(rows[0][1], "|")]
            body = rows[2:]
        elif sep == ",":
            first = rows[0][1]
            cells = [first[a:b] for a, b in _cells(first, ",")]
            if not any(_looks_random(c, hex_ok=True) for c in cells):
                header, body = cells, rows[1:]
        for off, line in body:
            if MD_SEPARATOR.match(line):
                continue
            bounds = _cells(line, sep)
            values = [line[a:b] for a, b in bounds]
            for k, (a, b) in enumerate(bounds):
                v = values[k]
                if len(v) < 6 or any(c.isspace() or c in "\"'`()[]{}<>|," for c in v):
                    continue
                head = header[k].strip() if k < len(header) else ""
                head_class = _secret_name_class(head) if head else None
                if head_class is None and head.lower() in SECRET_HEADERS and head.lower() != "value":
                    head_class = "password" if head.lower().startswith("pass") else "token"
                others = " | ".join(x for j, x in enumerate(values) if j != k)
                hex_value = _hash_like(v)
                if head and HASH_WORD.search(head) and not SECRET_WORD.search(head):
                    continue
                if head_class is not None:
                    # a bare "Key" column may list keyboard shortcuts
                    ok = _value_is_secretish(v, head_class, True) and not (
                        head.lower() in ("key", "keys") and _SHORTCUT.match(v)
                    )
                elif k > 0 and (_secret_name_class(values[k - 1]) or SECRET_WORD.fullmatch(values[k - 1])):
                    # a key/value row: | password | hunter2 |
                    prev = values[k - 1]
                    cls = _secret_name_class(prev) or (
                        "password" if prev.lower().startswith("pass") else "token"
                    )
                    ok = _value_is_secretish(v, cls, True)
                elif _context_decides(others, hex_value=hex_value) is True:
                    ok = _looks_random(v, hex_ok=True) or _password_shaped(v)
                else:
                    ok = (
                        not hex_value
                        and len(v) >= 20
                        and _looks_random(v, hex_ok=False)
                        and not FILEISH.search(v)
                    )
                if ok and not _is_placeholder(v):
                    spans.append(Span(off + a, off + b, "SECRET", "table-cell"))


def _strip_prefix(value: str) -> str:
    """The random part of a prefixed token (after the last '_' or '-' within the first 16 chars)."""
    head = value[:16]
    cut = max(head.rfind("_"), head.rfind("-"))
    return value[cut + 1 :] if cut >= 0 else value


def _curl_secret_span(m: re.Match[str]) -> tuple[int, int] | None:
    """The password part of curl -u user:password (or the user part when it is a bare API key)."""
    cred = m.group("cred")
    base = m.start("cred")
    idx = cred.index('":"') + 1 if cred.startswith('"') and '":"' in cred else cred.find(":")
    if idx < 0:
        return None
    user_s = cred[:idx].strip("\"' ")
    pw_part = cred[idx + 1 :]
    pw_s = pw_part.strip("\"' ")
    if pw_s:
        if len(pw_s) < 4 or _is_placeholder(pw_s, loose=True):
            return None
        if user_s and (user_s[0] in "$<[%" or "{{" in user_s):
            return None  # a templated pair such as ${USER}:${PASS}
        off = idx + 1 + pw_part.index(pw_s)
        return base + off, base + off + len(pw_s)
    if len(user_s) >= 8 and _DIGIT.search(user_s) and not _is_placeholder(user_s, loose=True):
        off = cred.index(user_s)
        return base + off, base + off + len(user_s)
    return None
