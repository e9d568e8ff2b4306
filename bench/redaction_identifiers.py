"""A labelled set of personal identifiers, codes and vendor tokens, and of look-alikes that must be left alone.

    python bench/redaction_identifiers.py [--seed N] [--part dev|held-out] [--show KIND]

Each case is ``{"kind", "part", "shape", "text", "values"}``. ``values`` lists what must not survive
redaction (no digit run or word of it may be left: see :func:`leaked`); an empty list marks a look-alike,
in which nothing may be redacted at all.

Values are synthetic (fixed seed) and carry the checks of their format (Luhn, Verhoeff, mod 23, the codice
fiscale check character, ISO 7064, base58check, bech32), never real people's numbers. The development part
and the held-out part come from separate template lists written apart (``DEV`` and ``HELD_OUT`` below) and
separate value draws; every positive is also shown in several shapes: bare (only where the format carries
its own evidence), in a sentence, as a JSON field, as a YAML line, as a CSV row under a header and quoted.
The held-out part was scored once blind, after the detectors had been written against the development part;
that first score and what was fixed after it are in bench/RESULTS-redaction.md.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import string
from collections.abc import Callable

SEED = 20261128
DRAWS = 3  # draws per (template, shape)

# --------------------------------------------------------------------------------------------------
# value generators (each returns the value as written)


def _luhn_digit(body: str) -> str:
    total = 0
    for i, ch in enumerate(reversed(body)):
        d = int(ch)
        if i % 2 == 0:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return str((10 - total % 10) % 10)


_VD = [
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
_VP = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    [1, 5, 7, 6, 2, 8, 3, 0, 9, 4],
    [5, 8, 0, 3, 7, 9, 6, 1, 4, 2],
    [8, 9, 1, 6, 0, 4, 3, 5, 2, 7],
    [9, 4, 5, 3, 1, 2, 6, 8, 7, 0],
    [4, 2, 8, 6, 5, 7, 3, 9, 0, 1],
    [2, 7, 9, 3, 8, 0, 6, 4, 1, 5],
    [7, 0, 4, 6, 9, 1, 3, 2, 5, 8],
]
_VINV = [0, 4, 3, 2, 1, 5, 6, 7, 8, 9]


def _verhoeff_digit(body: str) -> str:
    c = 0
    for i, ch in enumerate(reversed(body)):
        c = _VD[c][_VP[(i + 1) % 8][int(ch)]]
    return str(_VINV[c])


def digits(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(string.digits) for _ in range(n))


def nino(rng: random.Random, bad: bool = False) -> str:
    first = "ABCEGHJKLMNOPRSTWXYZ"
    second = "ABCEGHJKLMNPRSTWXYZ"
    p = rng.choice(first) + rng.choice(second)
    while p in ("BG", "GB", "NK", "KN", "TN", "NT", "ZZ"):
        p = rng.choice(first) + rng.choice(second)
    if bad:
        p = rng.choice("DFIQUV") + rng.choice("DFIQUV")
    d = digits(rng, 6)
    s = rng.choice("ABCD")
    return rng.choice([f"{p}{d}{s}", f"{p} {d[:2]} {d[2:4]} {d[4:]} {s}"])


def aadhaar(rng: random.Random, bad: bool = False) -> str:
    body = rng.choice("23456789") + digits(rng, 10)
    d = body + _verhoeff_digit(body)
    if bad:
        d = d[:-1] + str((int(d[-1]) + rng.randint(1, 9)) % 10)
    return f"{d[:4]} {d[4:8]} {d[8:]}"


def dni(rng: random.Random, bad: bool = False) -> str:
    n = digits(rng, 8)
    letter = "TRWAGMYFPDXBNJZSQVHLCKE"[int(n) % 23]
    if bad:
        letter = rng.choice([c for c in "TRWAGMYFPDXBNJZSQVHLCKE" if c != letter])
    return n + letter


def nie(rng: random.Random) -> str:
    x = rng.choice("XYZ")
    n = digits(rng, 7)
    letter = "TRWAGMYFPDXBNJZSQVHLCKE"[int(str("XYZ".index(x)) + n) % 23]
    return f"{x}{n}{letter}"


_CF_ODD = dict(
    zip(
        string.digits + string.ascii_uppercase,
        [1, 0, 5, 7, 9, 13, 15, 17, 19, 21]
        + [1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23],
        strict=True,
    )
)


def codice_fiscale(rng: random.Random, bad: bool = False) -> str:
    cons = "BCDFGHLMNPRSTVZ"
    body = (
        "".join(rng.choice(cons) for _ in range(6))
        + f"{rng.randint(40, 99):02d}"
        + rng.choice("ABCDEHLMPRST")
        + f"{rng.choice([rng.randint(1, 28), rng.randint(41, 68)]):02d}"
        + rng.choice("ABCDEFGHILMZ")
        + digits(rng, 3)
    )
    total = sum(
        _CF_ODD[c] if i % 2 == 0 else (int(c) if c.isdigit() else ord(c) - 65) for i, c in enumerate(body)
    )
    check = chr(65 + total % 26)
    if bad:
        check = chr(65 + (total + rng.randint(1, 25)) % 26)
    return body + check


def personnummer(rng: random.Random) -> str:
    y = rng.randint(1940, 2005)
    m = rng.randint(1, 12)
    d = rng.randint(1, 28)
    body = f"{y % 100:02d}{m:02d}{d:02d}{digits(rng, 3)}"
    ten = body + _luhn_digit(body)
    return rng.choice([f"{y}{m:02d}{d:02d}-{ten[6:]}", f"{ten[:6]}-{ten[6:]}"])


def sin(rng: random.Random) -> str:
    body = rng.choice("1234567") + digits(rng, 7)
    d = body + _luhn_digit(body)
    return rng.choice([f"{d[:3]} {d[3:6]} {d[6:]}", f"{d[:3]}-{d[3:6]}-{d[6:]}", d])


def steuer_id(rng: random.Random) -> str:
    while True:
        pool = rng.sample("0123456789", 9)
        if pool[0] == "0":
            continue
        twice = rng.choice(pool)
        ten = pool + [twice]
        rng.shuffle(ten)
        if ten[0] == "0":
            continue
        product = 10
        for ch in ten:
            s = (int(ch) + product) % 10 or 10
            product = (s * 2) % 11
        d = "".join(ten) + str((11 - product) % 10)
        return rng.choice([d, f"{d[:2]} {d[2:5]} {d[5:8]} {d[8:]}"])


def cpf(rng: random.Random) -> str:
    d = digits(rng, 9)
    for n in (9, 10):
        s = sum(int(d[i]) * (n + 1 - i) for i in range(n))
        d += str((s * 10 % 11) % 10)
    return f"{d[:3]}.{d[3:6]}.{d[6:9]}-{d[9:]}"


MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]  # fmt: skip


def birth_date(rng: random.Random) -> str:
    y, m, d = rng.randint(1940, 2008), rng.randint(1, 12), rng.randint(1, 28)
    return rng.choice(
        [
            f"{y}-{m:02d}-{d:02d}",
            f"{d:02d}/{m:02d}/{y}",
            f"{d} {MONTHS[m - 1]} {y}",
            f"{MONTHS[m - 1]} {d}, {y}",
            f"{d:02d}.{m:02d}.{y}",
            f"{MONTHS[m - 1][:3]} {d} {y}",
        ]
    )


STREETS = ["Baker", "Oak", "Maple", "Elm", "High", "Church", "Victoria", "Mill", "Station", "King",
           "Park", "Willow", "Cedar", "Lincoln", "Washington", "Amphitheatre", "Green Lane"]  # fmt: skip
TYPES = ["Street", "St", "Road", "Rd", "Avenue", "Ave", "Lane", "Drive", "Boulevard", "Way", "Court",
         "Place", "Terrace", "Crescent", "Close", "Parkway"]  # fmt: skip
TOWNS_UK = [("London", "NW1 6XE"), ("Manchester", "M1 2AB"), ("Leeds", "LS1 4DY"), ("Bristol", "BS8 1TH")]
TOWNS_US = [("Mountain View", "CA", "94043"), ("Austin", "TX", "78701"), ("Portland", "OR", "97205"),
            ("Springfield", "IL", "62704")]  # fmt: skip
EU = [
    lambda r: f"Hauptstraße {r.randint(1, 200)}, {r.randint(10115, 99999)} Berlin",
    lambda r: f"{r.randint(1, 120)} rue de la Paix, 750{r.randint(10, 20)} Paris",
    lambda r: f"Calle Mayor {r.randint(1, 90)}, 280{r.randint(10, 99)} Madrid",
    lambda r: f"Via Roma {r.randint(1, 90)}, 00{r.randint(100, 199)} Roma",
    lambda r: f"Kerkstraat {r.randint(1, 300)}, {r.randint(1000, 9999)} AB Amsterdam",
    lambda r: f"Lindenweg {r.randint(1, 80)}a",
]


def address(rng: random.Random) -> str:
    n = rng.choice([str(rng.randint(1, 9999)), f"{rng.randint(1, 300)}{rng.choice('ABC')}"])
    street = f"{n} {rng.choice(STREETS)} {rng.choice(TYPES)}"
    shape = rng.randint(0, 4)
    if shape == 0:
        town, pc = rng.choice(TOWNS_UK)
        return f"{street}, {town} {pc}"
    if shape == 1:
        town, st, z = rng.choice(TOWNS_US)
        return f"{street}, {town}, {st} {z}"
    if shape == 2:
        return f"{street}, Apt {rng.randint(1, 40)}"
    if shape == 3:
        return rng.choice(EU)(rng)
    return street


def passport(rng: random.Random) -> str:
    return rng.choice([digits(rng, 9), rng.choice("CFGHJK") + digits(rng, 8), "P" + digits(rng, 7)])


def account(rng: random.Random) -> str:
    return digits(rng, rng.choice([8, 10, 12]))


def sort_code(rng: random.Random) -> str:
    return f"{rng.randint(10, 99)}-{digits(rng, 2)}-{digits(rng, 2)}"


def routing(rng: random.Random) -> str:
    while True:
        d = digits(rng, 8)
        for last in "0123456789":
            cand = d + last
            if sum(int(c) * w for c, w in zip(cand, (3, 7, 1) * 3, strict=True)) % 10 == 0:
                return cand


def mrn(rng: random.Random) -> str:
    return digits(rng, rng.choice([7, 8, 10]))


def door_code(rng: random.Random) -> str:
    return rng.choice(
        [
            digits(rng, 4),
            digits(rng, 4) + "#",
            digits(rng, 6),
            f"{digits(rng, 2)}-{digits(rng, 2)}-{digits(rng, 2)}",
        ]
    )


def cvv(rng: random.Random) -> str:
    return digits(rng, rng.choice([3, 3, 4]))


SURNAMES = ["Whitfield", "Okonkwo", "Castellano", "Lindqvist", "Petrakis", "Haverford", "Nakamura"]
PETS = ["Biscuit", "Rex", "Mittens", "Pickles", "Shadow", "Noodle"]
FIRST = ["alice", "bob", "carla", "dmitri", "erin", "farah", "gus"]
LAST = ["smith", "nguyen", "okafor", "berg", "rossi", "kowalski"]
DOMAINS = ["gmail", "outlook", "proton", "example", "fastmail", "yahoo"]


def obf_email(rng: random.Random) -> str:
    f, last, d = rng.choice(FIRST), rng.choice(LAST), rng.choice(DOMAINS)
    tld = rng.choice(["com", "org", "net", "co dot uk", "de"])
    return rng.choice(
        [
            f"{f} dot {last} at {d} dot {tld}",
            f"{f}{last} [at] {d} [dot] {tld.replace(' dot ', ' [dot] ')}",
            f"{f}.{last}(at){d}(dot){tld.replace(' dot ', '(dot)')}",
            f"{f} AT {d} DOT {tld.upper()}",
            f"{f}_{last} at {d} dot {tld}",
        ]
    )


_B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def _b58check(payload: bytes) -> str:
    raw = payload + hashlib.sha256(hashlib.sha256(payload).digest()).digest()[:4]
    n = int.from_bytes(raw, "big")
    out = ""
    while n:
        n, r = divmod(n, 58)
        out = _B58[r] + out
    return "1" * (len(raw) - len(raw.lstrip(b"\0"))) + out


_BECH = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"


def _bech32(hrp: str, data: list[int]) -> str:
    gen = (0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3)

    def polymod(values: list[int]) -> int:
        chk = 1
        for v in values:
            b = chk >> 25
            chk = (chk & 0x1FFFFFF) << 5 ^ v
            for i in range(5):
                chk ^= gen[i] if (b >> i) & 1 else 0
        return chk

    exp = [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp]
    pm = polymod(exp + data + [0] * 6) ^ 1
    check = [(pm >> 5 * (5 - i)) & 31 for i in range(6)]
    return hrp + "1" + "".join(_BECH[d] for d in data + check)


def wallet(rng: random.Random, bad: bool = False) -> str:
    kind = rng.randint(0, 2)
    if kind == 2:
        prog = [rng.randrange(32) for _ in range(32)]
        v = _bech32("bc", [0] + prog)
    else:
        v = _b58check(bytes([0 if kind == 0 else 5]) + rng.randbytes(20))
    if bad:
        i = rng.randrange(len(v) - 8, len(v) - 1)
        pool = _BECH if v.startswith("bc1") else _B58
        v = v[:i] + rng.choice([c for c in pool if c != v[i]]) + v[i + 1 :]
    return v


ALNUM = string.ascii_letters + string.digits


def rand(rng: random.Random, n: int, alphabet: str = ALNUM) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def vendor(rng: random.Random) -> str:
    return rng.choice(
        [
            lambda: "hvs." + rand(rng, rng.choice([24, 26, 40])),
            lambda: "hvb." + rand(rng, 30),
            lambda: "sk_live_" + rand(rng, rng.choice([24, 34, 99])),
            lambda: "rk_live_" + rand(rng, rng.choice([24, 99])),
            lambda: f"{rng.randint(100000000, 999999999)}:AA" + rand(rng, 33, ALNUM + "_-"),
            lambda: (
                rand(rng, 32, "0123456789abcdef")
                + "-"
                + rand(rng, 8, "0123456789abcdef")
                + "-"
                + rand(rng, 8, "0123456789abcdef")
            ),
            lambda: "AGE-SECRET-KEY-1" + rand(rng, 58, string.ascii_uppercase + string.digits),
            lambda: "pypi-AgEIcHlwaS5vcmc" + rand(rng, 60, ALNUM + "_-"),
        ]
    )()


GEN: dict[str, Callable[[random.Random], str]] = {
    "uk-nino": nino,
    "aadhaar": aadhaar,
    "es-dni": dni,
    "es-nie": nie,
    "it-codice-fiscale": codice_fiscale,
    "se-personnummer": personnummer,
    "ca-sin": sin,
    "de-steuer-id": steuer_id,
    "br-cpf": cpf,
    "dob": birth_date,
    "address": address,
    "passport": passport,
    "bank-account": account,
    "sort-code": sort_code,
    "routing": routing,
    "medical": mrn,
    "access-code": door_code,
    "cvv": cvv,
    "security-answer": lambda r: r.choice(SURNAMES + PETS),
    "obfuscated-email": obf_email,
    "wallet": wallet,
    "vendor-token": vendor,
}
# formats whose own structure is the evidence: also shown bare, with nothing around them
BARE_OK = {"uk-nino", "es-dni", "es-nie", "it-codice-fiscale", "obfuscated-email", "wallet", "vendor-token",
           "br-cpf", "address"}  # fmt: skip
# the field name for JSON, YAML and CSV
FIELD = {
    "uk-nino": "ni_number", "aadhaar": "aadhaar", "es-dni": "dni", "es-nie": "nie",
    "it-codice-fiscale": "codice_fiscale", "se-personnummer": "personnummer", "ca-sin": "sin",
    "de-steuer-id": "steuer_id", "br-cpf": "cpf", "dob": "date_of_birth", "address": "home_address",
    "passport": "passport_number", "bank-account": "account_number", "sort-code": "sort_code",
    "routing": "routing_number", "medical": "mrn", "access-code": "door_code", "cvv": "cvv",
    "security-answer": "mothers_maiden_name", "obfuscated-email": "contact", "wallet": "btc_wallet",
    "vendor-token": "token",
}  # fmt: skip

# --------------------------------------------------------------------------------------------------
# templates: {v} is the value. DEV and HELD_OUT were written separately.

DEV: dict[str, list[str]] = {
    "uk-nino": ["NI number {v}", "my national insurance number is {v}", "NINO: {v} (keep private)"],
    "aadhaar": ["her Aadhaar is {v}", "Aadhaar number: {v}", "UID {v} was linked to the bank"],
    "es-dni": ["mi DNI es {v}", "DNI: {v}", "his Spanish ID card says {v}"],
    "es-nie": ["NIE {v}", "my NIE number is {v}", "foreigner id (NIE): {v}"],
    "it-codice-fiscale": ["codice fiscale {v}", "CF: {v}", "the tax code on the form is {v}"],
    "se-personnummer": ["personnummer {v}", "my personnummer is {v}", "Swedish personal number {v}"],
    "ca-sin": ["My Social Insurance Number is {v}", "SIN: {v}", "his SIN is {v}, do not share"],
    "de-steuer-id": ["Steuer-ID {v}", "meine Steuer-ID ist {v}", "tax id (Germany): {v}"],
    "br-cpf": ["CPF {v}", "my CPF is {v}", "o CPF dela: {v}"],
    "dob": ["born on {v}", "DOB: {v}", "my date of birth is {v}"],
    "address": ["I live at {v}", "my address is {v}", "ship it to {v} please"],
    "passport": ["passport number {v}", "my passport no. is {v}", "Passport: {v}"],
    "bank-account": ["My bank account is {v} sort code 20-00-00", "account number: {v}", "acct # {v}"],
    "sort-code": ["sort code {v}", "the sort code is {v}", "Sort code: {v}, account 44556677"],
    "routing": ["routing number {v}", "ABA routing: {v}", "the routing number is {v}"],
    "medical": ["Her medical record number is MRN {v}", "MRN: {v}", "patient id {v}"],
    "access-code": ["door code is {v}", "the gate code is {v}", "alarm code: {v}"],
    "cvv": ["card <CARD_1> exp 12/27 cvv {v}", "CVV: {v}", "the CVC is {v}"],
    "security-answer": [
        "my mother's maiden name is {v}",
        "security answer: {v}",
        "first pet's name was {v}",
    ],
    "obfuscated-email": ["email me: {v}", "{v}", "reach her at {v} tomorrow"],
    "wallet": ["BTC wallet {v}", "send it to {v}", "my bitcoin address: {v}"],
    "vendor-token": ["the vault token is {v}", "{v}", "use {v} for the deploy"],
}
HELD_OUT: dict[str, list[str]] = {
    "uk-nino": ["Her NI no. is {v}", "national insurance: {v}", "payroll wants the NI number ({v})"],
    "aadhaar": ["aadhar card no {v}", "my UIDAI number reads {v}", "Aadhaar {v} for KYC"],
    "es-dni": ["Documento: {v}", "DNI número {v}", "passport or DNI {v} accepted"],
    "es-nie": ["NIE: {v}", "número NIE {v}", "residency card {v}"],
    "it-codice-fiscale": ["Codice Fiscale: {v}", "il mio codice fiscale è {v}", "tessera sanitaria {v}"],
    "se-personnummer": ["pnr {v}", "personnummer: {v}", "her Swedish id number is {v}"],
    "ca-sin": ["social insurance number {v}", "SIN number: {v}", "Canadian SIN {v} on the T4"],
    "de-steuer-id": ["Steueridentifikationsnummer {v}", "IdNr: {v}", "Steuer-ID lautet {v}"],
    "br-cpf": ["CPF: {v}", "cpf do cliente {v}", "Brazilian taxpayer id {v}"],
    "dob": ["D.O.B. {v}", "she was born {v}", "date of birth: {v}", "birthday is {v}"],
    "address": ["our new place is {v}", "Address: {v}", "deliveries go to {v}"],
    "passport": ["passport #{v}", "my passport number is {v}", "renewed passport, number {v}"],
    "bank-account": ["bank account number {v}", "checking account {v}", "a/c no {v}"],
    "sort-code": ["sort-code {v}", "BSB {v}", "sort code: {v}"],
    "routing": ["routing # {v}", "RTN {v}", "routing no. {v}"],
    "medical": ["medical record no. {v}", "NHS number {v}", "his MRN is {v}"],
    "access-code": ["the safe combination is {v}", "keypad code for the garage: {v}", "lockbox code {v}"],
    "cvv": ["security code {v}", "cvv2 {v}", "CVV is {v}"],
    "security-answer": [
        "mother's maiden name: {v}",
        "memorable word is {v}",
        "name of my first pet is {v}",
    ],
    "obfuscated-email": ["contact {v}", "write to {v} for access", "e-mail: {v}"],
    "wallet": ["wallet address {v}", "BTC: {v}", "tips to {v}"],
    "vendor-token": ["VAULT_TOKEN {v}", "key {v}", "here is the key: {v}"],
}

# look-alikes: nothing in them may be redacted
LOOK_DEV: dict[str, list[str]] = {
    "dob": [
        "on 14 March 1987 we went hiking",
        "the meeting moved to 2024-03-14",
        "I was born in London and grew up in Leeds",
        "born to run, as the song says",
        "the invoice dated 03/04/2021 is paid",
    ],
    "address": [
        "I live in London",
        "we walked down Baker Street after lunch",
        "Route 66 is a long drive",
        "I ran 10 miles down the road",
        "she has 3 Oak trees in the garden",
    ],
    "passport": ["the passport office opens at 9", "passport photos cost 12 pounds", "my passport expired"],
    "national-id": [
        "order 123456789 shipped",
        "we sold 1234 5678 9012 units in total",
        "12345678A is a part number",
        "ref QQ123456Z",
        "the build 20231015-1234 passed",
    ],
    "code": [
        "the error code is 404",
        "use discount code SAVE20",
        "a combination of 3 colours",
        "zip code 94043 area",
        "the code review took 45 minutes",
    ],
    "account": ["my account is locked", "account balance 1200 dollars", "we have 12 accounts"],
    "email": ["meet me at the dot com party", "I work at Pets dot com", "email me at home"],
    "wallet": ["version 1A2b3C", "the id 1BoatSLRHtKNngkdXEeobR76b53LETtpyX is a test"],
    "medical": ["the medical record was updated", "patient waited 45 minutes", "NHS staff were great"],
    "answer": ["my mother's maiden name field is empty", "what was your first pet?"],
}
LOOK_HELD: dict[str, list[str]] = {
    "dob": [
        "we got married on 12 June 2015",
        "the flight is on June 3, 2024",
        "born and raised in Texas",
        "a new idea was born on the trip",
        "deadline: 2025-01-31",
    ],
    "address": [
        "I moved to Berlin last year",
        "Abbey Road is a great album",
        "she drove 200 miles on the highway",
        "the 5 Street Fighter games",
        "Main Street was busy",
    ],
    "passport": ["lost my passport in Rome", "passport control took an hour", "passport renewal is due"],
    "national-id": [
        "tracking 9400 1000 0000 0000 0000",
        "the score was 123 456 789",
        "invoice 87654321X",
        "chapter 12 34 56 B notes",
        "run 19991231-0000 failed",
    ],
    "code": [
        "the status code was 500",
        "promo code SPRING",
        "the gate opened at 7",
        "combination therapy works",
        "area code 415",
    ],
    "account": ["new account created", "account 7 of 9 done", "she closed her account"],
    "email": ["I'll be at home dot", "we met at the conference", "look at this dot plot"],
    "wallet": ["commit 3f2a9bc1d", "bc1 is a label"],
    "medical": ["medical records are private", "patient zero", "health insurance is expensive"],
    "answer": ["the security question was silly", "memorable day at the beach"],
}

SHAPES = ("bare", "sentence", "json", "yaml", "csv", "quoted")


def _shape(shape: str, kind: str, template: str, v: str) -> str | None:
    sentence = template.format(v=v)
    name = FIELD[kind]
    if shape == "bare":
        return v if kind in BARE_OK else None
    if shape == "sentence":
        return sentence
    if shape == "json":
        return json.dumps({"name": "Sam Doe", name: v})
    if shape == "yaml":
        return f"customer:\n  name: Sam Doe\n  {name}: {v}\n"
    if shape == "csv":
        return f"name,{name}\nSam Doe,{v}\n" if "," not in v else f'name,{name}\nSam Doe,"{v}"\n'
    return f'She wrote: "{sentence}"'


def build(seed: int = SEED) -> list[dict]:
    cases: list[dict] = []
    for part, table, looks, off in (("dev", DEV, LOOK_DEV, 0), ("held-out", HELD_OUT, LOOK_HELD, 1)):
        rng = random.Random(seed * 2 + off)
        for kind, templates in table.items():
            for template in templates:
                for shape in SHAPES:
                    if shape != "sentence" and template != templates[0]:
                        continue  # structured shapes once per kind, sentences for every template
                    for _ in range(DRAWS):
                        v = GEN[kind](rng)
                        text = _shape(shape, kind, template, v)
                        if text is None:
                            continue
                        cases.append(
                            {"kind": kind, "part": part, "shape": shape, "text": text, "values": [v]}
                        )
        for kind, texts in looks.items():
            for text in texts:
                cases.append({"kind": kind, "part": part, "shape": "look-alike", "text": text, "values": []})
        # structured look-alikes: a format's shape with a broken check and nothing naming it
        for gen, kind in ((aadhaar, "national-id"), (dni, "national-id"), (codice_fiscale, "national-id"),
                          (wallet, "wallet")):  # fmt: skip
            for _ in range(4):
                v = gen(rng, bad=True)  # type: ignore[call-arg]
                cases.append({"kind": kind, "part": part, "shape": "look-alike", "text": f"ref {v} noted",
                              "values": []})  # fmt: skip
        for _ in range(4):
            cases.append({"kind": "national-id", "part": part, "shape": "look-alike",
                          "text": f"ticket {nino(rng, bad=True)} closed", "values": []})  # fmt: skip
    return cases


def leaked(value: str, redacted: str) -> bool:
    """True when the value, or its digits run together, or any of its words of 4+ characters survive."""
    if value in redacted:
        return True
    compact = "".join(c for c in value if c.isalnum())
    squeezed = "".join(c for c in redacted if c.isalnum())
    return len(compact) >= 6 and compact in squeezed


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--part", choices=["dev", "held-out"])
    ap.add_argument("--show")
    args = ap.parse_args()
    for c in build(args.seed):
        if (args.part and c["part"] != args.part) or (args.show and c["kind"] != args.show):
            continue
        print(json.dumps(c, ensure_ascii=False))


if __name__ == "__main__":
    main()
