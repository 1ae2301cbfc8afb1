"""Decode JSON the way fisk's `ArgsFromJSON` does: Go `encoding/json` with a `Decoder` and `UseNumber`.

fisk decodes tool arguments with `json.NewDecoder(...).UseNumber().Decode(&map)`, and its error text
reaches the model verbatim (`invalid JSON arguments: <decoder message>`). Python's `json` module differs
from Go's in every place that matters here: the error wording, numbers (Go keeps the literal text),
lone surrogate escapes and invalid UTF-8 (Go substitutes U+FFFD one byte at a time), trailing data (a
`Decoder` reads only the first value) and nesting depth (Go allows 10000 levels; Python's decoder
recurses). So this module holds a small decoder that follows Go's scanner byte for byte.

Which Go: the classic `encoding/json` scanner, the default up to Go 1.26 (fisk-ai builds with Go 1.25
and 1.26); it was compared with that decoder on some 300,000 fuzzed inputs and agreed on every error
text and value (except that `go_quote` reads Python's Unicode database, so a character assigned after
Unicode 14 counts as non-printable here). Go 1.27 builds `encoding/json` on `encoding/json/v2` by default and words some rarer
syntax errors differently (for example `invalid escape sequence ...`, or an error position inside a
number); the fisk conformance vectors, made with Go 1.27.3, hold only messages both agree on.

What it owns: decoding the first JSON value of a byte string into `DecodedValue`s and raising
`GoJSONError` with Go's message; `go_quote`, Go's `strconv.Quote`, the one quoting of `%q` in every
fiskai_core message (fisk's argument errors and agent.yaml errors alike).
What it does not: type checks against a Go target type (the caller maps kinds to Go's
`cannot unmarshal` text), or encoding JSON.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

__all__ = [
    "DecodedValue",
    "GoJSONError",
    "JsonNumber",
    "decode_first_value",
    "decode_prefix",
    "decode_whole_value",
    "go_quote",
    "is_only_space",
]

_SPACE = frozenset(b" \t\r\n")
_DIGITS = frozenset(b"0123456789")
_HEX = frozenset(b"0123456789abcdefABCDEF")
_MAX_NESTING_DEPTH = 10000
"""Go's `maxNestingDepth`: one more open object or array is a syntax error."""
_SIMPLE_ESCAPES = {
    ord('"'): '"',
    ord("\\"): "\\",
    ord("/"): "/",
    ord("b"): "\b",
    ord("f"): "\f",
    ord("n"): "\n",
    ord("r"): "\r",
    ord("t"): "\t",
}
_QUOTE_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}
_REPLACEMENT = "\ufffd"


@dataclass(frozen=True, slots=True)
class JsonNumber:
    """A JSON number kept as its exact source text (Go's `json.Number` under `UseNumber`)."""

    text: str


DecodedValue: TypeAlias = "str | JsonNumber | bool | None | list[DecodedValue] | dict[str, DecodedValue]"
"""A decoded JSON value; objects keep the first-seen key order and the last value of a repeated key."""


class GoJSONError(ValueError):
    """The input is not one complete JSON value; the message is Go's `err.Error()` text."""


class _Incomplete(Exception):
    """The input ended inside a value (Go reports `unexpected EOF`, or `EOF` for blank input)."""


def go_quote(text: str) -> str:
    r"""Quote `text` as Go's `strconv.Quote` (and so `fmt`'s `%q`) does.

    Args:
        text: Any string.

    Returns:
        The double-quoted form with Go's escapes: printable runes as they are, `\n`-style escapes for
        the seven C escapes, `\xHH` for other ASCII controls, `\uHHHH` / `\UHHHHHHHH` otherwise.
    """
    out = ['"']
    for char in text:
        if char in '"\\':
            out.append("\\" + char)
        elif char.isprintable():
            # Python's "printable" (not Unicode C* or Z*, except ASCII space) is Go's unicode.IsPrint.
            out.append(char)
        elif char in _QUOTE_ESCAPES:
            out.append(_QUOTE_ESCAPES[char])
        else:
            code = ord(char)
            if code < 0x20 or code == 0x7F:
                out.append(f"\\x{code:02x}")
            elif code < 0x10000:
                out.append(f"\\u{code:04x}")
            else:
                out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


def _quote_byte(byte: int) -> str:
    """Go's scanner `quoteChar`: the offending byte read as a Latin-1 rune, in single quotes."""
    if byte == ord("'"):
        return "'\\''"
    if byte == ord('"'):
        return "'\"'"
    return "'" + go_quote(chr(byte))[1:-1] + "'"


def _decode_utf8_like_go(data: bytes) -> str:
    """Decode UTF-8 replacing each byte that does not start a valid sequence with U+FFFD, as Go does.

    Python's `errors="replace"` replaces a maximal invalid subpart with one U+FFFD; Go's
    `utf8.DecodeRune` gives up after one byte, so a truncated three-byte sequence yields two.
    """
    parts: list[str] = []
    start = 0
    while start < len(data):
        try:
            parts.append(data[start:].decode("utf-8"))
            break
        except UnicodeDecodeError as err:
            parts.append(data[start : start + err.start].decode("utf-8"))
            parts.append(_REPLACEMENT)
            start += err.start + 1
    return "".join(parts)


def decode_first_value(data: bytes) -> DecodedValue:
    """Decode the first JSON value of `data` as a Go `json.Decoder` with `UseNumber` does.

    Only the first value is read; whatever follows it is ignored (`{} {}` and `{}x` decode to `{}`).

    Args:
        data: The raw input. Must not be empty (fisk skips decoding for zero-length input).

    Returns:
        The decoded value.

    Raises:
        GoJSONError: The input is malformed, incomplete (`unexpected EOF`) or blank (`EOF`).
    """
    return decode_prefix(data)[0]


def decode_prefix(data: bytes) -> tuple[DecodedValue, int]:
    """`decode_first_value`, also returning the offset just past the value (where trailing data starts).

    Raises:
        GoJSONError: As `decode_first_value`.
    """
    parser = _Parser(data)
    try:
        return parser.parse(), parser.end
    except _Incomplete:
        if not is_only_space(data):
            raise GoJSONError("unexpected EOF") from None
        raise GoJSONError("EOF") from None


def is_only_space(data: bytes) -> bool:
    """Whether `data` holds nothing but JSON whitespace (space, tab, CR, LF); true when empty."""
    return all(byte in _SPACE for byte in data)


def decode_whole_value(data: bytes) -> DecodedValue:
    """Decode `data` as Go's `json.Unmarshal` does: exactly one value, only whitespace after it.

    Args:
        data: The raw input.

    Returns:
        The decoded value.

    Raises:
        GoJSONError: Malformed, incomplete (`unexpected end of JSON input`) or trailing data.
    """
    parser = _Parser(data)
    try:
        value = parser.parse()
    except _Incomplete:
        # At the end Go feeds its scanner one space; a value cut inside a number, literal or escape
        # reports that space as the invalid character.
        try:
            _Parser(data + b" ").parse()
        except _Incomplete:
            pass
        except GoJSONError as err:
            raise err from None
        raise GoJSONError("unexpected end of JSON input") from None
    for byte in data[parser.end :]:
        if byte not in _SPACE:
            raise GoJSONError(f"invalid character {_quote_byte(byte)} after top-level value")
    return value


class _Parser:
    """An iterative (explicit-stack) parser whose errors are Go scanner errors at the same byte."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._pos = 0
        self._stack: list[list[DecodedValue] | dict[str, DecodedValue]] = []
        self._keys: list[str] = []

    @property
    def end(self) -> int:
        """The offset just past the value `parse` returned."""
        return self._pos

    def _error(self, byte: int, context: str) -> GoJSONError:
        return GoJSONError(f"invalid character {_quote_byte(byte)} {context}")

    def _need(self) -> int:
        if self._pos >= len(self._data):
            raise _Incomplete
        return self._data[self._pos]

    def _next_nonspace(self) -> int:
        data = self._data
        pos = self._pos
        while pos < len(data) and data[pos] in _SPACE:
            pos += 1
        self._pos = pos
        return self._need()

    def parse(self) -> DecodedValue:
        while True:
            value = self._value()
            if isinstance(value, _Opened):
                continue
            completed = self._after_value(value)
            if not isinstance(completed, _Opened):
                return completed

    def _push(self, byte: int, container: list[DecodedValue] | dict[str, DecodedValue]) -> None:
        if len(self._stack) + 1 > _MAX_NESTING_DEPTH:
            raise self._error(byte, "exceeded max depth")
        self._stack.append(container)

    def _value(self) -> DecodedValue | _Opened:
        """Read a value, or open a non-empty container and return `_OPENED` to read its first member."""
        byte = self._next_nonspace()
        if byte == ord("{"):
            self._push(byte, {})
            self._keys.append("")
            self._pos += 1
            inner = self._next_nonspace()
            if inner == ord("}"):
                self._pos += 1
                return self._pop()
            self._object_key(inner)
            return _OPENED
        if byte == ord("["):
            self._push(byte, [])
            self._pos += 1
            if self._next_nonspace() == ord("]"):
                self._pos += 1
                return self._pop()
            return _OPENED
        if byte == ord('"'):
            return self._string()
        if byte == ord("-") or byte in _DIGITS:
            return self._number()
        if byte == ord("t"):
            return self._literal("true", value=True)
        if byte == ord("f"):
            return self._literal("false", value=False)
        if byte == ord("n"):
            return self._literal("null", value=None)
        raise self._error(byte, "looking for beginning of value")

    def _pop(self) -> DecodedValue:
        container = self._stack.pop()
        if isinstance(container, dict):
            self._keys.pop()
        return container

    def _object_key(self, byte: int) -> None:
        """Read `"key" :` at a key position of the innermost object (which is already on the stack)."""
        if byte != ord('"'):
            raise self._error(byte, "looking for beginning of object key string")
        self._keys[-1] = self._string()
        colon = self._next_nonspace()
        if colon != ord(":"):
            raise self._error(colon, "after object key")
        self._pos += 1

    def _after_value(self, value: DecodedValue) -> DecodedValue | _Opened:
        """Store a finished value in its container and read separators and closers after it."""
        while self._stack:
            container = self._stack[-1]
            byte = self._next_nonspace()
            if isinstance(container, dict):
                container[self._keys[-1]] = value
                if byte == ord(","):
                    self._pos += 1
                    self._object_key(self._next_nonspace())
                    return _OPENED
                if byte != ord("}"):
                    raise self._error(byte, "after object key:value pair")
            else:
                container.append(value)
                if byte == ord(","):
                    self._pos += 1
                    return _OPENED
                if byte != ord("]"):
                    raise self._error(byte, "after array element")
            self._pos += 1
            value = self._pop()
        return value

    def _literal(self, word: str, *, value: bool | None) -> DecodedValue:
        self._pos += 1
        for expected in word[1:]:
            byte = self._need()
            if byte != ord(expected):
                raise self._error(byte, f"in literal {word} (expecting {_quote_byte(ord(expected))})")
            self._pos += 1
        return value

    def _digits(self) -> None:
        data = self._data
        while self._pos < len(data) and data[self._pos] in _DIGITS:
            self._pos += 1

    def _number(self) -> JsonNumber:
        data = self._data
        start = self._pos
        if data[self._pos] == ord("-"):
            self._pos += 1
            byte = self._need()
            if byte not in _DIGITS:
                raise self._error(byte, "in numeric literal")
        if data[self._pos] == ord("0"):
            self._pos += 1
        else:
            self._digits()
        if self._pos < len(data) and data[self._pos] == ord("."):
            self._pos += 1
            byte = self._need()
            if byte not in _DIGITS:
                raise self._error(byte, "after decimal point in numeric literal")
            self._digits()
        if self._pos < len(data) and data[self._pos] in b"eE":
            self._pos += 1
            if self._need() in b"+-":
                self._pos += 1
            byte = self._need()
            if byte not in _DIGITS:
                raise self._error(byte, "in exponent of numeric literal")
            self._digits()
        return JsonNumber(data[start : self._pos].decode("ascii"))

    def _string(self) -> str:
        data = self._data
        self._pos += 1
        parts: list[str] = []
        run_start = self._pos
        while True:
            byte = self._need()
            if byte == ord('"') or byte == ord("\\"):
                parts.append(_decode_utf8_like_go(data[run_start : self._pos]))
                self._pos += 1
                if byte == ord('"'):
                    return "".join(parts)
                parts.append(self._escape())
                run_start = self._pos
            elif byte < 0x20:
                raise self._error(byte, "in string literal")
            else:
                self._pos += 1

    def _escape(self) -> str:
        """Read the escape after a backslash; unpaired UTF-16 surrogates follow Go's `unquote`."""
        byte = self._need()
        simple = _SIMPLE_ESCAPES.get(byte)
        if simple is not None:
            self._pos += 1
            return simple
        if byte != ord("u"):
            raise self._error(byte, "in string escape code")
        self._pos += 1
        for _ in range(4):
            digit = self._need()
            if digit not in _HEX:
                raise self._error(digit, "in \\u hexadecimal character escape")
            self._pos += 1
        code = int(self._data[self._pos - 4 : self._pos], 16)
        if not 0xD800 <= code < 0xE000:
            return chr(code)
        low = self._peek_u4()
        if 0xD800 <= code < 0xDC00 and low is not None and 0xDC00 <= low < 0xE000:
            self._pos += 6
            return chr(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00))
        # An unpaired surrogate becomes U+FFFD and a following escape is read on its own, as in Go.
        return _REPLACEMENT

    def _peek_u4(self) -> int | None:
        chunk = self._data[self._pos : self._pos + 6]
        if len(chunk) < 6 or chunk[:2] != b"\\u" or any(byte not in _HEX for byte in chunk[2:]):
            return None
        return int(chunk[2:], 16)


class _Opened:
    """Marker: a container was opened (or a member separator read) and a member value comes next."""


_OPENED = _Opened()
