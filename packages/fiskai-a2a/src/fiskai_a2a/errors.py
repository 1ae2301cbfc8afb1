"""The fiskai_a2a exception tree.

A tool call that reaches a peer never raises for what happened to the command: a failure, a timeout or a
non-zero exit comes back in-band as a reply. These exceptions are for the harness: a message that cannot
be used, a peer that cannot be reached, a NATS context that cannot be read.

    FiskaiError
    +-- A2AError
        +-- MessageError               an inbound message cannot be used (answered with code 400)
        |   +-- MessageTooLargeError       over the 768 KiB cap, checked before decoding
        |   +-- MessageValidationError     not JSON, not an object, or not valid against its v1 schema
        |   +-- ProtocolVersionError       an io.choria.fisk-ai protocol id of another version
        |   +-- UnknownProtocolError       a protocol id nobody here understands
        +-- AgentUnavailableError      no reply: no responders, a timeout, a lost connection, a stalled peer
        +-- RemoteAgentError           the peer answered, but with an error instead of the expected reply
        +-- NatsContextError           a NATS context is missing, unreadable or asks for what is unsupported
"""

from __future__ import annotations

from fiskai_core.errors import FiskaiError

__all__ = [
    "A2AError",
    "AgentUnavailableError",
    "MessageError",
    "MessageTooLargeError",
    "MessageValidationError",
    "NatsContextError",
    "ProtocolVersionError",
    "RemoteAgentError",
    "UnknownProtocolError",
]


class A2AError(FiskaiError):
    """Base of every agent-to-agent error."""


class MessageError(A2AError):
    """An inbound message cannot be used; `code` is the NATS micro error code a server answers with."""

    code = "400"


class MessageTooLargeError(MessageError):
    """A message over `MAX_MESSAGE_BYTES`; rejected before any decoding."""

    def __init__(self, size: int, limit: int) -> None:
        self.size = size
        self.limit = limit
        super().__init__(f"message of {size} bytes exceeds the {limit}-byte limit")


class MessageValidationError(MessageError):
    """Not JSON, not an object, no protocol id, or not valid against the v1 schema of its protocol."""


class ProtocolVersionError(MessageError):
    """A fisk-ai protocol id of a version this side does not speak."""


class UnknownProtocolError(MessageError):
    """A protocol id outside the fisk-ai namespace, or one the receiving path does not accept."""


class AgentUnavailableError(A2AError):
    """The remote agent did not answer (no responders, timeout, lost connection or a stalled call)."""


class RemoteAgentError(A2AError):
    """The remote agent answered with an error message instead of the reply asked for."""

    def __init__(self, message: str, *, code: str | None = None) -> None:
        self.code = code
        super().__init__(message)


class NatsContextError(A2AError):
    """A NATS context cannot be used; the message names the context, the file and the fix."""
