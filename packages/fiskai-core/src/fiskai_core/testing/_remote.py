"""FakeRemoteInvoker: the RemoteInvoker seam in memory, for tests of remote tools without a transport."""

from __future__ import annotations

from dataclasses import dataclass, field

from fiskai_core.remote import RemoteCallError, RemoteReply
from fiskai_core.tools import ToolArguments

__all__ = ["FakeRemoteInvoker"]


@dataclass(slots=True, kw_only=True)
class FakeRemoteInvoker:
    """Answers each `(agent, tool)` with a scripted reply or error, and records every call.

    A pair with no script raises `RemoteCallError`, as an agent that is not there would.
    """

    replies: dict[tuple[str, str], RemoteReply | RemoteCallError] = field(
        default_factory=dict[tuple[str, str], RemoteReply | RemoteCallError]
    )
    calls: list[tuple[str, str, str]] = field(default_factory=list[tuple[str, str, str]])
    """`(agent, tool, arguments as compact JSON)` for every call."""

    async def invoke_tool(self, agent: str, tool_name: str, arguments: ToolArguments) -> RemoteReply:
        """Record the call and return (or raise) what was scripted for it."""
        self.calls.append((agent, tool_name, arguments.json()))
        scripted = self.replies.get((agent, tool_name))
        if scripted is None:
            raise RemoteCallError(f'remote agent unavailable: no agent "{agent}" is serving')
        if isinstance(scripted, RemoteCallError):
            raise scripted
        return scripted
