"""The run line UI: what reaches stdout and stderr for each event, sanitized."""

from __future__ import annotations

import io

from typing_extensions import override

from fiskai_agent import RunStats
from fiskai_agent.events import Advisory, ResumeInfo, RunInfo, ToolResultTrace, ToolTrace
from fiskai_agent.llm import Message, ProviderBlock, Response, TextBlock, ThinkingBlock, ToolUseBlock, Usage
from fiskai_cli.ui.line_events import LineEvents, fold_result
from fiskai_cli.ui.line_stats import go_duration, stats_line
from fiskai_core.confirm import GateChannel, GateDecision


class _Tty(io.StringIO):
    @override
    def isatty(self) -> bool:
        return True


def _events(*, verbose: bool = False, answer_to_stdout: bool = True) -> tuple[LineEvents, io.StringIO, io.StringIO]:
    out, err = io.StringIO(), io.StringIO()
    return LineEvents(stdout=out, stderr=err, verbose=verbose, answer_to_stdout=answer_to_stdout), out, err


def _response(*blocks: TextBlock | ThinkingBlock | ToolUseBlock | ProviderBlock, stop: str = "end_turn") -> Response:
    return Response(message=Message(role="assistant", content=blocks), stop_reason=stop, usage=Usage())


def _info(**changes: object) -> RunInfo:
    fields: dict[str, object] = {
        "model": "claude-sonnet-4-6",
        "provider": "anthropic",
        "app_tools": 11,
        "total_tools": 11,
        "deferred_tools": 9,
        "thinking": False,
        "tool_search": True,
        "prompt_cache": True,
        "capabilities_note": "",
        "confirm_tools": 2,
        "confirm_tags": ("impact:rw",),
        "session_id": None,
        "resumed": False,
        "new_session": False,
        "no_application": False,
    }
    fields.update(changes)
    return RunInfo(**fields)  # pyright: ignore[reportArgumentType]


def test_final_answer_goes_to_stdout_alone_and_narration_to_stderr() -> None:
    events, out, err = _events()
    events.message(_response(ThinkingBlock("plan it"), TextBlock("Looking."), stop="tool_use"), terminal=False)
    events.message(_response(TextBlock("The answer.")), terminal=True)

    assert out.getvalue() == "The answer.\n"
    assert err.getvalue() == "\N{THOUGHT BALLOON} plan it\nLooking.\n"
    assert events.answer_printed


def test_json_mode_keeps_the_answer_off_stdout() -> None:
    events, out, err = _events(answer_to_stdout=False)
    events.message(_response(TextBlock("The answer.")), terminal=True)

    assert out.getvalue() == ""
    assert err.getvalue() == ""
    assert not events.answer_printed


def test_truncated_reply_is_not_printed_as_an_answer() -> None:
    events, out, err = _events()
    events.message(_response(TextBlock("half an ans"), stop="max_tokens"), terminal=True)

    assert out.getvalue() == ""
    assert "half an ans" in err.getvalue()


def test_model_text_is_stripped_of_escape_sequences_everywhere() -> None:
    events, out, err = _events()
    hostile = "ok\x1b]0;pwned\x07\x1b[2J done"
    events.message(_response(ThinkingBlock(hostile), TextBlock(hostile), stop="tool_use"), terminal=False)
    events.message(_response(TextBlock(hostile)), terminal=True)
    events.warn(Advisory(kind="unknown_tool", message=f"model called unknown tool {hostile!r}"))
    events.tool_call(
        ToolTrace(
            tool_use_id="t",
            name="x",
            display=hostile,
            display_short=hostile,
            presentation="command",
            kind="application",
        )
    )
    events.tool_result(
        ToolResultTrace(
            tool_use_id="t", name="x", presentation="command", kind="application", output=hostile, is_error=False
        )
    )

    assert "\x1b" not in out.getvalue() + err.getvalue()
    assert "\x07" not in out.getvalue() + err.getvalue()
    assert out.getvalue() == "ok done\n"


def test_terminal_answer_is_rendered_markdown_without_markup_or_links() -> None:
    out, err = _Tty(), io.StringIO()
    events = LineEvents(stdout=out, stderr=err)
    events.message(_response(TextBlock("# Title\n\n[red]x[/red] [link](http://evil)")), terminal=True)

    shown = out.getvalue()
    assert "Title" in shown
    assert "# Title" not in shown
    assert "[red]x[/red]" in shown
    assert "\x1b]8;" not in shown


def test_tool_results_fold_to_one_line_unless_verbose() -> None:
    output = "fixturectl was called with 2 argument(s):\n  [cluster]\n  [list]\n"
    trace = ToolResultTrace(
        tool_use_id="t",
        name="cluster_node_list",
        presentation="command",
        kind="application",
        output=output,
        is_error=False,
        exit_code=0,
    )
    folded, _, folded_err = _events()
    folded.tool_result(trace)
    verbose, _, verbose_err = _events(verbose=True)
    verbose.tool_result(trace)

    assert folded_err.getvalue() == "<- exit 0, 3 lines: fixturectl was called with 2 argument(s): [cluster] [list]\n"
    assert (
        verbose_err.getvalue()
        == "<- (exit 0)\n   fixturectl was called with 2 argument(s):\n     [cluster]\n     [list]\n"
    )


def test_traced_and_self_rendered_tools_show_only_when_verbose() -> None:
    quiet, _, quiet_err = _events()
    loud, _, loud_err = _events(verbose=True)
    for events in (quiet, loud):
        events.tool_call(
            ToolTrace(
                tool_use_id="t",
                name="ask_human_confirm",
                display="",
                display_short="",
                presentation="self_rendered",
                kind="builtin",
            )
        )
        events.tool_result(
            ToolResultTrace(
                tool_use_id="t", name="memory_read", presentation="traced", kind="builtin", output="{}", is_error=False
            )
        )

    assert quiet_err.getvalue() == ""
    assert loud_err.getvalue() == "-> ask_human_confirm\n<-\n   {}\n"


def test_server_tool_search_is_shown_only_when_verbose() -> None:
    search = ProviderBlock(
        kind="server_tool_use", raw={"type": "server_tool_use", "id": "s", "input": {"query": "drain \x1b[2Ja node"}}
    )
    found = ProviderBlock(
        kind="tool_search_tool_result",
        raw={
            "type": "tool_search_tool_result",
            "content": {"tool_references": [{"type": "tool_reference", "tool_name": "cluster_node_drain"}]},
        },
    )
    quiet, _, quiet_err = _events()
    loud, _, loud_err = _events(verbose=True)
    for events in (quiet, loud):
        events.message(_response(search, found, stop="pause_turn"), terminal=False)

    assert quiet_err.getvalue() == ""
    assert loud_err.getvalue() == ".. tool search: drain a node\n.. tool search loaded: cluster_node_drain\n"


def test_remote_calls_name_their_agent() -> None:
    events, _, err = _events()
    events.tool_call(
        ToolTrace(
            tool_use_id="t",
            name="peer_status",
            display="",
            display_short="",
            presentation="remote",
            kind="remote",
            agent="ops",
        )
    )
    assert err.getvalue() == "-> peer_status (remote ops)\n"


def test_start_lines_quiet_and_verbose() -> None:
    quiet, _, quiet_err = _events()
    quiet.starting(_info(session_id="run-1", new_session=True, capabilities_note="reduced"))
    loud, _, loud_err = _events(verbose=True)
    loud.starting(_info(capabilities_note="model qwen3 behind http://localhost:11434"))

    assert quiet_err.getvalue() == 'checkpointing session "run-1"\n'
    assert loud_err.getvalue().splitlines() == [
        "Running agent with 11 tools, thinking disabled",
        "confirmation gating: ai:confirm (always), impact:rw (config) -> 2 tool(s) gated",
        "model claude-sonnet-4-6 via anthropic: tool search on (9 of 11 tools deferred), prompt cache on, "
        "thinking off (model qwen3 behind http://localhost:11434)",
    ]


def test_resume_lines_report_pending_calls_and_forced_changes() -> None:
    events, _, err = _events()
    events.resumed(
        ResumeInfo(run_id="r1", messages=(), next_iteration=2, pending_calls=1, forced_changes=("model: a -> b",))
    )
    assert err.getvalue().splitlines() == [
        # Counted as `fiskai session show` counts ("Next iter", from 0), so the two agree on the same session.
        'resuming session "r1" at iteration 2 (0 message(s) restored, 1 tool call(s) of the last turn still to run)',
        "warning: resuming despite a configuration change (--force): model: a -> b",
    ]


def test_command_tool_results_show_the_commands_own_output() -> None:
    envelope = '{"command":"cluster node list","exit_code":3,"output":"line one\\nline two\\n"}'
    trace = ToolResultTrace(
        tool_use_id="t",
        name="cluster_node_list",
        presentation="command",
        kind="application",
        output=envelope,
        is_error=True,
    )
    folded, _, folded_err = _events()
    folded.tool_result(trace)
    verbose, _, verbose_err = _events(verbose=True)
    verbose.tool_result(trace)

    assert folded_err.getvalue() == "<- error (exit 3), 2 lines: line one line two\n"
    assert verbose_err.getvalue() == "<- error (exit 3)\n   line one\n   line two\n"


def test_fold_result_shapes() -> None:
    assert fold_result("", is_error=False, exit_code=0) == "exit 0: (no output)"
    assert fold_result("boom\n", is_error=True, exit_code=2) == "error (exit 2): boom"
    assert fold_result('{"allowed":false}', is_error=False, exit_code=None) == '{"allowed":false}'
    assert fold_result("x" * 300, is_error=False, exit_code=None).endswith("\N{HORIZONTAL ELLIPSIS}")


def test_stats_line_matches_the_reference_layout() -> None:
    stats = RunStats(
        model="m",
        session_id="s1",
        llm_calls=3,
        tool_calls=2,
        remote_tool_calls=1,
        input_tokens=100,
        output_tokens=20,
        cache_read_tokens=50,
        cache_create_tokens=7,
        elapsed=1.2341,
    )
    assert stats_line(stats) == (
        "Run summary: session=s1 model=m llm_calls=3 tool_calls=2 remote_tool_calls=1 tokens=100/20 cached=50 latency=1.234s"
    )
    stats.suspended = True
    assert stats_line(stats, verbose=True).startswith("Run suspended: ")
    assert " cache_write=7 " in stats_line(stats, verbose=True)


def test_go_duration() -> None:
    assert [go_duration(s) for s in (0, 0.0004, 0.85, 2.5, 63.2071, 3723.0)] == [
        "0s",
        "0s",
        "850ms",
        "2.5s",
        "1m3.207s",
        "1h2m3s",
    ]


def _gated(channel: GateChannel, rule: str | None, *, allowed: bool = True) -> ToolTrace:
    decision = GateDecision(
        allowed=allowed, reason="", channel=channel, tag="ai:confirm", digest="d" * 64, display="x", rule=rule
    )
    line = "/bin/fixturectl cluster node drain --reason=disk -- n3"
    return ToolTrace(
        tool_use_id="t",
        name="cluster_node_drain",
        display=line,
        display_short=line,
        presentation="command",
        kind="application",
        gate=decision,
    )


def test_a_call_a_standing_approval_let_run_names_it_under_the_command_line() -> None:
    events, _, err = _events()
    events.tool_call(_gated("rule", "cluster_node_drain '--reason=*' '@1=n*'"))
    events.tool_call(_gated("session", "session: cluster_node_drain ..."))
    events.tool_call(_gated("prompt", None))  # the operator just answered: nothing to add
    events.tool_call(_gated("rule", "cluster_node_drain '@1=n\x1b[2J*'"))  # a rule is shown, never obeyed
    assert err.getvalue().splitlines()[1::2][:2] == [
        "   approved by rule \"cluster_node_drain '--reason=*' '@1=n*'\"",
        "   approved for this session (cluster_node_drain ...)",
    ]
    assert err.getvalue().count("approved") == 3 and "\x1b" not in err.getvalue()


def test_a_resumed_chat_replays_its_conversation_and_a_rotation_names_both_sessions() -> None:
    events, _, err = _events()
    messages = (
        Message(role="user", content=(TextBlock(text="hello"),)),
        Message(role="assistant", content=(TextBlock(text="checking"), ToolUseBlock(id="t", name="ls", input={}))),
        Message(role="assistant", content=(TextBlock(text="all fine"),)),
    )
    events.resumed(
        ResumeInfo(
            run_id="c", messages=messages, next_iteration=2, pending_calls=0, forced_changes=(), interactive=True
        )
    )
    events.session_rotated("c", "d")
    assert err.getvalue().splitlines()[1:] == [
        "> hello",
        "checking",
        "-> ls",
        "all fine",
        "--- continuing ---",
        "previous session saved; resume with: fiskai run --resume c",
        'checkpointing session "d"',
    ]


def test_tool_output_full_prints_the_whole_result_and_none_prints_nothing() -> None:
    trace = ToolResultTrace(
        tool_use_id="t", name="ls", presentation="command", kind="application", output="a\nb\n", is_error=False
    )
    outputs: dict[str, str] = {}
    for mode in ("folded", "full", "none"):
        err = io.StringIO()
        LineEvents(stdout=io.StringIO(), stderr=err, tool_output=mode).tool_result(trace)
        outputs[mode] = err.getvalue()
    assert outputs["full"] == "<-\n   a\n   b\n"
    assert outputs["folded"].count("\n") == 1 and outputs["folded"].startswith("<- ")
    assert outputs["none"] == ""
