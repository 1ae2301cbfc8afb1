"""Process facts shared by the async command runner and the blocking introspection run.

Both start a child in its own session from an argv, both SIGKILL its whole process group when they
give up on it, and both explain a failed start in the same words.
"""

from __future__ import annotations

import errno
import os
import signal

__all__ = ["SIGNALED_EXIT_CODE", "exit_code", "format_seconds", "kill_group", "start_failure"]

SIGNALED_EXIT_CODE = -1
"""Go's `ExitCode()` for a process a signal killed; Python reports `-signum` instead."""


def exit_code(returncode: int) -> int:
    """A child's exit status as fisk-ai reports it: -1 for death by a signal."""
    return SIGNALED_EXIT_CODE if returncode < 0 else returncode


def format_seconds(seconds: float) -> str:
    """Render a duration as Go prints whole and fractional seconds (`30s`, `0.5s`), to the millisecond."""
    return f"{seconds:.3f}".rstrip("0").rstrip(".") + "s"


def kill_group(pid: int) -> None:
    """SIGKILL the process group led by `pid`; a group that is already gone is fine."""
    try:
        # The child leads its own session, so its pid is also its process group id.
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        # Gone already, or (EPERM) no member may be signaled by us: nothing more can be done from here.
        pass


def start_failure(binary: str, cwd: str | None, error: OSError) -> str:
    """Say why `binary` did not start, in words that point at the fix."""
    if cwd is not None and error.filename == cwd:
        return f'working directory "{cwd}" is unusable: {error.strerror}'
    if error.errno == errno.ENOENT:
        if os.sep not in binary:
            return f'executable "{binary}" not found in PATH; give its full path or add its directory to PATH'
        return f'"{binary}" does not exist; check the application path'
    if error.errno == errno.EACCES:
        if os.path.isdir(binary):
            return f'"{binary}" is a directory, not an executable; point the application path at the binary'
        return f'permission denied: "{binary}" is not executable; make it executable (chmod +x) or fix the path'
    if error.errno == errno.E2BIG:
        return "the arguments are too long for one command line on this system; pass shorter values"
    if error.errno == errno.ENOEXEC:
        return f'"{binary}" is not a program this system can run (exec format error)'
    return f'cannot start "{binary}": {error.strerror or error}'
