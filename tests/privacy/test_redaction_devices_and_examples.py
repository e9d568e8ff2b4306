"""Identifiers of a person's things, and credentials written the way examples are: MAC addresses by their
shape, IMEIs, licence plates, VINs and employee numbers after the words that name them; a token after an
issuer's prefix even when its body says EXAMPLE or runs in sequence (a memory store is not a code sample:
the shape alone is reason to keep it out). Look-alikes in ordinary text stay as written."""

from __future__ import annotations

import pytest

from memdeck.core.privacy import TOKEN_RE, Redactor
from memdeck.core.privacy.rules import NAMED_BY_PREFIX, PREFIXED_RULES
from memdeck.core.store import Store
from tests.storefiles import holds

FOUND = [
    ("the router's MAC address is 00:1A:2B:3C:4D:5E", "00:1A:2B:3C:4D:5E", "DEVICE_ID"),
    ("Laptop MAC: a4-5e-60-e8-12-9f", "a4-5e-60-e8-12-9f", "DEVICE_ID"),
    ("the switch port shows 0011.2233.4455 as the MAC", "0011.2233.4455", "DEVICE_ID"),
    ("my phone's IMEI is 490154203237518", "490154203237518", "DEVICE_ID"),
    ("My car's plate is KA-01-AB-1234", "KA-01-AB-1234", "VEHICLE_ID"),
    ('the car plate reads "LD21 XKT"', "LD21 XKT", "VEHICLE_ID"),
    ("licence plate 7ABC123", "7ABC123", "VEHICLE_ID"),
    ("the VIN is 1HGCM82633A004352", "1HGCM82633A004352", "VEHICLE_ID"),
    ("my employee id is E-482913", "E-482913", "EMPLOYEE_ID"),
    ("Employee number: 00483921", "00483921", "EMPLOYEE_ID"),
    ("Staff ID: STF-20931", "STF-20931", "EMPLOYEE_ID"),
    ("my aws key is AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE", "SECRET"),
    (
        "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "SECRET",
    ),
    (
        "aws secret key: wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "SECRET",
    ),
    (
        "npm token npm_abcdefghijklmnopqrstuvwxyz0123456789",
        "npm_abcdefghijklmnopqrstuvwxyz0123456789",
        "SECRET",
    ),
    ("device serial number C02XK0ZJJGH5", "C02XK0ZJJGH5", "DEVICE_ID"),
    ("coordinates of my house: 51.5007, -0.1246", "51.5007, -0.1246", "ADDRESS"),
    ("DL# D1234567 (California)", "D1234567", "NATIONAL_ID"),
    ("my health insurance member id is XEH123456789", "XEH123456789", "MEDICAL_ID"),
    ("I live at 12 Rue de Rivoli, 75001 Paris", "12 Rue de Rivoli", "ADDRESS"),
]

LEFT = [
    "The meeting is at 10:30-11:00 in room 4B",
    "Build 2024-01-15-rc2 passed",
    "Use ab:cd as the separator",
    "the default is 00:00:00:00:00:00",
    "The plate was cracked when it arrived",
    "I ate a plate of 3 tacos",
    "Registration is open until 5 May 2025",
    "registration number 12",
    "my work number is 555-0100",  # a phone number: stays a phone, not an employee number
    "Staff number 14 was on the pitch",
    "Employee of the month: Dana",
    "The VIN is on the dashboard",
    "the IMEI is printed under the battery",
    "Plates 1, 2 and 3 are broken",
    "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "AKIAXXXXXXXXXXXXXXXX",
    "aws secret key: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "The AWS SK is in 1Password under the prod entry, not here",
    "The test scored 0.8512, 0.7634 and 0.9123",
    "Prices: 12.5000, 13.2500",
    "Serial killer documentaries are my favourite",
    "the serial number is on the back",
]


@pytest.mark.parametrize(("text", "value", "kind"), FOUND)
def test_the_value_gets_one_token_of_its_kind(text: str, value: str, kind: str) -> None:
    res = Redactor().redact(text, "p")
    assert value not in res.text, res.text
    assert [m.group(1) for m in TOKEN_RE.finditer(res.text)] == [kind], res.text


@pytest.mark.parametrize("text", LEFT)
def test_a_look_alike_is_left_as_written(text: str) -> None:
    res = Redactor().redact(text, "p")
    if text == "my work number is 555-0100":
        assert [m.group(1) for m in TOKEN_RE.finditer(res.text)] == ["PHONE"], res.text
    else:
        assert res.text == text


def test_every_issuer_named_by_its_prefix_has_a_rule() -> None:
    assert not NAMED_BY_PREFIX - {name for name, _rx, _loose in PREFIXED_RULES}


def test_through_the_store_no_file_holds_the_values(store: Store) -> None:
    ids = [store.remember(text, tier="semantic", principal="ana").memory.id for text, _, _ in FOUND]
    for mid, (_, value, kind) in zip(ids, FOUND, strict=True):
        stored = store.get(mid).text
        assert value not in stored and f"<{kind}_" in stored, stored
    root = store.root
    store.close()
    for _, value, _ in FOUND:
        assert holds(root, value) == [], value
