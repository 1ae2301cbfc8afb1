from datetime import timedelta

import pytest
from hypothesis import given, strategies as st

from fiskai_core.config._duration import DurationError, parse_go_duration


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0", timedelta(0)),
        ("-0", timedelta(0)),
        ("120s", timedelta(seconds=120)),
        ("1m30s", timedelta(seconds=90)),
        ("500ms", timedelta(milliseconds=500)),
        ("1h", timedelta(hours=1)),
        ("1.5h", timedelta(minutes=90)),
        (".5s", timedelta(milliseconds=500)),
        ("1.s", timedelta(seconds=1)),
        ("+2m", timedelta(minutes=2)),
        ("-1m30s", -timedelta(seconds=90)),
        ("1h2m3s4ms5us6ns", timedelta(hours=1, minutes=2, seconds=3, milliseconds=4, microseconds=5)),
        ("3\u00b5s", timedelta(microseconds=3)),
        ("3\u03bcs", timedelta(microseconds=3)),
        ("1500ns", timedelta(microseconds=1)),
        ("0s", timedelta(0)),
    ],
)
def test_parse_go_duration_accepts_go_syntax(text: str, expected: timedelta) -> None:
    assert parse_go_duration(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", 'time: invalid duration ""'),
        ("-", 'time: invalid duration "-"'),
        ("30", 'time: missing unit in duration "30"'),
        ("1m30", 'time: missing unit in duration "1m30"'),
        ("10x", 'time: unknown unit "x" in duration "10x"'),
        ("1 s", 'time: unknown unit " s" in duration "1 s"'),
        ("s", 'time: invalid duration "s"'),
        (".s", 'time: invalid duration ".s"'),
        ("1h-2m", 'time: unknown unit "h-" in duration "1h-2m"'),
        ("3000000h", 'time: invalid duration "3000000h"'),
    ],
)
def test_parse_go_duration_rejects_with_go_messages(text: str, message: str) -> None:
    with pytest.raises(DurationError) as caught:
        parse_go_duration(text)
    assert str(caught.value) == message


def test_parse_go_duration_range_matches_int64_nanoseconds() -> None:
    assert parse_go_duration("2562047h") == timedelta(hours=2562047)
    with pytest.raises(DurationError):
        parse_go_duration("2562048h")


@given(
    hours=st.integers(0, 1000),
    minutes=st.integers(0, 59),
    seconds=st.integers(0, 59),
    millis=st.integers(0, 999),
    negative=st.booleans(),
)
def test_parse_go_duration_sums_its_parts(hours: int, minutes: int, seconds: int, millis: int, negative: bool) -> None:
    text = f"{'-' if negative else ''}{hours}h{minutes}m{seconds}s{millis}ms"
    expected = timedelta(hours=hours, minutes=minutes, seconds=seconds, milliseconds=millis)
    assert parse_go_duration(text) == (-expected if negative else expected)
