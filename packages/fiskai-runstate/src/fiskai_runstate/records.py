"""Journal records: the self-describing entries a run is made of.

A run is an ordered stream of records. The meta record is always first, at sequence 1; each model turn is
an assistant record stored verbatim; each tool call is a tool_intent record written (and made durable)
before the tool runs, then a tool_result record after it; each interactive follow-up is a user record; a
terminal record carries the reason the run stopped.

The wire shape keeps the original fisk-ai protocol ids and field names (`io.choria.fisk-ai.v1.session.*`)
so a journal written by the Go original reads here unchanged. Our additions are backward compatible: the
tool_intent record, and two optional envelope fields, `version` (the schema version, on every record) and
`crc32` (a checksum that turns a flipped bit into an error instead of a silently different record).

Messages inside records are opaque JSON objects: the agent's provider-neutral messages. The journal only
looks inside them for `tool_use` ids (see `tool_use_ids`). This module holds values only, no IO.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

from .fingerprint import Fingerprint

__all__ = [
    "LEGACY_VERSION",
    "MAX_RECORD_BYTES",
    "PROTOCOL_PREFIX",
    "SCHEMA_VERSION",
    "TERMINAL_REASONS",
    "AssistantRecord",
    "JsonObject",
    "JsonValue",
    "MetaRecord",
    "Payload",
    "Record",
    "TerminalReason",
    "TerminalRecord",
    "ToolIntentRecord",
    "ToolResultRecord",
    "UserRecord",
    "args_digest",
    "effect_id",
    "tool_use_ids",
]

JsonValue: TypeAlias = "str | int | float | bool | None | list[JsonValue] | dict[str, JsonValue]"
JsonObject: TypeAlias = "dict[str, JsonValue]"

SCHEMA_VERSION: Final = 6
"""The schema version this library writes. It continues the original's numbering (it wrote 3), so a
journal from the Go original is an older version and reads here; every version only adds records or
optional fields, which is why a reader accepts any older version and refuses a newer one. Version 5
added `meta.previous` (the session a chat's `/clear` rotated from); version 6 the envelope `time`,
`meta.agent`, `meta.caller` and the prompt hooks' decisions (`meta.hooks`, `user.hooks`)."""

LEGACY_VERSION: Final = 3
"""The version assumed for a record with no `version` envelope field (one written by the original)."""

MAX_RECORD_BYTES: Final = 16 * 1024 * 1024
"""The largest encoded record (one JSON line, newline excluded) a journal writes or reads: 16 MiB.

A tool result is capped at 64 KiB of output and a model turn at a few hundred KiB, so 16 MiB is far above
any honest record; a longer line is a damaged or hostile journal, and refusing it bounds reader memory."""

PROTOCOL_PREFIX: Final = "io.choria.fisk-ai.v1.session."

TerminalReason: TypeAlias = Literal["completed", "suspended", "error", "budget", "max_iterations"]
TERMINAL_REASONS: Final[tuple[TerminalReason, ...]] = ("completed", "suspended", "error", "budget", "max_iterations")


@dataclass(frozen=True, slots=True, kw_only=True)
class MetaRecord:
    """The first record of every run: who it is and what it was started with."""

    run_id: str
    """The run id (also the journal's name)."""
    created: str
    """RFC 3339 creation time."""
    fingerprint: Fingerprint
    """Hashes and settings a resume must match."""
    prompt: str = ""
    """The initial user prompt, from which the first message is rebuilt."""
    interactive: bool = False
    """True for a chat run, so a resume reopens the input bar."""
    previous: str = ""
    """The session this one continues: a chat's `/clear` rotated from it (empty for a first session)."""
    agent: str = ""
    """The agent's identity (agent.yaml `identity`), for `session search --identity` (empty before v6)."""
    caller: str = ""
    """Who asked: a served prompt's claimed sender (unverified), else empty (the local operator)."""
    hooks: tuple[JsonObject, ...] = ()
    """What the `user_prompt_submit` hooks decided about `prompt` (`{point, hook, decision, ...}`)."""
    version: int = SCHEMA_VERSION
    """The payload schema version (the original's `meta.version`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AssistantRecord:
    """One model turn, stored verbatim before any of its tools run."""

    iteration: int
    """The loop iteration that produced the turn."""
    message: JsonObject
    """The assistant message in the provider-neutral model (opaque here)."""
    stop_reason: str = ""
    """The provider's stop reason (`end_turn`, `tool_use`, `pause_turn`, ...)."""
    in_tokens: int = 0
    """Input tokens of the call."""
    out_tokens: int = 0
    """Output tokens of the call."""
    cache_read_tokens: int = 0
    """Input tokens served from the prompt cache."""
    cache_create_tokens: int = 0
    """Input tokens written into the prompt cache."""


@dataclass(frozen=True, slots=True, kw_only=True)
class UserRecord:
    """A free-standing user turn (a chat follow-up) carrying only the newly typed blocks."""

    message: JsonObject
    """The user message in the provider-neutral model (opaque here)."""
    hooks: tuple[JsonObject, ...] = ()
    """What the `user_prompt_submit` hooks decided about the turn (the message holds the text they left)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolIntentRecord:
    """A tool call about to run, made durable before the tool starts.

    An intent with no matching tool_result after a crash means the call may or may not have had its side
    effect; the runner must not silently repeat it (see `RunState.intents_without_results`).
    """

    tool_use_id: str
    """The tool_use block id the call answers."""
    tool_name: str
    """The model-facing tool name."""
    args_digest: str
    """Hex SHA-256 of the canonical JSON arguments (see `args_digest`); the arguments themselves are in
    the assistant record."""
    effect_id: str
    """A stable id for the side effect, the same when the call is retried after a crash."""
    argv: tuple[str, ...] | None = None
    """The command line of a local command tool."""
    remote_target: str | None = None
    """The peer agent and tool of a remote call."""
    gate: JsonObject | None = None
    """The confirm gate's decision that let the call run (`{allowed, channel, tag?, digest}`), for a gated tool."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResultRecord:
    """The result of one tool call, journaled as soon as the call finishes."""

    tool_use_id: str
    """The tool_use block id the result answers."""
    result: JsonObject
    """The provider-neutral tool result block `{tool_use_id, content, is_error?}` (opaque here)."""
    remote: bool = False
    """True when the call went to another agent."""
    gate: JsonObject | None = None
    """A decision taken without a fresh intent (`{allowed, channel, tag?, digest}`): the confirm gate refusing
    the call (the result is the denial the model received, and no tool_intent precedes it), or whether a
    call interrupted by a crash was run again (`policy` for an idempotent tool, `prompt`, `no_terminal`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TerminalRecord:
    """Why the run stopped. A later terminal record (after a resume) supersedes an earlier one."""

    reason: TerminalReason
    """`completed`, `suspended`, `error`, `budget` or `max_iterations`."""
    message: str = ""
    """Detail, for example the error text."""


Payload: TypeAlias = MetaRecord | AssistantRecord | UserRecord | ToolIntentRecord | ToolResultRecord | TerminalRecord

_KINDS: Final[dict[type[Payload], str]] = {
    MetaRecord: "meta",
    AssistantRecord: "assistant",
    UserRecord: "user",
    ToolIntentRecord: "tool_intent",
    ToolResultRecord: "tool_result",
    TerminalRecord: "terminal",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Record:
    """One journal entry: a sequence number and exactly one payload."""

    seq: int
    """Position in the run, from 1 (the meta record); the ordering authority."""
    payload: Payload
    """What happened."""
    version: int = SCHEMA_VERSION
    """The schema version the record was written with."""
    time: str = ""
    """When it was written (RFC 3339, UTC); empty on records from before version 6 and the original."""

    @property
    def kind(self) -> str:
        """The payload key on the wire (`meta`, `assistant`, ...)."""
        return _KINDS[type(self.payload)]

    @property
    def protocol(self) -> str:
        """The self-describing protocol id, e.g. `io.choria.fisk-ai.v1.session.meta`."""
        return PROTOCOL_PREFIX + self.kind


def tool_use_ids(message: JsonObject) -> tuple[str, ...]:
    """The ids of the `tool_use` blocks in a provider-neutral message, in block order.

    Args:
        message: A message shaped `{"role": ..., "content": [{"tool_use": {"id": ...}}, ...]}`.

    Returns:
        The ids; blocks of other kinds, and anything not shaped like a tool_use block, are skipped.
    """
    content = message.get("content")
    if not isinstance(content, list):
        return ()
    ids: list[str] = []
    for block in content:
        if isinstance(block, dict):
            use = block.get("tool_use")
            if isinstance(use, dict):
                use_id = use.get("id")
                if isinstance(use_id, str):
                    ids.append(use_id)
    return tuple(ids)


def args_digest(arguments: JsonValue) -> str:
    """Hex SHA-256 of the canonical JSON of a tool call's arguments (sorted keys, no spaces).

    Args:
        arguments: The tool_use `input`.

    Returns:
        A digest that is equal for equal arguments, whatever their key order.
    """
    canonical = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def effect_id(run_id: str, tool_use_id: str) -> str:
    """The stable side-effect id of a tool call: the same on a retry after a crash.

    Args:
        run_id: The run.
        tool_use_id: The tool_use block id (unique within the run).

    Returns:
        `<run_id>/<tool_use_id>`, usable as an idempotency key by a tool that supports one.
    """
    return f"{run_id}/{tool_use_id}"
