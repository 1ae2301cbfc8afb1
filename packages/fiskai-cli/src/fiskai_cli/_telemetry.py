"""OpenTelemetry export (the `telemetry` extra): the SDK behind `fiskai_core.telemetry.Telemetry`.

The only module that imports `opentelemetry`, and only when a command starts with export on. Spans go
through a batch processor to OTLP/HTTP `<endpoint>/v1/traces`, metrics to `<endpoint>/v1/metrics` once at
the end (a run is short; a periodic reader would only add empty exports). A counting wrapper around the
span exporter gives "N of M spans delivered" and the first error, which the SDK would otherwise only log:
its loggers are silenced here so a down collector never draws over the run.

A collector that is down must not hold the command's exit: the exporter retries a refused connection with
backoff (about 3 s per export, spans and metrics each). So shutdown first tries a TCP connection to the
collector (0.5 s at most); when none is accepted every pending export fails at once, counted, and the
exporter's own retry of a batch already in flight is cut short.

No global provider is installed: an embedder's own OpenTelemetry setup is left alone.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Generator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from typing_extensions import override

from fiskai_core.telemetry import METRICS, AttributeValue, Capture, TelemetryPlan, remote_parent

try:
    from opentelemetry import trace
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import MetricExporter, MetricExportResult, PeriodicExportingMetricReader
    from opentelemetry.sdk.metrics.view import ExplicitBucketHistogramAggregation, View
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
    from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased
    from opentelemetry.trace import Status, StatusCode
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
except ImportError as _import_error:  # pragma: no cover - the message is the point
    raise ImportError(
        "telemetry.enabled needs the telemetry extra: install fiskai-cli[telemetry] (opentelemetry-sdk and "
        "opentelemetry-exporter-otlp-proto-http), or run with --no-telemetry"
    ) from _import_error

if TYPE_CHECKING:
    from opentelemetry.sdk.metrics.export import MetricsData

__all__ = ["Delivery", "OtelTelemetry", "open_telemetry"]

_FLUSH_MILLIS = 5000
_EXPORT_TIMEOUT = 4.0
"""Per export, retries included: a collector that is down must not hold the command's exit for long."""
_INTERVAL_MILLIS = 24 * 3600 * 1000
"""Metrics are exported at shutdown; the periodic reader must not fire during a run."""
_PENDING_LIMIT = 4096
"""Measurements held before they are handed to the SDK (see `OtelTelemetry.record`)."""
_PROBE_TIMEOUT = 0.5
"""Seconds shutdown waits for the collector to accept a connection before it counts it down."""


@dataclass(frozen=True, slots=True)
class Delivery:
    """What reached the collector."""

    delivered: int
    total: int
    first_error: str = ""

    def line(self) -> str:
        """`N of M spans delivered`, with the first error when some were not."""
        text = f"telemetry: {self.delivered} of {self.total} spans delivered"
        return f"{text} ({self.first_error})" if self.first_error else text


class _FirstError(logging.Handler):
    """Keeps the first error the SDK logs (it reports export failures only to its loggers)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.message = ""

    @override
    def emit(self, record: logging.LogRecord) -> None:
        if not self.message:
            self.message = record.getMessage().splitlines()[0][:200]


class _CountingSpans(SpanExporter):
    def __init__(self, inner: SpanExporter) -> None:
        self.inner = inner
        self.total = 0
        self.delivered = 0
        self.down = False
        """Set at shutdown when no collector accepts a connection: exports then fail at once."""

    @override
    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.total += len(spans)
        if self.down:
            return SpanExportResult.FAILURE
        result = self.inner.export(spans)
        if result is SpanExportResult.SUCCESS:
            self.delivered += len(spans)
        return result

    def give_up(self) -> None:
        """Fail every later export at once and stop the inner exporter (its retries of a batch in flight too)."""
        if not self.down:
            self.down = True
            self.inner.shutdown()

    @override
    def shutdown(self) -> None:
        if not self.down:  # given up: already stopped (a second stop would log a warning as the first error)
            self.inner.shutdown()

    @override
    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)


class _DropEmpty(MetricExporter):
    """Skips a collection with no data points (reference: empty collections are dropped, not counted)."""

    def __init__(self, inner: MetricExporter) -> None:
        super().__init__(preferred_temporality=inner._preferred_temporality)
        self.inner = inner
        self.down = False

    @override
    def export(self, metrics_data: MetricsData, timeout_millis: float = 10_000, **kwargs: Any) -> MetricExportResult:
        points = sum(
            len(metric.data.data_points)
            for resource in metrics_data.resource_metrics
            for scope in resource.scope_metrics
            for metric in scope.metrics
        )
        if not points:
            return MetricExportResult.SUCCESS
        if self.down:
            return MetricExportResult.FAILURE
        return self.inner.export(metrics_data, timeout_millis=timeout_millis, **kwargs)  # pyright: ignore[reportUnknownMemberType]

    @override
    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return self.inner.force_flush(timeout_millis)

    @override
    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        self.inner.shutdown(timeout_millis=timeout_millis, **kwargs)  # pyright: ignore[reportUnknownMemberType]


class _Span:
    __slots__ = ("_span",)

    def __init__(self, span: trace.Span) -> None:
        self._span = span

    @property
    def recording(self) -> bool:
        return self._span.is_recording()

    def set(self, key: str, value: AttributeValue) -> None:
        self._span.set_attribute(key, value)

    def event(self, name: str, attributes: Mapping[str, AttributeValue]) -> None:
        self._span.add_event(name, dict(attributes))

    def error(self, error_type: str) -> None:
        self._span.set_attribute("error.type", error_type)
        self._span.set_status(Status(StatusCode.ERROR))


class OtelTelemetry:
    """`Telemetry` over the OpenTelemetry SDK; `shutdown()` flushes and reports delivery."""

    def __init__(
        self,
        plan: TelemetryPlan,
        *,
        span_exporter: SpanExporter | None = None,
        metric_exporter: MetricExporter | None = None,
        version: str = "",
    ) -> None:
        self._plan = plan
        self._errors = _FirstError()
        self._logger = logging.getLogger("opentelemetry")
        self._logger.addHandler(self._errors)
        self._logger.propagate = False
        span_exporter_given = span_exporter
        resource = Resource.create({"service.name": plan.service_name, "service.version": version})
        if span_exporter is None:
            from opentelemetry.exporter.otlp.proto.http import Compression
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            compression = Compression.Gzip if plan.capture is not None else Compression.NoCompression
            span_exporter = OTLPSpanExporter(
                endpoint=f"{plan.endpoint}/v1/traces", timeout=_EXPORT_TIMEOUT, compression=compression
            )
        self._spans = _CountingSpans(span_exporter)
        # With capture on a span can carry several max_bytes documents: smaller batches keep requests small.
        batch = 512 if plan.capture is None else max(8, 4 * 1024 * 1024 // (8 * plan.capture.max_bytes))
        self._provider = TracerProvider(resource=resource, sampler=ParentBased(TraceIdRatioBased(plan.sample_ratio)))
        self._provider.add_span_processor(BatchSpanProcessor(self._spans, max_export_batch_size=batch))
        self._tracer = self._provider.get_tracer("fiskai")
        self._meters: MeterProvider | None = None
        self._metric_exporter: _DropEmpty | None = None
        self._probe = span_exporter_given is None
        self._instruments: dict[str, Any] = {}
        self._pending: list[tuple[str, float, Mapping[str, AttributeValue]]] = []
        if plan.metrics:
            if metric_exporter is None:
                from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

                metric_exporter = OTLPMetricExporter(endpoint=f"{plan.endpoint}/v1/metrics", timeout=_EXPORT_TIMEOUT)
            self._metric_exporter = _DropEmpty(metric_exporter)
            reader = PeriodicExportingMetricReader(self._metric_exporter, export_interval_millis=_INTERVAL_MILLIS)
            views = [
                View(instrument_name=name, aggregation=ExplicitBucketHistogramAggregation(spec.buckets))
                for name, spec in METRICS.items()
                if spec.kind == "histogram"
            ]
            self._meters = MeterProvider(resource=resource, metric_readers=[reader], views=views)
            meter = self._meters.get_meter("fiskai")
            for name, spec in METRICS.items():
                make = meter.create_histogram if spec.kind == "histogram" else meter.create_counter
                self._instruments[name] = make(name, unit=spec.unit, description=spec.description)
        self._propagator = TraceContextTextMapPropagator()

    @property
    def enabled(self) -> bool:
        return True

    @property
    def capture(self) -> Capture | None:
        return self._plan.capture

    @contextmanager
    def _open(self, name: str, attributes: Mapping[str, AttributeValue] | None, context: Any) -> Generator[_Span]:
        # Exceptions are not recorded as span events (reference: span.RecordError is never used); callers set
        # error.type from a closed vocabulary instead.
        with self._tracer.start_as_current_span(
            name, context=context, attributes=attributes, record_exception=False, set_status_on_exception=False
        ) as span:
            yield _Span(span)

    def span(self, name: str, attributes: Mapping[str, AttributeValue] | None = None) -> AbstractContextManager[_Span]:
        carrier = remote_parent()
        if carrier is not None and not trace.get_current_span().get_span_context().is_valid:
            # A served request's first span: a child of the caller's span, in the caller's trace.
            return self._open(name, attributes, self._propagator.extract(dict(carrier)))
        return self._open(name, attributes, None)

    def remote_span(
        self, carrier: Mapping[str, str], name: str, attributes: Mapping[str, AttributeValue] | None = None
    ) -> AbstractContextManager[_Span]:
        return self._open(name, attributes, self._propagator.extract(dict(carrier)))

    def inject(self) -> dict[str, str]:
        carrier: dict[str, str] = {}
        self._propagator.inject(carrier)
        return carrier

    def trace_id(self) -> str:
        context = trace.get_current_span().get_span_context()
        return format(context.trace_id, "032x") if context.is_valid else ""

    def record(self, metric: str, value: float, attributes: Mapping[str, AttributeValue]) -> None:
        # Held, then handed to the SDK in one go: metrics are exported only at shutdown anyway, and the SDK's
        # aggregation per measurement (a new histogram per new attribute set) is most of telemetry's cost
        # per loop iteration. The exported data is the same.
        if self._meters is not None:
            self._pending.append((metric, value, attributes))
            if len(self._pending) >= _PENDING_LIMIT:
                self._aggregate()

    def _aggregate(self) -> None:
        pending, self._pending = self._pending, []
        for metric, value, attributes in pending:
            instrument = self._instruments.get(metric)
            if instrument is None:
                continue
            if METRICS[metric].kind == "histogram":
                instrument.record(value, dict(attributes))
            else:
                instrument.add(value, dict(attributes))

    def _collector_down(self) -> bool:
        """Whether the collector accepts no TCP connection now (only asked of the real OTLP exporter)."""
        if not self._probe:
            return False
        parts = urlsplit(self._plan.endpoint)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        try:
            with socket.create_connection((parts.hostname or "localhost", port), timeout=_PROBE_TIMEOUT):
                return False
        except OSError:
            return True

    def shutdown(self) -> Delivery:
        """Flush (each provider with its own fresh timeout) and stop; what was delivered."""
        try:
            if self._collector_down():
                # Fail what is left at once, and stop a batch already retrying in the exporter's thread.
                self._spans.give_up()
                if self._metric_exporter is not None:
                    self._metric_exporter.down = True
            self._provider.force_flush(_FLUSH_MILLIS)
            self._provider.shutdown()
            if self._meters is not None:
                self._aggregate()
                # Shutdown collects and exports once more itself: a flush before it would send everything twice.
                self._meters.shutdown(timeout_millis=_FLUSH_MILLIS)
        finally:
            self._logger.removeHandler(self._errors)
        error = self._errors.message
        if not error or any(word in error for word in ("NewConnectionError", "Connection refused", "Max retries")):
            # The SDK's own text for a refused connection is a long urllib3 chain; say what it means.
            error = f"no collector accepted them at {self._plan.endpoint}"
        return Delivery(
            self._spans.delivered, self._spans.total, error if self._spans.delivered < self._spans.total else ""
        )


def open_telemetry(plan: TelemetryPlan, *, version: str = "") -> OtelTelemetry:
    """The SDK-backed telemetry for an enabled plan."""
    return OtelTelemetry(plan, version=version)
