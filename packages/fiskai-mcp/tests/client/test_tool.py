"""An imported tool on the one call path: its gate line, its tags from annotations, its refusal of broken calls."""

from typing import Literal

import pytest
from pydantic import JsonValue

from fiskai_core.approvals import parse_rule
from fiskai_core.calls import Refusal, ToolCall, prepare_call, run_call
from fiskai_core.tools import TAG_CONFIRM, TAG_IDEMPOTENT, ToolArguments, ToolResult, parse_arguments
from fiskai_mcp.client import McpTool, gate_argv, needs_confirmation, tool_tags

pytestmark = pytest.mark.anyio


def _tool(tags: tuple[str, ...] = (TAG_CONFIRM,)) -> tuple[McpTool, list[tuple[str, str]]]:
    sent: list[tuple[str, str]] = []

    async def caller(name: str, arguments: ToolArguments) -> ToolResult:
        sent.append((name, arguments.json()))
        return ToolResult(output="done")

    schema: dict[str, JsonValue] = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    tool = McpTool(
        name="fs_write_file",
        remote_name="write_file",
        server="filesystem",
        description="Write",
        input_schema=schema,
        tags=tags,
        caller=caller,
    )
    return tool, sent


def test_gate_argv_is_one_json_path_token_per_value_with_arrays_repeating_their_path() -> None:
    arguments = parse_arguments(
        '{"path": "/tmp/a", "edits": [{"oldText": "a", "newText": "b"}], "n": 1, "dry": false, "tags": []}'
    )
    assert gate_argv("fs_edit_file", arguments.values) == (
        "fs_edit_file",
        "--path=/tmp/a",
        "--edits.oldText=a",
        "--edits.newText=b",
        "--n=1",
        "--dry=false",
        "--tags=[]",
    )


def test_gate_argv_escapes_key_characters_so_no_key_poses_as_a_path_or_value() -> None:
    assert gate_argv("t", {"a.b": "x", "c=d": "y"}) == ("t", "--a%2Eb=x", "--c%3Dd=y")


@pytest.mark.parametrize(
    ("confirm", "read_only", "destructive", "asks"),
    [
        ("destructive", True, None, False),
        ("destructive", True, True, True),
        ("destructive", None, None, True),
        ("destructive", False, False, True),
        ("all", True, None, True),
        ("none", None, True, False),
    ],
)
def test_confirm_mode_and_annotations_decide_who_asks(
    confirm: Literal["all", "destructive", "none"], read_only: bool | None, destructive: bool | None, asks: bool
) -> None:
    assert needs_confirmation(confirm, read_only=read_only, destructive=destructive) is asks


def test_only_idempotent_hint_marks_a_tool_safe_to_resend_after_a_crash() -> None:
    assert tool_tags("none", read_only=True, destructive=None, idempotent=None) == ()
    assert tool_tags("destructive", read_only=None, destructive=None, idempotent=True) == (TAG_CONFIRM, TAG_IDEMPOTENT)


async def test_prepared_call_is_gated_and_rules_match_on_json_paths() -> None:
    tool, sent = _tool()
    call = prepare_call(tool, '{"path": "/tmp/notes/a.txt", "content": "hi"}')
    assert isinstance(call, ToolCall)
    assert call.gate_tag == TAG_CONFIRM
    assert call.gate_argv == ("fs_write_file", "--path=/tmp/notes/a.txt", "--content=hi")
    assert call.display == "fs_write_file --path=/tmp/notes/a.txt --content=hi"
    rule = parse_rule("fs_write_file --path=/tmp/notes/* ...", tags=tool.tags)
    assert rule.matches(name=call.name, tags=tool.tags, argv=call.gate_argv)
    elsewhere = prepare_call(tool, '{"path": "/etc/passwd", "content": "hi"}')
    assert isinstance(elsewhere, ToolCall)
    assert not rule.matches(name=elsewhere.name, tags=tool.tags, argv=elsewhere.gate_argv)
    assert (await run_call(call)).output == "done"
    assert sent == [("write_file", '{"path":"/tmp/notes/a.txt","content":"hi"}')]


def test_missing_required_argument_is_refused_before_any_gate() -> None:
    tool, sent = _tool()
    refusal = prepare_call(tool, '{"content": "hi"}')
    assert isinstance(refusal, Refusal)
    assert refusal.kind == "missing"
    assert refusal.missing == ("path",)
    assert sent == []
