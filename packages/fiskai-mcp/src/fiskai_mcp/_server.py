"""The MCP server over a fixed tool set: listing, calls, limits and confirmation.

Built on the SDK's low-level `Server` because each tool brings its own JSON schema (the high-level server
derives schemas from Python signatures). Every call is answered in band: an execution failure is an error
result, a non-zero exit is a normal result carrying its exit code, a denial is an error result saying the
command did not run. Confirmation runs before the call takes a concurrency slot and outside its timeout,
so a user thinking about an approval neither blocks other calls nor eats the command's time.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError

from fiskai_core.calls import CallSlots, Refusal, hooked_output, hooked_prepare, run_call
from fiskai_core.confirm import render_command_line
from fiskai_core.errors import ArgumentsError
from fiskai_core.hooks import Decisions, Hooks, decision_line
from fiskai_core.prompter import Prompter
from fiskai_core.sanitize import sanitize_for_display
from fiskai_core.tools import Tool, ToolResult, ToolSet, trigger_tag

from ._elicit import ELICIT_TIMEOUT, Confirmation
from ._exact import EXACT_STDIN, exact_arguments
from ._names import describe_tool, servable_tools
from ._operator import OperatorApproval
from ._state import ApprovalStates
from ._verdict import DEFAULT_CONFIRM_MODE, ConfirmMode, Verdict

__all__ = ["DEFAULT_MAX_CONCURRENT", "DEFAULT_TOOL_TIMEOUT", "ServerOptions", "build_server", "trigger_tag"]

DEFAULT_MAX_CONCURRENT = 2
DEFAULT_TOOL_TIMEOUT = 30.0


def _stderr(line: str) -> None:
    # stdout may be the stdio transport: diagnostics always go to stderr.
    print(line, file=sys.stderr, flush=True)  # noqa: T201


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerOptions:
    """How the server presents itself and bounds its callers."""

    name: str = "fiskai"
    """The server name clients see (the configuration's identity)."""
    version: str = ""
    instructions: str = ""
    """Sent to clients when non-empty (`expose.agent.mcp.instructions`)."""
    confirm_mode: ConfirmMode = DEFAULT_CONFIRM_MODE
    confirm_tags: Collection[str] = ()
    """Tags that gate a tool like `ai:confirm` (`harness.confirm_tags`)."""
    max_concurrent: int = DEFAULT_MAX_CONCURRENT
    """Calls running at once, over all clients; 0 means the default."""
    tool_timeout: float = DEFAULT_TOOL_TIMEOUT
    """Seconds a call may run before it is stopped; 0 means the default."""
    approval_ttl: float = ELICIT_TIMEOUT
    """Seconds a 2026-07-28 approval question stays answerable."""
    hooks: Hooks = Hooks()
    """`pre_tool_use` / `post_tool_use` hooks (`harness.hooks`), as on every other face; decisions are logged."""
    pii_mode: Literal["redact", "reject", "off"] = "redact"
    """`harness.pii.mode` for results handed to the client's model: redacted, withheld, or passed."""


class _Handlers:
    """The state one server's handlers share."""

    def __init__(
        self,
        tools: Sequence[Tool],
        options: ServerOptions,
        *,
        confirmation: Confirmation,
        log: Callable[[str], None],
    ) -> None:
        self.tools: dict[str, Tool] = {tool.name: tool for tool in tools}
        self.options = options
        self.confirmation = confirmation
        self.log = log
        self.listing = types.ListToolsResult(
            tools=[describe_tool(tool, confirm_tags=options.confirm_tags) for tool in tools]
        )
        self.schemas: dict[str, Mapping[str, Any]] = {entry.name: entry.input_schema for entry in self.listing.tools}
        self.slots = CallSlots(options.max_concurrent or DEFAULT_MAX_CONCURRENT, owner=f'server "{options.name}"')
        self.timeout = options.tool_timeout or DEFAULT_TOOL_TIMEOUT

    async def list_tools(
        self, _ctx: ServerRequestContext[Any, Any], _params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return self.listing

    def input_schema(self, name: str) -> Mapping[str, Any] | None:
        return self.schemas.get(name)

    async def call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        tool = self.tools.get(params.name)
        if tool is None:
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name}")
        try:
            arguments = exact_arguments(ctx.request, ctx.request_id, params.arguments, EXACT_STDIN.get())
        except ArgumentsError as err:
            return _error(str(err))
        hooks, decisions = self.options.hooks, Decisions()
        hooked = await hooked_prepare(
            hooks, tool, arguments, lookup=self.tools.get, decisions=decisions, confirm_tags=self.options.confirm_tags
        )
        for record in decisions.records:
            self.log(decision_line(record, tool.name))
        call = hooked.call
        if isinstance(call, Refusal):
            return _result(call.result)
        if call.gate_tag is not None:
            display = render_command_line(call.gate_argv)
            verdict = await self.confirmation.check(
                ctx, params, tags=call.tool.tags, argv=call.gate_argv, display=display, tag=call.gate_tag
            )
            if isinstance(verdict, types.InputRequiredResult):
                self.log(f'Approval requested for "{display}" (gated by {call.gate_tag}) via input_required')
                return verdict
            self._log_decision(verdict, display, call.gate_tag)
            if not verdict.allowed:
                return _error(verdict.reason)
        if self.slots.full:
            self.log(f"Queued {call.display}: {self.slots.running} calls running")
        started: list[bool] = []

        def start() -> None:
            started.append(True)
            self.log(f"Running {call.display}")

        try:
            result = await run_call(call, time_limit=self.timeout, slots=self.slots, on_start=start)
        except anyio.get_cancelled_exc_class():
            # The client cancelled or went away: a call still waiting for its place is dropped, never run.
            if not started:
                self.log(f"Withdrawn {call.display}: the client gave up before it started")
            raise
        if hooks.post_tool_use:
            decisions = Decisions()
            result = await hooked_output(hooks, hooked, result, decisions=decisions)
            for record in decisions.records:
                self.log(decision_line(record, hooked.tool))
        # The PII guard runs after the caller's hooks, on the output they leave (reference 7.1).
        return _result(self._guarded(result))

    def _guarded(self, result: ToolResult) -> ToolResult:
        """The result past the PII guard: the client's model is a model like the agent's own.

        The reference names the guard for agent runs only; the MCP client's model gets the same protection
        (inferred), so an operator's `harness.pii.mode` means the same on every face.
        """
        mode = self.options.pii_mode
        if mode == "off" or not result.output:
            return result
        from fiskai_core.pii import guard_output

        output, guarded = guard_output(result.output, mode)
        if guarded.blocked:
            self.log(f"Withheld a result: it held {', '.join(guarded.counts) or 'what could not be scanned'}")
            return dataclasses.replace(result, output=output, is_error=True, truncated=False)
        return dataclasses.replace(result, output=output) if guarded.counts else result

    def _log_decision(self, verdict: Verdict, display: str, tag: str) -> None:
        outcome = "approved" if verdict.allowed else "denied"
        self.log(f'Approval {outcome} for "{display}" (gated by {tag}) via {verdict.channel}: {verdict.reason}')


def _result(result: ToolResult) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=result.text)], is_error=result.is_error)


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def build_server(
    tools: ToolSet | Sequence[Tool],
    options: ServerOptions | None = None,
    *,
    approver: Prompter | None = None,
    log: Callable[[str], None] = _stderr,
) -> Server[Any]:
    """An MCP server offering `tools`.

    Args:
        tools: The served set, already narrowed by `expose.agent.tools` (with `knowledge_search` when
            `expose.agent.mcp.builtins` lists it). Names the protocol rejects are skipped with a warning.
        options: Name, instructions, confirmation mode and limits.
        approver: Ask the server operator through this prompter to approve every gated call, instead of the
            client (`--approve-on-tty`); a prompter that cannot prompt denies them all.
        log: Where diagnostics and approval decisions go (stderr by default).
    """
    options = options or ServerOptions()
    log = _sanitized(log)
    listed = tools.tools() if isinstance(tools, ToolSet) else list(tools)
    served = servable_tools(listed, warn=lambda text: log(f"warning: {text}"))
    confirmation = Confirmation(
        mode=options.confirm_mode,
        server_name=options.name,
        states=ApprovalStates(ttl=options.approval_ttl),
        operator=OperatorApproval(approver, confirm_tags=options.confirm_tags) if approver is not None else None,
        log=log,
    )
    handlers = _Handlers(served, options, confirmation=confirmation, log=log)
    server: Server[Any] = Server(
        options.name,
        version=options.version,
        instructions=options.instructions or None,
        on_list_tools=handlers.list_tools,
        on_call_tool=handlers.call_tool,
        get_tool_input_schema=handlers.input_schema,
    )
    server.middleware.append(_ConnectionLog(options.confirm_mode, operator=approver is not None, log=log))
    return server


class _ConnectionLog:
    """Says on stderr who connected and how their confirm-gated calls will be approved.

    Only 2025-11-25 clients announce themselves (`notifications/initialized`); a 2026-07-28 client sends
    its capabilities with every request, and its approvals are logged call by call instead.
    """

    def __init__(self, mode: ConfirmMode, *, operator: bool, log: Callable[[str], None]) -> None:
        self._mode = mode
        self._operator = operator
        self._log = log

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        result = await call_next(ctx)
        if ctx.method == "notifications/initialized":
            params = ctx.session.client_params
            name = params.client_info.name if params is not None else "unknown"
            capabilities = ctx.session.client_capabilities
            self._log(
                f'Client "{name}" connected: {self._summary(capabilities is not None and capabilities.elicitation is not None)}'
            )
        return result

    def _summary(self, can_elicit: bool) -> str:
        if self._operator:
            return "confirm-tagged tools are approved on the server's terminal (--approve-on-tty)"
        if self._mode is ConfirmMode.NEVER:
            return "confirm-tagged tools run ungated (confirm_over_mcp=never)"
        if can_elicit:
            return "elicitation supported, confirm-tagged tools will request approval"
        if self._mode is ConfirmMode.ALWAYS:
            return "elicitation unsupported, confirm-tagged tools will be refused (confirm_over_mcp=always)"
        return "elicitation unsupported, confirm-tagged tools run ungated with nobody asked (confirm_over_mcp=auto)"


def _sanitized(log: Callable[[str], None]) -> Callable[[str], None]:
    # Log lines carry client-supplied text (a client's name, its error messages): it must never drive the
    # operator's terminal or forge a log line. Spacing is kept, so a logged command line stays exact.
    def write(line: str) -> None:
        clean = sanitize_for_display(line)
        for raw, shown in (("\n", "\\n"), ("\t", "\\t"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
            clean = clean.replace(raw, shown)
        log(clean)

    return write
