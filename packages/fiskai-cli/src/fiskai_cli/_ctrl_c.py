"""Ctrl-C stops fiskai even when it was started with SIGINT ignored.

A CI runner, `nohup`, or `cmd &` in a script starts a program with SIGINT ignored, and Python then
never raises KeyboardInterrupt: `knowledge watch` (and any command waiting in plain Python code)
would run on after the operator's Ctrl-C or a supervisor's `kill -INT`. The Go original's
`signal.Notify` un-ignores the signal the same way. SIGHUP is left as inherited: `nohup` means it.
"""

from __future__ import annotations

import signal

__all__ = ["restore_ctrl_c"]


def restore_ctrl_c() -> None:
    """Give SIGINT back Python's KeyboardInterrupt if it was inherited ignored (call from the main thread)."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
