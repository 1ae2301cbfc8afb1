import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from fiskai_a2a.errors import MessageTooLargeError, MessageValidationError, ProtocolVersionError, UnknownProtocolError
from fiskai_a2a.protocol import (
    MAX_MESSAGE_BYTES,
    MAX_NESTING_DEPTH,
    MESSAGE_TYPES,
    SCHEMA_BASE,
    TOOL_REPLY,
    TOOL_REQUEST,
    Ack,
    AgentCallBlock,
    Budget,
    Cancel,
    DiscoveryReply,
    DiscoveryRequest,
    ErrorMessage,
    Event,
    ExecResult,
    Header,
    Identity,
    Message,
    Request,
    Result,
    StatusBlock,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolDescriptor,
    ToolReply,
    ToolRequest,
    ToolResultBlock,
    Usage,
    decode,
    decode_exact,
    encode,
    new_id,
    reply_header,
    request_header,
    schema_for,
)
from fiskai_a2a.protocol._schemas import checker_for, flat_schema
from fiskai_core.tools import dumps_exact

_SHIPPED = Path(__file__).resolve().parents[2] / "src" / "fiskai_a2a" / "protocol" / "schemas" / "v1"
ME = Identity(name="caller", instance="one")


def _full_header(protocol: str) -> Header:
    header = request_header(protocol, sender=ME, recipient="peer", conversation="conv-1", parent="parent-1")
    return header.model_copy(update={"must_understand": True})


def _every_message() -> list[Message]:
    """One message per v1 protocol with every optional field set, plus minimal ones."""
    usage = Usage(input_tokens=10, output_tokens=3)
    exec_result = ExecResult(command="cluster node list --limit=2", exit_code=3, truncated=True)
    blocks = [
        ThinkingBlock(text="hmm", signature="sig", provider="anthropic"),
        TextBlock(text="hello"),
        ToolCallBlock(id="c1", name="cluster_node_list", input={"limit": 2, "nested": {"a": [1, "x", None]}}),
        ToolResultBlock(call_id="c1", is_error=True, output="boom", exec=exec_result),
        AgentCallBlock(id="a1", name="peer", task="task-1"),
        StatusBlock(iteration=2, phase="executing-tool", usage=usage),
        StatusBlock(),
    ]
    messages: list[Message] = [
        Request(
            header=_full_header(Request.PROTOCOL),
            prompt="list the nodes",
            context="ctx",
            tool_hints=["cluster_node_list"],
            budget=Budget(max_tokens=100, max_iterations=3, call_timeout="60s"),
            stream=False,
        ),
        Request(header=request_header(Request.PROTOCOL, sender=ME), prompt=""),
        Result(header=_full_header(Result.PROTOCOL), stop_reason="end_turn", text="done", usage=usage),
        Result(header=_full_header(Result.PROTOCOL), stop_reason="max_iterations"),
        ErrorMessage(header=_full_header(ErrorMessage.PROTOCOL), error="bad", stop_reason="error", code="400"),
        ErrorMessage(header=_full_header(ErrorMessage.PROTOCOL), error=""),
        Cancel(header=_full_header(Cancel.PROTOCOL), reason="operator stopped it"),
        Cancel(header=_full_header(Cancel.PROTOCOL)),
        Ack(header=_full_header(Ack.PROTOCOL), accepted=False, reason="not in flight"),
        Ack(header=_full_header(Ack.PROTOCOL), accepted=True),
        ToolRequest(header=_full_header(ToolRequest.PROTOCOL), name="cluster_node_list", input={"limit": 2}),
        ToolRequest(header=_full_header(ToolRequest.PROTOCOL), name="x"),
        ToolReply(header=_full_header(ToolReply.PROTOCOL), is_error=False, output="out", exec=exec_result),
        ToolReply(header=_full_header(ToolReply.PROTOCOL)),
        DiscoveryRequest(header=_full_header(DiscoveryRequest.PROTOCOL)),
        DiscoveryReply(
            header=_full_header(DiscoveryReply.PROTOCOL),
            name="fixturectl",
            version="1.2.3",
            description="d",
            protocols=["io.choria.fisk-ai.v1"],
            tools=[
                ToolDescriptor(name="a", description="A", input_schema={"type": "object", "properties": {}}),
                ToolDescriptor(name="b"),
            ],
        ),
        DiscoveryReply(header=_full_header(DiscoveryReply.PROTOCOL), name="x", version="dev"),
    ]
    messages += [Event(header=_full_header(Event.PROTOCOL).model_copy(update={"sequence": 7}), block=b) for b in blocks]
    return messages


def _independent_validator(protocol: str) -> Draft202012Validator:
    """A validator built here from the shipped files, not through the codec."""
    resources: list[tuple[str, Resource[Any]]] = []
    for path in _SHIPPED.glob("*.json"):
        contents = json.loads(path.read_text(encoding="utf-8"))
        resources.append((SCHEMA_BASE + path.name, Resource.from_contents(contents, default_specification=DRAFT202012)))
    empty: Registry[Any] = Registry()
    registry = empty.with_resources(resources)
    name = protocol.removeprefix("io.choria.fisk-ai.v1.") + ".json"
    return Draft202012Validator(registry[SCHEMA_BASE + name].contents, registry=registry)


@pytest.mark.parametrize("message", _every_message(), ids=lambda m: type(m).__name__)
def test_every_message_round_trips_and_its_wire_form_is_valid(message: Message) -> None:
    data = encode(message)
    wire = json.loads(data)
    assert _independent_validator(message.PROTOCOL).is_valid(wire)  # pyright: ignore[reportUnknownMemberType]
    assert wire["protocol"] == message.PROTOCOL
    assert "header" not in wire  # the header is flattened, as Go embeds it
    again = decode(data)
    assert type(again) is type(message)
    assert again == message
    assert encode(again) == data


def test_every_protocol_has_a_message_class_and_a_round_trip() -> None:
    covered = {m.PROTOCOL for m in _every_message()}
    assert covered == set(MESSAGE_TYPES) and len(covered) == 10


def test_shipped_schemas_are_the_originals(shared_fixtures: Path) -> None:
    originals = shared_fixtures.parent / "reference" / "schemas" / "a2a-v1"
    for path in originals.glob("*.json"):
        assert json.loads((_SHIPPED / path.name).read_text(encoding="utf-8")) == json.loads(
            path.read_text(encoding="utf-8")
        ), path.name
    assert len(list(originals.glob("*.json"))) == 11
    assert schema_for(TOOL_REQUEST)["$id"] == SCHEMA_BASE + "tool.request.json"


def test_go_wire_messages_decode() -> None:
    # Written by hand from the schemas the way Go's encoding/json emits them: nanosecond times, omitempty.
    tool_request = {
        "protocol": TOOL_REQUEST,
        "id": "2pQZr0j5yQ4DqsSbOTKhT6GpW0B",
        "request": "2pQZr0j5yQ4DqsSbOTKhT6GpW0B",
        "conversation": "2pQZr0j5yQ4DqsSbOTKhT6GpW0B",
        "sequence": 0,
        "time": "2026-07-24T10:15:02.123456789Z",
        "sender": {"name": "fisk-ai"},
        "recipient": {"name": "fixturectl"},
        "name": "cluster_node_list",
        "input": {"limit": 2},
    }
    decoded = decode(json.dumps(tool_request).encode())
    assert isinstance(decoded, ToolRequest)
    assert decoded.input == {"limit": 2} and decoded.header.sender.name == "fisk-ai"
    reply = {
        "protocol": TOOL_REPLY,
        "id": "2pQZr3m2oG7lQ0b9TQ8xQW2s9Zk",
        "request": "2pQZr0j5yQ4DqsSbOTKhT6GpW0B",
        "conversation": "2pQZr0j5yQ4DqsSbOTKhT6GpW0B",
        "sequence": 0,
        "time": "2026-07-24T10:15:02.2Z",
        "sender": {"name": "fixturectl"},
        "recipient": {"name": "fisk-ai"},
        "output": "node-1\n",
        "exec": {"command": "cluster node list --limit=2"},
    }
    got = decode(json.dumps(reply).encode())
    assert isinstance(got, ToolReply)
    assert got.is_error is None and got.exec is not None and got.exec.exit_code is None


def test_reply_header_correlates_to_the_request() -> None:
    request = request_header(TOOL_REQUEST, sender=Identity(name="caller"), recipient="peer")
    reply = reply_header(TOOL_REPLY, request, sender=Identity(name="peer", instance="i1"))
    assert reply.request == request.id == request.request
    assert reply.conversation == request.conversation
    assert reply.id != request.id
    assert reply.recipient == Identity(name="caller")
    orphan = reply_header(TOOL_REPLY, None, sender=Identity(name="peer"))
    assert orphan.request == orphan.id and orphan.recipient is None


def test_ids_are_ksuids() -> None:
    ids = {new_id() for _ in range(200)}
    assert len(ids) == 200
    assert all(len(i) == 27 and i.isalnum() for i in ids)


def _valid_tool_request() -> dict[str, Any]:
    return json.loads(encode(ToolRequest(header=request_header(TOOL_REQUEST, sender=ME), name="x")))


def _tool_request_with_input(text: bytes) -> bytes:
    return json.dumps(_valid_tool_request() | {"input": "I"}).encode().replace(b'"I"', text)


def _decode_exact(data: bytes) -> Message:
    return decode_exact(data)[0]


@pytest.mark.parametrize(
    ("data", "error"),
    [
        (b"{not json", MessageValidationError),
        (b"\xff\xfe", MessageValidationError),
        (b"[1, 2]", MessageValidationError),
        (b'{"id": "x"}', MessageValidationError),
        (b'{"protocol": 3}', MessageValidationError),
        (b'{"protocol": "io.choria.fisk-ai.v2.tool.request"}', ProtocolVersionError),
        (b'{"protocol": "org.example.ping"}', UnknownProtocolError),
        (b'{"protocol": "io.choria.fisk-ai.v1.tool.nonsense"}', UnknownProtocolError),
        (_tool_request_with_input(b'{"x": NaN}'), MessageValidationError),
        (_tool_request_with_input(b'{"x": -Infinity}'), MessageValidationError),
        (b"[" * 200_000 + b"]" * 200_000, MessageValidationError),
    ],
)
@pytest.mark.parametrize("decoder", [decode, _decode_exact])
def test_unusable_messages_raise_a_message_error(
    data: bytes, error: type[Exception], decoder: Callable[[bytes], Message]
) -> None:
    # decode (every message but a tool request) and decode_exact (a tool request) decode differently,
    # so each is held to the same refusals: NaN, Infinity and nesting too deep included.
    with pytest.raises(error) as caught:
        decoder(data)
    assert str(caught.value)


def test_decode_and_decode_exact_build_the_same_message() -> None:
    wire = _valid_tool_request() | {"input": {"ratio": "R", "count": 10, "name": "x"}}
    data = json.dumps(wire).encode().replace(b'"R"', b"1.50")
    exact_message, exact = decode_exact(data)
    assert decode(data) == exact_message
    assert cast("ToolRequest", exact_message).input == {"ratio": 1.5, "count": 10, "name": "x"}
    assert dumps_exact(exact["input"]) == '{"ratio":1.50,"count":10,"name":"x"}'


@pytest.mark.parametrize(
    ("change", "where"),
    [
        ({"surprise": 1}, "(message)"),
        ({"name": 5}, "name"),
        ({"input": [1]}, "input"),
        ({"sequence": -1}, "sequence"),
        ({"sender": {"name": "has space"}}, "sender/name"),
        ({"sender": {"name": "ok", "extra": True}}, "sender"),
    ],
)
def test_schema_violations_name_where(change: dict[str, Any], where: str) -> None:
    document = {**_valid_tool_request(), **change}
    with pytest.raises(MessageValidationError) as caught:
        decode(json.dumps(document).encode())
    assert f"at {where}:" in str(caught.value)


def test_missing_header_field_is_rejected() -> None:
    document = _valid_tool_request()
    del document["conversation"]
    with pytest.raises(MessageValidationError):
        decode(json.dumps(document).encode())


def test_oversized_message_is_rejected_before_parsing() -> None:
    data = b" " * (MAX_MESSAGE_BYTES + 1)
    with pytest.raises(MessageTooLargeError) as caught:
        decode(data)
    assert caught.value.size == MAX_MESSAGE_BYTES + 1


@pytest.mark.parametrize(
    "data",
    [
        b"[" * 100_000,
        b'{"a":' * 50_000 + b"1" + b"}" * 50_000,
        b'{"protocol":"io.choria.fisk-ai.v1.tool.request","input":' + b"[" * 5_000 + b"]" * 5_000 + b"}",
        # Closing brackets inside a string must not hide the depth that follows it.
        b'["' + b"]" * 300 + b'\\\\",' + b"[" * 128 + b"]" * 129,
    ],
    ids=["100k-open-brackets", "50k-nested-objects", "deep-input", "closers-in-a-string"],
)
def test_deeply_nested_json_is_refused_before_parsing(data: bytes) -> None:
    # Before the cap, json.loads raised RecursionError (no MessageError): a server answered an empty 500.
    with pytest.raises(MessageValidationError) as caught:
        decode(data)
    assert f"over the limit of {MAX_NESTING_DEPTH}" in str(caught.value)


def test_nesting_up_to_the_cap_decodes_and_brackets_in_strings_do_not_count() -> None:
    document = _valid_tool_request()
    inner: Any = 1
    for _ in range(MAX_NESTING_DEPTH - 2):  # the message is level 1, `input` level 2
        inner = {"a": inner}
    document["input"] = {"deep": inner, "text": "[{" * 10_000}
    message = decode(json.dumps(document).encode())
    assert isinstance(message, ToolRequest)
    document["input"] = {"deep": {"a": inner}}
    with pytest.raises(MessageValidationError):
        decode(json.dumps(document).encode())


def test_oversized_reply_is_not_encoded() -> None:
    header = request_header(TOOL_REPLY, sender=ME)
    with pytest.raises(MessageTooLargeError):
        encode(ToolReply(header=header, output="x" * MAX_MESSAGE_BYTES))


def test_expected_protocol_is_enforced() -> None:
    data = encode(ToolRequest(header=request_header(TOOL_REQUEST, sender=ME), name="x"))
    with pytest.raises(UnknownProtocolError) as caught:
        decode(data, expect={DiscoveryRequest.PROTOCOL})
    assert "unexpected message protocol" in str(caught.value)


def test_header_protocol_must_match_the_message_class() -> None:
    with pytest.raises(ValueError, match="does not match"):
        ToolReply(header=request_header(TOOL_REQUEST, sender=ME))


def _mutations(document: dict[str, Any]) -> list[dict[str, Any]]:
    """Valid and invalid variants: each key dropped, retyped or nested wrong, plus unknown keys."""
    variants: list[dict[str, Any]] = [document, {**document, "surprise": 1}]
    for key, value in document.items():
        variants.append({k: v for k, v in document.items() if k != key})
        wrongs: tuple[object, ...] = (5, -1, "x", [], {}, None, True)
        variants.extend({**document, key: wrong} for wrong in wrongs)
        if isinstance(value, dict):
            nested = cast("dict[str, Any]", value)
            variants.append({**document, key: {**nested, "extra": 1}})
            variants.extend({**document, key: {**nested, inner: 3}} for inner in nested)
    return variants


@pytest.mark.parametrize("message", _every_message(), ids=lambda m: type(m).__name__)
def test_the_flat_validators_agree_with_the_shipped_schemas(message: Message) -> None:
    file = message.PROTOCOL.removeprefix("io.choria.fisk-ai.v1.") + ".json"
    assert flat_schema(file) is not None  # every v1 message gets the fast form
    fast, shipped = checker_for(file), checker_for(file, flat=False)
    variants = _mutations(json.loads(encode(message)))
    verdicts = [(shipped.is_valid(v), fast.is_valid(v)) for v in variants]
    assert all(a == b for a, b in verdicts)
    assert {a for a, _ in verdicts} == {True, False}
