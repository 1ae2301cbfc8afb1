"""The 0.0.5 message rules: unknown properties dropped, unknown event kinds kept, siblings' fields refused."""

import json
from typing import Any

import pytest

from fiskai_a2a.errors import MessageTooLargeError, MessageValidationError, UnknownProtocolError
from fiskai_a2a.protocol import serve as wire

NS = "io.choria.fisk-ai.v1"
FRAMING: dict[str, Any] = {
    "id": "3Hzmp2RBLG713TfOTU5aJpATRg2",
    "request": "docs1",
    "conversation": "docs1",
    "sequence": 0,
    "time": "2026-08-16T11:00:00Z",
    "sender": {"name": "peer1"},
}


def _bytes(protocol: str, **body: Any) -> bytes:
    return json.dumps({"protocol": f"{NS}.{protocol}", **FRAMING, **body}).encode()


def test_the_reference_s_minimal_prompt_decodes() -> None:
    message = wire.decode(_bytes("request.prompt", prompt="how many streams are there"))
    assert isinstance(message, wire.PromptRequest) and message.prompt == "how many streams are there"
    assert message.header.sender.name == "peer1" and message.stream is None


def test_unknown_properties_are_accepted_and_dropped() -> None:
    message = wire.decode(_bytes("tool.reply", output="x", code="capacity", is_error=True, added_later=1))
    assert isinstance(message, wire.ToolReply) and message.code == "capacity"
    assert "added_later" not in message.to_wire()


def test_an_unknown_event_kind_is_kept_raw() -> None:
    message = wire.decode(_bytes("event.hologram", block={"depth": 3}), expect={wire.EVENT_PREFIX})
    assert isinstance(message, wire.EventMessage) and (message.kind, message.block) == ("hologram", {"depth": 3})


def test_a_sibling_s_field_is_refused_by_name() -> None:
    with pytest.raises(MessageValidationError) as caught:
        wire.decode(_bytes("request.resume", conversation_token="t", prompt="no"))
    assert str(caught.value) == "invalid request.resume message: at '/prompt': false schema"


@pytest.mark.parametrize(
    ("data", "error"),
    [
        (_bytes("request.teleport"), UnknownProtocolError),
        (_bytes("request.read", conversation_token="t", replay=0), MessageValidationError),
        (_bytes("request.prompt"), MessageValidationError),
        (
            json.dumps(
                {"protocol": f"{NS}.request.prompt", **FRAMING, "sender": {"name": "a b"}, "prompt": "x"}
            ).encode(),
            MessageValidationError,
        ),
        (b"[1]", MessageValidationError),
        (b"{" + b" " * (768 * 1024) + b"}", MessageTooLargeError),
    ],
)
def test_bad_requests_are_refused(data: bytes, error: type[Exception]) -> None:
    with pytest.raises(error):
        wire.decode(data, expect=set(wire.REQUEST_KINDS))


def test_a_path_that_expects_requests_refuses_a_reply() -> None:
    with pytest.raises(UnknownProtocolError):
        wire.decode(_bytes("ack", accepted=True), expect=set(wire.REQUEST_KINDS))


def test_the_reference_s_approve_question_decodes_with_its_kind() -> None:
    data = _bytes(
        "elicit.request.approve",
        question_id="q1",
        tool_use_id="toolu_01A9bK2mNpQr",
        command="stream rm",
        display="stream rm ORDERS --force",
        tag="ai:confirm",
        wait_ms=120000,
    )
    message = wire.decode(data)
    assert isinstance(message, wire.Question) and message.kind == "approve"
    assert (message.tool_use_id, message.display, message.wait_ms) == (
        "toolu_01A9bK2mNpQr",
        "stream rm ORDERS --force",
        120000,
    )


@pytest.mark.parametrize(
    ("kind", "body"),
    [
        ("approve", {"choice": "always"}),
        ("confirm", {"confirmed": False}),
        ("select", {"index": 0}),
        ("input", {"value": ""}),
        ("no_operator", {}),
    ],
)
def test_answers_keep_their_zero_values(kind: str, body: dict[str, Any]) -> None:
    message = wire.decode(_bytes(f"elicit.reply.{kind}", question_id="q1", **body))
    assert isinstance(message, wire.QuestionReply) and message.kind == kind
    assert message.to_wire() | body == message.to_wire()  # false, 0 and "" travel as answers


def test_waiting_decodes_and_an_unknown_question_kind_is_refused() -> None:
    waiting = wire.decode(_bytes("elicit.waiting", question_id="q1"))
    assert isinstance(waiting, wire.Waiting) and waiting.question_id == "q1"
    with pytest.raises(UnknownProtocolError):
        wire.decode(_bytes("elicit.request.hologram", question_id="q1"))
