"""Running a server: streamable HTTP (with Host/Origin checks and an optional bearer token) or stdio.

HTTP is served at `/` by default as in the original (`http://host:port`), and at `/mcp` as well, the
path the SDKs default to, which some clients assume (the MCP Inspector 0.15 does); both are one endpoint
behind the same checks, sharing sessions.
DNS rebinding is answered by checking every request's Host and Origin against the names the server is
reachable under: the loopback names for a loopback bind, plus the bind address, this machine's name and
any `allow_hosts` otherwise. A non-loopback bind needs a bearer token, compared in constant time; the
caller reads it from the environment so it never appears in a process listing.
"""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import signal
import socket
import threading
from collections.abc import Callable, Generator, Sequence
from typing import Any, cast

import anyio
import uvicorn
from mcp.server import Server
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send
from typing_extensions import override

from ._exact import EXACT_STDIN, ExactArguments, ExactStdin
from ._library_logs import library_logs_on_one_line

__all__ = [
    "DEFAULT_ADDRESS",
    "DEFAULT_PATH",
    "DEFAULT_PORT",
    "SDK_PATH",
    "is_loopback",
    "serve",
    "serve_async",
    "transport_security",
]

DEFAULT_ADDRESS = "127.0.0.1"
DEFAULT_PORT = 8080
DEFAULT_PATH = "/"
SDK_PATH = "/mcp"
"""Served too, whatever `path` is: the SDKs' default, which clients that were not told a path assume."""
_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


def is_loopback(address: str) -> bool:
    """Whether binding `address` keeps the server reachable from this machine only."""
    if address == "localhost":
        return True
    try:
        return ipaddress.ip_address(address.strip("[]")).is_loopback
    except ValueError:
        return False


def _host_entry(address: str) -> str:
    return f"[{address}]" if ":" in address and not address.startswith("[") else address


def transport_security(address: str, allow_hosts: Sequence[str] = ()) -> TransportSecuritySettings:
    """The Host and Origin values the server answers to when bound to `address`."""
    names = list(_LOOPBACK_NAMES)
    if not is_loopback(address):
        unspecified = address in ("0.0.0.0", "::", "")
        names += [socket.gethostname(), socket.getfqdn()] if unspecified else [_host_entry(address)]
    names += [_host_entry(name) for name in allow_hosts]
    names = list(dict.fromkeys(names))
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{name}:*" for name in names],
        allowed_origins=[f"{scheme}://{name}:*" for name in names for scheme in ("http", "https")],
    )


def _also_at(app: Starlette, path: str, alias: str) -> None:
    """Route `alias` to the endpoint at `path`: the same transport, session manager and Host/Origin checks."""
    if alias == path:
        return
    endpoint = next(route.endpoint for route in app.routes if isinstance(route, Route) and route.path == path)
    app.router.routes.append(Route(alias, endpoint=endpoint))


class _BearerToken:
    """Refuses any HTTP request without `Authorization: Bearer <token>`."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self._app = app
        self._token = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            scheme, _, given = Headers(scope=scope).get("authorization", "").partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), self._token):
                refusal = PlainTextResponse(
                    "Unauthorized: send Authorization: Bearer <token>", 401, headers={"WWW-Authenticate": "Bearer"}
                )
                await refusal(scope, receive, send)
                return
        await self._app(scope, receive, send)


class _Uvicorn(uvicorn.Server):
    """uvicorn that stops gracefully on SIGINT or SIGTERM and then returns; `ready` runs once it does.

    Stock uvicorn re-raises the signal after shutting down, which surfaces as a KeyboardInterrupt (or a
    silent death on SIGTERM) in the caller instead of a normal return that can say the server stopped.
    """

    def __init__(self, config: uvicorn.Config, ready: Callable[[], None]) -> None:
        super().__init__(config)
        self._ready = ready

    @override
    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None]:
        if threading.current_thread() is not threading.main_thread():
            self._ready()
            yield
            return
        previous = {sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            # Announced only now: a Ctrl-C right after the announcement stops the server gracefully
            # instead of interrupting its start-up with a traceback.
            self._ready()
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def _bind(address: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Inherited by accepted connections. Without it a 2026-07-28 reply (headers, then body, in two writes)
    # waits for the client's delayed ACK: 45 ms per call instead of 2 ms on this machine (bench/mcp_serve.py).
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((address.strip("[]"), port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    sock.setblocking(False)
    return sock


async def serve_async(
    server: Server[Any],
    *,
    stdio: bool = False,
    address: str = DEFAULT_ADDRESS,
    port: int = DEFAULT_PORT,
    path: str = DEFAULT_PATH,
    token: str | None = None,
    allow_hosts: Sequence[str] = (),
    on_ready: Callable[[str], None] | None = None,
) -> None:
    """Serve until stdin closes (stdio) or SIGINT/SIGTERM (HTTP); see `serve`."""
    if stdio:
        stdin = ExactStdin()
        token_var = EXACT_STDIN.set(stdin)
        try:
            async with stdio_server(stdin=cast("Any", stdin)) as (read_stream, write_stream):
                if on_ready is not None:
                    on_ready("stdio")
                await server.run(read_stream, write_stream, server.create_initialization_options())
        finally:
            EXACT_STDIN.reset(token_var)
            await stdin.aclose()
            stdin.restore()
        return
    if token is None and not is_loopback(address):
        raise ValueError(
            f"refusing to serve on non-loopback address {address!r} without a bearer token: "
            "anyone who can reach it could run the served commands"
        )
    starlette = server.streamable_http_app(
        streamable_http_path=path, transport_security=transport_security(address, allow_hosts)
    )
    _also_at(starlette, path, SDK_PATH)
    app: ASGIApp = ExactArguments(starlette)
    if token is not None:
        app = _BearerToken(app, token)
    config = uvicorn.Config(
        app, log_config=None, log_level="warning", access_log=False, lifespan="on", timeout_graceful_shutdown=5
    )
    sock = _bind(address, port)
    try:
        # The socket already listens: a client that connects once it is announced waits in the backlog.
        url = f"http://{_host_entry(address.strip('[]'))}:{sock.getsockname()[1]}{path if path != '/' else ''}"
        with library_logs_on_one_line():
            await _Uvicorn(config, ready=lambda: on_ready(url) if on_ready is not None else None).serve(sockets=[sock])
    finally:
        sock.close()  # uvicorn leaves a socket it was handed open


def serve(
    server: Server[Any],
    *,
    stdio: bool = False,
    address: str = DEFAULT_ADDRESS,
    port: int = DEFAULT_PORT,
    path: str = DEFAULT_PATH,
    token: str | None = None,
    allow_hosts: Sequence[str] = (),
    on_ready: Callable[[str], None] | None = None,
) -> None:
    """Serve `server` until it is stopped; the one blocking entry point.

    Args:
        server: From `build_server`.
        stdio: Speak MCP on stdin/stdout (for clients that spawn the server) instead of HTTP.
        address: The address to bind; anything but loopback requires `token`.
        port: The TCP port; 0 picks a free one (reported through `on_ready`).
        path: The HTTP path of the MCP endpoint; it is served at `SDK_PATH` (`/mcp`) as well.
        token: Require `Authorization: Bearer <token>` on every HTTP request.
        allow_hosts: Extra host names clients may use to reach the server (Host/Origin checks).
        on_ready: Called once with the URL (or "stdio") when the server accepts connections (over HTTP,
            SIGINT and SIGTERM then stop it gracefully).

    Raises:
        ValueError: a non-loopback address without a token.
        OSError: the address cannot be bound.
    """
    anyio.run(
        lambda: serve_async(
            server,
            stdio=stdio,
            address=address,
            port=port,
            path=path,
            token=token,
            allow_hosts=allow_hosts,
            on_ready=on_ready,
        )
    )
