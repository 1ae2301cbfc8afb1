"""prepare_call: the model's arguments decoded once, anything but an object refused, the tool's own plan."""

from __future__ import annotations

from pathlib import Path

import pytest

from fiskai_core.builtins import KnowledgeSearchTool
from fiskai_core.calls import Refusal, ToolCall, prepare_call
from fiskai_core.confirm import argv_digest
from fiskai_core.exec.running import CommandTool, command_tools
from fiskai_core.fisk import load_application
from fiskai_core.testing import DecodeCounter, FakeSearcher, FakeTool, write_fake_app
from fiskai_core.tools import Tool, parse_arguments


@pytest.fixture(scope="module")
def drain(captured_fixtures: Path, tmp_path_factory: pytest.TempPathFactory) -> CommandTool:
    model = captured_fixtures / "fisk" / "with-schemas" / "fixturectl.introspect.json"
    application = load_application(str(write_fake_app(tmp_path_factory.mktemp("app"), model)))
    return next(tool for tool in command_tools(application) if tool.name == "cluster_node_drain")


@pytest.mark.parametrize("encoded", [False, True])
def test_text_arguments_are_decoded_exactly_once(
    drain: CommandTool, monkeypatch: pytest.MonkeyPatch, encoded: bool
) -> None:
    # Required parameters, the schema, the argv, the display lines and the digest all use that one decode.
    text = '{"node": "n-7f3a", "reason": "maintenance", "grace": "1.50s"}'
    decodes = DecodeCounter(monkeypatch.setattr, b"n-7f3a")
    call = prepare_call(drain, text.encode() if encoded else text)
    assert isinstance(call, ToolCall)
    assert call.argv is not None and call.argv[-1] == "n-7f3a"
    assert decodes.seen == ["parse_arguments"]


def test_refused_text_is_decoded_once_too(drain: CommandTool, monkeypatch: pytest.MonkeyPatch) -> None:
    decodes = DecodeCounter(monkeypatch.setattr, b"n-7f3a")
    refusal = prepare_call(drain, '{"node": "n-7f3a"}')
    assert isinstance(refusal, Refusal) and refusal.kind == "missing" and refusal.missing == ("reason",)
    assert decodes.seen == ["parse_arguments"]


def test_arguments_already_decoded_are_not_decoded_again(drain: CommandTool, monkeypatch: pytest.MonkeyPatch) -> None:
    arguments = parse_arguments('{"node": "n-7f3a", "reason": "r"}')
    decodes = DecodeCounter(monkeypatch.setattr, b"n-7f3a")
    assert isinstance(prepare_call(drain, arguments), ToolCall)
    assert decodes.seen == []


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ("null", 'arguments for tool "note" must be a JSON object, got null; nothing was run'),
        (" null ", 'arguments for tool "note" must be a JSON object, got null; nothing was run'),
        ("[]", "invalid JSON arguments: json: cannot unmarshal array into Go value of type map[string]interface {}"),
        ('"{}"', "invalid JSON arguments: json: cannot unmarshal string into Go value of type map[string]interface {}"),
        ("3", "invalid JSON arguments: json: cannot unmarshal number into Go value of type map[string]interface {}"),
        ("true", "invalid JSON arguments: json: cannot unmarshal bool into Go value of type map[string]interface {}"),
        ("{", "invalid JSON arguments: unexpected EOF"),
    ],
)
def test_anything_but_an_object_is_refused_and_the_tool_is_never_asked(arguments: str, message: str) -> None:
    tool = FakeTool(name="note")
    refusal = prepare_call(tool, arguments)
    assert isinstance(refusal, Refusal)
    assert (refusal.kind, refusal.result.is_error, refusal.result.text) == ("invalid", True, message)
    assert tool.calls == []


@pytest.mark.parametrize("arguments", [None, "", b"", "{}", " {} ", b"{}"])
def test_no_arguments_are_an_empty_object(arguments: str | bytes | None) -> None:
    call = prepare_call(FakeTool(name="note"), arguments)
    assert isinstance(call, ToolCall)
    assert call.plan.arguments.json() == "{}" and not call.plan.arguments.null


def test_the_digest_and_the_gate_tag_are_decided_once_from_the_plan(drain: CommandTool) -> None:
    call = prepare_call(drain, '{"node": "n1", "reason": "r"}')
    assert isinstance(call, ToolCall)
    assert call.gate_tag == "ai:confirm"
    assert call.digest == argv_digest(call.gate_argv)
    assert call.display_short == call.display == "cluster node drain --reason=r -- n1"
    tagged = prepare_call(FakeTool(name="t", tags=["impact:rw"]), "{}", confirm_tags=["impact:rw"])
    untagged = prepare_call(FakeTool(name="t", tags=["impact:ro"]), "{}", confirm_tags=["impact:rw"])
    assert isinstance(tagged, ToolCall) and isinstance(untagged, ToolCall)
    assert (tagged.gate_tag, untagged.gate_tag) == ("impact:rw", None)


def test_a_built_in_plan_runs_no_command_and_shows_its_query() -> None:
    tool: Tool = KnowledgeSearchTool(FakeSearcher(), max_injected_tokens=10)
    call = prepare_call(tool, '{"query": "streams \\u001b[2J"}')
    assert isinstance(call, ToolCall)
    assert call.argv is None and call.gate_tag is None
    assert call.display == 'knowledge_search("streams")'
    assert call.gate_argv == ("knowledge_search", '{"query":"streams \\u001b[2J"}')
