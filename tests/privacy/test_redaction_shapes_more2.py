"""Further shapes of credentials and personal data, each with the near neighbours that must stay as written:

* a stated secret's trailing '!' stays in the token when the value already holds a digit or a symbol
  ("Kp2#mQx9!"), and is the sentence's on a plain word ("sunshine!");
* codes named only by what they open ("the alarm at mum's is 2580", "the gate is 4471#", "garage door:
  1234"), not times, distances, flats or airport gates;
* a bare "key" in a sentence about a Wi-Fi network, not "the key is under the mat";
* private-key blocks of any length, and a block cut short with no END line;
* what a probe of everyday lines found missing: door codes and PINs in French, Spanish and German, a PUK,
  a phone's unlock code, "PIN's", "is literally", an e-mail address and its password written as a pair,
  "pass for the wifi", "mot de passe Wi-Fi :", a Dutch "van de wifi", a German genitive ("die PIN meiner
  Bankkarte"), "key for the weather API", "birthday's";
* a short value found once is not cut out of a longer number elsewhere (PIN 1234 inside PUK 12345678).
"""

from __future__ import annotations

import pytest

from memdeck.core.privacy import Redactor
from tests.redaction_cases import assert_fast, assert_found, assert_kept, kinds, redact

# (text, value that must not survive, kind of the token that replaces it)
FOUND: list[tuple[str, str, str]] = [
    # codes named by what they open
    ("The alarm at mum's is 2580", "2580", "SECRET"),
    ("The alarm at mum's is 1945", "1945", "SECRET"),
    ("the gate is 4471#", "4471", "SECRET"),
    ("garage door: 1234", "1234", "SECRET"),
    ("the safe combination is 12-34-56", "12-34-56", "SECRET"),
    ("door code for the cabin is 0912", "0912", "SECRET"),
    ("The house alarm is 1945, disarm it when you get in", "1945", "SECRET"),
    ("Our building entry is 2468#", "2468", "SECRET"),
    ("The key safe at the cottage is 3150", "3150", "SECRET"),
    ("keypad: 7731", "7731", "SECRET"),
    ("the front door is 8426", "8426", "SECRET"),
    ("the padlock is 482", "482", "SECRET"),
    ("the lockbox at the Airbnb is 0415", "0415", "SECRET"),
    ("Partner: \"door's 4471, alarm's 2580\"", "2580", "SECRET"),
    ("Partner: \"door's 4471, alarm's 2580\"", "4471", "SECRET"),
    ("the gate is 2024 now, it was changed", "2024", "SECRET"),
    ("The gate at number 12 is 5566", "5566", "SECRET"),
    # a bare key about a Wi-Fi network
    ("wifi is called HomeNet, the key is blue-banana-77", "blue-banana-77", "SECRET"),
    ("Network: CoffeeShop, key: latte2024", "latte2024", "SECRET"),
    ("key for the wifi: Bananas2024", "Bananas2024", "SECRET"),
    ("Router: TP-Link, key = 8f7a6b5c4d", "8f7a6b5c4d", "SECRET"),
    # door codes, PINs and passwords in other languages
    ("Le code de la porte est 4589B", "4589B", "SECRET"),
    ("Le digicode c'est 4589B", "4589B", "SECRET"),
    ("El código de la puerta es 7788", "7788", "SECRET"),
    ("Der Türcode ist 2580", "2580", "SECRET"),
    ("Mi PIN es 1234", "1234", "SECRET"),
    ("die PIN meiner Bankkarte ist 5566", "5566", "SECRET"),
    ("Mot de passe Wi-Fi : maison2024", "maison2024", "SECRET"),
    ("Wachtwoord van de wifi is Fiets2024!", "Fiets2024", "SECRET"),
    # PINs, unlock codes, contractions
    ("SIM PIN 1234, PUK 12345678", "12345678", "SECRET"),
    ("unlock code for my phone is 583920", "583920", "SECRET"),
    ("the code for the phone is 583920", "583920", "SECRET"),
    ("My PIN's 4321", "4321", "SECRET"),
    ("Door code's 1234", "1234", "SECRET"),
    ("My password's hunter22", "hunter22", "SECRET"),
    ("ok so the password is literally Popcorn77", "Popcorn77", "SECRET"),
    ("the password is still hunter22", "hunter22", "SECRET"),
    ("Pass for the wifi: Sunflower88", "Sunflower88", "SECRET"),
    ("Here's the key for the weather API: 9f8e7d6c5b4a39281706f5e4d3c2b1a0", "9f8e7d6c5b4a3928", "SECRET"),
    # an account as e-mail and password
    ("Netflix: jane@mail.com / Popcorn77", "Popcorn77", "SECRET"),
    ("login jane@mail.com pw Popcorn77", "Popcorn77", "SECRET"),
    ("Apple ID jane@icloud.com pw Sunshine2020", "Sunshine2020", "SECRET"),
    # a birthday with "'s"
    ("My birthday's 14 Feb 1992", "14 Feb 1992", "DOB"),
]


@pytest.mark.parametrize(("text", "value", "kind"), FOUND)
def test_found(text: str, value: str, kind: str) -> None:
    assert_found(text, value, kind)


# Near neighbours of the shapes above: times, distances, amounts, addresses, airport gates, the words used
# in talk. Each stays exactly as written.
KEPT: list[str] = [
    "the alarm is at 7",
    "the gate is 2 miles away",
    "my flat is 42",
    "the meeting is 1430",
    "The gate is open until 2200",
    "Our safe is 30 years old",
    "The alarm goes off at 0630 every weekday",
    "my alarm is 0630 tomorrow",
    "My alarm: 0645",
    "The door is 80 cm wide",
    "Meet me at gate 12 at the airport",
    "Flight BA117, gate: 2150",
    "the gate is 1200 mm wide",
    "Diary entry: 2024-01-03",
    "the lock is 2019-05-01",
    "Door: 1204 on the third floor",
    "the gate is 350 metres down the road",
    "the safe is 30 kg",
    "the garage is 2 doors down",
    "the door is 1.5 m high",
    "the key is under the mat",
    "The lock is 1998 vintage",
    "the safe is 2019 stock from the old shop",
    "the key is to stay calm",
    "wifi was down, the key is to restart the router",
    "Our network is called HomeNet and it's fast",
    "The key is 3 cups of flour to 1 of butter",
    "the network key question came up, the key is clarity",
    "The key to good bread is patience",
    "the password's length is 12",
    "the password is just too short",
    "the boarding pass for the flight: 12345678",
    "The meeting moved to 14:30 on Thursday",
    "Dinner is at 7pm, table for 4",
    "That jacket cost $129.99 on sale",
    "We upgraded to Python 3.11.7 last week",
    "Room 204 is on the second floor",
    "My flight is BA117, departing gate B32 at 10:45",
    "Your order #48213 has shipped",
    "Add 200g flour, 2 eggs and 150ml milk, bake at 180C for 25 minutes",
    "Arsenal won 3-1 against Chelsea",
    "The Lakers beat the Celtics 112-104 last night",
    "I ran 10 km in 52:10",
    "The train leaves from platform 9 at 0815",
    "I scored 1450 on the SAT",
    "We live at number 42, the blue door",
    "Invoice 2024-0193 is due on the 15th",
    "The hotel room is 1207",
    "Pin the tweet to the top of the profile",
    "The safe option is to wait",
    "My PIN arrived by post yesterday",
    "He lives at flat 3, number 12",
    "Let's meet at 1430 near the gate",
    "The combination of flavours is amazing",
    "I forgot my password again, so annoying",
    "A PEM file starts with -----BEGIN RSA PRIVATE KEY----- and ends with -----END RSA PRIVATE KEY-----",
    "-----BEGIN PRIVATE KEY-----\nanything\n-----END PRIVATE KEY-----",
    "-----BEGIN OPENSSH PRIVATE KEY----------END OPENSSH PRIVATE KEY-----",
    "-----BEGIN PRIVATE KEY-----\nMII...\n-----END PRIVATE KEY-----",
    "-----BEGIN PRIVATE KEY-----\n<your key here>\n-----END PRIVATE KEY-----",
    "-----BEGIN PRIVATE KEY-----\nMIIB\nand more words here\n-----END PRIVATE KEY-----",
]


@pytest.mark.parametrize("text", KEPT)
def test_kept(text: str) -> None:
    assert_kept(text)


@pytest.mark.parametrize(
    "text",
    [
        "jane@mail.com / bob@mail.com",
        "write to jane@mail.com / 555-1234",
        "contact jane@mail.com | Marketing",
    ],
)
def test_email_pair_needs_a_password(text: str) -> None:
    # the address is an EMAIL; what follows it is no password: another address, a phone number, a word
    assert kinds(text) == ["EMAIL"] * text.count("@")
    assert "555-1234" in redact(text) or "Marketing" in redact(text) or "bob" not in redact(text)


# ---- a stated secret's last character


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a value with digits or symbols keeps its trailing '!': the secret is never stored less its end
        ("The wifi password was changed to Kp2#mQx9!", "The wifi password was changed to <SECRET_1>"),
        ("My password is hunter22! Don't share it.", "My password is <SECRET_1> Don't share it."),
        ("log in with password hunter22!", "log in with password <SECRET_1>"),
        ("The wifi is HomeNet and the key is Kp2#mQx9!", "The wifi is HomeNet and the key is <SECRET_1>"),
        # '.', '?' and a '!' after a plain word are the sentence's
        ("The wifi password was changed to Kp2#mQx9!.", "The wifi password was changed to <SECRET_1>."),
        ("The wifi password is Kp2mQx9.", "The wifi password is <SECRET_1>."),
        ("My password is sunshine!", "My password is <SECRET_1>!"),
    ],
)
def test_trailing_punctuation(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_trailing_bang_is_in_the_vault_value() -> None:
    r = Redactor()
    res = r.redact("The wifi password was changed to Kp2#mQx9!", "p")
    assert r.reveal(res.text, "p") == "The wifi password was changed to Kp2#mQx9!"
    res = r.redact("My password is sunshine!", "p")
    f = res.findings[0]
    assert "My password is sunshine!"[f.start : f.end] == "sunshine"


# ---- private keys of any length


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "-----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAKj34GkxFhD9\n-----END RSA PRIVATE KEY-----",
            "<SECRET_1>",
        ),
        ("-----BEGIN PRIVATE KEY----- MIIEvQ -----END PRIVATE KEY-----", "<SECRET_1>"),
        ("key: -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEA", "key: <SECRET_1>"),
        (
            '{"private_key": "-----BEGIN PRIVATE KEY-----\\nMIIBVgIBADANBg\\n-----END PRIVATE KEY-----\\n"}',
            '{"private_key": "<SECRET_1>\\n"}',
        ),
        (
            '{"k": "-----BEGIN PRIVATE KEY-----\\r\\nMIIBVgIBADANBg\\r\\n-----END PRIVATE KEY-----"}',
            '{"k": "<SECRET_1>"}',
        ),
        (
            "k: |\n  -----BEGIN EC PRIVATE KEY-----\n  MHcCAQEEI\n  -----END EC PRIVATE KEY-----\nport: 1",
            "k: |\n  <SECRET_1>\nport: 1",
        ),
        (
            "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,3F17F5316E2BAC89\n\n"
            "MIIBOg+AAJ\n-----END RSA PRIVATE KEY-----",
            "<SECRET_1>",
        ),
    ],
)
def test_short_private_keys(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_truncated_private_key_runs_to_the_end_of_the_text() -> None:
    text = "my key -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEA\nthe rest is on the USB stick"
    assert redact(text) == "my key <SECRET_1>"


# ---- a short value is not cut out of a longer number


def test_short_value_not_cut_out_of_a_longer_number() -> None:
    out = redact("SIM PIN 1234, PUK 12345678, and the PIN 1234 again")
    assert out == "SIM PIN <SECRET_1>, PUK <SECRET_2>, and the PIN <SECRET_1> again"
    # standing on its own, a repeated short value is still taken wherever it occurs
    assert redact("gate code 4471. Remember: 4471.") == "gate code <SECRET_1>. Remember: <SECRET_1>."


# ---- hostile input stays fast


@pytest.mark.parametrize(
    "text",
    [
        "-----BEGIN PRIVATE KEY-----" + " \n" * 20000 + "x.",
        "-----BEGIN PRIVATE KEY-----\n" + "\\n " * 20000 + ".",
        "-----BEGIN PRIVATE KEY-----" + "\nA" * 20000,
        "-----BEGIN PRIVATE KEY-----" * 3000,
        "the alarm at " + "mum's " * 5000 + "is 1234",
        "wifi " + "key is " * 5000 + "x",
        "a@b.co / " * 5000,
        "garage door: " + "1-" * 10000,
    ],
)
def test_hostile_input_is_fast(text: str) -> None:
    assert_fast(text)
