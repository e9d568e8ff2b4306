"""Secret detection: issuer-prefixed tokens, and values whose context (a key name, a header, a URL, a
table column, a sentence) says they are secrets.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from .rules import (
    ASSIGN_TAIL,
    AUTH_HEADER,
    BEARER,
    BUNDLER,
    CAMEL,
    CODE_REF,
    CURL_USER,
    ENV_NAME,
    FILEISH,
    HOSTNAME,
    ID_CHARS,
    K8S_KIND,
    K8S_VALUE,
    KEY_QUALIFIERS,
    KEYWORD_PREFILTER,
    LONG_TOKEN,
    NAME_KEYWORD,
    NAME_NEG_ANY,
    NAME_NEG_LAST,
    NL_SECRET,
    PASSWORD_WORDS,
    PEM,
    PREFIXED,
    REFERENCE_SCHEMES,
    SLUG,
    TOKEN68,
    TOKEN_STEMS,
    URL_CREDS,
    VENDOR_ASSIGN,
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
    for a, b in zip(low, low[1:]):
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
    "xxxx", "****", "...", "####", "\u2026", "example", "placeholder", "redacted", "changeme", "change_me",
    "your_", "your-", "yourtoken", "yourkey", "yourpassword", "your token", "your key", "insert",
    "dummy", "sample", "here>", "_here", "-here", "here_", "todo", "fixme", "replace", "<", ">",
    "${", "{{", "}}", "%s", "%d", "$(", "\\(",
)
_PLACEHOLDER_EXACT = {
    "password", "passwd", "pass", "pwd", "secret", "token", "apikey", "api_key", "key", "test", "testing",
    "null", "none", "nil", "true", "false", "undefined", "empty", "string", "required", "optional",
    "username", "user", "admin", "root", "guest", "default", "hidden", "mypassword", "yourpassword",
    "secret123", "password123", "foobar", "foo", "bar", "baz", "abc", "abc123", "123456", "qwerty",
    "value", "env", "auto", "n/a", "na", "tbd", "unset", "disabled", "enabled", "mysecret", "mytoken",
}


def _is_placeholder(value: str, *, loose: bool = False) -> bool:
    """True for values that are obviously not real secrets: xxxx, ${VAR}, <token>, 000000, abcdef..."""
    v = value.strip()
    if not v:
        return True
    low = v.lower()
    if low in _PLACEHOLDER_EXACT:
        return True
    if any(w in low for w in _PLACEHOLDER_WORDS):
        return True
    if v[0] in "$%[" or (v[0] == "{" and not _DIGIT.search(v)):
        return True
    if len(set(low)) <= 2:
        return True
    if loose:
        return _repeat_fraction(v) > 0.8
    return _repeat_fraction(v) > 0.5 or _longest_sequence(v) >= 12 or (len(v) >= 16 and _entropy(v) < 2.6)



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
    for a, b in zip(words, words[1:]):
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
    if FILEISH.search(v) or HOSTNAME.match(v):
        return False
    if v.startswith(("ENC[", "enc:", "sops:")):  # already encrypted (SOPS and friends)
        return False
    if not quoted:
        if any(c in v for c in "[({"):
            return False
        if CODE_REF.match(v):
            return False
        if re.fullmatch(r"[A-Za-z_]+", v):  # a bare identifier is a variable, not a value
            return False
    if name_class != "password":
        if v.isdigit() or any(c.isspace() for c in v) or SLUG.match(v):
            return False
    return True



def find_secrets(text: str, spans: list[Span]) -> None:
    """Append a Span for every secret in text: issuer-prefixed tokens, then secrets named by their context."""
    # 1. tokens with an issuer prefix: only where a long token exists
    seen: set[tuple[int, int]] = set()
    for lm in LONG_TOKEN.finditer(text):
        lo = max(0, lm.start() - 24)
        hi = lm.end()
        for name, rx, loose in PREFIXED:
            for m in rx.finditer(text, lo, hi):
                key = (m.start(), m.end())
                if key in seen:
                    continue
                seen.add(key)
                value = m.group(0)
                if name in ("jwt", "mailchimp-key", "slack-webhook", "teams-webhook", "discord-webhook"):
                    ok = not _is_placeholder(value, loose=True) or name == "jwt"
                else:
                    ok = not _is_placeholder(_strip_prefix(value), loose=loose)
                if ok:
                    spans.append(Span(m.start(), m.end(), "SECRET", name))
    if "-----BEGIN" in text:
        for m in PEM.finditer(text):
            body = re.sub(r"\\n|\s", "", m.group("body"))
            if len(re.findall(r"[A-Za-z0-9+/=]", body)) >= 40:
                spans.append(Span(m.start(), m.end(), "SECRET", "private-key"))
    low = text.lower()
    if not any(k in low for k in KEYWORD_PREFILTER):
        return
    # 2. credentials in URLs, curl -u, Authorization headers, Bundler, k8s Secret manifests
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
    if "sonar" in low or "sumo" in low:
        for m in VENDOR_ASSIGN.finditer(text):
            if not _is_placeholder(m.group("val"), loose=True):
                spans.append(Span(m.start("val"), m.end("val"), "SECRET", "vendor-assignment"))
    # 3. generic "name = value" where the name says secret
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
        if op.isspace() and (name_quoted or not text.startswith("-", start)):
            continue  # "name value" only for command-line flags: --password hunter2
        if tail.group("qval") is not None:
            if tail.group("q") == "`":
                continue  # shell command substitution
            value, vstart, quoted = tail.group("qval"), tail.start("qval"), True
        else:
            value, vstart, quoted = tail.group("val"), tail.start("val"), False
        # a sentence's full stop is not part of the value; an elision ("abc...") marks a placeholder
        stripped = value[:-1] if value.endswith(".") and not value.endswith("..") else value
        if not _value_is_secretish(stripped, name_class, quoted):
            continue
        spans.append(Span(vstart, vstart + len(stripped), "SECRET", f"assignment-{name_class}"))
    if "value" in low:
        for m in XML_KEY_VALUE.finditer(text):
            name_class = _secret_name_class(m.group("name"))
            val = m.group("val")
            if name_class and _value_is_secretish(val, name_class, True):
                spans.append(Span(m.start("val"), m.end("val"), "SECRET", f"xml-{name_class}"))
    # 4. natural language: "my password is hunter22"
    for m in NL_SECRET.finditer(text):
        val = m.group("val").rstrip(".,;:!?)")
        if len(val) < 4 or _is_placeholder(val):
            continue
        if not (re.search(r"\d", val) or re.search(r"[^\w']", val) or re.search(r"[a-z][A-Z]", val)):
            continue
        if "@" in val or val.lower().startswith(("http", "<", "the ", "a ")):
            continue
        spans.append(Span(m.start("val"), m.start("val") + len(val), "SECRET", "stated-secret"))


def _strip_prefix(value: str) -> str:
    """The random part of a prefixed token (after the last '_' or '-' within the first 16 chars)."""
    head = value[:16]
    cut = max(head.rfind("_"), head.rfind("-"))
    return value[cut + 1:] if cut >= 0 else value



def _curl_secret_span(m: re.Match[str]) -> tuple[int, int] | None:
    """The password part of curl -u user:password (or the user part when it is a bare API key)."""
    cred = m.group("cred")
    base = m.start("cred")
    idx = cred.index('":"') + 1 if cred.startswith('"') and '":"' in cred else cred.find(":")
    if idx < 0:
        return None
    user_s = cred[:idx].strip("\"' ")
    pw_part = cred[idx + 1:]
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

