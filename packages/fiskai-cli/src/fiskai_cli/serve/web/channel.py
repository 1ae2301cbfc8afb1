"""The web channel (`expose.agent.web`): the agent over HTTP for browsers and AI SDK / AG-UI clients.

One listener (uvicorn, started on a socket bound before the banner so a port in use refuses start-up)
serving the routes of `_app` behind `_guard`. Turns run in this channel's task group with at most 5 at
once. Drain: new turns get 503 with `Retry-After: 5`, running turns go on to their end (or their next
question), then the listener closes. Stop (a second interrupt): running turns are stopped now.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Any

import anyio
import uvicorn
from anyio.abc import TaskStatus
from typing_extensions import override

from fiskai_cli.serve._channel import WorkRunner

from ._app import build_app
from ._guard import Guard
from ._listen import is_loopback
from ._turns import MAX_TURNS, Turns

if TYPE_CHECKING:
    import socket

    from fiskai_core.config import WebSettings
    from fiskai_runstate import Store

__all__ = ["WebChannel"]


def _gated(card: dict[str, Any]) -> set[str]:
    """The tools the card marks destructive: the ones the confirm gate asks about."""
    return {tool["name"] for tool in card.get("tools", ()) if tool.get("behavior", {}).get("destructive")}


class _Uvicorn(uvicorn.Server):
    """uvicorn without its own signal handlers: the serve host owns SIGINT and SIGTERM (two-stage)."""

    @override
    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None]:
        yield


class WebChannel:
    """A `Channel`: the web face of one identity.

    Args:
        settings: `expose.agent.web`.
        identity: The agent's identity (the session ids' space).
        store: The journal store (the conversations).
        sock: The listening socket (`bind`), bound before the banner.
        card: Builds the card's JSON.
        token: Require `Authorization: Bearer <token>` (`--token-env`); None: nothing is authenticated.
    """

    name = "web"

    def __init__(
        self,
        settings: WebSettings,
        *,
        identity: str,
        store: Store,
        sock: socket.socket,
        card: Callable[[], dict[str, Any]],
        token: str | None = None,
    ) -> None:
        self.settings = settings
        self.sock = sock
        self.token = token
        self.turns = Turns(identity, store, gated=lambda: _gated(card()))
        host = settings.listen.rpartition(":")[0].strip("[]")
        self.loopback = is_loopback(host)
        self.port = int(sock.getsockname()[1])
        shown = f"[{host}]" if ":" in host else host
        self.url = f"http://{shown}:{self.port}{settings.base_path.rstrip('/')}"
        app = build_app(self.turns, base_path=settings.base_path, card=card)
        self.app = Guard(
            app,
            origins=settings.origins,
            loopback=self.loopback,
            port=self.port,
            token=token,
            page=settings.base_path.rstrip("/"),
        )
        self._drained = anyio.Event()

    def banner(self) -> list[tuple[str, str]]:
        base = self.settings.base_path.rstrip("/")
        return [
            ("", "Answering on the web:"),
            ("Page", f"{self.url}/"),
            ("AI SDK", f"{base}/vercel"),
            ("AG-UI", f"{base}/agui"),
            ("Origins", "\n".join(self.settings.origins)),
            ("Turns", f"{MAX_TURNS} at once (fixed)"),
            ("Auth", "bearer token" if self.token else "none: reachability of the listener is the access control"),
        ]

    async def serve(self, runner: WorkRunner, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Listen until drained and idle; turns run in this task group."""
        config = uvicorn.Config(
            self.app,
            log_config=None,
            log_level="warning",
            access_log=False,
            lifespan="off",
            timeout_graceful_shutdown=5,
        )
        server = _Uvicorn(config)
        self.turns.runner = runner
        try:
            async with anyio.create_task_group() as group:
                self.turns.group = group
                group.start_soon(server.serve, [self.sock])
                while not server.started:  # noqa: ASYNC110 - uvicorn offers no start-up event, only this flag
                    await anyio.sleep(0.01)
                task_status.started()
                await self._drained.wait()
                await self.turns.idle.wait()
                server.should_exit = True
        finally:
            self.sock.close()

    def drain(self) -> None:
        self.turns.draining = True
        self._drained.set()

    def stop(self) -> None:
        self.drain()
        self.turns.stop()
