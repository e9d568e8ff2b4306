"""Write-time redaction: find personal data and secrets in text and replace each value with a stable token.

Every value found becomes a token such as ``<EMAIL_1>`` or ``<SECRET_3>``. The same value for the same
principal always gets the same token; the mapping lives in the principal's encrypted :class:`Vault`
(or, without a vault, in memory for the life of the :class:`Redactor`).

Detection is plain regular expressions plus checksums (Luhn for cards, mod-97 for IBANs) and
``phonenumbers`` for phone numbers that carry no other signal. Everything runs behind cheap prefilters
(``'@' in text``, "is there a digit", "is there a long token", a few keyword tests), so a sentence with
nothing to redact costs a few microseconds. Secrets are found by :mod:`.detectors` with the rule tables
in :mod:`.rules`; national ids, dates of birth, street addresses, passports, bank accounts, medical record
numbers, wallets, spelled-out e-mail addresses and remembered codes by :mod:`.identifiers`, each kind with
its own token (``<NATIONAL_ID_1>``). presidio and detect-secrets are not used: measured on the shared data they were slower
and, for secrets, far less precise than these rules (see bench/).

A :class:`Finding` records kind, token and position in the original text - never the value itself.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memdeck.core.config import RedactionSettings, Settings
from memdeck.core.errors import MemdeckError
from memdeck.core.privacy.credfiles import find_credential_files
from memdeck.core.privacy.detectors import Span as _Span
from memdeck.core.privacy.detectors import find_secrets
from memdeck.core.privacy.identifiers import find_identifiers

if TYPE_CHECKING:  # pragma: no cover
    from memdeck.core.privacy.vault import Vault

KINDS = (
    "EMAIL",
    "PHONE",
    "CARD",
    "IBAN",
    "SSN",
    "IP",
    "SECRET",
    "NATIONAL_ID",
    "DOB",
    "ADDRESS",
    "PASSPORT",
    "BANK_ACCOUNT",
    "MEDICAL_ID",
    "WALLET",
    "DEVICE_ID",
    "VEHICLE_ID",
    "EMPLOYEE_ID",
)
# When two detections overlap the longer wins; on equal length the higher priority wins.
_PRIORITY = {
    "SECRET": 7,
    "CARD": 6,
    "IBAN": 6,
    "WALLET": 6,
    "SSN": 5,
    "NATIONAL_ID": 4,  # below SSN: a US number named "SSN" stays an SSN
    "PASSPORT": 5,
    "BANK_ACCOUNT": 5,
    "MEDICAL_ID": 5,
    "DEVICE_ID": 5,
    "VEHICLE_ID": 5,
    "EMPLOYEE_ID": 5,
    "DOB": 5,
    "IP": 5,
    "EMAIL": 4,
    "ADDRESS": 3,
    "PHONE": 2,
}
TOKEN_RE = re.compile(r"<(" + "|".join(KINDS) + r")_(\d{1,9})>")


@dataclass(frozen=True, slots=True)
class Finding:
    """One redacted value: its kind, the token that replaced it and its span in the original text."""

    kind: str
    token: str
    start: int
    end: int
    rule: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "token": self.token,
            "start": self.start,
            "end": self.end,
            "rule": self.rule,
        }


@dataclass(slots=True)
class RedactionResult:
    text: str
    findings: list[Finding] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.findings)


# --------------------------------------------------------------------------------------------------
# structured PII

_DIGIT = re.compile(r"\d")

_EMAIL = re.compile(
    r"(?<![\w.%+-])[\w][\w.%+-]{0,63}@[^\W_](?:[\w-]{0,62}[^\W_])?(?:\.[^\W_](?:[\w-]{0,62}[^\W_])?)*"
    r"\.[^\W\d_]{2,24}(?![\w-])"
)

_USERINFO_BEFORE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]{1,15}://[^\s:/@\"'<>]{0,100}:$")
# the address part of an e-mail look-alike that starts inside a password: scheme://user:pa~ss@host,
# jdbc:oracle:thin:user/pa*ss@host
_PASSWORD_BEFORE = re.compile(
    r"(?:[A-Za-z][A-Za-z0-9+.-]{1,15}://[^\s:/@\"'<>]{0,100}:|jdbc:oracle:[a-z0-9]+:[\w$#.-]{1,64}/)"
    r"[^\s/\"'<>]{1,200}$"
)

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
    r"(?i)\b(?:ssn|ss#|ss\s*no|social[\s-]*security|social[\s-]*sec|sozialversicherung|"
    # US talk calls the number "social" alone: "her social is 219-09-9999", "social #: ..."
    r"social(?:\s+(?:number|no\.?|#))?(?:'s|\s+(?:is|was)\b|\s*[:#]))"
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
    "AD": 24,
    "AE": 23,
    "AL": 28,
    "AT": 20,
    "AZ": 28,
    "BA": 20,
    "BE": 16,
    "BG": 22,
    "BH": 22,
    "BR": 29,
    "BY": 28,
    "CH": 21,
    "CR": 22,
    "CY": 28,
    "CZ": 24,
    "DE": 22,
    "DK": 18,
    "DO": 28,
    "EE": 20,
    "EG": 29,
    "ES": 24,
    "FI": 18,
    "FO": 18,
    "FR": 27,
    "GB": 22,
    "GE": 22,
    "GI": 23,
    "GL": 18,
    "GR": 27,
    "GT": 28,
    "HR": 21,
    "HU": 28,
    "IE": 22,
    "IL": 23,
    "IQ": 23,
    "IS": 26,
    "IT": 27,
    "JO": 30,
    "KW": 30,
    "KZ": 20,
    "LB": 28,
    "LC": 32,
    "LI": 21,
    "LT": 20,
    "LU": 20,
    "LV": 21,
    "LY": 25,
    "MC": 27,
    "MD": 24,
    "ME": 22,
    "MK": 19,
    "MR": 27,
    "MT": 31,
    "MU": 30,
    "NL": 18,
    "NO": 15,
    "PK": 24,
    "PL": 28,
    "PS": 29,
    "PT": 25,
    "QA": 29,
    "RO": 24,
    "RS": 22,
    "SA": 24,
    "SC": 31,
    "SE": 24,
    "SI": 19,
    "SK": 24,
    "SM": 27,
    "ST": 25,
    "SV": 28,
    "TL": 23,
    "TN": 24,
    "TR": 26,
    "UA": 29,
    "VA": 22,
    "VG": 24,
    "XK": 20,
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
    def from_settings(cls, settings: RedactionSettings, vault: Vault | None) -> Redactor:
        return cls(
            vault,
            allow_values=list(settings.allow_values),
            allow_patterns=list(settings.allow_patterns),
            disabled_principals=list(settings.disabled_principals),
            enabled=settings.enabled,
        )

    @classmethod
    def from_config(cls, config: Mapping[str, Any], vault: Vault | None) -> Redactor:
        """From a config mapping (checked as config.toml is): its ``[redaction]``."""
        return cls.from_settings(Settings.from_mapping(config).redaction, vault)

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
        tokens = self._tokens(principal, [(s.kind, text[s.start : s.end]) for s in spans])
        findings = [
            Finding(s.kind, tok, s.start, s.end, s.rule) for s, tok in zip(spans, tokens, strict=False)
        ]
        parts: list[str] = []
        pos = 0
        for f in findings:
            parts.append(text[pos : f.start])
            parts.append(f.token)
            pos = f.end
        parts.append(text[pos:])
        return RedactionResult("".join(parts), findings)

    def redact_many(self, texts: Sequence[str], principal: str) -> list[RedactionResult]:
        if not self.active_for(principal):
            return [RedactionResult(t, []) for t in texts]
        detected = [self._allowed(t, self.detect(t)) if t else [] for t in texts]
        wanted = [
            (s.kind, t[s.start : s.end]) for t, spans in zip(texts, detected, strict=False) for s in spans
        ]
        tokens = iter(self._tokens(principal, wanted) if wanted else [])
        out: list[RedactionResult] = []
        for text, spans in zip(texts, detected, strict=False):
            if not spans:
                out.append(RedactionResult(text, []))
                continue
            findings = [Finding(s.kind, next(tokens), s.start, s.end, s.rule) for s in spans]
            parts: list[str] = []
            pos = 0
            for f in findings:
                parts.append(text[pos : f.start])
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
        find_secrets(text, spans)
        find_credential_files(text, spans)
        find_identifiers(text, spans)
        if not spans:
            return spans
        return _resolve(_repeats(text, _resolve(spans)))

    def _allowed(self, text: str, spans: list[_Span]) -> list[_Span]:
        if not (self.allow_values or self.allow_patterns):
            return spans
        keep = []
        for s in spans:
            value = text[s.start : s.end]
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
            if text[start - 1 : start] == ":" and _USERINFO_BEFORE.search(text, max(0, start - 130), start):
                continue  # scheme://user:password@host - the password is a SECRET, not an address
            if (
                start
                and not text[start - 1].isspace()
                and _PASSWORD_BEFORE.search(text, max(0, start - 330), start)
            ):
                continue  # the tail of such a password (pa~ss@host): the password is a SECRET
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
            if strong or (pos_ctx > neg_ctx) or _PHONE_CONTEXT_AFTER.match(text[end : end + 14]):
                # the nearest keyword decides: "call me about order 12345678" is not a phone number
                spans.append(_Span(start, end, "PHONE", "phone"))
                continue
            if neg_ctx >= 0:
                continue
            if _context(text, start, _PHONE_CONTEXT_WEAK, 16):
                spans.append(_Span(start, end, "PHONE", "phone"))
            # a list of small numbers ("lottery numbers 4 8 15 16 23 42", "sizes 6 8 10 12") is no phone
            # number: no national format writes two single digits as groups of one
            elif (
                not ssn_shaped
                and (" " in raw or "-" in raw or "." in raw or "(" in raw or ndig >= 10)
                and sum(len(g) == 1 for g in re.split(r"[ .()-]+", raw) if g) < 2
            ):
                unresolved.append((start, end))
        if unresolved:
            spans.extend(_phonenumbers_spans(text, unresolved[:_PHONE_LIB_MAX_CANDIDATES]))

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


def _ssn_valid(area: str, group: str, serial: str) -> bool:
    return area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


def _phonenumbers_spans(text: str, candidates: list[tuple[int, int]]) -> list[_Span]:
    """Ask libphonenumber about candidates that carried no context: a quick parse/is_valid per region, then
    PhoneNumberMatcher in the region that accepted the number, for the exact span."""
    import phonenumbers  # a dependency; imported on first use because it is slow to import

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
    an address repeated where the context that revealed it is missing), inside a longer token too: no copy
    of a value found anywhere may stay readable. Values of three characters and more ("1::" too)."""
    out = list(spans)
    starts = {(s.start, s.end) for s in spans}
    done: set[str] = set()
    for s in spans:
        value = text[s.start : s.end]
        if len(value) < 3 or value in done:
            continue
        done.add(value)
        pos = text.find(value)
        while pos >= 0:
            end = pos + len(value)
            if (pos, end) not in starts:
                out.append(_Span(pos, end, s.kind, s.rule))
            pos = text.find(value, end)
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
