"""`user_prompt_submit` on every prompt that enters a conversation (reference 7.1).

The first prompt and a served conversation's next turn (`SessionOptions.follow_up`) are checked before
setup, so a denied one opens no session; a chat's follow-ups as they are typed. The PII guard runs after
the hooks, on the prompt they leave. Each decision is journaled with the prompt it judged (the meta
record for a session's first prompt, the user record for a later one); with the PII guard on, the texts
a rewrite decision keeps (`original`, `rewritten`) are redacted too, so the journal never holds what the
guard took out of the conversation.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from fiskai_core.hooks import Decisions, Deny, PromptSubmit, user_prompt_submit

if TYPE_CHECKING:
    from fiskai_agent._options import RunOptions
    from fiskai_agent._prepared import Setup
    from fiskai_core.pii import PiiMode
    from fiskai_runstate.records import JsonObject

__all__ = ["checked_prompt", "checked_follow_up"]


def _journal_form(records: list[JsonObject], mode: PiiMode) -> tuple[JsonObject, ...]:
    if mode == "off":
        return tuple(records)
    from fiskai_core.pii import guard

    out: list[JsonObject] = []
    for record in records:
        copy = dict(record)
        for key in ("original", "rewritten"):
            text = copy.get(key)
            if isinstance(text, str):
                copy[key] = guard(text, "redact").text
        out.append(copy)
    return tuple(out)


async def checked_prompt(options: RunOptions) -> RunOptions | Deny:
    """The options with the prompt this run starts with as the hooks leave it, or their denial.

    That is the first prompt, or a served conversation's next turn (`follow_up`); a plain resume's prompt
    was checked when its session began. The decisions ride on the session options to be journaled.
    """
    session = options.session
    resuming = session is not None and session.resume_id is not None
    text = session.follow_up if session is not None and resuming else options.prompt
    if resuming and not text:
        return options
    decisions = Decisions()
    session_id = (session.resume_id or "") if session is not None else ""
    decided = await user_prompt_submit(options.hooks, PromptSubmit(prompt=text, session_id=session_id), decisions)
    if isinstance(decided, Deny):
        return decided
    if session is not None:
        update = {"follow_up": decided.prompt} if resuming else {}
        journaled = _journal_form(decisions.records, options.pii_mode)
        session = dataclasses.replace(session, prompt_hooks=journaled, **update)
    return dataclasses.replace(options, session=session, prompt=options.prompt if resuming else decided.prompt)


async def checked_follow_up(setup: Setup, text: str) -> tuple[str, tuple[JsonObject, ...]] | Deny:
    """A chat's next turn as the hooks leave it, with their decisions (journal form), or their denial."""
    options = setup.options
    if not options.hooks.user_prompt_submit:
        return text, ()
    decisions = Decisions()
    submitted = PromptSubmit(prompt=text, session_id=setup.session_id or "")
    decided = await user_prompt_submit(options.hooks, submitted, decisions)
    if isinstance(decided, Deny):
        return decided
    return decided.prompt, _journal_form(decisions.records, options.pii_mode)
