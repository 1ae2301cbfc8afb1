"""The serving engine: answers discovery, tool calls and cancels, whatever transport carries them.

Policy (the original's, plus Cancel and Event):
* Served set: the given tools minus confirmation-gated ones (never served: no operator to approve),
  names the protocol cannot carry, and tools with no description.
* Every inbound message is decoded and validated against its v1 schema, and must be the protocol its
  route expects; anything else is answered with a v1 error message (code 400) and serving goes on.
* At most `max_concurrent` calls run at once. A call that finds no free slot waits up to
  `queue_timeout` seconds, at most `max_waiting` of them at a time; past either it is answered with an
  in-band busy error, so every call gets an answer and none waits without bound.
* Each call runs under `tool_timeout`; running out cancels it, which kills the command's process group.
* A failure is always an in-band error reply; a non-zero exit is a successful reply with its exit code.
* A Cancel cancels a call (the process group is killed) and is acked only when it presents the key whose
  digest the call's request carried (`fiskai_a2a.transport.cancel_digest`): copying the sender name, the
  request id or the reply subject is not enough. Any other Cancel gets no answer at all.
* A caller that asked for events gets a `status` Event when its call has to queue, one `FIRST_BEAT`
  seconds in (the phase then), and one every `heartbeat` seconds after, so it can tell a slow call from
  a dead server. A call that finishes sooner sends none: on loopback an event costs about 0.3 ms, as
  much as the rest of the protocol's overhead.
"""

from __future__ import annotations

import dataclasses
import hmac
import json
import logging
import re
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal, cast

import anyio
from pydantic import JsonValue, ValidationError

from fiskai_core.calls import CallSlots, Refusal, SlotsBusyError, hooked_output, hooked_prepare, run_call
from fiskai_core.errors import ArgumentsError
from fiskai_core.hooks import Decisions, Hooks, decision_line
from fiskai_core.telemetry import Span, current as current_telemetry
from fiskai_core.tools import DecodedValue, Tool, ToolResult, arguments_from_value, requires_confirmation

from .errors import A2AError, MessageError, MessageTooLargeError
from .protocol import (
    CANCEL,
    DISCOVERY_REQUEST,
    HEADER_FIELDS,
    MAX_MESSAGE_BYTES,
    NAMESPACE,
    TOOL_REQUEST,
    Ack,
    Cancel,
    DiscoveryReply,
    ErrorMessage,
    Event,
    ExecResult,
    Header,
    Identity,
    StatusBlock,
    ToolDescriptor,
    ToolReply,
    ToolRequest,
    check_nesting,
    decode,
    decode_exact,
    encode,
    new_id,
    reply_header,
)
from .transport import EventSink, Reply, Route

__all__ = [
    "DEFAULT_HEARTBEAT",
    "DEFAULT_MAX_CONCURRENT",
    "DEFAULT_TOOL_TIMEOUT",
    "FIRST_BEAT",
    "Server",
    "SkippedTool",
]

DEFAULT_MAX_CONCURRENT: Final = 2
DEFAULT_TOOL_TIMEOUT: Final = 30.0
DEFAULT_HEARTBEAT: Final = 1.0
DEFAULT_QUEUE_TIMEOUT: Final = 10.0
FIRST_BEAT: Final = 0.1
"""Seconds into a call before its first progress event: quicker calls send none."""
_NAME = re.compile(r"[a-zA-Z0-9_-]+")
_log = logging.getLogger("fiskai_a2a")


@dataclass(frozen=True, slots=True, kw_only=True)
class SkippedTool:
    """A tool the server does not serve, and why."""

    name: str
    reason: str


@dataclass(slots=True, kw_only=True)
class _Call:
    request: ToolRequest
    digest: str = ""
    """The cancel digest the request committed to; "" means nobody can cancel it."""
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    stopped: str = ""
    """Why the call was stopped before it finished (the in-band error text)."""
    arguments: DecodedValue = None
    """The request's `input` as the peer wrote it (numbers keep their text)."""
    phase: str = "queued"
    sequence: int = 0


class Server:
    """Serves a set of tools to other agents; a transport's `Handler`.

    Args:
        identity: The agent identity (card name, queue group, subjects).
        version: The version the card reports.
        tools: Candidate tools, already through the selection rules.
        confirm_tags: Extra gating tags (harness.confirm_tags); tools with them or `ai:confirm` are not served.
        max_concurrent: Calls running at once.
        tool_timeout: Seconds one call may run.
        queue_timeout: Seconds a call may wait for a slot before it is answered busy; when None, the shorter
            of `tool_timeout` and 10 s, so a queued call is answered before a 30 s caller gives up on it.
        max_waiting: Calls that may wait for a slot at once (`16 * max_concurrent` when None).
        heartbeat: Seconds between progress events while a call runs.
        description: The card's description.
        hooks: `pre_tool_use` / `post_tool_use` hooks (`harness.hooks`), as on every other face; a rewrite
            can only name a served tool (never a gated one); decisions are logged.

    Raises:
        A2AError: nothing is left to serve.
    """

    def __init__(
        self,
        *,
        identity: str,
        version: str,
        tools: Sequence[Tool],
        confirm_tags: Collection[str] = (),
        max_concurrent: int = DEFAULT_MAX_CONCURRENT,
        tool_timeout: float = DEFAULT_TOOL_TIMEOUT,
        queue_timeout: float | None = None,
        max_waiting: int | None = None,
        heartbeat: float = DEFAULT_HEARTBEAT,
        description: str | None = None,
        hooks: Hooks | None = None,
        pii_mode: Literal["redact", "reject", "off"] = "redact",
    ) -> None:
        if not tools:
            raise A2AError("no tools available after filtering; check include/exclude in the configuration")
        served: dict[str, Tool] = {}
        skipped: list[SkippedTool] = []
        for tool in tools:
            reason = _skip_reason(tool, confirm_tags)
            if reason:
                skipped.append(SkippedTool(name=tool.name, reason=reason))
            else:
                served[tool.name] = tool
        if not served:
            raise A2AError("no tools available to serve over a2a; all were filtered or confirmation-gated")
        self.identity = identity
        self.version = version
        self.description = description
        self.hooks = hooks or Hooks()
        self.tools: dict[str, Tool] = served
        """What is served, by name."""
        self.skipped: list[SkippedTool] = skipped
        self.me = Identity(name=identity, instance=new_id())
        """This instance: the identity plus a random instance id."""
        self.max_concurrent = max(1, max_concurrent)
        self.tool_timeout = tool_timeout
        self.pii_mode: Literal["redact", "reject", "off"] = pii_mode
        """`harness.pii.mode` for results handed back to the calling agent (its model sees them)."""
        self._heartbeat = heartbeat
        self._slots = CallSlots(
            self.max_concurrent,
            waiting=max_waiting,
            queue_timeout=min(tool_timeout, DEFAULT_QUEUE_TIMEOUT) if queue_timeout is None else queue_timeout,
            owner=f"agent {_quote(identity)}",
        )
        self._calls: dict[str, _Call] = {}
        self._closing = False
        self._idle = anyio.Event()
        self._idle.set()
        self._descriptors = [
            ToolDescriptor(name=tool.name, description=tool.description, input_schema=dict(tool.input_schema))
            for tool in served.values()
        ]

    @property
    def in_flight(self) -> int:
        """Calls accepted and not yet answered (waiting or running)."""
        return len(self._calls)

    async def stop_calls(self, reason: str) -> None:
        """Refuse new calls and stop the ones in flight, each answered in-band with `reason`.

        For a clean shutdown: while the transport still runs, every caller gets an answer instead of
        waiting out its timeout, and every running command's process group is killed. Returns once no call
        is in flight.
        """
        self._closing = True
        for call in self._calls.values():
            call.stopped = f"tool call stopped: {reason}"
            call.scope.cancel()
        await self._idle.wait()

    async def __call__(self, route: Route, payload: bytes, events: EventSink, digest: str = "") -> Reply | None:
        """Answer one inbound message; never raises (see `fiskai_a2a.transport.Handler`)."""
        if route.kind == "discovery":
            return self._discovery(payload)
        if route.kind == "tool":
            return await self._tool(payload, events, digest)
        return self._control(payload, digest)

    def _discovery(self, payload: bytes) -> Reply:
        try:
            request = decode(payload, expect={DISCOVERY_REQUEST})
        except MessageError as err:
            return self._refuse(err, payload)
        card = DiscoveryReply(
            header=reply_header(DiscoveryReply.PROTOCOL, request.header, sender=self.me),
            name=self.identity,
            version=self.version,
            description=self.description or None,
            protocols=[NAMESPACE],
            tools=self._descriptors,
        )
        return self._encoded(card, payload)

    def refusal(self, err: MessageError, payload: bytes) -> Reply:
        """The 400 answer to a message that cannot be used: a v1 `error` naming why, with the micro error code."""
        return self._refuse(err, payload)

    async def run_request(self, request: ToolRequest, arguments: DecodedValue) -> Reply:
        """Run one decoded request now, outside the queue (the 0.0.5 endpoint keeps its own slots).

        The reply is the single `tool.reply` of the older protocol, which is also a valid 0.0.5 final reply.
        """
        tool = self.tools.get(request.name)
        if tool is None:
            return self._reply(request, is_error=True, output=f"tool {_quote(request.name)} is not available")
        return await self._run(_Call(request=request, arguments=arguments), tool)

    async def _tool(self, payload: bytes, events: EventSink, digest: str) -> Reply:
        try:
            message, exact = decode_exact(payload, expect={TOOL_REQUEST})
        except MessageError as err:
            return self._refuse(err, payload)
        request = cast("ToolRequest", message)
        tool = self.tools.get(request.name)
        if tool is None:
            return self._reply(request, is_error=True, output=f"tool {_quote(request.name)} is not available")
        key = request.header.request
        if key in self._calls:
            return self._reply(request, is_error=True, output=f"a call with request id {_quote(key)} is in flight")
        if self._closing:
            return self._reply(request, is_error=True, output=f"agent {_quote(self.identity)} is shutting down")
        if self._slots.full and self._slots.waiting >= self._slots.waiting_limit:
            return self._busy(request)
        call = _Call(request=request, arguments=exact.get("input") or {}, digest=digest)
        if not self._calls:
            self._idle = anyio.Event()
        self._calls[key] = call
        try:
            with call.scope:
                return await self._queue_and_run(call, tool, events)
            return self._reply(request, is_error=True, output=call.stopped)
        finally:
            del self._calls[key]
            if not self._calls:
                self._idle.set()

    async def _queue_and_run(self, call: _Call, tool: Tool, events: EventSink) -> Reply:
        reply: Reply | None = None
        async with anyio.create_task_group() as progress:
            progress.start_soon(self._beat, call, events)
            reply = await self._acquire_and_run(call, tool, events)
            progress.cancel_scope.cancel()
        assert reply is not None, "the progress group only ends early by raising"
        return reply

    async def _acquire_and_run(self, call: _Call, tool: Tool, events: EventSink) -> Reply:
        try:
            async with self._slots.place():
                call.phase = "executing-tool"
                return await self._run(call, tool)
        except SlotsBusyError:
            return self._busy(call.request)

    async def _run(self, call: _Call, tool: Tool) -> Reply:
        # One span per served call; it joins the caller's trace when the request carried its context.
        attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool.name}
        with current_telemetry().span(f"execute_tool {tool.name}", attributes) as span:
            span.set("fisk.tool.kind", "application")
            return await self._execute(call, tool, span)

    async def _execute(self, call: _Call, tool: Tool, span: Span) -> Reply:
        request = call.request
        started = time.monotonic()
        _log.info("Running tool call tool=%s sender=%s", request.name, request.header.sender.name)
        decisions = Decisions()
        try:
            hooked = await hooked_prepare(
                self.hooks,
                tool,
                arguments_from_value(call.arguments),
                lookup=self.tools.get,
                decisions=decisions,
                tool_use_id=request.header.request,
            )
        except ArgumentsError as err:
            span.error("error")
            return self._reply(request, is_error=True, output=str(err))
        for record in decisions.records:
            _log.info("%s", decision_line(record, tool.name))
        if hooked.rewritten:
            span.set("fisk.tool.rewritten", True)
        prepared = hooked.call
        if isinstance(prepared, Refusal):
            outcome = {"missing": "missing_arguments", "denied": "policy_denied"}.get(prepared.kind, "error")
            span.set("fisk.tool.outcome", outcome)
            span.error(outcome)
            return self._reply(request, is_error=True, output=prepared.result.output)
        result = await run_call(prepared, time_limit=self.tool_timeout)
        if self.hooks.post_tool_use:
            decisions = Decisions()
            result = await hooked_output(
                self.hooks, hooked, result, decisions=decisions, tool_use_id=request.header.request
            )
            for record in decisions.records:
                _log.info("%s", decision_line(record, hooked.tool))
        # The PII guard runs after the caller's hooks, on the output they leave (reference 7.1).
        result = _guarded(result, self.pii_mode)
        span.set("fisk.tool.outcome", "error" if result.is_error else "executed")
        if result.exit_code is not None:
            span.set("fisk.tool.exit_code", result.exit_code)
        _log.info(
            "Tool call completed tool=%s duration=%.3fs exit_code=%s truncated=%s is_error=%s",
            request.name,
            time.monotonic() - started,
            result.exit_code,
            result.truncated,
            result.is_error,
        )
        if result.is_error:
            return self._reply(request, is_error=True, output=result.output)
        executed = None
        if result.command is not None:
            executed = ExecResult(
                command=result.command, exit_code=result.exit_code or None, truncated=True if result.truncated else None
            )
        elif result.exit_code:
            executed = ExecResult(exit_code=result.exit_code)
        return self._reply(request, output=result.output, exec_result=executed)

    async def _beat(self, call: _Call, events: EventSink) -> None:
        if call.phase == "queued" and self._slots.full:
            await self._event(call, events)
        await anyio.sleep(min(FIRST_BEAT, self._heartbeat))
        while True:
            await self._event(call, events)
            await anyio.sleep(self._heartbeat)

    async def _event(self, call: _Call, events: EventSink) -> None:
        call.sequence += 1
        header = reply_header(Event.PROTOCOL, call.request.header, sender=self.me, sequence=call.sequence)
        await events(encode(Event(header=header, block=StatusBlock(phase=call.phase))))

    def _control(self, payload: bytes, digest: str) -> Reply | None:
        try:
            cancel = cast("Cancel", decode(payload, expect={CANCEL}))
        except MessageError as err:
            return self._refuse(err, payload)
        call = self._calls.get(cancel.header.request)
        if call is None or not _from_requester(call, cancel, digest):
            # Another instance holds it, it is already answered, or the Cancel cannot show it comes from
            # the call's requester; silence tells a stranger nothing about which calls exist.
            return None
        reason = f" ({cancel.reason})" if cancel.reason else ""
        by = f"{cancel.header.sender.name}{reason}"
        call.stopped = f"tool call canceled by {by}"
        call.scope.cancel()
        _log.info("Tool call canceled tool=%s by=%s", call.request.name, by)
        ack = Ack(header=reply_header(Ack.PROTOCOL, cancel.header, sender=self.me), accepted=True)
        return self._encoded(ack, payload)

    def _busy(self, request: ToolRequest) -> Reply:
        slots = self._slots
        return self._reply(
            request,
            is_error=True,
            output=f"agent {_quote(self.identity)} is busy: {slots.running} calls running and no slot freed within "
            f"{slots.queue_timeout:g}s; retry later",
        )

    def _reply(
        self, request: ToolRequest, *, output: str, is_error: bool = False, exec_result: ExecResult | None = None
    ) -> Reply:
        reply = ToolReply(
            header=reply_header(ToolReply.PROTOCOL, request.header, sender=self.me),
            is_error=True if is_error else None,
            output=output,
            exec=exec_result,
        )
        try:
            return Reply(payload=encode(reply))
        except MessageTooLargeError as err:
            return self._reply(request, is_error=True, output=f"the reply is too large to send: {err}")

    def _encoded(self, message: ErrorMessage | DiscoveryReply | Ack, payload: bytes) -> Reply:
        try:
            return Reply(payload=encode(message))
        except A2AError as err:
            header = reply_header(ErrorMessage.PROTOCOL, message.header, sender=self.me)
            failure = ErrorMessage(header=header, error=f"cannot encode the reply: {err}", code="500")
            return Reply(payload=encode(failure), error_code="500", error_text=failure.error)

    def _refuse(self, err: MessageError, payload: bytes) -> Reply:
        _log.warning("Rejected message error=%s", err)
        header = reply_header(ErrorMessage.PROTOCOL, _salvage_header(payload), sender=self.me)
        message = ErrorMessage(header=header, error=str(err), stop_reason="error", code=err.code)
        return Reply(payload=encode(message), error_code=err.code, error_text=str(err))


def _from_requester(call: _Call, cancel: Cancel, digest: str) -> bool:
    """Whether a Cancel proves it comes from whoever sent the call (see `transport.cancel_digest`)."""
    if not call.digest or not digest or call.request.header.sender.name != cancel.header.sender.name:
        return False
    return hmac.compare_digest(call.digest, digest)


def _quote(value: str) -> str:
    """A value in double quotes with control characters escaped (as Go's %q shows a peer's input)."""
    return json.dumps(value, ensure_ascii=False)


def _skip_reason(tool: Tool, confirm_tags: Collection[str]) -> str:
    if requires_confirmation(tool.tags, confirm_tags):
        return (
            "confirmation-gated commands are not served over a2a (no operator to approve); use ai:deny to suppress this"
        )
    if not _NAME.fullmatch(tool.name):
        return "the name is not valid on the a2a protocol (letters, digits, '-' and '_' only)"
    if not tool.description.strip():
        return "it has no description"
    return ""


def _salvage_header(payload: bytes) -> Header | None:
    """The header of a message that failed validation, when it has a usable one, so the error correlates."""
    if len(payload) > MAX_MESSAGE_BYTES:
        return None
    try:
        # A message refused for its depth would blow the decoder's recursion here too.
        check_nesting(payload)
        document: object = json.loads(payload)
        if not isinstance(document, dict):
            return None
        fields = cast("dict[str, JsonValue]", document)
        return Header.model_validate({key: value for key, value in fields.items() if key in HEADER_FIELDS})
    except (MessageError, ValueError, ValidationError):
        return None


def _guarded(result: ToolResult, mode: Literal["redact", "reject", "off"]) -> ToolResult:
    """A served result past the PII guard, before it leaves for the calling agent.

    Inferred: the reference names the guard for runs; the caller's model is protected the same way, and
    the caller's own guard then finds only placeholders.
    """
    if mode == "off" or not result.output:
        return result
    from fiskai_core.pii import guard_output

    output, guarded = guard_output(result.output, mode)
    if guarded.blocked:
        _log.info("Withheld a tool result holding %s", ", ".join(guarded.counts) or "what could not be scanned")
        return dataclasses.replace(result, output=output, is_error=True, truncated=False)
    return dataclasses.replace(result, output=output) if guarded.counts else result
