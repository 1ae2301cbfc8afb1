"""The tool finder's index and query rules, and the `find_tools` harness tool."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest
from pydantic import JsonValue

from fiskai_core.builtins import FIND_TOOLS, FindToolsAnswer, FindToolsTool, found_tool_names, not_loaded_result
from fiskai_core.calls import Refusal, ToolCall, prepare_call
from fiskai_core.testing import FakeTool, call_tool
from fiskai_core.tools import TAG_IDEMPOTENT, ToolFinder, parse_arguments


def _tool(
    name: str, description: str, *, tags: Sequence[str] = (), arguments: dict[str, str] | None = None
) -> FakeTool:
    properties: dict[str, JsonValue] = {
        arg: {"type": "string", "description": text} for arg, text in (arguments or {}).items()
    }
    return FakeTool(
        name=name, description=description, tags=tags, input_schema={"type": "object", "properties": properties}
    )


def _names(finder: ToolFinder, query: str, limit: int = 5) -> list[str]:
    return [match.name for match in finder.find(query, limit=limit)]


_WIDGETS = [
    _tool("widget_rm", "Removes a widget\n\nTags: impact:rw", tags=["impact:rw"]),
    _tool("widget_ls", "List known widgets\n\nTags: impact:ro", tags=["impact:ro"]),
    _tool("widget_add", "Creates a new widget"),
    _tool("gadget_info", "Gadget information", arguments={"gadget": "The gadget to describe"}),
    _tool("account_backup", "Creates a backup of all widgets"),
    _tool("report_cpu", "Report on CPU usage", arguments={"sort": "Sort by the number of sprockets"}),
]


def test_inflected_words_meet_their_stem() -> None:
    finder = ToolFinder(_WIDGETS)
    assert _names(finder, "removing widgets", limit=1) == ["widget_rm"]
    assert _names(finder, "created widget", limit=1) == ["widget_add"]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("delete a widget", "widget_rm"),
        ("show me the widgets", "widget_ls"),
        ("make a widget", "widget_add"),
        ("describe a gadget", "gadget_info"),
        ("back up the widgets", "account_backup"),
    ],
)
def test_cli_synonyms_and_joined_words_reach_the_tool(query: str, expected: str) -> None:
    assert _names(ToolFinder(_WIDGETS), query, limit=1) == [expected]


def test_case_folding_covers_any_script() -> None:
    finder = ToolFinder(
        [_tool("eintrag_rm", "Löscht einen Eintrag aus der Straße"), _tool("widget_ls", "List widgets")]
    )
    assert _names(finder, "LÖSCHT STRASSE") == ["eintrag_rm"]


def test_the_operators_own_word_beats_a_synonym() -> None:
    finder = ToolFinder([_tool("thing_remove", "Remove a thing"), _tool("thing_delete", "Delete a thing")])
    assert _names(finder, "delete thing") == ["thing_delete", "thing_remove"]
    assert _names(finder, "remove thing") == ["thing_remove", "thing_delete"]


def test_argument_names_descriptions_and_tags_are_searched() -> None:
    finder = ToolFinder(_WIDGETS)
    assert _names(finder, "sprockets") == ["report_cpu"]
    assert "widget_ls" in _names(finder, "impact ro")


def test_equal_scores_are_ordered_by_name_whatever_the_input_order() -> None:
    tools = [_tool("zeta_one", "Frobnicate the flux"), _tool("alpha_one", "Frobnicate the flux")]
    assert _names(ToolFinder(tools), "frobnicate flux") == ["alpha_one", "zeta_one"]
    assert _names(ToolFinder(tools[::-1]), "frobnicate flux") == ["alpha_one", "zeta_one"]


@pytest.mark.parametrize("query", ["", "   ", "the of a to", "zzzz quux", "???"])
def test_queries_with_nothing_to_match_find_nothing(query: str) -> None:
    assert ToolFinder(_WIDGETS).find(query) == []


def test_limit_caps_the_list_and_must_be_positive() -> None:
    finder = ToolFinder(_WIDGETS)
    assert len(finder.find("widget", limit=2)) == 2
    with pytest.raises(ValueError, match="limit must be at least 1"):
        finder.find("widget", limit=0)


def test_summary_is_the_first_line_without_the_tags_line() -> None:
    tools = [
        _tool("node_list", "List nodes\n\nShows every node.\n\nTags: impact:ro", tags=["impact:ro"]),
        _tool("only_tags", "Tags: impact:ro", tags=["impact:ro"]),
        _tool("long_one", "Widget " + "x" * 300),
        _tool("untagged", "Plain help\n\nTags: is part of the help here"),
    ]
    finder = ToolFinder(tools)
    summaries = {match.name: match.summary for match in finder.find("node impact ro widget plain", limit=10)}
    assert summaries["node_list"] == "List nodes"
    assert summaries["only_tags"] == ""
    assert summaries["untagged"] == "Plain help"
    assert len(summaries["long_one"]) == 200
    assert summaries["long_one"].endswith("\u2026")


def test_duplicate_names_are_refused() -> None:
    with pytest.raises(ValueError, match="duplicated: twin"):
        ToolFinder([_tool("twin", "One"), _tool("twin", "Two")])


def test_an_empty_tool_set_finds_nothing() -> None:
    finder = ToolFinder([])
    assert len(finder) == 0
    assert finder.find("anything") == []


def test_find_tools_definition_tells_the_model_to_search_first() -> None:
    tool = FindToolsTool(ToolFinder(_WIDGETS))
    assert tool.name == FIND_TOOLS == "find_tools"
    assert tool.tags == (TAG_IDEMPOTENT,)  # a search has no effect: safe to repeat after a crash
    assert "before you call a tool that is not in your list" in tool.description.lower()
    schema = json.loads(json.dumps(tool.input_schema))
    assert schema["required"] == ["query"]
    assert schema["additionalProperties"] is False
    properties = schema["properties"]
    assert properties["query"]["type"] == "string"
    assert {key: properties["limit"][key] for key in ("type", "minimum", "maximum")} == {
        "type": "integer",
        "minimum": 1,
        "maximum": 20,
    }
    assert set(properties) == {"query", "limit"}


def test_find_tools_system_note_counts_the_tools_behind_the_search() -> None:
    note = FindToolsTool(ToolFinder(_WIDGETS)).system_note
    assert f"{len(_WIDGETS)} more are available through the find_tools tool" in note


def _find(tool: FindToolsTool, arguments: str | bytes | None) -> FindToolsAnswer:
    return tool.find(parse_arguments(arguments))


def test_find_tools_answers_with_names_and_one_line_descriptions() -> None:
    answer = _find(FindToolsTool(ToolFinder(_WIDGETS)), '{"query": "delete a widget", "limit": 2}')
    assert not answer.result.is_error
    body = json.loads(answer.result.text)
    assert body["tools"][0] == {"name": "widget_rm", "description": "Removes a widget"}
    assert len(body["tools"]) == 2
    assert answer.found == tuple(entry["name"] for entry in body["tools"])
    assert found_tool_names(answer.result.text) == answer.found


def test_find_tools_defaults_to_five_and_accepts_a_whole_float_limit() -> None:
    tool = FindToolsTool(ToolFinder(_WIDGETS))
    assert len(_find(tool, b'{"query": "widget gadget cpu backup"}').found) == 5
    assert len(_find(tool, '{"query": "widget gadget cpu backup", "limit": null}').found) == 5
    assert len(_find(tool, '{"query": "widget gadget cpu backup", "limit": 3.0}').found) == 3
    assert len(_find(tool, '{"query": "widget gadget cpu backup", "limit": 3e0}').found) == 3


def test_find_tools_with_no_match_is_an_empty_list_with_a_hint_not_an_error() -> None:
    answer = _find(FindToolsTool(ToolFinder(_WIDGETS)), '{"query": "zzzz"}')
    assert not answer.result.is_error
    assert answer.found == ()
    body = json.loads(answer.result.text)
    assert body["tools"] == []
    assert "other words" in body["hint"]


_USAGE = '{"query": "<what you want to do>"}'


@pytest.mark.parametrize(
    ("arguments", "complaint"),
    [
        (None, "needs a query"),
        ("", "needs a query"),
        ("{}", "needs a query"),
        ('{"q": "delete"}', "unknown argument(s) 'q'"),
        ('{"query": 3}', "non-empty string"),
        ('{"query": "   "}', "non-empty string"),
        (json.dumps({"query": "w" * 501}), "too long (501 characters, at most 500)"),
        ('{"query": "widget", "limit": 0}', "integer from 1 to 20"),
        ('{"query": "widget", "limit": 21}', "integer from 1 to 20"),
        ('{"query": "widget", "limit": true}', "integer from 1 to 20"),
        ('{"query": "widget", "limit": "5"}', "integer from 1 to 20"),
        ('{"query": "widget", "limit": 2.5}', "integer from 1 to 20"),
    ],
)
def test_find_tools_malformed_arguments_are_error_results(arguments: str | bytes | None, complaint: str) -> None:
    tool = FindToolsTool(ToolFinder(_WIDGETS))
    answer = _find(tool, arguments)
    assert answer.result.is_error
    assert answer.found == ()
    assert complaint in answer.result.text
    assert _USAGE in answer.result.text
    # The call path refuses the same call before it is answered, with the same words.
    refusal = prepare_call(tool, arguments)
    assert isinstance(refusal, Refusal) and refusal.result == answer.result


def test_a_query_of_500_characters_is_accepted() -> None:
    assert not _find(FindToolsTool(ToolFinder(_WIDGETS)), json.dumps({"query": "w" * 500})).result.is_error


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ("  \n", "invalid JSON arguments: EOF"),
        ("delete a widget", "invalid JSON arguments: invalid character 'd' looking for beginning of value"),
        (b"\xff\xfe", "invalid JSON arguments: invalid character '\u00ff' looking for beginning of value"),
        # No raw-size check any more (the query is capped instead): a deep document is the decoder's to refuse.
        ("[" * 100_000 + "]" * 100_000, "invalid JSON arguments: invalid character '[' exceeded max depth"),
        (
            "[" * 5_000 + "]" * 5_000,
            "invalid JSON arguments: json: cannot unmarshal array into Go value of type map[string]interface {}",
        ),
        (
            '["delete"]',
            "invalid JSON arguments: json: cannot unmarshal array into Go value of type map[string]interface {}",
        ),
        ("null", 'arguments for tool "find_tools" must be a JSON object, got null; nothing was run'),
    ],
)
def test_find_tools_input_that_is_no_object_is_refused_by_the_call_path(arguments: str | bytes, message: str) -> None:
    refusal = prepare_call(FindToolsTool(ToolFinder(_WIDGETS)), arguments)
    assert isinstance(refusal, Refusal)
    assert refusal.result.is_error and refusal.result.text == message


@pytest.mark.anyio
async def test_find_tools_invoked_gives_the_find_result() -> None:
    tool = FindToolsTool(ToolFinder(_WIDGETS))
    arguments = '{"query": "list widgets"}'
    call = prepare_call(tool, arguments)
    assert isinstance(call, ToolCall)
    assert call.display == 'find_tools("list widgets")'
    assert await call_tool(tool, arguments) == _find(tool, arguments).result


@pytest.mark.parametrize(
    "text",
    ["", "not json", "[]", '{"tools": 3}', '{"tools": [3, {"name": 4}]}', '{"other": []}', "[" * 5_000],
)
def test_found_tool_names_of_something_else_is_empty(text: str) -> None:
    assert found_tool_names(text) == ()


def test_found_tool_names_skips_malformed_entries() -> None:
    assert found_tool_names('{"tools": [{"name": "a"}, 7, {"name": null}, {"name": "b"}]}') == ("a", "b")


def test_a_call_to_an_unfound_tool_is_refused_in_band() -> None:
    result = not_loaded_result('stream_rm"\nignore this')
    assert result.is_error
    assert result.text.startswith('tool "stream_rm\\"\\nignore this" is not loaded, so nothing was run')
    assert "find_tools" in result.text
    assert "\n" not in result.text
