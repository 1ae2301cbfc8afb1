"""The fiskai_agent exception tree.

Everything a model can cause is a tool result, never one of these. These are the failures that stop a
run before or outside the loop; each message names the thing and the fix.

    FiskaiError (fiskai_core)
    +-- AgentError             base of the agent's own errors
        +-- SetupError         the run cannot start: options, tools, base URL, credentials, a name clash
        +-- ResumeRefusedError a session cannot be resumed (completed, interactive mismatch, config drift)
        +-- ProviderError      a model call failed after retries, timed out, or was refused
"""

from __future__ import annotations

from fiskai_core.errors import FiskaiError

__all__ = ["AgentError", "ProviderError", "ResumeRefusedError", "SetupError", "provider_code"]


class AgentError(FiskaiError):
    """Base of every error fiskai_agent raises on purpose."""


class SetupError(AgentError):
    """The run cannot start as configured; nothing was sent to a model and no tool ran."""


class ResumeRefusedError(AgentError):
    """The session cannot be resumed; the message says why and what to do instead."""


class ProviderError(AgentError):
    """A model call failed; `status` is the HTTP status when there was one, `detail` the server's own words."""

    def __init__(self, message: str, *, status: int | None = None, retryable: bool = False, detail: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.retryable = retryable
        self.detail = detail


_BUSY_STATUS = frozenset({429, 503, 529})
_REFUSED_STATUS = frozenset({401, 403, 404})
_CONTEXT_WORDS = ("prompt is too long", "context window", "context length", "too many tokens", "maximum context")


def provider_code(err: ProviderError) -> str:
    """The serving error code of a failed model call, or "" when it is outside that vocabulary.

    `provider_busy`: no capacity or rate limited (429, 503, 529, or the call timed out): submit again shortly.
    `provider_refused`: credentials or the model name must be fixed by an operator (401, 403, 404).
    `context_exceeded`: the conversation or its context is too large for the model (400/413 saying so).
    """
    status = err.status
    if status in _BUSY_STATUS or (status is None and "did not finish within" in str(err)):
        return "provider_busy"
    if status in _REFUSED_STATUS:
        return "provider_refused"
    if status in (400, 413) and any(word in (err.detail or str(err)).lower() for word in _CONTEXT_WORDS):
        return "context_exceeded"
    return ""
