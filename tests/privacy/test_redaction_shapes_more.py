"""More real shapes of personal data and credentials: payment handles (a Venmo or Revolut @username, a Cash
App $cashtag, PayPal.me and other personal payment links), BIC/SWIFT codes after the word naming one,
government numbers named by words the main table lacked (UTR, TFN, PPS, AHV, Sozialversicherungsnummer,
green card, Known Traveler Number, voter id, residence permit), German passport numbers, student numbers,
authenticator (TOTP) secrets, one-time recovery codes written one after another, a birth date after the
birthplace and a plate after "my plate number". Each shape is redacted; its near neighbours in ordinary
text - amounts, tickers, public @handles, the words themselves used in talk - are kept. A broad sample of
shapes that were already handled is kept here too, so none of them regresses."""

from __future__ import annotations

import base64

import pytest

from tests.redaction_cases import assert_found, assert_kept, kinds, redact

# (text, value that must not survive, kind of the token that replaces it). Synthetic values; the
# checksummed ones (TFN, AHV, IBAN, card, ...) are valid.
NEW_SHAPES: list[tuple[str, str, str]] = [
    # a new value given with "got/has been/was changed to"; a birth date after "born on the"
    ("the server root password got changed to x9Kp2#mQ", "x9Kp2#mQ", "SECRET"),
    ("The password has been reset to Winter-2025-Q", "Winter-2025-Q", "SECRET"),
    ("I was born on the 4th of July, 1985", "4th of July, 1985", "DOB"),
    # a secret named with what it is for, then a colon
    ("Wifi password for the cabin: trout-river-2291", "trout-river-2291", "SECRET"),
    ("Password for the cabin wifi: trout-river-2291", "trout-river-2291", "SECRET"),
    ("PIN for the alarm: 4471", "4471", "SECRET"),
    ("Login for the NAS: admin / Sup3rS3cret!", "Sup3rS3cret", "SECRET"),
    ("The login for the router is admin / hunter2!", "hunter2", "SECRET"),
    # payment handles
    ("my venmo is @sara-k-22", "sara-k-22", "BANK_ACCOUNT"),
    ("Venmo: @Jake_Miller88", "Jake_Miller88", "BANK_ACCOUNT"),
    ("send it to my Venmo @tom-r", "tom-r", "BANK_ACCOUNT"),
    ("venmo me at sara-k-22", "sara-k-22", "BANK_ACCOUNT"),
    ("Venmo handle: @dave-lee", "dave-lee", "BANK_ACCOUNT"),
    ("my venmo username is sarak.", "sarak", "BANK_ACCOUNT"),
    ("send the rent to @mark-t-1990 on Venmo", "mark-t-1990", "BANK_ACCOUNT"),
    ("cashapp $jdoe88", "jdoe88", "BANK_ACCOUNT"),
    ("my Cash App is $SaraK2024", "SaraK2024", "BANK_ACCOUNT"),
    ("my cashtag is $mike-b", "mike-b", "BANK_ACCOUNT"),
    ("Cash App: $RobG2000", "RobG2000", "BANK_ACCOUNT"),
    ("pay me at paypal.me/sarakline", "sarakline", "BANK_ACCOUNT"),
    ("PayPal link: https://www.paypal.me/jdoe88/25", "jdoe88", "BANK_ACCOUNT"),
    ("cash.app/$jdoe88", "jdoe88", "BANK_ACCOUNT"),
    ("https://venmo.com/u/sara-k-22", "sara-k-22", "BANK_ACCOUNT"),
    ("revolut.me/annak42", "annak42", "BANK_ACCOUNT"),
    ("monzo.me/johnsmith", "johnsmith", "BANK_ACCOUNT"),
    ("Revolut @jsmith42", "jsmith42", "BANK_ACCOUNT"),
    ("Revtag @annak42", "annak42", "BANK_ACCOUNT"),
    # BIC / SWIFT after the word naming one
    ("BIC: DEUTDEFF", "DEUTDEFF", "BANK_ACCOUNT"),
    ("swift code COBADEFFXXX", "COBADEFFXXX", "BANK_ACCOUNT"),
    ("The SWIFT/BIC is NWBKGB2L for the transfer", "NWBKGB2L", "BANK_ACCOUNT"),
    ("SWIFT: CHASUS33", "CHASUS33", "BANK_ACCOUNT"),
    ("Bank: Barclays, SWIFT code BARCGB22, sort code 20-00-00", "BARCGB22", "BANK_ACCOUNT"),
    ("SWIFT/BIC code: BNPAFRPP", "BNPAFRPP", "BANK_ACCOUNT"),
    ("BIC DEUTDEFF500", "DEUTDEFF500", "BANK_ACCOUNT"),
    # government numbers named by more words
    ("UTR 1234567890", "1234567890", "NATIONAL_ID"),
    ("my TFN is 123 456 782", "123 456 782", "NATIONAL_ID"),
    ("PPSN 1234567TA", "1234567TA", "NATIONAL_ID"),
    ("PPS number 1234567TA", "1234567TA", "NATIONAL_ID"),
    ("AHV-Nr. 756.9217.0769.85", "756.9217.0769.85", "NATIONAL_ID"),
    ("Sozialversicherungsnummer: 12 150485 M 123", "12 150485 M 123", "NATIONAL_ID"),
    ("green card number SRC1234567890", "SRC1234567890", "NATIONAL_ID"),
    ("my Known Traveler Number is 987654321", "987654321", "NATIONAL_ID"),
    ("KTN: TT12345678", "TT12345678", "NATIONAL_ID"),
    ("voter ID ABC1234567", "ABC1234567", "NATIONAL_ID"),
    ("residence permit number ZU1234567", "ZU1234567", "NATIONAL_ID"),
    ("Reisepassnummer C01X00T47", "C01X00T47", "PASSPORT"),
    ("student ID 20231456", "20231456", "EMPLOYEE_ID"),
    ("matriculation number 2345678", "2345678", "EMPLOYEE_ID"),
    # authenticator secrets and one-time codes
    ("TOTP seed: JBSWY3DPEHPK3PXP", "JBSWY3DPEHPK3PXP", "SECRET"),
    ("2FA secret key: JBSW Y3DP EHPK 3PXP", "JBSW Y3DP EHPK 3PXP", "SECRET"),
    ("Google Authenticator setup key: XVQ2 UIGO 75XR UKJ2 7EQP", "XVQ2 UIGO 75XR UKJ2 7EQP", "SECRET"),
    ("authenticator setup key: jbsw y3dp ehpk 3pxp", "jbsw y3dp ehpk 3pxp", "SECRET"),
    ("recovery code 4829-1736-5502", "4829-1736-5502", "SECRET"),
    ("backup code: 48213970", "48213970", "SECRET"),
    ("otp backup code: 1234 5678", "1234 5678", "SECRET"),
    ("Bitwarden recovery code 8F3K2JD94KD8X92M7DK219SK", "8F3K2JD94KD8X92M7DK219SK", "SECRET"),
    # a birth date after the birthplace; a plate after "her plate number"
    ("born in Leeds on 1987-03-14", "1987-03-14", "DOB"),
    ("she was born in Manchester on 2 February 1991", "2 February 1991", "DOB"),
    ("born in London, England on July 4, 1990", "July 4, 1990", "DOB"),
    ("her plate number 7ABC123", "7ABC123", "VEHICLE_ID"),
    ("my plate number is 7ABC123", "7ABC123", "VEHICLE_ID"),
]


@pytest.mark.parametrize(("text", "value", "kind"), NEW_SHAPES)
def test_a_new_shape_is_redacted(text: str, value: str, kind: str) -> None:
    assert_found(text, value, kind)


@pytest.mark.parametrize(
    ("text", "codes"),
    [
        ("my 2FA backup codes: 8f3k-2jd9 4kd8-x92m 7dk2-19sk", ("8f3k-2jd9", "4kd8-x92m", "7dk2-19sk")),
        ("GitHub recovery codes: a1b2c-3d4e5 f6g7h-8i9j0", ("a1b2c-3d4e5", "f6g7h-8i9j0")),
        ("emergency codes: 2917-3381, 6620-1043", ("2917-3381", "6620-1043")),
        ("scratch codes 84720193 73829104 19283746", ("84720193", "73829104", "19283746")),
    ],
)
def test_recovery_codes_written_one_after_another_get_a_token_each(text: str, codes: tuple[str, ...]) -> None:
    out = redact(text)
    assert not any(c in out for c in codes), out
    assert kinds(text) == ["SECRET"] * len(codes), out


def test_a_list_of_codes_ends_at_the_first_word() -> None:
    out = redact("backup codes: 8f3k-2jd9 stored in the drawer")
    assert out == "backup codes: <SECRET_1> stored in the drawer"


# Neighbours of the new shapes in ordinary text: nothing here is redacted.
NEIGHBOURS = [
    "my password was changed yesterday",
    "The wifi password got changed to something easier",
    "born the same year as my cousin",
    # what a secret is for, then words rather than a value
    "The password for the meeting: ask Tom",
    "Password for the shared drive: see the vault",
    "Login for the NAS: see the wiki",
    "The token for the demo: expires tomorrow",
    # payments talked about, amounts, tickers, public handles
    "follow @nasa for launch updates",
    "follow @nasa and @esa",
    "tweet at @AmazonHelp",
    "@sara on Twitter posted the photo",
    "ping @channel about the deploy",
    "she uses venmo a lot",
    "cash app is down again",
    "paypal.me links are handy",
    "Venmo is a payment app owned by PayPal",
    "I use Venmo and Cash App for rent",
    "Venmo charged a $1.50 fee",
    "I paid him back on Venmo yesterday",
    "Venmo me $40 for the tickets",
    "my venmo balance is 120",
    "my venmo account was hacked in 2023",
    "my venmo username changed to something else",
    "sent $20 on cash app",
    "cash app $20 to Mike",
    "paid $15 via cash app yesterday",
    "Cash App's $Cashtag feature is neat",
    "cash is king",
    "paypal fee was 2.9%",
    "Revolut launched in 2015",
    "the cashtag $TSLA is trending",
    "the $AAPL cashtag trended",
    "I bought 3 shares of AAPL at $189.50",
    "Use the $HOME variable and $PATH",
    "paypal.com/signin is the login page",
    "see github.com/octocat/hello-world",
    # BIC / SWIFT talked about
    "the swift code review went well",
    "I'm learning Swift and Kotlin",
    "Swift 5.9 added macros",
    "Taylor Swift played 3 nights",
    "BIC is a pen brand",
    "My BIC pen ran out",
    "BIC stands for Bank Identifier Code",
    "the SWIFT code is 8 or 11 characters long",
    "the BIC of our bank is printed on the statement",
    "swift codes are assigned by SWIFT",
    "SWIFT messages MT103 and MT202",
    "the SWIFT network had 11,000 members",
    # the naming words of the new ids, without an id
    "UTR forms take 10 days",
    "TFN stands for tax file number",
    "TFN lookups take 28 days",
    "the PPS was 12000",
    "AHV is Swiss pension insurance, rates are 8.7%",
    "green card holder since 2015",
    "voter turnout was 66%",
    "A-number lookups cost $10",
    "the student ID card office opens at 9",
    "students 2024 intake is 450",
    # 2FA and codes talked about
    "enable 2FA with an authenticator app",
    "use the authenticator code from your phone",
    "the 2fa code goes to my mail each time",
    "backup codes v2 released",
    "recovery codes are stored in 1Password",
    "print your backup codes and keep them safe",
    "backup code 3 of 10 used",
    "OTP expires in 300 seconds",
    "our backup job runs at 02:00 and keeps 14 copies",
    "MFA was enabled for 1200 users",
    "emergency code blue on floor 4",
    "he won 2FA awards",
    # births and plates in talk
    "born in 1987 in Leeds",
    "born in the USA on July 4",
    "born 3 months early",
    "we met on 14 March 2023 at the cafe",
    "Apollo 11 landed on July 20, 1969",
    "my plate number 3 is cracked",
    "plate number 3 on the menu",
    # lists of small numbers are no phone number
    "lottery numbers 4 8 15 16 23 42",
    "shoe sizes 6 8 10 12 in stock",
]


@pytest.mark.parametrize(
    "text",
    [
        "ring her at 06 12 34 56 78",
        "call +33 6 12 34 56 78",
        "toll free 1 800 555 0199",
        "Call me on 07700 900123",
    ],
)
def test_phone_numbers_with_short_groups_are_still_redacted(text: str) -> None:
    assert "PHONE" in kinds(text), redact(text)


# Shapes that were already handled, kept from regressing: (text, value that must not survive).
_BASIC = base64.b64encode(b"deploy:Xk9!mQ2vLp").decode()
ALREADY: list[tuple[str, str]] = [
    ("Call me on 07700 900123", "07700 900123"),
    ("ring her at 06 12 34 56 78", "06 12 34 56 78"),
    ("his mobile: 0412 345 678", "0412 345 678"),
    ("phone (415) 555-2671", "555-2671"),
    ("my cell is 415.555.2671", "415.555.2671"),
    ("Tel. +44 20 7946 0958", "7946 0958"),
    ("WhatsApp +49 151 23456789", "23456789"),
    ("Tel 0049 30 1234567", "1234567"),
    ("mobile 9876543210", "9876543210"),
    ("passport no. X1234567", "X1234567"),
    ("My passport number is 123456789", "123456789"),
    ("numéro de passeport 12AB34567", "12AB34567"),
    ("driver's license D1234-56789-01234", "D1234-56789-01234"),
    ("driving licence number MORGA753116SM9IJ", "MORGA753116SM9IJ"),
    ("my DL# is S530-4601-2345", "S530-4601-2345"),
    ("EIN 12-3456789", "12-3456789"),
    ("my SSN is 123-45-6789", "123-45-6789"),
    ("my SIN is 046 454 286", "046 454 286"),
    ("my PESEL is 44051401359", "44051401359"),
    ("CPF 123.456.789-09", "123.456.789-09"),
    ("IBAN DE89 3704 0044 0532 0130 00", "DE89 3704 0044 0532 0130 00"),
    ("My IBAN is FR14 2004 1010 0505 0001 3M02 606", "FR14 2004 1010 0505 0001 3M02 606"),
    ("card 4111 1111 1111 1111 exp 09/27", "4111 1111 1111 1111"),
    ("Amex 3782 822463 10005", "3782 822463 10005"),
    ("my visa is 4012-8888-8888-1881", "4012-8888-8888-1881"),
    ("date of birth 03/14/1987", "03/14/1987"),
    ("I was born on July 4, 1990", "July 4, 1990"),
    ("DOB 14.03.1987", "14.03.1987"),
    ("Geburtsdatum: 14.03.1987", "14.03.1987"),
    ("I live at 42 Elm Street, Springfield, IL 62704", "42 Elm Street"),
    ("Apt 4B, 350 Fifth Avenue, New York, NY 10118", "350 Fifth Avenue"),
    ("Musterstraße 5a, 80331 München", "Musterstraße 5a"),
    ("12 rue de la Paix, 75002 Paris", "12 rue de la Paix"),
    ("PO Box 1234, Springfield", "PO Box 1234"),
    (
        "OPENAI_API_KEY=sk-proj-Q7vR2mZ9pL4tYw8nB3cF6hJ1sD5aG0eK7uV2iO9pQ4r",
        "Q7vR2mZ9pL4tYw8nB3cF6hJ1sD5aG0eK7uV2iO9pQ4r",
    ),
    ("AWS key AKIAIOSFODNN7REALKEY", "AKIAIOSFODNN7REALKEY"),
    ("stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"),
    ("google key AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY", "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"),
    ("postgres://admin:S3cr3tPw!@db.internal:5432/prod", "S3cr3tPw!"),
    ("mongodb+srv://app:hunter2xyz@cluster0.ab1cd.mongodb.net/test", "hunter2xyz"),
    ("Server=tcp:db.example.com;Database=prod;User Id=sa;Password=Tr0ub4dor&3;", "Tr0ub4dor&3"),
    (
        "token eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
        "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
        "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    ),
    (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
        "-----END OPENSSH PRIVATE KEY-----",
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
    ),
    ("otpauth://totp/GitHub:alice?secret=JBSWY3DPEHPK3PXP&issuer=GitHub", "JBSWY3DPEHPK3PXP"),
    ("recovery codes: 8d2k-1m3n, 7f4j-2k8l", "8d2k-1m3n"),
    ("my licence plate is AB12 CDE", "AB12 CDE"),
    ("MRN: 00123456", "00123456"),
    ("NHS number 943 476 5919", "943 476 5919"),
    ("VIN 1HGCM82633A004352", "1HGCM82633A004352"),
    ("IMEI 490154203237518", "490154203237518"),
    (
        "discord token MTA4NzY1NDMyMTA5ODc2NTQzMg.G7xK2q.p9Lr4tYw8nB3cF6hJ1sD5aG0eK7uV2iO9pQ4r",
        "p9Lr4tYw8nB3cF6hJ1sD5aG0eK7uV2iO9pQ4r",
    ),
    ("Authorization: Basic " + _BASIC, _BASIC),
    ("the gate code is 2580", "2580"),
    ("my email is jane.doe@example.org", "jane.doe@example.org"),
    ("ETH wallet 0x52908400098527886E0F7030069857D2E4169EE7", "0x52908400098527886E0F7030069857D2E4169EE7"),
]


@pytest.mark.parametrize(("text", "value"), ALREADY)
def test_a_shape_already_handled_stays_redacted(text: str, value: str) -> None:
    out = redact(text)
    assert value not in out, out


# Ordinary text with numbers, codes, versions, times, prices and ids of things: nothing is redacted.
ORDINARY = [
    "the price is $25 and shipping $4.99",
    "it costs $1,299.00 at Best Buy",
    "Order #123456789 shipped today",
    "meeting in room 4021 at 3:30pm",
    "upgrade to Python 3.11.7 and numpy 1.26.4",
    "version 10.0.19041.1 of Windows",
    "flight BA117 departs 14:35 from gate B32",
    "the invoice INV-2024-00123 is due on 2024-03-14",
    "I ran 5 km in 24:31 this morning",
    "ISBN 978-0-306-40615-7",
    "call the API with limit=100 and offset=200",
    "The iPhone 15 Pro has 256 GB",
    "Add 2 cups of flour and 350 g sugar",
    "SKU 8841-2290-11 is out of stock",
    "see PR #4512 and issue #4499",
    "commit 3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a",
    "the sha256 is e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "the Q3 revenue was 4.2 million",
    "train 9:15 to Paddington, platform 7",
    "Use port 8080 and 5432",
    "The temperature was 21.5 degrees",
    "My kid scored 1450 on the SAT",
    "CVE-2021-44228 is log4shell",
    "error code 0x80070005 when installing",
    "Bus 42 to Elm",
    "The model gpt-4o-mini costs $0.15 per million tokens",
    "the uuid 123e4567-e89b-12d3-a456-426614174000 identifies the job",
    "Room 12B, building C, floor 3",
    "release v2.3.1-rc.2 tagged",
    "He's 6 ft 2 and weighs 180 lbs",
    "The score was 3-1 in extra time",
    "Chapter 12, page 345",
    "the wifi network is called Home-5G",
    "Set TTL to 3600 seconds",
    "Highway 101 was closed near exit 420",
    "the year 1987 was great",
    "promo code SAVE20 at checkout",
    "my account on GitHub is called octocat",
    "Deutsche Bank branch on Main Street",
    "kernel 6.8.0-45-generic",
    "take 2 tablets every 8 hours",
    "the bill was 45.60 EUR",
    "He ran the 100 m in 9.58 s",
    "iOS 17.4.1 update",
    "rated 4.5/5 by 1,203 reviewers",
    "RFC 7519 defines JWT",
    "HTTP 404 and 503 errors",
    "zip code 94103 is in SF",
    "Patch Tuesday KB5034441",
    "Gate A12, seat 14C",
    "my kids are 7 and 10",
    "the codes are 200 and 201 for success",
]


@pytest.mark.parametrize("text", NEIGHBOURS + ORDINARY)
def test_a_neighbour_or_ordinary_text_is_kept(text: str) -> None:
    assert_kept(text)
