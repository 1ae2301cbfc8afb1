"""Telemetry: the seam instrumented code uses, the start-up decision, and content capture.

Spans, attributes and metrics are named as the Go agent names them (reference section 6), so its
dashboards work unchanged. Nothing here imports OpenTelemetry: with export off the no-op is current and
costs a context-variable read per span; the SDK-backed implementation is installed by the composition
root (`fiskai_cli`, `telemetry` extra) with `using(...)`.
"""

from ._content import OMITTED, Fitted, encoded_size, fit_json, fit_messages
from ._decide import DEFAULT_ENDPOINT, DEFAULT_SERVICE_NAME, TelemetryPlan, TelemetryRefusedError, decide_telemetry
from ._names import COUNT_BUCKETS, METRICS, SECONDS_BUCKETS, TOKEN_BUCKETS, MetricSpec
from ._seam import (
    NO_SPAN,
    NO_TELEMETRY,
    AttributeValue,
    Capture,
    NoTelemetry,
    Span,
    Telemetry,
    current,
    joined,
    remote_parent,
    using,
)

__all__ = [
    "COUNT_BUCKETS",
    "METRICS",
    "SECONDS_BUCKETS",
    "TOKEN_BUCKETS",
    "MetricSpec",
    "DEFAULT_ENDPOINT",
    "DEFAULT_SERVICE_NAME",
    "NO_SPAN",
    "NO_TELEMETRY",
    "OMITTED",
    "AttributeValue",
    "Capture",
    "Fitted",
    "NoTelemetry",
    "Span",
    "Telemetry",
    "TelemetryPlan",
    "TelemetryRefusedError",
    "current",
    "decide_telemetry",
    "encoded_size",
    "fit_json",
    "fit_messages",
    "joined",
    "remote_parent",
    "using",
]
