"""The full-screen view (prompt-toolkit): the transcript, a modal question, help, and the status bar.

Single writer: every method here runs on the UI loop. The run's task never calls them directly; it
queues updates (`LiveView.post`), which the loop applies in order. The transcript is a read-only
buffer whose rows get their style from a lexer keyed by row number, so the text itself is never
parsed for styles.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from prompt_toolkit.application import Application
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.document import Document
from prompt_toolkit.filters import Condition, has_focus
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent, merge_key_bindings
from prompt_toolkit.layout import ConditionalContainer, Dimension, Float, FloatContainer, HSplit, Layout, Window
from prompt_toolkit.layout.controls import BufferControl, FormattedTextControl
from prompt_toolkit.lexers import Lexer
from prompt_toolkit.output import ColorDepth
from prompt_toolkit.styles import Style
from prompt_toolkit.widgets import Frame, TextArea
from typing_extensions import override

from fiskai_cli.ui.chat import CHAT_HELP
from fiskai_cli.ui.tui.transcript import Entry, Row, Transcript
from fiskai_core.prompter import PromptDeclined
from fiskai_core.sanitize import sanitize_for_terminal

__all__ = ["LiveView", "Question", "Status"]

_STYLE = Style.from_dict(
    {
        "narration": "",
        "answer": "bold",
        "heading": "bold underline",
        "code": "#87afaf",
        "quote": "italic #a8a8a8",
        "prompt": "bold",
        "thinking": "#8a8a8a italic",
        "call": "#5fafaf",
        "result": "#5f87d7",
        "error": "#d75f5f",
        "denied": "bold #d75f5f",
        "fold": "#8a8a8a",
        "meta": "#8a8a8a",
        "warning": "#d7af00",
        "status": "reverse",
        "status.blocked": "bg:#d7af00 #000000",
        "modal": "bg:#262626",
        "modal.selected": "reverse",
        "help": "bg:#262626",
    }
)

_NOTICE_SECONDS = 3.0

HELP = """fiskai run: keys

  z          fold or unfold thinking
  Z          fold or unfold tool output
  PgUp PgDn  scroll a page (the view follows the run again at the bottom)
  Up Down    scroll a line
  Home End   top, bottom (End follows the run)
  ?          this help (any key closes it; in the chat row that key is typed too)
  q Ctrl-C   leave: suspend a checkpointed run (again: abort); abort otherwise; quit once ended

At a question: Up/Down and Enter, or the number; Escape or Ctrl-C declines."""


@dataclass(slots=True)
class Status:
    """What the status bar shows."""

    model: str = ""
    session: str = ""
    iteration: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read: int = 0
    cache_write: int = 0
    state: str = "running"
    started: float = field(default_factory=time.monotonic)
    ended: float | None = None


@dataclass(slots=True)
class Question:
    """A modal question: choices to pick from, or (with `default` not None) a line of text to type."""

    lines: Sequence[str]
    choices: Sequence[str] = ()
    default: str | None = None
    selected: int = 0
    future: asyncio.Future[int | str] = field(default_factory=lambda: asyncio.get_running_loop().create_future())


class _RowLexer(Lexer):
    def __init__(self) -> None:
        self.rows: list[Row] = []

    @override
    def lex_document(self, document: Document) -> Callable[[int], StyleAndTextTuples]:
        rows = self.rows

        def line(number: int) -> StyleAndTextTuples:
            if number < len(rows):
                return [(rows[number].style, rows[number].text)]
            return []

        return line


class LiveView:
    """The screen of one run (or a read-only transcript).

    Args:
        on_leave: Called on the UI loop when the operator presses q, Escape or Ctrl-C outside a
            question; it decides between suspend, abort and quit.
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
        self._lexer = _RowLexer()
        self._buffer = Buffer(read_only=True)
        self._follow = True
        self._question: Question | None = None
        self._show_help = False
        self._notice = ""
        self._notice_until = 0.0
        self._input = TextArea(multiline=False, height=1, prompt="> ", style="class:modal")
        self._window = Window(
            BufferControl(self._buffer, lexer=self._lexer, focusable=True), wrap_lines=True, always_hide_cursor=True
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
                    Window(FormattedTextControl(self._status_text), height=1, style=self._status_style),
                ]
            ),
            floats=[
                Float(ConditionalContainer(modal, Condition(lambda: self._question is not None)), left=2, right=2),
                Float(ConditionalContainer(help_box, Condition(lambda: self._show_help))),
            ],
        )
        self.app: Application[None] = Application(
            layout=Layout(body, focused_element=self._window),
            key_bindings=merge_key_bindings([self._question_keys(), self._view_keys(), self._chat_keys()]),
            style=_STYLE,
            full_screen=True,
            mouse_support=False,
            refresh_interval=1.0,  # the elapsed time ticks
            color_depth=None if color else ColorDepth.DEPTH_1_BIT,
        )

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
        self._chat.text = draft
        self._chat.buffer.cursor_position = len(draft)
        self.app.layout.focus(self._chat)
        self.status.state = "ready for input"
        self.app.invalidate()

    def show_help(self) -> None:
        self._show_help = True
        self.app.invalidate()

    def _submit(self, value: str | None) -> None:
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

    def end(self, state: str) -> None:
        self.status.state = state
        self.status.ended = time.monotonic()
        self.app.invalidate()

    # -- rendering ---------------------------------------------------------------------------------

    def _refresh(self) -> None:
        rows = self.transcript.rows()
        self._lexer.rows = rows
        text = "\n".join(row.text for row in rows)
        row, col = self._buffer.document.cursor_position_row, self._buffer.document.cursor_position_col
        document = Document(text, len(text)) if self._follow else None
        if document is None:
            # Keep the operator's place (row, column) while they read back.
            probe = Document(text)
            document = Document(text, probe.translate_row_col_to_index(row, col))
        self._buffer.set_document(document, bypass_readonly=True)
        self.app.invalidate()

    def _status_text(self) -> StyleAndTextTuples:
        s = self.status
        elapsed = int((s.ended or time.monotonic()) - s.started)
        tokens = f"tokens={s.input_tokens}/{s.output_tokens}"
        if s.cache_read:
            tokens += f" cached={s.cache_read}"
        if s.cache_write:
            tokens += f" cache_write={s.cache_write}"
        # The model, session id and state come from a configuration or a journal: sanitized like any entry.
        session = [f"session={sanitize_for_terminal(s.session)}"] if s.session else []
        clock = f"{elapsed // 60}:{elapsed % 60:02d}"
        model, state = sanitize_for_terminal(s.model), sanitize_for_terminal(s.state)
        parts = [f" {self.title}", f"[{state}]", f"model={model}", *session, f"iter={s.iteration}", tokens, clock]
        left = "  ".join(parts)
        keys = "enter send  alt-enter newline  ^D end  ^C abort " if self._waiting else "? help  q quit "
        notice = self._notice if time.monotonic() < self._notice_until else ""
        right = (notice + "   " if notice else "") + keys
        width = self.app.output.get_size().columns
        # On a narrow terminal the facts are cut, never the key hints that say how to leave.
        left = left[: max(width - len(right) - 1, 0)]
        return [("", left + " " * (width - len(left) - len(right)) + right)]

    def _status_style(self) -> str:
        return "class:status.blocked" if self._question is not None else "class:status"

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

    def _scroll(self, rows: int) -> None:
        doc = self._buffer.document
        last = doc.line_count - 1
        # The window scrolls only to keep the (hidden) cursor visible, so the cursor moves from the
        # edge of the view it is leaving by: from the top row up, from the bottom row down.
        start = doc.cursor_position_row
        info = self._window.render_info
        if info is not None:
            start = info.first_visible_line() if rows < 0 else info.last_visible_line()
        target = min(max(start + rows, 0), last)
        self._buffer.cursor_position = doc.translate_row_col_to_index(target, 0)
        # tail -f: scrolling back freezes the view; reaching the bottom again re-arms follow.
        self._follow = target >= last
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

    def _view_keys(self) -> KeyBindings:
        kb = KeyBindings()
        helping = Condition(lambda: self._show_help)
        idle = ~Condition(lambda: self._question is not None) & ~helping & has_focus(self._window)

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

        @kb.add("pageup", filter=idle)
        def _page_up(_: KeyPressEvent) -> None:
            self._scroll(-self._page())

        @kb.add("pagedown", filter=idle)
        def _page_down(_: KeyPressEvent) -> None:
            self._scroll(self._page())

        @kb.add("up", filter=idle)
        def _line_up(_: KeyPressEvent) -> None:
            self._scroll(-1)

        @kb.add("down", filter=idle)
        def _line_down(_: KeyPressEvent) -> None:
            self._scroll(1)

        @kb.add("home", filter=idle)
        def _top(_: KeyPressEvent) -> None:
            self._scroll(-self._buffer.document.line_count)

        @kb.add("end", filter=idle)
        def _bottom(_: KeyPressEvent) -> None:
            self._scroll(self._buffer.document.line_count)

        @kb.add("q", filter=idle)
        @kb.add("escape", filter=idle)
        @kb.add("c-c", filter=idle)
        def _leave(_: KeyPressEvent) -> None:
            self._on_leave()

        return kb

    def _chat_keys(self) -> KeyBindings:
        kb = KeyBindings()
        typing = Condition(lambda: self._waiting is not None and self._question is None) & has_focus(self._chat)

        @kb.add("enter", filter=typing)
        def _send(_: KeyPressEvent) -> None:
            if self._chat.text.strip():
                self._submit(self._chat.text)

        @kb.add("escape", "enter", filter=typing)
        @kb.add("c-j", filter=typing)
        def _newline(_: KeyPressEvent) -> None:
            self._chat.buffer.insert_text("\n")

        @kb.add("c-d", filter=typing)
        def _end(_: KeyPressEvent) -> None:
            self._submit(None)

        @kb.add("c-c", filter=typing)
        def _abort(_: KeyPressEvent) -> None:
            self._on_abort()

        @kb.add("pageup", filter=typing)
        def _page_up(_: KeyPressEvent) -> None:
            self._scroll(-self._page())

        @kb.add("pagedown", filter=typing)
        def _page_down(_: KeyPressEvent) -> None:
            self._scroll(self._page())

        return kb

    def _page(self) -> int:
        info = self._window.render_info
        return max((info.window_height if info else 10) - 1, 1)
