"""The run's Events as transcript entries, posted to the full-screen view's loop.

The run's task only builds entries (plain data) and posts them; the view applies them on its loop,
the single writer of what is on screen. What a line UI would have printed after the run (warnings,
the checkpoint line, the final answer) is also kept here, to be replayed once the terminal is back.
"""

from __future__ import annotations

import json

from fiskai_agent.events import Advisory, ResumeInfo, RunInfo, ToolResultTrace, ToolTrace
from fiskai_agent.llm import Message, Response, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from fiskai_cli.ui.line_events import LineEvents, approved_by, command_output
from fiskai_cli.ui.text import clip
from fiskai_cli.ui.tui.transcript import Entry, entry
from fiskai_cli.ui.tui.view import LiveView

__all__ = ["TuiEvents"]

_ARGS_CHARS = 200
_NOT_AN_ANSWER = frozenset({"max_tokens", "refusal", "model_context_window_exceeded"})


class TuiEvents:
    """`fiskai_agent.events.Events` drawing into a `LiveView`."""

    def __init__(self, view: LiveView, *, verbose: bool = False, results: bool = True) -> None:
        self._view = view
        self.verbose = verbose
        self._results = results
        """False with `--tool-output none`: calls are shown, their results are not."""
        self._warnings: list[Advisory] = []
        self._start: RunInfo | None = None
        self._answer: Response | None = None
        self._rotations: list[tuple[str, str]] = []

    def _post(self, *entries: Entry) -> None:
        items = list(entries)
        self._view.post(lambda: self._view.add(items))

    def warn(self, advisory: Advisory) -> None:
        self._warnings.append(advisory)
        self._post(entry("warning", advisory.message))

    def starting(self, info: RunInfo) -> None:
        self._start = info
        view, session = self._view, info.session_id or ""

        def update() -> None:
            view.status.model = info.model
            view.status.session = session
            view.add([])

        view.post(update)
        if info.new_session and session:
            self._post(entry("meta", f'checkpointing session "{session}"'))
        if info.no_application:
            self._post(
                entry("meta", "running without a wrapped application; built-in, remote and MCP server tools only")
            )

    def resumed(self, info: ResumeInfo) -> None:
        """The restored conversation, between `--- resuming ---` and `--- continuing ---` (reference 13.5)."""
        entries = [entry("meta", f'--- resuming "{info.run_id}" at iteration {info.next_iteration} ---')]
        for message in info.messages:
            entries += _restored(message)
        entries += [entry("warning", f"resuming despite a configuration change: {c}") for c in info.forced_changes]
        entries.append(entry("meta", "--- continuing ---"))
        self._post(*entries)

    def llm_request(self, summary: str) -> None:
        self._post(entry("meta", f".. {summary}"))

    def message(self, response: Response, terminal: bool) -> None:
        usage, view = response.usage, self._view

        def count() -> None:
            status = view.status
            status.iteration += 1
            status.input_tokens += usage.input_tokens
            status.output_tokens += usage.output_tokens
            status.cache_read += usage.cache_read_tokens
            status.cache_write += usage.cache_create_tokens

        view.post(count)
        view.post(view.dismiss_splash)
        entries = [
            entry("thinking", "thinking", block.text)
            for block in response.message.content
            if isinstance(block, ThinkingBlock) and block.text.strip()
        ]
        text = response.message.text.strip()
        if text and terminal and response.stop_reason not in _NOT_AN_ANSWER:
            self._answer = response
            entries += [entry("meta", "--- answer ---"), entry("answer", text)]
        elif text:
            entries.append(entry("narration", text))
        self._post(*entries)

    def tool_call(self, trace: ToolTrace) -> None:
        if trace.presentation == "self_rendered" and not self.verbose:
            return
        line = trace.display if self.verbose else trace.display_short
        if trace.presentation == "remote":
            line = f"{trace.name} (remote {trace.agent})"
        approval = approved_by(trace)
        self._post(entry("call", line), *([entry("meta", approval)] if approval else []))

    def tool_result(self, trace: ToolResultTrace) -> None:
        if not self._results or (trace.presentation in ("traced", "self_rendered") and not self.verbose):
            return
        output, exit_code = command_output(trace.output, trace.exit_code)
        head = "<- error" if trace.is_error else "<-"
        if exit_code is not None:
            head += f" (exit {exit_code})"
        lines = output.strip().splitlines()
        if not lines:
            head += " (no output)"
        self._post(entry("error" if trace.is_error else "result", head, output.strip()))

    def panicked(self, error: BaseException, traceback: str) -> None:
        self._post(entry("error", f"internal error: {error}", traceback))

    def session_rotated(self, previous: str, current: str) -> None:
        """`/clear` in a checkpointed chat: say where the old session went; the status bar names the new one."""
        self._rotations.append((previous, current))
        view = self._view

        def update() -> None:
            view.status.session = current
            view.add([])

        view.post(update)
        self._post(
            entry("meta", f"previous session saved; resume with: fiskai run --resume {previous}"),
            entry("meta", f'checkpointing session "{current}"'),
        )

    def replay(self, line: LineEvents) -> None:
        """After teardown: what the line UI would have printed that outlives the screen.

        Warnings and the checkpoint line on stderr, the final answer on stdout, through the line UI
        itself, so a redirected stdout gets exactly the bytes a `--no-tui` run would have written.
        """
        for advisory in self._warnings:
            line.warn(advisory)
        info = self._start
        if info is not None and info.new_session and info.session_id:
            line.starting(info)
        for previous, current in self._rotations:
            line.session_rotated(previous, current)
        if self._answer is not None:
            line.message(self._answer, True)


def _restored(message: Message) -> list[Entry]:
    """One restored message: prompts, narration, thinking, calls (name and arguments) and results."""
    entries: list[Entry] = []
    for block in message.content:
        match block:
            case TextBlock(text=text) if text.strip():
                entries.append(entry("prompt" if message.role == "user" else "narration", text.strip()))
            case ThinkingBlock(text=text) if text.strip():
                entries.append(entry("thinking", "thinking", text))
            case ToolUseBlock(name=name, input=arguments):
                entries.append(entry("call", f"{name} {clip(json.dumps(arguments, ensure_ascii=False), _ARGS_CHARS)}"))
            case ToolResultBlock(content=content, is_error=is_error):
                output, exit_code = command_output(content, None)
                head = ("<- error" if is_error else "<-") + (f" (exit {exit_code})" if exit_code is not None else "")
                entries.append(entry("error" if is_error else "result", head, output.strip()))
            case _:
                pass
    return entries
