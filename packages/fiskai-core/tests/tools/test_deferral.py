from fiskai_core.testing import FakeTool
from fiskai_core.tools import TOOL_SEARCH_THRESHOLD, plan_deferral


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
