"""Tools as drivers see them: results, selection rules and deferral."""

from ._result import ToolResult

__all__ = ["ToolResult"]
