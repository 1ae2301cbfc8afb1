"""The journal side of setup: start a new session, or load, fold and check one to resume.

A resumed run gets back its conversation, its next iteration, the batch of tool calls the last turn
left unfinished (with the intents whose results never landed: calls a crash may have interrupted), the
knowledge citations it already delivered, and its counters.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, cast

from fiskai_agent._journal import RunJournal, delivered_citations, new_run_id, open_for_resume
from fiskai_agent._options import SessionPrefix
from fiskai_agent.errors import ResumeRefusedError
from fiskai_agent.events import ResumeInfo
from fiskai_agent.llm import Message, TextBlock, message_from_json
from fiskai_runstate import Fingerprint, JournalNotFoundError, ResumeError, RunState, check_resume, fold
from fiskai_runstate.gate_log import gate_entries
from fiskai_runstate.records import JsonObject, MetaRecord

if TYPE_CHECKING:
    from fiskai_agent._options import RunStats
    from fiskai_agent._prepared import Setup

__all__ = ["DEFAULT_PROMPT", "RESUME_REMINDER", "open_journal"]

DEFAULT_PROMPT = "assist the user"
RESUME_REMINDER = (
    "This session was suspended and has now resumed. Tool results earlier in the conversation may be stale; "
    "re-verify current state before taking any state-changing action."
)


async def open_journal(
    setup: Setup, fingerprint: Fingerprint, *, legacy: Fingerprint | None = None
) -> ResumeInfo | None:
    """Start the run's journal (or none), or resume a session; fills `setup` and returns what was resumed.

    `fingerprint` holds the Go agent's hashes (what a new session records); `legacy` the ones fiskai
    recorded before, which a resume of such a session matches instead.
    """
    options = setup.options
    session = options.session
    prompt = options.prompt.strip() or DEFAULT_PROMPT
    if session is None or not (session.checkpoint or session.resume_id):
        setup.messages = [Message(role="user", content=(TextBlock(text=prompt),))]
        return None
    if session.resume_id:
        return await _resume(setup, fingerprint, session.resume_id, legacy=legacy)
    run_id = session.name or new_run_id()
    meta = MetaRecord(
        run_id=run_id,
        created=datetime.now(UTC).isoformat(),
        fingerprint=fingerprint,
        prompt=prompt,
        interactive=options.interactive,
        agent=session.agent,
        caller=session.caller,
        hooks=session.prompt_hooks,
    )
    journal = await session.store.create(meta)
    setup.journal = RunJournal(journal, run_id=run_id, last_seq=journal.last_seq)
    setup.session_id = run_id
    setup.fingerprint = fingerprint
    setup.stats.session_id = run_id
    setup.messages = [Message(role="user", content=(TextBlock(text=prompt),))]
    return None


async def _resume(setup: Setup, fingerprint: Fingerprint, run_id: str, *, legacy: Fingerprint | None) -> ResumeInfo:
    options = setup.options
    session = options.session
    assert session is not None
    try:
        records = await session.store.load(run_id)
        state = fold(records)
    except JournalNotFoundError:
        raise ResumeRefusedError(f'run not found: "{run_id}"; list sessions with: fiskai session ls') from None
    if state.completed:
        raise ResumeRefusedError(f'session "{run_id}" has already completed and cannot be resumed')
    if state.interactive and not options.interactive:
        raise ResumeRefusedError(f'session "{run_id}" is an interactive chat session; resume it with the chat UI')
    if options.interactive and not state.interactive:
        raise ResumeRefusedError(f'session "{run_id}" was not started as a chat session and cannot be resumed as one')
    try:
        # A session fiskai wrote before it hashed as the Go agent does matches the old hashes instead.
        matched = legacy if legacy is not None and not state.fingerprint.diff(legacy) else fingerprint
        changes = check_resume(state.fingerprint, matched, run_id=run_id, force=session.force)
    except ResumeError as err:
        raise ResumeRefusedError(str(err)) from None
    journal = await open_for_resume(session.store, run_id, force=session.force, events=options.events)
    try:
        messages = [message_from_json(m) for m in state.messages]
    except ValueError as err:
        await journal.aclose()
        raise ResumeRefusedError(f'session "{run_id}" holds a message this version cannot read: {err}') from None
    setup.journal = RunJournal(journal, run_id=run_id, last_seq=journal.last_seq)
    setup.session_id = run_id
    setup.fingerprint = fingerprint
    setup.resumed = True
    if not session.force:  # reference 8.3: "allow for the conversation" is honoured on resume, dropped by --force
        for entry in gate_entries(records):
            if entry.allowed and entry.rule and entry.tool:
                options.gate.restore_session_rule(entry.tool, entry.rule, entry.digest)
    setup.messages = messages
    setup.start_iteration = state.next_iteration
    setup.pending = state.pending
    setup.intents = {intent.tool_use_id: intent for intent in state.intents_without_results}
    setup.system.append(RESUME_REMINDER)
    setup.delivered.update(dict.fromkeys(_delivered(state)))
    _seed_stats(setup.stats, state, run_id)
    setup.last_stop_reason = state.last_stop_reason
    pending_calls = len(state.pending.unanswered) if state.pending is not None else 0
    return ResumeInfo(
        run_id=run_id,
        messages=tuple(messages),
        next_iteration=state.next_iteration,
        pending_calls=pending_calls,
        forced_changes=tuple(change.describe() for change in changes),
        interactive=state.interactive,
    )


def _delivered(state: RunState) -> list[str]:
    """The knowledge citations this session already delivered (journaled beside their results)."""
    results = [result for message in state.messages for result in _tool_results(message)]
    if state.pending is not None:
        results.extend(record.result for record in state.pending.results)
    return delivered_citations(results)


def _tool_results(message: JsonObject) -> list[JsonObject]:
    content = message.get("content")
    blocks = cast("list[object]", content) if isinstance(content, list) else []
    found: list[JsonObject] = []
    for block in blocks:
        inner = cast("JsonObject", block).get("tool_result") if isinstance(block, dict) else None
        if isinstance(inner, dict):
            found.append(inner)
    return found


def _seed_stats(stats: RunStats, state: RunState, run_id: str) -> None:
    counters = state.counters
    stats.session_id = run_id
    stats.llm_calls = counters.llm_calls
    stats.tool_calls = counters.tool_calls
    stats.remote_tool_calls = counters.remote_tool_calls
    stats.input_tokens = counters.in_tokens
    stats.output_tokens = counters.out_tokens
    stats.cache_read_tokens = counters.cache_read_tokens
    stats.cache_create_tokens = counters.cache_create_tokens
    stats.prefix = SessionPrefix(
        llm_calls=counters.llm_calls,
        tool_calls=counters.tool_calls,
        remote_tool_calls=counters.remote_tool_calls,
        input_tokens=counters.in_tokens,
        output_tokens=counters.out_tokens,
        cache_read_tokens=counters.cache_read_tokens,
        cache_create_tokens=counters.cache_create_tokens,
    )
    stats.crashed = state.terminal is None
