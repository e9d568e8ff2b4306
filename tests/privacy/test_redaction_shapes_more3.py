"""Shapes the earlier passes left, each with the near neighbours that must stay as written:

* numbers written in words after the words that name a code, a PIN, a password, a phone number or a birth
  date ("the alarm code is one nine four five", "call me on oh seven seven double oh nine ...", "born on the
  twelfth of March, nineteen eighty-seven"); spelled numbers in free text ("I have two cats and one dog",
  "one two three, go!") stay;
* a password or PIN named with no link word ("..., password trout2291"), not "password reset", "password
  manager", "PIN number" or a date, version, measure or hash name after the word;
* a German or Dutch birth date with the verb last ("Ich bin am 3. Mai 1985 geboren");
* a UK sort code after the bare word "sort" beside an account number, a US SSN called "social";
* a login pair joined by "and" ("the nas creds are admin and N4s!2023");
* what a probe of everyday lines found missing besides.
"""

from __future__ import annotations

import pytest

from memdeck.core.privacy import Redactor
from memdeck.core.privacy.identifiers import _spelled_number
from tests.redaction_cases import assert_fast, assert_found, assert_kept, redact

# (text, value that must not survive, kind of the token that replaces it)
FOUND: list[tuple[str, str, str]] = [
    # spelled digits after a code, PIN or password name
    ("the alarm code is one nine four five", "one nine four five", "SECRET"),
    ("my PIN is four four seven one", "four four seven one", "SECRET"),
    ("the gate code is two five eight oh", "two five eight oh", "SECRET"),
    ("door code: nine nine one one", "nine nine one one", "SECRET"),
    ("PIN: triple seven two", "triple seven two", "SECRET"),
    ("my password is one two three four five six seven", "one two three four five six seven", "SECRET"),
    (
        "the PIN is one two three four and the door code is nine eight seven six",
        "nine eight seven six",
        "SECRET",
    ),
    # spelled phone numbers, UK "double"/"triple" and read out in groups
    (
        "call me on oh seven seven double oh nine one two three four five six",
        "oh seven seven double oh",
        "PHONE",
    ),
    ("text me at five five five, one two three, four five six seven", "four five six seven", "PHONE"),
    ("my number is oh seven seven zero zero, nine double oh one two three", "nine double oh one", "PHONE"),
    ("ring me on oh two oh, seven nine four six, oh nine five eight", "seven nine four six", "PHONE"),
    ("my phone number is five five five one two three four", "five five five one two three four", "PHONE"),
    ("phone: oh one two three four five six seven eight nine", "four five six seven eight", "PHONE"),
    # birth dates with the day or the year in words
    ("born on the twelfth of March, nineteen eighty-seven", "twelfth of March, nineteen eighty-seven", "DOB"),
    ("my birthday is March twelfth 1987", "March twelfth 1987", "DOB"),
    ("born on the first of May, two thousand and one", "first of May, two thousand and one", "DOB"),
    ("my birthday's the twenty-third of June 1990", "twenty-third of June 1990", "DOB"),
    ("my birthday is March twelfth", "March twelfth", "DOB"),
    ("born 12 March nineteen eighty-seven", "12 March nineteen eighty-seven", "DOB"),
    ("DOB: the twenty-first of June, two thousand and five", "twenty-first of June", "DOB"),
    ("born on the fourth of July 1976", "fourth of July 1976", "DOB"),
    # a password named with no link word
    ("the cabin wifi is TroutRiver, password trout2291", "trout2291", "SECRET"),
    ("login: admin, password hunter22", "hunter22", "SECRET"),
    ("Our Wi-Fi: network BTHub-9X2K, password 7gR4kLp2Mz", "7gR4kLp2Mz", "SECRET"),
    ("iPhone passcode 482913", "482913", "SECRET"),
    ("passwd root123", "root123", "SECRET"),
    ("the password hunter22 was leaked", "hunter22", "SECRET"),
    # a login pair joined by "and"
    ("the nas creds are admin and N4s!2023", "N4s!2023", "SECRET"),
    ("Login: root & toor123!", "toor123!", "SECRET"),
    # German and Dutch birth dates with the verb last
    ("Ich bin am 3. Mai 1985 geboren", "3. Mai 1985", "DOB"),
    ("sie ist am 12.03.1990 geboren", "12.03.1990", "DOB"),
    ("Ich wurde am 3. Mai 1985 in Berlin geboren", "3. Mai 1985", "DOB"),
    ("Er ist am 24.12.1979 geboren", "24.12.1979", "DOB"),
    ("wir sind am 1. Januar 2001 geboren, Zwillinge", "1. Januar 2001", "DOB"),
    ("ik ben op 3 mei 1985 geboren", "3 mei 1985", "DOB"),
    ("geboren op 3 mei 1985", "3 mei 1985", "DOB"),
    ("je suis né le 3 mai 1985", "3 mai 1985", "DOB"),
    # a sort code after "sort" beside an account number; an SSN called "social"
    ("account 12345678 sort 60-16-13", "60-16-13", "BANK_ACCOUNT"),
    ("account 12345678 sort 60-16-13", "12345678", "BANK_ACCOUNT"),
    ("acct 31926819 sort 601613", "601613", "BANK_ACCOUNT"),
    ("acct 31926819 sort 601613", "31926819", "BANK_ACCOUNT"),
    ("sort 60-16-13 and account 12345678", "60-16-13", "BANK_ACCOUNT"),
    ("account no. 12345678, sort: 601613", "601613", "BANK_ACCOUNT"),
    ("Her social is 219-09-9999", "219-09-9999", "SSN"),
    ("Her social is 219099999", "219099999", "SSN"),
    ("his social is 219 09 9999", "219 09 9999", "SSN"),
    ("his social: 219 09 9999", "219 09 9999", "SSN"),
    ("The social #: 219-09-9999", "219-09-9999", "SSN"),
    ("his social's 219099999", "219099999", "SSN"),
]


@pytest.mark.parametrize(("text", "value", "kind"), FOUND)
def test_found(text: str, value: str, kind: str) -> None:
    assert_found(text, value, kind)


# Everyday lines with a secret or personal data that were already caught: they stay caught.
ALREADY: list[tuple[str, str]] = [
    ("pw for the NAS is n4sAdm1n!", "n4sAdm1n"),
    ("email: jane@x.com, pass: Blue!Moon7", "Blue!Moon7"),
    ("Router admin: user admin password Sk1pper#4", "Sk1pper#4"),
    ("VPN user jdoe, PIN 88213907", "88213907"),
    ("Sort code 60 16 13, account 31926819", "31926819"),
    ("my date of birth is 04/07/1985", "04/07/1985"),
    ("Her birthday is the 3rd of June", "3rd of June"),
    ("Routing 021000021, account 1234567890", "1234567890"),
    ("Apple ID password: Summer2023!", "Summer2023"),
    ("The gym locker combination is 24-12-36", "24-12-36"),
    ("Sky router admin password is 7HJK2L9P", "7HJK2L9P"),
    ("My SSN is 123 45 6789", "123 45 6789"),
    ("the voicemail PIN is 9090", "9090"),
    ("Call Dave on 07700 900123", "900123"),
    ("I live at 742 Evergreen Terrace, Springfield", "742 Evergreen"),
    ("the PIN for my debit card is 8 4 2 7", "8 4 2 7"),
    ("My PIN is 4-4-7-1", "4-4-7-1"),
    ("Dad's bank login: dad1954 / Marigold55", "Marigold55"),
    ("the password for the shared drive: Otter-Lake-19", "Otter-Lake-19"),
]


@pytest.mark.parametrize(("text", "value"), ALREADY)
def test_already_caught(text: str, value: str) -> None:
    assert value not in redact(text)


# Near neighbours: spelled numbers in talk, the words for a password used in talk, dates that are no birth
# dates, "sort" and "social" in other senses. Each stays exactly as written.
KEPT: list[str] = [
    "I have two cats and one dog",
    "one two three, go!",
    "We counted one two three four five six seven eight sheep",
    "The code is simple: one function, two tests",
    "Call me in five minutes",
    "text me at seven tomorrow",
    "text me at five",
    "call me on Monday, one or two o'clock",
    "Call me when you're one two three steps away",
    "call Mike at five, six or seven",
    "call me on one two three",
    "my number is one of the lucky ones",
    "my phone is on two percent",
    "my PIN is four digits long",
    "the alarm code has four digits",
    "the code review had nine comments",
    "the password is one of these",
    "the combination is twelve thirty-four",
    "Born on the Fourth of July is a great film",
    "born on the second of two twins",
    "my birthday is in March",
    "my birthday party is on May first",
    "We left on the twelfth of March, nineteen eighty-seven",
    "password reset link sent",
    "I use a password manager for everything",
    "the file is password protected",
    "what's your PIN number?",
    "password changed yesterday",
    "my password policy requires 10 characters",
    "PIN pad broken at the till",
    "pin 10-15mm from the edge",
    "Password requirements: 8-64 characters",
    "Use a password 12+ characters long",
    "the password 2024-03-01 rotation is overdue",
    "password-protected zip v2.3.1",
    "login: admin, password: see vault",
    "the password field takes 64 chars",
    "password reset email came at 09:15",
    "password 1 of 3 failed",
    "I change my password every 90days",
    "password manager v10.2.1 released",
    "store the password sha256-hashed",
    "password argon2id with 64MB",
    "set the wifi password WPA2-PSK",
    "GPIO PIN 17, 27 and 22",
    "the login is Monday and 10:30",
    "credentials are here and there",
    "Her social life is busy since 2019",
    "Her social worker called at 10:30",
    "social security office opens at 9",
    "Sort 60 items by price",
    "sort 12-34-56 ascending",
    "account for 12 of the 16 seats",
    "Ich bin am 3. Mai angekommen",
    "sie ist am 12.03.1990 gestorben",
    "Er ist am 3. Mai 1985 nach Berlin gezogen",
    "Mozart ist am 27. Januar 1756 geboren",
    "je suis arrivé le 3 mai 1985",
    "the gate code changed, ask me for it",
    "the safe word is banana",
]


@pytest.mark.parametrize("text", KEPT)
def test_kept(text: str) -> None:
    assert_kept(text)


@pytest.mark.parametrize(
    ("words", "digits"),
    [
        ("one nine four five", "1945"),
        ("oh seven seven double oh nine", "077009"),
        ("triple seven two", "7772"),
        ("five five five, one two three", "555123"),
        ("nought-nil-zero", "000"),
    ],
)
def test_spelled_digits_are_read(words: str, digits: str) -> None:
    assert _spelled_number(words) == digits


def test_spelled_value_repeated_leaves_no_copy() -> None:
    r = Redactor()
    text = "my PIN is four four seven one; again, four four seven one"
    res = r.redact(text, "p")
    assert "four four seven one" not in res.text
    assert r.reveal(res.text, "p") == text


@pytest.mark.parametrize(
    "text",
    [
        "call me on " + "one " * 5000 + "x",
        "my PIN is " + "double " * 5000 + "one",
        "my PIN is " + "one, " * 5000,
        "my number is " + "oh-" * 8000 + "one",
        "password " + "a1" * 10000,
        ("password " + "x1! ") * 3000,
        "born on the " + "twenty-" * 3000 + "first of May",
        "born on the first of May, nineteen " * 2000,
        "ich bin am 3. Mai 1985 in " + "Berlin " * 5000 + "geboren",
        "ist am " * 5000 + "geboren",
        "account 12345678 sort " * 2000,
        "sort 60-16-13 " * 3000 + "account 12345678",
        "social is " * 5000 + "219099999",
        "creds are " + "admin and " * 5000,
    ],
    ids=lambda text: text[:24],
)
def test_hostile_input_is_fast(text: str) -> None:
    assert_fast(text)
