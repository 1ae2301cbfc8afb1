"""The SDK's and uvicorn's log records as one line each on stderr while a server runs.

A client that disconnects mid-call makes the SDK log "Error handling POST request" with a traceback,
and uvicorn a second, chained one: some forty lines on the operator's terminal, where under
`--approve-on-tty` they bury the notice that a question was withdrawn. Each record becomes one
`warning:` line naming the logger, the message and the exception, sanitized like every other log line
(a client's text can be in it). An application that configured logging itself keeps its own handlers.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Generator

from typing_extensions import override

from fiskai_core.sanitize import sanitize_for_display

__all__ = ["library_logs_on_one_line"]

_LOGGERS = ("mcp", "uvicorn")


class _OneLine(logging.Handler):
    @override
    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage().strip()
        error = record.exc_info[1] if record.exc_info else None
        if error is not None:
            text += f" ({type(error).__name__}: {error})" if str(error) else f" ({type(error).__name__})"
        line = sanitize_for_display(f"{record.levelname.lower()}: {record.name}: {text}").replace("\n", "\\n")
        try:
            sys.stderr.write(line + "\n")
            sys.stderr.flush()
        except (OSError, ValueError):  # stderr is gone: nowhere left to say it
            pass


@contextlib.contextmanager
def library_logs_on_one_line() -> Generator[None]:
    """For the duration: WARNING and above from the SDK and uvicorn as one line each, nothing else."""
    if logging.getLogger().handlers:
        yield
        return
    handler = _OneLine(logging.WARNING)
    saved: list[tuple[logging.Logger, bool]] = []
    for name in _LOGGERS:
        logger = logging.getLogger(name)
        saved.append((logger, logger.propagate))
        logger.addHandler(handler)
        logger.propagate = False
    try:
        yield
    finally:
        for logger, propagate in saved:
            logger.removeHandler(handler)
            logger.propagate = propagate
