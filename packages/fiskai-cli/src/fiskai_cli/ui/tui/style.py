"""The full screen's styles and its key help: trusted names only, never derived from model text."""

from __future__ import annotations

from prompt_toolkit.styles import Style

__all__ = ["HELP", "STYLE"]

STYLE = Style.from_dict(
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
        "match": "reverse",
        "status": "reverse",
        "status.blocked": "bg:#d7af00 #000000",
        "status.input": "bg:#5f875f #000000",
        "modal": "bg:#262626",
        "modal.selected": "reverse",
        "help": "bg:#262626",
        "splash": "bg:#262626",
    }
)

HELP = """fiskai run: keys

  z          fold or unfold thinking
  Z          fold or unfold tool output
  /  n       search (case-insensitive, wraps; Enter on empty repeats), next match
  y          copy the whole transcript to the clipboard (OSC 52)
  PgUp PgDn  scroll a page (also Ctrl-B, Ctrl-F; the view follows the run again at the bottom)
  Up Down    scroll a line (also k, j)
  Home End   top, bottom (also g, G; End follows the run)
  Tab i      back to the chat input (Tab, Shift-Tab or Escape there moves here)
  ?          this help (any key closes it; in the chat row that key is typed too)
  q Ctrl-C   leave: suspend a checkpointed run (again: abort); abort otherwise; quit once ended

At a question: Up/Down and Enter, or the number; Escape or Ctrl-C declines.
In the chat row Up/Down on its first/last line recall earlier messages."""
