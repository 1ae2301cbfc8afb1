"""Keep secrets out of what other processes of the same user can read: environment block and memory (Linux).

A tool runs as the harness's user, so stripping the tool's own environment leaves two doors open:
`/proc/<harness pid>/environ`, which shows the environment block the harness was started with (Python's
`os.environ` is a copy: deleting from it changes nothing there), and the harness's memory
(`/proc/<pid>/mem`, ptrace), which holds the copies the harness works with.

`hide_environment` closes both for the variables a predicate names:

1. Each value is overwritten in place in the block with NUL bytes (the name stays: a reader sees `NAME=`),
   the block found between the `env_start` and `env_end` addresses of `/proc/self/stat`. Before that the
   C library's entry for the variable is moved to a heap copy (`os.putenv`), so `os.environ`, `getenv()`
   and every child built from them see no change. This step is what also defeats root and CAP_SYS_PTRACE,
   which read any process's `/proc` files whatever the next step says.
2. The process becomes non-dumpable (`prctl(PR_SET_DUMPABLE, 0)`): its `/proc/<pid>/environ`, `mem` and
   `maps` then belong to root, so a process of the same user without CAP_SYS_PTRACE can neither read them
   nor ptrace it (this covers the heap copies). No core dump is written. The kernel resets the flag at
   `execve`, so a tool is dumpable as usual.

Elsewhere than Linux `hide_environment` does nothing. What remains exposed is listed in the fiskai-core README
("What a tool cannot read"). ctypes is imported only when there is work to do.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Hidden", "hide_environment"]

_PR_SET_DUMPABLE = 4


@dataclass(frozen=True, slots=True)
class Hidden:
    """What `hide_environment` did."""

    names: tuple[str, ...] = ()
    """The variables whose values were blanked in the environment block, in block order."""
    undumpable: bool = False
    """Whether the process is now non-dumpable."""
    problem: str | None = None
    """Why a step could not be done (one line), or None; always None off Linux, where nothing is done."""


def hide_environment(is_secret: Callable[[str], bool]) -> Hidden:
    """Blank the values of the variables `is_secret` names in this process's environment block; go non-dumpable.

    Idempotent, and cheap to repeat. Call it before starting any child that must not read the values, and
    after reading what the process itself needs: `os.environ` keeps every value either way.

    Args:
        is_secret: Called with each variable name in the block (for example
            `fiskai_core.credentials.credential_matcher()`).
    """
    if not sys.platform.startswith("linux"):
        return Hidden()
    import ctypes  # a few ms: only when there is something to hide

    problems: list[str] = []
    names: tuple[str, ...] = ()
    try:
        names = _blank_values(is_secret)
    except (OSError, ValueError) as err:
        problems.append(f"could not blank secrets in /proc/{os.getpid()}/environ ({err}); a tool could read them there")
    undumpable = False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        zero = ctypes.c_ulong(0)
        if libc.prctl(_PR_SET_DUMPABLE, zero, zero, zero, zero) != 0:
            raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
        undumpable = True
    except (OSError, AttributeError) as err:
        problems.append(f"could not make the process non-dumpable ({err}); a tool could read its memory")
    return Hidden(names=names, undumpable=undumpable, problem="; ".join(problems) or None)


def _blank_values(is_secret: Callable[[str], bool]) -> tuple[str, ...]:
    import ctypes

    start, end = _environ_bounds()
    if end <= start:
        return ()
    block = ctypes.string_at(start, end - start)
    environb = os.environb
    hidden: dict[str, None] = {}
    offset = 0
    for entry in block.split(b"\0"):
        name, eq, value = entry.partition(b"=")
        if eq and name and value and is_secret(os.fsdecode(name)):
            current = environb.get(name)
            if current is not None:
                # getenv() and children started without an explicit environment keep the value, from the heap.
                os.putenv(name, current)
            ctypes.memset(start + offset + len(name) + 1, 0, len(value))
            hidden[os.fsdecode(name)] = None
        offset += len(entry) + 1
    return tuple(hidden)


def _environ_bounds() -> tuple[int, int]:
    """`env_start` and `env_end` (fields 50 and 51 of proc(5)'s /proc/pid/stat; Linux 3.5 and later)."""
    with open("/proc/self/stat", "rb") as handle:
        stat = handle.read()
    # Fields after the command name, which is in parentheses and may itself hold spaces or parentheses.
    fields = stat[stat.rindex(b")") + 2 :].split()
    if len(fields) < 49:
        raise ValueError("/proc/self/stat has no env_start and env_end (Linux before 3.5)")
    return int(fields[47]), int(fields[48])
