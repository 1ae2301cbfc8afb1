"""Remote tools for a run or for `info`: the RemoteInvoker over a2a, and the import of `remote_tools` hosts.

`import_remote_tools` discovers every configured host (concurrently), filters each host's tools by
name, names them with core's policy (`fiskai_core.remote.name_remote_tools`) and returns tools that
call through `A2ARemoteInvoker`. Strict for `run` (the prompt may depend on those tools): any discovery
failure or residual name collision raises. Best-effort for `info`: failures become warnings.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import anyio

from fiskai_core.errors import ToolSelectionError
from fiskai_core.remote import (
    DiscoveredHost,
    RemoteCallError,
    RemoteDescriptor,
    RemoteImportError,
    RemoteReply,
    RemoteTool,
    filter_descriptors,
    name_remote_tools,
)
from fiskai_core.telemetry import current as current_telemetry
from fiskai_core.tools import ToolArguments

from .client import A2AClient
from .errors import A2AError, AgentUnavailableError
from .protocol import DiscoveryReply

if TYPE_CHECKING:
    from fiskai_core.config import RemoteToolHost

__all__ = ["A2ARemoteInvoker", "RemoteImport", "import_remote_tools"]


class A2ARemoteInvoker:
    """`fiskai_core.remote.RemoteInvoker` over an `A2AClient` (NATS in production)."""

    def __init__(self, client: A2AClient) -> None:
        self.client = client

    async def invoke_tool(self, agent: str, tool_name: str, arguments: ToolArguments) -> RemoteReply:
        """Call `tool_name` on `agent`; a non-zero exit or a serving-side failure is a reply.

        Raises:
            RemoteCallError: the agent is unreachable, went silent, or refused the request.
        """
        telemetry = current_telemetry()
        attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "fisk.tool.remote_agent": agent,
            "gen_ai.tool.name": tool_name,
        }
        # The remote agent's span joins this one: its trace context travels in the request's NATS headers.
        with telemetry.span(f"invoke_agent {agent}", attributes) as span:
            try:
                reply = await self.client.call_tool(
                    agent, tool_name, arguments.values or None, trace=telemetry.inject()
                )
            except A2AError as err:
                span.error("unavailable" if isinstance(err, AgentUnavailableError) else "remote")
                raise RemoteCallError(str(err)) from err
            if reply.is_error:
                span.error("tool_error")
        executed = reply.exec
        return RemoteReply(
            output=reply.output or "",
            is_error=bool(reply.is_error),
            command=(executed.command or "") if executed else "",
            exit_code=(executed.exit_code or 0) if executed else 0,
            truncated=bool(executed.truncated) if executed else False,
        )


@dataclass(slots=True, kw_only=True)
class RemoteImport:
    """What an import produced."""

    tools: list[RemoteTool] = field(default_factory=list[RemoteTool])
    warnings: list[str] = field(default_factory=list[str])
    round_trips: dict[str, float] = field(default_factory=dict[str, float])
    """Discovery round-trip seconds per agent that answered."""


async def import_remote_tools(
    hosts: Sequence[RemoteToolHost],
    *,
    client: A2AClient,
    taken: Collection[str],
    strict: bool,
    context_name: str = "",
) -> RemoteImport:
    """Discover, filter and name the tools of every `remote_tools` host.

    Args:
        hosts: The configuration's `remote_tools`, in order.
        client: Connected to the hosts' NATS; its identity is the sender.
        taken: Names already in use (local tools and built-ins).
        strict: Raise on any failure (a run) instead of warning (info).
        context_name: The NATS context, for messages.

    Raises:
        RemoteImportError: strict, and a host could not be discovered.
        ToolNameCollisionError: strict, and final names still collide.
        ToolSelectionError: strict, and a host's filter pattern is invalid.
    """
    outcome = RemoteImport()
    cards: list[DiscoveryReply | A2AError] = [A2AError("not discovered")] * len(hosts)

    async def discover(index: int, host: RemoteToolHost) -> None:
        started = time.monotonic()
        try:
            cards[index] = await client.discover(host.name)
        except A2AError as err:
            cards[index] = err
            return
        outcome.round_trips[host.name] = time.monotonic() - started

    async with anyio.create_task_group() as tasks:
        for index, host in enumerate(hosts):
            tasks.start_soon(discover, index, host)

    where = f' on context "{context_name}"' if context_name else ""
    discovered: list[DiscoveredHost] = []
    for host, card in zip(hosts, cards, strict=True):
        if isinstance(card, A2AError):
            message = f'importing tools from remote agent "{host.name}"{where}: {card}'
            if strict:
                raise RemoteImportError(message) from card
            outcome.warnings.append(message)
            continue
        descriptors = [
            RemoteDescriptor(name=tool.name, description=tool.description or "", input_schema=tool.input_schema)
            for tool in card.tools or []
        ]
        try:
            kept, warnings = filter_descriptors(
                descriptors, include=host.include, exclude=host.exclude, agent=host.name
            )
        except ToolSelectionError as err:
            if strict:
                raise
            outcome.warnings.append(str(err))
            continue
        outcome.warnings.extend(warnings)
        discovered.append(DiscoveredHost(agent=host.name, alias=host.alias or host.name, descriptors=kept))

    naming = name_remote_tools(discovered, taken=taken, invoker=A2ARemoteInvoker(client))
    if strict and naming.collisions:
        raise naming.collision_error()
    outcome.tools = naming.tools
    for agent, skipped in naming.skipped.items():
        outcome.warnings.append(f'remote agent "{agent}": skipped {"; ".join(skipped)}')
    contributing = {tool.agent for tool in naming.tools}
    outcome.warnings.extend(
        f'remote agent "{host.agent}" contributed no tools after filtering; check the include/exclude for that host'
        for host in discovered
        if host.agent not in contributing
    )
    return outcome
