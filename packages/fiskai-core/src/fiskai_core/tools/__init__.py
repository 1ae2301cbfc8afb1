"""Tools as drivers see them.

The `Tool` shape every tool kind satisfies (`plan` a call, then `invoke` the plan), the `ToolResult`
every call produces, the decoded `ToolArguments` (`parse_arguments`: the model's JSON read once, numbers
as written), the argument checks, reserved tags and the gating rule, the selection pipeline, deferral
planning and the `find_tools` search index.

How a call goes through prepare, the gate and run is `fiskai_core.calls`; what a tool source provides,
and how its commands run, is `fiskai_core.exec`.
"""

from fiskai_core._exact_json import dumps_exact, exact_of, loads_exact, plain_json
from fiskai_core._gojson import DecodedValue, JsonNumber

from ._arguments import ToolArguments, arguments_from_value, parse_arguments
from ._deferral import (
    DEFINITION_BYTES_PER_TOKEN,
    DEFINITION_TOKEN_BUDGET,
    TOOL_SEARCH_THRESHOLD,
    DeferralPlan,
    definition_tokens,
    plan_client_deferral,
    plan_deferral,
)
from ._finder import ToolFinder, ToolMatch
from ._protocols import CallContext, CallPlan, FilterRule, Selectable, Tool
from ._result import ToolResult
from ._select import matches_rule, select_tools
from ._set import ToolEntry, ToolKind, ToolSet
from ._tags import (
    MAX_TOOL_NAME_LENGTH,
    TAG_CONFIRM,
    TAG_DENY,
    TAG_IDEMPOTENT,
    TAG_NO_DEFER,
    requires_confirmation,
    trigger_tag,
)
from ._validate import check_arguments, missing_required, missing_required_message

__all__ = [
    "DEFINITION_BYTES_PER_TOKEN",
    "DEFINITION_TOKEN_BUDGET",
    "MAX_TOOL_NAME_LENGTH",
    "TAG_CONFIRM",
    "TAG_DENY",
    "TAG_IDEMPOTENT",
    "TAG_NO_DEFER",
    "TOOL_SEARCH_THRESHOLD",
    "CallContext",
    "DecodedValue",
    "JsonNumber",
    "CallPlan",
    "DeferralPlan",
    "FilterRule",
    "Selectable",
    "Tool",
    "ToolArguments",
    "ToolEntry",
    "ToolFinder",
    "ToolMatch",
    "ToolKind",
    "ToolResult",
    "ToolSet",
    "arguments_from_value",
    "check_arguments",
    "definition_tokens",
    "dumps_exact",
    "exact_of",
    "loads_exact",
    "matches_rule",
    "missing_required",
    "missing_required_message",
    "parse_arguments",
    "plain_json",
    "plan_client_deferral",
    "plan_deferral",
    "requires_confirmation",
    "select_tools",
    "trigger_tag",
]
