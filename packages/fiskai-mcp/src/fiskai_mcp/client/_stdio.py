"""The stdio transport for `mcp_clients`: a server child this process can stop at once.

The SDK's `stdio_client` closes a child's stdin and waits 2 s for it to exit before it signals; a server
that hung in the handshake or in listing then fails 2 s after its timeout, and its process id is not
exposed, so the wait cannot be cut short from outside. Here the child is started (in its own process
group, as the SDK does) by fiskai: a session that ends normally gets the SDK's grace period; one that is
abandoned (`StdioChild.abandon`, or an exception or cancellation out of the session, as a timeout) has its
whole process group sent SIGTERM at once and SIGKILL shortly after, and is reaped before the block ends.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager, suppress

import anyio
import mcp_types as types
from anyio.abc import ObjectReceiveStream, ObjectSendStream, Process
from anyio.streams.text import TextReceiveStream
from mcp.client.stdio import StdioServerParameters, get_default_environment
from mcp.shared.message import SessionMessage

__all__ = ["GRACE_SECONDS", "KILL_AFTER_SECONDS", "StdioChild", "stdio_transport"]

GRACE_SECONDS = 2.0
"""How long a normally closed child has to exit after its stdin closes (the SDK's figure)."""
KILL_AFTER_SECONDS = 0.3
"""How long an abandoned child's group has between SIGTERM and SIGKILL."""
_REAP_SECONDS = 2.0
_POLL = 0.01

Streams = tuple[ObjectReceiveStream[SessionMessage | Exception], ObjectSendStream[SessionMessage]]


class StdioChild:
    """The server process of one stdio session, once started."""

    def __init__(self) -> None:
        self.pid: int | None = None
        self.abandoned = False

    def abandon(self) -> None:
        """Stop the child without a grace period when its session closes (it timed out or failed)."""
        self.abandoned = True


async def _exited(process: Process, within: float) -> bool:
    # Polls returncode, not wait(): asyncio's wait also waits for pipe EOF a grandchild may hold.
    deadline = anyio.current_time() + within
    while process.returncode is None:
        if anyio.current_time() >= deadline:
            return False
        await anyio.sleep(_POLL)
    return True


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    # The leader's pid is the group id (start_new_session); the group may already be gone.
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


async def _stop(process: Process, child: StdioChild) -> None:
    with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        if process.stdin is not None:
            await process.stdin.aclose()
    if child.abandoned or not await _exited(process, GRACE_SECONDS):
        _signal_group(process.pid, signal.SIGTERM)
        if not await _exited(process, KILL_AFTER_SECONDS):
            _signal_group(process.pid, signal.SIGKILL)
            await _exited(process, _REAP_SECONDS)
    # Members that outlived the leader (it exited, they ignored SIGTERM) go too: nothing is left behind.
    _signal_group(process.pid, signal.SIGKILL)
    with anyio.move_on_after(_REAP_SECONDS):
        await process.aclose()


@asynccontextmanager
async def stdio_transport(params: StdioServerParameters, child: StdioChild) -> AsyncGenerator[Streams]:
    """Start `params` and yield the session's streams; the child is stopped (see the module) on exit."""
    process = await anyio.open_process(
        [params.command, *params.args],
        env=get_default_environment() | (params.env or {}),
        stderr=sys.stderr,
        cwd=params.cwd,
        start_new_session=True,
    )
    child.pid = process.pid
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)

    async def read() -> None:
        assert process.stdout is not None
        buffer = ""
        with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, ConnectionError):
            async with read_writer:
                async for chunk in TextReceiveStream(process.stdout, encoding=params.encoding):
                    lines = (buffer + chunk).split("\n")
                    buffer = lines.pop()
                    for line in lines:
                        if line.strip():
                            await read_writer.send(_parsed(line))

    async def write() -> None:
        assert process.stdin is not None
        try:
            async with write_reader:
                async for message in write_reader:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                    await process.stdin.send(data.encode(params.encoding))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            # The child stopped reading: end the session's reads so no request waits forever.
            await read_writer.aclose()

    async with anyio.create_task_group() as group:
        group.start_soon(read)
        group.start_soon(write)
        try:
            yield read_stream, write_stream
        except BaseException:
            # A timeout's cancellation or a failed session: the child gets no grace period.
            child.abandon()
            raise
        finally:
            with anyio.CancelScope(shield=True):
                read_stream.close()
                write_stream.close()
                await _stop(process, child)
            group.cancel_scope.cancel()


def _parsed(line: str) -> SessionMessage | Exception:
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as err:
        return err
