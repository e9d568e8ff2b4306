"""Personal identifiers beyond the basic types: national ID numbers, dates of birth, street addresses,
passports, bank accounts, medical record numbers, crypto wallets, spelled-out e-mail addresses and the
codes people keep in their heads (door and safe codes, CVVs, answers to security questions).

Two kinds of evidence, as for secrets:

* structure: a format with a check (UK NINO prefixes, Aadhaar Verhoeff, Spanish DNI/NIE letter, Italian
  codice fiscale check character, Swedish personnummer and Canadian SIN Luhn, German Steuer-ID ISO 7064,
  Brazilian CPF, Bitcoin base58check and bech32) is taken on its own where the shape is rare in prose, and
  only after a naming word where it is not (nine digits are a SIN only after "SIN");
* context: what has no structure (a passport number, a date of birth, a door code) is taken only right
  after the words that name it; a date in ordinary talk ("on 14 March we went hiking") is not a birth date.

Every detector sits behind a cheap test (a digit, a keyword), so plain sentences cost microseconds.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator

from memdeck.core.privacy.detectors import Span
from memdeck.core.privacy.rules import ASIDE, ASIDE_NAMES_OTHER, WHERE_FOR

_DIGIT = re.compile(r"\d")

# --------------------------------------------------------------------------------------------------
# checksums


def _luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


_VERHOEFF_D = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    [1, 2, 3, 4, 0, 6, 7, 8, 9, 5],
    [2, 3, 4, 0, 1, 7, 8, 9, 5, 6],
    [3, 4, 0, 1, 2, 8, 9, 5, 6, 7],
    [4, 0, 1, 2, 3, 9, 5, 6, 7, 8],
    [5, 9, 8, 7, 6, 0, 4, 3, 2, 1],
    [6, 5, 9, 8, 7, 1, 0, 4, 3, 2],
    [7, 6, 5, 9, 8, 2, 1, 0, 4, 3],
    [8, 7, 6, 5, 9, 3, 2, 1, 0, 4],
    [9, 8, 7, 6, 5, 4, 3, 2, 1, 0],
]
_VERHOEFF_P = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    [1, 5, 7, 6, 2, 8, 3, 0, 9, 4],
    [5, 8, 0, 3, 7, 9, 6, 1, 4, 2],
    [8, 9, 1, 6, 0, 4, 3, 5, 2, 7],
    [9, 4, 5, 3, 1, 2, 6, 8, 7, 0],
    [4, 2, 8, 6, 5, 7, 3, 9, 0, 1],
    [2, 7, 9, 3, 8, 0, 6, 4, 1, 5],
    [7, 0, 4, 6, 9, 1, 3, 2, 5, 8],
]


def verhoeff(digits: str) -> bool:
    c = 0
    for i, ch in enumerate(reversed(digits)):
        c = _VERHOEFF_D[c][_VERHOEFF_P[i % 8][int(ch)]]
    return c == 0


_DNI_LETTERS = "TRWAGMYFPDXBNJZSQVHLCKE"


def dni_ok(number: str, letter: str) -> bool:
    return _DNI_LETTERS[int(number) % 23] == letter.upper()


_CF_ODD = {
    **dict(zip("0123456789", [1, 0, 5, 7, 9, 13, 15, 17, 19, 21], strict=True)),
    **dict(
        zip(
            "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
            [1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23],
            strict=True,
        )
    ),
}


def codice_fiscale_ok(cf: str) -> bool:
    cf = cf.upper()
    total = 0
    for i, ch in enumerate(cf[:15]):
        if i % 2 == 0:  # odd positions, counted from 1
            total += _CF_ODD[ch]
        else:
            total += int(ch) if ch.isdigit() else ord(ch) - 65
    return chr(65 + total % 26) == cf[15]


def steuer_id_ok(d: str) -> bool:
    """German tax id: 11 digits, no leading zero, ISO 7064 MOD 11,10 check digit, and in the first ten one
    digit occurs twice or three times while the others occur at most once."""
    if len(d) != 11 or d[0] == "0":
        return False
    counts = sorted((d[:10].count(c) for c in set(d[:10])), reverse=True)
    if counts[0] not in (2, 3) or any(c > 1 for c in counts[1:]):
        return False
    product = 10
    for ch in d[:10]:
        s = (int(ch) + product) % 10 or 10
        product = (s * 2) % 11
    check = (11 - product) % 10
    return check == int(d[10])


def cpf_ok(d: str) -> bool:
    if len(d) != 11 or len(set(d)) == 1:
        return False
    for n in (9, 10):
        s = sum(int(d[i]) * (n + 1 - i) for i in range(n))
        if (s * 10 % 11) % 10 != int(d[n]):
            return False
    return True


def aba_ok(d: str) -> bool:
    if len(d) != 9 or len(set(d)) == 1:
        return False
    w = (3, 7, 1) * 3
    return sum(int(c) * k for c, k in zip(d, w, strict=True)) % 10 == 0


_B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def base58check_ok(s: str) -> bool:
    n = 0
    for ch in s:
        i = _B58.find(ch)
        if i < 0:
            return False
        n = n * 58 + i
    raw = n.to_bytes((n.bit_length() + 7) // 8, "big")
    raw = b"\x00" * (len(s) - len(s.lstrip("1"))) + raw
    if len(raw) < 5:
        return False
    body, check = raw[:-4], raw[-4:]
    return hashlib.sha256(hashlib.sha256(body).digest()).digest()[:4] == check


_BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"


def bech32_ok(s: str) -> bool:
    s = s.lower()
    hrp, _, data = s.rpartition("1")
    if not hrp or len(data) < 6 or any(c not in _BECH32 for c in data):
        return False
    values = [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp] + [_BECH32.index(c) for c in data]
    gen = (0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3)
    chk = 1
    for v in values:
        b = chk >> 25
        chk = (chk & 0x1FFFFFF) << 5 ^ v
        for i in range(5):
            chk ^= gen[i] if (b >> i) & 1 else 0
    return chk in (1, 0x2BC830A3)  # bech32, bech32m


def _date_ok(yy: int, mm: int, dd: int) -> bool:
    return 1 <= mm <= 12 and (1 <= dd <= 31 or 61 <= dd <= 91)  # 61-91: a Swedish co-ordination number


# --------------------------------------------------------------------------------------------------
# patterns

_SEP = r"[ \t.-]?"
# UK National Insurance number: two letters (HMRC's allowed prefixes), six digits, A-D
_NINO = re.compile(
    r"(?<![A-Za-z0-9])(?P<p>[A-Z]{2})[ \t]?(?P<d>\d{2}[ \t]?\d{2}[ \t]?\d{2})[ \t]?(?P<s>[A-D])(?![A-Za-z0-9])"
)
_NINO_BAD_PREFIX = {"BG", "GB", "NK", "KN", "TN", "NT", "ZZ"}
_NINO_CONTEXT = re.compile(r"(?i)\b(?:national\s+insurance|ni\s*(?:no|number|#)|nino)\b")
_AADHAAR = re.compile(r"(?<![\w.,/-])[2-9]\d{3}([ -]?)\d{4}\1\d{4}(?![\w]|[.,/-]\d)")
_AADHAAR_CONTEXT = re.compile(r"(?i)\b(?:aadhaa?r|uidai|uid)\b")
_DNI = re.compile(r"(?<![\w-])(?P<n>\d{8})[ -]?(?P<l>[A-Za-z])(?![\w-])")
_DNI_CONTEXT = re.compile(
    r"(?i)\b(?:dni|nif|nie|documento|d\.n\.i|spanish\s+id|id\s+card|identidad|identity|national\s+id)"
)
_OTHER_NUMBER = re.compile(
    r"(?i)\b(?:invoice|order|part|ref(?:erence)?|ticket|sku|serial|model|item|product|case|batch|lot|"
    r"tracking|booking|confirmation|receipt|account|policy|claim|build|version|no\.|nr\.?|#)"
)
_NIE = re.compile(r"(?<![\w-])(?P<x>[XYZ])[ -]?(?P<n>\d{7})[ -]?(?P<l>[A-Z])(?![\w-])")
_CF = re.compile(
    r"(?<![\w])[A-Za-z]{6}[0-9LMNPQRSTUV]{2}[ABCDEHLMPRSTabcdehlmprst][0-9LMNPQRSTUV]{2}[A-Za-z]"
    r"[0-9LMNPQRSTUV]{3}[A-Za-z](?![\w])"
)
_PERSONNUMMER = re.compile(r"(?<![\w-])(?:19|20)?(\d{2})(\d{2})(\d{2})([-+]?)(\d{4})(?![\w]|-\d)")
_PERSONNUMMER_CONTEXT = re.compile(
    r"(?i)\b(?:personnummer|pnr|personal\s+(?:identity\s+)?number|samordningsnummer)"
)
_SIN = re.compile(r"(?<![\w.-])\d{3}([ -]?)\d{3}\1\d{3}(?![\w]|[.-]\d)")
_SIN_CONTEXT = re.compile(r"(?i)\b(?:sin|social\s+insurance|num[ée]ro\s+d'assurance\s+sociale|nas)\b")
_STEUER = re.compile(r"(?<![\w.,/-])\d{2}([ ]?)\d{3}\1\d{3}\1\d{3}(?![\w]|[.,/-]\d)")
_STEUER_CONTEXT = re.compile(
    r"(?i)(?:steuer[- ]?id|steuer[- ]?identifikationsnummer|steuer[- ]?nummer|\bidnr\b|identifikationsnummer|"
    r"\btax\s+(?:id|identification)|\btin\b)"
)
_CPF = re.compile(r"(?<![\w.-])\d{3}\.\d{3}\.\d{3}-\d{2}(?![\w]|[.-]\d)")
_CPF_BARE = re.compile(r"(?<![\w.-])\d{11}(?![\w]|[.-]\d)")
_CPF_CONTEXT = re.compile(r"(?i)\bcpf\b")
_PAN_IN = re.compile(r"(?<![\w])[A-Z]{3}[PCHFATBLJG][A-Z]\d{4}[A-Z](?![\w])")
_BSN_CONTEXT = re.compile(r"(?i)\b(?:bsn|burgerservicenummer|sofinummer)\b")
# what follows the words naming an identifier: connector words, then the value
_ID_TAIL = (
    # a connector word ends where its word ends: "ist 12 ..." is not "is" and a value "t 12 ..."
    r"(?:'s)?(?:\s+(?:(?:is|was|are|reads|number|es|est|ist|è|är)\b|no\b\.?|=|:|->|-|#)){0,3}\s*[:#=]?\s*"
    # groups may be spaced ("12 345 678 901", "AB 12 34 56 C"), but a space never takes a word after the
    # number ("12345678Z y mi pasaporte"): after one comes a digit or a short capital group
    r"[\"'`]?(?P<val>(?=[A-Za-z0-9 .-]*\d{2})[A-Za-z0-9]"
    r"(?:[A-Za-z0-9]|[.-](?=[A-Za-z0-9])|[ ](?=\d|(?-i:[A-Z]{1,2})(?![A-Za-z]))){4,22}[A-Za-z0-9])"
)
# any other national identifier, after the words that name one
_ID_NAMED = re.compile(
    r"(?i)\b(?:national\s+(?:id|identity|identification|insurance)(?:\s+(?:card|number|no\.?|#))*|"
    r"(?:identity|id|identification)\s+(?:card\s+)?(?:number|no\.?|#)|citizen(?:ship)?\s+(?:id|number)|"
    r"personal\s+(?:id|identity|identification)\s+(?:number|code|no\.?)|tax\s+(?:id|identification|file)"
    r"(?:\s+(?:number|no\.?|#))?|\btin\b|social\s+insurance\s+(?:number|no\.?|#)|"
    r"\bsin\b|\bnin[o]?\b|ni\s+(?:number|no\.?)|aadhaa?r(?:\s+(?:number|no\.?|card))?|\bpan\s+(?:card|number)|"
    r"\bdni\b|\bnie\b|\bnif\b|codice\s+fiscale|personnummer|steuer[- ]?id|\bidnr\b|\bcpf\b|\bbsn\b|"
    r"\bpesel\b|\bnir\b|(?:num[ée]ro\s+de\s+)?s[ée]curit[ée]\s+sociale|\bcurp\b|\brut\b|\bnric\b|\bhkid\b|my\s*number|resident\s+registration\s+number|"
    r"driver'?s?\s+licen[cs]e(?:\s+(?:number|no\.?|#))?|driving\s+licen[cs]e(?:\s+(?:number|no\.?))?|"
    r"\bdl\s*(?:number|no\.?|#)|licen[cs]e\s+(?:number|no\.?|#)|\bein\b|\bitin\b|"
    r"employer\s+identification(?:\s+(?:number|no\.?|#))?|\bvat\s+(?:id|number|no\.?|registration\s+number))"
    r"(?:\s*\([A-Za-z]{2,6}\))?" + _ID_TAIL  # Tax ID (EIN) 12-3456789
)

_MONTHS = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|"
    r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_DATE = (
    r"(?:(?:19|20)\d\d[-/.](?:0?[1-9]|1[0-2])[-/.](?:0?[1-9]|[12]\d|3[01])"
    r"|(?:0?[1-9]|[12]\d|3[01])[-/.](?:0?[1-9]|1[0-2])[-/.](?:19|20)?\d\d"
    r"|(?:0?[1-9]|1[0-2])[-/.](?:0?[1-9]|[12]\d|3[01])[-/.](?:19|20)?\d\d"
    rf"|(?:0?[1-9]|[12]\d|3[01])(?:st|nd|rd|th)?(?:\s+of)?\s+{_MONTHS},?\s+(?:19|20)\d\d"
    rf"|{_MONTHS}\s+(?:0?[1-9]|[12]\d|3[01])(?:st|nd|rd|th)?,?\s+(?:19|20)\d\d)"
)
# a birthday without its year, after the same words: "born on 14 March", "DOB: March 14th"
_DAY_MONTH = (
    rf"(?:0?[1-9]|[12]\d|3[01])(?:st|nd|rd|th)?(?:\s+of)?\s+{_MONTHS}(?:,?\s+(?:19|20)\d\d)?"
    rf"|{_MONTHS}\s+(?:0?[1-9]|[12]\d|3[01])(?:st|nd|rd|th)?(?:,?\s+(?:19|20)\d\d)?"
)
_MONTHS_INTL = (
    r"(?:janvier|f[ée]vrier|mars|avril|mai|juin|juillet|ao[uû]t|septembre|octobre|novembre|d[ée]cembre|"
    r"enero|febrero|marzo|abril|mayo|junio|julio|agosto|sep?tiembre|octubre|noviembre|diciembre|"
    r"januar|j[äa]nner|februar|m[äa]e?rz|april|juni|juli|august|oktober|dezember|"
    r"gennaio|febbraio|aprile|maggio|giugno|luglio|settembre|ottobre|dicembre|"
    r"januari|februari|maart|mei|augustus)"
)
# a day and a month named in French, Spanish, German, Italian or Dutch, and its year: "14 mars 1987", "3. Mai"
_DAY_MONTH_INTL = (
    r"(?:0?[1-9]|[12]\d|3[01])\.?\s+(?:de\s+)?" + _MONTHS_INTL + r"(?:\s+(?:de\s+)?(?:19|20)\d\d)?"
)
# the words naming a birth date and what links them to it, in English, French, Spanish, German and Italian
_DOB_NAME = (
    r"(?i)\b(?:born(?:\s+on)?|date\s+of\s+birth|birth\s*date|birthdate|d\.?o\.?b\.?|geburtsdatum|"
    r"geboren(?:\s+(?:am|op))?|fecha\s+de\s+nacimiento|nac[ií](?:d[oa])?\s+el|date\s+de\s+naissance|n[ée]e?\s+le|"
    r"data\s+di\s+nascita|nat[oa]\s+il|birthday|"
    # the genealogist's "b." ("Jane Doe, b. 14.03.1987"), taken only before a date with its year (_contextual)
    r"(?<![\w.])b\.(?=[ \t]+\d))"
)
_DOB_LINK = r"(?:'s\b)?[\"']?(?:\s+(?:(?:is|was|on|the|ist|est|es|è|der|am|le|el|il)\b|=|:|-|\u2013|\u2014))*\s*[:=]?\s*[\"'`]?"
# "born on 14 March 1987", "né le 14 mars 1987", "Geburtsdatum ist der 14.03.1987"
_DOB = re.compile(
    _DOB_NAME + _DOB_LINK + r"(?P<val>" + _DATE + "|" + _DAY_MONTH + "|" + _DAY_MONTH_INTL + r")(?![\w])"
)
# German and Dutch put the verb last: "ich bin am 3. Mai 1985 geboren", "sie ist am 12.03.1990 in Wien
# geboren", "ik ben op 3 mei 1985 geboren". Only a whole date (day and month) between "am"/"op" and "geboren".
_DOB_VERB_LAST = re.compile(
    r"(?i)\b(?:bin|bist|ist|sind|seid|war|wurde|wurden|ben|is|zijn|werd|was)\s+(?:am|op)\s+"
    r"(?P<val>" + _DATE + "|" + _DAY_MONTH_INTL + r")(?![\w])"
    r"(?:\s+in\s+[\w-]{2,40}(?:\s+[\w-]{2,40})?)?\s+geboren\b"
)
_PASSPORT = re.compile(
    r"(?i)\b(?:pass(?:port|eport|aporte|aporto|ort)|pasaporte),?(?:\s+(?:number|no\.?|num|nr\.?|#|id|nummer|numéro|número))?"
    r"[\"']?(?:\s+(?:(?:is|was|reads|ist|es)\b|=|:|-))*\s*[:#=]?\s*[\"'`]?"
    r"(?P<val>(?=[A-Za-z0-9]*\d{4})[A-Za-z]{0,3}\d[A-Za-z0-9]{4,11})(?![\w])"
)
_MEDICAL = re.compile(
    r"(?i)\b(?:medical\s+record(?:\s+(?:number|no\.?|num|#))?|mrn|patient\s+(?:id|number|no\.?)|"
    r"nhs\s+(?:number|no\.?)|health\s+(?:card|insurance|plan|id)\s+(?:number|no\.?|id)|"
    r"medicare\s+(?:number|no\.?|card)|medicaid\s+(?:number|id)|member\s+id\s+for\s+(?:my\s+)?insurance|"
    r"(?:health\s+|medical\s+|dental\s+)?insurance\s+(?:member|subscriber|policy|plan|group)\s+(?:id|number|no\.?))"
    r"[\"']?(?:\s+(?:is|was|=|:|-))*\s*(?:mrn)?\s*[:#=]?\s*[\"'`]?"
    r"(?P<val>(?=[A-Za-z0-9 -]*\d{4})[A-Za-z]{0,3}[- ]?\d[\d -]{3,14}\d[A-Za-z]?)(?![\w])"
)
# a US Medicare Beneficiary Identifier: digit, letter, letter or digit, digit, twice, then two letters and two
# digits (1EG4-TE5-MK73), after the words that name it
_MBI = re.compile(
    r"(?i)\b(?:medicare\s+beneficiary\s+(?:identifier|id|number)|medicare\s+(?:number|id|no\.?)|mbi)"
    r"[\"']?(?:\s+(?:is|was|=|:|-))*\s*[:#=]?\s*[\"'`]?"
    r"(?P<val>\d[A-Za-z][A-Za-z0-9]\d-?[A-Za-z][A-Za-z0-9]\d-?[A-Za-z]{2}\d{2})(?![\w])"
)
_BANK = re.compile(
    r"(?i)\b(?:(?:bank\s+)?(?:account|acct|acc\b\.?|a/c)\s*(?:number|no\.?|num|nr\.?|#)|bank\s+account|"
    r"checking\s+account|savings\s+account|kontonummer|"
    # and in Spanish, French and German: "número de cuenta", "numéro de compte", "Kto-Nr."
    r"n[úu]mero\s+de\s+(?:la\s+)?cuenta|num[ée]ro\s+de\s+compte|\bkto\.?-?\s*nr\b\.?|konto-?nr\b\.?)"
    r"[\"']?(?:\s+(?:is|was|=|:|-))*\s*[:#=]?\s*[\"'`]?(?P<val>\d[\d -]{4,18}\d)(?![\w]|[.-]\d)"
)
# "sort" alone also names a sort code when the code follows it ("account 12345678 sort 60-16-13")
_SORT_WORD_VALUE = r"sort\s*[:#]?\s*(?P<val>\d{2}-\d{2}-\d{2}|\d{2} \d{2} \d{2}|\d{6})(?![\w]|-\d)"
_BANK_WORDS = re.compile(
    r"(?i)\b(?:routing|sort[\s-]*code|s/c|bank|bsb|aba|swift|bic|wire)\b|\b(?=" + _SORT_WORD_VALUE + r")"
)
# "acc" and "a/c" are the abbreviations of a bank statement and a payslip ("acc 12345678 sort 601613")
_ACCOUNT_BARE = re.compile(r"(?i)\b(?:account|acct|acc|a/c)\.?\s*[:#]?\s*(?P<val>\d{6,17})(?![\w]|[.-]\d)")
# "a/c" and "acct" name an account on their own, as on a statement or a payslip: "a/c 87654321", "acct 12345678"
# ("A/C 22C", "the a/c is broken", "a/c 240000 BTU" stay)
_ACCOUNT_ABBR = re.compile(
    r"(?i)(?<![\w/])(?:a/c|acct)\.?[ \t]*(?:no\.?|#)?[ \t]*[:#]?[ \t]*(?P<val>\d{6,17})(?![\w]|[.,/-]\d)"
    r"(?![ \t]*(?:btu|kw|w|watts?|v|volts?|rpm)\b)"
)
_SORT_CODE = re.compile(
    r"(?i)\b(?:sort[\s-]*code|bsb|s/c)[\"']?(?:\s+(?:is|was|=|:))*\s*[:=]?\s*(?P<val>\d{2}[- ]?\d{2}[- ]?\d{2}|\d{3}-?\d{3})"
    r"(?![\w]|-\d)"
)
# a sort code after the bare word "sort", taken with an account number beside it on its line
_SORT_BARE = re.compile(r"(?i)\b" + _SORT_WORD_VALUE)
_ACCOUNT_NEAR = re.compile(
    r"(?i)\b(?:account|acct|acc|a/c)\.?\s*(?:number|no\.?|#)?\s*[:#]?\s*\d{6,17}(?!\w)"
)
_ROUTING = re.compile(
    r"(?i)\b(?:routing|aba|rtn|transit)\s*(?:number|no\.?|#)?[\"']?(?:\s+(?:is|was|=|:))*\s*[:=]?\s*"
    r"(?P<val>\d{9})(?![\w])"
)
_CODE_WORDS = (
    r"(?:door|gate|alarm|safe|lock|locker|garage|keypad|entry|entrance|building|lockbox|key\s*box|padlock|"
    r"bike\s+lock|front\s+door|back\s+door|house|apartment|flat|office|storage\s+unit|security|access|"
    r"burglar\s+alarm|garage\s+door|combination\s+lock|unlock|screen\s+lock|lock\s+screen|intercom|verification|"
    # a key's code, named by the key ("spare key code: 5512", "the car key code is 4471"); a bare "key code" is
    # also a keyboard's ("the key code for Enter is 13") and stays
    r"(?:spare|car|house|home|door|front\s+door|back\s+door|van|bike|locker|cabinet|office)\s+key)"
)
# the code's name in French, Spanish and German: "le code de la porte", "el código de la puerta", "Türcode"
_CODE_WORDS_INTL = (
    r"(?:digicode|code\s+(?:de\s+(?:la\s+)?porte|porte|portail|immeuble|alarme|d'entr[ée]e|d'acc[èe]s|du\s+portail|de\s+l'immeuble|"
    r"de\s+l'alarme|du\s+cadenas)|c[óo]digo\s+(?:de\s+(?:la\s+|el\s+)?|del\s+)(?:puerta|portal|entrada|alarma|"
    r"port[óo]n|garaje|candado|caja\s+fuerte)|(?:haus)?t[üu]rcode|torcode|alarmcode|zugangscode|tresorcode|"
    r"schlosscode|garagencode)"
)
# what a code may be said to open after "code for/to": the code words and the devices a code unlocks
# (and the part of it that takes the code: "code for the alarm panel: 5521")
_CODE_FOR = (
    r"(?:"
    + _CODE_WORDS
    + r"|i?phone|ipad|tablet|laptop|computer|kindle)(?:\s+(?:panel|system|keypad|pad|unit))?"
)
_CODE_NAME = (
    r"(?i)\b(?:" + _CODE_WORDS + r"(?:'s)?\s+(?:[a-z]+\s+)?(?:code|combination|combo|pin|passcode)s?|"
    r"(?:code|combination|combo|pin|passcode)s?\s+"
    r"(?:for|to|of|on)\s+(?:the\s+|my\s+|our\s+|his\s+|her\s+|their\s+)?(?:\w+\s+)?"
    + _CODE_FOR
    + r"|"
    + _CODE_WORDS_INTL
    + r"|combination|combo|cvv2?|cvc2?|cvn|cid\s+code|card\s+security\s+code|pin(?:\s+(?:code|number))?|"
    r"puk(?:\s+(?:code|number))?)" + WHERE_FOR  # "the alarm code at mum's house is 1945"
)
# "is", "=", ":", "is now", "'s" ("the door code's 1234") and the same words in French, Spanish and German
_CODE_LINK = (
    r"[\"']?(?:\s+(?:is|was|are|=|:|-|now|still|set\s+to|changed\s+to|ist|lautet|est|c'est|es|è|är)|'s\b)*"
    r"\s*[:=]?\s*[\"'`]?"
)
# the value: digits, grouped by spaces or dashes, with a keypad's # or * and, on a keypad with letter keys
# (a French digicode, a 4x4 alarm panel), one letter A-D at either end or between two digits ("7B21"; one
# letter inside at most, checked by _code_letters_ok)
_CODE_VALUE = (
    r"(?P<val>[#*]?(?-i:[A-D])?\d(?:[\d#*]|[ -](?=\d)|(?-i:[A-D])(?=\d)){1,15}(?-i:[A-D](?![\w]))?[#*]?)"
    r"(?![\w]|[.,-]\d)"
)
_CODE = re.compile(_CODE_NAME + _CODE_LINK + _CODE_VALUE)
# the same with a short aside before its colon or "is": "Grandma's PIN, in case: 2 0 1 9", "alarm code (for the
# shop): 2468", "the gate code - for the back gate - is 4471" (an aside naming another field is refused)
_CODE_ASIDE = re.compile(_CODE_NAME + ASIDE + r"(?:[ \t]*[:=]|,?[ \t]+(?:is|was))[ \t]*[\"'`]?" + _CODE_VALUE)
# the same with the code's length said before its colon: "my pin is 4 digit: 7 7 2 1", "PIN (4 digits): 9902",
# "the door code, 6 digits: 483920", "bank PIN is four-digit: 3188" ("the PIN, 4 digits, arrives by mail",
# "PIN (four digits): see letter" stay: no code after them)
_CODE_LENGTH = (
    r"(?:[ \t]*,|[ \t]*\(|[ \t]+[-\u2013\u2014]|\s+(?:is|was|has|tiene|de|hat|\u00e0))?[ \t]*(?:a[ \t]+|the[ \t]+)?"
    r"(?:\d{1,2}|three|four|five|six|seven|eight|nine|ten|twelve)[ \t-]?"
    r"(?:digits?|numbers?|figures?|chiffres|d[\u00edi]gitos|stellig|ziffern)(?:[ \t]+(?:long|code|pin|number))?"
    r"[ \t]*\)?[ \t]*[:=][ \t]*[\"'`]?"
)
# A password that is a number, said with its length: "mot de passe à 4 chiffres : 1 2 3 4", "password (6 digits):
# 482913" (a password in words is find_secrets'; "password, 8 characters: see the letter" stays)
_PASSWORD_NAME = r"\b(?:password|passcode|passwort|kennwort|mot\s+de\s+passe|contrase[\u00f1n]a)"
_CODE_COUNTED = re.compile(
    r"(?i)(?:" + _CODE_NAME.removeprefix("(?i)") + r"|" + _PASSWORD_NAME + r")" + _CODE_LENGTH + _CODE_VALUE
)
_CODE_LENGTH_HINT = re.compile(r"(?i)digit|number|figure|chiffre|d[\u00edi]gito|stellig|ziffer")
# A code named only by the secured thing it opens, without the word "code": "the alarm at mum's is 2580",
# "the gate is 4471#", "garage door: 1234", "keypad: 7731", "the key safe at the cottage is 3150". Only
# things that are opened with a code (an alarm, a safe, a gate, a lockbox, a keypad, a padlock, a door
# named as an entry); not a flat, a room, a locker or a meeting, whose numbers are addresses and times.
_OPENS = (
    r"(?:(?:burglar|house|home)\s+alarm|alarm|(?:wall\s+|key\s*)?safe|(?:front\s+|side\s+|back\s+|garden\s+)?gate|"
    r"garage(?:\s+door)?|lock\s*box|key\s*box|keypad|padlock|bike\s+lock|combination\s+lock|lock|"
    r"(?:(?:front|back|side|main|entry|entrance|building|street|garden|patio|shed|cellar|basement)\s+)?door|"
    r"door\s+entry|(?:building|main|front|street)\s+entr(?:y|ance))"
)
# a code called the "key" to the thing it opens, given after a colon: "key for the alarm panel: 1984", "key to the
# lockbox: 4471" ("the key for the alarm panel is in the drawer", "key for the map: blue = rivers" stay)
_KEY_CODE = re.compile(
    r"(?i)\bkey\s+(?:for|to|of)\s+(?:the\s+|my\s+|our\s+|his\s+|her\s+|their\s+)?(?:[\w'-]+\s+)?"
    + _OPENS
    + r"(?:\s+(?:panel|system|keypad|pad|unit))?(?:'s)?[ \t]*[:=][ \t]*[\"'`]?"
    + _CODE_VALUE
)
_CODE_BARE = re.compile(
    r"(?i)\b(?P<name>" + _OPENS + r")" + WHERE_FOR + r"(?:'s\b|\s+(?:is|was|=|:|-)|\s*[:=])\s*[\"'`]?"
    # or single digits apart by spaces, as a code is read out: "lockbox at the cabin: 3 1 5 0"
    r"(?P<val>[#*]?\d(?:[\d#*]|-(?=\d)){2,11}[#*]?|\d(?: \d){2,7})(?![\w]|[.,:/-]\d)"
)
# mechanical locks have three-digit dials; keypads on doors, gates and alarms take four digits and more
_OPENS_BY_DIAL = re.compile(r"(?i)safe|lock|padlock|lock\s*box|key\s*box")
# what makes the number a measure, an amount or a time rather than a code
_NOT_A_CODE_AFTER = re.compile(
    r"(?i)\s*(?:miles?|mi|km|kilomet\w*|met(?:re|er)s?|m|feet|foot|ft|yards?|yds?|steps|min(?:ute)?s?|"
    r"h(?:(?:ou)?rs?)?|sec(?:ond)?s?|days?|weeks?|months?|years?|yrs?|kg|kilos?|lbs?|pounds?|euros?|"
    r"dollars?|bucks|quid|usd|eur|gbp|%|per\s*cent|percent|degrees?|cm|mm|inch(?:es)?|in\s+(?:wide|tall|high)|"
    r"am|pm|a\.m|p\.m|o'clock|sq|square|wide|tall|high|long|deep|kw|watts?|model|edition|people)\b"
)
# an alarm is also a clock's, a gate also an airport's, a door also a room's
_NOT_A_CODE_NEAR = {
    "alarm": re.compile(
        r"(?i)\b(?:wake|waking|clock|snooze|set|sets|setting|morning|tomorrow|tonight|every|"
        r"goes\s+off|went\s+off|rings?|phone|timer)\b"
    ),
    "gate": re.compile(
        r"(?i)\b(?:flight|flights|boarding|board|terminal|airport|departures?|departing|"
        r"arrivals?|plane|airline|check-?in|platform|train)\b"
    ),
    "door": re.compile(r"(?i)\b(?:room|floor|office|suite|apartment|flat|unit|level|hotel|corridor|ward)\b"),
}
# a year that a word describes ("the lock is 1998 vintage", "the safe is 2019 stock"); a code ends its clause
_YEAR_THEN_WORD = re.compile(r"(?:19|20)\d\d\s+(?!(?:and|or|but|so|then|now|too|btw|please|thanks)\b)[a-z]")
# a bare alarm's four digits that read as a 24-hour time, unless a place follows the name ("at mum's")
_CLOCK_TIME = re.compile(r"^(?:[01]\d|2[0-3])[0-5]\d$")
_PLACE_AFTER_NAME = re.compile(r"(?i)\s+(?:at|in|for|of|on)\s")
_DATEISH = re.compile(r"^(?:\d{4}-\d{1,2}-\d{1,2}|\d{1,2}-\d{1,2}-\d{2,4})$")
_SECURITY_ANSWER = re.compile(
    r"(?i)\b(?:mother'?s\s+maiden\s+name|maiden\s+name|first\s+pet'?s?(?:\s+name)?|"
    r"name\s+of\s+(?:my\s+)?first\s+pet|security\s+(?:answer|question\s+answer)|"
    r"answer\s+to\s+(?:my|the|her|his)\s+(?:security|secret)\s+question|memorable\s+(?:word|answer|"
    r"place|date)|secret\s+(?:answer|question)|first\s+school|first\s+car|childhood\s+(?:nickname|best\s+friend)|"
    r"favou?rite\s+teacher'?s?\s+name|city\s+(?:where\s+)?(?:my\s+)?parents\s+met)"
    r"[\"']?(?:\s+(?:answer|is|was)|\s*[:=]){1,3}\s*"
    r"(?P<val>\"[^\"\n]{1,40}\"|'[^'\n]{1,40}'|[A-Za-z0-9][\w'-]{0,30}(?:\s+[A-Z][\w'-]{1,30}){0,2})"
)
# "Security question: first pet? Answer: Rex"
_QUESTION_ANSWER = re.compile(
    r"(?i)\b(?:security|secret|memorable)\s+question\b[^\n]{0,80}?\banswer\s*[:=\-\u2013\u2014]\s*"
    r"(?P<val>\"[^\"\n]{1,40}\"|'[^'\n]{1,40}'|[A-Za-z0-9][\w'-]{0,30}(?:\s+[A-Z][\w'-]{1,30}){0,2})"
)
_ANSWER_STOP = {"a", "an", "the", "my", "her", "his", "not", "what", "something", "that", "this", "it"}

# street addresses
_STREET_TYPES = (
    r"(?:Street|St|Road|Rd|Avenue|Ave|Av|Lane|Ln|Drive|Dr|Boulevard|Blvd|Way|Court|Ct|Place|Pl|Terrace|Ter|"
    r"Crescent|Cres|Close|Parkway|Pkwy|Highway|Hwy|Square|Sq|Gardens|Gdns|Grove|Row|Mews|Walk|Circle|Cir|"
    r"Trail|Trl|Plaza|Alley|Esplanade|Quay|Wharf|Embankment|Hill|Park|Rise|Vale|View|Green|Broadway|"
    r"Pike|Turnpike|Loop|Path|Point|Pt)"
)
_ADDRESS_EN = re.compile(
    r"(?<![\w$£€#.:/-])(?<!\d,)(?P<num>\d{1,5}[A-Za-z]?(?:[-/]\d{1,5}[A-Za-z]?)?),?\s+"
    r"(?:(?:N|S|E|W|NE|NW|SE|SW|North|South|East|West)\.?\s+)?"
    r"(?P<name>(?:[A-Z][A-Za-z'’.-]+|\d{1,3}(?:st|nd|rd|th))(?:\s+[A-Z][A-Za-z'’.-]+){0,3})\s+"
    + _STREET_TYPES
    + r"\b\.?(?:\s+(?:N|S|E|W|NE|NW|SE|SW)\b\.?)?"
)
_ADDRESS_EU = re.compile(
    r"(?<![\w])(?:(?P<a>[A-ZÄÖÜ][\wäöüßÄÖÜ-]*(?:straße|strasse|str\.|weg|gasse|platz|allee|ring|damm|ufer|"
    r"straat|laan|gracht|plein|kade|singel|vej|gade|gatan|vägen|gata|veien|gata)|"
    r"(?:Calle|C/|Avenida|Avda\.?|Plaza|Paseo|Carrer|Via|Viale|Piazza|Corso|Largo|Rua|Avenida|Travessa|"
    r"Ulica|ul\.)\s+(?:(?:de|del|de\s+la|di|della|dei|da|do|dos)\s+)?[A-ZÀ-Ý][\wÀ-ÿ'’-]+(?:\s+[A-ZÀ-Ý][\wÀ-ÿ'’-]+){0,2})"
    r",?\s+(?:n[º°o]\.?\s*)?\d{1,4}[a-zA-Z]?"
    r"|\d{1,4}(?:\s?(?:bis|ter))?,?\s+(?i:rue|avenue|boulevard|bd|place|chemin|allée|impasse|quai|route|cours)"
    r"\s+(?:(?:de|du|des|d'|de\s+la|la|le|l')\s*)?[A-ZÀ-Ý][\wÀ-ÿ'’-]+(?:\s+[A-ZÀ-Ýa-z][\wÀ-ÿ'’-]+){0,3}?"
    r"(?=,|\s+\d{5}|\s*$|\s+(?:in|à|and|et)\b|[.;])"
    r")"
)
_PO_BOX = re.compile(r"(?i)(?<![\w])p\.?\s?o\.?\s+box\s+\d{1,7}(?![\w])")
# what may follow a street: a unit, the town, the state or county, the postcode
_UNIT = re.compile(r"(?i),?\s*(?:apt|apartment|suite|ste|unit|flat|floor|fl|#)\.?\s*#?\s*[\w-]{1,6}")
_POSTCODE = re.compile(
    r"(?:[A-Z]{1,2}\d[A-Z\d]?\s*\d[A-Z]{2}"  # UK
    r"|[A-Z]{2}\s+\d{5}(?:-\d{4})?"  # US state + ZIP
    r"|\d{5}(?:-\d{4})?"  # US ZIP, DE, FR, ES, IT
    r"|\d{4}\s?[A-Z]{2}"  # NL
    r"|[A-Z]\d[A-Z]\s?\d[A-Z]\d"  # CA
    r"|\d{4}|\d{3}\s\d{2})(?![\w])"
)
_PLACE_SEGMENT = re.compile(
    r",?\s+(?:[A-Z][A-Za-zÀ-ÿ'’.-]+|[A-Z]{2})(?:\s+[A-Z][A-Za-zÀ-ÿ'’.-]+){0,3}(?![\w'’-])"
)
_SEGMENT_START = re.compile(r",?\s+")

_OBF_EMAIL = re.compile(
    r"(?i)(?<![\w.+-])(?P<local>[a-z0-9][\w+-]*(?:(?:\s*[\[({<]\s*(?:dot|\.)\s*[\])}>]\s*|\s+dot\s+|\s+\.\s+|\.)[\w+-]+)*)"
    r"(?P<at>\s*[\[({<]\s*at\s*[\])}>]\s*|\s+at\s+|\s*@\s*)"
    r"(?P<domain>[a-z0-9][\w-]*(?:(?:\s*[\[({<]\s*(?:dot|\.)\s*[\])}>]\s*|\s+dot\s+|\s+\.\s+|\.)[a-z0-9][\w-]*)*"
    r"(?:\s*[\[({<]\s*(?:dot|\.)\s*[\])}>]\s*|\s+dot\s+|\s+\.\s+|\.)(?P<tld>[a-z]{2,12}))(?![\w])"
)
_PLAIN_AT = re.compile(r"^\s+at\s+$", re.IGNORECASE)
_TLDS = {
    "com", "org", "net", "edu", "gov", "io", "co", "uk", "de", "fr", "es", "it", "nl", "se", "no", "dk",
    "fi", "ca", "au", "in", "me", "info", "biz", "dev", "app", "ai", "us", "eu", "ch", "be", "jp", "br",
    "mx", "ru", "pl", "pt", "ie", "nz", "za", "cz", "at", "mail", "email", "xyz", "tech", "cn", "kr",
}  # fmt: skip
_NOT_LOCAL = {
    "is", "was", "me", "us", "them", "him", "her", "it", "we", "you", "i", "they", "work", "works",
    "worked", "working", "job", "looked", "look", "looking", "met", "meet", "arrived", "stay", "stayed",
    "be", "been", "am", "are", "were", "shop", "shopped", "bought", "buy", "order", "ordered", "sold",
    "posted", "read", "found", "available", "online", "live", "lives", "here", "there", "now", "up", "out",
    "in", "on", "intern", "interned", "hired", "started", "career", "engineer", "manager", "jobs", "listed",
    "sell", "selling", "cheaper", "cheap", "deal", "deals", "sale", "price", "and", "or", "the", "a", "an",
    "that", "this", "visit", "go", "went", "site", "website", "page", "employed", "team", "staff",
}  # fmt: skip

# a crypto wallet: Bitcoin legacy / P2SH (base58check), SegWit (bech32), Ethereum (with a word naming it)
# Bitcoin 1.../3..., Litecoin L.../M..., Dogecoin D..., testnet m/n/2: version byte + 20 bytes + checksum
_BTC_B58 = re.compile(r"(?<![\w])[123LMDmn][1-9A-HJ-NP-Za-km-z]{25,34}(?![\w])")
_BTC_BECH32 = re.compile(r"(?i)(?<![\w])(?:bc|tb|ltc)1[02-9ac-hj-np-z]{11,71}(?![\w])")
_ETH = re.compile(r"(?<![\w])0x[0-9a-fA-F]{40}(?![\w])")
_WALLET_CONTEXT = re.compile(r"(?i)\b(?:wallet|eth(?:ereum)?|crypto|address|send|usdt|usdc|metamask|ens)\b")

# searched in the lower-cased text (a case-insensitive alternation is several times slower)
# Devices and vehicles: a MAC address by its shape (six hex pairs, one separator throughout); an IMEI (Luhn),
# a licence plate, a VIN and an employee number only after the words that name them.
_MAC = re.compile(
    r"(?<![\w:.-])[0-9A-Fa-f]{2}(?P<sep>[:-])(?:[0-9A-Fa-f]{2}(?P=sep)){4}[0-9A-Fa-f]{2}(?![\w:-]|\.\w)"
)
_MAC_DOTTED = re.compile(r"(?<![\w.])[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}(?![\w.])")
_MAC_WORD = re.compile(r"(?i)\b(?:mac|hardware\s+address|ethernet\s+address|bssid)\b")
_IMEI = re.compile(
    r"(?i)\bimei\d?\b(?:\s+(?:number|no\.?|is|was|=|:|-))*\s*[:#=]?\s*[\"']?"
    r"(?P<val>\d{2}[ -]?\d{6}[ -]?\d{6}[ -]?\d)(?![\w-])"
)
_PLATE = re.compile(
    r"(?i)\b(?:licen[cs]e\s+plate|number\s+plate|reg(?:istration)?\s+plate|plate\s+number|"
    r"(?:car|vehicle)(?:'s)?\s+(?:plate|reg(?:istration)?)(?:\s+(?:number|no\.?))?|"
    r"(?:vehicle\s+)?registration\s+(?:number|no\.?|mark)|reg\s+(?:number|no\.?)|rego|(?:my|her|his|their|our)\s+plates?|"
    # the plate's name in German, French, Spanish, Italian and Dutch
    r"(?:auto)?kennzeichen|nummernschild|plaque\s+d'immatriculation|immatriculation|matr[íi]cula|targa|kenteken)"
    r"(?:'s\b|[\"'])?(?:\s+(?:is|was|are|reads|says|=|:|-))*\s*[:#=]?\s*[\"'`]?"
    r"(?P<val>(?=[A-Za-z0-9 -]*\d)[A-Za-z0-9]{1,4}(?:[ -]?[A-Za-z0-9]{1,4}){0,3})(?![\w-])"
)
_VIN = re.compile(
    r"(?i)\b(?:vin|vehicle\s+identification\s+number)\b(?:\s+(?:number|no\.?|is|was|=|:|-))*\s*[:#=]?\s*[\"']?"
    r"(?P<val>(?=[A-Z0-9]*\d)[A-HJ-NPR-Z0-9]{17})(?![\w])"
)
_SERIAL = re.compile(
    r"(?i)\bserial(?:\s+(?:number|no\.?|#)|\s*#)(?:\s+(?:is|was|=|:|-))*\s*[:#=]?\s*[\"']?"
    r"(?P<val>(?=[A-Za-z0-9-]*\d)(?=[A-Za-z0-9-]*[A-Za-z])[A-Za-z0-9][A-Za-z0-9-]{5,24})(?![\w-])"
)
# A latitude and longitude with four or more decimals (a house, not a city), near a word for a place.
_COORDINATES = re.compile(
    r"(?<![\w.-])(?P<lat>-?\d{1,2}\.\d{4,})°?\s*[NS]?\s*[,;/ ]\s*(?P<lon>-?\d{1,3}\.\d{4,})°?\s*[EW]?(?![\w.])"
)
_PLACE_WORDS = re.compile(
    r"(?i)\b(?:coordinates|coords|gps|lat(?:itude)?|long(?:itude)?|location|located|pin|house|home|address|"
    r"flat|apartment|place|lives?|parked|geo)\b"
)
_EMPLOYEE = re.compile(
    r"(?i)\b(?:employee|staff|personnel|payroll|badge)[\s-]*(?:id|number|no\.?|num|nr\.?|#|code)"
    r"(?:\s+(?:is|was|=|:|-))*\s*[:#=]?\s*[\"'`]?"
    r"(?P<val>(?=[A-Za-z0-9-]*\d{3})[A-Za-z]{0,4}[-/]?\d[A-Za-z0-9/-]{2,15})(?![\w])"
)

_PREFILTER_WORDS = re.compile(
    r"born|birth|dob|d\.o\.b|personal|geburt|nacimiento|naissance|nascita|passport|pasaporte|passeport|"
    r"medical|mrn|patient|nhs|health|medicare|medicaid|insurance|account|acct|a/c|konto|cuenta|compte|\bkto\b|sort[\s-]*code|bsb|pnr|"
    r"\bacc\b\.?\s*(?:no\.?\s*)?[:#]?\s*\d|\bsort\s*[:#]?\s*\d|s/c|\bb\.\s+\d|kennzeichen|nummernschild|immatricul|matr[íi]cula|targa|kenteken|routing|aba|rtn|transit|code|c[óo]digo|\bpuk\b|combination|combo|cvv|cvc|cvn|pin|maiden|pet|security|"
    r"memorable|secret|first|childhood|teacher|parents|\bid\b|identi|citizen|tax|\btin\b|ssn|sin\b|nin|\bni\b|"
    r"aadhaa?r|\bpan\b|dni|nie|nif|fiscale|personnummer|steuer|idnr|cpf|bsn|pesel|nir|curp|\brut\b|"
    r"nric|hkid|my\s*number|resident|wallet|eth|crypto|uid|sofinummer|samordningsnummer|birthday|licen[cs]e|\bdl\b|"
    r"\bein\b|itin|employer\s+identification|\bvat\b|imei|plate|regist|\breg\b|rego|\bvin\b|vehicle|"
    r"employee|staff|personnel|payroll|badge|serial|s[ée]curit[ée]\s+sociale|\bmbi\b|geboren|n[ée]e?\s+le|"
    r"nac[ií]|nat[oa]\s+il|nascita|pasaporte|password|passe|passwort|kennwort|contrase"
)


# --------------------------------------------------------------------------------------------------
# fields: a JSON, YAML, INI or CSV field whose name says what its value is

_FIELD_KINDS: list[tuple[str, re.Pattern[str]]] = [
    (
        "DOB",
        re.compile(
            r"(?:^|_)(?:dob|d_o_b|date_of_birth|birth_?date|birthday|born_on|geburtsdatum|fecha_de_nacimiento)$"
        ),
    ),
    ("PASSPORT", re.compile(r"(?:^|_)passport(?:_(?:number|no|num|nr|id))?$")),
    (
        "NATIONAL_ID",
        re.compile(
            r"(?:^|_)(?:ssn|sin|nino|ni_(?:number|no)|national_(?:insurance|id|identity)(?:_(?:number|no))?|"
            r"aadhaa?r(?:_(?:number|no))?|dni|nie|nif|codice_fiscale|personnummer|steuer_?id|"
            r"steueridentifikationsnummer|tax_?id|tin|cpf|bsn|pesel|nir|curp|nric|hkid|"
            r"(?:id|identity)_(?:number|no)|social_(?:security|insurance)_(?:number|no))$"
        ),
    ),
    (
        "BANK_ACCOUNT",
        re.compile(
            r"(?:^|_)(?:(?:bank_)?account_(?:number|no|num|nr)|acct_(?:number|no|num)|bank_account|"
            r"sort_?code|routing(?:_(?:number|no))?|aba(?:_routing)?|bsb|kontonummer)$"
        ),
    ),
    (
        "MEDICAL_ID",
        re.compile(
            r"(?:^|_)(?:mrn|medical_record(?:_(?:number|no))?|patient_(?:id|number)|nhs_(?:number|no))$"
        ),
    ),
    (
        "SECRET",
        re.compile(
            r"(?:^|_)(?:(?:door|gate|alarm|safe|lock|locker|garage|keypad|entry|lockbox|access)_(?:code|pin|combination)|"
            r"combination|cvv2?|cvc2?|card_security_code|(?:mothers_)?maiden_name|security_answer|"
            r"first_pet(?:_name)?|memorable_(?:word|answer))$"
        ),
    ),
    (
        "ADDRESS",
        re.compile(
            r"(?:^|_)(?:home|street|mailing|postal|residential|billing|shipping)?_?address(?:_line_?1)?$|^street$"
        ),
    ),
    ("WALLET", re.compile(r"(?:^|_)(?:wallet|btc|bitcoin|eth|ethereum)(?:_(?:address|wallet))?$")),
]
_FIELD_NOT = re.compile(
    r"(?:^|_)(?:e_?mail|ip|mac|url|uri|web|hash|type|format|label|country|expiry|expires|issued)(?:_|$)"
)
_FIELD_PAIR = re.compile(
    r"(?m)(?P<q>[\"']?)(?P<key>[A-Za-z][\w .-]{0,40}?)(?P=q)[ \t]*[:=][ \t]*"
    r"(?:\"(?P<dq>[^\"\n]{1,120})\"|'(?P<sq>[^'\n]{1,120})'|(?P<val>[^\s\"',{}\[\]#|](?:[^\n,{}\]#|]|,(?=[ \t]\d)){0,119}?))"
    r"[ \t]*(?=$|,(?![ \t]\d)|[}\]\n#|])"
)
_FIELD_HINT = re.compile(  # searched in the lower-cased text
    r"dob|birth|born|passport|ssn|sin|nino|ni_|national|aadha|dni|nie|nif|fiscal|personnummer|steuer|tax|"
    r"tin|cpf|bsn|pesel|nir|curp|nric|hkid|id_n|identity|social|account|acct|sort|routing|aba|bsb|konto|mrn|"
    r"medical|patient|nhs|code|combination|cvv|cvc|maiden|security|pet|memorable|address|street|wallet|btc|"
    r"bitcoin|eth"
)
_FIELD_VALUE = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ./-]{2,30}[A-Za-z0-9#*]")


def _field_kind(key: str) -> str | None:
    words = "_".join(w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", key))
    if not words or _FIELD_NOT.search(words):
        return None
    for kind, rx in _FIELD_KINDS:
        if rx.search(words):
            return kind
    return None


def _field_value_ok(kind: str, v: str) -> bool:
    nd = sum(c.isdigit() for c in v)
    if kind == "DOB":
        return re.fullmatch(_DATE, v, re.IGNORECASE) is not None
    if kind == "ADDRESS":
        return nd >= 1 and re.search(r"[A-Za-z]{3,}", v) is not None and len(v.split()) >= 2
    if kind == "WALLET":
        return re.fullmatch(r"[A-Za-z0-9]{26,90}", v) is not None and nd >= 1
    if kind == "SECRET":
        if nd:
            return re.fullmatch(r"\d(?:[\d#*]|[ -](?=\d)){2,15}[#*]?", v) is not None
        return (
            2 <= len(v) <= 40 and v.lower() not in _ANSWER_STOP and not v.lower().startswith(("<", "$", "{"))
        )
    return _FIELD_VALUE.fullmatch(v) is not None and nd >= (6 if kind == "BANK_ACCOUNT" else 5)


def _fields(text: str, spans: list[Span]) -> None:
    if ":" in text or "=" in text:
        for m in _FIELD_PAIR.finditer(text):
            kind = _field_kind(m.group("key").strip())
            if kind is None:
                continue
            g = next(k for k in ("dq", "sq", "val") if m.group(k) is not None)
            v = m.group(g).strip()
            if _field_value_ok(kind, v):
                a = m.start(g) + m.group(g).index(v)
                spans.append(Span(a, a + len(v), kind, "field-" + kind.lower().replace("_", "-")))
    if "," in text and "\n" in text:
        _csv_columns(text, spans)


def _csv_columns(text: str, spans: list[Span]) -> None:
    """A CSV table whose header names a column's kind: every cell below it."""
    lines = text.split("\n")
    pos = 0
    offsets = []
    for line in lines:
        offsets.append(pos)
        pos += len(line) + 1
    i = 0
    while i < len(lines) - 1:
        header = lines[i]
        kinds = [_field_kind(h.strip().strip("\"'")) for h in header.split(",")] if "," in header else []
        if not any(kinds):
            i += 1
            continue
        j = i + 1
        while j < len(lines) and lines[j].strip() and "," in lines[j]:
            for k, (a, b) in enumerate(_csv_cells(lines[j])):
                kind = kinds[k] if k < len(kinds) else None
                if kind and _field_value_ok(kind, lines[j][a:b]):
                    spans.append(
                        Span(offsets[j] + a, offsets[j] + b, kind, "field-" + kind.lower().replace("_", "-"))
                    )
            j += 1
        i = j


def _csv_cells(line: str) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for m in re.finditer(r'\s*(?:"([^"]*)"|([^,]*))\s*(?:,|$)', line):
        g = 1 if m.group(1) is not None else 2
        if m.start() == len(line) and out:
            break
        a, b = m.start(g), m.end(g)
        while a < b and line[a] == " ":
            a += 1
        while b > a and line[b - 1] == " ":
            b -= 1
        out.append((a, b))
    return out


# --------------------------------------------------------------------------------------------------


def find_identifiers(text: str, spans: list[Span]) -> None:
    """Append a Span for every personal identifier, code or spelled-out address in text."""
    low = text.lower()
    if (
        " dot " in low
        or "dot)" in low
        or "dot]" in low
        or "[.]" in low
        or "(.)" in low
        or "(at)" in low
        or "[at]" in low
        or "{at}" in low
        or (" . " in text and "@" in text)
    ):
        _obfuscated_emails(text, spans)
    find_more_shapes(text, low, spans)
    if not _DIGIT.search(text):
        if (
            "'" in text
            or '"' in text
            or ":" in text
            or "=" in text
            or "," in text
            or " is " in text
            or " was " in text
        ) and ("maiden" in low or "pet" in low or "security" in low or "memorable" in low or "first" in low):
            _security_answers(text, spans)
            _fields(text, spans)
        return
    words = _PREFILTER_WORDS.search(low) is not None
    _structured_ids(text, spans, words)
    if words:
        _contextual(text, spans)
        if _FIELD_HINT.search(low):
            _fields(text, spans)
    _bare_codes(text, low, spans)
    _addresses(text, spans)
    _wallets(text, spans)
    _devices(text, spans)
    if "." in text:
        _coordinates(text, spans)


def _add(spans: list[Span], m: re.Match[str], group: str | int, kind: str, rule: str) -> None:
    spans.append(Span(m.start(group), m.end(group), kind, rule))


def _near(rx: re.Pattern[str], text: str, start: int, width: int = 48) -> bool:
    return rx.search(text, max(0, start - width), start) is not None


def _structured_ids(text: str, spans: list[Span], words: bool) -> None:
    for m in _NINO.finditer(text):
        prefix = m.group("p")
        valid = prefix[0] not in "DFIQUV" and prefix[1] not in "DFIOQUV" and prefix not in _NINO_BAD_PREFIX
        if valid or _near(_NINO_CONTEXT, text, m.start()):
            spans.append(Span(m.start(), m.end(), "NATIONAL_ID", "uk-nino"))
    for m in _AADHAAR.finditer(text):
        d = re.sub(r"\D", "", m.group(0))
        if verhoeff(d) and (m.group(1) or (words and _near(_AADHAAR_CONTEXT, text, m.start()))):
            spans.append(Span(m.start(), m.end(), "NATIONAL_ID", "aadhaar"))
    for m in _DNI.finditer(text):
        # eight digits and a letter are also part and invoice numbers: with the check letter right, a word
        # naming a DNI decides, else a word naming another kind of number refuses it
        if not (dni_ok(m.group("n"), m.group("l")) and m.group("l").isupper()):
            continue
        if _near(_DNI_CONTEXT, text, m.start()) or not _near(_OTHER_NUMBER, text, m.start(), 32):
            spans.append(Span(m.start(), m.end(), "NATIONAL_ID", "es-dni"))
    for m in _NIE.finditer(text):
        if dni_ok(str("XYZ".index(m.group("x"))) + m.group("n"), m.group("l")):
            spans.append(Span(m.start(), m.end(), "NATIONAL_ID", "es-nie"))
    for m in _CF.finditer(text):
        v = m.group(0)
        if (v.isupper() or v.islower()) and codice_fiscale_ok(v):
            spans.append(Span(m.start(), m.end(), "NATIONAL_ID", "it-codice-fiscale"))
    for m in _PERSONNUMMER.finditer(text):
        yy, mm, dd = int(m.group(1)), int(m.group(2)), int(m.group(3))
        ten = m.group(1) + m.group(2) + m.group(3) + m.group(5)
        if not _date_ok(yy, mm, dd):
            continue
        context = words and _near(_PERSONNUMMER_CONTEXT, text, m.start())
        # bare: YYMMDD-NNNN with a valid Luhn check (a full year looks like a build stamp: needs the word)
        if context or (m.group(4) and len(m.group(0)) == 11 and _luhn(ten)):
            spans.append(Span(m.start(), m.end(), "NATIONAL_ID", "se-personnummer"))
    if words:
        for m in _SIN.finditer(text):
            d = re.sub(r"\D", "", m.group(0))
            if _luhn(d) and d[0] not in "08" and _near(_SIN_CONTEXT, text, m.start(), 60):
                spans.append(Span(m.start(), m.end(), "NATIONAL_ID", "ca-sin"))
        for m in _STEUER.finditer(text):
            d = re.sub(r"\D", "", m.group(0))
            if _near(_STEUER_CONTEXT, text, m.start(), 48) and d[0] != "0":
                spans.append(Span(m.start(), m.end(), "NATIONAL_ID", "de-steuer-id"))
        if "cpf" in text.lower():
            for m in _CPF_BARE.finditer(text):
                if cpf_ok(m.group(0)) and _near(_CPF_CONTEXT, text, m.start()):
                    spans.append(Span(m.start(), m.end(), "NATIONAL_ID", "br-cpf"))
        if _BSN_CONTEXT.search(text):
            for m in _SIN.finditer(text):
                d = re.sub(r"\D", "", m.group(0))
                total = sum(int(c) * w for c, w in zip(d, (9, 8, 7, 6, 5, 4, 3, 2, -1), strict=True))
                if total % 11 == 0 and _near(_BSN_CONTEXT, text, m.start()):
                    spans.append(Span(m.start(), m.end(), "NATIONAL_ID", "nl-bsn"))
    for m in _STEUER.finditer(text):
        d = re.sub(r"\D", "", m.group(0))
        if m.group(1) and steuer_id_ok(d):
            spans.append(Span(m.start(), m.end(), "NATIONAL_ID", "de-steuer-id"))
    if "." in text:
        for m in _CPF.finditer(text):
            if cpf_ok(re.sub(r"\D", "", m.group(0))):
                spans.append(Span(m.start(), m.end(), "NATIONAL_ID", "br-cpf"))
    for m in _PAN_IN.finditer(text):
        spans.append(Span(m.start(), m.end(), "NATIONAL_ID", "in-pan"))


def _contextual(text: str, spans: list[Span]) -> None:
    for m in _ID_NAMED.finditer(text):
        v = m.group("val")
        if sum(c.isdigit() for c in v) >= 5 and not _is_plain_number_phrase(v):
            _add(spans, m, "val", "NATIONAL_ID", "id-named")
    for m in _DOB.finditer(text):
        if m.group(0)[:2].lower() == "b." and not re.search(r"(?:19|20)\d\d(?!\d)", m.group("val")):
            continue  # "b. 12 May" may be a list's second item; "b. 12 May 1987" is a birth
        _add(spans, m, "val", "DOB", "date-of-birth")
    for m in _PASSPORT.finditer(text):
        _add(spans, m, "val", "PASSPORT", "passport")
    for m in _MEDICAL.finditer(text):
        _add(spans, m, "val", "MEDICAL_ID", "medical-record")
    for m in _MBI.finditer(text):
        _add(spans, m, "val", "MEDICAL_ID", "us-mbi")
    for m in _BANK.finditer(text):
        if sum(c.isdigit() for c in m.group("val")) >= 6:
            _add(spans, m, "val", "BANK_ACCOUNT", "bank-account")
    if _BANK_WORDS.search(text):
        for m in _ACCOUNT_BARE.finditer(text):
            _add(spans, m, "val", "BANK_ACCOUNT", "bank-account")
    if "a/c" in text or "A/C" in text or "cct" in text or "CCT" in text:
        for m in _ACCOUNT_ABBR.finditer(text):
            _add(spans, m, "val", "BANK_ACCOUNT", "bank-account-abbr")
    for m in _SORT_CODE.finditer(text):
        _add(spans, m, "val", "BANK_ACCOUNT", "sort-code")
    if "sort" in text.lower():
        for m in _SORT_BARE.finditer(text):
            lo, hi = _line_window(text, m.start(), m.end(), 48)
            if any(not (a.start() <= m.start() < a.end()) for a in _ACCOUNT_NEAR.finditer(text, lo, hi)):
                _add(spans, m, "val", "BANK_ACCOUNT", "sort-code-bare")
    for m in _ROUTING.finditer(text):
        if aba_ok(m.group("val")):
            _add(spans, m, "val", "BANK_ACCOUNT", "routing-number")
    for m in _CODE.finditer(text):
        v = m.group("val")
        if sum(c.isdigit() for c in v) >= 3 and _code_letters_ok(v):
            _add(spans, m, "val", "SECRET", "access-code")
    if "," in text or "(" in text or " - " in text or "\u2013" in text or "\u2014" in text:
        for m in _CODE_ASIDE.finditer(text):
            v = m.group("val")
            if (
                sum(c.isdigit() for c in v) >= 3
                and _code_letters_ok(v)
                and not ASIDE_NAMES_OTHER.search(m.group("aside"))
            ):
                _add(spans, m, "val", "SECRET", "access-code-aside")
    if _CODE_LENGTH_HINT.search(text):
        for m in _CODE_COUNTED.finditer(text):
            v = m.group("val")
            if sum(c.isdigit() for c in v) >= 3 and _code_letters_ok(v):
                _add(spans, m, "val", "SECRET", "access-code-length")
    _security_answers(text, spans)
    _vehicles_and_staff(text, spans)


def _code_letters_ok(v: str) -> bool:
    """A keypad's letter stands at an end of its code or once between its digits, never both ("7B21", "A1234",
    "2580B"; not "1A2B3")."""
    inner = sum(c.isalpha() for c in v.strip("#*")[1:-1])
    return inner == 0 or (inner == 1 and not v.strip("#*")[0].isalpha() and not v.strip("#*")[-1].isalpha())


def _line_window(text: str, start: int, end: int, reach: int) -> tuple[int, int]:
    """Where to look around text[start:end]: up to ``reach`` characters each side, within its line."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    return max(line_start, start - reach), min(end + reach, len(text) if line_end < 0 else line_end)


_OPENS_HINTS = ("alarm", "safe", "gate", "garage", "lock", "box", "keypad", "door", "entr")


def _bare_codes(text: str, low: str, spans: list[Span]) -> None:
    """A code named by the thing it opens (_CODE_BARE): 3 to 8 digits, 4 and more unless the thing has a
    dial, not followed by a unit or a time word, not a date, and not near the words that make an alarm a
    clock's, a gate an airport's or a door a room's."""
    if not any(h in low for h in _OPENS_HINTS):
        return
    if "key" in low:
        for m in _KEY_CODE.finditer(text):
            v = m.group("val")
            if (
                sum(c.isdigit() for c in v) >= 3
                and _code_letters_ok(v)
                and not _NOT_A_CODE_AFTER.match(text, m.end("val"))
                and not _YEAR_THEN_WORD.match(text, m.start("val"))
            ):
                _add(spans, m, "val", "SECRET", "access-code-key")
    for m in _CODE_BARE.finditer(text):
        v = m.group("val")
        digits = sum(c.isdigit() for c in v)
        name = m.group("name").lower()
        least = 3 if _OPENS_BY_DIAL.search(name) else 4
        if not least <= digits <= 8 or _DATEISH.match(v) or _NOT_A_CODE_AFTER.match(text, m.end("val")):
            continue
        if _YEAR_THEN_WORD.match(text, m.start("val")):
            continue
        if name == "alarm" and _CLOCK_TIME.match(v) and not _PLACE_AFTER_NAME.match(text, m.end("name")):
            continue  # "my alarm: 0645" is a wake-up time; "the alarm at mum's is 1945" a code
        kind = next((k for k in _NOT_A_CODE_NEAR if k in name and "lock" not in name), None)
        if kind is not None:
            lo, hi = _line_window(text, m.start(), m.end(), 60)
            if _NOT_A_CODE_NEAR[kind].search(text[lo:hi]):
                continue
        _add(spans, m, "val", "SECRET", "access-code-named")


def _devices(text: str, spans: list[Span]) -> None:
    """MAC addresses by their shape (the dotted form only near a word naming one)."""
    if ":" in text or "-" in text:
        for m in _MAC.finditer(text):
            if len(set(re.sub(r"[:-]", "", m.group(0)).lower())) > 1:  # not 00:00:... or ff:ff:...
                spans.append(Span(m.start(), m.end(), "DEVICE_ID", "mac-address"))
    if "." in text and _MAC_WORD.search(text):
        for m in _MAC_DOTTED.finditer(text):
            spans.append(Span(m.start(), m.end(), "DEVICE_ID", "mac-address"))


def _coordinates(text: str, spans: list[Span]) -> None:
    """A home's or a person's coordinates: a latitude and longitude pair near a word for a place."""
    for m in _COORDINATES.finditer(text):
        if (
            abs(float(m.group("lat"))) <= 90
            and abs(float(m.group("lon"))) <= 180
            and _near(_PLACE_WORDS, text, m.start())
        ):
            spans.append(Span(m.start(), m.end(), "ADDRESS", "coordinates"))


def _vehicles_and_staff(text: str, spans: list[Span]) -> None:
    """IMEIs, licence plates, VINs and employee numbers after the words that name them."""
    for m in _IMEI.finditer(text):
        if _luhn(re.sub(r"\D", "", m.group("val"))):
            _add(spans, m, "val", "DEVICE_ID", "imei")
    for m in _PLATE.finditer(text) if _PLATE_HINT.search(text) else ():
        v = re.sub(r"[ -]", "", m.group("val"))
        if m.group("val").split()[0].lower() in _PLATE_NOT_VALUE:
            continue  # "my plate number is ...": the naming words, not the plate (read by _PLATE_MINE)
        if 4 <= len(v) <= 10 and not _is_plain_number_phrase(m.group("val")):
            _add(spans, m, "val", "VEHICLE_ID", "licence-plate")
    if "plate" in text or "Plate" in text or "PLATE" in text or _PLATE_REG.search(text):
        for m in _PLATE_BARE.finditer(text):
            if _bare_plate_ok(m.group("val")):
                _add(spans, m, "val", "VEHICLE_ID", "licence-plate-bare")
    for m in _VIN.finditer(text):
        _add(spans, m, "val", "VEHICLE_ID", "vin")
    for m in _EMPLOYEE.finditer(text):
        _add(spans, m, "val", "EMPLOYEE_ID", "employee-number")
    for m in _SERIAL.finditer(text):
        _add(spans, m, "val", "DEVICE_ID", "serial-number")


# a plate after the bare word "plate", "plates", "reg" or "registration": "plate ABC-1234", "reg AB12 CDE",
# "registration: 1234 BCD". Read case-sensitively, and taken only when it reads as a plate (_bare_plate_ok):
# "plate 3 of the book", "a plate of pasta", "home plate", "registration 2024", "reg ISO 9001" stay
_PLATE_BARE = re.compile(
    r"(?i)\b(?:plates?|reg|registration)(?:[ \t]+(?:is|was|reads|=|:|-|#)(?=[ \t]))*[ \t]*[:#=]?[ \t]*[\"'`]?"
    r"(?-i:(?P<val>[A-Z0-9]{1,4}(?:[ -]?[A-Z0-9]{1,4}){0,2}))(?![\w-])"
)
# what an upper-case word before a number is when it is no plate's letters: a standard, a year's or a time's name
_PLATE_NOT_LETTERS = frozenset({
    "ISO", "RFC", "DIN", "IEC", "EN", "BS", "CVE", "ANSI", "IEEE", "NIST", "FIPS", "PCI", "SOC", "COVID", "SARS",
    "UTC", "GMT", "CET", "CEST", "EST", "EDT", "PST", "PDT", "BST", "AD", "BC", "CE", "BCE", "FY", "NO", "NR",
    "VER", "REV", "VOL", "ART", "SEC", "EU", "UK", "US", "USA", "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL",
    "AUG", "SEP", "SEPT", "OCT", "NOV", "DEC",
})  # fmt: skip


def _bare_plate_ok(v: str) -> bool:
    """Five to eight capitals and digits, two or more of each, the letters no standard's or month's name."""
    compact = re.sub(r"[ -]", "", v)
    letters = sum(c.isalpha() for c in compact)
    digits = sum(c.isdigit() for c in compact)
    words = re.findall(r"[A-Z]+", v)
    return (
        5 <= len(compact) <= 8 and letters >= 2 and digits >= 2 and not _PLATE_NOT_LETTERS.intersection(words)
    )


_PLATE_REG = re.compile(r"(?i)\breg")
_PLATE_HINT = re.compile(r"(?i)plate|reg|kennzeichen|nummernschild|immatricul|matr[íi]cula|targa|kenteken")
_PLATE_NOT_VALUE = frozenset({"number", "numbers", "no", "no.", "num", "is", "was", "reads", "says"})


def _is_plain_number_phrase(v: str) -> bool:
    """'12 years', '3 kids': a count followed by words, not an identifier."""
    parts = v.split()
    return len(parts) > 1 and parts[0].isdigit() and not any(c.isdigit() for c in " ".join(parts[1:]))


_ANSWER_HINT = re.compile(
    r"(?i)maiden|first\s+(?:pet|school|car)|pet'?s|security\s+(?:answer|question)|memorable|secret\s+"
    r"(?:answer|question)|childhood|teacher|parents\s+met"
)


# a value that is itself a security question with its answer ("first pet was Rex", "my mother's maiden name
# is Kowalski")
_RESTATED = re.compile(
    r"(?i)(?:(?:my|her|his|their|the)\s+)?(?=\S)" + _SECURITY_ANSWER.pattern.removeprefix("(?i)")
)


def _answer_matches(text: str) -> Iterator[re.Match[str]]:
    """The security answers' matches; a value that restates a question ("Security question answer: first pet
    was Biscuit") is read on from, so the answer is the name after it, not the question's words."""
    for pattern in (_SECURITY_ANSWER, _QUESTION_ANSWER):
        pos = 0
        while (m := pattern.search(text, pos)) is not None:
            if _RESTATED.match(text, m.start("val")) and m.start("val") > pos:
                pos = m.start("val")
                continue
            yield m
            pos = m.end()


def _security_answers(text: str, spans: list[Span]) -> None:
    if _ANSWER_HINT.search(text) is None:
        return
    for m in _answer_matches(text):
        v = m.group("val").strip("\"'")
        if v.lower() in _ANSWER_STOP or len(v) < 2:
            continue
        a = m.start("val") + m.group("val").index(v)
        spans.append(Span(a, a + len(v), "SECRET", "security-answer"))


_NOT_STREET_NAME = {
    "am", "pm", "a.m.", "p.m.", "hours", "hour", "hrs", "minutes", "mins", "seconds", "miles", "mile", "km",
    "days", "day", "weeks", "week", "months", "month", "years", "year", "times", "people", "kids", "more",
    "of", "x", "gb", "mb", "kg", "lbs", "percent", "points", "pts", "stars", "players", "teams",
}  # fmt: skip


def _addresses(text: str, spans: list[Span]) -> None:
    for m in _ADDRESS_EN.finditer(text):
        if m.group("name").split()[0].lower() in _NOT_STREET_NAME:
            continue  # "at 5 PM Central Park", "3 Days Way"
        spans.append(Span(m.start(), _address_tail(text, m.end()), "ADDRESS", "street-address"))
    if any(c.isupper() for c in text):
        for m in _ADDRESS_EU.finditer(text):
            spans.append(Span(m.start(), _address_tail(text, m.end()), "ADDRESS", "street-address"))
    if "box" in text.lower():
        for m in _PO_BOX.finditer(text):
            spans.append(Span(m.start(), _address_tail(text, m.end()), "ADDRESS", "po-box"))


def _address_tail(text: str, end: int) -> int:
    """Extend a street to its unit, town, region and postcode: up to four comma or space separated parts,
    each capitalised words, a state code or a postcode, stopping at the first thing that is not one."""
    u = _UNIT.match(text, end)
    if u:
        end = u.end()
    best = end
    pos = end
    for _ in range(4):
        s = _SEGMENT_START.match(text, pos)
        if not s:
            break
        after = s.end()
        pc = _POSTCODE.match(text, after)
        if pc:
            best = pos = pc.end()
            continue
        seg = _PLACE_SEGMENT.match(text, pos)
        if not seg or not re.match(r",?\s+[A-Z]", text[pos : seg.end()]):
            break
        if "," not in text[pos:after] and pos != end and not _POSTCODE.match(text, seg.end() + 1):
            break
        pos = seg.end()
        if "," in text[s.start() : s.end()] or _POSTCODE.match(text, pos + 1) or _POSTCODE.match(text, pos):
            best = pos
        else:
            break
    return best


def _obfuscated_emails(text: str, spans: list[Span]) -> None:
    pos = 0
    while True:
        m = _OBF_EMAIL.search(text, pos)
        if m is None:
            return
        # a refused match may hold the start of the real one ("reach her at bob(at)x(dot)de")
        if _obfuscated_ok(m):
            spans.append(Span(m.start(), m.end(), "EMAIL", "email-obfuscated"))
            pos = m.end()
        else:
            pos = m.start("domain")


def _obfuscated_ok(m: re.Match[str]) -> bool:
    at = m.group("at")
    spelled_dot = (
        re.search(r"(?i)\bdot\b|[\[(]\.[\])]|\s\.\s", m.group("domain") + m.group("local")) is not None
    )
    plain_at = _PLAIN_AT.match(at) is not None
    if "@" in at:
        # else an ordinary address: the e-mail rule has it; "jdoe @ gmail . com" spaces the '@' and the dots
        return spelled_dot and not (at.strip() != at and m.group("local").lower() in _NOT_LOCAL)
    if plain_at:
        if not re.search(r"(?i)\s+dot\s+|[\[({<]\s*(?:dot|\.)", m.group("domain")):
            return False  # "works at example.com"
        if m.group("local").lower() in _NOT_LOCAL:
            return False
    return m.group("tld").lower() in _TLDS


def _wallets(text: str, spans: list[Span]) -> None:
    for m in _BTC_B58.finditer(text):
        if _DIGIT.search(m.group(0)) and base58check_ok(m.group(0)):
            spans.append(Span(m.start(), m.end(), "WALLET", "btc-base58"))
    if "1" in text:
        for m in _BTC_BECH32.finditer(text):
            v = m.group(0)
            if (v.islower() or v.isupper()) and bech32_ok(v):
                spans.append(Span(m.start(), m.end(), "WALLET", "btc-bech32"))
    if "0x" in text:
        for m in _ETH.finditer(text):
            if _near(_WALLET_CONTEXT, text, m.start(), 60):
                spans.append(Span(m.start(), m.end(), "WALLET", "eth-address"))


# --------------------------------------------------------------------------------------------------
# More shapes of personal data, each taken only where its own form or the words naming it leave no doubt:
#
# * payment handles: a Venmo or Revolut ``@username``, a Cash App ``$cashtag`` after the words naming the
#   service, and the personal links of PayPal.me, Cash App, Venmo, Revolut and Monzo (the handle is the
#   account; "follow @nasa", "$AAPL" and "$20 on cash app" stay);
# * bank identifier codes (BIC / SWIFT) after the word naming one, checked for an ISO country code;
# * national and government numbers named by words the main table does not have (UK UTR, Australian TFN,
#   Irish PPS, Swiss AHV, German Sozialversicherungsnummer, US green card / A-number / Known Traveler
#   Number, voter ids, residence permits), a German passport number ("Reisepassnummer"), student numbers;
# * authenticator (TOTP) secrets in base32, spaced or not, and single or space-separated one-time recovery
#   codes after the words naming them;
# * a date of birth given after a birthplace ("born in Leeds on 14 March 1987") or with the verb last ("ich bin
#   am 3. Mai 1985 geboren");
# * a licence plate after "my/her/his plate number".
#
# Each detector is behind a substring test on the lower-cased text, so a sentence without the words costs a
# few membership tests.


# ISO 3166-1 alpha-2 country codes (with XK, Kosovo, which banks use): positions 5-6 of a BIC
_COUNTRY_CODES = (
    "AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ "
    "BR BS BT BV BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM "
    "DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS "
    "GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN "
    "KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ "
    "MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM "
    "PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV "
    "SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI "
    "VN VU WF WS XK YE YT ZA ZM ZW "
)
_COUNTRIES = frozenset(re.findall(r"[A-Z]{2}", _COUNTRY_CODES))

# what may stand between a naming word and its value: "is", "was", ":", "=", "-", "#"
_LINK = r"(?:\s+(?:is|was|are|=|:|-|#)(?=\s|$)|\s*[:=#])*\s*[\"'`]?"

# --------------------------------------------------------------------------------------------------
# payment handles

_HANDLE = r"[A-Za-z0-9](?:[A-Za-z0-9_-]{0,28}[A-Za-z0-9])?"
# a personal payment link: the path is the account's handle
_PAY_LINK = re.compile(
    r"(?i)(?<![\w.-])(?:https?://)?(?:www\.)?"
    r"(?:paypal\.me/|(?:account\.)?venmo\.com/u/|cash\.(?:app|me)/\$|revolut\.me/|monzo\.me/)"
    r"(?P<val>[A-Za-z0-9](?:[A-Za-z0-9_.-]{0,38}[A-Za-z0-9])?)(?![\w-])"
)
_PAY_SERVICE = r"(?:venmo|revolut|revtag|paypal|cash\s?app|cash\s+tag|cashtag|\$cashtag)"
# "my venmo is @sara-k-22", "Venmo: @Jake_Miller88", "venmo me at sara-k-22", "cashapp $jdoe88",
# "my Cash App is $SaraK2024", "Revolut @jsmith42", "venmo username jake_m"
_PAY_NAMED = re.compile(
    r"(?i)\b(?P<svc>" + _PAY_SERVICE + r")(?:'s)?"
    r"(?:\s+(?P<word>user\s*name|username|handle|id|tag|account|name|revtag|\$?cashtag))?"
    r"(?:\s+(?:is|was|me(?:\s+at)?|at|to|on|via|=|:|-)(?=\s|$)|\s*[:=])*\s*[\"'`]?"
    r"(?P<sigil>[@$]?)(?P<val>" + _HANDLE + r")(?![\w@$-]|\.\w)"
)
# "@sara-k-22 on Venmo", "$jdoe88 on cash app"
_PAY_AFTER = re.compile(
    r"(?i)(?<![\w@$.])(?P<sigil>[@$])(?P<val>" + _HANDLE + r")\s+(?:on|via|in|at)\s+(?:my\s+|her\s+|his\s+)?"
    r"(?P<svc>venmo|revolut|cash\s?app|paypal)\b"
)
_AMOUNTISH = re.compile(r"(?i)^\d+(?:[.,]\d+)?(?:k|m|usd|eur|gbp|bucks?|dollars?|st|nd|rd|th|x)?$")
_PAY_NOT_HANDLE = frozenset(
    {
        "app",
        "account",
        "accounts",
        "user",
        "users",
        "username",
        "handle",
        "card",
        "balance",
        "transfer",
        "link",
    }
)


_PAY_HINTS = ("venmo", "cash", "paypal", "revolut", "revtag", "monzo")


def _payments(text: str, low: str, spans: list[Span]) -> None:
    if ".me/" in low or ".com/u/" in low or ".app/" in low:
        for m in _PAY_LINK.finditer(text):
            spans.append(Span(m.start("val"), m.end("val"), "BANK_ACCOUNT", "payment-link"))
    for rx in (_PAY_NAMED, _PAY_AFTER):
        for m in rx.finditer(text):
            val, sigil = m.group("val"), m.group("sigil")
            svc = re.sub(r"\s+", " ", m.group("svc").lower())
            if val.lower() in _PAY_NOT_HANDLE or _AMOUNTISH.match(val):
                continue  # "venmo 20 bucks", "cash app account"
            if sigil == "$":
                if "cash" not in svc:
                    continue  # a $ before a handle is Cash App's; elsewhere an amount or a variable
                if not val[0].isalpha():
                    continue  # "$20"
                if svc != "cash app" and svc != "cashapp" and val.isupper() and len(val) <= 5:
                    continue  # "the cashtag $TSLA": a stock ticker
            elif not sigil:
                # without @ or $ the handle must read as one: a digit or an underscore in it, or named as a
                # username ("my venmo username is sarak"); "my venmo is down" stays
                word = (m.groupdict().get("word") or "").lower()
                named = word.startswith(("user", "handle", "revtag", "$cashtag", "cashtag")) and (
                    re.match(r"\s*(?:$|[.,;!?)])", text[m.end("val") :]) is not None
                )  # "my venmo username is sarak." but not "... username changed to ..."
                if not (named or re.search(r"\d|_", val)) or len(val) < 4:
                    continue
            if len(val) < 2:
                continue
            start = m.start("sigil") if sigil else m.start("val")
            spans.append(Span(start, m.end("val"), "BANK_ACCOUNT", "payment-handle"))


# --------------------------------------------------------------------------------------------------
# BIC / SWIFT

_BIC = re.compile(
    r"(?i)\b(?:bic|swift)(?:\s*[/-]\s*(?:bic|swift))?(?:\s*\((?:bic|swift)\))?"
    r"(?:[\s-]+(?:code|number|no\.?|#|address|id))?(?:\s+(?:of|for)\s+(?:the|my|our|his|her|their)\s+bank)?"
    + _LINK
    + r"(?-i:(?P<val>[A-Z]{4}(?P<cc>[A-Z]{2})[A-Z0-9]{2}(?:[A-Z0-9]{3})?))(?![\w])"
)


def _bics(text: str, spans: list[Span]) -> None:
    for m in _BIC.finditer(text):
        if m.group("cc") in _COUNTRIES:
            spans.append(Span(m.start("val"), m.end("val"), "BANK_ACCOUNT", "bic"))


# --------------------------------------------------------------------------------------------------
# more named identifiers

_ID_NAMES = (
    r"\butr\b(?:\s+(?:number|no\.?|#))?|unique\s+tax(?:payer)?\s+reference(?:\s+(?:number|no\.?))?|"
    r"\btfn\b|tax\s+file\s+number|"
    r"\bppsn?\b(?:\s+(?:number|no\.?|#))?|personal\s+public\s+service\s+number|"
    r"\bahv(?:[- ]?(?:nummer|nr\.?|number|no\.?))?|\bavs\s+(?:number|no\.?|num[ée]ro)|"
    r"\b(?:sozial|renten)versicherungs(?:nummer|nr\.?)|\bsv-?(?:nummer|nr\.?)|\bsvnr\b|"
    r"\bgreen\s+card(?:\s+(?:number|no\.?|#))?|\balien\s+(?:registration\s+)?(?:number|no\.?|#)|"
    r"\ba-?number\b|\buscis\s+(?:number|no\.?|#)|"
    r"\bvoter(?:'s)?\s+(?:id|registration)(?:\s+(?:card|number|no\.?|#))*|"
    r"known\s+travell?er\s+(?:number|no\.?|id)|\bktn\b|global\s+entry(?:\s+(?:number|no\.?|id|pass\s*id))?|"
    r"\bnexus\s+(?:number|no\.?|id)|\bredress\s+(?:number|no\.?)|"
    r"residen(?:ce|cy)\s+(?:permit|card)(?:\s+(?:number|no\.?|#))?|\bbrp(?:\s+(?:number|no\.?))?|"
    r"personalausweis(?:nummer|[- ]?nr\.?)?|ausweisnummer|carte\s+d'identit[ée]|"
    r"\bird\s+(?:number|no\.?)|\bnhi\s+(?:number|no\.?)|\bhetu\b|\bcnp\b|\begn\b|\bjmbg\b|\boib\b|"
    r"\bamka\b|\bnric\s+(?:number|no\.?)|\bfin\s+(?:number|no\.?)|\bemirates\s+id|\biqama(?:\s+(?:number|no\.?))?"
)
# the value, as the main table reads it (_ID_TAIL), and not cut from a longer word
_ID_VALUE = _ID_TAIL + r"(?![\w])"
_ID_NAMED_MORE = re.compile(r"(?i)(?:" + _ID_NAMES + r")" + _ID_VALUE)
_PASSPORT_MORE = re.compile(
    r"(?i)\b(?:reisepass(?:nummer|[- ]?nr\.?)?|passnummer|paspoort(?:nummer)?|paszport(?:u)?|"
    r"passin\s+numero|passnummer)" + _ID_VALUE
)
_STUDENT = re.compile(
    r"(?i)\b(?:student|matriculation|matrikel|enrol(?:l)?ment)(?:[\s-]*(?:id|number|no\.?|nr\.?|#|nummer))"
    + _ID_VALUE
)
_MORE_ID_HINTS = (
    "utr", "tfn", "tax file", "pps", "personal public", "ahv", "avs", "versicherung", "sv-", "svnr",
    "green card", "alien", "a-number", "anumber", "uscis", "voter", "travel", "ktn", "global entry",
    "nexus", "redress", "residen", "brp", "ausweis", "identit", "ird", "nhi", "hetu", "cnp", "egn", "jmbg",
    "oib", "amka", "nric", "fin ", "emirates", "iqama", "reisepass", "passnummer", "paspoort", "paszport",
    "passin", "student", "matric", "enrol",
)  # fmt: skip


def _digits(v: str) -> int:
    return sum(c.isdigit() for c in v)


def _named_ids(text: str, low: str, spans: list[Span]) -> None:
    for m in _ID_NAMED_MORE.finditer(text):
        v = m.group("val")
        if (
            _digits(v) >= 5
            and not _is_plain_number_phrase(v)
            and _named_id_ok(m.group(0)[: m.start("val") - m.start()], v)
        ):
            spans.append(Span(m.start("val"), m.end("val"), "NATIONAL_ID", "id-named-more"))
    if "pas" in low:
        for m in _PASSPORT_MORE.finditer(text):
            if _digits(m.group("val")) >= 4 and not _is_plain_number_phrase(m.group("val")):
                spans.append(Span(m.start("val"), m.end("val"), "PASSPORT", "passport-more"))
    if "student" in low or "matri" in low or "enrol" in low:
        for m in _STUDENT.finditer(text):
            if _digits(m.group("val")) >= 4 and not _is_plain_number_phrase(m.group("val")):
                spans.append(Span(m.start("val"), m.end("val"), "EMPLOYEE_ID", "student-number"))


def _tfn_ok(d: str) -> bool:
    weights = (1, 4, 3, 7, 5, 8, 6, 9, 10) if len(d) == 9 else (10, 7, 8, 4, 6, 3, 5, 1)
    return len(d) in (8, 9) and sum(int(c) * w for c, w in zip(d, weights, strict=True)) % 11 == 0


def _ean13_ok(d: str) -> bool:
    return len(d) == 13 and sum(int(c) * (3 if i % 2 else 1) for i, c in enumerate(d)) % 10 == 0


def _named_id_ok(name: str, v: str) -> bool:
    """Numbers whose naming word is short or shared (PPS, UTR, TFN, AHV) must also have their format."""
    name = name.lower()
    d = re.sub(r"\D", "", v)
    if re.search(r"\bppsn?\b", name):
        return re.fullmatch(r"\d{7}[A-Wa-w][A-Ia-iWw]?", re.sub(r"[ .-]", "", v)) is not None
    if re.search(r"\butr\b|taxpayer\s+reference|tax\s+reference", name):
        return len(d) == 10 and re.fullmatch(r"[\d .-]+[Kk]?", v) is not None
    if re.search(r"\btfn\b|tax\s+file", name):
        return _tfn_ok(d) and re.fullmatch(r"[\d .-]+", v) is not None
    if re.search(r"\bahv|\bavs\b", name):
        return d.startswith("756") and _ean13_ok(d)
    return True


# --------------------------------------------------------------------------------------------------
# authenticator secrets and one-time recovery codes

_TOTP = re.compile(
    r"(?i)\b(?:totp|2fa|mfa|otp|two[- ]factor|authenticator|authy|google\s+authenticator)"
    r"(?:\s+(?:app|auth|authentication))?\s+(?:setup\s+|secret\s+|shared\s+|seed\s+)?"
    r"(?:secret|seed|key|code)(?:\s+key)?"
    + _LINK
    + r"(?P<val>[A-Za-z2-7]{4}(?:[ ]?[A-Za-z2-7]{4}){3,15}=*)(?![\w])"
)
_CODE_NAMES = (
    r"(?i)\b(?:recovery|backup|2fa|mfa|otp|one[- ]time|scratch|emergency|two[- ]factor)"
    r"(?:\s+(?:backup|recovery|login|sign-?in))?\s+(?:codes?|keys?|pins?)\b"
)
_CODES_START = re.compile(
    _CODE_NAMES + r"(?:\s+(?:for|on|of)\s+(?:my\s+|the\s+|our\s+)?[A-Z][\w.-]*)?"
    r"(?:\s+(?:is|are|was|were)\b|\s*[:=\-])?\s*"
)
_CODE_ITEM = re.compile(r"[\"'`]?([A-Za-z0-9]{3,40}(?:-[A-Za-z0-9]{3,12}){0,7})(?![\w-])[\"'`]?[\s,;]*")


_CODE_HINTS = (
    "totp", "2fa", "mfa", "otp", "authenticat", "authy", "factor", "recovery", "backup", "one-time",
    "one time", "scratch", "emergency",
)  # fmt: skip


def _totp_and_codes(text: str, spans: list[Span]) -> None:
    for m in _TOTP.finditer(text):
        v = m.group("val")
        compact = v.replace(" ", "").rstrip("=")
        if not (v.isupper() or v.islower() or not any(c.isalpha() for c in v)):
            continue  # base32 keys are written in one case
        if len(compact) >= 16 and (re.search(r"[2-7]", compact) or (" " in v and v.isupper())):
            spans.append(Span(m.start("val"), m.end("val"), "SECRET", "totp-secret"))
    for m in _CODES_START.finditer(text):
        pos = m.end()
        items: list[tuple[int, int]] = []
        total = 0
        while True:
            c = _CODE_ITEM.match(text, pos)
            if c is None:
                break
            item = c.group(1)
            if not re.search(r"\d", item) or (item.isdigit() and len(item) < 4):
                break  # a word ("stored", "and") or a count ("3 of 10") ends the list
            items.append(c.span(1))
            total += sum(ch.isalnum() for ch in item)
            pos = c.end()
        if items and total >= 6:
            # one token per code; a code written in spaced groups ("1234 5678") stays one value
            if all(text[a:b].isdigit() and b - a <= 4 for a, b in items):
                items = [(items[0][0], items[-1][1])]
            for a, b in items:
                spans.append(Span(a, b, "SECRET", "recovery-codes"))


# --------------------------------------------------------------------------------------------------
# a birth date after the birthplace; a plate after "my plate number"

_BORN_PLACE = re.compile(
    r"(?i)\bborn\s+(?:in|at)\s+(?-i:[A-Z][\w'’.-]*)(?:(?:\s+|,\s*)(?:(?-i:[A-Z][\w'’.-]*)|upon|on-\w+|de|di|del)){0,4}?"
    r",?\s+(?:on\s+(?:the\s+)?)?(?P<val>"
    r"(?:19|20)\d\d[-/.](?:0?[1-9]|1[0-2])[-/.](?:0?[1-9]|[12]\d|3[01])"
    r"|(?:0?[1-9]|[12]\d|3[01])[-/.](?:0?[1-9]|1[0-2])[-/.](?:19|20)?\d\d"
    r"|(?:0?[1-9]|1[0-2])[-/.](?:0?[1-9]|[12]\d|3[01])[-/.](?:19|20)?\d\d"
    r"|(?:0?[1-9]|[12]\d|3[01])(?:st|nd|rd|th)?(?:\s+of)?\s+(?-i:[A-Z][a-z]+)\.?,?\s+(?:19|20)\d\d"
    r"|(?-i:[A-Z][a-z]+)\.?\s+(?:0?[1-9]|[12]\d|3[01])(?:st|nd|rd|th)?,?\s+(?:19|20)\d\d)(?![\w])"
)
_MONTH_WORDS = frozenset(
    re.findall(
        r"[a-z]+",
        "jan feb mar apr may jun jul aug sep sept oct nov dec january february march april june "
        "july august september october november december",
    )
)
_PLATE_MINE = re.compile(
    r"(?i)\b(?:my|her|his|their|our|the\s+car'?s)\s+(?:car(?:'s)?\s+|licen[cs]e\s+|number\s+)?"
    r"plates?\s+(?:number|no\.?|#)"
    r"(?:\s+(?:is|was|reads|=|:|-))*\s*[:#=]?\s*[\"'`]?"
    r"(?P<val>(?=[A-Za-z0-9 -]*\d)[A-Za-z0-9]{1,4}(?:[ -]?[A-Za-z0-9]{1,4}){0,3})(?![\w-])"
)


def _born_and_plates(text: str, low: str, spans: list[Span]) -> None:
    if "geboren" in low:
        for m in _DOB_VERB_LAST.finditer(text):
            spans.append(Span(m.start("val"), m.end("val"), "DOB", "date-of-birth-verb-last"))
    if "born" in low:
        for m in _BORN_PLACE.finditer(text):
            words = re.findall(r"[A-Za-z]+", m.group("val"))
            if all(w.lower() in _MONTH_WORDS or w.lower() in ("st", "nd", "rd", "th", "of") for w in words):
                spans.append(Span(m.start("val"), m.end("val"), "DOB", "date-of-birth-place"))
    if "plate" in low:
        for m in _PLATE_MINE.finditer(text):
            v = re.sub(r"[ -]", "", m.group("val"))
            if 4 <= len(v) <= 10 and not _is_plain_number_phrase(m.group("val")):
                spans.append(Span(m.start("val"), m.end("val"), "VEHICLE_ID", "licence-plate"))


# --------------------------------------------------------------------------------------------------


def _has_any(low: str, words: tuple[str, ...]) -> bool:
    return any(w in low for w in words)


def find_more_shapes(text: str, low: str, spans: list[Span]) -> None:
    """Append a Span for each payment handle, BIC, further named id, authenticator secret, recovery code,
    number written in words after the words naming a code, a phone number or a birth date, birth date after
    a birthplace or before a last "geboren", and plate after 'my plate number' in text (low: text.lower())."""
    if _has_any(low, _PAY_HINTS):
        _payments(text, low, spans)
    if "bic" in low or "swift" in low:
        _bics(text, spans)
    if _has_any(low, _CODE_HINTS):
        _totp_and_codes(text, spans)
    _spelled_numbers(text, low, spans)
    if _DIGIT.search(text) is None:
        return
    if _has_any(low, _MORE_ID_HINTS):
        _named_ids(text, low, spans)
    if "born" in low or "plate" in low or "geboren" in low:
        _born_and_plates(text, low, spans)


# --------------------------------------------------------------------------------------------------
# numbers written in words: a code, a PIN, a password, a phone number or a birth date read out ("the alarm
# code is one nine four five", "call me on oh seven seven double oh nine ...", "born on the twelfth of March,
# nineteen eighty-seven"). The reader of spelled digits is used only right after the words that name such a
# value (the code and birth-date names of the tables above, the words that give a phone number), never on
# free text: "I have two cats and one dog", "one two three, go!" stay.

_SPELLED_DIGIT_VALUES = {
    "zero": 0, "oh": 0, "nought": 0, "nil": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9,
}  # fmt: skip
_SPELLED_DIGIT = r"(?:" + "|".join(_SPELLED_DIGIT_VALUES) + r")"
# one digit, or a doubled or tripled one ("double oh", "triple seven")
_SPELLED_ITEM = r"(?:(?:double|triple)[ -])?" + _SPELLED_DIGIT
# a run of them, apart by spaces, hyphens or the commas of a number read out in groups; at most 18 words
_SPELLED_RUN = r"(?P<val>" + _SPELLED_ITEM + r"(?:(?:,?[ \t]+|-)" + _SPELLED_ITEM + r"){1,17})(?![\w-])"
# a code, a PIN or a password said in words; the same names and links as the codes in digits (_CODE)
_SPELLED_CODE = re.compile(
    r"(?i)(?:"
    + _CODE_NAME.removeprefix("(?i)")
    + r"|\b(?:pass(?:word|code|wort)|pw)"
    + WHERE_FOR
    + r")"
    + _CODE_LINK
    + _SPELLED_RUN
)
# a phone number read out: "call me on ...", "text her at ...", "my number is ...", "mobile: ..."
_SPELLED_PHONE = re.compile(
    r"(?i)\b(?:(?:call|ring|text|phone|message|whats\s?app|reach|contact)\s+"
    r"(?:me|him|her|us|them|mum|mom|dad|(?-i:[A-Z][a-z]{1,20}))\s+(?:on|at)|"
    r"(?:my|his|her|their|our|your)\s+(?:(?:phone|mobile|cell|home|work)\s+)?number(?:'s|\s+(?:is|was)|\s*:)|"
    r"(?:phone|mobile|cell|landline|tel)(?:\s+(?:number|no\.?))?(?:'s|\s+(?:is|was)|\s*:))"
    r"\s*" + _SPELLED_RUN
)
# a day and a year in words: "the twelfth of March", "March the twenty-third", "nineteen eighty-seven",
# "nineteen oh five", "two thousand and one", "twenty twelve"
_ORDINAL_DAY = (
    r"(?:(?:twenty|thirty)[ -]first|twenty[ -](?:second|third|fourth|fifth|sixth|seventh|eighth|ninth)|"
    r"first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|thirteenth|"
    r"fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|nineteenth|twentieth|thirtieth)"
)
_UNITS_WORD = r"(?:one|two|three|four|five|six|seven|eight|nine)"
_TEENS_WORD = r"(?:ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen)"
_YEAR_WORDS = (
    r"(?:(?:nineteen|twenty)[ -](?:hundred\s+(?:and\s+)?)?(?:(?:oh|o)[ -]"
    + _UNITS_WORD
    + r"|"
    + _TEENS_WORD
    + r"|(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)(?:[ -]"
    + _UNITS_WORD
    + r")?)|"
    r"two\s+thousand(?:\s+(?:and\s+)?(?:"
    + _TEENS_WORD
    + r"|twenty(?:[ -]"
    + _UNITS_WORD
    + r")?|"
    + _UNITS_WORD
    + r"))?)"
)
_DAY_NUMBER = r"(?:0?[1-9]|[12]\d|3[01])(?:st|nd|rd|th)?"
_YEAR_ANY = r"(?:(?P<yw>" + _YEAR_WORDS + r")|(?:19|20)\d\d)"
_DOB_SPELLED = re.compile(
    _DOB_NAME
    + _DOB_LINK
    + r"(?:the\s+)?(?P<val>(?:(?P<dw>"
    + _ORDINAL_DAY
    + r")|"
    + _DAY_NUMBER
    + r")(?:\s+of)?\s+"
    + _MONTHS
    + r"(?:,?\s+"
    + _YEAR_ANY
    + r")?|"
    + _MONTHS
    + r"\s+(?:the\s+)?(?:(?P<dw2>"
    + _ORDINAL_DAY
    + r")|"
    + _DAY_NUMBER
    + r")(?:,?\s+"
    + _YEAR_ANY.replace("?P<yw>", "?P<yw2>")
    + r")?)(?![\w-])"
)
# A code said in pairs of digits, as a year or a time is read: "my PIN is twelve thirty-four" (1234), "the alarm
# code is twenty twenty-four", "nineteen oh five", "eleven twenty-two thirty-three". Each item is a number of
# tens ("thirty-four", "twenty"), a teen or a digit; the run needs two items and one of tens or a teen (a run
# of digits alone is _SPELLED_CODE's), and reads as 4 to 12 digits.
_TENS_WORD = r"(?:twenty|thirty|forty|fourty|fifty|sixty|seventy|eighty|ninety)"
_TENS_ITEM = (
    r"(?:"
    + _TENS_WORD
    + r"(?:[ -]"
    + _UNITS_WORD
    + r")?|"
    + _TEENS_WORD
    + r"|"
    + _SPELLED_ITEM
    + r")(?![a-z])"
)
_TENS_RUN = r"(?P<val>" + _TENS_ITEM + r"(?:(?:,?[ \t]+|-)" + _TENS_ITEM + r"){1,11})(?![\w-])"
_TENS_CODE = re.compile(_SPELLED_CODE.pattern.removesuffix(_SPELLED_RUN) + _TENS_RUN)
# the bare word "code" names a code only with a determiner before it and nothing after its value but the end
# of the clause: "the code is nineteen eighty-four", "our code is 4471." ("the code is 1984 lines", "the error
# code is 404", "code: 200 OK" stay)
_PLAIN_CODE = re.compile(
    r"(?i)\b(?:the|my|our|your|his|her|their)\s+code(?:'s|\s+(?:is|was)|\s*:)\s+[\"'`]?"
    r"(?:(?P<digits>\d(?:\d|[ -](?=\d)){3,11})(?![\w]|[.,-]\d)|" + _TENS_RUN + r")"
    r"(?=[\"'`]?\s*(?:$|[.,;!?)]|\s(?:and|but|so|or|ok|okay|please|thanks)\b))"
)
_TENS_VALUES = {
    **{w: str(i + 10) for i, w in enumerate(re.findall(r"[a-z]+", _TEENS_WORD))},
    **{w: str(i + 2) for i, w in enumerate(re.findall(r"[a-z]+", _TENS_WORD.replace("fourty|", "")))},
    "fourty": "4",
}
_CODE_WORD_NAMED = re.compile(r"(?i)code|pin\b|passcode|pass(?:word|wort)|\bpw\b|cvv|cvc|cvn|puk")


def _tens_number(v: str) -> str:
    """The digits of a code said in pairs ("twelve thirty-four" -> "1234", "nineteen oh five" -> "1905")."""
    out: list[str] = []
    for item in re.finditer(_TENS_ITEM, v.lower()):
        words = re.findall(r"[a-z]+", item.group(0))
        if words[0] in _TENS_VALUES and len(_TENS_VALUES[words[0]]) == 1:  # twenty, thirty-four
            out.append(
                _TENS_VALUES[words[0]] + (str(_SPELLED_DIGIT_VALUES[words[1]]) if len(words) > 1 else "0")
            )
        elif words[0] in _TENS_VALUES:  # a teen
            out.append(_TENS_VALUES[words[0]])
        else:
            out.append(_spelled_number(item.group(0)))
    return "".join(out)


def _has_tens(v: str) -> bool:
    return re.search(r"(?i)\b(?:" + _TENS_WORD + "|" + _TEENS_WORD + r")\b", v) is not None


def _words_number(v: str) -> str:
    """The digits of a code in words, said digit by digit or in pairs."""
    return _tens_number(v) if _has_tens(v) else _spelled_number(v)


_SPELLED_HINTS = (
    "code", "pin", "pass", "pw", "combination", "combo", "cvv", "cvc", "cvn", "puk", "call", "ring", "text",
    "phone", "message", "whats", "reach", "contact", "number", "mobile", "cell", "landline", "tel",
)  # fmt: skip
# two spelled digits side by side, searched in the lower-cased text: what every run of three or more holds
_SPELLED_PAIR = re.compile(
    r"(?:o(?:ne|h)|t(?:wo|hree)|f(?:our|ive)|s(?:ix|even)|eight|nine|zero|nought|nil)[ \t,-]+"
    r"(?:double |triple )?(?:o(?:ne|h)|t(?:wo|hree)|f(?:our|ive)|s(?:ix|even)|eight|nine|zero|nought|nil)\b"
)


_TENS_WORDS = (
    "twenty", "thirty", "forty", "fourty", "fifty", "sixty", "seventy", "eighty", "ninety", "teen", "twelve",
    "eleven", "ten",
)  # fmt: skip
# a number of tens or a teen beside another number word, searched in the lower-cased text: what every run of
# _TENS_CODE holds
_TENS_HINT = re.compile(
    r"(?:ty|teen|twelve|eleven|\bten)[ \t,-]+(?:(?:double|triple)[ -])?(?:[a-z]*(?:teen|ty)|one|two|three|four|"
    r"five|six|seven|eight|nine|oh|zero|nought|ten|eleven|twelve)\b|"
    r"\b(?:one|two|three|four|five|six|seven|eight|nine|oh|zero)[ \t,-]+(?:[a-z]*(?:teen|ty)|ten|eleven|twelve)\b"
)


def _spelled_number(v: str) -> str:
    """The digits of a run of spelled digits ("double oh nine" -> "009")."""
    out: list[str] = []
    times = 1
    for w in re.findall(r"[a-z]+", v.lower()):
        if w == "double":
            times = 2
        elif w == "triple":
            times = 3
        else:
            out.append(str(_SPELLED_DIGIT_VALUES[w]) * times)
            times = 1
    return "".join(out)


def _spelled_numbers(text: str, low: str, spans: list[Span]) -> None:
    """Codes and PINs of 3 to 12 spelled digits and phone numbers of 7 to 15 after the words naming them; a
    birth date with its day or year in words after a birth word (a year is needed, except after "birthday":
    "born on the fourth of July" is also a title)."""
    pair = _SPELLED_PAIR.search(low) is not None
    tens = _has_any(low, _TENS_WORDS) and _TENS_HINT.search(low) is not None
    hints = (pair or tens) and _has_any(low, _SPELLED_HINTS)
    if hints and pair:
        for m in _SPELLED_CODE.finditer(text):
            if 3 <= len(_spelled_number(m.group("val"))) <= 12:
                spans.append(Span(m.start("val"), m.end("val"), "SECRET", "access-code-spelled"))
        for m in _SPELLED_PHONE.finditer(text):
            if 7 <= len(_spelled_number(m.group("val"))) <= 15:
                spans.append(Span(m.start("val"), m.end("val"), "PHONE", "phone-spelled"))
    if hints and tens:
        for m in _TENS_CODE.finditer(text):
            # a combination is dialled number by number: "the combination is twelve thirty-four" reads as a time
            if not _has_tens(m.group("val")) or not _CODE_WORD_NAMED.search(text, m.start(), m.start("val")):
                continue
            if 4 <= len(_tens_number(m.group("val"))) <= 12:
                spans.append(Span(m.start("val"), m.end("val"), "SECRET", "access-code-spelled"))
    if "code" in low:
        for m in _PLAIN_CODE.finditer(text):
            if m.group("digits") is not None:
                spans.append(Span(m.start("digits"), m.end("digits"), "SECRET", "access-code-plain"))
            elif 4 <= len(_words_number(m.group("val"))) <= 12:
                spans.append(Span(m.start("val"), m.end("val"), "SECRET", "access-code-plain"))
    if "birth" in low or "born" in low or "dob" in low or "d.o.b" in low:
        for m in _DOB_SPELLED.finditer(text):
            spelled = m.group("dw") or m.group("dw2") or m.group("yw") or m.group("yw2")
            has_year = m.group("val")[-2:].isdigit() or m.group("yw") or m.group("yw2")
            if spelled and (has_year or "birthday" in m.group(0).lower()):
                spans.append(Span(m.start("val"), m.end("val"), "DOB", "date-of-birth-spelled"))
