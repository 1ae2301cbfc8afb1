"""Tools as drivers see them: the Tool shape, results, reserved tags, selection and deferral."""

from ._deferral import TOOL_SEARCH_THRESHOLD, DeferralPlan, plan_deferral
from ._finder import ToolFinder, ToolMatch
from ._finder_deferred import DeferredTools
from ._finder_tool import FIND_TOOLS, FindToolsAnswer, FindToolsTool, found_tool_names, not_loaded_result
from ._protocols import ArgumentValidator, Confirmable, FilterRule, Selectable, Tool
from ._result import ToolResult
from ._select import matches_rule, select_tools
from ._tags import TAG_CONFIRM, TAG_DENY, TAG_NO_DEFER, requires_confirmation

__all__ = [
    "FIND_TOOLS",
    "TAG_CONFIRM",
    "TAG_DENY",
    "TAG_NO_DEFER",
    "TOOL_SEARCH_THRESHOLD",
    "ArgumentValidator",
    "Confirmable",
    "DeferralPlan",
    "DeferredTools",
    "FilterRule",
    "FindToolsAnswer",
    "FindToolsTool",
    "Selectable",
    "Tool",
    "ToolFinder",
    "ToolMatch",
    "ToolResult",
    "found_tool_names",
    "matches_rule",
    "not_loaded_result",
    "plan_deferral",
    "requires_confirmation",
    "select_tools",
]
