"""The MCP server over a fixed tool set: listing, calls, limits and confirmation.

Built on the SDK's low-level `Server` because each tool brings its own JSON schema (the high-level server
derives schemas from Python signatures). Every call is answered in band: an execution failure is an error
result, a non-zero exit is a normal result carrying its exit code, a denial is an error result saying the
command did not run. Confirmation runs before the call takes a concurrency slot and outside its timeout,
so a user thinking about an approval neither blocks other calls nor eats the command's time.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError

from fiskai_core.builtins import KNOWLEDGE_SEARCH, KnowledgeSearchTool
from fiskai_core.knowledge import KnowledgeSearcher
from fiskai_core.prompter import Prompter
from fiskai_core.sanitize import sanitize_for_display
from fiskai_core.tools import TAG_CONFIRM, Tool, ToolResult

from ._display import prepare_call
from ._elicit import ELICIT_TIMEOUT, Confirmation
from ._names import describe_tool, servable_tools
from ._operator import OperatorApproval
from ._state import ApprovalStates
from ._verdict import DEFAULT_CONFIRM_MODE, ConfirmMode, Verdict

__all__ = ["DEFAULT_MAX_CONCURRENT", "DEFAULT_TOOL_TIMEOUT", "ServerOptions", "build_server"]

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
        self.slots = anyio.Semaphore(options.max_concurrent or DEFAULT_MAX_CONCURRENT)
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
        raw = json.dumps(params.arguments or {}, ensure_ascii=False)
        prepared = prepare_call(tool, raw)
        if isinstance(prepared, ToolResult):
            return _result(prepared)
        display = prepared.display
        tag = trigger_tag(tool.tags, self.options.confirm_tags)
        if tag is not None:
            verdict = await self.confirmation.check(
                ctx, params, tags=tool.tags, argv=prepared.argv, display=display, tag=tag
            )
            if isinstance(verdict, types.InputRequiredResult):
                self.log(f'Approval requested for "{display}" (gated by {tag}) via input_required')
                return verdict
            self._log_decision(verdict, display, tag)
            if not verdict.allowed:
                return _error(verdict.reason)
        async with self.slots:
            self.log(f"Running {display}")
            result: ToolResult | None = None
            with anyio.move_on_after(self.timeout):
                try:
                    result = await tool.execute(raw)
                # The call boundary: a tool must not raise, but one that does (a bug, a broken seam) still owes
                # the client an in-band error result, and the server keeps serving everyone else.
                except Exception as err:  # noqa: BLE001
                    self.log(f"error: tool {tool.name} raised {type(err).__name__}: {err}")
                    return _error(
                        f'tool "{tool.name}" failed: {type(err).__name__}: {err}. The command may not have run.'
                    )
            if result is None:
                return _error(
                    f'tool "{tool.name}" did not finish within {self.timeout:g}s and was stopped; '
                    "its output is lost. Narrow the request or ask the operator to raise tool_timeout."
                )
        return _result(result)

    def _log_decision(self, verdict: Verdict, display: str, tag: str) -> None:
        outcome = "approved" if verdict.allowed else "denied"
        self.log(f'Approval {outcome} for "{display}" (gated by {tag}) via {verdict.channel}: {verdict.reason}')


def trigger_tag(tags: Sequence[str], confirm_tags: Collection[str]) -> str | None:
    """The tag that gates a tool: `ai:confirm` first, else its first tag listed in `confirm_tags`."""
    if TAG_CONFIRM in tags:
        return TAG_CONFIRM
    return next((tag for tag in tags if tag in confirm_tags), None)


def _result(result: ToolResult) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=result.text)], is_error=result.is_error)


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def build_server(
    tools: Sequence[Tool],
    options: ServerOptions | None = None,
    *,
    knowledge: KnowledgeSearcher | None = None,
    knowledge_tokens: int = 6000,
    serve_knowledge: bool = False,
    approver: Prompter | None = None,
    log: Callable[[str], None] = _stderr,
) -> Server[Any]:
    """An MCP server offering `tools` (and, when asked, `knowledge_search`).

    Args:
        tools: The served set, already narrowed by `expose.agent.tools`. Names the protocol rejects are
            skipped with a warning through `log`.
        options: Name, instructions, confirmation mode and limits.
        knowledge: The read-only index `knowledge_search` searches (`None`: it answers `index_not_built`).
        knowledge_tokens: The token budget of each knowledge pack (`max_injected_tokens`).
        serve_knowledge: Offer `knowledge_search` (`expose.agent.mcp.builtins` lists it).
        approver: Ask the server operator through this prompter to approve every gated call, instead of the
            client (`--approve-on-tty`); a prompter that cannot prompt denies them all.
        log: Where diagnostics and approval decisions go (stderr by default).

    Raises:
        ValueError: a served tool is already named `knowledge_search`.
    """
    options = options or ServerOptions()
    log = _sanitized(log)
    served = servable_tools(tools, warn=lambda text: log(f"warning: {text}"))
    if serve_knowledge:
        if any(tool.name == KNOWLEDGE_SEARCH for tool in served):
            raise ValueError(
                f'cannot expose built-in "{KNOWLEDGE_SEARCH}" over MCP: a wrapped command already exposes a tool '
                "with that name; exclude or rename it"
            )
        served.append(_KnowledgeForEachCall(knowledge, max_injected_tokens=knowledge_tokens))
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


class _KnowledgeForEachCall:
    """`knowledge_search` with no memory across calls.

    In a run the built-in skips excerpts it already delivered; a server has many unrelated clients, so
    each call gets a fresh tool and one client's searches never hide results from another.
    """

    def __init__(self, searcher: KnowledgeSearcher | None, *, max_injected_tokens: int) -> None:
        self._searcher = searcher
        self._tokens = max_injected_tokens
        self._template = KnowledgeSearchTool(searcher, max_injected_tokens=max_injected_tokens)

    @property
    def name(self) -> str:
        return self._template.name

    @property
    def tags(self) -> Sequence[str]:
        return self._template.tags

    @property
    def description(self) -> str:
        return self._template.description

    @property
    def input_schema(self) -> Mapping[str, Any]:
        return self._template.input_schema

    async def execute(self, arguments: str | bytes | None) -> ToolResult:
        return await KnowledgeSearchTool(self._searcher, max_injected_tokens=self._tokens).execute(arguments)
