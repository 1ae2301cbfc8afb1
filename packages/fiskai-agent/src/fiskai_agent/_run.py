"""`run`: setup, the loop, the terminal record, and the barrier that turns a bug into a reported error."""

from __future__ import annotations

import dataclasses
import time
import traceback
from typing import cast

import anyio

from fiskai_agent._options import RunOptions, RunResult, RunStats
from fiskai_agent._pii import PromptRefused, check_scanner, guard_prompt
from fiskai_agent._prepared import Setup
from fiskai_agent._prompt_hooks import checked_follow_up, checked_prompt
from fiskai_agent._rotate import resumed_at_input, rotate_session
from fiskai_agent._runner import Outcome, Runner
from fiskai_agent._setup import prepare
from fiskai_agent._turns import Turns
from fiskai_agent.errors import AgentError
from fiskai_agent.events import Advisory
from fiskai_core.hooks import Deny
from fiskai_runstate import JournalError
from fiskai_runstate.errors import JournalLockedError

__all__ = ["INTERNAL_ERROR", "run", "run_sync"]

INTERNAL_ERROR = "internal error: fiskai crashed (a bug, not a model or tool failure); please report it"
_ABORTED = "the run was interrupted by the operator"


async def run(options: RunOptions) -> RunResult:
    """Run the agent once (or resume a session) and report how it ended.

    Setup happens in the reference order (6.1): tools and built-ins, name clashes, the gate, the
    provider, tool deferral, the system blocks, then the journal (create, or load, fold and check the
    fingerprint). The loop then runs until a final answer, a budget, the iteration cap, an error, a
    suspend request (checkpointed runs, at a loop boundary) or `RunControl.abort`.

    Args:
        options: Everything the run needs (see `RunOptions`).

    Returns:
        The outcome; model and tool failures are outcomes (`reason="error"`), not exceptions.

    Raises:
        SetupError: The run cannot start (bad base URL, no tools, a name clash, no credentials, ...).
        ResumeRefusedError: The session cannot be resumed (completed, drifted without `force`, ...).
        fiskai_runstate.JournalError: The session store failed before the loop started.
        fiskai_runstate.errors.JournalClaimedError: Another worker took the session over (a journal claim); the
            run stopped before its next record, so before its next tool call.
        fiskai_runstate.errors.JournalLockedError: Another writer appended to the session mid-run (a backend
            without locks); the run stopped the same way.
    """
    started = time.monotonic()
    check_scanner(options.pii_mode)
    if options.hooks.user_prompt_submit:
        checked = await checked_prompt(options)
        if isinstance(checked, Deny):
            return _refused(options, started, f"prompt denied by policy: {checked.reason}")
        options = checked
    resuming = options.session is not None and options.session.resume_id is not None
    if not resuming:
        # The PII guard wraps the prompt hook: it sees the prompt the hooks leave (reference 7.1). A served
        # conversation's next turn is guarded in `_loop`, as a chat's follow-ups are.
        guarded = guard_prompt(options.pii_mode, options.prompt, options.events)
        if isinstance(guarded, PromptRefused):
            return _refused(options, started, guarded.message)
        options = dataclasses.replace(options, prompt=guarded)
    try:
        setup = await prepare(options)
    except (AgentError, JournalError):
        raise
    # The panic barrier covers setup too: a bug is reported, never shown as a traceback.
    except Exception as err:  # noqa: BLE001
        options.events.panicked(err, traceback.format_exc())
        stats = RunStats(model=options.llm.model, elapsed=time.monotonic() - started)
        return RunResult(reason=None, answer="", error=INTERNAL_ERROR, stats=stats, internal_error=True)
    stats = setup.stats
    try:
        outcome = await _loop(setup)
    # The panic barrier: a bug must end the run with a report, never a traceback in the operator's face.
    except Exception as err:  # noqa: BLE001
        held = _held(err)
        if held is not None:
            # Another worker took the session over (a claim) or wrote to it: write nothing more, let the journal
            # go, and say so; the caller decides (a channel reports `taken_over` or `conversation_busy`).
            await _finish(setup, None)
            raise held from None
        options.events.panicked(err, traceback.format_exc())
        await _finish(setup, Outcome("error", INTERNAL_ERROR))
        stats.elapsed = time.monotonic() - started
        return RunResult(
            reason=None, answer="", error=INTERNAL_ERROR, stats=stats, session_id=setup.session_id, internal_error=True
        )
    await _finish(setup, outcome)
    stats.elapsed = time.monotonic() - started
    stats.suspended = outcome.reason == "suspended"
    return RunResult(
        reason=outcome.reason,
        answer=outcome.answer,
        error=outcome.error,
        stats=stats,
        session_id=setup.session_id,
    )


def _refused(options: RunOptions, started: float, error: str) -> RunResult:
    """A prompt refused before the run began: nothing was sent and nothing journaled."""
    stats = RunStats(model=options.llm.model, elapsed=time.monotonic() - started)
    return RunResult(reason="error", answer="", error=error, stats=stats)


async def _loop(setup: Setup) -> Outcome:
    control = setup.options.control
    with anyio.CancelScope() as scope:
        if control is not None:
            control._attach(scope)  # pyright: ignore[reportPrivateUsage]
        runner = Runner(setup)
        turns = Turns(setup)
        session = setup.options.session
        refused: Outcome | None = None
        if session is not None and session.resume_id and session.follow_up:
            # A served conversation's next turn arrives with the resume, not from `next_prompt`.
            text = _guarded(setup, session.follow_up)
            if isinstance(text, Outcome):
                refused = text
            else:
                await runner.follow_up(text, reset=False, hooks=session.prompt_hooks)
        ask = setup.options.next_prompt
        # A chat resumed at an input boundary asks first: its last turn was already answered.
        if refused is not None:
            outcome = refused
        elif ask is not None and resumed_at_input(setup):
            outcome = Outcome("completed")
        else:
            outcome = await turns.run(runner.loop)
        rotate = False
        # A chat (reference 6.6): after an answer, a failed turn or the cap, the operator may go on.
        while ask is not None and outcome.reason in ("completed", "max_iterations", "error"):
            follow = await ask(outcome.error)
            if follow is None:
                ended = "suspended" if setup.journal.active else "completed"
                return Outcome(ended, answer=outcome.answer if outcome.reason == "completed" else "")
            reset = follow.reset
            if reset and setup.journal.active:
                # A journaled chat keeps its session until there is a prompt to start the next one with.
                rotate, reset = True, False
            if not follow.text.strip():
                if reset:
                    runner.clear()
                continue
            checked = await checked_follow_up(setup, follow.text)
            text = (
                Outcome("error", f"prompt denied by policy: {checked.reason}")
                if isinstance(checked, Deny)
                else _guarded(setup, checked[0])
            )
            if isinstance(text, Outcome):
                # Refused before it entered the conversation: the operator sees why and may type again.
                outcome = text
                continue
            decided = checked[1] if not isinstance(checked, Deny) else ()
            if rotate and await rotate_session(setup, text, decided):
                runner.restart(text)
            else:
                await runner.follow_up(text, reset=reset, hooks=decided)
            rotate = False
            outcome = await turns.run(runner.loop)
        return outcome
    return Outcome("error", _ABORTED)


def _held(err: BaseException) -> JournalLockedError | None:
    """The journal-held error behind `err` (a claim, or a rival writer's record), also from inside a task group."""
    while isinstance(err, BaseExceptionGroup):
        group = cast("BaseExceptionGroup[BaseException]", err)
        if not group.exceptions:
            break
        err = group.exceptions[0]
    return err if isinstance(err, JournalLockedError) else None


def _guarded(setup: Setup, text: str) -> str | Outcome:
    """A follow-up prompt past the PII guard, or the turn's refusal (`reject` mode)."""
    guarded = guard_prompt(setup.options.pii_mode, text, setup.options.events)
    return Outcome("error", guarded.message) if isinstance(guarded, PromptRefused) else guarded


async def _finish(setup: Setup, outcome: Outcome | None) -> None:
    """Journal the terminal record (none when taken over) and release what the run opened, even while cancelled."""
    with anyio.CancelScope(shield=True):
        try:
            if setup.journal.active and outcome is not None:
                try:
                    await setup.journal.terminal(outcome.reason, outcome.error)
                except JournalLockedError:
                    pass  # the worker that took the session over writes its end
                except OSError as err:
                    setup.options.events.warn(
                        Advisory(kind="journal_terminal", message=f"could not journal the end of the run: {err}")
                    )
            await setup.journal.aclose()
        finally:
            if setup.owns_provider:
                await setup.provider.aclose()


def run_sync(options: RunOptions) -> RunResult:
    """`run` from synchronous code (starts its own event loop)."""
    return anyio.run(run, options)
