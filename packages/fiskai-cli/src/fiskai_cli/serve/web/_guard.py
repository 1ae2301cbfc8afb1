"""The checks before any route: the loopback Host rule, Origin, the optional bearer token, the body cap.

* Host: on a loopback bind the Host header must be `127.0.0.1`, `[::1]` or `localhost` on the bound
  port (DNS rebinding). A non-loopback bind checks no Host.
* Origin: a request carrying an Origin must name one of `origins` (403 otherwise). On a loopback bind the
  listener's own loopback origins are allowed too, so the built-in page works; a request without an
  Origin (curl, a server) passes.
* Token (`--token-env`, beyond the reference): every route but the page itself needs
  `Authorization: Bearer <token>` (401).
* Bodies over 1 MiB get 413, by Content-Length or while reading.
* CORS: a page on an allowed origin gets `Access-Control-Allow-Origin` on every answer and its preflight
  (`OPTIONS`) answered, so it can call the API from another origin.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Sequence
from typing import Final

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["MAX_BODY", "Guard"]

MAX_BODY: Final = 1 << 20
_LOOPBACK_HOSTS: Final = ("127.0.0.1", "[::1]", "localhost")


class Guard:
    """ASGI middleware applying the module's rules in order: Host, Origin, token, body size."""

    def __init__(
        self, app: ASGIApp, *, origins: Sequence[str], loopback: bool, port: int, token: str | None, page: str
    ) -> None:
        self._app = app
        self._origins = {origin.lower() for origin in origins}
        self._loopback = loopback
        self._port = port
        self._token = token.encode() if token else None
        self._page = page

    def bound(self, port: int) -> None:
        """The port once bound (port 0 in the configuration)."""
        self._port = port

    def _own(self) -> set[str]:
        return {f"http://{host}:{self._port}" for host in _LOOPBACK_HOSTS} if self._loopback else set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        if self._loopback and headers.get("host", "").lower() not in {f"{h}:{self._port}" for h in _LOOPBACK_HOSTS}:
            await _refuse(send, 403, "forbidden_host", "the Host header must name the loopback listener")
            return
        origin = headers.get("origin")
        if origin is not None and origin.lower() not in self._origins | self._own():
            await _refuse(send, 403, "forbidden_origin", f"origin {origin} is not in expose.agent.web.origins")
            return
        path = scope.get("path", "")
        page = scope["method"] in ("GET", "HEAD") and path.rstrip("/") in (self._page, self._page + "/index.html")
        if origin is not None and scope["method"] == "OPTIONS" and "access-control-request-method" in headers:
            await _preflight(send, origin)  # before the token: a browser's preflight carries no credentials
            return
        if self._token is not None and not page:
            scheme, _, given = headers.get("authorization", "").partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), self._token):
                await _refuse(
                    send, 401, "unauthorized", "send Authorization: Bearer <token>", bearer=True, origin=origin
                )
                return
        length = headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > MAX_BODY:
            await _refuse(send, 413, "too_large", "the body is over 1 MiB", origin=origin)
            return
        # A chunked body is counted as it is read (`_app.read_json`).
        await self._app(scope, receive, _with_cors(send, origin) if origin is not None else send)


def _cors(origin: str) -> list[tuple[bytes, bytes]]:
    """What lets a page on an allowed origin read the answer (the Origin was checked before)."""
    return [
        (b"access-control-allow-origin", origin.encode("latin-1")),
        (b"access-control-expose-headers", b"x-vercel-ai-ui-message-stream, retry-after"),
        (b"vary", b"Origin"),
    ]


async def _preflight(send: Send, origin: str) -> None:
    headers = [
        *_cors(origin),
        (b"access-control-allow-methods", b"GET, POST, DELETE"),
        (b"access-control-allow-headers", b"content-type, authorization"),
        (b"access-control-max-age", b"600"),
        (b"content-length", b"0"),
    ]
    await send({"type": "http.response.start", "status": 204, "headers": headers})
    await send({"type": "http.response.body", "body": b""})


def _with_cors(send: Send, origin: str) -> Send:
    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", []), *_cors(origin)]}
        await send(message)

    return sending


async def _refuse(
    send: Send, status: int, code: str, message: str, *, bearer: bool = False, origin: str | None = None
) -> None:
    body = json.dumps({"error": message, "code": code}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if origin is not None:
        headers += _cors(origin)
    if bearer:
        headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
