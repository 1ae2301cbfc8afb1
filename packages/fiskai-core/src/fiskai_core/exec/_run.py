"""Run a command from an argv, safely: no shell, no stdin, one output pipe, its own process group.

The argv comes from model-supplied JSON, so it is executed directly and never handed to a shell. The child
reads `/dev/null`, and its stdout and stderr share one pipe so the combined output keeps the order the
command wrote it in. It leads a new session (and so a new process group): on a timeout or cancellation the
whole group, grandchildren included, gets SIGKILL.

Outcomes versus errors: any exit, including a non-zero one or death by a signal, is an `ExecOutcome`. A
binary that cannot start raises `CommandStartError`; running out of `timeout` kills the group and raises
`CommandTimeoutError`; cancellation by the caller kills the group and propagates. Both errors render as
fisk-ai's in-band text `running command "<path>": <reason>`.

When the command exits, whatever it left running in its process group is killed too (a backgrounded
child would otherwise hold the output pipe and outlive the call). Emulating Go's `Cmd.WaitDelay` for a
process that escaped the group (its own `setsid`): once the command has exited (or been killed), reading
continues for at most `wait_delay` seconds, then the pipe is closed and whatever was read is the output.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import anyio
import anyio.abc

from fiskai_core.errors import CommandStartError, CommandTimeoutError

from ._output import HeadTailCapture
from ._process import exit_code, format_seconds, kill_group, start_failure

__all__ = ["DEFAULT_WAIT_DELAY", "ExecOutcome", "OutputSink", "run_argv", "run_to_sink"]

DEFAULT_WAIT_DELAY = 10.0
"""Seconds to keep reading output after the command exited or was killed (Go's `WaitDelay`)."""


class OutputSink(Protocol):
    """Where a command's combined output goes, chunk by chunk, as it arrives."""

    def write(self, data: bytes) -> bool:
        """Take a chunk. Return False to stop the command: its process group is killed, reading stops."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class ExecOutcome:
    """A command that ran and exited, whatever its exit code."""

    exit_code: int
    """The exit status; -1 when a signal fiskai did not send killed it."""
    output: str
    """Combined stdout and stderr, capped (see `MAX_TOOL_OUTPUT_BYTES`), invalid UTF-8 replaced."""
    truncated: bool = False
    """True when the middle of the output was dropped by the cap."""


async def run_argv(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: str | None = None,
    # A parameter, not the caller's fail_after: running out of it is an in-band result with its own text
    # (CommandTimeoutError), which a cancel scope around the call could not tell from the caller's own deadline.
    timeout: float | None = None,  # noqa: ASYNC109
    wait_delay: float = DEFAULT_WAIT_DELAY,
) -> ExecOutcome:
    """Run `argv` to completion and return its exit code and capped combined output.

    Args:
        argv: The binary followed by its arguments, passed to `execve` as is; a bare name is looked up on
            the `PATH` of `env`.
        env: The complete environment of the child (build it with `tool_env`).
        cwd: The child's working directory; the current one when None.
        timeout: Seconds the command may run; no limit when None.
        wait_delay: Seconds to keep reading output after the command exited or was killed.

    Returns:
        The outcome; a non-zero exit is a normal outcome.

    Raises:
        CommandStartError: The binary is missing or not executable, or `cwd` is unusable.
        CommandTimeoutError: `timeout` ran out; the process group was killed.
    """
    capture = HeadTailCapture()
    exit_code = await run_to_sink(argv, env=env, cwd=cwd, timeout=timeout, wait_delay=wait_delay, sink=capture)
    captured = capture.result()
    return ExecOutcome(exit_code=exit_code, output=captured.text(), truncated=captured.truncated)


async def run_to_sink(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    sink: OutputSink,
    cwd: str | None = None,
    # A parameter for the same reason as in run_argv.
    timeout: float | None = None,  # noqa: ASYNC109
    wait_delay: float = DEFAULT_WAIT_DELAY,
) -> int:
    """Run `argv` with its combined output streamed into `sink`; the engine under `run_argv`.

    Returns:
        The exit code (-1 when killed by a signal, including the kill that follows a sink refusing data).

    Raises:
        CommandStartError: The binary is missing or not executable, or `cwd` is unusable.
        CommandTimeoutError: `timeout` ran out; the process group was killed.
    """
    if not argv:
        raise ValueError("run_to_sink needs a non-empty argv")
    process = await _start(argv, env=env, cwd=cwd)
    finished = False
    returncode: int | None = None
    try:
        async with anyio.create_task_group() as tasks:
            pumped = anyio.Event()
            tasks.start_soon(_pump, process, sink, pumped)
            with anyio.move_on_after(timeout):
                returncode = await process.wait()
            # The leader is gone either way: whatever it left in its group (a backgrounded child holding
            # the pipe) dies with it, as on a timeout, so a normal exit never waits out `wait_delay`. The
            # leader is reaped by now, but its pid stays reserved while it names the session and group of
            # any survivor, so the signal cannot reach an unrelated process group.
            kill_group(process.pid)
            if returncode is not None:
                # Drain what is already in the pipe; only a process that left the group (setsid) can make
                # this wait, and then for at most `wait_delay`.
                with anyio.move_on_after(wait_delay):
                    await pumped.wait()
            # Timed out: the output is dropped with the error, so teardown closes the pipe without draining.
            # Give up on I/O: the pump may still wait on a pipe an escaped grandchild holds.
            tasks.cancel_scope.cancel()
        finished = True
    finally:
        if not finished:
            # Canceled from outside (or failing): the group must not outlive the caller's interest.
            kill_group(process.pid)
        await _close(process, wait_delay)
    if returncode is None:
        raise CommandTimeoutError(argv[0], f"timed out after {format_seconds(timeout or 0.0)}")
    return exit_code(returncode)


async def _start(argv: Sequence[str], *, env: Mapping[str, str], cwd: str | None) -> anyio.abc.Process:
    binary = argv[0]
    try:
        return await anyio.open_process(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            env=dict(env),
            start_new_session=True,
        )
    except OSError as error:
        raise CommandStartError(binary, start_failure(binary, cwd, error)) from error
    except ValueError as error:
        # `execve` takes NUL-terminated strings; Python refuses an argv or environment holding a NUL.
        raise CommandStartError(binary, "an argument contains a NUL byte, which no command line can carry") from error


async def _pump(process: anyio.abc.Process, sink: OutputSink, done: anyio.Event) -> None:
    """Feed the output pipe into `sink` until EOF, or kill the group when the sink refuses more."""
    stream = process.stdout
    assert stream is not None, "the output pipe is always requested in _start"
    try:
        async for chunk in stream:
            if not sink.write(chunk):
                kill_group(process.pid)
                return
    finally:
        done.set()


async def _close(process: anyio.abc.Process, wait_delay: float) -> None:
    """Close the pipe and reap the child; shielded so teardown completes even when canceled."""
    with anyio.CancelScope(shield=True):
        with anyio.move_on_after(wait_delay):
            # aclose() closes our end of the pipe (an escaped grandchild then gets SIGPIPE) and reaps the child.
            await process.aclose()
