"""An in-memory tool and a plain selection rule."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pydantic import JsonValue

from fiskai_core.tools import CallContext, CallPlan, ToolArguments, ToolResult

__all__ = ["FakeTool", "Rule"]


@dataclass(slots=True, kw_only=True)
class FakeTool:
    """A tool that records its calls and answers with a fixed result."""

    __test__ = False

    name: str
    tags: Sequence[str] = ()
    description: str = ""
    input_schema: Mapping[str, JsonValue] = field(default_factory=lambda: {"type": "object", "properties": {}})
    result: ToolResult = field(default_factory=lambda: ToolResult(output="ok"))
    calls: list[str] = field(default_factory=list[str])
    """Each call's arguments as compact JSON, numbers as the caller wrote them."""
    contexts: list[CallContext] = field(default_factory=list[CallContext])

    def plan(self, arguments: ToolArguments) -> CallPlan:
        """Accept any object; the display line is the name."""
        return CallPlan(arguments=arguments, display=self.name)

    async def invoke(self, plan: CallPlan, context: CallContext) -> ToolResult:
        """Record the arguments and context and return the configured result."""
        self.calls.append(plan.arguments.json())
        self.contexts.append(context)
        return self.result


@dataclass(frozen=True, slots=True, kw_only=True)
class Rule:
    """An include or exclude rule built in code (config builds its own from agent.yaml)."""

    tools: Sequence[str] = ()
    tags: Sequence[str] = ()
