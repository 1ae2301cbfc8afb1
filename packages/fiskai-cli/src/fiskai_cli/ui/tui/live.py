"""A live run on the full screen: the agent's task and the UI loop side by side, then a clean teardown.

Both run on one asyncio loop. The agent's task reports through `TuiEvents` and asks through
`TuiPrompter`, which only post to the view; the view's loop is the one writer of the screen. On the
way out the terminal is restored first, then the captured stderr is flushed, then what the line UI
would have printed (warnings, the checkpoint line, the final answer) is replayed through it.

A SIGTERM or SIGINT from outside (Ctrl-C on the screen is a key) is steered by the command (suspend a
checkpointed run, else abort; again: abort), then shown here (`signalled`): the transcript says so,
the open question and any later one are declined so the run can reach its next step, and the screen
closes by itself when the run ends, since nobody may be there to press q. One that arrives after the
run ended closes the screen too.
"""

from __future__ import annotations

import asyncio
import functools
import signal
from collections.abc import Awaitable, Callable

from fiskai_agent import FollowUp, RunControl, RunResult
from fiskai_cli.ui.chat import End, Help, Send, Unknown, resolve
from fiskai_cli.ui.line_events import LineEvents, ToolOutput
from fiskai_cli.ui.tui.capture import StderrCapture
from fiskai_cli.ui.tui.events import TuiEvents
from fiskai_cli.ui.tui.prompter import TuiPrompter
from fiskai_cli.ui.tui.transcript import entry
from fiskai_cli.ui.tui.view import LiveView

__all__ = ["FullScreen"]

_ENDINGS = {
    "completed": ("complete", "--- run complete, press q to quit ---"),
    "suspended": ("suspended", "--- run suspended, press q to quit ---"),
}


class FullScreen:
    """The full-screen UI of one run.

    Args:
        control: The run's control: leaving suspends (checkpointed runs, first press) or aborts it.
        checkpointing: The run is journaled, so the first leave suspends instead of aborting.
        line: The line UI the outcome is replayed through after teardown.
        prompt: The operator's request, shown first.
        chat: Keep an input row open at each turn boundary (`next_prompt`).
        bell: Ring once when a question blocks the run (off with `harness.no_bell`).
        resumed: The run continues a session: its restored conversation shows the prompt (`prompt` is
            then only what a chat's /restart sends).
        tool_output: `full` starts with tool output unfolded; `none` shows no results.
        color: Off (`--no-color`, `NO_COLOR`) draws the screen in monochrome.
    """

    def __init__(
        self,
        *,
        control: RunControl,
        checkpointing: bool,
        line: LineEvents,
        prompt: str,
        verbose: bool = False,
        chat: bool = False,
        bell: bool = True,
        resumed: bool = False,
        tool_output: ToolOutput = "folded",
        color: bool = True,
    ) -> None:
        self._control = control
        self._checkpointing = checkpointing
        self._line = line
        self._prompt = prompt
        self.view = LiveView(
            on_leave=self._leave, on_abort=self._abort, chat=chat, bell=bell, color=color, splash=not resumed
        )
        self.view.transcript.fold_output = tool_output != "full"
        self.events = TuiEvents(self.view, verbose=verbose, results=tool_output != "none")
        self.prompter = TuiPrompter(self.view)
        self._running = True
        self._left = False
        if not resumed:
            self.view.transcript.add(entry("prompt", prompt))

    async def run(self, drive: Callable[[], Awaitable[RunResult]]) -> RunResult:
        """Run `drive` (the agent) under the screen; returns its result after the terminal is restored."""
        with StderrCapture():
            app = self.view.app
            # The run's own SIGINT/SIGTERM handling stays in charge (Ctrl-C is a key while the screen is up).
            loop = asyncio.get_running_loop()
            drawn: asyncio.Future[None] = loop.create_future()

            def first_render(_: object) -> None:
                if not drawn.done():
                    drawn.set_result(None)

            app.after_render += first_render
            screen = asyncio.ensure_future(app.run_async(handle_sigint=False))
            screen.add_done_callback(self._screen_gone)
            # The run starts once the screen is up, so a quit (or a failed setup) can always reach it.
            await asyncio.wait({screen, drawn}, return_when=asyncio.FIRST_COMPLETED)
            app.after_render -= first_render
            # A closed terminal (SIGHUP) is a lost operator: decline what is asked, abort, restore nothing.
            loop.add_signal_handler(signal.SIGHUP, self._hangup)
            try:
                result = await drive()
            except BaseException:
                # Setup failed (or a bug): restore the terminal first, so the error is printed on it.
                self._quit()
                await asyncio.gather(screen, return_exceptions=True)
                raise
            finally:
                loop.remove_signal_handler(signal.SIGHUP)
                self._running = False
                self.prompter.closed = True
            self.view.post(lambda: self._ended(result))
            if self._left or screen.done():
                self.view.post(self._quit)
            # The run's signal handling has ended: a SIGTERM now closes the screen (the terminal restored).
            loop.add_signal_handler(signal.SIGTERM, self._quit)
            try:
                await asyncio.gather(screen, return_exceptions=True)
            finally:
                loop.remove_signal_handler(signal.SIGTERM)
        self.events.replay(self._line)
        return result

    def _screen_gone(self, _: asyncio.Future[None]) -> None:
        # The operator quit, or the terminal went away: nobody is left to approve anything.
        self.prompter.closed = True
        self.view.decline_pending("the terminal is gone")
        if self._running:
            self._control.abort()

    def signalled(self, signum: int) -> None:
        """A signal the command already acted on: say what it does, stop asking, close when the run ends."""
        name = signal.Signals(signum).name
        self._left = True
        if self._control.aborted:
            self.prompter.closed = True
            self.view.post(lambda: self.view.add([entry("meta", f"{name}: aborting")]))
            return
        why = "the run is suspending"
        self.prompter.decline_all(why)

        def show() -> None:
            note = f"{name}: suspending at the end of this step (again: abort); open questions are declined"
            self.view.add([entry("warning", note)])
            self.view.end("suspending")
            self.view.status.ended = None

        self.view.post(show)

    def _hangup(self) -> None:
        self._left = True
        self.prompter.closed = True
        self.view.decline_pending("the terminal was closed")
        self._control.abort()

    def _ended(self, result: RunResult) -> None:
        state, line = _ENDINGS.get(result.reason or "", ("aborted" if self._control.aborted else "error", ""))
        entries = [entry("meta", line or f"--- run {state}, press q to quit ---")]
        if result.error:
            entries.insert(0, entry("warning", f"run ended: {result.error}"))
        if result.reason == "suspended" and result.session_id:
            entries.append(entry("meta", f"resume with: fiskai run --resume {result.session_id}"))
        self.view.add(entries)
        self.view.end(state)

    def _quit(self) -> None:
        app = self.view.app
        if app.is_running and app.future is not None and not app.future.done():
            app.exit()

    async def next_prompt(self, error: str) -> FollowUp | None:
        """`RunOptions.next_prompt`: the chat row, with slash commands resolved before anything is sent."""
        view = self.view
        if error:
            view.post(lambda: view.add([entry("warning", f"the turn ended: {error}")]))
        draft = ""
        while True:
            future: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
            view.post(functools.partial(view.open_input, future, draft))
            text = await future
            if text is None:
                self._left = True
                return None
            action = resolve(text, self._prompt)
            draft = ""
            match action:
                case None:
                    continue
                case Send(text=body, reset=reset, notice=notice):
                    shown = [entry("meta", f"--- {notice} ---")] if notice else []
                    if body:
                        shown.append(entry("prompt", body))
                    view.post(functools.partial(view.add, shown))
                    return FollowUp(text=body, reset=reset)
                case End():
                    self._left = True
                    return None
                case Help():
                    view.post(view.show_help)
                case Unknown(command=command):
                    draft = text
                    view.post(lambda: view.notice(f"unknown command: {command}"))

    def _abort(self) -> None:
        self._left = True
        if self._running:
            self.view.add([entry("meta", "aborting")])
            self._control.abort()
        else:
            self._quit()

    def _leave(self) -> None:
        if not self._running:
            self._quit()
            return
        self._left = True
        if self._checkpointing and not self._control.suspend_requested:
            self._control.request_suspend()
            self.view.add([entry("meta", "suspend requested; finishing current step, press again to abort")])
            self.view.end("suspending")
            self.view.status.ended = None
            return
        self.view.add([entry("meta", "aborting")])
        self._control.abort()
