"""`open_remote_tools`: connect, import the `remote_tools` hosts' tools, and keep the connection for their calls.

For a caller with no connection of its own (`fiskai info`'s short-lived look at its peers); a run imports
over the connection its harness lends it (`fiskai_a2a.invoker.import_remote_tools`).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Collection, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING

from fiskai_core.remote import RemoteImportError

from .client import A2AClient
from .errors import A2AError
from .invoker import RemoteImport, import_remote_tools
from .nats_service import NatsStreams
from .nats_transport import connect
from .natscontext import NatsContext

if TYPE_CHECKING:
    from fiskai_core.config import RemoteToolHost

__all__ = ["open_remote_tools"]


@asynccontextmanager
async def open_remote_tools(
    hosts: Sequence[RemoteToolHost],
    *,
    context: NatsContext,
    identity: str,
    call_timeout: float,
    taken: Collection[str],
    strict: bool,
) -> AsyncGenerator[RemoteImport]:
    """Connect, import the `remote_tools` hosts' tools, and keep the connection for their calls.

    What `fiskai run` (strict) and `fiskai info` (best-effort) need in one call; the tools work until
    the block exits. Best-effort turns a connection failure into a warning and imports nothing.

    Args:
        hosts: The configuration's `remote_tools`.
        context: The configuration's NATS context (`load_context(config.nats_context)`).
        identity: This agent's identity, the sender of every request.
        call_timeout: Seconds each remote request may take (`llm.budget.call_timeout`).
        taken: Names already in use (local tools and built-ins).
        strict: Fail on any discovery failure or residual collision.

    Raises:
        RemoteImportError: strict, and the server or a host could not be reached.
        ToolNameCollisionError: strict, and final names still collide.
    """
    if not hosts:
        yield RemoteImport()
        return
    async with AsyncExitStack() as stack:
        try:
            transport = await stack.enter_async_context(connect(context, name=f"fiskai {identity}"))
        except A2AError as err:
            message = f'importing tools from remote agent "{hosts[0].name}" on context "{context.name}": {err}'
            if strict:
                raise RemoteImportError(message) from err
            yield RemoteImport(warnings=[message])
            return
        client = A2AClient(transport, identity=identity, timeout=call_timeout, streams=NatsStreams(transport))
        yield await import_remote_tools(hosts, client=client, taken=taken, strict=strict, context_name=context.name)
