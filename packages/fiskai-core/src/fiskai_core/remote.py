"""Remote tools: the RemoteInvoker seam, the import naming policy, and the remote tool kind.

A run can import the tools another agent serves. Core owns what does not depend on how bytes move:
* `RemoteInvoker`, the one-method seam a transport implements (`fiskai_a2a.invoker.NatsRemoteInvoker`);
  core never imports a transport.
* The naming policy (`name_remote_tools`): a bare name is kept unless a local tool already holds it or
  more than one host exposes it, in which case it becomes `<alias>_<name>`. Decided over the whole set,
  so the outcome does not depend on host order. A final name that still collides, is not a valid tool
  name or is longer than a local tool's may be, is skipped and reported; a strict import (a run) fails
  closed on any collision.
* `RemoteTool`, a `Tool` whose schema came from the peer (untrusted: it must be a JSON object schema
  within the local limits, `fiskai_core._peer_limits`) and whose replies map to the same result shape,
  capped the same way, as a local command's, so the model cannot tell remote from local.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from pydantic import JsonValue

from fiskai_core._peer_limits import (
    MAX_REMOTE_COMMAND_BYTES,
    MAX_REMOTE_DESCRIPTION_CHARS,
    MAX_REMOTE_SCHEMA_BYTES,
    capped_description,
    capped_text,
    description_tags,
    schema_problem,
    shown_name,
)
from fiskai_core.errors import FiskaiError, ToolSelectionError
from fiskai_core.tools import (
    MAX_TOOL_NAME_LENGTH,
    CallContext,
    CallPlan,
    FilterRule,
    ToolArguments,
    ToolResult,
    matches_rule,
)

__all__ = [
    "MAX_REMOTE_DESCRIPTION_CHARS",
    "MAX_REMOTE_SCHEMA_BYTES",
    "DiscoveredHost",
    "RemoteCallError",
    "RemoteDescriptor",
    "RemoteImportError",
    "RemoteInvoker",
    "RemoteNaming",
    "RemoteReply",
    "RemoteTool",
    "ToolNameCollisionError",
    "filter_descriptors",
    "name_remote_tools",
]

_NAME = re.compile(r"[a-zA-Z0-9_-]+")


class RemoteCallError(FiskaiError):
    """A remote call got no usable answer (unreachable agent, timeout, refusal); becomes an error result."""


class RemoteImportError(FiskaiError):
    """A strict remote import failed (a host could not be discovered); the run does not start."""


class ToolNameCollisionError(FiskaiError):
    """Imported tool names still collide after alias prefixing; the run does not start."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RemoteReply:
    """A remote tool call's outcome as the transport reports it."""

    output: str
    is_error: bool = False
    """A harness failure on the serving side (the command did not run cleanly)."""
    command: str = ""
    exit_code: int = 0
    truncated: bool = False


class RemoteInvoker(Protocol):
    """Calls one tool on a remote agent. Implemented by a transport (`fiskai_a2a.invoker`); faked in tests.

    Called from the run's task, possibly concurrently for different calls. Cancellation of the caller must
    stop the remote call. A non-zero exit or a serving-side failure is a `RemoteReply`, never raised.

    Raises:
        RemoteCallError: no usable answer (the agent is unreachable, timed out, or refused the request).
    """

    async def invoke_tool(self, agent: str, tool_name: str, arguments: ToolArguments) -> RemoteReply:
        """Call `tool_name` on `agent` with `arguments` (sent with every number as the model wrote it)."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class RemoteDescriptor:
    """A tool as a peer advertises it in discovery; every field is untrusted."""

    name: str
    description: str = ""
    input_schema: Any = None
    """The advertised schema: a JSON object, JSON text of one, or None (then `{"type": "object"}`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DiscoveredHost:
    """One `remote_tools` host after discovery and filtering."""

    agent: str
    """The remote identity (the host's `name`)."""
    alias: str
    """The collision prefix: the host's `alias`, else its name."""
    descriptors: Sequence[RemoteDescriptor]


@dataclass(slots=True, kw_only=True)
class RemoteNaming:
    """The outcome of naming: tools to offer, and what was skipped per host."""

    tools: list[RemoteTool] = field(default_factory=list["RemoteTool"])
    skipped: dict[str, list[str]] = field(default_factory=dict[str, list[str]])
    """Per agent: `<bare> (reason)` entries."""
    collisions: list[str] = field(default_factory=list[str])
    """`"<final>" (agent "<host>")` for every name that still collided."""

    def collision_error(self) -> ToolNameCollisionError:
        """The fail-closed error a strict import raises when `collisions` is not empty."""
        listed = ", ".join(self.collisions)
        return ToolNameCollisionError(
            f"imported tool name collision: {listed}; set a distinct alias on the remote_tools host"
        )


def filter_descriptors(
    descriptors: Sequence[RemoteDescriptor], *, include: FilterRule, exclude: FilterRule, agent: str
) -> tuple[list[RemoteDescriptor], list[str]]:
    """Apply a host's include/exclude name rules; tags are not carried by discovery.

    Returns:
        The kept descriptors and any warnings (an include tag filter is ignored with one).

    Raises:
        ToolSelectionError: a pattern is not a valid regular expression.
    """
    warnings: list[str] = []
    if include.tags:
        warnings.append(
            f'remote agent "{agent}" include filter uses tags, which discovery does not carry; the tag filter was '
            "ignored (filter by tool name instead)"
        )
    kept = list(descriptors)
    try:
        if include.tools:
            rule = _NameRule(tools=include.tools)
            kept = [d for d in kept if matches_rule(_Named(name=d.name), rule)]
        if exclude.tools:
            rule = _NameRule(tools=exclude.tools)
            kept = [d for d in kept if not matches_rule(_Named(name=d.name), rule)]
    except ToolSelectionError as err:
        raise ToolSelectionError(str(err).replace("invalid tool filter", "invalid remote tool filter", 1)) from err
    return kept, warnings


def name_remote_tools(
    hosts: Sequence[DiscoveredHost], *, taken: Collection[str], invoker: RemoteInvoker
) -> RemoteNaming:
    """Give every imported tool its final model-facing name, over the whole set at once.

    Args:
        hosts: Every successfully discovered host, in configuration order.
        taken: Names already in use (local application tools and built-ins).
        invoker: What the tools call through.
    """
    taken_names = set(taken)
    bare_count = Counter(d.name for host in hosts for d in host.descriptors)
    planned: list[tuple[DiscoveredHost, RemoteDescriptor, str]] = []
    for host in hosts:
        for descriptor in host.descriptors:
            bare = descriptor.name
            prefixed = bare in taken_names or bare_count[bare] > 1
            planned.append((host, descriptor, f"{host.alias}_{bare}" if prefixed else bare))
    final_count = Counter(final for _, _, final in planned)
    outcome = RemoteNaming()
    for host, descriptor, final in planned:
        bare, shown = descriptor.name, shown_name(final)
        if final in taken_names or final_count[final] > 1:
            outcome.skipped.setdefault(host.agent, []).append(f'{shown_name(bare)} (name "{shown}" collides)')
            outcome.collisions.append(f'"{shown}" (agent "{host.agent}")')
            continue
        if not _NAME.fullmatch(final):
            outcome.skipped.setdefault(host.agent, []).append(f'{shown_name(bare)} (invalid name "{shown}")')
            continue
        if len(final) > MAX_TOOL_NAME_LENGTH:
            outcome.skipped.setdefault(host.agent, []).append(
                f'{shown_name(bare)} (name "{shown}" is {len(final)} characters, over the {MAX_TOOL_NAME_LENGTH} '
                "a tool name may have)"
            )
            continue
        try:
            tool = RemoteTool.from_descriptor(descriptor, name=final, agent=host.agent, invoker=invoker)
        except RemoteImportError as err:
            outcome.skipped.setdefault(host.agent, []).append(f"{shown_name(bare)} ({err})")
            continue
        outcome.tools.append(tool)
    return outcome


@dataclass(frozen=True, slots=True, kw_only=True)
class RemoteTool:
    """A tool served by another agent, called through a `RemoteInvoker`.

    Never confirmation-gated locally (the serving side never serves gated tools). Its tags are those its
    description's `Tags: ...` line lists (the card carries tags nowhere else); locally only `ai:no_defer`
    acts on them (the tool is always sent directly).
    """

    name: str
    """The final, model-facing name."""
    remote_name: str
    """The bare name on the serving agent."""
    agent: str
    description: str
    input_schema: Mapping[str, JsonValue]
    invoker: RemoteInvoker
    tags: Sequence[str] = ()
    remote: bool = True
    """Marks the kind for traces and journals."""

    @classmethod
    def from_descriptor(
        cls, descriptor: RemoteDescriptor, *, name: str, agent: str, invoker: RemoteInvoker
    ) -> RemoteTool:
        """Build a remote tool from an untrusted descriptor.

        Raises:
            RemoteImportError: no description, or a schema that is not a JSON object schema within the limits.
        """
        if not descriptor.description.strip():
            raise RemoteImportError(f'tool "{descriptor.name}" from agent "{agent}" advertises no description')
        schema = _parse_schema(descriptor, agent)
        tags = description_tags(descriptor.description)
        return cls(
            name=name,
            remote_name=descriptor.name,
            agent=agent,
            description=capped_description(descriptor.description, tags),
            input_schema=schema,
            invoker=invoker,
            tags=tags,
        )

    def plan(self, arguments: ToolArguments) -> CallPlan:
        """Nothing to check locally: the serving agent checks the arguments against its own schema."""
        return CallPlan(arguments=arguments, display=self.name)

    async def invoke(self, plan: CallPlan, context: CallContext) -> ToolResult:
        """Call the remote tool; every outcome is a result shaped like a local command's."""
        try:
            reply = await self.invoker.invoke_tool(self.agent, self.remote_name, plan.arguments)
        except RemoteCallError as err:
            return ToolResult(output=f'calling tool "{self.remote_name}" on agent "{self.agent}": {err}', is_error=True)
        # A peer's reply is capped here as a local command's output is, whatever the peer did or claims.
        output, cut = capped_text(reply.output)
        if reply.is_error:
            return ToolResult(output=output, is_error=True)
        command, _ = capped_text(reply.command, MAX_REMOTE_COMMAND_BYTES)
        return ToolResult(output=output, command=command, exit_code=reply.exit_code, truncated=reply.truncated or cut)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Named:
    name: str
    tags: Sequence[str] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class _NameRule:
    tools: Sequence[str]
    tags: Sequence[str] = ()


def _parse_schema(descriptor: RemoteDescriptor, agent: str) -> dict[str, JsonValue]:
    name, raw = descriptor.name, descriptor.input_schema
    if raw is None:
        return {"type": "object"}
    try:
        value: object = json.loads(raw) if isinstance(raw, str | bytes) else json.loads(json.dumps(raw))
    except (ValueError, TypeError, RecursionError) as err:
        raise RemoteImportError(f'tool "{name}" from agent "{agent}" has an unparsable input schema: {err}') from None
    if not isinstance(value, dict):
        raise RemoteImportError(f'tool "{name}" from agent "{agent}" has an unparsable input schema: not a JSON object')
    schema = cast("dict[str, JsonValue]", value)
    problem = schema_problem(schema)
    if problem:
        raise RemoteImportError(f'tool "{name}" from agent "{agent}": {problem}')
    # A model API wants the object type spelled out; a schema that leaves it implicit means the same.
    return schema if "type" in schema else {"type": "object", **schema}
