"""The 0.0.5 messages of `fisk serve`: the tool endpoint's ack/keepalive/reply and the prompts channel.

No Go schema for these was published (reference 3.3), so the shapes come from the protocol pages and are
checked by these models rather than shipped JSON Schema files. The rules are the newer ones:
* unknown properties are accepted and discarded (the pre-0.0.5 schemas refused them);
* an unknown `protocol` id is refused, except an unknown `event.*` kind, which is kept raw;
* each request kind refuses its siblings' fields by name (`prompt` on a resume: `at '/prompt': false schema`);
* the framing is the v1 `Header` (identity names, non-negative sequence), checked as before.
The size cap and the nesting check run before any decode, as for every v1 message.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any, ClassVar, Final, cast

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from fiskai_a2a.errors import MessageTooLargeError, MessageValidationError, UnknownProtocolError

from ._codec import MAX_MESSAGE_BYTES
from ._ids import NAMESPACE
from ._messages import HEADER_FIELDS, ExecResult, Header
from ._nesting import check_nesting

__all__ = [
    "ACK",
    "ANSWER",
    "CANCEL",
    "ERROR",
    "EVENT_PREFIX",
    "QUESTION_KINDS",
    "QUESTION_PREFIX",
    "REPLY_FIELDS",
    "REPLY_PREFIX",
    "WAITING",
    "KEEPALIVE",
    "PROMPT",
    "READ",
    "REQUEST_KINDS",
    "RESULT",
    "RESUME",
    "TOOL_REPLY",
    "Ack",
    "AnswerRequest",
    "CancelRequest",
    "ErrorReply",
    "EventMessage",
    "Question",
    "QuestionReply",
    "Waiting",
    "PromptRequest",
    "ReadRequest",
    "ResultReply",
    "ResumeRequest",
    "ServeMessage",
    "ToolReply",
    "TurnRequest",
    "decode",
    "encode",
]

ACK: Final = f"{NAMESPACE}.ack"
TOOL_REPLY: Final = f"{NAMESPACE}.tool.reply"
RESULT: Final = f"{NAMESPACE}.result"
ERROR: Final = f"{NAMESPACE}.error"
CANCEL: Final = f"{NAMESPACE}.cancel"
PROMPT: Final = f"{NAMESPACE}.request.prompt"
ANSWER: Final = f"{NAMESPACE}.request.answer"
RESUME: Final = f"{NAMESPACE}.request.resume"
READ: Final = f"{NAMESPACE}.request.read"
EVENT_PREFIX: Final = f"{NAMESPACE}.event."
QUESTION_PREFIX: Final = f"{NAMESPACE}.elicit.request."
REPLY_PREFIX: Final = f"{NAMESPACE}.elicit.reply."
WAITING: Final = f"{NAMESPACE}.elicit.waiting"
QUESTION_KINDS: Final = ("approve", "confirm", "select", "input")
REPLY_FIELDS: Final = {"approve": "choice", "confirm": "confirmed", "select": "index", "input": "value"}
"""The field an answer of each kind must carry (always sent, even as `false`, `0` or `""`)."""
KEEPALIVE: Final = f"{EVENT_PREFIX}status"
"""What the tool endpoint sends every ten seconds while a call runs. The pages name no protocol id for it
(inferred): a status event, which a 0.0.5 caller takes as liveness like any message echoing the request."""


class ServeMessage(BaseModel):
    """A 0.0.5 message: the v1 framing plus its own fields; unknown properties are dropped."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    PROTOCOL: ClassVar[str] = ""
    header: Header

    def to_wire(self) -> dict[str, Any]:
        """The flattened JSON object, absent optionals left out."""
        body = self.model_dump(mode="json", exclude={"header"}, exclude_none=True)
        return {**self.header.model_dump(mode="json", exclude_none=True), **body}


class Ack(ServeMessage):
    """First message of every reply set; a refusal is `accepted: false` and a terminal message follows."""

    PROTOCOL: ClassVar[str] = ACK
    accepted: bool
    reason: str | None = None
    conversation_token: str | None = None


class ToolReply(ServeMessage):
    """The tool endpoint's final message; `code` (`capacity`, ...) is new in 0.0.5."""

    PROTOCOL: ClassVar[str] = TOOL_REPLY
    is_error: bool | None = None
    output: str | None = None
    exec: ExecResult | None = None
    code: str | None = None


class EventMessage(ServeMessage):
    """One `event.<kind>` block; the kind is in the protocol id, unknown kinds are kept as they came."""

    PROTOCOL: ClassVar[str] = EVENT_PREFIX
    block: dict[str, JsonValue] = Field(default_factory=dict[str, JsonValue])

    @property
    def kind(self) -> str:
        """`text`, `tool_call`, `status`, ... (the protocol id's last part)."""
        return self.header.protocol.removeprefix(EVENT_PREFIX)


class ResultReply(ServeMessage):
    """Terminal: the answer; `usage` is the whole conversation's."""

    PROTOCOL: ClassVar[str] = RESULT
    stop_reason: str
    text: str | None = None
    usage: dict[str, int] | None = None
    trace_id: str | None = None
    content_exported: bool | None = None


class ErrorReply(ServeMessage):
    """Terminal: instead of a result; `code` is one of the reference's error codes."""

    PROTOCOL: ClassVar[str] = ERROR
    error: str
    code: str | None = None
    stop_reason: str | None = None
    usage: dict[str, int] | None = None
    deferred: list[dict[str, JsonValue]] | None = None
    trace_id: str | None = None
    content_exported: bool | None = None


class Question(ServeMessage):
    """`elicit.request.<kind>`: a question to the caller (prompts with `elicit`); the kind is in the protocol id."""

    PROTOCOL: ClassVar[str] = QUESTION_PREFIX
    question_id: str
    tool_use_id: str | None = None
    wait_ms: int | None = None
    command: str | None = None
    display: str | None = None
    tag: str | None = None
    question: str | None = None
    options: list[str] | None = None
    default: str | None = None

    @property
    def kind(self) -> str:
        """`approve`, `confirm`, `select` or `input`."""
        return self.header.protocol.removeprefix(QUESTION_PREFIX)


class QuestionReply(ServeMessage):
    """`elicit.reply.<kind>`: the caller's answer to `question_id` (`no_operator`: nobody can answer)."""

    PROTOCOL: ClassVar[str] = REPLY_PREFIX
    question_id: str
    choice: str | None = None
    confirmed: bool | None = None
    index: int | None = None
    value: str | None = None

    @property
    def kind(self) -> str:
        """A question kind, or `no_operator`."""
        return self.header.protocol.removeprefix(REPLY_PREFIX)


class Waiting(ServeMessage):
    """`elicit.waiting`: the person is still there; restarts the question's window."""

    PROTOCOL: ClassVar[str] = WAITING
    question_id: str


class CancelRequest(ServeMessage):
    """A polite stop of the turn `header.request` names; answered with an ack."""

    PROTOCOL: ClassVar[str] = CANCEL
    reason: str | None = None


class TurnRequest(ServeMessage):
    """What the four request kinds share: how the reply set is sent."""

    budget: dict[str, JsonValue] | None = None
    stream: bool | None = None
    """Absent means stream."""
    force: bool | None = None


class PromptRequest(TurnRequest):
    """A turn: the prompt, optionally joining a conversation by its token."""

    PROTOCOL: ClassVar[str] = PROMPT
    prompt: str
    context: str | None = None
    tool_hints: list[str] | None = None
    conversation_token: str | None = None
    replay: int | None = Field(default=None, ge=0)


class AnswerRequest(TurnRequest):
    """An answer to a question asked after the run ended, then the run resumes."""

    PROTOCOL: ClassVar[str] = ANSWER
    conversation_token: str
    answer: dict[str, JsonValue]
    replay: int | None = Field(default=None, ge=0)


class ResumeRequest(TurnRequest):
    """Continue a run that stopped part way (after `suspended`)."""

    PROTOCOL: ClassVar[str] = RESUME
    conversation_token: str


class ReadRequest(ServeMessage):
    """Read a conversation back: no turn, `replay` stored blocks."""

    PROTOCOL: ClassVar[str] = READ
    conversation_token: str
    replay: int = Field(ge=1)


REQUEST_KINDS: Final[dict[str, type[ServeMessage]]] = {
    cls.PROTOCOL: cls for cls in (PromptRequest, AnswerRequest, ResumeRequest, ReadRequest)
}
_TYPES: Final[dict[str, type[ServeMessage]]] = {
    **REQUEST_KINDS,
    **{cls.PROTOCOL: cls for cls in (Ack, ToolReply, ResultReply, ErrorReply, CancelRequest, Waiting)},
    **{QUESTION_PREFIX + kind: Question for kind in QUESTION_KINDS},
    **{REPLY_PREFIX + kind: QuestionReply for kind in (*QUESTION_KINDS, "no_operator")},
}
_REQUEST_FIELDS: Final = frozenset(name for cls in REQUEST_KINDS.values() for name in cls.model_fields) - {"header"}


def decode(data: bytes, *, expect: Collection[str] | None = None) -> ServeMessage:
    """Bytes to a 0.0.5 message (`expect` lists accepted ids; `EVENT_PREFIX` accepts every event kind).

    Raises:
        MessageTooLargeError: over the cap, before any parsing.
        MessageValidationError: not a JSON object, bad framing, a missing or mistyped field, a sibling's field.
        UnknownProtocolError: an id this side does not know, or one `expect` does not list.
    """
    if len(data) > MAX_MESSAGE_BYTES:
        raise MessageTooLargeError(len(data), MAX_MESSAGE_BYTES)
    check_nesting(data)
    try:
        document: object = json.loads(data)
    except (ValueError, UnicodeDecodeError) as err:
        raise MessageValidationError(f"invalid message: not JSON: {err}") from None
    if not isinstance(document, dict):
        raise MessageValidationError("invalid message: a message is a JSON object")
    fields = cast("dict[str, Any]", document)
    protocol = fields.get("protocol")
    if not isinstance(protocol, str) or not protocol:
        raise MessageValidationError('invalid message: no "protocol" id')
    is_event = protocol.startswith(EVENT_PREFIX) and len(protocol) > len(EVENT_PREFIX)
    cls = EventMessage if is_event else _TYPES.get(protocol)
    if cls is None:
        raise UnknownProtocolError(f"unknown protocol: {json.dumps(protocol)}")
    if expect is not None and protocol not in expect and not (is_event and EVENT_PREFIX in expect):
        wanted = ", ".join(sorted(expect))
        raise UnknownProtocolError(f"unexpected message protocol {json.dumps(protocol)}: expected {wanted}")
    short = protocol.removeprefix(NAMESPACE + ".")
    if cls in REQUEST_KINDS.values():
        for name in sorted(_REQUEST_FIELDS - set(cls.model_fields)):
            if name in fields:
                raise MessageValidationError(f"invalid {short} message: at '/{name}': false schema")
    header = {key: value for key, value in fields.items() if key in HEADER_FIELDS}
    body = {key: value for key, value in fields.items() if key not in HEADER_FIELDS}
    try:
        return cls.model_validate({"header": header, **body})
    except ValidationError as err:
        first = err.errors()[0]
        where = "/".join(str(part) for part in first["loc"] if part != "header") or "(message)"
        raise MessageValidationError(f"invalid {short} message at {where}: {first['msg']}") from None


def encode(message: ServeMessage) -> bytes:
    """The wire bytes; a message over the cap is refused (callers trim long text before this).

    Raises:
        MessageTooLargeError: the encoded message is over the cap.
    """
    data = json.dumps(message.to_wire(), ensure_ascii=False, separators=(",", ":")).encode()
    if len(data) > MAX_MESSAGE_BYTES:
        raise MessageTooLargeError(len(data), MAX_MESSAGE_BYTES)
    return data
