"""agent.yaml: typed, validated settings for every command.

`load_config(path, mode)` and `parse_config(text, mode)` are the only readers of configuration YAML.
Unknown keys, wrong types and values the original rejects all raise one `ConfigError` line naming the
file, line, key path and what is allowed. Components receive the sub-model they need
(`MemorySettings`, `KnowledgeSettings`, ...), never raw YAML.
"""

from ._config import DEFAULT_IDENTITY, Config
from ._load import load_config, parse_config
from ._modes import Mode
from ._schema import (
    A2ASettings,
    BudgetSettings,
    CapabilitiesSettings,
    EmbeddingsSettings,
    EnvironmentSettings,
    ExposeAgentSettings,
    ExposeSettings,
    ExposeToolsSettings,
    HarnessSettings,
    HumanInTheLoopSettings,
    KnowledgeSettings,
    LLMSettings,
    MCPSettings,
    MemorySettings,
    RemoteAgent,
    RemoteToolHost,
    SessionsSettings,
    ThinkingSettings,
    ToolFilter,
)
from ._tool_sources import ToolSourceRule, ToolSourceSettings

__all__ = [
    "DEFAULT_IDENTITY",
    "A2ASettings",
    "BudgetSettings",
    "CapabilitiesSettings",
    "Config",
    "EmbeddingsSettings",
    "EnvironmentSettings",
    "ExposeAgentSettings",
    "ExposeSettings",
    "ExposeToolsSettings",
    "HarnessSettings",
    "HumanInTheLoopSettings",
    "KnowledgeSettings",
    "LLMSettings",
    "MCPSettings",
    "MemorySettings",
    "Mode",
    "RemoteAgent",
    "RemoteToolHost",
    "SessionsSettings",
    "ThinkingSettings",
    "ToolFilter",
    "ToolSourceRule",
    "ToolSourceSettings",
    "load_config",
    "parse_config",
]
