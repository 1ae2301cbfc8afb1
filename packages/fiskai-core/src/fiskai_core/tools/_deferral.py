"""Which tools a model receives up front and which it finds through server-side tool search.

At `TOOL_SEARCH_THRESHOLD` tools or more (every tool counts: application, remote, custom and
built-in), deferrable tools are marked for deferred loading and the BM25 tool-search tool is added.
Built-ins are never deferred, and a tool tagged `ai:no_defer` is always sent directly. The search
tool is added only when at least one tool is actually deferred.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ._protocols import Selectable
from ._tags import TAG_NO_DEFER

__all__ = ["TOOL_SEARCH_THRESHOLD", "DeferralPlan", "plan_deferral"]

TOOL_SEARCH_THRESHOLD = 10


@dataclass(frozen=True, slots=True, kw_only=True)
class DeferralPlan:
    """The outcome for one tool set."""

    deferred: Mapping[str, bool]
    """Tool name to `defer_loading`, for every deferrable tool."""
    add_search_tool: bool
    """Whether the tool-search tool is appended to the request."""
    total: int
    """Every tool counted toward the threshold."""
    advisory: str | None = None
    """Why a large set is sent directly, when it is (tool search unsupported or switched off)."""

    @property
    def deferred_count(self) -> int:
        """How many tools the model finds through search rather than up front."""
        return sum(self.deferred.values())


def plan_deferral(
    deferrable: Sequence[Selectable],
    *,
    builtin_count: int = 0,
    provider_supports_search: bool = True,
    no_tool_search: bool = False,
) -> DeferralPlan:
    """Decide deferral for `deferrable` tools alongside `builtin_count` never-deferred built-ins."""
    total = len(deferrable) + builtin_count
    allowed = provider_supports_search and not no_tool_search
    defer = allowed and total >= TOOL_SEARCH_THRESHOLD
    deferred = {tool.name: defer and TAG_NO_DEFER not in tool.tags for tool in deferrable}
    advisory = None
    if total >= TOOL_SEARCH_THRESHOLD and not allowed:
        if no_tool_search:
            advisory = (
                f"{total} tools are available but tool search is disabled (no_tool_search), so all are sent "
                "to the model directly and use more context each request; unset no_tool_search to defer them "
                "behind the search tool"
            )
        else:
            advisory = (
                f"{total} tools are available but the model backend does not support server-side tool search, "
                "so all are sent to the model directly and use more context each request; use a provider that "
                "supports tool search to defer them"
            )
    return DeferralPlan(deferred=deferred, add_search_tool=any(deferred.values()), total=total, advisory=advisory)
