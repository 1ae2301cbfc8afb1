"""Checksum and format rules that turn a pattern match into a finding.

A regex alone cannot tell a card number from an order number of the same length, nor an IBAN from a
reference code: these checks are what keep look-alikes out. Each takes the matched text and returns
whether it is the real thing.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["aba_routing", "card_number", "credential", "digit_count", "iban", "luhn", "nhs_number", "ssn", "us_mbi"]


def _digits(text: str) -> str:
    return "".join(c for c in text if c.isdigit())


def luhn(digits: str) -> bool:
    """The Luhn (mod 10) check every payment card number carries."""
    total = 0
    for i, c in enumerate(reversed(digits)):
        d = ord(c) - 48
        if i % 2:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


# Issuer prefixes (IIN ranges) of the networks in wide use, with their lengths. A Luhn-valid number outside
# them is far more likely an id that happens to pass (one in ten random numbers does) than a card.
def _issuer_length_ok(d: str) -> bool:
    n = len(d)
    two, four, six = int(d[:2]), int(d[:4]), int(d[:6])
    if d[0] == "4":  # Visa; its rare 19-digit numbers are left out: a 19-digit integer is far likelier a uint64
        return n in (13, 16)
    if 51 <= two <= 55 or 222100 <= six <= 272099:  # Mastercard
        return n == 16
    if two in (34, 37):  # American Express
        return n == 15
    if four == 6011 or two == 65 or 644 <= int(d[:3]) <= 649 or 622126 <= six <= 622925:  # Discover
        return 16 <= n <= 19
    if 3528 <= four <= 3589:  # JCB
        return 16 <= n <= 19
    if 300 <= int(d[:3]) <= 305 or two in (36, 38, 39):  # Diners Club
        return 14 <= n <= 19
    if two == 62:  # UnionPay
        return 16 <= n <= 19
    if two in (50, 56, 57, 58) or d[:2] == "67" or d[:2] == "63":  # Maestro
        return 12 <= n <= 19
    return False


def card_number(text: str) -> bool:
    """A payment card number: a known issuer's prefix and length, and a valid Luhn digit."""
    d = _digits(text)
    # A long run of zeros after the issuer prefix is a quantity (2592000000000000 ns is 30 days), not an
    # account number; issued numbers are random there.
    return 12 <= len(d) <= 19 and _issuer_length_ok(d) and luhn(d) and len(set(d)) > 1 and "00000000" not in d[6:]


# ISO 13616 lengths per country (the countries whose IBANs appear in practice; an unknown country is refused).
_IBAN_LENGTHS = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BR": 29,
    "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "DO": 28, "EE": 20, "EG": 29, "ES": 24,
    "FI": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28, "HR": 21,
    "HU": 28, "IE": 22, "IL": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LI": 21,
    "LT": 20, "LU": 20, "LV": 21, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MR": 27, "MT": 31, "MU": 30,
    "NL": 18, "NO": 15, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "SA": 24,
    "SE": 24, "SI": 19, "SK": 24, "SM": 27, "TN": 24, "TR": 26, "UA": 29, "VG": 24, "XK": 20,
}  # fmt: skip


def iban(text: str) -> bool:
    """An IBAN: the country's length and the ISO 7064 mod-97 check."""
    compact = "".join(text.split()).upper()
    if _IBAN_LENGTHS.get(compact[:2]) != len(compact):
        return False
    moved = compact[4:] + compact[:4]
    try:
        number = int("".join(str(int(c, 36)) for c in moved))
    except ValueError:
        return False
    return number % 97 == 1


def aba_routing(text: str) -> bool:
    """A US ABA routing number: nine digits, weights 3-7-1, and a Federal Reserve district prefix."""
    d = _digits(text)
    if len(d) != 9 or not (0 <= int(d[:2]) <= 12 or 21 <= int(d[:2]) <= 32 or 61 <= int(d[:2]) <= 72):
        return False
    weights = (3, 7, 1) * 3
    return sum(int(c) * w for c, w in zip(d, weights, strict=True)) % 10 == 0


def ssn(text: str) -> bool:
    """A US social security number the SSA could issue: no 000/666/9xx area, 00 group or 0000 serial."""
    d = _digits(text)
    if len(d) != 9:
        return False
    area, group, serial = d[:3], d[3:5], d[5:]
    return area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


def nhs_number(text: str) -> bool:
    """A UK NHS number: ten digits, the last a mod-11 check digit."""
    d = _digits(text)
    if len(d) != 10:
        return False
    check = 11 - sum(int(c) * w for c, w in zip(d[:9], range(10, 1, -1), strict=True)) % 11
    check = 0 if check == 11 else check
    return check != 10 and check == int(d[9])


def us_mbi(text: str) -> bool:
    """A US Medicare Beneficiary Identifier: the pattern carries the rules (letters without S, L, O, I, B, Z)."""
    return len(text.replace("-", "")) == 11


def digit_count(low: int, high: int) -> Callable[[str], bool]:
    """A check that the match holds `low`..`high` digits (phone numbers: E.164 allows at most 15)."""

    def check(text: str) -> bool:
        return low <= sum(c.isdigit() for c in text) <= high

    return check


_PLACEHOLDER_WORDS = ("your", "example", "placeholder", "redacted", "here", "dummy")


def credential(text: str) -> bool:
    """A credential's value rather than a template's placeholder for one.

    Documentation and config templates write `password = "DATABASE_TOKEN"`, `Bearer YOUR_AUTH_TOKEN`,
    `user:password@host` or `Bearer 00xoXX0x...`: an environment variable's name, a word naming the thing,
    or a shape made of x and 0. A real value is none of these.
    """
    user, _, secret = text.rpartition(":") if "://" not in text and text.count(":") == 1 else ("", "", text)
    value = secret or text
    lowered = value.lower()
    if value.isupper() or (value.replace("_", "").isalpha() and value.replace("_", "").isupper()):
        return False
    if set(lowered) <= set("x0o-"):
        return False
    if lowered in ("password", "pass", "passwd", "secret", "token", "pwd") and (user or lowered == value):
        return False
    # A long random value may contain a word by chance (AWS's documented key ends in EXAMPLEKEY).
    return len(value) > 24 or not any(word in lowered for word in _PLACEHOLDER_WORDS)
