"""Secrets said in a sentence, the way people tell an assistant: where the secret is for ("the wifi password at
the cabin is ..."), how it changed ("changed to ..."), and phrases of plain words that are themselves the
secret (a passphrase, a password of plain words, a wallet's seed or recovery phrase). Also US tax numbers (EIN, ITIN) and VAT numbers
after the words that name them, and GitHub tokens whose body happens to run in sequence. Sentences that only
talk about such things stay."""

from __future__ import annotations

import pytest

from memdeck.core.privacy import TOKEN_RE, Redactor
from memdeck.core.store import Store
from tests.redaction_cases import assert_fast
from tests.storefiles import holds  # every store file holding a value, raw or decoded

SAID = [
    ("The wifi password at the cabin is sunflower-42", "sunflower-42"),
    ("My PIN at the gym is 8824", "8824"),
    ("the alarm code at mum's house is 1945", "1945"),
    ("Her password at work changed to Blue-Horse-77 last week", "Blue-Horse-77"),
    ("the token on my laptop is now gh0-Zx81-Qq", "gh0-Zx81-Qq"),
    ("My ssh passphrase is correct horse battery staple", "correct horse battery staple"),
    (
        "my seed phrase is: abandon ability able about above absent absorb abstract absurd abuse access accident",
        "abandon ability able about above absent absorb abstract absurd abuse access accident",
    ),
    (
        'The recovery phrase for my Ledger is "ocean tired giraffe lemon pencil shadow carbon violin eager humble"',
        "ocean tired giraffe lemon pencil shadow carbon violin eager humble",
    ),
    ("Seed words: tiger ozone basket lunar wisdom fabric", "tiger ozone basket lunar wisdom fabric"),
    (
        "my bitcoin wallet seed: legal winner thank year wave sausage worth useful legal winner thank yellow",
        "legal winner thank year wave sausage worth useful legal winner thank yellow",
    ),
    # a UUID straight after the name of a key or token, with no "is"
    ("my heroku api key 5f1d7c2e-8a4b-4c3d-9e2f-1a2b3c4d5e6f", "5f1d7c2e-8a4b-4c3d-9e2f-1a2b3c4d5e6f"),
    ("access token 0b6e51a2-93c4-4f7d-8e21-7c5a9d3b4e10 for staging", "0b6e51a2-93c4-4f7d-8e21-7c5a9d3b4e10"),
    ("my password is sunshine", "sunshine"),  # one plain word said as the password
    ("The wifi password is tangerine, and the guest one too.", "tangerine"),
    ("Her password was Bluebird", "Bluebird"),
    ("the wifi key is 8f2k-9dj3-kd82", "8f2k-9dj3-kd82"),
    ("Windows product key is VK7JG-NPHTM-C97JM-9MPGT-3V66T", "VK7JG-NPHTM-C97JM-9MPGT-3V66T"),
    ("My 2FA code is 482913", "482913"),
    # given to an act, with no "is": quoted, or one token with a digit or a symbol
    ('Use passphrase "purple monkey dishwasher" to decrypt the backup.', "purple monkey dishwasher"),
    ("Log in with password Tr0ub4dor&3 on the old box.", "Tr0ub4dor&3"),
    ('Enter PIN "4821" at the door.', "4821"),
    ("Type the passcode 7719 when asked.", "7719"),
    ("Use 8812-4471 as the alarm code.", "8812-4471"),
    # a login given as a pair: the password goes
    ("The router admin login is admin / hunter2!", "hunter2!"),
    ("username and password are jsmith / Blue-Horse-77", "Blue-Horse-77"),
    # the word for a password in other languages
    ("Mein Passwort ist Sonnenblume77.", "Sonnenblume77"),
    ("Mon mot de passe est Soleil#2024.", "Soleil#2024"),
    ("Mi contraseña es Girasol-88.", "Girasol-88"),
    ("La password del wifi è Gatto2023", "Gatto2023"),
    ("Mijn wachtwoord is Tulp!998.", "Tulp!998"),
    ("Mitt lösenord är Sommar2024.", "Sommar2024"),
    # a password that is a phrase of plain words, the xkcd or Diceware way
    ("my password is correct horse battery staple", "correct horse battery staple"),
    ("wifi password: purple monkey dishwasher lamp", "purple monkey dishwasher lamp"),
    ("My Netflix password is Sunflower Garden Blue Sky.", "Sunflower Garden Blue Sky"),
    ("the password is orange-elephant-river-piano, all lower case", "orange-elephant-river-piano"),
    ("My password is velvet canyon tulip orbit and I never change it", "velvet canyon tulip orbit"),
    ("Das Passwort ist blaue Katze grosse Sonne.", "blaue Katze grosse Sonne"),
    ("mot de passe : soleil jardin bleu maison", "soleil jardin bleu maison"),
    ("my password is garden jelly spring kitten", "garden jelly spring kitten"),  # no participle, no adverb
]

NAMED_IDS = [
    ("Tax ID (EIN) 12-3456789", "12-3456789", "NATIONAL_ID"),
    ("Our EIN is 12-3456789", "12-3456789", "NATIONAL_ID"),
    ("ITIN 912-70-1234", "912-70-1234", "NATIONAL_ID"),
    ("VAT number GB123456789", "GB123456789", "NATIONAL_ID"),
    (
        "GitHub token ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
        "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
        "SECRET",
    ),
    ("Meine Steuer-ID ist 12 345 678 901.", "12 345 678 901", "NATIONAL_ID"),
    ("Mon numéro de sécurité sociale est 1 85 05 78 006 084 36.", "1 85 05 78 006 084 36", "NATIONAL_ID"),
    ("My health insurance policy number is HLX-99384721.", "HLX-99384721", "MEDICAL_ID"),
    ("My Medicare Beneficiary Identifier is 1EG4-TE5-MK73.", "1EG4-TE5-MK73", "MEDICAL_ID"),
    ("Mein Geburtsdatum ist der 14.03.1987.", "14.03.1987", "DOB"),
    ("Je suis né le 14 mars 1987.", "14 mars 1987", "DOB"),
    ("Nací el 14 de marzo de 1987.", "14 de marzo de 1987", "DOB"),
]

TALKED_ABOUT = [
    "Das Passwort ist zu kurz.",
    "Le mot de passe est incorrect.",
    "La contraseña es muy débil.",
    "Het wachtwoord is veilig.",
    "Use password managers, not sticky notes.",
    "Log in with password and 2FA.",
    'Enter the PIN "you were sent" by text.',
    "Try password reset if you are locked out.",
    "We use PIN codes at the office.",
    "The token for the bus is expensive",
    "The token at the arcade costs two euros",
    "The password in the email was wrong",
    "The secret to good bread is patience",
    "The pin at the top of the map is 12 km away",
    "The code at the top of the page is 200 lines long",
    "The passphrase is not very important to me",
    "My passphrase for the vault is the same as the old one",
    "the mnemonic is a good way to remember the planets",
    "seed: tomatoes basil and peppers in the greenhouse",
    "the wallet seed words are in the safe",
    "the seed phrase is something you should never share with anyone at all ever",
    "the request id 5f1d7c2e-8a4b-4c3d-9e2f-1a2b3c4d5e6f failed",
    "token refresh happens hourly",
    "Use SAVE20 as the promo code",
    "login: https://example.com/login",
    "the login is admin/admin",
    "login: 10:30pm tomorrow",
    "Login is at the top right of the page",
    "We talked about the password policy at work is strict",
    "the score was 12-3456789",
    "Ein Hund ist 12 Jahre alt",
    "the VAT is 20 percent on 12345 items",
    "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "the password is expired",
    "the password is correct",
    "my password is too short",
    "the password is on the fridge",
    "my password is changing tomorrow",
    "the password is probably wrong",
    "the secret is patience",
    "the token is valid",
    "the wifi key is on the router",
    "the recovery codes are in the drawer",
    "zip codes: 10001, 94105",
    "Product key: XXXXX-XXXXX-XXXXX-XXXXX-XXXXX",
    # a sentence about a password that runs four words or more
    "The password is stored hashed using bcrypt.",
    "The password is on the sticky note by the fridge",
    "the wifi password is printed under the router",
    "the password is usually changed every month",
    "The password is really easy to guess",
    "The password is strong enough for the policy",
    "the password is case sensitive remember that",
    "The password is seven words long now",
    "the password is apple banana and cherry",
    "The password was reset by the admin yesterday.",
    "The password is currently shared across teams",
    "the password is being rotated every quarter",
]


@pytest.mark.parametrize(("text", "value"), SAID)
def test_a_secret_said_in_a_sentence_is_replaced_by_one_token(text: str, value: str) -> None:
    res = Redactor().redact(text, "p")
    assert value not in res.text, res.text
    assert [m.group(1) for m in TOKEN_RE.finditer(res.text)] == ["SECRET"], res.text


@pytest.mark.parametrize(("text", "value", "kind"), NAMED_IDS)
def test_tax_numbers_and_tokens_get_a_token_of_their_kind(text: str, value: str, kind: str) -> None:
    res = Redactor().redact(text, "p")
    assert value not in res.text, res.text
    assert [m.group(1) for m in TOKEN_RE.finditer(res.text)] == [kind], res.text
    assert TOKEN_RE.sub(lambda _: value, res.text) == text  # the token took the value, no word around it


@pytest.mark.parametrize("text", TALKED_ABOUT)
def test_a_sentence_about_secrets_is_left_as_written(text: str) -> None:
    assert Redactor().redact(text, "p").text == text


def test_a_list_of_recovery_codes_gets_one_token_each() -> None:
    res = Redactor().redact("recovery codes: 8d2k-1m3n, 7f4j-2k8l, 9p0q-3r5t", "p")
    assert [m.group(1) for m in TOKEN_RE.finditer(res.text)] == ["SECRET"] * 3, res.text
    assert not any(code in res.text for code in ("8d2k-1m3n", "7f4j-2k8l", "9p0q-3r5t"))


def test_through_the_store_no_file_holds_the_secret(store: Store) -> None:
    said = SAID + [(text, value) for text, value, _ in NAMED_IDS]
    ids = [store.remember(text, tier="episodic", principal="ana").memory.id for text, _ in said]
    for mid, (_, value) in zip(ids, said, strict=True):
        assert value not in store.get(mid).text
    root = store.root
    store.close()
    for _, value in said:
        assert holds(root, value) == [], value


def test_the_file_check_finds_a_short_number_standing_alone_and_not_inside_an_id(tmp_path) -> None:
    """The check the test above relies on: a PIN said in a text or kept as an index term is found; the same
    digits inside a hex id or a timestamp's microseconds are not the secret."""
    from memdeck.core.embed import HashEmbedder

    plain = Store.open(tmp_path / "plain", embedder=HashEmbedder(), config={"redaction": {"enabled": False}})
    plain.remember("the alarm code at mum's house is 1945", tier="episodic", principal="ana")
    root = plain.root
    plain.close()
    assert holds(root, "1945")  # stored as written: found

    other = tmp_path / "other"
    other.mkdir()
    (other / "ids.txt").write_bytes(b"sem_a81945c0ffee 2026-11-28T01:31:19.451945 0.0194512")
    assert holds(other, "1945") == []
    (other / "term.txt").write_bytes(b"terms: alarm, code, 1945, house")
    assert holds(other, "1945") == [str(other / "term.txt")]


def test_an_id_after_its_words_takes_no_word_after_it() -> None:
    """ "Mi DNI es 12345678Z y mi pasaporte es PAA123456": each number its own token, the words between kept."""
    text = "Mi DNI es 12345678Z y mi pasaporte es PAA123456."
    res = Redactor().redact(text, "p")
    assert [m.group(1) for m in TOKEN_RE.finditer(res.text)] == ["NATIONAL_ID", "PASSPORT"], res.text
    assert TOKEN_RE.sub("#", res.text) == "Mi DNI es # y mi pasaporte es #."


@pytest.mark.parametrize(
    "text",
    [
        "my password is " + "lamp " * 20000,
        "password: " + "a-" * 20000 + "!",
        "the password is " * 5000 + "x y z w.",
        "wifi password for " + "the cabin " * 5000 + "is a b c d",
    ],
    ids=["words", "hyphens", "names", "where"],
)
def test_a_password_of_words_is_read_in_linear_time(text: str) -> None:
    assert_fast(text)
