"""CommandTool on the call path (plan, then invoke the plan) and the tool-source seam, over the real fixturectl model."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from fiskai_core.calls import Refusal, ToolCall, prepare_call, run_call
from fiskai_core.errors import ArgumentsError, MissingArgumentsError
from fiskai_core.exec import SourceCommand, ToolSource
from fiskai_core.exec.running import EFFECT_ID_ENV, CommandTool, command_tools
from fiskai_core.fisk import Application, load_application
from fiskai_core.testing import write_fake_app
from fiskai_core.tools import CallContext, CallPlan, Tool, parse_arguments

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def application(captured_fixtures: Path, tmp_path_factory: pytest.TempPathFactory) -> Application:
    model = captured_fixtures / "fisk" / "with-schemas" / "fixturectl.introspect.json"
    return load_application(str(write_fake_app(tmp_path_factory.mktemp("app"), model)), global_flags=["output"])


def _tool(application: Application, name: str) -> CommandTool:
    return next(tool for tool in command_tools(application) if tool.name == name)


def _prepared(tool: CommandTool, arguments: str | None) -> ToolCall:
    call = prepare_call(tool, arguments)
    assert isinstance(call, ToolCall), call
    return call


def _calls(application: Application) -> list[str]:
    log = Path(application.path).with_name(Path(application.path).name + ".calls")
    return log.read_text(encoding="utf-8").split("--\n")[:-1] if log.exists() else []


def test_a_fisk_application_is_a_tool_source_and_its_tools_are_tools(application: Application) -> None:
    source: ToolSource = application  # the seam, checked statically by pyright
    commands: list[SourceCommand] = list(source.selected)
    as_tool: Tool = _tool(application, "cluster_node_drain")
    assert commands and as_tool.name == "cluster_node_drain"
    plan = as_tool.plan(parse_arguments('{"node": "n1", "reason": "r"}'))
    assert isinstance(plan, CallPlan) and plan.argv is not None


def test_the_plan_holds_exactly_the_argv_that_runs_binary_first(application: Application) -> None:
    tool = _tool(application, "cluster_node_drain")
    call = _prepared(tool, '{"node": "-rf", "grace": "5s", "reason": "x y", "output": "json"}')
    assert call.argv == (
        application.path,
        *("cluster", "node", "drain", "--output=json", "--reason=x y", "--grace=5s", "--", "-rf"),
    )
    # What the gate approves is that argv, and the digest is of that argv.
    assert call.gate_argv == call.argv
    assert call.gate_tag == "ai:confirm"
    assert call.display == "cluster node drain --output=json --reason=x y --grace=5s -- -rf"


async def test_invoking_the_plan_runs_that_argv_and_nothing_else(application: Application) -> None:
    tool = _tool(application, "cluster_node_drain")
    call = _prepared(tool, '{"node": "-rf", "reason": "x y"}')
    assert call.argv is not None
    before = len(_calls(application))
    result = await run_call(call)
    assert not result.is_error and result.exit_code == 0
    assert result.command == "cluster node drain --reason=x y -- -rf"
    assert _calls(application)[before:] == ["".join(f"[{token}]\n" for token in call.argv[1:])]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        # Decoded before any tool is asked: fisk's decoder words (no longer prefixed with the command).
        ("{", r"^invalid JSON arguments: unexpected EOF$"),
        ('{"node": "n", "reason": "r", "bogus": 1}', r'property "bogus": not an accepted parameter'),
        (
            '{"node": "a\\u0000b", "reason": "r"}',
            r'^building command line for "cluster node drain": a value .*NUL byte',
        ),
        ('{"node": "n", "reason": "r", "force": "yes"}', r'property "force": expected boolean'),
    ],
)
def test_arguments_that_cannot_run_are_refused_before_anything_runs(
    application: Application, arguments: str, message: str
) -> None:
    refusal = prepare_call(_tool(application, "cluster_node_drain"), arguments)
    assert isinstance(refusal, Refusal)
    assert refusal.kind == "invalid"
    assert refusal.result.is_error
    assert re.search(message, refusal.result.text), refusal.result.text


def test_the_refusal_is_the_text_the_plan_raises(application: Application) -> None:
    tool = _tool(application, "cluster_node_drain")
    arguments = '{"node": "a\\u0000b", "reason": "r"}'
    with pytest.raises(ArgumentsError) as caught:
        tool.plan(parse_arguments(arguments))
    refusal = prepare_call(tool, arguments)
    assert isinstance(refusal, Refusal)
    assert refusal.result.output == refusal.result.text == str(caught.value)


@pytest.mark.parametrize(
    ("arguments", "kind", "missing"),
    [
        (None, "missing", ("node", "reason")),
        ("{}", "missing", ("node", "reason")),
        # JSON null is not an object: refused as such, not read as {} (issue 36.9).
        ("null", "invalid", ()),
        # Presence counts, not value: null is not missing (the schema then refuses it as no string).
        ('{"node": null, "reason": ""}', "invalid", ()),
        ('{"grace": "1s", "reason": false}', "missing", ("node",)),
        ("[1]", "invalid", ()),
        # fisk-ai's required check cannot decode trailing data and reports nothing; the schema still does.
        ('{"grace": "1s"} trailing', "invalid", ()),
        ('{"node": "n", "reason": "r"} trailing', None, ()),
    ],
)
def test_required_parameters_follow_fisk_ai_presence_rules(
    application: Application, arguments: str | None, kind: str | None, missing: tuple[str, ...]
) -> None:
    call = prepare_call(_tool(application, "cluster_node_drain"), arguments)
    if kind is None:
        assert isinstance(call, ToolCall)
        return
    assert isinstance(call, Refusal)
    assert (call.kind, call.missing) == (kind, missing)
    if kind == "missing":
        assert call.result.text.startswith('tool "cluster_node_drain" was called without required parameter(s): ')


def test_missing_required_is_checked_before_the_schema(application: Application) -> None:
    tool = _tool(application, "cluster_node_drain")
    with pytest.raises(MissingArgumentsError) as caught:
        tool.plan(parse_arguments('{"force": "yes"}'))
    assert caught.value.missing == ("node", "reason")


async def test_the_effect_id_reaches_the_command_only_when_given(application: Application, tmp_path: Path) -> None:
    script = tmp_path / "print-effect"
    script.write_text(f'#!/bin/sh\necho "${{{EFFECT_ID_ENV}-unset}}"\n', encoding="utf-8")
    script.chmod(0o755)
    tool = dataclasses.replace(_tool(application, "cluster_node_list"), app_path=str(script))
    seen: list[str] = []
    for context in (CallContext(effect_id="run-1/7"), CallContext(), None):
        result = await run_call(_prepared(tool, "{}"), context)
        assert not result.is_error, result.text
        seen.append(result.output.strip())
    assert seen == ["run-1/7", "unset", "unset"]


async def test_a_plan_without_an_argv_is_not_run(application: Application) -> None:
    tool = _tool(application, "cluster_node_list")
    before = len(_calls(application))
    result = await tool.invoke(CallPlan(arguments=parse_arguments("{}"), display="x"), CallContext())
    assert result.is_error
    assert result.text == 'tool "cluster_node_list" was handed a call it did not plan'
    assert len(_calls(application)) == before


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
    # The attack's property (issue 9), now through the call path: decode, schema check, globals, argv.
    tool = _tool(application, "types")
    properties = tool.input_schema["properties"]
    assert isinstance(properties, dict)
    declared = set(properties)
    call = prepare_call(tool, json.dumps(values))
    if isinstance(call, Refusal):
        return
    argv = call.argv
    assert argv is not None
    assert argv[:2] == (application.path, "types")
    for token in argv[2:]:
        if token == "--":
            break
        name, sep, _ = token.removeprefix("--").partition("=")
        # One whole option per token, naming a declared property; a value never starts its own token.
        assert token.startswith("--")
        assert name in declared or (not sep and name.removeprefix("no-") in declared)
