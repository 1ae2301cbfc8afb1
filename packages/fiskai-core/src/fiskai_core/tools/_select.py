"""The load pipeline's selection step: strip `ai:deny`, then include, then exclude.

A rule's `tools` are regular expressions searched (unanchored) in the underscore tool name, so
`auth_user` matches `auth_user_add` while the spaced command `auth user` matches nothing. Its `tags`
are exact, and `""` matches a tool with no tags. A tool matches a rule when any regex or any tag does.
Python's `re` stands in for Go's RE2: the patterns people write for tool names mean the same in both.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TypeVar

from fiskai_core.errors import ToolSelectionError

from ._protocols import FilterRule, Selectable
from ._tags import TAG_DENY

__all__ = ["matches_rule", "select_tools"]

T = TypeVar("T", bound=Selectable)


def select_tools(
    tools: Sequence[T], *, include: FilterRule | None = None, exclude: FilterRule | None = None
) -> list[T]:
    """Apply the selection pipeline, keeping the input order.

    `ai:deny` is dropped first and always, so no include rule can bring a denied tool back. An include
    rule applies only when it names any tools or tags; likewise exclude.

    Raises:
        ToolSelectionError: a rule's pattern is not a valid regular expression.
    """
    kept = [tool for tool in tools if TAG_DENY not in tool.tags]
    if include is not None and _active(include):
        compiled = _compile(include)
        kept = [tool for tool in kept if _matches(tool, compiled, include.tags)]
    if exclude is not None and _active(exclude):
        compiled = _compile(exclude)
        kept = [tool for tool in kept if not _matches(tool, compiled, exclude.tags)]
    return kept


def matches_rule(tool: Selectable, rule: FilterRule) -> bool:
    """Whether `tool` matches `rule` (any name regex, any exact tag, or `""` for an untagged tool).

    Raises:
        ToolSelectionError: a rule's pattern is not a valid regular expression.
    """
    return _matches(tool, _compile(rule), rule.tags)


def _active(rule: FilterRule) -> bool:
    return bool(rule.tools) or bool(rule.tags)


def _compile(rule: FilterRule) -> list[re.Pattern[str]]:
    compiled: list[re.Pattern[str]] = []
    for pattern in rule.tools:
        try:
            compiled.append(re.compile(pattern))
        except re.error as err:
            raise ToolSelectionError(f'invalid tool filter pattern "{pattern}": {err}') from err
    return compiled


def _matches(tool: Selectable, patterns: Sequence[re.Pattern[str]], tags: Sequence[str]) -> bool:
    if any(pattern.search(tool.name) for pattern in patterns):
        return True
    if not tool.tags:
        return "" in tags
    return any(tag in tags for tag in tool.tags)
