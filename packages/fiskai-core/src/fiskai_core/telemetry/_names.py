"""The metric catalogue (reference 6.4): names, instrument kinds, units and explicit bucket boundaries.

Every histogram has its own boundaries: the SDK's defaults are millisecond-shaped and wrong for seconds
and for token counts, which is what the Go agent's dashboards were built against.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["COUNT_BUCKETS", "METRICS", "SECONDS_BUCKETS", "TOKEN_BUCKETS", "MetricSpec"]

SECONDS_BUCKETS: tuple[float, ...] = (
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0,
)  # fmt: skip
"""Durations: tool calls of milliseconds to model calls and runs of minutes."""

TOKEN_BUCKETS: tuple[float, ...] = (
    1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
)  # fmt: skip
"""Token counts: the GenAI semantic conventions' advice (powers of four)."""

COUNT_BUCKETS: tuple[float, ...] = (0, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144)
"""Model and tool calls per turn."""


@dataclass(frozen=True, slots=True)
class MetricSpec:
    """One instrument."""

    kind: Literal["histogram", "counter"]
    unit: str
    description: str
    buckets: tuple[float, ...] = ()


METRICS: dict[str, MetricSpec] = {
    "gen_ai.client.token.usage": MetricSpec("histogram", "{token}", "Tokens per model call", TOKEN_BUCKETS),
    "gen_ai.client.operation.duration": MetricSpec("histogram", "s", "Model call duration", SECONDS_BUCKETS),
    "gen_ai.invoke_agent.duration": MetricSpec("histogram", "s", "Agent turn duration", SECONDS_BUCKETS),
    "gen_ai.invoke_agent.inference_calls": MetricSpec("histogram", "{call}", "Model calls per turn", COUNT_BUCKETS),
    "gen_ai.invoke_agent.tool_calls": MetricSpec("histogram", "{call}", "Tool calls per turn", COUNT_BUCKETS),
    "gen_ai.execute_tool.duration": MetricSpec("histogram", "s", "Tool call duration", SECONDS_BUCKETS),
    "fisk.knowledge.degraded_searches": MetricSpec("counter", "{search}", "Knowledge searches that degraded"),
    "fisk.session.append.duration": MetricSpec("histogram", "s", "Session journal append duration", SECONDS_BUCKETS),
}
"""Every metric fiskai records; `Telemetry.record` takes only these names."""
