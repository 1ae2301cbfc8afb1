"""Import the tools of third-party MCP servers (`mcp_clients`) into a run, gated like the application's commands.

`open_mcp_clients(entries, ...)` connects every configured server (stdio or streamable HTTP) with the real
`mcp` client and yields an `McpClients`: the imported tools (`McpTool`, named `<alias>_<tool>`), what
became of each server (`ServerReport`, for `fiskai info`) and, with `watch_tools`, the tool set swapped
whole when a server's list changes. The harness adds the tools to the run's `ToolSet` as kind `mcp`, so
they take the one call path (`fiskai_core.calls`): the confirm gate, approval rules on `--json.path=GLOB`,
the journal's intent and result. They are never served again (`fiskai mcp`, A2A).
"""

from ._connection import McpConnection, McpServerError
from ._redact import REDACTED, Redactor, redact_command, redact_url
from ._set import McpClients, ServerReport, open_mcp_clients
from ._tool import McpTool, gate_argv, needs_confirmation, tool_tags

__all__ = [
    "REDACTED",
    "McpClients",
    "McpConnection",
    "McpServerError",
    "McpTool",
    "Redactor",
    "ServerReport",
    "gate_argv",
    "needs_confirmation",
    "open_mcp_clients",
    "redact_command",
    "redact_url",
    "tool_tags",
]
