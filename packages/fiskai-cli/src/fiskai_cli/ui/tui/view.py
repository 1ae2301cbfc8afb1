"""The full-screen view (prompt-toolkit): the transcript, a modal question, help, and the status bar.

Single writer: every method here runs on the UI loop. The run's task never calls them directly; it
queues updates (`LiveView.post`), which the loop applies in order. The transcript is a read-only
buffer whose rows get their style from a lexer keyed by row number, so the text itself is never
parsed for styles.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from prompt_toolkit.application import Application
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.document import Document
from prompt_toolkit.filters import Condition, has_focus
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.key_binding import KeyBindings, KeyBindingsBase, KeyPressEvent, merge_key_bindings
from prompt_toolkit.layout import ConditionalContainer, Dimension, Float, FloatContainer, HSplit, Layout, Window
from prompt_toolkit.layout.controls import BufferControl, FormattedTextControl
from prompt_toolkit.output import ColorDepth
from prompt_toolkit.widgets import Frame, TextArea

from fiskai_cli.ui.chat import CHAT_HELP
from fiskai_cli.ui.tui.clipboard import osc52
from fiskai_cli.ui.tui.history import InputHistory
from fiskai_cli.ui.tui.navigation import Navigator, RowLexer
from fiskai_cli.ui.tui.splash import splash_card
from fiskai_cli.ui.tui.status import Status, status_line
from fiskai_cli.ui.tui.style import HELP, STYLE
from fiskai_cli.ui.tui.transcript import Entry, Transcript
from fiskai_core.prompter import PromptDeclined

__all__ = ["LiveView", "Question", "Status"]

_NOTICE_SECONDS = 3.0
_SPIN_SECONDS = 0.1


@dataclass(slots=True)
class Question:
    """A modal question: choices to pick from, or (with `default` not None) a line of text to type."""

    lines: Sequence[str]
    choices: Sequence[str] = ()
    default: str | None = None
    selected: int = 0
    future: asyncio.Future[int | str] = field(default_factory=lambda: asyncio.get_running_loop().create_future())


class LiveView:
    """The screen of one run (or a read-only transcript).

    Args:
        on_leave: Called on the UI loop when the operator presses q, Escape or Ctrl-C outside a
            question; it decides between suspend, abort and quit.
        splash: Cover the view with the start-up card until the first reply (or any key).
    """

    def __init__(
        self,
        *,
        on_leave: Callable[[], None],
        on_abort: Callable[[], None] | None = None,
        chat: bool = False,
        bell: bool = False,
        title: str = "fiskai",
        color: bool = True,
        splash: bool = False,
    ) -> None:
        self.transcript = Transcript()
        self.status = Status()
        self.title = title
        self._on_leave = on_leave
        self._on_abort = on_abort or on_leave
        self._chat_enabled = chat
        self._bell = bell
        self._waiting: asyncio.Future[str | None] | None = None
        self._chat = TextArea(
            multiline=True,
            prompt="> ",
            height=Dimension(min=1, max=5),
            dont_extend_height=True,
            wrap_lines=True,
            read_only=Condition(lambda: self._waiting is None),
        )
        self._history = InputHistory()
        self._splash = splash
        self._lexer = RowLexer()
        self._buffer = Buffer(read_only=True)
        self._question: Question | None = None
        self._show_help = False
        self._notice = ""
        self._notice_until = 0.0
        self._input = TextArea(multiline=False, height=1, prompt="> ", style="class:modal")
        self._window = Window(
            BufferControl(self._buffer, lexer=self._lexer, focusable=True), wrap_lines=True, always_hide_cursor=True
        )
        self.nav = Navigator(
            buffer=self._buffer,
            window=self._window,
            lexer=self._lexer,
            transcript=self.transcript,
            refresh=self._refresh,
            notice=self.notice,
        )
        card = Frame(
            Window(FormattedTextControl(self._splash_text), dont_extend_height=True), style="class:splash", width=72
        )
        modal = Frame(
            HSplit(
                [
                    Window(FormattedTextControl(self._question_text), wrap_lines=True, dont_extend_height=True),
                    ConditionalContainer(self._input, Condition(lambda: self._asks_text())),
                ]
            ),
            title="question",
            style="class:modal",
        )
        help_text = HELP + ("\n\n" + CHAT_HELP if chat else "")
        help_box = Frame(
            Window(FormattedTextControl(help_text), dont_extend_height=True), title="help", style="class:help"
        )
        body = FloatContainer(
            HSplit(
                [
                    self._window,
                    ConditionalContainer(
                        HSplit(
                            [Window(height=1, char="\N{BOX DRAWINGS LIGHT HORIZONTAL}", style="class:meta"), self._chat]
                        ),
                        Condition(lambda: self._chat_enabled),
                    ),
                    ConditionalContainer(self.nav.search_input, Condition(lambda: self.nav.searching)),
                    Window(FormattedTextControl(self._status_text), height=1, style=self._status_style),
                ]
            ),
            floats=[
                Float(ConditionalContainer(card, Condition(lambda: self._splash))),
                Float(ConditionalContainer(modal, Condition(lambda: self._question is not None)), left=2, right=2),
                Float(ConditionalContainer(help_box, Condition(lambda: self._show_help))),
            ],
        )
        self.app: Application[None] = Application(
            layout=Layout(body, focused_element=self._window),
            key_bindings=merge_key_bindings(
                [self._question_keys(), self._view_keys(), self._chat_keys(), self._splash_keys()]
            ),
            style=STYLE,
            full_screen=True,
            mouse_support=False,
            refresh_interval=1.0,  # the elapsed time ticks
            color_depth=None if color else ColorDepth.DEPTH_1_BIT,
        )
        self.app.pre_run_callables.append(self._start_spinner)

    # -- updates (UI loop only) --------------------------------------------------------------------

    def post(self, update: Callable[[], None]) -> None:
        """Queue `update` to run on the UI loop (safe from any task or thread)."""
        loop = self.app.loop
        if loop is None:
            update()
            return
        loop.call_soon_threadsafe(update)

    def add(self, entries: Sequence[Entry]) -> None:
        for item in entries:
            self.transcript.add(item)
        self._refresh()

    def notice(self, text: str) -> None:
        """A transient note on the status bar (gone after a few seconds)."""
        self._notice = text
        self._notice_until = time.monotonic() + _NOTICE_SECONDS
        self.app.invalidate()

    def ask(self, question: Question) -> None:
        """Show a question; its future gets the answer or `PromptDeclined`."""
        self._question = question
        self._show_help = False
        self._splash = False
        if question.default is not None:
            self._input.text = question.default
            self._input.buffer.cursor_position = len(question.default)
            self.app.layout.focus(self._input)
        self.status.state = "awaiting answer"
        self.app.invalidate()
        if self._bell:
            self.app.output.bell()

    def open_input(self, future: asyncio.Future[str | None], draft: str = "") -> None:
        """Activate the chat row; `future` gets the submitted text, or None for Ctrl-D."""
        self._waiting = future
        self._splash = False
        self._chat.text = draft
        self._chat.buffer.cursor_position = len(draft)
        self.app.layout.focus(self._chat)
        self.status.state = "ready for input"
        self.app.invalidate()

    def show_help(self) -> None:
        self._show_help = True
        self.app.invalidate()

    def _submit(self, value: str | None) -> None:
        if value is not None:
            self._history.add(value)
        future = self._waiting
        self._waiting = None
        self._chat.text = ""
        self.app.layout.focus(self._window)
        self.status.state = "running"
        if future is not None and not future.done():
            future.set_result(value)
        self.app.invalidate()

    def decline_pending(self, why: str) -> None:
        """Decline the open question, if any (the screen is going away)."""
        if self._question is not None:
            self._close_question(PromptDeclined(why))

    def dismiss_splash(self) -> None:
        """The first reply arrived (or the operator pressed a key): uncover the transcript."""
        if self._splash:
            self._splash = False
            self.app.invalidate()

    def end(self, state: str) -> None:
        self._splash = False
        self.status.state = state
        self.status.ended = time.monotonic()
        self.app.invalidate()

    # -- rendering ---------------------------------------------------------------------------------

    def _refresh(self) -> None:
        rows = self.transcript.rows()
        self._lexer.rows = rows
        text = "\n".join(row.text for row in rows)
        row, col = self._buffer.document.cursor_position_row, self._buffer.document.cursor_position_col
        document = Document(text, len(text)) if self.nav.follow else None
        if document is None:
            # Keep the operator's place (row, column) while they read back.
            probe = Document(text)
            document = Document(text, probe.translate_row_col_to_index(row, col))
        self._buffer.set_document(document, bypass_readonly=True)
        self.app.invalidate()

    def _status_text(self) -> StyleAndTextTuples:
        if self._waiting is not None and self.app.layout.has_focus(self._chat):
            keys = "enter send  alt-enter newline  ^D end  ^C abort  tab transcript "
        else:
            keys = "/ search  z/Z fold  ? help  q quit "
        notice = self._notice if time.monotonic() < self._notice_until else ""
        width = self.app.output.get_size().columns
        return [("", status_line(self.status, title=self.title, keys=keys, notice=notice, width=width))]

    def _splash_text(self) -> StyleAndTextTuples:
        return [("", splash_card(model=self.status.model, directory=os.getcwd(), chat=self._chat_enabled))]

    def _start_spinner(self) -> None:
        self.app.create_background_task(self._spin())

    async def _spin(self) -> None:
        """Redraw while the run works, so the spinner turns (the clock alone ticks once a second)."""
        while True:
            await asyncio.sleep(_SPIN_SECONDS)
            if self.status.working:
                self.app.invalidate()

    def _status_style(self) -> str:
        if self._question is not None or self.status.state == "suspending":
            return "class:status.blocked"
        return "class:status.input" if self._waiting is not None else "class:status"

    def _question_text(self) -> StyleAndTextTuples:
        question = self._question
        if question is None:
            return []
        fragments: StyleAndTextTuples = [("", "\n".join(question.lines) + "\n")]
        for index, choice in enumerate(question.choices):
            style = "class:modal.selected" if index == question.selected else ""
            fragments.append((style, f" {index + 1}) {choice} "))
            fragments.append(("", "\n"))
        hint = (
            "Enter accepts, Escape declines" if self._asks_text() else "Up/Down and Enter or a number; Escape declines"
        )
        fragments.append(("class:meta", hint))
        return fragments

    def _asks_text(self) -> bool:
        return self._question is not None and self._question.default is not None

    # -- keys --------------------------------------------------------------------------------------

    def _close_question(self, answer: int | str | BaseException) -> None:
        question = self._question
        assert question is not None
        self._question = None
        self.status.state = "running"
        self.app.layout.focus(self._window)
        if not question.future.done():
            if isinstance(answer, BaseException):
                question.future.set_exception(answer)
            else:
                question.future.set_result(answer)
        self.app.invalidate()

    def _question_keys(self) -> KeyBindings:
        kb = KeyBindings()
        asking = Condition(lambda: self._question is not None)
        choosing = Condition(lambda: self._question is not None and self._question.default is None)

        @kb.add("escape", filter=asking, eager=True)
        @kb.add("c-c", filter=asking)
        def _decline(_: KeyPressEvent) -> None:
            self._close_question(PromptDeclined("dismissed at the prompt"))

        @kb.add("up", filter=choosing)
        def _up(_: KeyPressEvent) -> None:
            assert self._question is not None
            self._question.selected = max(self._question.selected - 1, 0)

        @kb.add("down", filter=choosing)
        def _down(_: KeyPressEvent) -> None:
            assert self._question is not None
            self._question.selected = min(self._question.selected + 1, len(self._question.choices) - 1)

        @kb.add("enter", filter=asking)
        def _accept(_: KeyPressEvent) -> None:
            assert self._question is not None
            if self._question.default is not None:
                self._close_question(self._input.text)
            elif self._question.choices:
                self._close_question(self._question.selected)

        for digit in "123456789":

            @kb.add(digit, filter=choosing)
            def _pick(event: KeyPressEvent) -> None:
                assert self._question is not None
                index = int(event.data) - 1
                if index < len(self._question.choices):
                    self._close_question(index)

        return kb

    def _view_keys(self) -> KeyBindingsBase:
        kb = KeyBindings()
        helping = Condition(lambda: self._show_help)
        idle = ~Condition(lambda: self._question is not None or self._splash) & ~helping & has_focus(self._window)

        @kb.add("<any>", filter=helping)
        def _close_help(event: KeyPressEvent) -> None:
            self._show_help = False
            if self._waiting is not None and self.app.layout.has_focus(self._chat):
                # Over the chat row the key that closes the help is also the operator's next input: feed
                # it again, now that no help is shown, so it is typed instead of lost.
                event.app.key_processor.feed(event.key_sequence[0], first=True)

        @kb.add("?", filter=idle)
        def _help(_: KeyPressEvent) -> None:
            self._show_help = True

        @kb.add("z", filter=idle)
        def _fold_thinking(_: KeyPressEvent) -> None:
            self.transcript.fold_thinking = not self.transcript.fold_thinking
            self.notice("thinking " + ("folded" if self.transcript.fold_thinking else "unfolded"))
            self._refresh()

        @kb.add("Z", filter=idle)
        def _fold_output(_: KeyPressEvent) -> None:
            self.transcript.fold_output = not self.transcript.fold_output
            self.notice("tool output " + ("folded" if self.transcript.fold_output else "unfolded"))
            self._refresh()

        @kb.add("y", filter=idle)
        def _copy(_: KeyPressEvent) -> None:
            text = self.transcript.plain_text()
            self.app.output.write_raw(osc52(text))
            self.app.output.flush()
            count = len(text.splitlines())
            self.notice(f"sent {count} line{'' if count == 1 else 's'} to clipboard")

        @kb.add("tab", filter=idle & Condition(lambda: self._waiting is not None))
        @kb.add("i", filter=idle & Condition(lambda: self._waiting is not None))
        def _to_input(_: KeyPressEvent) -> None:
            self.app.layout.focus(self._chat)

        @kb.add("q", filter=idle)
        @kb.add("escape", filter=idle)
        @kb.add("c-c", filter=idle)
        def _leave(_: KeyPressEvent) -> None:
            self._on_leave()

        return merge_key_bindings([kb, self.nav.keys(idle, lambda: self.app.layout.focus(self._window))])

    def _chat_keys(self) -> KeyBindings:
        kb = KeyBindings()
        typing = Condition(lambda: self._waiting is not None and self._question is None) & has_focus(self._chat)
        document = self._chat.buffer
        first_row = Condition(lambda: document.document.cursor_position_row == 0)
        last_row = Condition(lambda: document.document.cursor_position_row == document.document.line_count - 1)

        @kb.add("enter", filter=typing)
        def _send(_: KeyPressEvent) -> None:
            if self._chat.text.strip():
                self._submit(self._chat.text)

        @kb.add("escape", "enter", filter=typing)
        @kb.add("c-j", filter=typing)
        def _newline(_: KeyPressEvent) -> None:
            self._chat.buffer.insert_text("\n")

        @kb.add("up", filter=typing & first_row)
        def _older(_: KeyPressEvent) -> None:
            self._recall(self._history.previous(self._chat.text))

        @kb.add("down", filter=typing & last_row)
        def _newer(_: KeyPressEvent) -> None:
            self._recall(self._history.next())

        @kb.add("tab", filter=typing)
        @kb.add("s-tab", filter=typing)
        @kb.add("escape", filter=typing)
        def _to_transcript(_: KeyPressEvent) -> None:
            self.app.layout.focus(self._window)

        @kb.add("c-d", filter=typing)
        def _end(_: KeyPressEvent) -> None:
            self._submit(None)

        @kb.add("c-c", filter=typing)
        def _abort(_: KeyPressEvent) -> None:
            self._on_abort()

        @kb.add("pageup", filter=typing)
        def _page_up(_: KeyPressEvent) -> None:
            self.nav.scroll(-self.nav.page())

        @kb.add("pagedown", filter=typing)
        def _page_down(_: KeyPressEvent) -> None:
            self.nav.scroll(self.nav.page())

        return kb

    def _recall(self, text: str | None) -> None:
        if text is not None:
            self._chat.text = text
            self._chat.buffer.cursor_position = len(text)

    def _splash_keys(self) -> KeyBindings:
        kb = KeyBindings()
        covered = Condition(lambda: self._splash and self._question is None)

        @kb.add("<any>", filter=covered)
        def _dismiss(event: KeyPressEvent) -> None:
            self.dismiss_splash()
            if event.key_sequence[0].key in ("q", "escape", "c-c"):
                self._on_leave()  # the leave keys still leave

        return kb
