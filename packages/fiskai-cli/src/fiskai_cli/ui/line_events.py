"""The line UI of `fiskai run`: the loop's Events drawn as lines on stderr, the answer on stdout.

What goes where (reference 6.8): narration (the model's prose between tool calls), thinking summaries,
tool calls and their folded results, warnings and the stats line all go to stderr; stdout carries only
the final answer, so `fiskai run ... | jq` or `> answer.md` gets nothing else. Markdown is rendered
(rich) only when the destination is a terminal; a pipe or a file gets the model's text as written.

Every string a model or a tool produced is sanitized before it is shown (`fiskai_core.sanitize`): an
escape sequence in an answer could otherwise move the cursor, retitle the window or hide what runs.
Rich markup is never interpreted in such text, and Markdown links are not turned into hyperlinks.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, TextIO, cast

from fiskai_agent.events import Advisory, ResumeInfo, RunInfo, ToolResultTrace, ToolTrace
from fiskai_agent.llm import Message, ProviderBlock, Response, TextBlock, ThinkingBlock, ToolUseBlock
from fiskai_core.sanitize import sanitize_for_display, sanitize_for_terminal

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["LineEvents", "ToolOutput", "approved_by", "restored_lines"]

ToolOutput = Literal["folded", "full", "none"]
"""`--tool-output`: how a tool's result is shown."""

_THOUGHT = "\N{THOUGHT BALLOON}"
# Stop reasons whose text is not a trustworthy final answer: it goes to stderr, never to stdout.
_NOT_AN_ANSWER = frozenset({"max_tokens", "refusal", "model_context_window_exceeded"})
_FOLD_RUNES = 100


class LineEvents:
    """`fiskai_agent.events.Events` for a line-oriented terminal (or none).

    Args:
        verbose: `-v`: start details, request summaries, full tool output, self-rendered tools.
        answer_to_stdout: Print the final answer on stdout (off for `--format json`, which prints it
            inside its object).
        trace_file: Named in the start lines when `--trace` is on.
        stdout: Where the answer goes (tests pass a buffer).
        stderr: Where everything else goes.
        tool_output: `--tool-output`: `folded` (one line each, whole with `-v`), `full` (whole) or `none`.
        color: Render Markdown on a terminal; off (`--no-color`, `NO_COLOR`) prints the text as written.
    """

    def __init__(
        self,
        *,
        verbose: bool = False,
        answer_to_stdout: bool = True,
        trace_file: str = "",
        stdout: TextIO | None = None,
        stderr: TextIO | None = None,
        tool_output: ToolOutput = "folded",
        color: bool = True,
    ) -> None:
        self.verbose = verbose
        self.tool_output: ToolOutput = tool_output
        self.color = color
        self.answer_to_stdout = answer_to_stdout
        self.trace_file = trace_file
        self._out = stdout if stdout is not None else sys.stdout
        self._err = stderr if stderr is not None else sys.stderr
        self._consoles: dict[int, Console] = {}
        self.answer_printed = False
        """Whether a final answer went to stdout (the command then prints nothing more there)."""

    # -- Events -------------------------------------------------------------------------------------

    def warn(self, advisory: Advisory) -> None:
        """`warning: <message>` on stderr."""
        self._line(f"warning: {sanitize_for_terminal(advisory.message)}")

    def starting(self, info: RunInfo) -> None:
        """The start lines: always the facts that change what the operator should expect, more with `-v`."""
        if self.verbose:
            thinking = "enabled" if info.thinking else "disabled"
            self._line(f"Running agent with {info.total_tools} tools, thinking {thinking}")
            tags = "".join(f", {tag} (config)" for tag in info.confirm_tags)
            self._line(f"confirmation gating: ai:confirm (always){tags} -> {info.confirm_tools} tool(s) gated")
            # Without -v a reduced capability arrives as its own `capabilities_reduced` warning.
            self._line(_capabilities_line(info))
        if info.no_application:
            self._line("running without a wrapped application; built-in, remote and MCP server tools only")
        if self.trace_file:
            self._line(f"tracing session to {sanitize_for_terminal(self.trace_file)}")
        if info.new_session and info.session_id:
            self._line(f'checkpointing session "{sanitize_for_terminal(info.session_id)}"')

    def resumed(self, info: ResumeInfo) -> None:
        """What a resumed session brings back."""
        pending = f", {info.pending_calls} tool call(s) of the last turn still to run" if info.pending_calls else ""
        self._line(
            f'resuming session "{sanitize_for_terminal(info.run_id)}" at iteration {info.next_iteration} '
            f"({len(info.messages)} message(s) restored{pending})"
        )
        for change in info.forced_changes:
            self._line(f"warning: resuming despite a configuration change (--force): {sanitize_for_terminal(change)}")
        if info.interactive:
            # A chat goes on where it stopped: the operator sees what was said before typing again.
            for line in restored_lines(info.messages):
                self._line(line)
            self._line("--- continuing ---")

    def session_rotated(self, previous: str, current: str) -> None:
        """`/clear` in a checkpointed chat: the old session stays resumable."""
        self._line(f"previous session saved; resume with: fiskai run --resume {sanitize_for_terminal(previous)}")
        self._line(f'checkpointing session "{sanitize_for_terminal(current)}"')

    def llm_request(self, summary: str) -> None:
        """`.. <summary>` before each model call (verbose runs only emit it)."""
        self._line(f".. {sanitize_for_terminal(summary)}")

    def message(self, response: Response, terminal: bool) -> None:
        """Thinking summaries and narration on stderr; a final answer on stdout."""
        for block in response.message.content:
            if isinstance(block, ThinkingBlock) and block.text.strip():
                self._line(f"{_THOUGHT} {sanitize_for_terminal(block.text, 500)}")
            elif isinstance(block, ProviderBlock) and self.verbose:
                line = _server_tool_line(block)
                if line:
                    self._line(line)
        text = response.message.text.strip()
        if not text:
            return
        if terminal and response.stop_reason not in _NOT_AN_ANSWER:
            if self.answer_to_stdout:
                self._markdown(text, self._out)
                self.answer_printed = True
            return
        self._markdown(text, self._err)

    def tool_call(self, trace: ToolTrace) -> None:
        """`-> <command line>` (remote: `-> <name> (remote <agent>)`; self-rendered tools only with `-v`).

        A gated call nobody was asked about says what approved it on the next line: the persisted rule
        (`   approved by rule "..."`) or an earlier answer that holds for the session.
        """
        if trace.presentation == "self_rendered":
            if self.verbose:
                self._line(f"-> {sanitize_for_terminal(trace.name)}")
            return
        if trace.presentation == "remote":
            agent = sanitize_for_terminal(trace.agent)
            self._line(f"-> {sanitize_for_terminal(trace.name)} (remote {agent})")
        else:
            display = trace.display if self.verbose else trace.display_short
            self._line(f"-> {sanitize_for_terminal(display)}")
        approval = approved_by(trace)
        if approval:
            self._line(f"   {approval}")

    def tool_result(self, trace: ToolResultTrace) -> None:
        """One folded line per result, or the whole output with `-v` or `--tool-output full`, or none.

        Traced and self-rendered tools only with `-v`.
        """
        if self.tool_output == "none" or (trace.presentation in ("traced", "self_rendered") and not self.verbose):
            return
        output, exit_code = command_output(trace.output, trace.exit_code)
        if self.verbose or self.tool_output == "full":
            head = "<- error" if trace.is_error else "<-"
            if exit_code is not None:
                head += f" (exit {exit_code})"
            self._line(head)
            shown = sanitize_for_display(output).rstrip()
            if shown:
                self._err.write("".join(f"   {line}\n" for line in shown.splitlines()))
                self._err.flush()
            return
        self._line(f"<- {fold_result(output, is_error=trace.is_error, exit_code=exit_code)}")

    def panicked(self, error: BaseException, traceback: str) -> None:
        """The stack, for the bug report (the command prints the one-line error after)."""
        self._err.write(sanitize_for_display(traceback))
        self._err.flush()

    # -- output -------------------------------------------------------------------------------------

    def _line(self, text: str) -> None:
        self._err.write(text + "\n")
        self._err.flush()

    def _markdown(self, text: str, stream: TextIO) -> None:
        clean = sanitize_for_display(text)
        if not self.color or not stream.isatty():
            stream.write(clean + "\n")
            stream.flush()
            return
        # rich.markdown costs ~200 ms to import: only a terminal that shows it pays.
        from rich.markdown import Markdown

        self._console(stream).print(Markdown(clean, hyperlinks=False))

    def _console(self, stream: TextIO) -> Console:
        console = self._consoles.get(id(stream))
        if console is None:
            from rich.console import Console

            console = Console(file=stream, markup=False, emoji=False, highlight=False, soft_wrap=False)
            self._consoles[id(stream)] = console
        return console


def approved_by(trace: ToolTrace) -> str:
    """What let a gated call run without a question, in words (empty when the operator was just asked)."""
    gate = trace.gate
    if gate is None or not gate.allowed or not gate.rule:
        return ""
    if gate.channel == "rule":
        return f'approved by rule "{sanitize_for_terminal(gate.rule)}"'
    if gate.channel == "session":
        return f"approved for this session ({sanitize_for_terminal(gate.rule.removeprefix('session: '))})"
    return ""


def command_output(result: str, exit_code: int | None) -> tuple[str, int | None]:
    """The command's own output and exit code from a command tool's JSON result; other results unchanged.

    A command tool answers the model `{"command": ..., "exit_code": N, "output": "..."}`; an operator
    wants the output as the command printed it.
    """
    if not result.startswith("{"):
        return result, exit_code
    try:
        body: object = json.loads(result)
    except ValueError:
        return result, exit_code
    if not isinstance(body, dict):
        return result, exit_code
    fields = cast("dict[str, object]", body)
    output, code = fields.get("output"), fields.get("exit_code")
    if not isinstance(output, str) or "command" not in fields:
        return result, exit_code
    return output, code if isinstance(code, int) and exit_code is None else exit_code


def fold_result(output: str, *, is_error: bool, exit_code: int | None) -> str:
    """A tool result on one line: status, size, and the start of the output.

    Examples: `exit 0, 3 lines: fixturectl was called with 2 argument(s): …`,
    `error (exit 1): no such stream`, `{"allowed":false,"reason":"no interactive terminal …"}`.
    """
    status = ""
    if exit_code is not None:
        status = f"exit {exit_code}"
    if is_error:
        status = f"error ({status})" if status else "error"
    lines = output.strip().splitlines()
    first = sanitize_for_terminal(output.strip(), _FOLD_RUNES) if output.strip() else "(no output)"
    size = f"{len(lines)} lines" if len(lines) > 1 else ""
    prefix = ", ".join(part for part in (status, size) if part)
    return f"{prefix}: {first}" if prefix else first


def _server_tool_line(block: ProviderBlock) -> str:
    """`-v`: what the server's tool search looked for and what it loaded."""
    raw = block.raw
    if block.kind == "server_tool_use":
        arguments: object = raw.get("input")
        query = cast("dict[str, object]", arguments).get("query") if isinstance(arguments, dict) else None
        return f".. tool search: {sanitize_for_terminal(str(query), 200)}" if query else ""
    if block.kind == "tool_search_tool_result":
        content: object = raw.get("content")
        refs: object = cast("dict[str, object]", content).get("tool_references") if isinstance(content, dict) else None
        if not isinstance(refs, list):
            return ""
        names = [
            str(cast("dict[str, object]", ref).get("tool_name", ""))
            for ref in cast("list[object]", refs)
            if isinstance(ref, dict)
        ]
        return f".. tool search loaded: {sanitize_for_terminal(', '.join(names), 300) or '(nothing)'}"
    return ""


def _capabilities_line(info: RunInfo) -> str:
    def state(on: bool) -> str:
        return "on" if on else "off"

    deferred = f" ({info.deferred_tools} of {info.total_tools} tools deferred)" if info.deferred_tools else ""
    search = "client-side, find_tools" if info.tool_finder else state(info.tool_search)
    line = (
        f"model {sanitize_for_terminal(info.model)} via {info.provider}: tool search {search}"
        f"{deferred}, prompt cache {state(info.prompt_cache)}, thinking {state(info.thinking)}"
    )
    note = info.capabilities or info.capabilities_note
    if note:
        line += f" ({sanitize_for_terminal(note)})"
    return line


def restored_lines(messages: Sequence[Message]) -> list[str]:
    """A resumed chat's conversation, one line per prompt, reply and call (tool results are left out)."""
    lines: list[str] = []
    for message in messages:
        for block in message.content:
            match block:
                case TextBlock(text=text) if text.strip() and message.role == "user":
                    lines.append(f"> {sanitize_for_terminal(text.strip())}")
                case TextBlock(text=text) if text.strip():
                    lines.append(sanitize_for_terminal(text.strip()))
                case ToolUseBlock(name=name):
                    lines.append(f"-> {sanitize_for_terminal(name)}")
                case _:
                    pass
    return lines
