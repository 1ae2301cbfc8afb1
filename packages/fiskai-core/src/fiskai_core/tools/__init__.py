"""Tools as drivers see them: the Tool shape, results, reserved tags, selection and deferral."""

from ._deferral import TOOL_SEARCH_THRESHOLD, DeferralPlan, plan_deferral
from ._protocols import ArgumentValidator, Confirmable, FilterRule, Selectable, Tool
from ._result import ToolResult
from ._select import matches_rule, select_tools
from ._tags import TAG_CONFIRM, TAG_DENY, TAG_NO_DEFER, requires_confirmation

__all__ = [
    "TAG_CONFIRM",
    "TAG_DENY",
    "TAG_NO_DEFER",
    "TOOL_SEARCH_THRESHOLD",
    "ArgumentValidator",
    "Confirmable",
    "DeferralPlan",
    "FilterRule",
    "Selectable",
    "Tool",
    "ToolResult",
    "matches_rule",
    "plan_deferral",
    "requires_confirmation",
    "select_tools",
]
