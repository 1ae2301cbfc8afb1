"""agent.yaml: typed, validated settings for every command.

`load_config(path, mode)` and `parse_config(text, mode)` are the only readers of configuration YAML.
Unknown keys, wrong types and values the original rejects all raise one `ConfigError` line naming the
file, line, key path and what is allowed. Components receive the sub-model they need
(`MemorySettings`, `KnowledgeSettings`, ...), never raw YAML.
"""

from ._config import DEFAULT_IDENTITY, Config
from ._load import load_config, parse_config
from ._mcp_clients import DEFAULT_MCP_CLIENT_TIMEOUT, McpClientEntry, McpConfirm
from ._modes import Mode
from ._references import Resolved, UnresolvedReferenceError, check_references, resolve_references
from ._schema import (
    A2ASettings,
    BudgetSettings,
    CapabilitiesSettings,
    CaptureSettings,
    CitationRule,
    EmbeddingsSettings,
    EnvironmentSettings,
    ExposeAgentSettings,
    ExposeSettings,
    ExposeToolsSettings,
    HarnessSettings,
    HarnessTool,
    HookCommand,
    HooksSettings,
    HumanInTheLoopSettings,
    JobsSettings,
    KnowledgeSettings,
    LLMSettings,
    MCPSettings,
    MemorySettings,
    PiiSettings,
    PromptsSettings,
    RemoteAgent,
    RemoteToolHost,
    SessionsSettings,
    TelemetrySettings,
    ThinkingSettings,
    ToolFilter,
)
from ._tool_sources import ToolSourceRule, ToolSourceSettings
from ._web import WebSettings

__all__ = [
    "DEFAULT_IDENTITY",
    "DEFAULT_MCP_CLIENT_TIMEOUT",
    "McpClientEntry",
    "McpConfirm",
    "Resolved",
    "UnresolvedReferenceError",
    "check_references",
    "resolve_references",
    "A2ASettings",
    "BudgetSettings",
    "CapabilitiesSettings",
    "CaptureSettings",
    "CitationRule",
    "Config",
    "EmbeddingsSettings",
    "EnvironmentSettings",
    "ExposeAgentSettings",
    "ExposeSettings",
    "ExposeToolsSettings",
    "HarnessSettings",
    "HarnessTool",
    "HookCommand",
    "HooksSettings",
    "PiiSettings",
    "HumanInTheLoopSettings",
    "KnowledgeSettings",
    "LLMSettings",
    "MCPSettings",
    "MemorySettings",
    "Mode",
    "JobsSettings",
    "PromptsSettings",
    "WebSettings",
    "RemoteAgent",
    "RemoteToolHost",
    "SessionsSettings",
    "TelemetrySettings",
    "ThinkingSettings",
    "ToolFilter",
    "ToolSourceRule",
    "ToolSourceSettings",
    "load_config",
    "parse_config",
]
