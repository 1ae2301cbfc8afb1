"""Moving about the transcript: tail -f follow, line and page scrolling, top and bottom, `/` search and `n`.

Runs on the UI loop only, like the view that owns it. The window scrolls only to keep its (hidden) cursor
visible, so every move places the cursor; reaching the last row re-arms follow, leaving it freezes the view.
A search looks through the rows as shown and, when the term is only inside folded output or thinking,
unfolds that kind first (a match is never hidden behind a placeholder).
"""

from __future__ import annotations

from collections.abc import Callable

from prompt_toolkit.buffer import Buffer
from prompt_toolkit.document import Document
from prompt_toolkit.filters import Filter, has_focus
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.layout import Window
from prompt_toolkit.lexers import Lexer
from prompt_toolkit.widgets import TextArea
from typing_extensions import override

from fiskai_cli.ui.tui.search import find_row
from fiskai_cli.ui.tui.transcript import Row, Transcript

__all__ = ["Navigator", "RowLexer"]


class RowLexer(Lexer):
    """Styles each row by its kind (never by its text); the row of the last search match is highlighted."""

    def __init__(self) -> None:
        self.rows: list[Row] = []
        self.match: int | None = None

    @override
    def lex_document(self, document: Document) -> Callable[[int], StyleAndTextTuples]:
        rows, match = self.rows, self.match

        def line(number: int) -> StyleAndTextTuples:
            if number < len(rows):
                style = rows[number].style + (" class:match" if number == match else "")
                return [(style, rows[number].text)]
            return []

        return line


class Navigator:
    """Scrolling and search over the transcript `window` showing `buffer`.

    Args:
        refresh: Lays the transcript out again (after a search unfolded a kind).
        notice: A transient note on the status bar.
    """

    def __init__(
        self,
        *,
        buffer: Buffer,
        window: Window,
        lexer: RowLexer,
        transcript: Transcript,
        refresh: Callable[[], None],
        notice: Callable[[str], None],
    ) -> None:
        self.follow = True
        self.searching = False
        self.search_input = TextArea(multiline=False, height=1, prompt="/ ")
        self._buffer = buffer
        self._window = window
        self._lexer = lexer
        self._transcript = transcript
        self._refresh = refresh
        self._notice = notice
        self._term = ""

    def scroll(self, rows: int) -> None:
        """Move the view by `rows` (negative: up) from the edge of the view it is leaving."""
        doc = self._buffer.document
        start = doc.cursor_position_row
        info = self._window.render_info
        if info is not None:
            start = info.first_visible_line() if rows < 0 else info.last_visible_line()
        self.goto(start + rows)

    def goto(self, row: int) -> None:
        """Put `row` in view; tail -f: the last row follows the run again, any other freezes the view."""
        doc = self._buffer.document
        last = doc.line_count - 1
        target = min(max(row, 0), last)
        self._buffer.cursor_position = doc.translate_row_col_to_index(target, 0)
        self.follow = target >= last

    def page(self) -> int:
        """Rows in a page (the window's height less one, for context)."""
        info = self._window.render_info
        return max((info.window_height if info else 10) - 1, 1)

    def find(self, term: str, *, again: bool) -> None:
        """Go to the next row holding `term` (after the last match when `again`, else from the top of the view)."""
        if not term:
            self._notice("no search term yet: / starts one")
            return
        self._term = term
        if again and self._lexer.match is not None:
            start = self._lexer.match + 1
        else:
            info = self._window.render_info
            start = info.first_visible_line() if info is not None else 0
        row = find_row([r.text for r in self._lexer.rows], term, start)
        if row is None and self._transcript.unfold_for(term):
            self._refresh()
            row = find_row([r.text for r in self._lexer.rows], term, start)
        if row is None:
            self._notice(f"not found: {term}")
            return
        self._lexer.match = row
        # Scrolling the match to the top edge first leaves it high in the view with what follows below it.
        self.goto(self._buffer.document.line_count)
        self.goto(row)
        self._notice(f"found: {term} (n: next)")

    def keys(self, idle: Filter, on_close: Callable[[], None]) -> KeyBindings:
        """The scrolling and search keys (active while `idle`); `on_close` returns the focus after a search."""
        kb = KeyBindings()
        searching = has_focus(self.search_input)

        @kb.add("pageup", filter=idle)
        @kb.add("c-b", filter=idle)
        def _page_up(_: KeyPressEvent) -> None:
            self.scroll(-self.page())

        @kb.add("pagedown", filter=idle)
        @kb.add("c-f", filter=idle)
        def _page_down(_: KeyPressEvent) -> None:
            self.scroll(self.page())

        @kb.add("up", filter=idle)
        @kb.add("k", filter=idle)
        def _line_up(_: KeyPressEvent) -> None:
            self.scroll(-1)

        @kb.add("down", filter=idle)
        @kb.add("j", filter=idle)
        def _line_down(_: KeyPressEvent) -> None:
            self.scroll(1)

        @kb.add("home", filter=idle)
        @kb.add("g", filter=idle)
        def _top(_: KeyPressEvent) -> None:
            self.goto(0)

        @kb.add("end", filter=idle)
        @kb.add("G", filter=idle)
        def _bottom(_: KeyPressEvent) -> None:
            self.goto(self._buffer.document.line_count)

        @kb.add("/", filter=idle)
        def _search(event: KeyPressEvent) -> None:
            self.searching = True
            self.search_input.text = ""
            event.app.layout.focus(self.search_input)

        @kb.add("n", filter=idle)
        def _next(_: KeyPressEvent) -> None:
            self.find(self._term, again=True)

        @kb.add("enter", filter=searching)
        def _run(_: KeyPressEvent) -> None:
            term = self.search_input.text.strip() or self._term  # Enter on empty repeats the last term
            self.searching = False
            on_close()
            self.find(term, again=term == self._term)

        @kb.add("escape", filter=searching, eager=True)
        @kb.add("c-c", filter=searching)
        def _cancel(_: KeyPressEvent) -> None:
            self.searching = False
            on_close()

        return kb
