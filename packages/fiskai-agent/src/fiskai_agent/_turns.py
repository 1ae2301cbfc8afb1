"""Turn spans of an interactive run (reference 6.2): one `invoke_agent <identity>` per turn.

A chat's root is the caller's `invoke_workflow <identity>`; a served turn has no root of its own, so its
turn span is the run's top span (joined to the caller's trace when the prompt carried one). Each turn
carries `fisk.turn.index` (1-based), how it ended and its usage, and records the per-turn
`gen_ai.invoke_agent.*` metrics. A one-shot run is one turn whose root the caller opens, so nothing here
runs for it. With telemetry off this is a no-op span per turn.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from fiskai_agent._prepared import Setup
from fiskai_agent._runner import Outcome
from fiskai_core.telemetry import current

__all__ = ["Turns"]


class Turns:
    """Counts a run's turns and wraps each in its span."""

    def __init__(self, setup: Setup) -> None:
        self._s = setup
        self.index = 0

    async def run(self, turn: Callable[[], Awaitable[Outcome]]) -> Outcome:
        s = self._s
        if not s.options.interactive:
            return await turn()
        telemetry = current()
        if not telemetry.enabled:
            return await turn()
        self.index += 1
        identity = s.options.identity
        stats = s.stats
        before = (stats.llm_calls, stats.tool_calls, stats.input_tokens)
        attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": identity,
            "fisk.turn.index": self.index,
            "fisk.run.interactive": True,
        }
        started = time.perf_counter()
        with telemetry.span(f"invoke_agent {identity}".strip(), attributes) as span:
            outcome = await turn()
            span.set("fisk.run.terminal_reason", outcome.reason)
            span.set("fisk.llm.uncached_input_tokens", stats.input_tokens - before[2])
            if s.session_id:
                span.set("gen_ai.conversation.id", s.session_id)
            if outcome.reason == "error":
                span.error("error")
        metric = {
            "gen_ai.agent.name": identity,
            "fisk.run.terminal_reason": outcome.reason,
            "fisk.run.interactive": True,
        }
        telemetry.record("gen_ai.invoke_agent.duration", time.perf_counter() - started, metric)
        telemetry.record("gen_ai.invoke_agent.inference_calls", stats.llm_calls - before[0], metric)
        telemetry.record("gen_ai.invoke_agent.tool_calls", stats.tool_calls - before[1], metric)
        return outcome
