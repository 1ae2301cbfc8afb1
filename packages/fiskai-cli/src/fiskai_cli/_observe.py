"""A command's telemetry: decided at start-up, the root span around the run, delivery reported at the end.

`start_telemetry` applies the decision order and the start-up refusals (`fiskai_core.telemetry`), prints
the note about `OTEL_EXPORTER_OTLP_*` set while off, and loads the SDK (the `telemetry` extra) only when
export is on. `RunTelemetry.root` opens `invoke_agent <identity>` and makes the telemetry current, so the
harness (`startup`, `memory_index`) and the loop (`chat`, `execute_tool`) hang their spans under it.
"""

from __future__ import annotations

import time
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import click

from fiskai_cli._version import VERSION
from fiskai_core.telemetry import (
    NO_TELEMETRY,
    Span,
    Telemetry,
    TelemetryPlan,
    TelemetryRefusedError,
    decide_telemetry,
    fit_json,
    using,
)

if TYPE_CHECKING:
    from fiskai_agent import RunResult
    from fiskai_cli._settings import Settings
    from fiskai_cli._telemetry import Delivery, OtelTelemetry
    from fiskai_core.tools import ToolSet

__all__ = ["RunTelemetry", "start_telemetry"]


@dataclass(slots=True)
class RunTelemetry:
    """One command's telemetry and what the run summary says about it."""

    plan: TelemetryPlan
    telemetry: Telemetry = NO_TELEMETRY
    sdk: OtelTelemetry | None = None
    trace_id: str = ""
    _root: dict[str, Any] = field(default_factory=dict[str, Any])

    @property
    def enabled(self) -> bool:
        return self.sdk is not None

    @contextmanager
    def root(self, identity: str, *, interactive: bool, resumed: bool) -> Generator[Span]:
        """The root span, current for the block; its trace id kept for the summary.

        `invoke_agent <identity>` for a one-shot run; a chat's is `invoke_workflow <identity>`, and its turns
        are the agent's own `invoke_agent` spans.
        """
        operation = "invoke_workflow" if interactive else "invoke_agent"
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": operation,
            "gen_ai.agent.name": identity,
            "fisk.run.interactive": interactive,
            "fisk.run.resumed": resumed,
        }
        with using(self.telemetry), self.telemetry.span(f"{operation} {identity}", attributes) as span:
            self.trace_id = self.telemetry.trace_id()
            self._root = {"identity": identity, "interactive": interactive, "started": time.perf_counter()}
            yield span

    @contextmanager
    def installed(self) -> Generator[None]:
        """Current for the block without a root span: a server, whose every served call is its own span."""
        with using(self.telemetry):
            yield

    @contextmanager
    def startup(self, identity: str, *, system_prompt: str = "") -> Generator[Span]:
        """`startup <identity>`: tools, stores, remote imports; with capture, the system prompt (once per run)."""
        with self.telemetry.span(f"startup {identity}", {"gen_ai.operation.name": "startup"}) as span:
            capture = self.telemetry.capture
            if capture is not None and system_prompt and span.recording:
                parts = [{"type": "text", "content": system_prompt}]
                span.set("gen_ai.system_instructions", fit_json(parts, capture.max_bytes).text)
            yield span

    def finish(self, span: Span, result: RunResult | Exception | None) -> None:
        """The root's outcome attributes and the per-turn `gen_ai.invoke_agent.*` metrics.

        `result` is the run's, or the error that kept it from starting (`setup_failed`), or None (no result).
        """
        if result is None or isinstance(result, Exception):
            reason = "error" if result is None else "setup_failed"
            llm_calls = tool_calls = 0
        else:
            reason = result.reason or "error"
            stats = result.stats
            llm_calls, tool_calls = stats.llm_calls, stats.tool_calls
            if stats.prefix is not None:
                llm_calls -= stats.prefix.llm_calls
                tool_calls -= stats.prefix.tool_calls
            _run_attributes(span, result)
        span.set("fisk.run.terminal_reason", reason)
        if reason in ("error", "setup_failed"):
            span.error(reason)
        root = self._root
        if root.get("interactive"):
            return  # a chat's turns recorded their own `gen_ai.invoke_agent.*` (reference 6.4: per turn)
        attributes = {
            "gen_ai.agent.name": root.get("identity", ""),
            "fisk.run.terminal_reason": reason,
            "fisk.run.interactive": bool(root.get("interactive", False)),
        }
        elapsed = time.perf_counter() - root.get("started", time.perf_counter())
        self.telemetry.record("gen_ai.invoke_agent.duration", elapsed, attributes)
        self.telemetry.record("gen_ai.invoke_agent.inference_calls", llm_calls, attributes)
        self.telemetry.record("gen_ai.invoke_agent.tool_calls", tool_calls, attributes)

    def summary(self) -> str:
        """What the run summary line ends with: ` trace=<id>`, and ` content=exported` with capture."""
        if not self.enabled or not self.trace_id:
            return ""
        return f" trace={self.trace_id}" + (" content=exported" if self.plan.capture is not None else "")

    def shutdown(self, *, verbose: bool) -> Delivery | None:
        """Flush and report "N of M spans delivered": always when some were lost, else with `--verbose`."""
        if self.sdk is None:
            return None
        delivery = self.sdk.shutdown()
        if delivery.delivered < delivery.total or verbose:
            click.echo(delivery.line(), err=True)
        return delivery


def _run_attributes(span: Span, result: RunResult) -> None:
    """The root's run attributes (reference 6.3): per-process usage, the session's on a resumed run."""
    stats = result.stats
    first = stats.first_session_id or result.session_id
    if first:
        span.set("gen_ai.conversation.id", first)
    if result.session_id and result.session_id != first:
        span.set("fisk.session.end_id", result.session_id)
    span.set("fisk.run.crashed", stats.crashed)
    before = prefix.tool_calls if (prefix := stats.prefix) is not None else 0
    span.set("fisk.run.tool_calls", stats.tool_calls - before)
    span.set("fisk.run.remote_tool_calls", stats.remote_tool_calls - (prefix.remote_tool_calls if prefix else 0))
    span.set("fisk.run.mcp_tool_calls", stats.by_kind.get("mcp", 0))
    span.set("fisk.llm.thinking", stats.thinking)
    span.set("fisk.llm.prompt_cache", stats.prompt_cache)
    span.set("fisk.llm.tool_search", stats.tool_search)
    span.set("gen_ai.request.model", stats.model)
    uncached, output = stats.input_tokens, stats.output_tokens
    cache_read, cache_create = stats.cache_read_tokens, stats.cache_create_tokens
    if prefix is not None:
        # The counters include the session before this process: the root describes this process's part.
        span.set("fisk.session.llm_calls", stats.llm_calls)
        span.set("fisk.session.usage.input_tokens", uncached + cache_read + cache_create)
        span.set("fisk.session.usage.output_tokens", output)
        span.set("fisk.session.usage.cache_read.input_tokens", cache_read)
        span.set("fisk.session.usage.cache_creation.input_tokens", cache_create)
        uncached -= prefix.input_tokens
        output -= prefix.output_tokens
        cache_read -= prefix.cache_read_tokens
        cache_create -= prefix.cache_create_tokens
    span.set("gen_ai.usage.input_tokens", uncached + cache_read + cache_create)
    span.set("gen_ai.usage.output_tokens", output)
    span.set("gen_ai.usage.cache_read.input_tokens", cache_read)
    span.set("gen_ai.usage.cache_creation.input_tokens", cache_create)
    span.set("fisk.llm.uncached_input_tokens", uncached)


def start_telemetry(settings: Settings, *, no_telemetry: bool) -> RunTelemetry:
    """Decide and, when on, start export.

    Raises:
        click.ClickException: a start-up refusal, or export is on without the `telemetry` extra.
    """
    config = settings.config
    try:
        plan = decide_telemetry(config.telemetry, identity=config.identity, no_telemetry=no_telemetry)
    except TelemetryRefusedError as err:
        raise click.ClickException(f"telemetry: {err}") from None
    if plan.note:
        click.echo(f"note: {plan.note}", err=True)
    if not plan.enabled:
        return RunTelemetry(plan)
    try:
        from fiskai_cli._telemetry import open_telemetry
    except ImportError as err:
        raise click.ClickException(str(err)) from None
    sdk = open_telemetry(plan, version=VERSION)
    return RunTelemetry(plan, telemetry=sdk, sdk=sdk)


def inventory(span: Span, tools: ToolSet, *, remote_hosts: int) -> None:
    """The `startup` span's tool inventory (`fisk.tools.*`)."""
    counts: dict[str, int] = {}
    for entry in tools:
        counts[entry.kind] = counts.get(entry.kind, 0) + 1
    for kind in ("application", "builtin", "remote", "custom"):
        span.set(f"fisk.tools.{kind}", counts.get(kind, 0))
    span.set("fisk.remote_hosts", remote_hosts)
