"""Tools as drivers see them.

The `Tool` shape every tool kind satisfies and the `ToolResult` every call produces; the capability Protocols a runner checks with `isinstance` (`Confirmable` for the
confirmation gate, `ArgumentValidator` for the required-parameter pre-check) and the message for the
latter; reserved tags; the selection pipeline, deferral planning and the `find_tools` finder.

What a tool source (fisk, a future Python-CLI source) provides, and how its commands run, is
`fiskai_core.exec`.
"""

from ._deferral import TOOL_SEARCH_THRESHOLD, DeferralPlan, plan_deferral
from ._finder import ToolFinder, ToolMatch
from ._finder_deferred import DeferredTools
from ._finder_tool import FIND_TOOLS, FindToolsAnswer, FindToolsTool, found_tool_names, not_loaded_result
from ._protocols import ArgumentValidator, Confirmable, FilterRule, Selectable, Tool
from ._result import ToolResult
from ._select import matches_rule, select_tools
from ._tags import TAG_CONFIRM, TAG_DENY, TAG_NO_DEFER, requires_confirmation
from ._validate import missing_required_message

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
    "missing_required_message",
    "not_loaded_result",
    "plan_deferral",
    "requires_confirmation",
    "select_tools",
]
