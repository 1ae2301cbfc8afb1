"""`y` on the full screen: the transcript to the terminal's clipboard with OSC 52.

The terminal (or tmux, with `set-clipboard on`) takes the text from the escape sequence, so this works
over SSH with no clipboard tool installed. The text is the transcript's sanitized rows, so it carries
no escape sequence of a model's or a tool's.
"""

from __future__ import annotations

import base64

__all__ = ["osc52"]


def osc52(text: str) -> str:
    """The OSC 52 sequence that sets the clipboard (`c`) to `text`, BEL-terminated (what tmux and xterm read)."""
    return f"\x1b]52;c;{base64.b64encode(text.encode('utf-8')).decode('ascii')}\x07"
