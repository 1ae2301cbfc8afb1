"""`fiskai run --resume` of a chat: what the stored session says before the run starts.

A chat session resumes as a chat, with or without `--chat` (its meta record says it is one), and its
`/restart` sends the session's own prompt again; both are read here, without the lock, before the UI is
chosen (the Go agent reads `interactive` the same way).
"""

from __future__ import annotations

from pathlib import Path

from fiskai_cli import _wiring as wiring
from fiskai_runstate import JournalError, fold

__all__ = ["stored_session"]


async def stored_session(settings: wiring.Settings, run_id: str, state_dir: Path | None) -> tuple[bool, str]:
    """Whether the stored session `run_id` is a chat, and its prompt.

    (False, "") when it cannot be read: the resume itself then says why.
    """
    try:
        async with wiring.journal_store(settings, state_dir=state_dir) as store:
            state = fold(await store.load(run_id))
    except (JournalError, OSError):
        return False, ""
    return state.interactive, state.prompt
