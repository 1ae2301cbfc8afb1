"""The `expose:` blocks of agent.yaml: what an agent serves over MCP and A2A, and their limits.

Split from `_schema.py` (which re-exports these) so each module stays small; same rules as there.
"""

from __future__ import annotations

from datetime import timedelta
from typing import ClassVar, Literal

from pydantic import (
    Field,
    ValidationInfo,
    field_validator,
)

from fiskai_core._gojson import go_quote

from ._schema import (
    DEFAULT_REQUEST_TIMEOUT,
    KNOWLEDGE_SEARCH_TOOL,
    MAX_CONCURRENT_TOOLS_CEILING,
    MIN_REQUEST_TIMEOUT,
    Block,
    Int,
    SettingError,
    Text,
    ToolFilter,
    _duration,  # pyright: ignore[reportPrivateUsage]
    _names,  # pyright: ignore[reportPrivateUsage]
    as_written,
)
from ._web import WebSettings


class _ServerLimits(Block):
    """Per-server concurrency and timeout; 0 or empty means the server's default."""

    _where: ClassVar[str] = ""

    max_concurrent_tools: Int = 0
    """0 = the server default (2)."""
    tool_timeout: timedelta | None = None
    """None = the server default (30s)."""

    @field_validator("max_concurrent_tools")
    @classmethod
    def _limit(cls, value: int) -> int:
        if value < 0:
            raise SettingError(f"invalid {cls._where}.max_concurrent_tools {value}: must not be negative")
        if value > MAX_CONCURRENT_TOOLS_CEILING:
            raise SettingError(
                f"invalid {cls._where}.max_concurrent_tools {value}: must not exceed {MAX_CONCURRENT_TOOLS_CEILING}"
            )
        return value

    @field_validator("tool_timeout", mode="before")
    @classmethod
    def _tool_timeout(cls, value: object) -> object:
        parsed = _duration(value, key=f"{cls._where}.tool_timeout", default=None)
        if isinstance(parsed, timedelta):
            if parsed < timedelta(0):
                written = str(as_written(value))
                raise SettingError(f"invalid {cls._where}.tool_timeout {go_quote(written)}: must not be negative")
            return parsed or None
        return parsed


class MCPSettings(_ServerLimits):
    """`expose.agent.mcp`: its presence (even `{}`) enables `fiskai mcp`."""

    _where: ClassVar[str] = "expose.agent.mcp"

    port: Int = 0
    """0 = the caller's default (8080)."""
    address: Text = ""
    """"" = 127.0.0.1."""
    instructions: Text = ""
    confirm_over_mcp: Literal["auto", "always", "never"] = "always"
    """How `ai:confirm` and `confirm_tags` commands are approved over MCP. `always`: a client that supports
    elicitation asks its user, any other client is refused. `auto` (the Go agent's default): the same, but a
    client without elicitation runs them with nobody asked. `never`: nobody is asked, the client's own UI is
    trusted. Empty means `always`. `fiskai mcp --approve-on-tty` asks on the server's terminal instead."""
    builtins: list[Text] = Field(default_factory=list[str])
    """Built-in tools to serve too; only `knowledge_search` may be listed."""

    @field_validator("confirm_over_mcp", mode="before")
    @classmethod
    def _confirm_over_mcp(cls, value: object) -> object:
        value = as_written(value)
        if not isinstance(value, str):
            return value
        # Unset is `always`, not the original's `auto`: a client that cannot ask its user must not run a
        # gated command with nobody asked unless the operator chose that.
        mode = value.strip().lower() or "always"
        if mode not in ("auto", "always", "never"):
            raise SettingError(f"invalid confirm_over_mcp {go_quote(value)}: must be auto, always or never")
        return mode

    @field_validator("builtins")
    @classmethod
    def _builtins(cls, values: list[str]) -> list[str]:
        names = _names(values)
        for name in names:
            if name != KNOWLEDGE_SEARCH_TOOL:
                raise SettingError(
                    f"expose.agent.mcp.builtins: {go_quote(name)} cannot be exposed over MCP; the only exposable "
                    "built-in is the read-only knowledge_search (the memory and human_in_the_loop built-ins are "
                    "never exposable because they need operator state or interaction)"
                )
        return names


class PromptsSettings(Block):
    """`expose.agent.a2a.prompts`: its presence (even `{}`) turns on answering prompts over NATS."""

    workers: Int = 1
    """Prompts answered at once; a caller arriving when all are busy is refused (`capacity`), never queued."""
    elicit: bool = False
    """Let a run put approvals and questions to the caller; without it gated commands are refused."""

    @field_validator("workers")
    @classmethod
    def _workers(cls, value: int) -> int:
        if value < 0:
            raise SettingError(f"invalid expose.agent.a2a.prompts.workers {value}: must not be negative")
        return value or 1


_QUEUE_NAME = r"^[A-Za-z0-9_-]+$"


class JobsSettings(Block):
    """`expose.agent.jobs`: its presence (even `{}`) turns on taking queued jobs (choria-io/asyncjobs)."""

    queue: Text = "FISK_AI"
    """The work queue; it must already exist (`ajc queue add`): the worker creates nothing."""
    task_type: Text = "fisk-ai:run"
    """Only tasks of this type are taken; other types on the queue are left alone."""
    workers: Int = 1
    """Jobs run at once by this worker; `--workers` overrides."""
    nats_context: Text = ""
    """The context the queue is reached through (default: the top-level `nats_context`)."""
    max_payload: Int = 524288
    """The largest task payload taken, in bytes, checked before any decoding."""

    @field_validator("queue")
    @classmethod
    def _queue(cls, value: str) -> str:
        import re

        if not value:
            return "FISK_AI"
        if re.fullmatch(_QUEUE_NAME, value) is None:
            raise SettingError(
                f"invalid expose.agent.jobs.queue {go_quote(value)}: use letters, digits, - and _ (a NATS subject token)"
            )
        return value

    @field_validator("task_type")
    @classmethod
    def _task_type(cls, value: str) -> str:
        return value or "fisk-ai:run"

    @field_validator("workers", "max_payload")
    @classmethod
    def _positive(cls, value: int, info: ValidationInfo) -> int:
        if value < 0:
            raise SettingError(f"invalid expose.agent.jobs.{info.field_name} {value}: must not be negative")
        return value or (1 if info.field_name == "workers" else 524288)


class A2ASettings(_ServerLimits):
    """`expose.agent.a2a`: the tool endpoint (`serve_tools`), the prompts channel and the caller's patience."""

    _where: ClassVar[str] = "expose.agent.a2a"

    serve_tools: bool = False
    """Serve the selected tools to peers under `fiskai serve` (replaces `expose.agent.agent_to_agent`)."""
    request_timeout: timedelta = DEFAULT_REQUEST_TIMEOUT
    """Silence accepted from a peer this agent calls, per gap between its messages; also how long a question
    to a prompts caller is held. Values under 30s are raised to 30s (three keepalive intervals)."""
    prompts: PromptsSettings | None = None
    """None when absent; present (even empty) enables answering prompts."""

    @field_validator("request_timeout", mode="before")
    @classmethod
    def _request_timeout(cls, value: object) -> object:
        parsed = _duration(value, key="expose.agent.a2a.request_timeout", default=DEFAULT_REQUEST_TIMEOUT)
        if isinstance(parsed, timedelta):
            if parsed <= timedelta(0):
                raise SettingError(
                    f"invalid expose.agent.a2a.request_timeout {go_quote(str(as_written(value)))}: must be positive "
                    f"(at least {MIN_REQUEST_TIMEOUT.total_seconds():g}s)"
                )
            return max(parsed, MIN_REQUEST_TIMEOUT)
        return parsed


class ExposeToolsSettings(Block):
    """`expose.agent.tools`: narrows what MCP and a2a serve (a rule applies only when non-empty)."""

    include: ToolFilter = Field(default_factory=ToolFilter)
    exclude: ToolFilter = Field(default_factory=ToolFilter)


class ExposeAgentSettings(Block):
    """`expose.agent`."""

    agent_to_agent: bool = False
    """The pre-0.0.5 switch for `fiskai a2a`; `fiskai serve` refuses it (use `expose.agent.a2a.serve_tools`)."""
    mcp: MCPSettings | None = None
    """None when absent; present (even empty) enables `fiskai mcp`."""
    a2a: A2ASettings = Field(default_factory=A2ASettings)
    tools: ExposeToolsSettings = Field(default_factory=ExposeToolsSettings)
    jobs: JobsSettings | None = None
    """None when absent; present (even empty) enables taking queued jobs under `fiskai serve`."""
    web: WebSettings | None = None
    """None when absent; present turns on the web channel of `fiskai serve` (`origins` is required)."""


class ExposeSettings(Block):
    """`expose`."""

    agent: ExposeAgentSettings = Field(default_factory=ExposeAgentSettings)
