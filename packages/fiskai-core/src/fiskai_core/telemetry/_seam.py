"""The telemetry seam: what instrumented code calls, and the no-op it gets when export is off.

Instrumented code asks `current()` for the run's `Telemetry` and opens spans on it; the composition root
installs an OpenTelemetry-backed one with `using(...)` when `telemetry.enabled` is on (the SDK lives in
fiskai-cli's `telemetry` extra). A span opened inside another, in the same task or a task started from
it, is its child (the context travels in a context variable, as OpenTelemetry's own does).

The no-op is what every run without telemetry pays for: one context-variable read and a shared,
stateless context manager per span, so leaving telemetry off costs next to nothing.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Literal, Protocol

__all__ = [
    "NO_SPAN",
    "NO_TELEMETRY",
    "AttributeValue",
    "Capture",
    "NoTelemetry",
    "Span",
    "Telemetry",
    "current",
    "joined",
    "remote_parent",
    "using",
]

AttributeValue = str | bool | int | float | Sequence[str] | Sequence[int] | Sequence[float] | Sequence[bool]
"""What an attribute may hold (OpenTelemetry's types)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Capture:
    """Content capture as decided at start-up (`telemetry.capture`, checked)."""

    messages: Literal["delta", "full"] = "delta"
    max_bytes: int = 8192
    """Per content attribute, on the encoded JSON (already lowered to `OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT`)."""


class Span(Protocol):
    """One open span: attributes and events may be added until it ends."""

    @property
    def recording(self) -> bool:
        """Whether anything set is kept (False for the no-op and for unsampled spans): skip costly attributes."""
        ...

    def set(self, key: str, value: AttributeValue) -> None:
        """Set one attribute."""
        ...

    def event(self, name: str, attributes: Mapping[str, AttributeValue]) -> None:
        """Add an event."""
        ...

    def error(self, error_type: str) -> None:
        """Mark the span failed with `error.type` from a closed vocabulary (never an exception's text)."""
        ...


class Telemetry(Protocol):
    """Where spans and measurements go."""

    @property
    def enabled(self) -> bool:
        """False for the no-op."""
        ...

    @property
    def capture(self) -> Capture | None:
        """Content capture, or None when off."""
        ...

    def span(self, name: str, attributes: Mapping[str, AttributeValue] | None = None) -> AbstractContextManager[Span]:
        """Open a span, the child of the current one; it becomes current inside the block."""
        ...

    def remote_span(
        self, carrier: Mapping[str, str], name: str, attributes: Mapping[str, AttributeValue] | None = None
    ) -> AbstractContextManager[Span]:
        """Open a span whose parent is another process's (its trace context, as `inject` wrote it)."""
        ...

    def inject(self) -> dict[str, str]:
        """The current span's trace context (W3C `traceparent`, `tracestate`) for a request to another process."""
        ...

    def trace_id(self) -> str:
        """The current trace's id as 32 hex digits, or "" outside a span or when off."""
        ...

    def record(self, metric: str, value: float, attributes: Mapping[str, AttributeValue]) -> None:
        """Add one measurement to a histogram or counter named in the reference (section 6.4)."""
        ...


class _NoSpan:
    __slots__ = ()

    @property
    def recording(self) -> bool:
        return False

    def set(self, key: str, value: AttributeValue) -> None:
        return None

    def event(self, name: str, attributes: Mapping[str, AttributeValue]) -> None:
        return None

    def error(self, error_type: str) -> None:
        return None

    def __enter__(self) -> _NoSpan:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


NO_SPAN = _NoSpan()
"""The span of the no-op; also its own context manager, so opening one allocates nothing."""


class NoTelemetry:
    """Telemetry off: every call does nothing."""

    __slots__ = ()

    @property
    def enabled(self) -> bool:
        return False

    @property
    def capture(self) -> Capture | None:
        return None

    def span(self, name: str, attributes: Mapping[str, AttributeValue] | None = None) -> AbstractContextManager[Span]:
        return NO_SPAN

    def remote_span(
        self, carrier: Mapping[str, str], name: str, attributes: Mapping[str, AttributeValue] | None = None
    ) -> AbstractContextManager[Span]:
        return NO_SPAN

    def inject(self) -> dict[str, str]:
        return {}

    def trace_id(self) -> str:
        return ""

    def record(self, metric: str, value: float, attributes: Mapping[str, AttributeValue]) -> None:
        return None


NO_TELEMETRY = NoTelemetry()

_CURRENT: ContextVar[Telemetry] = ContextVar("fiskai_telemetry", default=NO_TELEMETRY)
_REMOTE_PARENT: ContextVar[Mapping[str, str] | None] = ContextVar("fiskai_remote_parent", default=None)


def remote_parent() -> Mapping[str, str] | None:
    """The trace context a served request arrived with (`joined`), or None."""
    return _REMOTE_PARENT.get()


@contextmanager
def joined(carrier: Mapping[str, str] | None) -> Generator[None]:
    """Inside the block, a span opened with no local parent joins the trace `carrier` names (a caller's).

    What a server does around a request that carried `traceparent`: the transport knows the headers, the
    handler opens the spans, and neither has to pass the other anything.
    """
    if not carrier or "traceparent" not in carrier:
        yield
        return
    token = _REMOTE_PARENT.set(carrier)
    try:
        yield
    finally:
        _REMOTE_PARENT.reset(token)


def current() -> Telemetry:
    """The telemetry of the run (or served call) this code is part of; the no-op when none was installed."""
    return _CURRENT.get()


@contextmanager
def using(telemetry: Telemetry) -> Generator[Telemetry]:
    """Make `telemetry` current for the block (and for tasks started inside it)."""
    token = _CURRENT.set(telemetry)
    try:
        yield telemetry
    finally:
        _CURRENT.reset(token)
