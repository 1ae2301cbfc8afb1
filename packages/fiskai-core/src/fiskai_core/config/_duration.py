"""Go's `time.ParseDuration` syntax (`120s`, `1m30s`, `500ms`, `1.5h`) as `datetime.timedelta`.

agent.yaml files are shared with the Go original, so a duration must mean the same thing in both and
fail with the same words. Go counts nanoseconds; a `timedelta` keeps microseconds, so sub-microsecond
parts are truncated toward zero after an exact integer sum.
"""

from __future__ import annotations

from datetime import timedelta

from fiskai_core._gojson import go_quote

__all__ = ["DurationError", "parse_go_duration"]

_NANOS_PER_UNIT = {
    "ns": 1,
    "us": 1_000,
    "\u00b5s": 1_000,  # micro sign
    "\u03bcs": 1_000,  # Greek small letter mu
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60_000_000_000,
    "h": 3_600_000_000_000,
}
_MAX_NANOS = (1 << 63) - 1
_NUMERIC = frozenset("0123456789.")


class DurationError(ValueError):
    """A string is not a Go duration; the message is Go's own (`time: invalid duration "x"`)."""


def parse_go_duration(text: str) -> timedelta:
    """Parse a Go duration string.

    Args:
        text: a possibly signed sequence of decimal numbers, each with an optional fraction and a
            unit suffix (`ns`, `us`, `ms`, `s`, `m`, `h`); `0` alone needs no unit.

    Returns:
        The duration, truncated to microseconds.

    Raises:
        DurationError: with Go's message for the same input.
    """
    rest = text
    negative = False
    if rest[:1] in ("-", "+"):
        negative = rest[0] == "-"
        rest = rest[1:]
    if rest == "0":
        return timedelta(0)
    if not rest:
        raise DurationError(f"time: invalid duration {go_quote(text)}")
    total = 0
    while rest:
        whole, rest = _take_digits(rest)
        fraction = ""
        if rest[:1] == ".":
            fraction, rest = _take_digits(rest[1:])
            if not whole and not fraction:
                raise DurationError(f"time: invalid duration {go_quote(text)}")
        elif not whole:
            raise DurationError(f"time: invalid duration {go_quote(text)}")
        end = 0
        while end < len(rest) and rest[end] not in _NUMERIC:
            end += 1
        if end == 0:
            raise DurationError(f"time: missing unit in duration {go_quote(text)}")
        unit, rest = rest[:end], rest[end:]
        scale = _NANOS_PER_UNIT.get(unit)
        if scale is None:
            raise DurationError(f"time: unknown unit {go_quote(unit)} in duration {go_quote(text)}")
        total += int(whole or "0") * scale
        if fraction:
            total += int(fraction) * scale // 10 ** len(fraction)
        # Go rejects anything past int64 nanoseconds (about 292 years), except exactly -2^63.
        if total > _MAX_NANOS + (1 if negative else 0):
            raise DurationError(f"time: invalid duration {go_quote(text)}")
    micros = total // 1_000
    return -timedelta(microseconds=micros) if negative else timedelta(microseconds=micros)


def _take_digits(text: str) -> tuple[str, str]:
    end = 0
    while end < len(text) and text[end].isascii() and text[end].isdigit():
        end += 1
    return text[:end], text[end:]
