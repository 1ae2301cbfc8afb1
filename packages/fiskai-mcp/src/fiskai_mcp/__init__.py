"""Serve fiskai tools over the Model Context Protocol.

`build_server(tools, options)` makes an MCP server over a tool set (any `fiskai_core.tools.Tool`s); `serve`
runs it over streamable HTTP or stdio. Every call goes through `fiskai_core.calls`, with its arguments
exactly as the client wrote them (`1.50` stays `1.50`). Confirm-gated tools are approved by the client's user through
elicitation (both protocol eras) or by the server operator, and fail closed.
"""

from ._http import DEFAULT_ADDRESS, DEFAULT_PATH, DEFAULT_PORT, is_loopback, serve, serve_async
from ._names import servable_tools
from ._server import DEFAULT_MAX_CONCURRENT, DEFAULT_TOOL_TIMEOUT, ServerOptions, build_server, trigger_tag
from ._verdict import ConfirmMode

__all__ = [
    "DEFAULT_ADDRESS",
    "DEFAULT_MAX_CONCURRENT",
    "DEFAULT_PATH",
    "DEFAULT_PORT",
    "DEFAULT_TOOL_TIMEOUT",
    "ConfirmMode",
    "ServerOptions",
    "build_server",
    "is_loopback",
    "serve",
    "serve_async",
    "servable_tools",
    "trigger_tag",
]
