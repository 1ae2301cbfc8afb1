"""Which tools a model receives up front and which it finds through server-side tool search.

At `TOOL_SEARCH_THRESHOLD` tools or more (every tool counts: application, remote, custom and
built-in), deferrable tools are marked for deferred loading and the BM25 tool-search tool is added.
Built-ins are never deferred, and a tool tagged `ai:no_defer` is always sent directly. The search
tool is added only when at least one tool is actually deferred.

The client-side finder (`find_tools`, for servers without tool search) starts by size instead
(`plan_client_deferral`): when the deferrable tools' definitions exceed a token budget. A small local
model does better with a short list shown whole than with a search step before every first call; a
long list (the 221-command NATS CLI, about 44,000 tokens) would not fit its context at all.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from pydantic import JsonValue

from ._protocols import Selectable
from ._tags import TAG_NO_DEFER

__all__ = [
    "DEFINITION_BYTES_PER_TOKEN",
    "DEFINITION_TOKEN_BUDGET",
    "TOOL_SEARCH_THRESHOLD",
    "DeferralPlan",
    "definition_tokens",
    "plan_client_deferral",
    "plan_deferral",
]

TOOL_SEARCH_THRESHOLD = 10

DEFINITION_TOKEN_BUDGET = 4096
"""Tokens of deferrable tool definitions a request carries whole before the client-side finder starts.

Measured (bench/local_model_requests.py, llama-server's /tokenize): fixturectl's 11 offered commands take
about 1,500 tokens and stay whole; the NATS CLI's 221 take about 37,000 and are deferred. 4,096 is half of an 8,192-token context,
leaving the other half for the prompt, the conversation and the answer."""

DEFINITION_BYTES_PER_TOKEN = 4
"""The estimate's divisor. Measured with llama-server's /tokenize and the Llama-3 vocabulary: fixturectl's
definitions are 4.24 bytes a token (1,512 tokens), the NATS CLI's 4.76 (37,407); 4 overestimates a
little, which errs toward deferring."""


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
    tokens: int | None = None
    """The deferrable definitions' estimated tokens, when the plan was decided by size."""
    budget: int | None = None
    """The token budget they were held against, when the plan was decided by size."""

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


def definition_tokens(definitions: Iterable[tuple[str, str, Mapping[str, JsonValue]]]) -> int:
    """Estimated tokens of (name, description, input schema) definitions as a request carries them."""
    size = sum(
        len(
            json.dumps(
                {"name": name, "description": description, "input_schema": schema},
                separators=(",", ":"),
                ensure_ascii=False,
            ).encode()
        )
        for name, description, schema in definitions
    )
    return -(-size // DEFINITION_BYTES_PER_TOKEN)


def plan_client_deferral(
    deferrable: Sequence[Selectable], *, tokens: int, budget: int = DEFINITION_TOKEN_BUDGET, builtin_count: int = 0
) -> DeferralPlan:
    """Decide the client-side finder's deferral: defer when `tokens` (the deferrable tools') exceed `budget`.

    Built-ins are never deferred and do not count; `ai:no_defer` tools are sent directly either way.
    """
    defer = tokens > budget
    deferred = {tool.name: defer and TAG_NO_DEFER not in tool.tags for tool in deferrable}
    return DeferralPlan(
        deferred=deferred,
        add_search_tool=any(deferred.values()),
        total=len(deferrable) + builtin_count,
        tokens=tokens,
        budget=budget,
    )
