"""One `mcp_clients` server: its session, held by one task for as long as the connection set lives.

`start` resolves the entry's references, starts the child (stdio) or reaches the endpoint (streamable
HTTP) and completes the handshake within `timeout`; `list_tools` reads every page within `timeout` again
(so a server may take up to twice its timeout before the run). A session that dies later leaves the
connection `lost`: each call then gets an error result naming the server, and nothing else stops.

A stdio child runs with this process's environment minus credential variables (the scrub command tools
get), plus the entry's `env`. Every message about the server passes through its `Redactor`.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, cast

import anyio
import mcp_types as types
from anyio.abc import TaskGroup, TaskStatus
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from fiskai_core._peer_limits import capped_text
from fiskai_core.config import McpClientEntry, UnresolvedReferenceError, resolve_references
from fiskai_core.errors import FiskaiError
from fiskai_core.exec import tool_env
from fiskai_core.prompter import Prompter
from fiskai_core.tools import ToolArguments, ToolResult, plain_json

from ._elicit import elicitation_relay
from ._redact import Redactor, redact_command, redact_url
from ._stdio import StdioChild, stdio_transport

__all__ = ["McpConnection", "McpServerError"]


class McpServerError(FiskaiError):
    """A server could not be started, reached, initialized or listed; the message names it (redacted)."""


class McpConnection:
    """The session with one server.

    Args:
        entry: The `mcp_clients` entry.
        root: The configuration's folder (relative `${file:}` paths).
        strip_env: `harness.environment.strip` and friends, for a stdio child.
        pass_env: `harness.environment.pass`.
        prompter: Answers the server's elicitation requests (declined when it cannot prompt).
        on_tools_changed: Told when the server says its tool list changed (only with `watch_tools`).
    """

    def __init__(
        self,
        entry: McpClientEntry,
        *,
        root: Path | None,
        strip_env: list[str] | None = None,
        pass_env: list[str] | None = None,
        prompter: Prompter | None = None,
        on_tools_changed: Callable[[McpConnection], Awaitable[None]] | None = None,
    ) -> None:
        self.entry = entry
        self.redact = Redactor()
        self.transport = entry.transport
        self.elapsed = 0.0
        """Seconds the connect and handshake took."""
        self.lost = ""
        """Why the session ended early (redacted), or empty while it lives."""
        self._root = root
        self._strip = strip_env or []
        self._pass = pass_env or []
        self._prompter = prompter
        self._on_changed = on_tools_changed
        self._client: Client | None = None
        self._stop = anyio.Event()
        self._child = StdioChild()

    @property
    def name(self) -> str:
        """The entry's name."""
        return self.entry.name

    @property
    def timeout(self) -> float:
        """The entry's timeout, in seconds."""
        return self.entry.timeout.total_seconds()

    @property
    def endpoint(self) -> str:
        """Where the server is, as printed: the URL structurally redacted, or the redacted command line."""
        if self.entry.command:
            return redact_command(self.entry.command, self.entry.args)
        return redact_url(self.entry.url)

    def error(self, what: str, err: BaseException | str) -> McpServerError:
        """A redacted error about this server."""
        detail = err if isinstance(err, str) else _describe(err)
        return McpServerError(self.redact(f'MCP server "{self.name}" ({self.endpoint}): {what}: {detail}'))

    async def start(self, group: TaskGroup) -> None:
        """Connect and complete the handshake within the timeout; the session then lives in `group`.

        Raises:
            McpServerError: a reference did not resolve, the server did not start or answer, or it timed out.
        """
        began = time.perf_counter()
        try:
            with anyio.fail_after(self.timeout):
                await group.start(self._hold)
        except TimeoutError:
            raise self.error("connecting", f"no answer within {self.timeout:g}s (timeout)") from None
        except McpServerError:
            raise
        # The SDK and the transports raise many kinds (OSError, HTTP status, MCPError, exception groups).
        except Exception as err:  # noqa: BLE001
            raise self.error("connecting", err) from None
        self.elapsed = time.perf_counter() - began

    async def list_tools(self) -> list[types.Tool]:
        """Every tool the server advertises (all pages), within the timeout.

        Raises:
            McpServerError: the server did not list its tools in time, or failed to.
        """
        client = self._client
        if client is None:
            raise self.error("listing tools", self.lost or "not connected")
        tools: list[types.Tool] = []
        try:
            with anyio.fail_after(self.timeout):
                cursor: str | None = None
                for _ in range(1000):
                    page = await client.list_tools(cursor=cursor)
                    tools.extend(page.tools)
                    cursor = page.next_cursor
                    if not cursor:
                        break
        except TimeoutError:
            # The set closes this session next: a hung stdio child is stopped at once, not after a grace period.
            self._child.abandon()
            raise self.error("listing tools", f"no answer within {self.timeout:g}s (timeout)") from None
        # As in `start`: whatever the SDK raised becomes one redacted line.
        except Exception as err:  # noqa: BLE001
            raise self.error("listing tools", err) from None
        return tools

    async def call(self, tool_name: str, arguments: ToolArguments) -> ToolResult:
        """Call `tool_name` on the server; every outcome is a result the model reads."""
        client = self._client
        if client is None:
            return ToolResult(
                output=self.redact(f'MCP server "{self.name}" is not connected: {self.lost or "closed"}'),
                is_error=True,
            )
        values = cast("dict[str, Any]", plain_json(dict(arguments.values)))
        try:
            result = await client.call_tool(tool_name, values)
        # The call boundary for a third-party server: a protocol error or a dropped session is a result.
        except Exception as err:  # noqa: BLE001
            text = f'calling tool "{tool_name}" on MCP server "{self.name}": {_describe(err)}'
            return ToolResult(output=self.redact(text), is_error=True)
        output, cut = capped_text(_result_text(result))
        return ToolResult(output=output, is_error=bool(result.is_error), truncated=cut)

    async def aclose(self) -> None:
        """End the session (the holder task closes the client, which stops a stdio child)."""
        self._stop.set()

    def _resolved(self) -> tuple[str, dict[str, str], dict[str, str]]:
        entry, root = self.entry, self._root
        try:
            url = resolve_references(entry.url, root=root, server=self.name)
            headers = {k: resolve_references(v, root=root, server=self.name) for k, v in entry.headers.items()}
            env = {k: resolve_references(v, root=root, server=self.name) for k, v in entry.env.items()}
        except UnresolvedReferenceError as err:
            raise McpServerError(str(err)) from None
        self.redact.add([*url.secrets, *(s for r in headers.values() for s in r.secrets)])
        self.redact.add(s for r in env.values() for s in r.secrets)
        return (
            url.text,
            {k: r.text for k, r in headers.items()},
            {k: r.text for k, r in env.items()},
        )

    def _target(self, url: str, headers: dict[str, str], env: dict[str, str], stack: AsyncExitStack) -> Any:
        entry = self.entry
        if entry.command:
            child_env = tool_env(strip=self._strip, passthrough=self._pass)
            child_env.pop("LLMFORMAT", None)
            child_env.update(env)
            params = StdioServerParameters(command=entry.command, args=list(entry.args), env=child_env, cwd=self._root)
            # fiskai's own transport can stop a hung child at its timeout; the SDK's waits 2 s first.
            return params if sys.platform == "win32" else stdio_transport(params, self._child)
        # The transport leaves a client it is given open: it closes with the session, after the transport.
        http = create_mcp_http_client(headers=headers or None)
        stack.push_async_callback(http.aclose)
        return streamable_http_client(url, http_client=http)

    async def _message(self, message: types.ServerNotification | Exception) -> None:
        if isinstance(message, types.ToolListChangedNotification) and self._on_changed is not None:
            await self._on_changed(self)

    async def _hold(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        url, headers, env = self._resolved()
        started = False
        try:
            async with AsyncExitStack() as stack:
                client = Client(
                    self._target(url, headers, env, stack),
                    elicitation_callback=elicitation_relay(self._prompter, self.name) if self._prompter else None,
                    message_handler=self._message if self.entry.watch_tools else None,
                    # Watching needs the server's list-changed notifications: the handshake era sends them on
                    # the session; 2026-07-28 only on a `subscriptions/listen` stream many servers refuse.
                    mode="legacy" if self.entry.watch_tools else "auto",
                    cache=None,
                )
                await stack.enter_async_context(client)
                self._client = client
                started = True
                task_status.started()
                await self._stop.wait()
        # After start, a session that dies must not take the run down with it: its calls report it instead.
        except Exception as err:
            if not started:
                raise
            self.lost = self.redact(_describe(err))
        finally:
            self._client = None


def _describe(err: BaseException) -> str:
    """One line for an exception, looking inside the groups anyio and the SDK raise."""
    if isinstance(err, BaseExceptionGroup):
        inner: Sequence[BaseException] = cast("BaseExceptionGroup[BaseException]", err).exceptions
        return "; ".join(_describe(e) for e in inner)
    text = str(err).strip() or type(err).__name__
    return " ".join(text.split())


def _result_text(result: types.CallToolResult) -> str:
    parts: list[str] = []
    for block in result.content:
        if isinstance(block, types.TextContent):
            parts.append(block.text)
        elif isinstance(block, types.ImageContent | types.AudioContent):
            parts.append(f"[{block.type}: {block.mime_type}, {len(block.data) * 3 // 4} bytes]")
        elif isinstance(block, types.EmbeddedResource):
            resource = block.resource
            text = getattr(resource, "text", None)
            parts.append(text if isinstance(text, str) else f"[resource {resource.uri}]")
        else:
            parts.append(f"[resource link {block.uri}]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    return "\n".join(parts)
