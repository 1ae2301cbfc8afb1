import sys
import time
from collections.abc import Callable

import pytest

from fiskai_core.pii import PII_TYPES, RESULT_WITHHELD, find, guard, placeholder, redact
from fiskai_core.pii._checks import aba_routing, card_number, iban, luhn, nhs_number, ssn

TOOL_OUTPUT = (
    '{"customer": {"id": 48211, "email": "maria.gonzalez@northwind-traders.com", "card": "4532015112830366", '
    '"status": "active", "updated": "2024-06-01T12:34:56Z"}}'
)


def test_redact_replaces_each_value_with_its_type_and_counts_them() -> None:
    redacted = redact(TOOL_OUTPUT)
    assert redacted.text == (
        '{"customer": {"id": 48211, "email": "[REDACTED:EMAIL]", "card": "[REDACTED:CREDIT_CARD]", '
        '"status": "active", "updated": "2024-06-01T12:34:56Z"}}'
    )
    assert redacted.counts == {"CREDIT_CARD": 1, "EMAIL": 1}


def test_keywords_stay_and_only_the_value_goes() -> None:
    assert redact("DOB: 1985-03-14, Passport No: X1234567").text == (
        "DOB: [REDACTED:DATE_OF_BIRTH], Passport No: [REDACTED:PASSPORT]"
    )


def test_every_type_has_a_placeholder_of_its_own_name() -> None:
    assert len(set(PII_TYPES)) == 13
    assert {placeholder(kind) for kind in PII_TYPES} == {f"[REDACTED:{kind}]" for kind in PII_TYPES}


def test_a_secret_in_a_url_wins_over_the_email_it_looks_like() -> None:
    text = "https://ghp_R2d2C3poBb8Yoda1Luke9Leia4Han5Solo7X@github.com/acme/infra.git"
    assert [f.type for f in find(text)] == ["SECRETS"]


def test_modes() -> None:
    off = guard(TOOL_OUTPUT, "off")
    assert off.text == TOOL_OUTPUT and not off.counts and not off.blocked
    redacted = guard(TOOL_OUTPUT, "redact")
    assert "[REDACTED:EMAIL]" in redacted.text and not redacted.blocked
    assert redacted.journal() == {"action": "redact", "counts": {"CREDIT_CARD": 1, "EMAIL": 1}}
    rejected = guard(TOOL_OUTPUT, "reject")
    assert rejected.blocked and rejected.counts == {"CREDIT_CARD": 1, "EMAIL": 1}
    assert rejected.journal()["action"] == "withhold"
    clean = guard("3 pods running", "reject")
    assert clean.text == "3 pods running" and not clean.blocked and not clean.changed


def test_a_failing_scan_counts_as_a_hit(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(text: str) -> object:
        raise RuntimeError("boom")

    monkeypatch.setattr("fiskai_core.pii._scan.redact", broken)
    for mode in ("redact", "reject"):
        guarded = guard("harmless", mode)
        assert guarded.blocked and guarded.failed and guarded.text == ""
        assert guarded.journal() == {"action": "withhold", "counts": {}, "scan_failed": True}
    assert guard("harmless", "off").text == "harmless"


def test_the_withheld_message_names_the_setting() -> None:
    assert "harness.pii.mode: reject" in RESULT_WITHHELD


def test_offsets_stay_aligned_when_lowercasing_changes_the_length() -> None:
    text = "İİİ contact a.b@example.com"
    (finding,) = find(text)
    assert text[finding.start : finding.end] == "a.b@example.com"


@pytest.mark.parametrize(
    ("check", "good", "bad"),
    [
        (luhn, "79927398713", "79927398710"),
        (card_number, "4532015112830366", "4532015112830367"),
        (card_number, "4111 1111 1111 1111", "1111 1111 1111 1117"),
        (iban, "DE89 3704 0044 0532 0130 00", "DE88 3704 0044 0532 0130 00"),
        (iban, "GB29NWBK60161331926819", "XX29NWBK60161331926819"),
        (aba_routing, "021000021", "021000022"),
        (ssn, "219-09-9999", "666-09-9999"),
        (ssn, "536-22-1893", "536-00-1893"),
        (nhs_number, "943 476 5919", "943 476 5918"),
    ],
)
def test_checks(check: Callable[[str], bool], good: str, bad: str) -> None:
    assert check(good) is True
    assert check(bad) is False


def test_cost_per_kilobyte_is_measured_and_bounded() -> None:
    # 64 KiB is the most a command's output can be (the exec cap): the guard's worst realistic input.
    lines = [
        f"2024-06-01T12:{i % 60:02d}:{i % 60:02d}.123Z level=info path=/api/v1/orders/{i} status=200 "
        f"dur={i % 97}ms req=7c9e6679-7425-40de-944b-e07fc1f97441 user=u{i}@example.com\n"
        for i in range(600)
    ]
    text = "".join(lines)[: 64 * 1024]
    redacted = redact(text)
    runs = 5
    started = time.process_time()
    for _ in range(runs):
        redact(text)
    per_kb = (time.process_time() - started) / runs / 64
    sys.stdout.write(f"\nPII scan: {per_kb * 1e6:.0f} us per KB ({per_kb * 64 * 1000:.1f} ms per 64 KiB)\n")
    assert redacted.counts["EMAIL"] > 400
    # CPU time, so a busy machine does not inflate it; about 0.2 ms per KB when written, bounded with room.
    assert per_kb < 0.002
