"""Shapes a fifth probe of everyday lines found missing, each with the near neighbours that must stay as written:

* a code's length said before its colon ("my pin is 4 digit: 7 7 2 1", "PIN (4 digits): 9902", "el PIN tiene
  4 dígitos: 5581"); a length with no code after it ("the PIN, 4 digits, arrives by mail") stays, and the
  length itself ("four-digit") is not taken for the secret;
* a keypad code with one letter A-D between its digits ("code d'accès: 7B21"); two letters inside stay;
* the part of the thing a code opens ("code for the alarm panel: 5521") and a code called its "key" before a
  colon ("key for the alarm panel: 1984"); a physical key ("the key for the alarm panel is in the drawer") and
  a map's key stay;
* single digits read out after the bare name of what they open ("lockbox at the cabin: 3 1 5 0");
* a licence plate after the bare word "plate", "plates", "reg" or "registration" ("plate ABC-1234"), read as
  capitals and digits; "plate 3 of the book", "a plate of pasta", "home plate", "registration: ISO 9001" stay;
* "a/c" and "acct" naming an account on their own ("a/c 87654321"); the air conditioning ("A/C 22C", "the a/c
  is broken", "a/c 12000 BTU") stays; an account number named in Spanish, French and German.
"""

from __future__ import annotations

import pytest

from tests.redaction_cases import assert_fast, assert_found, assert_kept, redact

# (text, value that must not survive, kind of the token that replaces it)
FOUND: list[tuple[str, str, str]] = [
    # a code's length before its colon
    ("my pin is 4 digit: 7 7 2 1", "7 7 2 1", "SECRET"),
    ("my pin is 4 digits: 7721", "7721", "SECRET"),
    ("PIN (4 digits): 9 9 0 2", "9 9 0 2", "SECRET"),
    ("the door code, 6 digits: 483920", "483920", "SECRET"),
    ("bank PIN is four-digit: 3 1 8 8", "3 1 8 8", "SECRET"),
    ("my debit card pin is 4 digits: 8 4 2 6", "8 4 2 6", "SECRET"),
    ("el PIN tiene 4 dígitos: 5 5 8 1", "5 5 8 1", "SECRET"),
    ("PIN (4-stellig): 9 2 4 6", "9 2 4 6", "SECRET"),
    # one keypad letter between the digits
    ("code d'accès: 7B21", "7B21", "SECRET"),
    ("code d'accès : 12A45", "12A45", "SECRET"),
    ("le digicode c'est 4B82", "4B82", "SECRET"),
    ("code de l'immeuble : 2B47", "2B47", "SECRET"),
    ("the door code is 12C4", "12C4", "SECRET"),
    # the part of what a code opens; a code called its "key"
    ("code for the alarm panel: 5521", "5521", "SECRET"),
    ("key for the alarm panel: 1984", "1984", "SECRET"),
    ("key to the safe: 2580", "2580", "SECRET"),
    ("key for the keypad: 7 7 3 1", "7 7 3 1", "SECRET"),
    # single digits after the bare name of what they open
    ("lockbox at the cabin: 3 1 5 0", "3 1 5 0", "SECRET"),
    ("the garage keypad is 7 7 3 1", "7 7 3 1", "SECRET"),
    # a plate after the bare word
    ("plate ABC-1234", "ABC-1234", "VEHICLE_ID"),
    ("plates AB12 CDE", "AB12 CDE", "VEHICLE_ID"),
    ("reg AB12 CDE", "AB12 CDE", "VEHICLE_ID"),
    ("reg: KX19 ZPT", "KX19 ZPT", "VEHICLE_ID"),
    ("registration: 1234 BCD", "1234 BCD", "VEHICLE_ID"),
    ("the van's registration is LD68 XYZ", "LD68 XYZ", "VEHICLE_ID"),
    ("the plate is 7ABC123", "7ABC123", "VEHICLE_ID"),
    ("vehicle plate number ABC123", "ABC123", "VEHICLE_ID"),
    ("my number plate's AB12 CDE", "AB12 CDE", "VEHICLE_ID"),
    # "a/c" and "acct" on their own; an account named in Spanish, French and German
    ("a/c 87654321", "87654321", "BANK_ACCOUNT"),
    ("A/C: 31926819", "31926819", "BANK_ACCOUNT"),
    ("acct 12345678", "12345678", "BANK_ACCOUNT"),
    ("pay it into a/c 55779911 please", "55779911", "BANK_ACCOUNT"),
    ("mi número de cuenta: 12345678", "12345678", "BANK_ACCOUNT"),
    ("numéro de compte : 12345678901", "12345678901", "BANK_ACCOUNT"),
    ("Kto-Nr. 1234567890", "1234567890", "BANK_ACCOUNT"),
]


@pytest.mark.parametrize(("text", "value", "kind"), FOUND)
def test_found(text: str, value: str, kind: str) -> None:
    assert_found(text, value, kind)


# Near neighbours of each new shape. Each stays exactly as written.
KEPT: list[str] = [
    # a length with no code after it
    "the PIN, 4 digits, arrives by mail",
    "PIN (four digits): see letter",
    "my pin is 4 digits long",
    "the code is 6 digits: see the letter",
    "I'm 4 digits away from the PIN: no idea",
    "the new PIN is six-digit: go online",
    # letters inside a number that is no code
    "the code is 7B21 lines",
    "the door code is 1A2B3",
    "PIN, expiry: 1227",
    # a physical key, a map's key
    "the key for the alarm panel is in the drawer",
    "key for the map: blue = rivers",
    "key for the garage: 1984 model",
    "the key to apartment 1204",
    "key for the front door: 3 copies",
    "key for the office: 1204",
    # spaced digits that are no code
    "the alarm is 6 4 5 at night",
    "lockbox: 3 boxes",
    "the gate: 3 4 5 people",
    # the word "plate" and "registration" in other senses
    "plate 3 of the book",
    "a plate of pasta",
    "home plate",
    "plate 104a in the atlas",
    "see Plate XIV of the atlas",
    "see plate AB-12",
    "my plate is full",
    "the plates were 12 inches wide",
    "registration 2024 opens soon",
    "registration: ISO 9001 certified",
    "reg ex 12345",
    "registration closes MAY 2025",
    # the air conditioning
    "A/C 22C",
    "the a/c is broken",
    "a/c 12000 BTU",
    "set the a/c to 21",
    "a/c 240000 BTU unit",
    "acct manager Bob",
]


@pytest.mark.parametrize("text", KEPT)
def test_kept(text: str) -> None:
    assert_kept(text)


# Lines that were caught before these shapes were added: they stay caught.
ALREADY: list[tuple[str, str]] = [
    ("pin for the alarm panel: 0707", "0707"),
    ("code porte: B1234", "B1234"),
    ("le code de la porte est 2580B", "2580B"),
    ("license plate 7ABC123", "7ABC123"),
    ("my car reg is AB12 CDE", "AB12 CDE"),
    ("acct no. 55667788", "55667788"),
    ("a/c 87654321 s/c 40-47-84", "87654321"),
]


@pytest.mark.parametrize(("text", "value"), ALREADY)
def test_already_caught(text: str, value: str) -> None:
    assert value not in redact(text)


def test_length_word_is_not_the_secret() -> None:
    assert "four-digit" in redact("bank PIN is four-digit: 3 1 8 8")


@pytest.mark.parametrize(
    "text",
    [
        "my pin is " + "4 digit " * 5000 + ": 7721",
        "PIN (" * 3000 + "4 digits): 1234",
        "PIN, 4 digits" * 3000 + ": 1234",
        "code d'accès: " + "7B" * 10000,
        "door code: " + "1A" * 10000 + "B",
        "key for the " * 3000 + "alarm panel: 1984",
        "key for the alarm " * 3000 + ": 1984",
        "lockbox: " + "3 " * 10000 + "x",
        "plate " * 5000 + "ABC-1234",
        "plate " + "AB1 " * 5000,
        "registration is " * 3000 + "AB12 CDE",
        "a/c " * 5000 + "87654321",
        "acct no. " * 3000 + "1" * 5000,
        "número de cuenta " * 3000 + ": 12345678",
    ],
    ids=lambda text: text[:24],
)
def test_hostile_input_is_fast(text: str) -> None:
    assert_fast(text)
