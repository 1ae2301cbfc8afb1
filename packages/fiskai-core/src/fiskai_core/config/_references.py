"""`${VAR}` and `${file:PATH}` references in `mcp_clients` values (`env`, `headers`, `url`).

Parsing checks syntax only and reads nothing, so `fiskai info` and `fiskai mcp` work on hosts without
the credentials; `resolve_references` reads the variables and files when a server connects. `$NAME`
without braces is literal text. A `${file:PATH}` runs to the first `}` (a path holding `}` cannot be
written), drops trailing whitespace, must not be empty, and resolves a relative PATH under the
configuration's folder.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from fiskai_core.errors import FiskaiError

__all__ = ["UnresolvedReferenceError", "Resolved", "check_references", "resolve_references"]

_REFERENCE = re.compile(r"\$\{([^}]*)\}")
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class UnresolvedReferenceError(FiskaiError):
    """A reference could not be resolved (unset variable, unreadable or empty file); names it."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Resolved:
    """A value with its references replaced, and every value a reference produced (for redaction)."""

    text: str
    secrets: tuple[str, ...] = ()


def check_references(value: str) -> str | None:
    """What is wrong with the references in `value`, or None; reads no variable and no file."""
    for match in _REFERENCE.finditer(value):
        body = match.group(1)
        if body.startswith("file:"):
            if not body[len("file:") :].strip():
                return f"reference {match.group(0)!r} names no file; write ${{file:/path/to/secret}}"
        elif not _VARIABLE.fullmatch(body):
            return (
                f"reference {match.group(0)!r} is not a variable name; write ${{NAME}} (letters, digits, _) "
                "or ${file:PATH}"
            )
    rest = _REFERENCE.sub("", value)
    if "${" in rest:
        return "a reference opened with ${ is never closed with }; close it, or write the text without ${"
    return None


def resolve_references(
    value: str, *, root: Path | None, server: str, environ: Mapping[str, str] | None = None
) -> Resolved:
    """Replace every reference in `value`.

    Args:
        value: The value as written.
        root: Where a relative `${file:PATH}` resolves (the configuration's folder); the working directory
            when None.
        server: The `mcp_clients` entry, named in errors.
        environ: The variables to read; the process environment when None.

    Raises:
        UnresolvedReferenceError: a variable is unset, or a file cannot be read or is empty.
    """
    env = os.environ if environ is None else environ
    secrets: list[str] = []

    def replace(match: re.Match[str]) -> str:
        body = match.group(1)
        if body.startswith("file:"):
            text = _read_file(body[len("file:") :], root=root, server=server)
        else:
            found = env.get(body)
            if found is None:
                raise UnresolvedReferenceError(
                    f'mcp_clients server "{server}": environment variable {body} is not set; set it or change the '
                    "reference"
                )
            text = found
        secrets.append(text)
        return text

    text = _REFERENCE.sub(replace, value)
    return Resolved(text=text, secrets=tuple(secrets))


def _read_file(written: str, *, root: Path | None, server: str) -> str:
    path = Path(written)
    if not path.is_absolute():
        path = (root or Path.cwd()) / path
    try:
        content = path.read_text(encoding="utf-8")
    except OSError as err:
        raise UnresolvedReferenceError(
            f'mcp_clients server "{server}": cannot read file "{path}" named by ${{file:{written}}}: '
            f"{err.strerror or err}"
        ) from None
    except UnicodeDecodeError:
        raise UnresolvedReferenceError(f'mcp_clients server "{server}": file "{path}" is not UTF-8 text') from None
    content = content.rstrip()
    if not content:
        raise UnresolvedReferenceError(f'mcp_clients server "{server}": file "{path}" is empty; put the value in it')
    return content
