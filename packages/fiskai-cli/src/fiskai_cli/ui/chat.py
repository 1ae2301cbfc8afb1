"""`fiskai run --chat`: slash commands resolved before anything is sent, and the line UI's chat input.

Both UIs resolve what the operator typed with `resolve`; only `Send` reaches the model. The line chat
reads from the terminal on stderr's side, so the answers on stdout stay clean for a pipe.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TextIO

import anyio.to_thread

from fiskai_agent import FollowUp
from fiskai_core.sanitize import sanitize_for_terminal

__all__ = ["CHAT_HELP", "Action", "End", "Help", "LineChat", "Send", "Unknown", "resolve"]

CHAT_HELP = """chat commands (resolved here, never sent to the model):
  /clear [prompt]   forget the conversation (and send the prompt, if given)
  /restart          forget the conversation and run the original prompt again (also /redo, /repeat)
  /exit             end the chat (also /quit, Ctrl-D)
  /help             this help
  //text            send "/text" as it is"""


@dataclass(frozen=True, slots=True)
class Send:
    """Send `text` (after forgetting the conversation when `reset`)."""

    text: str
    reset: bool = False
    notice: str = ""
    """What the UI says it did (`context cleared`)."""


@dataclass(frozen=True, slots=True)
class End:
    """End the chat cleanly."""


@dataclass(frozen=True, slots=True)
class Help:
    """Show the chat help; nothing is sent."""


@dataclass(frozen=True, slots=True)
class Unknown:
    """An unknown slash command; the draft is kept."""

    command: str


Action = Send | End | Help | Unknown


def resolve(text: str, original_prompt: str) -> Action | None:
    """What the typed `text` means; None for blank input (ignored)."""
    if not text.strip():
        return None
    stripped = text.strip()
    if stripped.startswith("//"):
        return Send(stripped[1:])
    if not stripped.startswith("/"):
        return Send(text)
    command = stripped.split(maxsplit=1)[0]
    # Arguments keep their line breaks: a multi-line prompt after /clear is sent as typed.
    rest = stripped[len(command) :].strip()
    match command.lower():
        case "/clear":
            return Send(rest, reset=True, notice="context cleared")
        case "/restart" | "/redo" | "/repeat":
            return Send(original_prompt, reset=True, notice="restarting with the original prompt")
        case "/exit" | "/quit":
            return End()
        case "/help":
            return Help()
        case _:
            return Unknown(command)


class LineChat:
    """`RunOptions.next_prompt` for the line UI: `> ` on stderr, a line from the terminal.

    Ctrl-D (end of input) ends the chat; a line ending in a backslash continues on the next line.
    """

    def __init__(self, original_prompt: str, *, stdin: TextIO | None = None, stderr: TextIO | None = None) -> None:
        self._prompt = original_prompt
        self._in = stdin if stdin is not None else sys.stdin
        self._err = stderr if stderr is not None else sys.stderr

    def _say(self, text: str) -> None:
        self._err.write(text)
        self._err.flush()

    async def _read(self) -> str | None:
        lines: list[str] = []
        self._say("\n> ")
        while True:
            line = await anyio.to_thread.run_sync(self._in.readline, abandon_on_cancel=True)
            if not line:
                return None
            line = line.rstrip("\r\n")
            if not line.endswith("\\"):
                return "\n".join([*lines, line])
            lines.append(line[:-1])
            self._say(". ")

    async def __call__(self, error: str) -> FollowUp | None:
        if error:
            self._say(f"warning: the turn ended: {sanitize_for_terminal(error)}\n")
        while True:
            text = await self._read()
            if text is None:
                self._say("\n")
                return None
            action = resolve(text, self._prompt)
            match action:
                case None:
                    continue
                case Send(text=body, reset=reset, notice=notice):
                    if notice:
                        self._say(f"--- {notice} ---\n")
                    return FollowUp(text=body, reset=reset)
                case End():
                    return None
                case Help():
                    self._say(CHAT_HELP + "\n")
                case Unknown(command=command):
                    self._say(f"unknown command: {command} (/help lists them)\n")
