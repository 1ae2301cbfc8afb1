"""Read a fisk application's command model by running `<app> --fisk-introspect`.

The binary runs with the scrubbed tool environment (`LLMFORMAT=1` included) in the current directory, in
its own process group, under a time limit (30 s by default) and a 16 MiB cap on its combined output. Its
whole combined output must be one JSON `ApplicationModel` document, so anything it writes to stderr breaks
decoding, as in fisk-ai.

It runs blocking, on purpose: introspection happens once, at start-up, and a plain subprocess keeps the
event loop machinery out of commands like `fiskai info`, whose start-up budget it would otherwise spend.
Async callers wrap it in a worker thread.

Where the binary is found: a name containing a `/` is a path and is used as is (relative to the current
directory); a bare name is looked up on the `PATH` of the environment the binary will run with. Every
failure is an `IntrospectionError` whose message starts `introspecting "<app_path>"` and says what to fix.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Mapping

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from fiskai_core.errors import CommandError, CommandTimeoutError, IntrospectionError
from fiskai_core.exec import format_seconds, tool_env
from fiskai_core.exec.blocking import run_blocking

from ._model import ApplicationModel

__all__ = ["INTROSPECT_FLAG", "MAX_INTROSPECTION_BYTES", "introspect"]

INTROSPECT_FLAG = "--fisk-introspect"
"""The flag fisk applications answer with their command model."""

MAX_INTROSPECTION_BYTES = 16 * 1024 * 1024
"""More combined output than this is refused rather than buffered."""


_SHOWN_LINES = 5
_SHOWN_LINE_CHARS = 200
_SHOWN_ERRORS = 5


def introspect(
    app_path: str | os.PathLike[str],
    *,
    timeout: float = 30.0,
    env: Mapping[str, str] | None = None,
) -> ApplicationModel:
    """Run `app_path --fisk-introspect` and parse its command model.

    Args:
        app_path: The application: a path (anything containing `/`) used as is, or a bare name looked up on
            the `PATH` of the environment.
        timeout: Seconds the binary has to answer.
        env: The environment to start from (for example `tool_env(strip=...)`); the current process
            environment (scrubbed by `tool_env`) when None. The harness's own credentials are removed
            from it again and `LLMFORMAT=1` is always set. Never gets a `PWD` rewrite.

    Returns:
        The parsed application model.

    Raises:
        IntrospectionError: The binary cannot be found or run, times out, exits non-zero, prints more than
            `MAX_INTROSPECTION_BYTES`, or prints something that is not a fisk application model.
    """
    name = os.fspath(app_path)
    # A given environment was scrubbed by its builder (which may pass some names through on purpose);
    # the harness's own credentials are removed again regardless.
    child_env = tool_env() if env is None else tool_env(env, passthrough=tuple(env))
    binary = _locate(name, child_env)
    try:
        captured = run_blocking(
            [binary, INTROSPECT_FLAG], env=child_env, timeout=timeout, limit=MAX_INTROSPECTION_BYTES
        )
    except CommandTimeoutError as error:
        raise IntrospectionError(
            f'introspecting "{name}" timed out after {format_seconds(timeout)}; '
            "the binary must respond within this window"
        ) from error
    except CommandError as error:
        raise IntrospectionError(f'introspecting "{name}": {error.reason}') from error
    code, output = captured.exit_code, captured.output
    if captured.overflowed:
        raise IntrospectionError(
            f'introspecting "{name}" produced more than {MAX_INTROSPECTION_BYTES} bytes; '
            "the binary must emit a bounded introspection document"
        )
    if code != 0:
        raise IntrospectionError(f'introspecting "{name}": {_exit_summary(code)}{_first_lines(output)}')
    return _decode(name, output)


def _locate(name: str, env: Mapping[str, str]) -> str:
    """Find the binary to execute, or say precisely why there is none."""
    if os.sep not in name:
        found = shutil.which(name, path=env.get("PATH", os.defpath))
        if found is None:
            raise IntrospectionError(
                f'introspecting "{name}": no executable named "{name}" on PATH '
                "(a bare name is looked up on PATH); set the application path to the binary's path, "
                "or add its directory to PATH"
            )
        return found
    try:
        mode = os.stat(name).st_mode
    except FileNotFoundError:
        where = "" if os.path.isabs(name) else f' (relative to the current directory "{os.getcwd()}")'
        raise IntrospectionError(
            f'introspecting "{name}": no such file{where}; check application_path in the configuration '
            "(a relative path there is resolved against the config file's folder)"
        ) from None
    except OSError as error:
        raise IntrospectionError(f'introspecting "{name}": cannot read it: {error.strerror}') from error
    if stat.S_ISDIR(mode):
        raise IntrospectionError(
            f'introspecting "{name}": it is a directory, not an executable; point the application path at the binary'
        )
    if not os.access(name, os.X_OK):
        raise IntrospectionError(
            f'introspecting "{name}": permission denied: the file is not executable; '
            f"make it executable (chmod +x {name}) or point the application path at the binary"
        )
    return name


def _exit_summary(exit_code: int) -> str:
    if exit_code == -1:
        summary = "it was killed by a signal"
    else:
        summary = f"it exited with code {exit_code}"
    return f"{summary}; the application must be a fisk application supporting {INTROSPECT_FLAG} (fisk v0.9.0 or newer)"


def _first_lines(output: bytes) -> str:
    """The start of the output, for a message: a few lines, each cut short."""
    text = output.decode("utf-8", errors="replace").strip()
    if not text:
        return "; it printed nothing"
    lines = text.splitlines()
    shown = [line if len(line) <= _SHOWN_LINE_CHARS else line[:_SHOWN_LINE_CHARS] + "..." for line in lines]
    more = f"\n  ... ({len(lines) - _SHOWN_LINES} more lines)" if len(lines) > _SHOWN_LINES else ""
    return "; its output began:\n  " + "\n  ".join(shown[:_SHOWN_LINES]) + more


def _decode(name: str, output: bytes) -> ApplicationModel:
    prefix = f'introspecting "{name}": decoding the introspection document'
    if not output.strip():
        raise IntrospectionError(
            f"{prefix}: it printed nothing; the binary must print its JSON command model for {INTROSPECT_FLAG}"
        )
    try:
        return ApplicationModel.model_validate_json(output)
    except ValidationError as error:
        details = error.errors(include_url=False, include_input=False)
        if any(detail["type"] == "json_invalid" for detail in details):
            reason = "; ".join(detail["msg"] for detail in details)
            raise IntrospectionError(
                f"{prefix}: the output is not JSON ({reason}); the binary must print exactly one JSON document "
                f"and nothing else, on stdout or stderr{_first_lines(output)}"
            ) from None
        raise IntrospectionError(
            f"{prefix}: the JSON is not a fisk application model ({_summarize(details)}); "
            "is the binary built with fisk?"
        ) from None


def _summarize(details: list[ErrorDetails]) -> str:
    """A short list of `where: what` for the first few validation errors; no pydantic dump."""
    parts = [f"{_where(detail['loc'])}: {detail['msg']}" for detail in details[:_SHOWN_ERRORS]]
    if len(details) > _SHOWN_ERRORS:
        parts.append(f"and {len(details) - _SHOWN_ERRORS} more")
    return "; ".join(parts)


def _where(loc: tuple[int | str, ...]) -> str:
    if not loc:
        return "the document"
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc).lstrip(".")
