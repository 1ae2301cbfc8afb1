"""Approval rules: an operator's standing "yes" for a gated tool with arguments of a given shape.

`_rules` (what a rule is and matches), `_glob` (what its wildcards stand for), `_store` and `_file`
(the owner-only rules file), `_approvals` (what a gate consults). Rules are kept per agent identity in
a YAML file the CLI places in the state home.
"""

from __future__ import annotations

from ._approvals import Approvals, no_terminal_warning
from ._errors import RuleError
from ._file import MAX_FILE_BYTES
from ._rules import ANY_ARGUMENTS, ApprovalRule, parse_rule, suggest_rule
from ._store import MAX_PATTERNS, load_rules, save_rules

__all__ = [
    "ANY_ARGUMENTS",
    "MAX_FILE_BYTES",
    "MAX_PATTERNS",
    "ApprovalRule",
    "Approvals",
    "RuleError",
    "load_rules",
    "no_terminal_warning",
    "parse_rule",
    "save_rules",
    "suggest_rule",
]
