"""`run`: setup, the loop, and the barrier that turns a bug into a reported internal error."""

from __future__ import annotations

import anyio

from fiskai_agent._options import RunOptions, RunResult

__all__ = ["run", "run_sync"]


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
    """
    raise NotImplementedError("the loop lands in the next commit")


def run_sync(options: RunOptions) -> RunResult:
    """`run` from synchronous code (starts its own event loop)."""
    return anyio.run(run, options)
