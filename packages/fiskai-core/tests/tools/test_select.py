import pytest

from fiskai_core.errors import ToolSelectionError
from fiskai_core.testing import FakeTool, Rule
from fiskai_core.tools import select_tools


def _names(tools: list[FakeTool]) -> list[str]:
    return [tool.name for tool in tools]


TOOLS = [
    FakeTool(name="auth_user_add", tags=["impact:rw"]),
    FakeTool(name="auth_user_ls", tags=["impact:ro"]),
    FakeTool(name="stream_rm", tags=["ai:deny", "ai:confirm"]),
    FakeTool(name="cow_say"),
    FakeTool(name="cow_think", tags=["ai:confirm"]),
]


def test_select_without_rules_strips_only_deny() -> None:
    assert _names(select_tools(TOOLS)) == ["auth_user_add", "auth_user_ls", "cow_say", "cow_think"]


def test_select_deny_beats_an_include_that_matches() -> None:
    kept = select_tools(TOOLS, include=Rule(tools=["stream"], tags=["ai:confirm"]))
    assert _names(kept) == ["cow_think"]


def test_select_include_regex_is_unanchored_on_the_underscore_name() -> None:
    assert _names(select_tools(TOOLS, include=Rule(tools=["user"]))) == ["auth_user_add", "auth_user_ls"]
    assert select_tools(TOOLS, include=Rule(tools=["auth user"])) == []


def test_select_empty_tag_matches_only_untagged_tools() -> None:
    assert _names(select_tools(TOOLS, include=Rule(tags=[""]))) == ["cow_say"]


def test_select_include_then_exclude_combine() -> None:
    kept = select_tools(TOOLS, include=Rule(tools=["^cow"]), exclude=Rule(tools=["^cow_think"]))
    assert _names(kept) == ["cow_say"]


def test_select_empty_rules_change_nothing() -> None:
    assert select_tools(TOOLS, include=Rule(), exclude=Rule()) == select_tools(TOOLS)


def test_select_invalid_pattern_names_the_pattern() -> None:
    with pytest.raises(ToolSelectionError) as caught:
        select_tools(TOOLS, include=Rule(tools=["("]))
    assert 'invalid tool filter pattern "("' in str(caught.value)
