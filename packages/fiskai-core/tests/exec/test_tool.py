"""CommandTool's capability Protocols and the tool-source seam, over the real fixturectl model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from fiskai_core.errors import ArgumentsError
from fiskai_core.exec import SourceCommand, ToolSource
from fiskai_core.exec.running import CommandTool, command_tools
from fiskai_core.fisk import Application, load_application
from fiskai_core.testing import write_fake_app
from fiskai_core.tools import ArgumentValidator, Confirmable, Tool

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def application(captured_fixtures: Path, tmp_path_factory: pytest.TempPathFactory) -> Application:
    model = captured_fixtures / "fisk" / "with-schemas" / "fixturectl.introspect.json"
    return load_application(str(write_fake_app(tmp_path_factory.mktemp("app"), model)), global_flags=["output"])


def _tool(application: Application, name: str) -> CommandTool:
    return next(tool for tool in command_tools(application) if tool.name == name)


def test_a_fisk_application_is_a_tool_source_and_its_tools_have_every_capability(application: Application) -> None:
    source: ToolSource = application  # the seam, checked statically by pyright
    commands: list[SourceCommand] = list(source.selected)
    tool = _tool(application, "cluster_node_drain")
    as_tool: Tool = tool
    assert commands and as_tool.name == "cluster_node_drain"
    assert isinstance(tool, Confirmable)
    assert isinstance(tool, ArgumentValidator)


def test_command_argv_is_exactly_what_execute_runs_binary_first(application: Application) -> None:
    tool = _tool(application, "cluster_node_drain")
    argv = tool.command_argv('{"node": "-rf", "grace": "5s", "reason": "x y", "output": "json"}')
    assert argv == [
        application.path,
        *("cluster", "node", "drain", "--output=json", "--reason=x y", "--grace=5s", "--", "-rf"),
    ]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ("{", r'^building command line for "cluster node drain": invalid JSON arguments: unexpected EOF$'),
        ('{"bogus": 1}', r'property "bogus": not an accepted parameter'),
        ('{"node": "a\\u0000b", "reason": "r"}', r"NUL byte"),
        ('{"force": "yes"}', r'property "force": expected boolean'),
    ],
)
def test_command_argv_raises_what_execute_would_report(application: Application, arguments: str, message: str) -> None:
    tool = _tool(application, "cluster_node_drain")
    with pytest.raises(ArgumentsError, match=message):
        tool.command_argv(arguments)


async def test_execute_reports_the_same_text_command_argv_raises(application: Application) -> None:
    tool = _tool(application, "cluster_node_drain")
    with pytest.raises(ArgumentsError) as caught:
        tool.command_argv('{"node": "a\\u0000b", "reason": "r"}')
    result = await tool.execute('{"node": "a\\u0000b", "reason": "r"}')
    assert result.is_error
    assert result.text == str(caught.value)


@pytest.mark.parametrize(
    ("arguments", "missing"),
    [
        (None, ["node", "reason"]),
        ("null", ["node", "reason"]),
        ('{"node": null, "reason": ""}', []),
        ('{"grace": "1s", "reason": false}', ["node"]),
        ("[1]", []),
        ('{"grace": "1s"} trailing', []),
    ],
)
def test_missing_required_follows_fisk_ai_presence_rules(
    application: Application, arguments: str | None, missing: list[str]
) -> None:
    assert _tool(application, "cluster_node_drain").missing_required(arguments) == missing


_values = st.one_of(
    st.text(),
    st.integers(),
    st.booleans(),
    st.none(),
    st.lists(st.text(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.text(), max_size=3),
)


@settings(max_examples=300, deadline=None)
@given(
    values=st.dictionaries(
        st.sampled_from(["str", "int", "strs", "label", "hint", "bool", "output", "enum", "url"]), _values, max_size=6
    )
)
def test_no_model_supplied_value_ever_becomes_an_option_through_a_tool(
    application: Application, values: dict[str, object]
) -> None:
    # The attack's property (issue 9), now through the tool entry: decode, schema check, globals, argv.
    tool = _tool(application, "types")
    properties = tool.input_schema["properties"]
    assert isinstance(properties, dict)
    declared = set(properties)
    try:
        argv = tool.command_argv(json.dumps(values))
    except ArgumentsError:
        return
    assert argv[:2] == [application.path, "types"]
    for token in argv[2:]:
        if token == "--":
            break
        name, sep, _ = token.removeprefix("--").partition("=")
        # One whole option per token, naming a declared property; a value never starts its own token.
        assert token.startswith("--")
        assert name in declared or (not sep and name.removeprefix("no-") in declared)
