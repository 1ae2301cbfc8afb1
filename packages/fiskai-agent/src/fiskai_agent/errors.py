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

from typing import Literal

from fiskai_core.errors import FiskaiError

__all__ = ["AgentError", "ProviderError", "ProviderFailure", "ResumeRefusedError", "SetupError"]

ProviderFailure = Literal["busy", "refused", "context_exceeded", "other"]
"""What kind of failure a model call met, as a served caller needs it (reference 3.8 `provider_busy`,
`provider_refused`, `context_exceeded`; `other` answers `failed`). The adapter decides it from its SDK's
own exception types, so no SDK type leaves the adapter."""


class AgentError(FiskaiError):
    """Base of every error fiskai_agent raises on purpose."""


class SetupError(AgentError):
    """The run cannot start as configured; nothing was sent to a model and no tool ran."""


class ResumeRefusedError(AgentError):
    """The session cannot be resumed; the message says why and what to do instead."""


class ProviderError(AgentError):
    """A model call failed; `status` is the HTTP status when there was one, `detail` the server's own words."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retryable: bool = False,
        detail: str = "",
        failure: ProviderFailure = "other",
    ) -> None:
        super().__init__(message)
        self.status = status
        self.retryable = retryable
        self.detail = detail
        self.failure: ProviderFailure = failure
