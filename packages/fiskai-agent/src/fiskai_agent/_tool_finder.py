"""Client-side tool search: the run's `find_tools` tool when deferral applies but the server has none.

It starts by size: when the deferrable tools' definitions exceed `llm.tool_definition_budget` tokens
(`fiskai_core.tools.plan_client_deferral`); below it every tool is sent whole, as a small local model
does better with a short list it can see than with a search step first. Above it, the request carries
the tools that are never deferred (`ai:no_defer`), the built-ins and `find_tools`;
each `find_tools` answer loads the tools it names, whose full definitions every later request carries
at the end of its tool list (first found first, so the list only grows at its end). A call to a
deferred tool that was never found is refused in-band and nothing runs.

The loaded set is not journaled beside the conversation: it is the journaled `find_tools` answers,
replayed oldest first on resume (`restore_found`), so a resumed run sends the same tools.

This module also decides when a model server's 400 names a capability it does not serve
(`refused_capability`): the run then drops server-side tool search, caching and thinking once and
continues (with this finder when deferral applies) instead of failing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from fiskai_agent._tools import Entry, tool_def
from fiskai_agent.errors import ProviderError, SetupError
from fiskai_agent.llm import Message, Request, ToolDef, ToolResultBlock, ToolUseBlock
from fiskai_core.builtins import FIND_TOOLS, DeferredTools, FindToolsTool
from fiskai_core.tools import DEFINITION_TOKEN_BUDGET, ToolFinder, definition_tokens, plan_client_deferral

__all__ = ["FinderMode", "deferrable_tokens", "finder_mode", "found_answers", "refused_capability"]


@dataclass(frozen=True, slots=True, kw_only=True)
class FinderMode:
    """The finder of one run: the tool, the loaded set, and the definitions requests carry."""

    tool: FindToolsTool
    entry: Entry
    """`find_tools` as a built-in: ungated, never deferred, no intent record (it has no effect)."""
    deferred: DeferredTools
    base: tuple[ToolDef, ...]
    """What every request carries: the non-deferred tools, the built-ins, then `find_tools`."""
    deferred_defs: dict[str, ToolDef]
    """The full definition of each deferred tool, sent once it is loaded."""
    hashed: tuple[ToolDef, ...]
    """The whole tool set for the fingerprint (deferred ones marked), not any one request's list."""
    tokens: int = 0
    """The deferrable definitions' estimated tokens, which exceeded `budget`."""
    budget: int = DEFINITION_TOKEN_BUDGET

    def tools(self) -> tuple[ToolDef, ...]:
        """This request's tool list: the base, then the loaded tools in the order first found."""
        return self.base + tuple(self.deferred_defs[name] for name in self.deferred.loaded)


def deferrable_tokens(deferrable: Sequence[Entry]) -> int:
    """The estimated tokens of the deferrable tools' definitions (what the size rule weighs)."""
    return definition_tokens((e.tool.name, e.tool.description, e.tool.input_schema) for e in deferrable)


def finder_mode(
    deferrable: Sequence[Entry], builtins: Sequence[Entry], *, budget: int = DEFINITION_TOKEN_BUDGET
) -> FinderMode | None:
    """The finder for these tools, or `None` when none would be deferred (within `budget`, or all `ai:no_defer`).

    Raises:
        SetupError: A tool already has the name `find_tools`.
    """
    tokens = deferrable_tokens(deferrable)
    plan = plan_client_deferral([e.tool for e in deferrable], tokens=tokens, budget=budget, builtin_count=len(builtins))
    if not plan.add_search_tool:
        return None
    clash = next((e for e in (*deferrable, *builtins) if e.tool.name == FIND_TOOLS), None)
    if clash is not None:
        raise SetupError(
            f'the {clash.kind} tool "{FIND_TOOLS}" clashes with the client-side tool finder this run needs (the '
            "server has no tool search); exclude or rename it, or set llm.no_tool_search to send every tool"
        )
    hidden = [e for e in deferrable if plan.deferred.get(e.tool.name, False)]
    tool = FindToolsTool(ToolFinder([e.tool for e in hidden]))
    entry = Entry(tool=tool, kind="builtin", presentation="traced", deferrable=False)
    shown = [tool_def(e, defer=False) for e in deferrable if not plan.deferred.get(e.tool.name, False)]
    shown.extend(tool_def(e, defer=False) for e in builtins)
    finder_def = tool_def(entry, defer=False)
    hashed = [tool_def(e, defer=plan.deferred.get(e.tool.name, False)) for e in deferrable]
    hashed.extend(tool_def(e, defer=False) for e in builtins)
    return FinderMode(
        tool=tool,
        entry=entry,
        deferred=DeferredTools(e.tool.name for e in hidden),
        base=(*shown, finder_def),
        deferred_defs={e.tool.name: tool_def(e, defer=False) for e in hidden},
        hashed=(*hashed, finder_def),
        tokens=tokens,
        budget=budget,
    )


def found_answers(messages: Iterable[Message]) -> list[str]:
    """The text of every successful `find_tools` answer in `messages`, oldest first."""
    calls: set[str] = set()
    texts: list[str] = []
    for message in messages:
        for block in message.content:
            if isinstance(block, ToolUseBlock) and block.name == FIND_TOOLS:
                calls.add(block.id)
            elif isinstance(block, ToolResultBlock) and block.tool_use_id in calls and not block.is_error:
                texts.append(block.content)
    return texts


_REFUSALS: tuple[tuple[str, str], ...] = (
    ("defer_loading", "tool_search"),
    ("tool_search_tool", "tool_search"),
    ("cache_control", "prompt_cache"),
    ("thinking", "thinking"),
)
"""A word in a 400's message and the capability the server refused by it."""


def refused_capability(err: ProviderError, request: Request) -> str | None:
    """The capability a 400 names that `request` used (the server does not serve it), else `None`."""
    if err.status != 400:
        return None
    detail = (err.detail or str(err)).lower()
    caps = request.capabilities
    used = {
        "tool_search": caps is None or caps.tool_search,
        "prompt_cache": request.prompt_cache and (caps is None or caps.prompt_cache),
        "thinking": request.thinking and (caps is None or caps.thinking),
    }
    for word, capability in _REFUSALS:
        if word in detail and used[capability]:
            return capability
    # vLLM validates every tool against a model that requires input_schema: the tool-search tool (which
    # has none) is a 400 naming the missing field, not the capability.
    if used["tool_search"] and request.tool_search and "input_schema" in detail and _MISSING.search(detail):
        return "tool_search"
    return None


_MISSING = re.compile(r"\b(field required|missing|required)\b")
