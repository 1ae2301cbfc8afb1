"""The PII guard: find personal data and secrets in prompts and tool results, and redact or refuse them.

Pure, deterministic code (precompiled regexes plus checksum rules: Luhn for cards, mod-97 for IBANs, the
ABA weights for routing numbers, the SSA's rules for SSNs). The types are the reference's (7.4):
`BANK_ACCOUNT`, `CLOUD_RESOURCES`, `CREDIT_CARD`, `DATE_OF_BIRTH`, `DRIVERS_LICENSE`, `EMAIL`, `MEDICAL_ID`,
`OTP`, `PASSPORT`, `PHONE`, `PHYSICAL_ADDRESS`, `SECRETS`, `SSN`; credential shapes (`sk-…`, `sk-ant-…`,
`sk-or-v1-…`, `xoxb-…`, `ghp_…`, bearer tokens, NATS creds and nkey seeds, private keys) are `SECRETS`.

`guard(text, mode)` is what the agent applies to each prompt and each tool result (after the caller's
hooks), before the model, the journal and telemetry see them.
"""

from ._patterns import PII_TYPES
from ._scan import (
    PROMPT_REFUSED,
    RESULT_WITHHELD,
    Finding,
    Guarded,
    PiiMode,
    Redacted,
    find,
    guard,
    guard_output,
    placeholder,
    redact,
)

__all__ = [
    "PII_TYPES",
    "PROMPT_REFUSED",
    "RESULT_WITHHELD",
    "Finding",
    "Guarded",
    "PiiMode",
    "Redacted",
    "find",
    "guard",
    "guard_output",
    "placeholder",
    "redact",
]
