"""The SDK-backed telemetry in process: span tree through the seam, delivery counting, joined traces."""

from collections.abc import Sequence
from typing import Any

from opentelemetry.sdk.metrics.export import MetricExporter, MetricExportResult
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from typing_extensions import override

from fiskai_cli._telemetry import OtelTelemetry
from fiskai_core.telemetry import NO_TELEMETRY, Telemetry, TelemetryPlan, current, joined, using

PLAN = TelemetryPlan(enabled=True, service_name="test", metrics=False)


class Refusing(SpanExporter):
    @override
    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return SpanExportResult.FAILURE


def test_the_sdk_fits_the_seam_and_nests_spans_through_current() -> None:
    exported = InMemorySpanExporter()
    telemetry: Telemetry = OtelTelemetry(PLAN, span_exporter=exported)
    assert current() is NO_TELEMETRY
    with using(telemetry), current().span("invoke_agent a") as root:
        root.set("fisk.run.interactive", False)
        trace_id = current().trace_id()
        with current().span("chat m") as chat:
            chat.error("provider")
    assert current() is NO_TELEMETRY
    assert isinstance(telemetry, OtelTelemetry)
    delivery = telemetry.shutdown()
    assert (delivery.delivered, delivery.total, delivery.first_error) == (2, 2, "")
    spans = {span.name: span for span in exported.get_finished_spans()}
    assert spans["chat m"].parent is not None
    root_context, chat_context = spans["invoke_agent a"].context, spans["chat m"].context
    assert root_context is not None
    assert chat_context is not None
    assert spans["chat m"].parent.span_id == root_context.span_id
    assert format(chat_context.trace_id, "032x") == trace_id
    assert spans["chat m"].attributes is not None
    assert spans["chat m"].attributes["error.type"] == "provider"
    assert not spans["chat m"].events  # no exception events, ever


def test_lost_spans_are_counted_and_the_line_says_so() -> None:
    telemetry = OtelTelemetry(PLAN, span_exporter=Refusing())
    with using(telemetry), telemetry.span("invoke_agent a"), telemetry.span("chat m"):
        pass
    delivery = telemetry.shutdown()
    assert (delivery.delivered, delivery.total) == (0, 2)
    assert delivery.line().startswith("telemetry: 0 of 2 spans delivered (")


def test_a_served_request_joins_the_trace_its_caller_sent() -> None:
    exported = InMemorySpanExporter()
    caller, server = OtelTelemetry(PLAN, span_exporter=exported), OtelTelemetry(PLAN, span_exporter=exported)
    with using(caller), caller.span("execute_tool x"), caller.span("invoke_agent peer"):
        carrier = caller.inject()
        sent_from = caller.trace_id()
    assert "traceparent" in carrier
    with using(server), joined(carrier), server.span("execute_tool x"):
        assert server.trace_id() == sent_from
    with using(server), joined({}), server.span("alone"):
        assert server.trace_id() != sent_from
    caller.shutdown()
    server.shutdown()


class Kept(MetricExporter):
    def __init__(self) -> None:
        super().__init__()
        self.names: list[str] = []

    @override
    def export(self, metrics_data: Any, timeout_millis: float = 10_000, **kwargs: Any) -> MetricExportResult:
        self.names += [
            metric.name
            for resource in metrics_data.resource_metrics
            for scope in resource.scope_metrics
            for metric in scope.metrics
        ]
        return MetricExportResult.SUCCESS

    @override
    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return True

    @override
    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        return None


def test_measurements_reach_the_exporter_at_shutdown_and_unknown_names_are_ignored() -> None:
    kept = Kept()
    telemetry = OtelTelemetry(TelemetryPlan(enabled=True), span_exporter=InMemorySpanExporter(), metric_exporter=kept)
    telemetry.record("gen_ai.execute_tool.duration", 0.1, {"gen_ai.tool.name": "x"})
    telemetry.record("fisk.knowledge.degraded_searches", 1, {"fisk.knowledge.degraded_reason": "timeout"})
    telemetry.record("not.a.metric", 1, {})
    assert kept.names == []
    telemetry.shutdown()
    assert sorted(kept.names) == ["fisk.knowledge.degraded_searches", "gen_ai.execute_tool.duration"]


def test_a_down_collector_does_not_hold_shutdown() -> None:
    """The real OTLP/HTTP exporters against a port nobody listens on: shutdown is prompt, the loss counted.

    Without the probe the exporter retries each export with backoff (about 3 s for spans and 3 s more
    for metrics), which a command pays at exit.
    """
    import socket
    import time

    from fiskai_core.telemetry import TelemetryPlan

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    plan = TelemetryPlan(enabled=True, service_name="test", endpoint=f"http://127.0.0.1:{port}", metrics=True)
    telemetry = OtelTelemetry(plan)
    with using(telemetry), telemetry.span("invoke_agent a"), telemetry.span("chat m"):
        telemetry.record("gen_ai.client.operation.duration", 0.5, {"gen_ai.operation.name": "chat"})
    started = time.monotonic()
    delivery = telemetry.shutdown()
    elapsed = time.monotonic() - started
    assert elapsed < 1.5, f"shutdown took {elapsed:.2f}s with the collector down"
    assert (delivery.delivered, delivery.total) == (0, 2)
    assert delivery.first_error == f"no collector accepted them at http://127.0.0.1:{port}"


def test_a_chats_turns_are_invoke_agent_spans_under_its_workflow() -> None:
    """An interactive run in process: each turn is `invoke_agent <identity>` with its index, under the root
    the caller opened, and holds that turn's `chat` spans; the per-turn metrics are recorded per turn."""
    import anyio

    from fiskai_agent import FollowUp, RunOptions, run
    from fiskai_agent.testing import ScriptedProvider, answer
    from fiskai_core.config import LLMSettings
    from fiskai_core.testing import FakeTool
    from fiskai_core.tools import ToolSet

    turns = [FollowUp(text="and then?"), None]

    async def operator(error: str) -> FollowUp | None:
        return turns.pop(0)

    exported, kept = InMemorySpanExporter(), Kept()
    telemetry = OtelTelemetry(TelemetryPlan(enabled=True), span_exporter=exported, metric_exporter=kept)
    options = RunOptions(
        prompt="hello",
        identity="ops",
        llm=LLMSettings(model="claude-sonnet-4-6"),
        tools=ToolSet.of([FakeTool(name="noop", description="does nothing")]),
        provider=ScriptedProvider.of(answer("one"), answer("two")),
        interactive=True,
        next_prompt=operator,
    )

    async def chat() -> None:
        with using(telemetry), telemetry.span("invoke_workflow ops"):
            result = await run(options)
        assert result.answer == "two"

    anyio.run(chat)
    telemetry.shutdown()
    spans = exported.get_finished_spans()
    (root,) = [s for s in spans if s.name == "invoke_workflow ops"]
    turn_spans = sorted((s for s in spans if s.name == "invoke_agent ops"), key=lambda s: s.start_time or 0)
    assert [dict(s.attributes or {})["fisk.turn.index"] for s in turn_spans] == [1, 2]
    assert {s.parent.span_id for s in turn_spans if s.parent} == {root.context.span_id if root.context else 0}
    for turn in turn_spans:
        assert dict(turn.attributes or {})["fisk.run.terminal_reason"] == "completed"
        (chat_span,) = [s for s in spans if s.name.startswith("chat ") and s.parent == turn.context]
        assert chat_span is not None
    assert "gen_ai.invoke_agent.duration" in kept.names  # recorded by the turns: the caller opened a plain span
