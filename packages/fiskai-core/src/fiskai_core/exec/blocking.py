"""Run a command from an argv without an event loop, for discovery at start-up (`--fisk-introspect`).

The same safety as `run_argv`: no shell, stdin from `/dev/null`, stdout and stderr on one pipe, its own
session and process group. It differs where discovery needs it: it blocks (a plain subprocess keeps the
event-loop machinery out of commands like `fiskai info`, whose start-up budget it would otherwise spend;
async callers use a worker thread), and it refuses more than `limit` bytes instead of keeping a head and
a tail, since a description is useless cut.

On the time limit or the cap the whole process group gets SIGKILL, and so does whatever the command left
in its group when it exits. After the command exits, reading goes on for at most `wait_delay` seconds, in
case something that escaped the group (its own `setsid`) still holds the pipe.
"""

from __future__ import annotations

import os
import selectors
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from fiskai_core.errors import CommandStartError, CommandTimeoutError

from ._process import exit_code, format_seconds, kill_group, start_failure

__all__ = ["BlockingOutcome", "run_blocking"]

_POLL = 0.1
"""How often a blocked read also checks whether the command has exited."""


@dataclass(frozen=True, slots=True, kw_only=True)
class BlockingOutcome:
    """A command that ran to its end (or to the output cap)."""

    exit_code: int
    """The exit status; -1 when a signal killed it (including the kill at the cap)."""
    output: bytes
    """Combined stdout and stderr, at most `limit` bytes."""
    overflowed: bool = False
    """True when the command wrote more than `limit` bytes; it was killed and `output` is incomplete."""


def run_blocking(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    timeout: float,
    limit: int,
    wait_delay: float = 10.0,
    cwd: str | None = None,
) -> BlockingOutcome:
    """Run `argv` to completion, blocking, and return its exit code and combined output.

    Args:
        argv: The binary (a path; no PATH lookup is promised) followed by its arguments.
        env: The complete environment of the child (build it with `tool_env`).
        timeout: Seconds the command may run.
        limit: The most output bytes kept; more kills the command and sets `overflowed`.
        wait_delay: Seconds to keep reading after the command exited.
        cwd: The child's working directory; the current one when None.

    Raises:
        CommandStartError: The binary cannot be started.
        CommandTimeoutError: `timeout` ran out; the process group was killed.
    """
    try:
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=dict(env),
            cwd=cwd,
            start_new_session=True,
        )
    except OSError as error:
        raise CommandStartError(argv[0], start_failure(argv[0], cwd, error)) from error
    assert proc.stdout is not None, "the output pipe is requested above"
    data = bytearray()
    overflowed = False
    deadline = time.monotonic() + timeout
    exited_by: float | None = None
    try:
        with selectors.DefaultSelector() as selector:
            selector.register(proc.stdout, selectors.EVENT_READ)
            while True:
                now = time.monotonic()
                if now >= deadline:
                    kill_group(proc.pid)
                    proc.wait()
                    raise CommandTimeoutError(argv[0], f"timed out after {format_seconds(timeout)}")
                if exited_by is None and proc.poll() is not None:
                    # Whatever the command left in its group dies with it; only a process that left the group
                    # can keep the pipe open, and then for at most `wait_delay`.
                    kill_group(proc.pid)
                    exited_by = now + wait_delay
                if exited_by is not None and now >= exited_by:
                    break
                if not selector.select(min(deadline - now, _POLL)):
                    continue
                chunk = os.read(proc.stdout.fileno(), 65536)
                if not chunk:
                    break
                if len(data) + len(chunk) > limit:
                    overflowed = True
                    kill_group(proc.pid)
                    break
                data += chunk
    finally:
        proc.stdout.close()
    try:
        returncode = proc.wait(timeout=max(deadline - time.monotonic(), 0.0))
    except subprocess.TimeoutExpired:
        kill_group(proc.pid)
        returncode = proc.wait()
    return BlockingOutcome(exit_code=exit_code(returncode), output=bytes(data), overflowed=overflowed)
