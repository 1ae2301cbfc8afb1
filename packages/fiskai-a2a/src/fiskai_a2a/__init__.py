"""fiskai agent-to-agent: serve tools to other agents and call theirs, over NATS.

Library users need: `Server` (serve a tool set; a transport's handler), `A2AClient` (discover, call,
cancel), `A2ARemoteInvoker` and `import_remote_tools` (remote tools in a run), `NatsContext` /
`load_context` (where to connect). The NATS binding itself is `fiskai_a2a.nats_transport` (imported
only by whoever connects); the wire protocol is `fiskai_a2a.protocol`.
"""

from ._engine import DEFAULT_HEARTBEAT, DEFAULT_MAX_CONCURRENT, DEFAULT_TOOL_TIMEOUT, Server, SkippedTool
from .client import DEFAULT_TIMEOUT, A2AClient
from .errors import (
    A2AError,
    AgentUnavailableError,
    MessageError,
    NatsContextError,
    RemoteAgentError,
)
from .invoker import A2ARemoteInvoker, RemoteImport, import_remote_tools
from .natscontext import NatsContext, load_context
from .transport import Route, Transport

__all__ = [
    "DEFAULT_HEARTBEAT",
    "DEFAULT_MAX_CONCURRENT",
    "DEFAULT_TIMEOUT",
    "DEFAULT_TOOL_TIMEOUT",
    "A2AClient",
    "A2AError",
    "A2ARemoteInvoker",
    "AgentUnavailableError",
    "MessageError",
    "NatsContext",
    "NatsContextError",
    "RemoteAgentError",
    "RemoteImport",
    "Route",
    "Server",
    "SkippedTool",
    "Transport",
    "import_remote_tools",
    "load_context",
]
