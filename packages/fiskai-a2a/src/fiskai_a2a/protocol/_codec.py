"""Bytes to messages and back, validated against the shipped v1 JSON Schemas.

Decoding trusts nothing: the size is checked before parsing, the protocol id picks the schema, the
schema (draft 2020-12, `unevaluatedProperties: false`) decides validity, and only then is a typed
message built. Meaning always comes from the `protocol` id in the body, never from where the bytes
arrived.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterator, Mapping
from functools import cache
from importlib import resources
from typing import Any, Final, cast

from jsonschema import Draft202012Validator, exceptions as schema_exceptions
from jsonschema.exceptions import ValidationError
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from fiskai_a2a.errors import (
    MessageTooLargeError,
    MessageValidationError,
    ProtocolVersionError,
    UnknownProtocolError,
)

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

__all__ = ["MAX_MESSAGE_BYTES", "MESSAGE_TYPES", "SCHEMA_BASE", "decode", "encode", "schema_for", "validate"]

MAX_MESSAGE_BYTES: Final = 768 * 1024
"""The cap on any message, inbound (checked before decoding) or outbound (786432 bytes, as the original)."""

SCHEMA_BASE: Final = "https://choria.io/schemas/io.choria.fisk-ai.v1/"

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
    return json.loads(json.dumps(_registry()[SCHEMA_BASE + file].contents))


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
    errors = list(_validator(protocol)(document))
    # A header field that fails inside `allOf` also shows up as "unevaluated" at the top; the real cause wins.
    causes = [error for error in errors if error.validator != "unevaluatedProperties"]
    error = _best_match(causes or errors)
    if error is not None:
        where = "/".join(str(part) for part in error.absolute_path) or "(message)"
        short = protocol.removeprefix(NAMESPACE + ".")
        raise MessageValidationError(f"invalid {short} message at {where}: {error.message}")
    return protocol


def decode(data: bytes, *, expect: Collection[str] | None = None) -> Message:
    """Turn received bytes into a typed message.

    Args:
        data: The raw body.
        expect: The protocol ids the receiving path accepts; any when None.

    Raises:
        MessageTooLargeError: `data` is over `MAX_MESSAGE_BYTES`.
        MessageValidationError: not JSON, not an object, or invalid against its schema.
        ProtocolVersionError: a fisk-ai protocol id of another version.
        UnknownProtocolError: an unknown protocol id, or one `expect` does not list.
    """
    if len(data) > MAX_MESSAGE_BYTES:
        raise MessageTooLargeError(len(data), MAX_MESSAGE_BYTES)
    try:
        document: object = json.loads(data)
    except (ValueError, UnicodeDecodeError) as err:
        raise MessageValidationError(f"invalid message: not JSON: {err}") from None
    if not isinstance(document, dict):
        raise MessageValidationError(f"invalid message: a message is a JSON object, not {type(document).__name__}")
    fields = cast("dict[str, Any]", document)
    protocol = validate(fields)
    if expect is not None and protocol not in expect:
        wanted = ", ".join(sorted(expect))
        raise UnknownProtocolError(f"unexpected message protocol {json.dumps(protocol)}: expected {wanted}")
    header = {key: value for key, value in fields.items() if key in HEADER_FIELDS}
    body = {key: value for key, value in fields.items() if key not in HEADER_FIELDS}
    return MESSAGE_TYPES[protocol].model_validate({"header": header, **body})


def encode(message: Message) -> bytes:
    """The wire bytes of `message`, checked against its schema and the size cap.

    Raises:
        MessageValidationError: the message breaks its own schema (a bug on this side).
        MessageTooLargeError: the encoded message is over `MAX_MESSAGE_BYTES`.
    """
    document = message.to_wire()
    validate(document)
    data = json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode()
    if len(data) > MAX_MESSAGE_BYTES:
        raise MessageTooLargeError(len(data), MAX_MESSAGE_BYTES)
    return data


# jsonschema's stubs leave the result type of best_match unknown.
_best_match = cast(
    "Callable[[list[ValidationError]], ValidationError | None]",
    schema_exceptions.best_match,  # pyright: ignore[reportUnknownMemberType]
)


@cache
def _registry() -> Registry[Any]:
    folder = resources.files("fiskai_a2a.protocol").joinpath("schemas", "v1")
    pairs: list[tuple[str, Resource[Any]]] = []
    for name in (*_SCHEMA_FILES.values(), "common.json"):
        contents = json.loads(folder.joinpath(name).read_text(encoding="utf-8"))
        pairs.append((SCHEMA_BASE + name, Resource.from_contents(contents, default_specification=DRAFT202012)))
    empty: Registry[Any] = Registry()
    return empty.with_resources(pairs)


@cache
def _validator(protocol: str) -> Callable[[Mapping[str, Any]], Iterator[ValidationError]]:
    """The bound `iter_errors` of the protocol's schema (validators are built once and reused)."""
    registry = _registry()
    schema = registry[SCHEMA_BASE + _SCHEMA_FILES[protocol]].contents
    return cast(
        "Callable[[Mapping[str, Any]], Iterator[ValidationError]]",
        Draft202012Validator(schema, registry=registry).iter_errors,  # pyright: ignore[reportUnknownMemberType]
    )
