"""What each PII type looks like: one or more detectors per type, in priority order.

A detector is a compiled regex, the group that holds the value (the keyword before it stays readable),
an optional check (`_checks`) that a match must pass, and optional hints: lowercase words of which one must
appear in the text before the regex runs at all (most tool output holds none of them, so most detectors
cost one substring search). Types are the reference's (7.4); credential shapes are `SECRETS`.

Boundaries are explicit lookarounds rather than `\\b`, so that `sk-` inside `task-runner`, a digit run
inside a hex hash, or a number inside a version string never starts a match.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ._checks import aba_routing, card_number, credential, digit_count, iban, ssn

__all__ = ["DETECTORS", "PII_TYPES", "Detector"]

PII_TYPES = (
    "BANK_ACCOUNT",
    "CLOUD_RESOURCES",
    "CREDIT_CARD",
    "DATE_OF_BIRTH",
    "DRIVERS_LICENSE",
    "EMAIL",
    "MEDICAL_ID",
    "OTP",
    "PASSPORT",
    "PHONE",
    "PHYSICAL_ADDRESS",
    "SECRETS",
    "SSN",
)


@dataclass(frozen=True, slots=True)
class Detector:
    type: str
    regex: re.Pattern[str]
    check: Callable[[str], bool] | None = None
    hints: tuple[str, ...] = ()
    """Lowercase substrings of which one must occur in the (lowercased) text for the regex to run."""
    anchored: bool = False
    """The hints are where a match starts (its keywords): the regex is tried only there, never scanned."""
    around: tuple[int, int] | None = None
    """Every match contains one of the hints: the regex scans only `(before, after)` characters around each
    of their occurrences (an email around its `@`), not the whole text."""
    exact: bool = False
    """The hints are matched as written in the text, not lowercased (`around` only)."""


def _d(
    kind: str,
    pattern: str,
    check: Callable[[str], bool] | None = None,
    *hints: str,
    anchored: bool = False,
    around: tuple[int, int] | None = None,
    exact: bool = False,
) -> Detector:
    """A detector; `anchored` ones are keyword-led and tried only where a hint (a keyword's start) occurs.

    A case-insensitive alternation of keywords tried at every position of a 64 KiB output is what made a
    scan slow; finding the keywords with `str.find` first is far cheaper.
    """
    return Detector(kind, re.compile(pattern), check, hints, anchored, around, exact)


_AWS_ID_PREFIXES = frozenset({"i", "vol", "snap", "sg", "subnet", "vpc", "eni", "ami", "igw", "rtb"})


def _aws_resource_id(text: str) -> bool:
    return text.partition("-")[0] in _AWS_ID_PREFIXES


# A value introduced by a keyword: optional "number/no/#/id", optional "is", then a separator.
_SUFFIX = r"(?:[\s_-]*(?i:number|no\.?|num|#|id))?(?:\s+(?i:is|was))?[\"']?\s*[:#=]?\s*[\"']?"
_MONTH = r"(?i:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
_DATE = (
    rf"(?:\d{{4}}-\d{{2}}-\d{{2}}|\d{{1,2}}[/.-]\d{{1,2}}[/.-](?:\d{{4}}|\d{{2}})"
    rf"|\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTH}\.?,?\s+\d{{4}}|{_MONTH}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}})"
)
# Uppercase letters a Medicare Beneficiary Identifier may hold (no S, L, O, I, B or Z).
_MBI_L = "[AC-HJKMNP-RT-Y]"
_STREET_WORDS = (
    "Street St Avenue Ave Road Rd Boulevard Blvd Lane Ln Drive Dr Court Ct Way Place Pl Terrace Parkway Pkwy "
    "Circle Cir Highway Hwy Square Sq Trail Crescent Close Mews Gardens Grove Loop Alley Plaza Row"
).split()
# A street address contains its street word after a space: the windows around those are all that is scanned.
_STREET_HINTS = tuple(
    sorted(
        {
            f" {word}"
            for word in _STREET_WORDS
            if not any(word != other and word.startswith(other) for other in _STREET_WORDS)
        }
    )
)
_STREET = (
    r"(?:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Way|Place|Pl|Terrace|Parkway|Pkwy"
    r"|Circle|Cir|Highway|Hwy|Square|Sq|Trail|Crescent|Close|Mews|Gardens|Grove|Loop|Alley|Plaza|Row)"
)
_UK_POSTCODE = r"[A-Z]{1,2}\d[A-Z\d]?\s*\d[A-Z]{2}"
_ID_VALUE = r"(?=[A-Z0-9-]*\d)[A-Z0-9][A-Z0-9-]{3,18}[A-Z0-9]"

DETECTORS: tuple[Detector, ...] = (
    # --- SECRETS: credential shapes first, so a key that contains an email-like or digit run wins.
    _d(
        "SECRETS",
        r"-{5}BEGIN (?:NATS USER JWT|USER NKEY SEED|(?:RSA |EC |DSA |OPENSSH |ENCRYPTED )?PRIVATE KEY|PGP PRIVATE KEY BLOCK)-{5,6}"
        r"[\s\S]*?-{5,6}END [A-Z ]+-{5,6}",
        None,
        "-----begin",
    ),
    _d("SECRETS", r"s(?<![\w-]s)k-(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9][A-Za-z0-9_-]{19,}", None, "sk-"),
    _d(
        "SECRETS",
        r"x(?<![\w-]x)(?:ox[abposr]-[A-Za-z0-9-]{10,}|app-\d-[A-Za-z0-9-]{10,})\d-[A-Za-z0-9-]{10,}",
        None,
        "xox",
        "xapp-",
    ),
    _d("SECRETS", r"g(?<![\w]g)(?:h[pousr]_[A-Za-z0-9]{36,}|ithub_pat_[A-Za-z0-9_]{22,})", None, "gh", "github_pat_"),
    _d("SECRETS", r"[sr](?<![\w-][sr])k_(?:live|test)_[0-9A-Za-z]{16,}", None, "_live_", "_test_"),
    _d("SECRETS", r"A(?<![\w-]A)Iza[0-9A-Za-z_-]{35}(?![\w-])", None, "aiza"),
    _d("SECRETS", r"A(?<![A-Z0-9]A)(?:KIA|SIA|GPA|IDA|ROA|NPA|IPA)[A-Z0-9]{16}(?![A-Z0-9])"),
    _d("SECRETS", r"S(?<![A-Z0-9]S)[UAONCXP][A-Z2-7]{56}(?![A-Z0-9])"),  # NATS nkey seed
    _d("SECRETS", r"e(?<![\w-]e)yJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", None, "eyj"),
    _d("SECRETS", r"(?i:\bbearer)\s+(?P<v>[A-Za-z0-9\-._~+/]{16,}=*)", credential, "bearer", anchored=True),
    _d("SECRETS", r"(?i:authorization:\s*basic)\s+(?P<v>[A-Za-z0-9+/]{8,}=*)", None, "authorization", anchored=True),
    _d("SECRETS", r"(?<=://)(?P<v>[^/\s:@\"'\[\]{}]*:[^/\s@\"'\[\]{}]+)(?=@)", credential, "://"),
    _d(
        "SECRETS",
        r"(?i:aws_secret_access_key|secret_access_key|aws_secret|password|passwd|secret|api[_-]?key|access[_-]?token"
        r"|auth[_-]?token|client[_-]?secret)[\"']?[ \t]*[:=][ \t]*[\"']?"
        # Not a placeholder (`${VAR}`, `<secret>`, `{{password}}`, `****`) nor prose running into a command.
        r"(?P<v>(?![`{(\[<$%]|\*{3}|[xX]{3})[^\s\"',;`()]{6,}(?![(]))",
        credential,
        "aws_",
        "secret",
        "password",
        "passwd",
        "api",
        "access",
        "auth",
        "client",
        anchored=True,
    ),
    # --- CLOUD_RESOURCES: identifiers of an operator's cloud estate.
    _d("CLOUD_RESOURCES", r"a(?<![\w-]a)rn:aws[\w-]*:[a-z0-9-]+:[a-z0-9-]*:\d{0,12}:[^\s\"',;)\]}]+", None, "arn:"),
    _d("CLOUD_RESOURCES", r"/subscriptions/[0-9a-fA-F]{8}-[0-9a-fA-F-]{27}(?:/[^\s\"',;)]+)?", None, "/subscriptions/"),
    _d("CLOUD_RESOURCES", r"[sg](?<![\w-][sg])(?:3|3a|s)://[a-z0-9][a-z0-9._-]{1,62}(?:/[^\s\"',;)]*)?", None, "://"),
    _d(
        "CLOUD_RESOURCES",
        r"[a-z0-9](?<![\w.-][a-z0-9])[a-z0-9-]*\.(?:[a-z0-9][a-z0-9-]*\.)+amazonaws\.com(?:\.cn)?(?![\w-])",
        None,
        "amazonaws.com",
        around=(200, 20),
    ),
    _d(
        "CLOUD_RESOURCES",
        r"i(?<![\w.-]i)p-\d{1,3}-\d{1,3}-\d{1,3}-\d{1,3}(?:\.[a-z0-9-]+)*\.(?:ec2|compute)\.internal",
        None,
        ".internal",
        around=(80, 12),
    ),
    _d(
        "CLOUD_RESOURCES",
        r"[a-z0-9](?<![\w.-][a-z0-9])[a-z0-9-]{2,62}\.(?:(?:blob|file|queue|table|dfs)\.core\.windows\.net"
        r"|database\.windows\.net|vault\.azure\.net|azurewebsites\.net|servicebus\.windows\.net)(?![\w-])",
        None,
        ".net",
        around=(100, 8),
    ),
    _d(
        "CLOUD_RESOURCES",
        r"[a-z](?<![\w.-][a-z])[\w.-]*@[a-z][a-z0-9-]+\.iam\.gserviceaccount\.com",
        None,
        "gserviceaccount.com",
        around=(200, 24),
    ),
    _d(
        "CLOUD_RESOURCES",
        r"p(?<![\w-]p)rojects/[a-z][a-z0-9-]{4,28}[a-z0-9]/(?:zones|regions|locations|instances|topics|subscriptions"
        r"|secrets|buckets|datasets|serviceAccounts)/[^\s\"',;)]+",
        None,
        "projects/",
    ),
    _d(
        "CLOUD_RESOURCES",
        r"[a-z](?<![\w-][a-z])[a-z]{0,5}-(?:[0-9a-f]{17}|[0-9a-f]{8})(?![\w-])",
        _aws_resource_id,
        "-",
    ),
    _d(
        "CLOUD_RESOURCES",
        r"(?i:aws\s+account|account[_\s-]?id|owner[_\s-]?id)" + _SUFFIX + r"[\"']?(?P<v>\d{12})(?![\w-])",
        None,
        "aws",
        "account",
        "owner",
        anchored=True,
    ),
    # --- Financial.
    _d(
        "CREDIT_CARD",
        r"\d(?<![\w.,-]\d)(?:\d{3}([ -]?)\d{4}\1\d{4}\1\d{1,7}|\d{3}([ -]?)\d{6}\2\d{4,5})(?![\w-]|[.,]\d)",
        card_number,
    ),
    _d("BANK_ACCOUNT", r"[A-Z](?<![\w-][A-Z])[A-Z]\d{2}(?:[ ]?[A-Z0-9]{4}){2,7}(?:[ ]?[A-Z0-9]{1,4})?(?![\w-])", iban),
    _d(
        "BANK_ACCOUNT",
        r"(?i:(?<!aws )account\s*(?:number|no\.?|num|#)|acct\.?(?:\s*(?:no\.?|#|number))?|a/c(?:\s*no\.?)?|kontonummer)"
        r"(?:\s+(?i:is))?\s*[:#=]?\s*(?P<v>\d[\d -]{4,18}\d)(?![\w-])",
        None,
        "account",
        "acct",
        "a/c",
        "kontonummer",
        anchored=True,
    ),
    _d(
        "BANK_ACCOUNT",
        r"(?i:routing|\bABA|\bRTN)" + _SUFFIX + r"(?P<v>\d{9})(?![\w-])",
        aba_routing,
        "routing",
        "aba",
        "rtn",
        anchored=True,
    ),
    _d("BANK_ACCOUNT", r"(?i:sort\s*code)\s*[:#=]?\s*(?P<v>\d{2}-\d{2}-\d{2})(?![\w-])", None, "sort", anchored=True),
    # --- Identity documents and numbers.
    _d("SSN", r"\d(?<![\w.-]\d)\d{2}-\d{2}-\d{4}(?![\w-]|\.\d)", ssn),
    _d(
        "SSN",
        r"(?i:\bSSN|social\s+security(?:\s+(?:number|no\.?))?)#?(?:\s+(?i:is))?\s*[:#=]?\s*(?P<v>\d{3}[ ]?\d{2}[ ]?\d{4})(?![\w-])",
        ssn,
        "ssn",
        "social",
        anchored=True,
    ),
    _d(
        "PASSPORT",
        r"(?i:passport)" + _SUFFIX + r"(?P<v>(?=[A-Z0-9]*\d)[A-Z0-9]{6,9})(?![\w-])",
        None,
        "passport",
        anchored=True,
    ),
    _d("PASSPORT", r"P(?<![A-Z0-9<]P)[A-Z<][A-Z]{3}[A-Z<]{39}(?![A-Z0-9<])", None, "<<"),
    # The machine-readable zone's second line: number, check digit, nationality, birth date, sex, expiry, ...
    _d(
        "PASSPORT",
        r"[A-Z0-9<](?<![A-Z0-9<][A-Z0-9<])[A-Z0-9<]{8}\d[A-Z<]{3}\d{6}\d[MFX<]\d{6}\d[A-Z0-9<]{14}[\d<]\d(?![A-Z0-9<])",
        None,
        "<",
    ),
    _d(
        "DRIVERS_LICENSE",
        r"(?i:driver'?s?[\s_-]+licen[cs]e|driving[\s_-]+licen[cs]e|\bDL)" + _SUFFIX + rf"(?P<v>{_ID_VALUE})(?![\w-])",
        None,
        "driver",
        "driving",
        "dl",
        anchored=True,
    ),
    _d("DRIVERS_LICENSE", r"[A-Z9](?<![\w-][A-Z9])[A-Z9]{4}\d[0156]\d{4}[A-Z9]{2}\d[A-Z]{2}(?![\w-])"),
    _d(
        "MEDICAL_ID",
        # "member" and "policy" name an id only with their "id"/"number": alone they are ordinary words.
        r"(?i:\bMRN|medical[\s_-]+record|patient|health\s*(?:insurance|plan|card)|insurance|medicare|medicaid|\bNHS"
        r"|(?:member|policy)(?=[\s_-]*(?:number|no\b|num|#|id)))"
        + _SUFFIX
        + rf"(?P<v>\d{{3}} \d{{3}} \d{{4}}|{_ID_VALUE})(?![\w-])",
        None,
        "mrn",
        "medical",
        "patient",
        "health",
        "insurance",
        "medica",
        "nhs",
        "member",
        "policy",
        anchored=True,
    ),
    _d(
        "MEDICAL_ID",
        rf"[1-9](?<![\w-][1-9]){_MBI_L}[{_MBI_L[1:-1]}0-9]\d-?{_MBI_L}[{_MBI_L[1:-1]}0-9]\d-?{_MBI_L}{{2}}\d{{2}}(?![\w-])",
    ),
    _d(
        "DATE_OF_BIRTH",
        r"(?i:\bDOB|date[\s_-]+of[\s_-]+birth|birth[\s_-]*date|birthday|\bborn(?:\s+on)?|geboren(?:\s+am)?|d\.o\.b\.?)"
        rf"[\"']?\s*[:=-]?\s*[\"']?(?P<v>{_DATE})(?![\w-])",
        None,
        "dob",
        "date",
        "birth",
        "born",
        "geboren",
        "d.o.b",
        anchored=True,
    ),
    _d(
        "OTP",
        r"(?i:one[-\s]time\s+(?:pass(?:word|code)?|code|pin)|\bOTP|verification\s+code|security\s+code|auth(?:entication)?\s+code"
        r"|log[-\s]?in\s+code|sign[-\s]?in\s+code|\b2FA(?:\s+code)?|\bMFA(?:\s+code)?|passcode|\bPIN(?:\s+code)?"
        r"|confirmation\s+code|access\s+code|\bTOTP)(?:\s+(?i:is|was))?\s*[:=]?\s*(?P<v>\d{4,8}|\d{3}[ -]\d{3})(?![\w-])",
        None,
        "one",
        "otp",
        "verification",
        "security",
        "auth",
        "log",
        "sign",
        "2fa",
        "mfa",
        "passcode",
        "pin",
        "confirmation",
        "access",
        "totp",
        anchored=True,
    ),
    _d(
        "OTP",
        r"(?P<v>\d(?<![\w-]\d)\d{3,7}) is your (?:[\w-]+ )?(?i:verification|login|log-in|sign-in|security|one-time|confirmation)"
        r" code",
        None,
        " is your ",
        around=(12, 60),
    ),
    # --- Contact details.
    _d(
        "EMAIL",
        r"[A-Za-z0-9](?<![\w.+%-][A-Za-z0-9])(?:[A-Za-z0-9._%+-]{0,62}[A-Za-z0-9_%+-])?@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+"
        r"[A-Za-z]{2,24}(?![\w-])",
        None,
        "@",
        around=(70, 260),
    ),
    _d(
        "PHONE",
        r"\+(?<![\w+]\+)[1-9]\d{0,2}(?:[ .-]?\(\d{1,4}\))?(?:[ .-]?\d{1,5}){1,5}(?![\w-]|\.\d)",
        digit_count(8, 15),
        "+",
    ),
    _d(
        "PHONE",
        # A leading "+1" is the international pattern's; this one is the national form, e.g. (415) 555-2671.
        r"[(2-9](?<![\w.+-][(2-9])(?:(?<=\()[2-9]\d{2}\)\s?[2-9]\d{2}-\d{4}|(?<!\()\d{2}([.-])[2-9]\d{2}\1\d{4})"
        r"(?![\w-]|\.\d)",
    ),
    _d("PHONE", r"0(?<![\w.+-]0)\d{2,4}[ -]\d{3,4}[ -]?\d{3,4}(?![\w-]|\.\d)", digit_count(10, 11)),
    _d(
        "PHONE",
        r"(?i:phone|\btel|telephone|mobile|\bcell|\bfax|whatsapp|\bsms)(?:\s*(?i:number|no\.?|#))?\s*[:=]?\s*"
        r"(?P<v>\(?\d[\d ().-]{5,16}\d)(?![\w-]|\.\d)",
        digit_count(7, 15),
        "phone",
        "tel",
        "mobile",
        "cell",
        "fax",
        "whatsapp",
        "sms",
        anchored=True,
    ),
    # --- Postal addresses.
    _d(
        "PHYSICAL_ADDRESS",
        r"\d(?<![\w.-]\d)\d{0,5}[A-Z]?\s+(?:(?:[NSEW]|North|South|East|West)\.?\s+)?(?:[A-Z][a-z]+|\d{1,3}(?:st|nd|rd|th))"
        rf"(?:\s+[A-Z][a-z]+){{0,3}}\s+{_STREET}\b\.?"
        r"(?:,?\s+(?:Apt|Apartment|Suite|Ste|Unit|Flat|Floor|#)\.?\s*[\w-]+)?"
        rf"(?:,\s+[A-Z][a-z]+(?:\s+[A-Z][a-z]+){{0,2}}(?:,\s+[A-Z]{{2}}(?:\s+\d{{5}}(?:-\d{{4}})?)?|\s+{_UK_POSTCODE}))?",
        None,
        *_STREET_HINTS,
        around=(90, 100),
        exact=True,
    ),
    _d(
        "PHYSICAL_ADDRESS",
        r"(?i:\bP\.?\s?O\.?\s+Box|post\s+office\s+box)\s+\d{1,6}(?![\w-])",
        None,
        "po",
        "p.",
        "p o",
        "post",
        anchored=True,
    ),
    _d(
        "PHYSICAL_ADDRESS",
        r"[A-ZÄÖÜ](?<![\w-][A-ZÄÖÜ])(?:[a-zäöüß]+\s+[A-ZÄÖÜ])?[a-zäöüß]+(?:straße|strasse|str\.|weg|platz|allee|gasse|damm)"
        r"\s+\d{1,4}[a-z]?(?:,\s+\d{4,5}\s+[A-ZÄÖÜ][a-zäöüß]+)?(?![\w-])",
        None,
        "str",
        "weg",
        "platz",
        "allee",
        "gasse",
        "damm",
    ),
)
