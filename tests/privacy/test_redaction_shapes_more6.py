"""Shapes a sixth probe of everyday lines found missing, each with the near neighbours that must stay as written:

* a key's code named by the key ("spare key code: 5512", "the car key code is 4471"); a keyboard's key code
  ("the key code for Enter is 13") and a key that is a thing ("the spare key is under the mat") stay;
* a password that is a number, said with its length, in English, French, Spanish and German ("mot de passe à
  4 chiffres : 1 2 3 4", "password (6 digits): 482913"); a length with no password after it stays.
"""

from __future__ import annotations

import pytest

from tests.redaction_cases import assert_found, assert_kept

# (text, value that must not survive, kind of the token that replaces it)
FOUND: list[tuple[str, str, str]] = [
    ("spare key code: 5512", "5512", "SECRET"),
    ("the car key code is 4471", "4471", "SECRET"),
    ("house key code 8830", "8830", "SECRET"),
    ("the locker key code is 2291", "2291", "SECRET"),
    ("mot de passe à 4 chiffres : 1 2 3 4", "1 2 3 4", "SECRET"),
    ("password (6 digits): 482913", "482913", "SECRET"),
    ("my password is 6 digits: 7 1 9 3 5 2", "7 1 9 3 5 2", "SECRET"),
    ("la contraseña tiene 6 dígitos: 4 8 2 9 1 3", "4 8 2 9 1 3", "SECRET"),
    ("Passwort (6-stellig): 482913", "482913", "SECRET"),
]


@pytest.mark.parametrize(("text", "value", "kind"), FOUND)
def test_found(text: str, value: str, kind: str) -> None:
    assert_found(text, value, kind)


KEPT: list[str] = [
    "the key code for Enter is 13",
    "the spare key is under the mat",
    "spare key: blue fob",
    "the car key has 3 buttons",
    "key code 4 is the arrow key",
    "password, 8 characters: see the letter",
    "my password is 4 digits long",
    "mot de passe à 8 caractères minimum",
    "the password has 12 characters: see the vault",
    "password reset: 3 attempts left",
]


@pytest.mark.parametrize("text", KEPT)
def test_kept(text: str) -> None:
    assert_kept(text)
