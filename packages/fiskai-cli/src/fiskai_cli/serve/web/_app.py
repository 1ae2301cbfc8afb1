"""The routes under `base_path`: the page, both protocols, the card, the session API.

Status codes: 200, 204 (delete), 400 (bad body or id), 401 (token), 403 (Origin or Host), 404, 405
(method), 409 (the conversation is busy or waits for an answer), 413 (over 1 MiB), 500, 503 with
`Retry-After: 5` (draining, or 5 turns running). Errors are JSON `{error, code}`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from importlib import resources
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from fiskai_cli.serve._replay import read_conversation, session_exists
from fiskai_runstate.errors import JournalLockedError

from . import _agui, _vercel
from ._guard import MAX_BODY
from ._ids import session_for, thread_of, valid_thread
from ._turns import RETRY_AFTER, Admission, Refused, Turns, relay

if TYPE_CHECKING:
    from ._questions import Answer, Question

__all__ = ["SSE_HEADERS", "build_app"]

SSE_HEADERS = {
    "cache-control": "no-cache",
    "connection": "keep-alive",
    "x-accel-buffering": "no",
}
_MAX_IDS = 50


class _BadRequest(Exception):
    def __init__(self, status: int, message: str, code: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


def _error(status: int, message: str, code: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message, "code": code}, status_code=status, headers=headers)


async def read_json(request: Request) -> dict[str, Any]:
    """The body as a JSON object, at most 1 MiB however it is sent.

    Raises:
        _BadRequest: over the cap (413) or not a JSON object (400).
    """
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            raise _BadRequest(413, "the body is over 1 MiB", "too_large")
    try:
        value: object = json.loads(body or b"{}")
    except ValueError as err:
        raise _BadRequest(400, f"the body is not JSON: {err}", "bad_request") from None
    if not isinstance(value, dict):
        raise _BadRequest(400, "the body must be a JSON object", "bad_request")
    return value  # pyright: ignore[reportUnknownVariableType]


def build_app(turns: Turns, *, base_path: str, card: Callable[[], dict[str, Any]]) -> Starlette:
    """The ASGI app (the guard wraps it)."""
    base = base_path.rstrip("/")
    api = _Api(turns, card)
    routes = [
        Route(base or "/", api.index, methods=["GET"]),
        Route(f"{base}/", api.index, methods=["GET"]),
        Route(f"{base}/index.html", api.index, methods=["GET"]),
        Route(f"{base}/card", api.card, methods=["GET"]),
        Route(f"{base}/vercel", api.post_vercel, methods=["POST"]),
        Route(f"{base}/vercel/sessions/{{id}}", api.read_vercel, methods=["GET"]),
        Route(f"{base}/agui", api.post_agui, methods=["POST"]),
        Route(f"{base}/agui/sessions/{{id}}", api.read_agui, methods=["GET"]),
        Route(f"{base}/sessions", api.list_sessions, methods=["GET"]),
        Route(f"{base}/sessions/{{id}}", api.delete_session, methods=["DELETE"]),
    ]
    return Starlette(routes=routes)


def _vercel_stream(asked: Any, admitted: Admission) -> AsyncIterator[bytes]:
    return _vercel.stream(relay(admitted), asked.thread)


def _agui_stream(asked: Any, admitted: Admission) -> AsyncIterator[bytes]:
    return _agui.stream(relay(admitted), asked.thread, asked.run_id)


def _interrupt(question: Question) -> dict[str, Any]:
    return {
        "id": question.interrupt_id,
        "reason": question.kind,
        "message": question.text,
        "toolCallId": question.tool_use_id,
        "metadata": question.wire(),
    }


class _Api:
    """The route handlers over the channel's turns and journal store."""

    def __init__(self, turns: Turns, card: Callable[[], dict[str, Any]]) -> None:
        self.turns = turns
        self.identity = turns.identity
        self.store = turns.store
        self._card = card
        self._page = resources.files(__package__ or "fiskai_cli.serve.web").joinpath("static", "index.html")

    async def index(self, request: Request) -> Response:
        del request
        page = self._page.read_bytes()
        return Response(page, media_type="text/html; charset=utf-8", headers={"cache-control": "no-cache"})

    async def card(self, request: Request) -> Response:
        del request
        return JSONResponse(self._card())

    async def post_vercel(self, request: Request) -> Response:
        return await self._post(request, _vercel.parse_request, _vercel_stream, _vercel.HEADERS)

    async def post_agui(self, request: Request) -> Response:
        return await self._post(request, _agui.parse_request, _agui_stream, {})

    async def _post(
        self,
        request: Request,
        parse: Callable[[dict[str, Any]], Any],
        encode: Callable[[Any, Admission], AsyncIterator[bytes]],
        headers: dict[str, str],
    ) -> Response:
        try:
            asked = parse(await read_json(request))
        except _BadRequest as err:
            return _error(err.status, str(err), err.code)
        except (ValueError, KeyError) as err:
            return _error(400, str(err), "bad_request")
        if not valid_thread(asked.thread):
            return _error(400, "the thread id must be 1 to 64 of [A-Za-z0-9_-]", "bad_thread")
        answer: Answer | None = asked.answer
        admitted = await self.turns.admit(asked.thread, asked.text, answer, run_id=getattr(asked, "run_id", ""))
        if isinstance(admitted, Refused):
            retry = {"retry-after": RETRY_AFTER} if admitted.status == 503 else None
            return _error(admitted.status, admitted.message, admitted.code, retry)
        return StreamingResponse(encode(asked, admitted), media_type="text/event-stream", headers=SSE_HEADERS | headers)

    async def _read(self, request: Request) -> tuple[str, list[tuple[str, dict[str, Any]]], Question | None] | Response:
        thread = request.path_params["id"]
        if not valid_thread(thread):
            return _error(400, "the session id must be 1 to 64 of [A-Za-z0-9_-]", "bad_thread")
        session = session_for(self.identity, thread)
        found = await read_conversation(self.store, session, 200)
        if found is None:
            return _error(404, "no such session", "not_found")
        return thread, found[0], await self.turns.waiting(session)

    async def read_vercel(self, request: Request) -> Response:
        read = await self._read(request)
        if isinstance(read, Response):
            return read
        thread, blocks, question = read
        return JSONResponse(
            {
                "id": thread,
                "messages": _vercel.history(blocks, question),
                "question": question.wire() if question else None,
                "running": session_for(self.identity, thread) in self.turns.running,
            }
        )

    async def read_agui(self, request: Request) -> Response:
        read = await self._read(request)
        if isinstance(read, Response):
            return read
        thread, blocks, question = read
        interrupt = _interrupt(question) if question is not None else None
        return JSONResponse({"threadId": thread, "messages": _agui.history(blocks), "interrupt": interrupt})

    async def list_sessions(self, request: Request) -> Response:
        params = request.query_params
        ids = params.getlist("id")
        try:
            limit = int(params.get("limit", "20"))
            offset = int(params.get("cursor", "0") or "0")
        except ValueError:
            return _error(400, "limit and cursor must be numbers", "bad_request")
        if not 1 <= limit <= 100 or offset < 0:
            return _error(400, "limit must be 1 to 100 and cursor one this API gave", "bad_request")
        if len(ids) > _MAX_IDS:
            return _error(400, f"at most {_MAX_IDS} id parameters", "bad_request")
        if any(not valid_thread(thread) for thread in ids):
            return _error(400, "an id must be 1 to 64 of [A-Za-z0-9_-]", "bad_thread")
        rows = [row for row in await self._rows() if not ids or row["id"] in ids]
        if ids:
            return JSONResponse({"sessions": rows, "next_cursor": None})
        more = offset + limit < len(rows)
        return JSONResponse(
            {"sessions": rows[offset : offset + limit], "next_cursor": str(offset + limit) if more else None}
        )

    async def _rows(self) -> list[dict[str, Any]]:
        """This channel's conversations for this agent, newest first."""
        rows: list[dict[str, Any]] = []
        for summary in await self.store.list():
            thread = thread_of(self.identity, summary.run_id)
            if thread is None:
                continue
            # An interrupted run may have ended on a question a restart lost from memory.
            interrupted = summary.status == "error"
            question = (
                await self.turns.waiting(summary.run_id) if interrupted else self.turns.questions.get(summary.run_id)
            )
            status = "running" if summary.run_id in self.turns.running else ("waiting" if question else summary.status)
            rows.append(
                {
                    "id": thread,
                    "title": summary.prompt[:200],
                    "created": summary.created,
                    "updated": summary.updated.isoformat(),
                    "status": status,
                    "question": question.wire() if question else None,
                }
            )
        rows.sort(key=lambda row: row["updated"], reverse=True)
        return rows

    async def delete_session(self, request: Request) -> Response:
        thread = request.path_params["id"]
        if not valid_thread(thread):
            return _error(400, "the session id must be 1 to 64 of [A-Za-z0-9_-]", "bad_thread")
        session = session_for(self.identity, thread)
        if session in self.turns.running:
            return _error(409, "a turn of this conversation is running; wait for its end", "conversation_busy")
        if not await session_exists(self.store, session):
            return _error(404, "no such session", "not_found")
        try:
            await self.store.delete(session)
        except JournalLockedError:
            return _error(409, "the conversation is in use by another worker", "conversation_busy")
        self.turns.questions.pop(session, None)
        return Response(status_code=204)
