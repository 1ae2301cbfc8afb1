"""Bytes to messages and back, validated against the shipped v1 JSON Schemas.

Decoding trusts nothing: the size and the nesting depth are checked before parsing, the protocol id picks the schema, the
schema (draft 2020-12, `unevaluatedProperties: false`) decides validity, and only then is a typed
message built. Meaning always comes from the `protocol` id in the body, never from where the bytes
arrived.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping
from typing import Any, Final, cast

from jsonschema import exceptions as schema_exceptions
from jsonschema.exceptions import ValidationError as SchemaError
from pydantic import ValidationError

from fiskai_a2a.errors import (
    MessageTooLargeError,
    MessageValidationError,
    ProtocolVersionError,
    UnknownProtocolError,
)
from fiskai_core.tools import DecodedValue, JsonNumber, dumps_exact, loads_exact, plain_json

from ._ids import (
    ACK,
    CANCEL,
    DISCOVERY_REPLY,
    DISCOVERY_REQUEST,
    ERROR,
    EVENT,
    NAMESPACE,
    PROTOCOL_FAMILY,
    REQUEST,
    RESULT,
    TOOL_REPLY,
    TOOL_REQUEST,
)
from ._messages import (
    HEADER_FIELDS,
    Ack,
    Cancel,
    DiscoveryReply,
    DiscoveryRequest,
    ErrorMessage,
    Event,
    Message,
    Request,
    Result,
    ToolReply,
    ToolRequest,
)
from ._nesting import MAX_NESTING_DEPTH, check_nesting
from ._schemas import SCHEMA_BASE, checker_for, shipped_schema

__all__ = [
    "MAX_MESSAGE_BYTES",
    "MAX_NESTING_DEPTH",
    "MESSAGE_TYPES",
    "SCHEMA_BASE",
    "check_nesting",
    "decode",
    "decode_exact",
    "encode",
    "schema_for",
    "validate",
]

MAX_MESSAGE_BYTES: Final = 768 * 1024
"""The cap on any message, inbound (checked before decoding) or outbound (786432 bytes, as the original)."""


MESSAGE_TYPES: Final[Mapping[str, type[Message]]] = {
    cls.PROTOCOL: cls
    for cls in (
        Request,
        Event,
        Result,
        ErrorMessage,
        Cancel,
        Ack,
        ToolRequest,
        ToolReply,
        DiscoveryRequest,
        DiscoveryReply,
    )
}
"""Every v1 message class by its protocol id."""

_SCHEMA_FILES: Final = {
    REQUEST: "request.json",
    EVENT: "event.json",
    RESULT: "result.json",
    ERROR: "error.json",
    CANCEL: "cancel.json",
    ACK: "ack.json",
    TOOL_REQUEST: "tool.request.json",
    TOOL_REPLY: "tool.reply.json",
    DISCOVERY_REQUEST: "discovery.request.json",
    DISCOVERY_REPLY: "discovery.reply.json",
}


def schema_for(protocol: str) -> dict[str, Any]:
    """The shipped JSON Schema of a v1 protocol id (a fresh copy).

    Raises:
        UnknownProtocolError: `protocol` is not a v1 message.
    """
    file = _SCHEMA_FILES.get(protocol)
    if file is None:
        raise UnknownProtocolError(f"unknown protocol: {json.dumps(protocol)}")
    return shipped_schema(file)


def validate(document: Mapping[str, Any]) -> str:
    """Check a decoded JSON object against the schema its `protocol` names; return the protocol id.

    Raises:
        MessageValidationError: no protocol id, or the object breaks its schema.
        ProtocolVersionError: a fisk-ai protocol of another version.
        UnknownProtocolError: any other protocol id.
    """
    protocol = document.get("protocol")
    if not isinstance(protocol, str) or not protocol:
        raise MessageValidationError('invalid message: no "protocol" id')
    if protocol not in _SCHEMA_FILES:
        family = PROTOCOL_FAMILY + "."
        if protocol.startswith(family) and not protocol.startswith(NAMESPACE + "."):
            version = protocol[len(family) :].split(".", 1)[0]
            raise ProtocolVersionError(
                f"unsupported protocol version {json.dumps(version)} in {json.dumps(protocol)}: "
                f"this agent speaks {NAMESPACE}"
            )
        raise UnknownProtocolError(f"unknown protocol: {json.dumps(protocol)}")
    checker = checker_for(_SCHEMA_FILES[protocol])
    if checker.is_valid(document):
        return protocol
    errors = list(checker.iter_errors(document))
    # Should a shipped schema be used as is, a header field failing inside `allOf` also shows up as
    # "unevaluated" at the top; the real cause wins.
    causes = [error for error in errors if error.validator != "unevaluatedProperties"]
    error = _best_match(causes or errors)
    if error is not None:
        where = "/".join(str(part) for part in error.absolute_path) or "(message)"
        short = protocol.removeprefix(NAMESPACE + ".")
        raise MessageValidationError(f"invalid {short} message at {where}: {error.message}")
    return protocol


def decode(data: bytes, *, expect: Collection[str] | None = None) -> Message:
    """Turn received bytes into a typed message.

    Numbers become Python's own: only a tool request's `input` needs the text a peer wrote, and
    `decode_exact` keeps it. Decoding with the C scanner alone matters for the big messages (an agent
    card of 221 tools is ~200 KB): converting a number-keeping decode back to plain values walks every
    node in Python, a quarter of a discovery's time.

    Raises:
        See `decode_exact`.
    """
    return _typed(_document(data, _loads_plain), expect)


def decode_exact(data: bytes, *, expect: Collection[str] | None = None) -> tuple[Message, dict[str, DecodedValue]]:
    """Turn received bytes into a typed message, and the same document with every number's text kept.

    The bytes are decoded once; a tool request's `input` is then taken from the exact document, so a
    peer's `1.50` reaches the command as `1.50` (the typed message's copy holds floats).

    Args:
        data: The raw body.
        expect: The protocol ids the receiving path accepts; any when None.

    Raises:
        MessageTooLargeError: `data` is over `MAX_MESSAGE_BYTES`.
        MessageValidationError: not JSON, nested deeper than `MAX_NESTING_DEPTH`, not an object, or invalid
            against its schema.
        ProtocolVersionError: a fisk-ai protocol id of another version.
        UnknownProtocolError: an unknown protocol id, or one `expect` does not list.
    """
    exact = cast("dict[str, DecodedValue]", _document(data, loads_exact))
    return _typed(cast("dict[str, Any]", plain_json(exact)), expect), exact


def _refuse_constant(name: str) -> object:
    raise ValueError(f"{name} is not valid JSON")


def _loads_plain(data: bytes) -> object:
    """`json.loads` held to `loads_exact`'s rules: no NaN or Infinity, too deep is a ValueError."""
    try:
        return json.loads(data, parse_constant=_refuse_constant)
    except RecursionError:
        raise ValueError("JSON nests too deeply") from None


def _document(data: bytes, loads: Callable[[bytes], object]) -> dict[str, Any]:
    if len(data) > MAX_MESSAGE_BYTES:
        raise MessageTooLargeError(len(data), MAX_MESSAGE_BYTES)
    check_nesting(data)
    try:
        document = loads(data)
    except (ValueError, UnicodeDecodeError) as err:
        raise MessageValidationError(f"invalid message: not JSON: {err}") from None
    if not isinstance(document, dict):
        # Named as Python would name the plain value (a JsonNumber is an int or a float).
        plain = plain_json(document) if isinstance(document, JsonNumber) else document
        raise MessageValidationError(f"invalid message: a message is a JSON object, not {type(plain).__name__}")
    return cast("dict[str, Any]", document)


def _typed(fields: dict[str, Any], expect: Collection[str] | None) -> Message:
    protocol = validate(fields)
    if expect is not None and protocol not in expect:
        wanted = ", ".join(sorted(expect))
        raise UnknownProtocolError(f"unexpected message protocol {json.dumps(protocol)}: expected {wanted}")
    header = {key: value for key, value in fields.items() if key in HEADER_FIELDS}
    body = {key: value for key, value in fields.items() if key not in HEADER_FIELDS}
    try:
        return MESSAGE_TYPES[protocol].model_validate({"header": header, **body})
    except ValidationError as err:
        # The models mirror the schema; should they ever disagree, the message is still refused cleanly.
        short = protocol.removeprefix(NAMESPACE + ".")
        raise MessageValidationError(f"invalid {short} message: {err.errors()[0]['msg']}") from None


def encode(message: Message, *, exact_input: Mapping[str, object] | None = None) -> bytes:
    """The wire bytes of `message`, within the size cap.

    `exact_input` is a tool request's `input` as a model wrote it (`JsonNumber`s keep their text; plain
    values are written as JSON); it takes the place of the typed message's own.

    The typed models enforce what the schema would (identity names, non-negative sequences, object
    inputs), so the schema check is spent on the way in, where nothing is trusted; the tests check every
    encoded message against the shipped schemas.

    Raises:
        MessageTooLargeError: the encoded message is over `MAX_MESSAGE_BYTES`.
    """
    wire = message.to_wire()
    if exact_input is not None:
        wire["input"] = dict(exact_input)
        data = dumps_exact(cast("DecodedValue", wire)).encode()
    else:
        data = json.dumps(wire, ensure_ascii=False, separators=(",", ":")).encode()
    if len(data) > MAX_MESSAGE_BYTES:
        raise MessageTooLargeError(len(data), MAX_MESSAGE_BYTES)
    return data


# jsonschema's stubs leave the result type of best_match unknown.
_best_match = cast(
    "Callable[[list[SchemaError]], SchemaError | None]",
    schema_exceptions.best_match,  # pyright: ignore[reportUnknownMemberType]
)
