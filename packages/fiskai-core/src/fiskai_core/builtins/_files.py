"""`read_file` and `base64_encode`: the opt-in `harness.tools` built-ins (reference 7.4).

`read_file` reads one regular file under a root folder and nothing else. The path is walked one
component at a time from an open descriptor of the root (`openat` with `O_NOFOLLOW`), so what is
checked is what is opened, even if the tree changes during the call:

- a leading `/` is ignored (`/etc/passwd` names `<root>/etc/passwd`); a `..` that would leave the root
  is refused, one that stays inside is followed;
- a symlink is followed only when its target is relative and stays inside the root (an absolute target
  is refused even if it points inside, as the Go agent does); at most 40 links per call;
- only regular files: a directory, device, FIFO or socket is refused before it is opened (a FIFO would
  block, a device may act on open);
- a file over `max_bytes` (default 1 MiB) is refused whole, never cut: a partial file read as whole is
  worse than none. Text that is valid UTF-8 comes back as is, anything else base64-encoded.

A path that names nothing is `{"path", "found": false}`, not an error; a refusal is an error result
saying why, which the model cannot argue with.
"""

from __future__ import annotations

import base64
import os
import posixpath
import stat
from collections import deque
from collections.abc import Sequence
from pathlib import Path

import anyio.to_thread
from pydantic import JsonValue
from typing_extensions import override

from fiskai_core.config import HarnessTool
from fiskai_core.errors import ArgumentsError, ConfigError
from fiskai_core.sanitize import sanitize_for_terminal
from fiskai_core.tools import TAG_CONFIRM, TAG_IDEMPOTENT, CallContext, ToolArguments, ToolResult

from ._base import BuiltinTool, json_result, string_argument

__all__ = [
    "BASE64_ENCODE",
    "READ_FILE",
    "Base64EncodeTool",
    "FileRefused",
    "ReadFileTool",
    "harness_tools",
    "read_confined",
]

READ_FILE = "read_file"
BASE64_ENCODE = "base64_encode"
_MAX_LINKS = 40
_TRACE_RUNES = 200
_O_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_O_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class FileRefused(Exception):
    """`read_file` will not read this path; the message says why, for the model."""


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def read_confined(root: Path, path: str, max_bytes: int) -> bytes | None:
    """The bytes of the regular file `path` names under `root`, or None when nothing is there.

    Raises:
        FileRefused: The path escapes the root, crosses a link the rules refuse, names something other
            than a regular file, or the file is larger than `max_bytes`.
    """
    parts = deque(path.split("/"))
    stack = [os.open(root, _O_DIR)]
    links = 0
    try:
        while parts:
            part = parts.popleft()
            if part in ("", "."):
                continue
            if part == "..":
                if len(stack) == 1:
                    raise FileRefused(f'"{path}" leads outside the readable folder')
                os.close(stack.pop())
                continue
            try:
                info = os.stat(part, dir_fd=stack[-1], follow_symlinks=False)
            except (FileNotFoundError, NotADirectoryError):
                return None
            if stat.S_ISLNK(info.st_mode):
                links += 1
                if links > _MAX_LINKS:
                    raise FileRefused(f'"{path}" goes through more than {_MAX_LINKS} symbolic links')
                target = os.readlink(part, dir_fd=stack[-1])
                if target.startswith("/"):
                    raise FileRefused(
                        f'"{path}" goes through a symbolic link to an absolute path, which is not followed'
                    )
                parts.extendleft(reversed(target.split("/")))
                continue
            if any(p not in ("", ".") for p in parts):
                if not stat.S_ISDIR(info.st_mode):
                    return None
                stack.append(os.open(part, _O_DIR, dir_fd=stack[-1]))
                continue
            return _read_regular(stack[-1], part, info, path, max_bytes)
        raise FileRefused(f'"{path}" is a directory; give the path of a file')
    finally:
        for fd in stack:
            os.close(fd)


def _read_regular(dir_fd: int, name: str, info: os.stat_result, path: str, max_bytes: int) -> bytes:
    if not stat.S_ISREG(info.st_mode):
        raise FileRefused(f'"{path}" is {_kind(info.st_mode)}; only regular files are read')
    if info.st_size > max_bytes:
        raise FileRefused(f'"{path}" is {info.st_size} bytes, over the {max_bytes}-byte limit; it was not read')
    try:
        fd = os.open(name, _O_FILE, dir_fd=dir_fd)
    except OSError as err:  # swapped for a link since the check (ELOOP), or unreadable
        raise FileRefused(f'"{path}" could not be opened: {err.strerror}') from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise FileRefused(f'"{path}" is not a regular file; only regular files are read')
        data = os.read(fd, max_bytes + 1)
        chunks = [data]
        total = len(data)
        while data and total <= max_bytes:
            data = os.read(fd, max_bytes + 1 - total)
            chunks.append(data)
            total += len(data)
    finally:
        os.close(fd)
    if total > max_bytes:  # it grew since the check
        raise FileRefused(f'"{path}" is over the {max_bytes}-byte limit; it was not read')
    return b"".join(chunks)


_READ_SCHEMA: dict[str, JsonValue] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "path": {
            "type": "string",
            "description": "The file's path relative to the readable folder (for example docs/setup.md).",
        }
    },
    "required": ["path"],
}
_ENCODE_SCHEMA: dict[str, JsonValue] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {"text": {"type": "string", "description": "The text to encode (as UTF-8)."}},
    "required": ["text"],
}


def _tags(confirm: bool) -> tuple[str, ...]:
    return (TAG_IDEMPOTENT, TAG_CONFIRM) if confirm else (TAG_IDEMPOTENT,)


class ReadFileTool(BuiltinTool):
    """`read_file` confined to one folder."""

    _name = READ_FILE
    _schema = _READ_SCHEMA

    def __init__(self, root: Path, *, max_bytes: int, confirm: bool = False) -> None:
        """Bind the tool to `root` (an existing folder; resolved once here) and its size cap."""
        self._root = root.resolve()
        self._max_bytes = max_bytes
        self._tags = _tags(confirm)
        self._description = (
            "Read one file from the operator's readable folder by its relative path. Returns "
            '{"path", "found", "size", "encoding", "content"}: content is the text when the file is UTF-8, '
            f"else base64. Only regular files up to {max_bytes} bytes inside that folder are read."
        )

    @property
    def root(self) -> Path:
        """The folder it reads."""
        return self._root

    @override
    def check(self, arguments: ToolArguments) -> None:
        """A non-empty `path` string."""
        _path(arguments)

    @override
    def display(self, arguments: ToolArguments) -> str:
        """`read_file <path>`."""
        path = arguments.values.get("path")
        return f"{self._name} {sanitize_for_terminal(path, _TRACE_RUNES)}" if isinstance(path, str) else self._name

    @override
    async def answer(self, arguments: ToolArguments, context: CallContext) -> ToolResult:
        """Read the file; a refusal is an error result, a miss is `found: false`."""
        path = _path(arguments)
        shown = posixpath.normpath(path.lstrip("/"))
        try:
            data = await anyio.to_thread.run_sync(lambda: read_confined(self._root, path, self._max_bytes))
        except FileRefused as err:
            return ToolResult(output=f"read_file: {err}", is_error=True)
        except OSError as err:
            return ToolResult(output=f'read_file: "{path}" could not be read: {err.strerror}', is_error=True)
        if data is None:
            return json_result({"path": shown, "found": False})
        try:
            content, encoding = data.decode("utf-8"), "utf-8"
        except UnicodeDecodeError:
            content, encoding = base64.b64encode(data).decode("ascii"), "base64"
        return json_result({"path": shown, "found": True, "size": len(data), "encoding": encoding, "content": content})


def _path(arguments: ToolArguments) -> str:
    path = string_argument(READ_FILE, arguments, "path")
    if not path.strip("/ ") or "\x00" in path:
        raise ArgumentsError('invalid read_file input: give {"path": "<relative path of a file>"}')
    return path


class Base64EncodeTool(BuiltinTool):
    """`base64_encode`: standard base64 of a text's UTF-8 bytes."""

    _name = BASE64_ENCODE
    _description = 'Encode text as standard base64 (of its UTF-8 bytes). Returns {"encoded": "<base64>"}.'
    _schema = _ENCODE_SCHEMA

    def __init__(self, *, confirm: bool = False) -> None:
        self._tags = _tags(confirm)

    @override
    def check(self, arguments: ToolArguments) -> None:
        """A `text` string (empty is fine)."""
        if not isinstance(arguments.values.get("text"), str):
            raise ArgumentsError('invalid base64_encode input: give {"text": "<text to encode>"}')

    @override
    async def answer(self, arguments: ToolArguments, context: CallContext) -> ToolResult:
        """The encoding."""
        text = string_argument(BASE64_ENCODE, arguments, "text")
        return json_result({"encoded": base64.b64encode(text.encode("utf-8", "surrogatepass")).decode("ascii")})


def harness_tools(entries: Sequence[HarnessTool], *, folder: Path | None = None) -> list[BuiltinTool]:
    """The `harness.tools` built-ins, in the order listed.

    `read_file`'s `root` is read against `folder` (the configuration file's folder) when relative; unset, it
    is the working directory.

    Raises:
        ConfigError: a `read_file` root that is not an existing folder.
    """
    tools: list[BuiltinTool] = []
    for entry in entries:
        if entry.name == BASE64_ENCODE:
            tools.append(Base64EncodeTool(confirm=entry.confirm))
            continue
        root = Path(entry.root).expanduser() if entry.root else Path.cwd()
        if not root.is_absolute() and folder is not None:
            root = folder / root
        if not root.is_dir():
            raise ConfigError(
                f'harness.tools: read_file root "{root}" is not an existing folder; create it or set options.root '
                "to the folder the model may read"
            )
        tools.append(ReadFileTool(root, max_bytes=entry.max_bytes, confirm=entry.confirm))
    return tools
