"""An in-memory tool and a plain selection rule."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pydantic import JsonValue

from fiskai_core.tools import ToolResult

__all__ = ["FakeTool", "Rule"]


@dataclass(slots=True, kw_only=True)
class FakeTool:
    """A tool that records its calls and answers with a fixed result."""

    __test__ = False

    name: str
    tags: Sequence[str] = ()
    description: str = ""
    input_schema: Mapping[str, JsonValue] = field(default_factory=lambda: {"type": "object", "properties": {}})
    result: ToolResult = field(default_factory=lambda: ToolResult(text="ok"))
    calls: list[str | bytes | None] = field(default_factory=list[str | bytes | None])

    async def execute(self, arguments: str | bytes | None) -> ToolResult:
        """Record `arguments` and return the configured result."""
        self.calls.append(arguments)
        return self.result


@dataclass(frozen=True, slots=True, kw_only=True)
class Rule:
    """An include or exclude rule built in code (config builds its own from agent.yaml)."""

    tools: Sequence[str] = ()
    tags: Sequence[str] = ()
