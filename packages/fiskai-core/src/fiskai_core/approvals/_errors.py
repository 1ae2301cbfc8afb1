"""The one error of approval rules."""

from __future__ import annotations

from fiskai_core.errors import FiskaiError

__all__ = ["RuleError"]


class RuleError(FiskaiError):
    """An approval rule cannot be parsed, added or stored; the message names the rule or file and the fix."""
