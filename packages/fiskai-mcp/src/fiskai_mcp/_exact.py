"""A `tools/call`'s arguments exactly as the client wrote them (numbers keep their text).

The SDK parses each message into Python values, so `1.50` would reach the command as `1.5` and `1e2`
as `100.0`. fiskai reads the same bytes once more where they arrive, before the SDK, decoding a
`tools/call`'s body once with its numbers kept (`fiskai_core.tools.loads_exact`), and hands the handler
that decoded `arguments` object: over HTTP in the request's ASGI scope state, which the SDK's request
object shares; over stdio in a table by JSON-RPC id, filled by the line reader. A call that arrives
another way (an in-memory client) has its SDK-parsed arguments used, numbers as Python writes them.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping
from contextvars import ContextVar
from typing import Any, cast

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from fiskai_core.tools import DecodedValue, JsonNumber, ToolArguments, arguments_from_value, exact_of, loads_exact

__all__ = ["EXACT_STDIN", "ExactArguments", "ExactStdin", "exact_arguments"]

EXACT_STDIN: ContextVar[ExactStdin | None] = ContextVar("fiskai_mcp_exact_stdin", default=None)
"""The stdio reader of the server being run in this context (handlers inherit it), if it serves stdio."""
_STATE_KEY = "fiskai.exact_arguments"
_MARK = b'"tools/call"'


def _call_arguments(body: bytes) -> tuple[object, DecodedValue] | None:
    """The JSON-RPC id and the decoded `params.arguments` of a `tools/call` body, if it is one."""
    if _MARK not in body:  # most messages are not calls: no decode for them
        return None
    try:
        document = loads_exact(body)
    except ValueError:
        return None  # the SDK answers a malformed body itself
    if not isinstance(document, dict) or document.get("method") != "tools/call":
        return None
    params = document.get("params")
    arguments = params.get("arguments") if isinstance(params, dict) else None
    request_id = document.get("id")
    # The SDK hands handlers the id as it parsed it: a number as an int, a string as itself.
    if isinstance(request_id, JsonNumber):
        try:
            return int(request_id.text), arguments
        except ValueError:
            return None  # not an id the SDK accepts either
    return request_id, arguments


class ExactArguments:
    """ASGI middleware: a `tools/call` POST's exact arguments in the request's scope state."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self._app(scope, receive, send)
            return
        chunks: list[bytes] = []
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                # The client went away before its body arrived: nothing to keep, nothing to serve.
                return
            chunks.append(cast("bytes", message.get("body", b"")))
            more = bool(message.get("more_body", False))
        body = b"".join(chunks)
        found = _call_arguments(body)
        if found is not None:
            scope.setdefault("state", {})[_STATE_KEY] = found[1]
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self._app(scope, replay, send)


class ExactStdin:
    """Lines from a stdio client, passed on as read; a `tools/call`'s exact arguments kept by id.

    Takes fd 0 over as the SDK's own stdio transport does (a private duplicate for reading, fd 0 pointed
    at the null device), so a command started by a tool reads end of file, never the protocol.
    """

    def __init__(self) -> None:
        self.by_id: dict[object, DecodedValue] = {}
        private = os.dup(0)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        self._saved = private
        self._file = anyio.wrap_file(os.fdopen(os.dup(private), "r", encoding="utf-8", errors="replace"))

    def restore(self) -> None:
        """Point fd 0 back at the client (after serving)."""
        os.dup2(self._saved, 0)
        os.close(self._saved)

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        async for line in self._file:
            found = _call_arguments(line.encode("utf-8", "replace"))
            if found is not None:
                self.by_id[found[0]] = found[1]
            yield line

    async def aclose(self) -> None:
        """Close the reading side."""
        await self._file.aclose()


def exact_arguments(
    ctx_request: object, request_id: object, parsed: Mapping[str, Any] | None, stdin: ExactStdin | None
) -> ToolArguments:
    """The call's arguments: as the client wrote them when the transport kept them, else as the SDK parsed them.

    Raises:
        ArgumentsError: they are not an object.
    """
    scope = getattr(ctx_request, "scope", None)
    state = cast("dict[str, object]", scope).get("state") if isinstance(scope, dict) else None
    if isinstance(state, dict) and _STATE_KEY in state:
        return arguments_from_value(cast("dict[str, DecodedValue]", state).pop(_STATE_KEY))
    if stdin is not None and request_id in stdin.by_id:
        return arguments_from_value(stdin.by_id.pop(request_id))
    return arguments_from_value(exact_of(dict(parsed) if parsed is not None else {}))
