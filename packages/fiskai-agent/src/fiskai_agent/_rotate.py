"""A checkpointed chat's sessions: where a resumed one picks up, and rotation on `/clear` (reference 8.8).

The new journal is created first, so a store that refuses it leaves the chat where it was (a warning, the
follow-up then joins the old session). Only then does the old session get `terminal{suspended}` and close:
it stays resumable, and the new session's meta record names it (`previous`), so `fiskai session list` shows
the chain. The new session's prompt is the text sent after `/clear`; it lives in the meta record, so no
user record repeats it.
"""

from __future__ import annotations

from datetime import UTC, datetime

from fiskai_agent._journal import RunJournal, new_run_id
from fiskai_agent._prepared import Setup
from fiskai_agent.events import Advisory
from fiskai_runstate import JournalError
from fiskai_runstate.records import JsonObject, MetaRecord

__all__ = ["resumed_at_input", "rotate_session"]


def resumed_at_input(setup: Setup) -> bool:
    """A resumed chat rests at an input boundary: its last turn was answered and nothing is pending.

    Such a resume asks the operator first instead of calling the model again (reference 8.3).
    """
    messages = setup.messages
    return (
        setup.resumed
        and setup.pending is None
        and bool(messages)
        and messages[-1].role == "assistant"
        and setup.last_stop_reason != "pause_turn"
    )


async def rotate_session(setup: Setup, prompt: str, hooks: tuple[JsonObject, ...] = ()) -> bool:
    """Start a new session holding `prompt` and make it the run's journal; False (warned) when it cannot."""
    options = setup.options
    session = options.session
    old = setup.journal
    if session is None or setup.fingerprint is None or not old.active:
        return False
    run_id = new_run_id()
    meta = MetaRecord(
        run_id=run_id,
        created=datetime.now(UTC).isoformat(),
        fingerprint=setup.fingerprint,
        prompt=prompt,
        interactive=options.interactive,
        previous=old.run_id,
        agent=session.agent,
        caller=session.caller,
        hooks=hooks,
    )
    try:
        journal = await session.store.create(meta)
    except (JournalError, OSError) as err:
        options.events.warn(
            Advisory(
                kind="session_rotate",
                name=old.run_id,
                message=f'could not start a new session for /clear ({err}); continuing in session "{old.run_id}"',
            )
        )
        return False
    try:
        await old.terminal("suspended")
    except (JournalError, OSError) as err:
        options.events.warn(
            Advisory(
                kind="journal_terminal",
                name=old.run_id,
                message=f'could not journal the end of session "{old.run_id}": {err}',
            )
        )
    try:
        await old.aclose()
    finally:
        setup.journal = RunJournal(journal, run_id=run_id, last_seq=journal.last_seq)
        setup.session_id = run_id
        setup.stats.session_id = run_id
    options.events.session_rotated(old.run_id, run_id)
    return True
