"""The provider-neutral model layer: conversation types, the Provider seam and its registry.

Only `fiskai_agent.llm.anthropic` imports the anthropic SDK, and nothing imports that module
statically: `create_provider("anthropic", ...)` loads it when a run starts.
"""

from ._base_url import validate_base_url
from ._capabilities import Capabilities, CapabilityOverrides, overrides_from_settings
from ._provider import (
    HttpExchange,
    HttpObserver,
    Provider,
    ProviderSettings,
    ProviderSpec,
    create_provider,
    credential_env_names,
    known_providers,
    preload_provider,
    provider_capabilities,
    provider_spec,
)
from ._server_kind import ServerKind, anthropic_url, capabilities_for_server, recognise_server
from ._types import (
    CacheTTL,
    ContentBlock,
    JsonObject,
    Message,
    ProviderBlock,
    Request,
    Response,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolDef,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    message_from_json,
    message_to_json,
    tool_result_from_json,
    tool_result_to_json,
)

__all__ = [
    "ServerKind",
    "anthropic_url",
    "capabilities_for_server",
    "recognise_server",
    "CacheTTL",
    "Capabilities",
    "CapabilityOverrides",
    "ContentBlock",
    "HttpExchange",
    "HttpObserver",
    "JsonObject",
    "Message",
    "Provider",
    "ProviderBlock",
    "ProviderSettings",
    "ProviderSpec",
    "Request",
    "Response",
    "Role",
    "TextBlock",
    "ThinkingBlock",
    "ToolDef",
    "ToolResultBlock",
    "ToolUseBlock",
    "Usage",
    "create_provider",
    "credential_env_names",
    "known_providers",
    "message_from_json",
    "message_to_json",
    "overrides_from_settings",
    "preload_provider",
    "provider_capabilities",
    "provider_spec",
    "tool_result_from_json",
    "tool_result_to_json",
    "validate_base_url",
]
