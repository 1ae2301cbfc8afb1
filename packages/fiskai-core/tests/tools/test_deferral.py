from pydantic import JsonValue

from fiskai_core.testing import FakeTool
from fiskai_core.tools import (
    DEFINITION_BYTES_PER_TOKEN,
    DEFINITION_TOKEN_BUDGET,
    TOOL_SEARCH_THRESHOLD,
    definition_tokens,
    plan_client_deferral,
    plan_deferral,
)


def _tools(count: int, *, tags: tuple[str, ...] = ()) -> list[FakeTool]:
    return [FakeTool(name=f"tool_{i}", tags=tags) for i in range(count)]


def test_deferral_below_threshold_sends_everything_directly() -> None:
    plan = plan_deferral(_tools(TOOL_SEARCH_THRESHOLD - 1))
    assert plan.deferred_count == 0
    assert not plan.add_search_tool
    assert plan.advisory is None


def test_deferral_at_threshold_defers_all_and_adds_search() -> None:
    plan = plan_deferral(_tools(TOOL_SEARCH_THRESHOLD))
    assert plan.deferred_count == TOOL_SEARCH_THRESHOLD
    assert plan.add_search_tool


def test_deferral_counts_builtins_toward_the_threshold() -> None:
    plan = plan_deferral(_tools(7), builtin_count=3)
    assert plan.total == 10
    assert plan.deferred_count == 7


def test_deferral_no_defer_tag_stays_direct() -> None:
    tools = [*_tools(9), FakeTool(name="pinned", tags=["ai:no_defer"])]
    plan = plan_deferral(tools)
    assert plan.deferred["pinned"] is False
    assert plan.deferred_count == 9


def test_deferral_all_pinned_adds_no_search_tool() -> None:
    plan = plan_deferral(_tools(12, tags=("ai:no_defer",)))
    assert not plan.add_search_tool


def test_deferral_disabled_by_operator_says_so() -> None:
    plan = plan_deferral(_tools(12), no_tool_search=True)
    assert plan.deferred_count == 0
    assert plan.advisory is not None and "no_tool_search" in plan.advisory


def test_deferral_unsupported_provider_says_so() -> None:
    plan = plan_deferral(_tools(12), provider_supports_search=False)
    assert plan.deferred_count == 0
    assert plan.advisory is not None and "does not support server-side tool search" in plan.advisory


def test_definition_tokens_estimate_the_json_a_request_carries_at_four_bytes_a_token() -> None:
    schema: dict[str, JsonValue] = {"type": "object", "properties": {}}
    one = len('{"name":"a","description":"bb","input_schema":{"type":"object","properties":{}}}')
    assert definition_tokens([("a", "bb", schema)]) == -(-one // DEFINITION_BYTES_PER_TOKEN)
    assert definition_tokens([("a", "bb", schema)] * 4) == one


def test_client_deferral_starts_over_the_budget_not_at_a_count() -> None:
    tools = _tools(40)
    assert plan_client_deferral(tools, tokens=DEFINITION_TOKEN_BUDGET).deferred_count == 0
    over = plan_client_deferral(tools, tokens=DEFINITION_TOKEN_BUDGET + 1, builtin_count=2)
    assert over.deferred_count == 40 and over.add_search_tool
    assert (over.total, over.tokens, over.budget) == (42, DEFINITION_TOKEN_BUDGET + 1, DEFINITION_TOKEN_BUDGET)


def test_client_deferral_keeps_no_defer_tools_direct() -> None:
    tools = [*_tools(2), FakeTool(name="pinned", tags=["ai:no_defer"])]
    plan = plan_client_deferral(tools, tokens=10, budget=5)
    assert plan.deferred == {"tool_0": True, "tool_1": True, "pinned": False}
