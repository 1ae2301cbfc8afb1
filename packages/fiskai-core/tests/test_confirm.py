"""The confirm gate: fixed check order, deny by default, and a command line that shows exactly what runs."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from fiskai_core.calls import ToolCall, prepare_call
from fiskai_core.confirm import ConfirmGate, argv_digest, render_command_line
from fiskai_core.fisk import load_application
from fiskai_core.fisk.execution import command_tools
from fiskai_core.prompter import ConfirmChoice, DenyPrompter, GateRequest, PromptDeclined
from fiskai_core.testing import FakeTool, ScriptedPrompter

pytestmark = pytest.mark.anyio

FIXTURECTL = Path(__file__).resolve().parents[3] / "examples" / "fixturectl" / "fixturectl"
ARGV = ["/bin/app", "stream", "rm", "--force", "--", "ORDERS"]


async def test_an_untagged_tool_passes_without_asking() -> None:
    prompter = ScriptedPrompter.of()
    decision = await ConfirmGate(prompter).check(name="stream_ls", tags=["impact:ro"], argv=ARGV)
    assert decision.allowed and decision.channel == "ungated" and decision.tag is None
    assert prompter.asked == []


async def test_confirm_tags_gate_like_ai_confirm_and_ai_confirm_wins_as_trigger() -> None:
    gate = ConfirmGate(ScriptedPrompter.of(), confirm_tags=["impact:rw", "audit"])
    assert gate.trigger_tag(["audit", "impact:rw"]) == "audit"
    assert gate.trigger_tag(["impact:rw", "ai:confirm"]) == "ai:confirm"
    assert gate.trigger_tag(["impact:ro"]) is None


async def test_without_a_terminal_a_gated_call_is_denied_without_asking() -> None:
    prompter = ScriptedPrompter.of(ConfirmChoice.ONCE, interactive=False)
    decision = await ConfirmGate(prompter).check(name="stream_rm", tags=["ai:confirm"], argv=ARGV)
    assert not decision.allowed and decision.channel == "no_terminal"
    assert "no interactive terminal" in decision.reason
    assert prompter.asked == []


async def test_deny_prompter_never_allows_a_gated_call() -> None:
    decision = await ConfirmGate(DenyPrompter()).check(name="stream_rm", tags=["ai:confirm"], argv=ARGV)
    assert not decision.allowed


@pytest.mark.parametrize(
    ("answer", "allowed", "reason_part"),
    [
        (ConfirmChoice.NO, False, "declined"),
        (PromptDeclined("end of input"), False, "did not permit this command: end of input"),
        (ConfirmChoice.ONCE, True, ""),
    ],
)
async def test_the_operators_answer_decides_and_no_answer_is_a_denial(
    answer: ConfirmChoice | PromptDeclined, allowed: bool, reason_part: str
) -> None:
    prompter = ScriptedPrompter.of(answer)
    decision = await ConfirmGate(prompter).check(name="stream_rm", tags=["ai:confirm"], argv=ARGV)
    assert decision.allowed is allowed and decision.channel == "prompt"
    assert reason_part in decision.reason
    if not allowed:
        assert decision.reason.endswith("do not retry")
    request = prompter.asked[0]
    assert isinstance(request, GateRequest)
    assert request == GateRequest(command="stream_rm", display=render_command_line(ARGV), tag="ai:confirm")


async def test_once_asks_again_next_time_and_always_remembers_the_tool_with_any_arguments() -> None:
    prompter = ScriptedPrompter.of(ConfirmChoice.ONCE, ConfirmChoice.ALWAYS)
    gate = ConfirmGate(prompter)
    assert (await gate.check(name="rm", tags=["ai:confirm"], argv=ARGV)).allowed
    assert (await gate.check(name="rm", tags=["ai:confirm"], argv=ARGV)).channel == "prompt"
    later = await gate.check(name="rm", tags=["ai:confirm"], argv=[*ARGV, "--other"])
    assert later.allowed and later.channel == "session"
    assert len(prompter.asked) == 2
    other = await gate.check(name="drain", tags=["ai:confirm"], argv=ARGV)
    assert not other.allowed  # a different tool is still asked; the script is exhausted, so denied


async def test_a_denial_is_a_non_error_result_saying_not_to_retry() -> None:
    decision = await ConfirmGate(ScriptedPrompter.of(ConfirmChoice.NO)).check(name="rm", tags=["ai:confirm"], argv=ARGV)
    result = decision.denial_result()
    assert not result.is_error
    assert json.loads(result.text) == {"allowed": False, "reason": decision.reason}


def test_the_digest_names_the_argv_without_holding_it() -> None:
    assert argv_digest(["a", "b c"]) != argv_digest(["a b", "c"])
    assert len(argv_digest(ARGV)) == 64 and "ORDERS" not in argv_digest(ARGV)


def test_a_value_with_spaces_reads_as_one_argument_not_extra_flags() -> None:
    argv = ["/bin/app", "pub", "--subject=orders.x --seq=1 --keep=0"]
    line = render_command_line(argv)
    assert line == "/bin/app pub '--subject=orders.x --seq=1 --keep=0'"
    assert shlex.split(line) == argv


def test_quotes_and_control_characters_cannot_hide_or_fake_arguments() -> None:
    argv = ["app", "--name=it's", "--note=a\nb\x1b[2Jc", "--", "PRODUCTION"]
    line = render_command_line(argv)
    assert "\x1b" not in line and "\n" not in line
    assert line == "app '--name=it'\\''s' $'--note=a\\nb\\x1b[2Jc' -- PRODUCTION"
    assert line.endswith("-- PRODUCTION")


def test_bidi_and_invisible_characters_are_escaped_so_the_line_reads_in_its_real_order() -> None:
    # U+202E would show "n3 --force" as "ecrof-- 3n"; U+200B would hide inside a value; a tag character
    # (U+E0041) is invisible text; each must stand as an escape the operator can read and a shell can run.
    argv = ["app", "--node=n3\u202e --force", "--ns=pro\u200bd", "--note=\U000e0041", "--", "\u2066x\u2069"]
    line = render_command_line(argv)
    assert not any(ch in line for ch in "\u202e\u200b\u2066\u2069\U000e0041")
    assert line == ("app $'--node=n3\\u202e --force' $'--ns=pro\\u200bd' $'--note=\\U000e0041' -- $'\\u2066x\\u2069'")


def test_a_long_value_is_elided_in_the_middle_so_the_target_stays_in_view() -> None:
    argv = ["app", "stream", "rm", "--reason=" + "x" * 2000 + "END", "--", "PRODUCTION"]
    line = render_command_line(argv)
    assert len(line) < 200
    assert line.endswith("-- PRODUCTION")
    assert "<…1,928 more characters…>" in line and "xEND" in line


def test_an_empty_argument_is_shown() -> None:
    assert render_command_line(["app", "--", ""]) == "app -- ''"


async def test_the_gate_sees_the_exact_argv_of_a_real_fisk_command() -> None:
    tools = {tool.name: tool for tool in command_tools(load_application(str(FIXTURECTL)))}
    drain = tools["cluster_node_drain"]
    call = prepare_call(drain, '{"node": "n1 --force", "reason": "maintenance"}', confirm_tags=["impact:rw"])
    assert isinstance(call, ToolCall)
    argv = call.argv
    assert argv is not None and argv[0] == str(FIXTURECTL)
    prompter = ScriptedPrompter.of(ConfirmChoice.NO)
    decision = await ConfirmGate(prompter, confirm_tags=["impact:rw"]).decide(call)
    assert not decision.allowed
    assert decision.digest == call.digest == argv_digest(argv)
    request = prompter.asked[0]
    assert isinstance(request, GateRequest)
    assert shlex.split(request.display) == list(argv)


async def test_a_call_without_an_argv_is_decided_on_its_name_and_canonical_arguments() -> None:
    tool = FakeTool(name="note_add", tags=["ai:confirm"])
    first = prepare_call(tool, '{"b": 1.50, "a": "x"}')
    same = prepare_call(tool, '{"a":"x","b":1.50}')
    other = prepare_call(tool, '{"a": "x", "b": 1.5}')
    assert isinstance(first, ToolCall) and isinstance(same, ToolCall) and isinstance(other, ToolCall)
    assert first.argv is None
    assert first.gate_argv == ("note_add", '{"a":"x","b":1.50}')
    assert first.digest == same.digest != other.digest
    prompter = ScriptedPrompter.of(ConfirmChoice.COMMAND)
    gate = ConfirmGate(prompter)
    assert (await gate.decide(first)).allowed
    # "This exact call for the session" covers the same arguments in any key order, not a different number.
    assert (await gate.decide(same)).channel == "session"
    assert not (await gate.decide(other)).allowed
