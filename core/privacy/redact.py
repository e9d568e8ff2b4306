"""Write-time redaction: find personal data and secrets in text and replace each value with a stable token.

Every value found becomes a token such as ``<EMAIL_1>`` or ``<SECRET_3>``. The same value for the same
principal always gets the same token; the mapping lives in the principal's encrypted :class:`Vault`
(or, without a vault, in memory for the life of the :class:`Redactor`).

Detection is plain regular expressions plus checksums (Luhn for cards, mod-97 for IBANs) and
``phonenumbers`` for phone numbers that carry no other signal. Everything runs behind cheap prefilters
(``'@' in text``, "is there a digit", "is there a long token", a few keyword tests), so a sentence with
nothing to redact costs a few microseconds. presidio and detect-secrets are not used: measured on the
shared data they were slower and, for secrets, far less precise than these rules (see bench/).

A :class:`Finding` records kind, token and position in the original text - never the value itself.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memdeck.core.errors import MemdeckError

if TYPE_CHECKING:  # pragma: no cover
    from memdeck.core.privacy.vault import Vault

KINDS = ("EMAIL", "PHONE", "CARD", "IBAN", "SSN", "IP", "SECRET")
# When two detections overlap the longer wins; on equal length the higher priority wins.
_PRIORITY = {"SECRET": 7, "CARD": 6, "IBAN": 6, "SSN": 5, "IP": 5, "EMAIL": 4, "PHONE": 2}
TOKEN_RE = re.compile(r"<(EMAIL|PHONE|CARD|IBAN|SSN|IP|SECRET)_(\d{1,9})>")


@dataclass(frozen=True, slots=True)
class Finding:
    """One redacted value: its kind, the token that replaced it and its span in the original text."""

    kind: str
    token: str
    start: int
    end: int
    rule: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "token": self.token, "start": self.start, "end": self.end,
                "rule": self.rule}


@dataclass(slots=True)
class RedactionResult:
    text: str
    findings: list[Finding] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.findings)


@dataclass(frozen=True, slots=True)
class _Span:
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


# --------------------------------------------------------------------------------------------------
# structured PII

_EMAIL = re.compile(
    r"(?<![\w.%+-])[\w][\w.%+-]{0,63}@[^\W_](?:[\w-]{0,62}[^\W_])?(?:\.[^\W_](?:[\w-]{0,62}[^\W_])?)*"
    r"\.[^\W\d_]{2,24}(?![\w-])"
)

_USERINFO_BEFORE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]{1,15}://[^\s:/@\"'<>]{0,100}:$")

_IPV4 = re.compile(
    r"(?<![\w.])((?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?:\.(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3})"
    r"(?![\w]|\.\d)"
)
_VERSION_BEFORE = re.compile(r"(?i)(?:\bv|\bver\.?|version|build|release|\brev\.?)\s*$")
_IPV6_CAND = re.compile(
    r"(?<![\w:.])(?:[0-9A-Fa-f]{1,4}|:)?(?::[0-9A-Fa-f]{0,4}){2,7}(?:\.\d{1,3}){0,3}(?:%[\w]+)?(?![\w:])"
)

_SSN_DASHED = re.compile(r"(?<![\w-])(\d{3})-(\d{2})-(\d{4})(?![\w-])")
_SSN_LOOSE = re.compile(r"(?<![\w-])(\d{3})[ .]?(\d{2})[ .]?(\d{4})(?![\w-])")
_SSN_CONTEXT = re.compile(
    r"(?i)\b(?:ssn|ss#|ss\s*no|social[\s-]*security|social[\s-]*sec|sozialversicherung)"
)

_CARD = re.compile(r"(?<![\w.,+-])\d(?:[ -]?\d){11,18}(?![\w]|[.,]\d)")
_CARD_CONTEXT = re.compile(
    r"(?i)(?:\bcards?\b|\bcc\b|\bcredit|\bdebit|\bvisa\b|master\s?card|\bamex\b|american express|maestro|"
    r"discover|\bjcb\b|diners|\bpan\b|\bcvv|payment|\bcard\s*(?:no|number|#))"
)

_IBAN = re.compile(r"(?i)(?<![\w])([A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30})(?![\w])")
_IBAN_CONTEXT = re.compile(r"(?i)\b(?:iban|bic|swift|account|transfer|bank)")
# ISO 13616 registry: IBAN length per country.
_IBAN_LENGTHS = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BR": 29,
    "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "DO": 28, "EE": 20, "EG": 29,
    "ES": 24, "FI": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28,
    "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20,
    "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "LY": 25, "MC": 27, "MD": 24, "ME": 22,
    "MK": 19, "MR": 27, "MT": 31, "MU": 30, "NL": 18, "NO": 15, "PK": 24, "PL": 28, "PS": 29, "PT": 25,
    "QA": 29, "RO": 24, "RS": 22, "SA": 24, "SC": 31, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "ST": 25,
    "SV": 28, "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20,
}

_PHONE_CAND = re.compile(
    r"(?<![\w+.\-/])(?:(?:\+|\b00)\d{1,3}[ .-]?)?(?:\(\d{1,5}\)[ .-]?)?"
    r"(?:\d{7,15}|\d{1,5}(?:[ .-]\(?\d{1,8}\)?){1,6})"
    r"(?:[ ]?(?:x|ext\.?|extn?\.?|#)[ ]?\d{1,6})?(?![\w]|[.,/:-]\d)"
)
_PHONE_CONTEXT_BEFORE = re.compile(
    r"(?i)(?:phone|\btel\b|\btel\.|telephone|mobile|\bmob\b|\bcell|\bfax|\bdesk|\bcall|\brang?\b|"
    r"\bring\b|\btext\b|\btexts\b|\bsms\b|whats\s?app|signal|viber|telegram|\breach|\bcontact|\bdial|"
    r"hotline|landline|\bph\b|\bph\.|\bmessages?\b|\banswer|\bvoicemail|\bextension)"
)
# "number" alone is weak: an account, order or licence number is not a phone number
_PHONE_CONTEXT_WEAK = re.compile(r"(?i)(?:\bnumber|\bno\.|\bnr\.?|#)\s*(?:is|was|:)?\s*$")
_PHONE_CONTEXT_NEG = re.compile(
    r"(?i)(?:account|order|invoice|licen[cs]e|passport|isbn|issn|tracking|serial|policy|case|ticket|"
    r"reference|\bref\b|\bid\b|customer|member|confirmation|booking|routing|sort\s*code|\bzip|postal|"
    r"postcode|\btax|\bvat|\biban|\bssn|social\s*security|\bbuild|version|\bmodel|\bsku|\bbatch|"
    r"\blot\b|\bpo\b|\bcheque|\bcheck\s*no)"
)
_PHONE_CONTEXT_AFTER = re.compile(
    r"(?i)^[\s,;:()\-]{0,3}(?:office|fax|mobile|cell|home|work|phone|tel|desk|direct)"
)
_NANP = re.compile(r"^(?:\+?1[ .-]?)?\(?[2-9]\d{2}\)?[ .-]?[2-9]\d{2}[ .-]\d{4}(?:\s?(?:x|ext\.?)\s?\d+)?$")
_DATE_INSIDE = re.compile(r"(?:19|20)\d\d-[01]\d-[0-3]\d|[0-3]?\d/[01]?\d/(?:19|20)\d\d")
_SSN_SHAPE = re.compile(r"^\d{3}-\d{2}-\d{4}$")
_DATE_LIKE = re.compile(r"^(?:\d{4}[./-]\d{1,2}[./-]\d{1,2}|\d{1,2}[./-]\d{1,2}[./-](?:\d{2}|\d{4}))$")
_PHONE_REGIONS = ("US", "GB", "DE", "FR", "IN", "AU", "IT", "ES", "NL", "BR")
# libphonenumber is slow (~0.1 ms per region and call): only this many context-free candidates per text
_PHONE_LIB_MAX_CANDIDATES = 8


def _luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)  # int() also reads non-ASCII decimal digits, which \d matches
        if i % 2:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def _card_brand_ok(d: str) -> bool:
    """Length/prefix combinations that payment networks actually issue (IIN ranges)."""
    n = len(d)
    if d[0] == "4":
        return n in (13, 16, 19)
    if d[:2] in ("34", "37"):
        return n == 15
    if d[:2] in ("30", "36", "38", "39"):
        return 14 <= n <= 19
    if d[:2] == "35":
        return 16 <= n <= 19
    if d[:4] in ("2131", "1800"):
        return n == 15
    if d[0] == "1":
        return n == 15
    if "22" <= d[:2] <= "27":
        return n == 16
    if "51" <= d[:2] <= "55":
        return n == 16
    if d[:2] in ("50", "56", "57", "58") or d[0] == "6" or d[:4] == "0604":
        return 12 <= n <= 19
    return False


def _card_groups_ok(raw: str) -> bool:
    seps = {c for c in raw if not c.isdigit()}
    if not seps:
        return True
    if len(seps) > 1:
        return False
    groups = re.split(r"[ -]", raw)
    return all(3 <= len(g) <= 6 for g in groups[:-1]) and 1 <= len(groups[-1]) <= 6


def _iban_ok(compact: str) -> bool:
    s = compact.upper()
    country = s[:2]
    expected = _IBAN_LENGTHS.get(country)
    if expected is not None and len(s) != expected:
        return False
    rearranged = s[4:] + s[:4]
    try:
        num = "".join(str(int(c, 36)) for c in rearranged)
    except ValueError:
        return False
    return int(num) % 97 == 1


def _last_end(rx: re.Pattern[str], text: str, start: int, width: int) -> int:
    """End of the last match of rx in the width characters before start, or -1."""
    last = -1
    for m in rx.finditer(text, max(0, start - width), start):
        last = m.end()
    return last


def _context(text: str, start: int, rx: re.Pattern[str], width: int = 40) -> bool:
    return rx.search(text, max(0, start - width), start) is not None


# --------------------------------------------------------------------------------------------------
# secrets

# Tokens with a recognisable issuer prefix or shape. Written for this project from the public formats
# of each provider. ``loose`` means the prefix itself is strong evidence, so only blatant placeholders
# (xxxx, 0000, <...>) are refused; otherwise the random part must also look random.
_PREFIXED_RULES: list[tuple[str, str, bool]] = [
    ("aws-access-key", r"(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|A3T[A-Z0-9])"
     r"[A-Z2-7]{16}(?![A-Za-z0-9])", False),
    ("github-token", r"(?<![A-Za-z0-9_])gh[pousr]_[A-Za-z0-9]{36,251}(?![A-Za-z0-9])", False),
    ("github-fine-grained-pat", r"(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{60,255}", False),
    ("gitlab-token", r"(?<![\w-])gl(?:pat|ptt|rt|dt|ft|cbt|oas|soat|imt|agent|ffct|rrt|cf)-[\w-]{20,}"
     r"(?:\.[\w-]{2,})?", False),
    ("gitlab-runner-registration", r"(?<![\w])GR1348941[\w-]{20,}", False),
    ("openai-key", r"(?<![\w-])sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{16,}T3BlbkFJ"
     r"[A-Za-z0-9_-]{16,}", True),
    ("openai-legacy-key", r"(?<![\w-])sk-[A-Za-z0-9]{48}(?![\w-])", False),
    ("anthropic-key", r"(?<![\w-])sk-ant-(?:api|admin|sid|oat)\d{2}-[A-Za-z0-9_-]{80,}AA(?![\w-])", True),
    ("slack-token", r"(?<![\w-])xox[a-z]-(?:\d+-)*\d{6,}-(?:\d+-)*(?=[A-Za-z0-9]*[A-Za-z])[A-Za-z0-9]{8,}",
     True),
    ("slack-config-token", r"(?<![\w-])xoxe(?:\.xox[a-z])?-\d-[A-Za-z0-9]{40,}", False),
    ("slack-app-token", r"(?<![\w-])xapp-\d-[A-Z0-9]{6,}-\d{6,}-[A-Za-z0-9]{16,}", True),
    ("slack-webhook", r"(?:https?://)?hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,}",
     True),
    ("discord-webhook", r"https?://(?:\w+\.)?discord(?:app)?\.com/api/webhooks/\d+/[\w-]{20,}", True),
    ("teams-webhook", r"https://[\w.-]+\.webhook\.office\.com/webhookb2/[\w@/-]{30,}", True),
    ("stripe-key", r"(?<![\w])(?:sk|rk)_(?:test|live|prod)_[A-Za-z0-9]{10,}", False),
    ("jwt", r"(?<![\w-])eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*", True),
    ("huggingface-token", r"(?<![A-Za-z0-9_])hf_[A-Za-z]{34}(?![A-Za-z0-9])", False),
    ("huggingface-org-token", r"(?<![A-Za-z0-9_])api_org_[A-Za-z]{34}(?![A-Za-z0-9])", False),
    ("google-api-key", r"(?<![\w-])AIza[\w-]{35}(?![\w-])", False),
    ("npm-token", r"(?<![\w])npm_[A-Za-z0-9]{36}(?![\w])", False),
    ("pypi-token", r"pypi-AgEIcHlwaS5vcmc[\w-]{50,}", True),
    ("databricks-token", r"(?<![\w])dapi[a-f0-9]{32}(?:-\d)?(?![\w])", False),
    ("vault-token", r"(?<![\w])hv[sbr]\.[\w-]{90,}", False),
    ("vault-legacy-token", r"(?<![\w.])s\.(?=[A-Za-z0-9]*\d)(?=[A-Za-z0-9]*[a-z])(?=[A-Za-z0-9]*[A-Z])"
     r"[A-Za-z0-9]{24}(?![\w.])", False),
    ("notion-token", r"(?<![\w])ntn_\d{11}[A-Za-z0-9]{35}(?![\w])", False),
    ("sentry-token", r"(?<![\w])sntry[su]_[A-Za-z0-9+/=_]{40,}", True),
    ("perplexity-key", r"(?<![\w])pplx-[A-Za-z0-9]{48}(?![\w])", False),
    ("grafana-token", r"(?<![\w])(?:glc_[A-Za-z0-9+/]{32,}={0,2}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|"
     r"eyJrIjoi[A-Za-z0-9]{40,}={0,2})", False),
    ("flyio-token", r"(?<![\w])(?:fo1_[\w-]{43}|fm[12][ar]?_[A-Za-z0-9+/]{100,}={0,3})", False),
    ("openshift-token", r"(?<![\w])sha256~[\w-]{43}(?![\w-])", False),
    ("facebook-token", r"(?<![\w])(?:EAA[A-Za-z0-9_-]{60,}|\d{15,16}(?:\||%7C)[\w-]{27}(?![\w-]))", False),
    ("square-token", r"(?<![\w])(?:sq0atp-[\w-]{22}|sq0csp-[\w-]{43})", False),
    ("sendgrid-key", r"(?<![\w])SG\.[\w-]{22}\.[\w-]{43}", False),
    ("sendinblue-key", r"(?<![\w])xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}", False),
    ("age-secret-key", r"AGE-SECRET-KEY-1[0-9A-Z]{58}", False),
    ("1password-secret-key", r"(?<![\w])A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})"
     r"-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}(?![\w])", False),
    ("1password-service-token", r"(?<![\w])ops_eyJ[A-Za-z0-9+/]{100,}={0,3}", False),
    ("aws-bedrock-key", r"(?<![\w])(?:ABSK[A-Za-z0-9+/]{100,}={0,2}|"
     r"bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t[A-Za-z0-9+/=]*)", False),
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
    ("telegram-bot-token", r"(?<![\w])\d{8,10}:AA[A-Za-z0-9_-]{33}(?![\w-])", False),
    ("azure-ad-client-secret", r"(?<![\w~.-])[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![\w~.-])",
     False),
    ("cloudflare-origin-ca-key", r"(?<![\w])v1\.0-[a-f0-9]{24}-[a-f0-9]{146}", False),
    ("clickhouse-secret", r"(?<![\w.])4b1d[A-Za-z0-9]{38}(?![\w])", False),
    ("maxmind-license-key", r"(?<![\w.])[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk(?![\w])", False),
    ("twilio-key", r"(?<![\w])SK[0-9a-f]{32}(?![\w])", False),
]
_PREFIXED = [(name, re.compile(rx), loose) for name, rx, loose in _PREFIXED_RULES]
_LONG_TOKEN = re.compile(r"[A-Za-z0-9_\-+/=.~|%]{20,}")

_PEM = re.compile(
    r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----(?P<body>[\s\S]*?)"
    r"(?:-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|\Z)"
)

# Credentials inside URLs: scheme://user:password@host
_URL_CREDS = re.compile(
    r"(?i)\b[a-z][a-z0-9+.-]{1,15}://(?P<user>[^\s:/@\"'<>]{0,100}):(?P<pw>[^\s/@\"'<>]{1,200})@(?=[\w\[])"
)
# curl -u user:password / --user "user:password"
_CURL_USER = re.compile(
    r"(?:^|[\s;|&(])(?:-u|--user)(?:\s+|\s*\\?\s*\n\s*|=)"
    r"(?P<cred>\"[^\"\n]*\"(?::\"[^\"\n]*\")?|'[^'\n]*'|[^\s'\"]+(?:'[^'\n]*')?)"
)
# Authorization: Bearer xyz / Basic xyz / token xyz
_AUTH_HEADER = re.compile(
    r"(?i)\b(?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?(?:(?:bearer|basic|token|digest|api-token|apikey|"
    r"sso-key|negotiate|bot)\s+)?(?P<val>[^\s\"',;)]+)"
)
_BEARER = re.compile(r"(?<![\w-])[Bb]earer\s+(?P<val>[A-Za-z0-9_~+/.=-]{12,})")
# Bundler per-host credentials (BUNDLE_GEMS__EXAMPLE__COM=user:password)
_BUNDLER = re.compile(r"\bBUNDLE_[A-Z0-9_]*__[A-Z]{2,}[\"']?\s*[:=]\s*[\"']?(?P<val>[^\s\"';&]+:[^\s\"';&]+)")
# Kubernetes Secret manifests: base64 values under data:
_K8S_KIND = re.compile(r"(?im)^\s*kind:\s*[\"']?secret[\"']?\s*$")
_K8S_VALUE = re.compile(
    r"(?m)^[ \t]+[\w.-]+:[ \t]*(?:[|>][-+]?[ \t]*\n[ \t]+)?[\"']?(?P<val>[A-Za-z0-9+/]{12,}={0,2})[\"']?"
    r"[ \t]*$"
)
# vendor-specific key names whose value is a credential although the name holds no "secret" word
_VENDOR_ASSIGN = re.compile(
    r"(?i)\b(?:sonar[\w.]*(?:login|token)|sumo[\w.]*access[._-]?id)[\"']?\s*(?::{1,3}=|\?=|=|:)\s*[\"']?"
    r"(?P<val>[A-Za-z0-9_-]{12,})"
)

# key = value assignments whose key names a secret
_PASSWORD_WORDS = {"pass", "pw", "psw", "pwd", "pin", "passcode", "passphrase"}
_TOKEN_STEMS = ("secret", "token", "credential", "creds", "apikey", "accesskey", "privatekey", "authkey",
                "bearer", "jwt")
_KEY_QUALIFIERS = {
    "api", "access", "secret", "private", "auth", "signing", "encryption", "master", "account", "client",
    "app", "application", "license", "session", "service", "admin", "root", "consumer", "shared", "storage",
    "subscription", "webhook", "sas", "ssh", "gpg", "pgp", "encrypt", "decrypt", "hmac", "jwt", "secure",
    "user", "personal", "developer", "dev", "prod", "live", "x",
}
_NAME_NEG_LAST = {
    "id", "ids", "name", "names", "length", "len", "size", "url", "uri", "urls", "endpoint", "file", "files",
    "path", "paths", "dir", "type", "types", "audience", "version", "field", "fields", "header", "headers",
    "param", "params", "prefix", "suffix", "format", "policy", "count", "expiry", "expires", "expiration",
    "ttl", "timeout", "label", "mode", "enabled", "required", "pattern", "regex", "hint", "min", "max",
    "message", "placeholder", "location", "store", "provider", "method", "class", "manager", "service",
    "generator", "validator", "strength", "rules", "policy", "reset", "changed", "change", "hash", "salt",
    "alg", "algorithm", "scope", "scopes", "kind", "ref", "reference", "source", "env", "var", "variable",
    "key_id", "input", "filter", "lifetime", "issuer", "uses", "limit", "duration", "endpoint", "host",
    "server", "user", "username", "owner", "usage", "date", "time", "at", "tokens", "keys", "secrets",
    "passwords", "attempts", "error", "errors", "valid", "invalid", "bytes", "bits", "separator", "char",
    "chars", "index", "template", "mapping", "manager",
}
_NAME_NEG_ANY = {"public", "pub", "csrf", "xsrf", "publishable", "anon", "next", "page", "cursor"}

_KEYWORD_PREFILTER = ("pass", "pwd", "secret", "token", "key", "auth", "cred", "bearer", "login", "--user",
                      "-u ", "://", "kind:", "bundle_", "pw", "pin", "jwt", "sonar", "sumo")
_NAME_KEYWORD = re.compile(
    r"(?i)pass|pwd|secret|token|credential|creds|key|auth|bearer|\bpw\b|\bpsw\b|\bpin\b|jwt"
)
_ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
_ASSIGN_TAIL = re.compile(
    r"(?P<nq>[\"'`]?)[ \t]*(?:\])?[ \t]*(?P<op>:{1,3}=|\?=|\+=|=>|<-|==?|:|,|\s(?=[\"'`]?\S))"
    r"[ \t]*(?:\[[ \t]*)?"
    r"(?:(?P<q>[\"'`])(?P<qval>[^\"'`\n]{1,300})(?P=q)|(?P<val>[^\s\"'`,;<>)\]}]{1,300}))"
)
_NL_SECRET = re.compile(
    r"(?i)\b(?:password|passcode|passphrase|passwd|pin(?:\s+code)?|pw|api\s+key|secret\s+key|access\s+token|"
    r"token|secret)\s+(?:is|was|=|:|->)\s+[\"']?(?P<val>[^\s\"']{4,200})"
)
_REFERENCE_SCHEMES = ("http://", "https://", "file:", "env:", "vault:", "secret:", "arn:", "ref+", "op://")
_ENV_NAME = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")
_HOSTNAME = re.compile(r"^(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,}$")
# human-readable identifiers: lower-case words and short numbers (jjwt-jackson-0.11.2, my-app_v2)
_SLUG = re.compile(r"^(?:[a-z]+|v?\d{1,3})(?:[ ._-](?:[a-z]+|v?\d{1,3}))*$")
_TOKEN68 = re.compile(r"^[A-Za-z0-9_~+/.=:@!#*-]+$")
_XML_KEY_VALUE = re.compile(
    r'(?i)\bkey\s*=\s*"(?P<name>[^"<>]{1,80})"\s+value\s*=\s*"(?P<val>[^"<>]{0,300})"'
)
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_CODE_REF = re.compile(r"^[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)+(?:\(.*)?$|^[A-Za-z_]\w*\(.*$")
_FILEISH = re.compile(
    r"^(?:[~.]?/|[A-Za-z]:\\)|^[\w.-]+/[\w./-]+$|"
    r"^[\w-]+\.(?:pem|key|p12|pfx|json|ya?ml|txt|env|cfg|conf|ini|crt|cer|jks|keystore|xml|properties|toml)$",
    re.I,
)


def _name_words(name: str) -> list[str]:
    words: list[str] = []
    for part in re.split(r"[^A-Za-z0-9]+", name):
        if not part:
            continue
        words.extend(w.lower() for w in _CAMEL.findall(part))
    return words


def _secret_name_class(name: str) -> str | None:
    """'password' / 'token' when an identifier names a secret, else None."""
    words = _name_words(name)
    if not words:
        return None
    if words[-1] in _NAME_NEG_LAST or any(w in _NAME_NEG_ANY for w in words):
        return None
    joined = "".join(words)
    for w in words:
        if "passw" in w or "pwd" in w or w in _PASSWORD_WORDS:
            return "password"
    for stem in _TOKEN_STEMS:
        if stem in joined:
            if stem == "token" and any(w.startswith("tokeniz") for w in words):
                return None
            return "token"
    for a, b in zip(words, words[1:]):
        if b == "key" and a in _KEY_QUALIFIERS:
            return "token"
    if words[-1] == "key" and len(words) > 1 and _ENV_NAME.match(name):
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
    if v.lower().startswith(_REFERENCE_SCHEMES):
        return False
    if "@" in v and "." in v.split("@")[-1] and " " not in v:  # e-mail addresses are handled as EMAIL
        return False
    if _FILEISH.search(v) or _HOSTNAME.match(v):
        return False
    if v.startswith(("ENC[", "enc:", "sops:")):  # already encrypted (SOPS and friends)
        return False
    if not quoted:
        if any(c in v for c in "[({"):
            return False
        if _CODE_REF.match(v):
            return False
        if re.fullmatch(r"[A-Za-z_]+", v):  # a bare identifier is a variable, not a value
            return False
    if name_class != "password":
        if v.isdigit() or any(c.isspace() for c in v) or _SLUG.match(v):
            return False
    return True


# --------------------------------------------------------------------------------------------------


class Redactor:
    """Replace PII and secrets with stable per-principal tokens before anything is stored or embedded."""

    def __init__(
        self,
        vault: Vault | None = None,
        *,
        allow_values: Iterable[str] = (),
        allow_patterns: Iterable[str | re.Pattern[str]] = (),
        disabled_principals: Iterable[str] = (),
        enabled: bool = True,
    ) -> None:
        self.vault = vault
        self.enabled = bool(enabled)
        self.allow_values = {str(v).strip().casefold() for v in allow_values if str(v).strip()}
        self.allow_patterns: list[re.Pattern[str]] = []
        for pat in allow_patterns:
            if isinstance(pat, re.Pattern):
                self.allow_patterns.append(pat)
                continue
            try:
                self.allow_patterns.append(re.compile(str(pat)))
            except re.error as exc:
                raise MemdeckError(f"redaction.allow_patterns: invalid regex {pat!r}: {exc}") from None
        self.disabled_principals = {str(p) for p in disabled_principals}
        self._memory: dict[str, dict[tuple[str, str], str]] = {}
        self._counters: dict[str, dict[str, int]] = {}

    @classmethod
    def from_config(cls, config: dict[str, Any], vault: Vault | None) -> Redactor:
        section = (config or {}).get("redaction") or {}
        if not isinstance(section, dict):
            raise MemdeckError("config [redaction] must be a table")

        def _list(key: str) -> list[str]:
            value = section.get(key) or []
            if isinstance(value, str):
                value = [value]
            if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
                raise MemdeckError(f"redaction.{key} must be a list of strings")
            return list(value)

        enabled = section.get("enabled", True)
        if not isinstance(enabled, bool):
            raise MemdeckError("redaction.enabled must be true or false")
        return cls(
            vault,
            allow_values=_list("allow_values"),
            allow_patterns=_list("allow_patterns"),
            disabled_principals=_list("disabled_principals"),
            enabled=enabled,
        )

    # ------------------------------------------------------------------ public API

    def active_for(self, principal: str) -> bool:
        return self.enabled and principal not in self.disabled_principals

    def redact(self, text: str, principal: str) -> RedactionResult:
        if not isinstance(text, str):
            raise TypeError(f"redact() needs a str, got {type(text).__name__}")
        if not text or not self.active_for(principal):
            return RedactionResult(text, [])
        spans = self._allowed(text, self.detect(text))
        if not spans:
            return RedactionResult(text, [])
        tokens = self._tokens(principal, [(s.kind, text[s.start:s.end]) for s in spans])
        findings = [Finding(s.kind, tok, s.start, s.end, s.rule) for s, tok in zip(spans, tokens)]
        parts: list[str] = []
        pos = 0
        for f in findings:
            parts.append(text[pos:f.start])
            parts.append(f.token)
            pos = f.end
        parts.append(text[pos:])
        return RedactionResult("".join(parts), findings)

    def redact_many(self, texts: Sequence[str], principal: str) -> list[RedactionResult]:
        if not self.active_for(principal):
            return [RedactionResult(t, []) for t in texts]
        detected = [self._allowed(t, self.detect(t)) if t else [] for t in texts]
        wanted = [(s.kind, t[s.start:s.end]) for t, spans in zip(texts, detected) for s in spans]
        tokens = iter(self._tokens(principal, wanted) if wanted else [])
        out: list[RedactionResult] = []
        for text, spans in zip(texts, detected):
            if not spans:
                out.append(RedactionResult(text, []))
                continue
            findings = [Finding(s.kind, next(tokens), s.start, s.end, s.rule) for s in spans]
            parts: list[str] = []
            pos = 0
            for f in findings:
                parts.append(text[pos:f.start])
                parts.append(f.token)
                pos = f.end
            parts.append(text[pos:])
            out.append(RedactionResult("".join(parts), findings))
        return out

    def redact_value(self, obj: Any, principal: str) -> Any:
        """Redact every string inside a tag, a metadata dict or a list of them (keys are left as they are)."""
        if isinstance(obj, str):
            return self.redact(obj, principal).text
        if isinstance(obj, dict):
            return {k: self.redact_value(v, principal) for k, v in obj.items()}
        if isinstance(obj, list):
            return [self.redact_value(v, principal) for v in obj]
        if isinstance(obj, tuple):
            return tuple(self.redact_value(v, principal) for v in obj)
        return obj

    def reveal(self, text: str, principal: str) -> str:
        """Put the original values back (needs the vault, or this instance's in-memory map)."""
        if self.vault is not None:
            return self.vault.reveal(principal, text)
        table = {tok: val for (_, val), tok in self._memory.get(principal, {}).items()}
        return TOKEN_RE.sub(lambda m: table.get(m.group(0), m.group(0)), text)

    # ------------------------------------------------------------------ detection

    def detect(self, text: str) -> list[_Span]:
        """All non-overlapping detections in text, sorted by position (allow-lists not applied)."""
        spans: list[_Span] = []
        if "@" in text:
            self._emails(text, spans)
        if _DIGIT.search(text):
            self._numbers(text, spans)
        if text.count(":") >= 2:
            self._ipv6(text, spans)
        self._secrets(text, spans)
        if not spans:
            return spans
        return _resolve(_repeats(text, _resolve(spans)))

    def _allowed(self, text: str, spans: list[_Span]) -> list[_Span]:
        if not (self.allow_values or self.allow_patterns):
            return spans
        keep = []
        for s in spans:
            value = text[s.start:s.end]
            if value.strip().casefold() in self.allow_values:
                continue
            if any(p.search(value) for p in self.allow_patterns):
                continue
            keep.append(s)
        return keep

    @staticmethod
    def _emails(text: str, spans: list[_Span]) -> None:
        for m in _EMAIL.finditer(text):
            start = m.start()
            if text[start - 1:start] == ":" and _USERINFO_BEFORE.search(text, max(0, start - 130), start):
                continue  # scheme://user:password@host - the password is a SECRET, not an address
            spans.append(_Span(start, m.end(), "EMAIL", "email"))

    @staticmethod
    def _ipv6(text: str, spans: list[_Span]) -> None:
        import ipaddress

        for m in _IPV6_CAND.finditer(text):
            cand = m.group(0)
            if cand.count(":") < 2:
                continue
            try:
                addr = ipaddress.IPv6Address(cand)
            except ValueError:
                continue
            if addr.is_loopback or addr.is_unspecified:
                continue
            spans.append(_Span(m.start(), m.end(), "IP", "ipv6"))

    def _numbers(self, text: str, spans: list[_Span]) -> None:
        # IPv4
        if "." in text:
            for m in _IPV4.finditer(text):
                first = m.group(1).split(".", 1)[0]
                if first in ("0", "127", "255"):
                    continue
                if _VERSION_BEFORE.search(text, max(0, m.start() - 12), m.start()):
                    continue  # "version 1.2.0.4", "build 10.0.19041.1"
                spans.append(_Span(m.start(1), m.end(1), "IP", "ipv4"))
        # SSN
        if "-" in text:
            for m in _SSN_DASHED.finditer(text):
                if _ssn_valid(m.group(1), m.group(2), m.group(3)):
                    spans.append(_Span(m.start(), m.end(), "SSN", "ssn"))
        if _SSN_CONTEXT.search(text):
            for m in _SSN_LOOSE.finditer(text):
                if not _ssn_valid(m.group(1), m.group(2), m.group(3)):
                    continue
                if _context(text, m.start(), _SSN_CONTEXT, 60):
                    spans.append(_Span(m.start(), m.end(), "SSN", "ssn-context"))
        # payment cards
        for m in _CARD.finditer(text):
            raw = m.group(0)
            digits = raw.replace(" ", "").replace("-", "")
            if not 12 <= len(digits) <= 19 or not _card_groups_ok(raw) or not _luhn(digits):
                continue
            if len(set(digits)) == 1:
                continue
            ctx = _context(text, m.start(), _CARD_CONTEXT, 48)
            if ctx or (len(digits) >= 13 and _card_brand_ok(digits)):
                spans.append(_Span(m.start(), m.end(), "CARD", "card"))
        # IBAN
        for m in _IBAN.finditer(text):
            cand = m.group(1)
            start = m.start(1)
            # the greedy match may have swallowed following words: drop trailing groups until it checks out
            while True:
                compact = cand.replace(" ", "")
                if 15 <= len(compact) <= 34 and _iban_ok(compact):
                    if compact[:2].upper() in _IBAN_LENGTHS or _context(text, start, _IBAN_CONTEXT, 40):
                        spans.append(_Span(start, start + len(cand), "IBAN", "iban"))
                    break
                if " " not in cand:
                    break
                cand = cand.rsplit(" ", 1)[0]
        # phone numbers
        self._phones(text, spans)

    def _phones(self, text: str, spans: list[_Span]) -> None:
        unresolved: list[tuple[int, int]] = []
        for m in _PHONE_CAND.finditer(text):
            raw = m.group(0)
            ndig = sum(c.isdigit() for c in raw)
            if not 7 <= ndig <= 15:
                continue
            start, end = m.start(), m.end()
            if _DATE_LIKE.match(raw) or _DATE_INSIDE.search(raw):
                continue
            if start > 0 and text[start - 1] in "$€£¥#":
                continue
            ssn_shaped = _SSN_SHAPE.match(raw) is not None
            strong = (
                (raw.startswith("+") and ndig >= 8)
                or "(0)" in raw
                or re.search(r"\d\s?(?:x|ext)", raw) is not None
                or _NANP.match(raw) is not None
            )
            pos_ctx = _last_end(_PHONE_CONTEXT_BEFORE, text, start, 40)
            neg_ctx = _last_end(_PHONE_CONTEXT_NEG, text, start, 28)
            if strong or (pos_ctx > neg_ctx) or _PHONE_CONTEXT_AFTER.match(text[end:end + 14]):
                # the nearest keyword decides: "call me about order 12345678" is not a phone number
                spans.append(_Span(start, end, "PHONE", "phone"))
                continue
            if neg_ctx >= 0:
                continue
            if _context(text, start, _PHONE_CONTEXT_WEAK, 16):
                spans.append(_Span(start, end, "PHONE", "phone"))
            elif not ssn_shaped and (" " in raw or "-" in raw or "." in raw or "(" in raw or ndig >= 10):
                unresolved.append((start, end))
        if unresolved:
            spans.extend(_phonenumbers_spans(text, unresolved[:_PHONE_LIB_MAX_CANDIDATES]))

    def _secrets(self, text: str, spans: list[_Span]) -> None:
        # 1. tokens with an issuer prefix: only where a long token exists
        seen: set[tuple[int, int]] = set()
        for lm in _LONG_TOKEN.finditer(text):
            lo = max(0, lm.start() - 24)
            hi = lm.end()
            for name, rx, loose in _PREFIXED:
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
                        spans.append(_Span(m.start(), m.end(), "SECRET", name))
        if "-----BEGIN" in text:
            for m in _PEM.finditer(text):
                body = re.sub(r"\\n|\s", "", m.group("body"))
                if len(re.findall(r"[A-Za-z0-9+/=]", body)) >= 40:
                    spans.append(_Span(m.start(), m.end(), "SECRET", "private-key"))
        low = text.lower()
        if not any(k in low for k in _KEYWORD_PREFILTER):
            return
        # 2. credentials in URLs, curl -u, Authorization headers, Bundler, k8s Secret manifests
        if "://" in text and "@" in text:
            for m in _URL_CREDS.finditer(text):
                pw = m.group("pw")
                if not _is_placeholder(pw, loose=True) and len(pw) >= 3:
                    spans.append(_Span(m.start("pw"), m.end("pw"), "SECRET", "url-credentials"))
        if "-u" in text or "--user" in text:
            for m in _CURL_USER.finditer(text):
                span = _curl_secret_span(m)
                if span:
                    spans.append(_Span(span[0], span[1], "SECRET", "curl-user"))
        if "auth" in low:
            for m in _AUTH_HEADER.finditer(text):
                val = m.group("val")
                if len(val) >= 8 and _TOKEN68.match(val) and not _is_placeholder(val, loose=True):
                    spans.append(_Span(m.start("val"), m.end("val"), "SECRET", "authorization-header"))
        if "earer" in text:
            for m in _BEARER.finditer(text):
                if not _is_placeholder(m.group("val"), loose=True):
                    spans.append(_Span(m.start("val"), m.end("val"), "SECRET", "bearer-token"))
        if "BUNDLE_" in text:
            for m in _BUNDLER.finditer(text):
                if not _is_placeholder(m.group("val"), loose=True):
                    spans.append(_Span(m.start("val"), m.end("val"), "SECRET", "bundler-credentials"))
        if "kind" in low and _K8S_KIND.search(text):
            for m in _K8S_VALUE.finditer(text):
                val = m.group("val")
                if re.search(r"[\d+=]", val) and not _is_placeholder(val, loose=True):
                    spans.append(_Span(m.start("val"), m.end("val"), "SECRET", "k8s-secret-data"))
        if "sonar" in low or "sumo" in low:
            for m in _VENDOR_ASSIGN.finditer(text):
                if not _is_placeholder(m.group("val"), loose=True):
                    spans.append(_Span(m.start("val"), m.end("val"), "SECRET", "vendor-assignment"))
        # 3. generic "name = value" where the name says secret
        n = len(text)
        last_end = -1
        for km in _NAME_KEYWORD.finditer(text):
            if km.start() < last_end:
                continue
            start = km.start()
            while start > 0 and text[start - 1] in _ID_CHARS and km.start() - start < 80:
                start -= 1
            end = km.end()
            while end < n and text[end] in _ID_CHARS and end - km.end() < 80:
                end += 1
            last_end = end
            name = text[start:end].strip(".-")
            if not name or "authorization" in name.lower():
                continue
            name_class = _secret_name_class(name)
            if name_class is None:
                continue
            tail = _ASSIGN_TAIL.match(text, end)
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
            spans.append(_Span(vstart, vstart + len(stripped), "SECRET", f"assignment-{name_class}"))
        if "value" in low:
            for m in _XML_KEY_VALUE.finditer(text):
                name_class = _secret_name_class(m.group("name"))
                val = m.group("val")
                if name_class and _value_is_secretish(val, name_class, True):
                    spans.append(_Span(m.start("val"), m.end("val"), "SECRET", f"xml-{name_class}"))
        # 4. natural language: "my password is hunter22"
        for m in _NL_SECRET.finditer(text):
            val = m.group("val").rstrip(".,;:!?)")
            if len(val) < 4 or _is_placeholder(val):
                continue
            if not (re.search(r"\d", val) or re.search(r"[^\w']", val) or re.search(r"[a-z][A-Z]", val)):
                continue
            if "@" in val or val.lower().startswith(("http", "<", "the ", "a ")):
                continue
            spans.append(_Span(m.start("val"), m.start("val") + len(val), "SECRET", "stated-secret"))

    # ------------------------------------------------------------------ tokens

    def _tokens(self, principal: str, items: list[tuple[str, str]]) -> list[str]:
        if self.vault is not None:
            return self.vault.tokens_for(principal, items)
        table = self._memory.setdefault(principal, {})
        counters = self._counters.setdefault(principal, {})
        out = []
        for kind, value in items:
            tok = table.get((kind, value))
            if tok is None:
                counters[kind] = counters.get(kind, 0) + 1
                tok = f"<{kind}_{counters[kind]}>"
                table[(kind, value)] = tok
            out.append(tok)
        return out


# --------------------------------------------------------------------------------------------------


def _strip_prefix(value: str) -> str:
    """The random part of a prefixed token (after the last '_' or '-' within the first 16 chars)."""
    head = value[:16]
    cut = max(head.rfind("_"), head.rfind("-"))
    return value[cut + 1:] if cut >= 0 else value


def _ssn_valid(area: str, group: str, serial: str) -> bool:
    return area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


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


def _phonenumbers_spans(text: str, candidates: list[tuple[int, int]]) -> list[_Span]:
    """Ask libphonenumber about candidates that carried no context: a quick parse/is_valid per region, then
    PhoneNumberMatcher in the region that accepted the number, for the exact span."""
    try:
        import phonenumbers
    except ImportError:  # pragma: no cover
        return []
    out: list[_Span] = []
    for start, end in candidates:
        raw = text[start:end]
        lo, hi = max(0, start - 4), min(len(text), end + 4)
        for reg in _PHONE_REGIONS:
            try:
                if not phonenumbers.is_valid_number(phonenumbers.parse(raw, reg)):
                    continue
                # the matcher also checks the grouping and the surroundings, which parse() does not
                leniency = phonenumbers.Leniency.VALID
                matches = list(phonenumbers.PhoneNumberMatcher(text[lo:hi], reg, leniency=leniency))
            except Exception:  # noqa: BLE001 - NumberParseException and library hiccups: not a number
                continue
            hits = [(lo + m.start, lo + m.end) for m in matches if lo + m.start < end and lo + m.end > start]
            if hits:
                out.append(_Span(hits[0][0], hits[0][1], "PHONE", "phone-lib"))
                break
    return out


def _repeats(text: str, spans: list[_Span]) -> list[_Span]:
    """Add every other occurrence of each detected value, so no copy of it survives (a secret quoted twice,
    an address repeated where the context that revealed it is missing)."""
    out = list(spans)
    starts = {(s.start, s.end) for s in spans}
    done: set[str] = set()
    for s in spans:
        value = text[s.start:s.end]
        if len(value) < 4 or value in done:
            continue
        done.add(value)
        pos = text.find(value)
        while pos >= 0:
            if (pos, pos + len(value)) not in starts:
                out.append(_Span(pos, pos + len(value), s.kind, s.rule))
            pos = text.find(value, pos + len(value))
    return out


def _resolve(spans: list[_Span]) -> list[_Span]:
    """Keep the longest of overlapping detections (ties: higher priority, then earlier)."""
    ordered = sorted(set(spans), key=lambda s: (-(s.end - s.start), -_PRIORITY[s.kind], s.start, s.rule))
    starts: list[int] = []
    taken: list[_Span] = []  # non-overlapping, sorted by start
    for s in ordered:
        if s.end <= s.start:
            continue
        i = bisect.bisect_right(starts, s.start)
        if i > 0 and taken[i - 1].end > s.start:
            continue
        if i < len(taken) and taken[i].start < s.end:
            continue
        starts.insert(i, s.start)
        taken.insert(i, s)
    return taken
