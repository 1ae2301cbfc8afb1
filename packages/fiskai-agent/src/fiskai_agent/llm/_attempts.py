"""Per-HTTP-attempt events on the `chat` span (reference 6.2): the SDK retries inside one model call.

The loop makes its chat span the current `ChatAttempts` around `Provider.call`; the provider's HTTP
middleware adds `fisk.llm.http_response` (an attempt got any response) or `fisk.llm.http_error` (none) to
it, and counts attempts so the span can carry `http.request.resend_count`. Nothing of the URL, headers or
bodies is recorded. With telemetry off the span does not record and the middleware only counts.
"""

from __future__ import annotations

import time
from collections.abc import Generator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import anyio

from fiskai_core.telemetry import Span

__all__ = ["ChatAttempts", "attempt_events", "current_attempts", "reporting_attempts"]


@dataclass(slots=True)
class ChatAttempts:
    """The chat span the current model call reports its HTTP attempts to."""

    span: Span
    attempts: int = 0

    def close(self) -> None:
        """Set `http.request.resend_count` (retries after the first; absent when there were none)."""
        if self.attempts > 1 and self.span.recording:
            self.span.set("http.request.resend_count", self.attempts - 1)


current_attempts: ContextVar[ChatAttempts | None] = ContextVar("fiskai_chat_attempts", default=None)


@contextmanager
def reporting_attempts(span: Span) -> Generator[ChatAttempts]:
    """Inside the block, the provider's HTTP attempts are reported to `span`; its resend count set after."""
    attempts = ChatAttempts(span)
    token = current_attempts.set(attempts)
    try:
        yield attempts
    finally:
        current_attempts.reset(token)
        attempts.close()


def _error_type(err: BaseException) -> str:
    if isinstance(err, anyio.get_cancelled_exc_class()):
        return "canceled"
    if "Timeout" in type(err).__name__:
        return "timeout"
    return "provider"


async def attempt_events(request: Any, call_next: Any) -> Any:
    """SDK middleware (one call per HTTP attempt) reporting to the current `ChatAttempts`, if any."""
    attempts = current_attempts.get()
    if attempts is None:
        return await call_next(request)
    attempts.attempts += 1
    number, span = attempts.attempts, attempts.span
    started = time.perf_counter()
    try:
        response = await call_next(request)
    except BaseException as err:
        if span.recording:
            status = getattr(getattr(err, "response", None), "status_code", None)
            elapsed = round((time.perf_counter() - started) * 1000, 3)
            if isinstance(status, int):
                event = {"fisk.llm.http_attempt": number, "fisk.llm.http_duration_ms": elapsed}
                span.event("fisk.llm.http_response", {**event, "http.response.status_code": status})
            else:
                span.event(
                    "fisk.llm.http_error",
                    {
                        "fisk.llm.http_attempt": number,
                        "fisk.llm.http_duration_ms": elapsed,
                        "error.type": _error_type(err),
                    },
                )
        raise
    if span.recording:
        status = getattr(getattr(response, "http_response", None), "status_code", 0)
        span.event(
            "fisk.llm.http_response",
            {
                "fisk.llm.http_attempt": number,
                "fisk.llm.http_duration_ms": round((time.perf_counter() - started) * 1000, 3),
                "http.response.status_code": int(status or 0),
            },
        )
    return response
