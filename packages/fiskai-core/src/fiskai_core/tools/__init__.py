"""Tools as drivers see them, and what a tool source provides.

For drivers (agent, MCP, A2A): the `Tool` shape every tool kind satisfies and the `ToolResult` every
call produces; the capability Protocols a runner checks with `isinstance` (`Confirmable` for the
confirmation gate, `ArgumentValidator` for the required-parameter pre-check) and the message for the
latter; reserved tags; the selection pipeline, deferral planning and the `find_tools` finder.

For tool sources (`fiskai_core.fisk`, a future Python-CLI source): `ToolSource` / `SourceCommand`, the
trust-boundary entry `parse_arguments` with its decoded value `ToolArguments` (`JsonNumber` keeps a
number's literal text, `DecodedValue` is any decoded JSON value). A source renders argv only; schema
checks, exec and results are `fiskai_core.exec`'s, the same for every source.
"""

from fiskai_core._gojson import DecodedValue, JsonNumber

from ._arguments import ToolArguments, parse_arguments
from ._deferral import TOOL_SEARCH_THRESHOLD, DeferralPlan, plan_deferral
from ._finder import ToolFinder, ToolMatch
from ._finder_deferred import DeferredTools
from ._finder_tool import FIND_TOOLS, FindToolsAnswer, FindToolsTool, found_tool_names, not_loaded_result
from ._protocols import ArgumentValidator, Confirmable, FilterRule, Selectable, Tool
from ._result import ToolResult
from ._select import matches_rule, select_tools
from ._source import SourceCommand, ToolSource
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
    "DecodedValue",
    "DeferralPlan",
    "DeferredTools",
    "FilterRule",
    "FindToolsAnswer",
    "FindToolsTool",
    "JsonNumber",
    "Selectable",
    "SourceCommand",
    "Tool",
    "ToolArguments",
    "ToolFinder",
    "ToolMatch",
    "ToolResult",
    "ToolSource",
    "found_tool_names",
    "matches_rule",
    "missing_required_message",
    "not_loaded_result",
    "parse_arguments",
    "plan_deferral",
    "requires_confirmation",
    "select_tools",
]
