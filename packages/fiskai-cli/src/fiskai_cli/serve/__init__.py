"""`fiskai serve`: the agent as a service behind channels (prompts over NATS, queued jobs; later web).

`Channel`, `Work`, `WorkOutcome` and `WorkRunner` are the seam a new channel implements (see `_channel`);
`ServeHost` runs the channels and the tool endpoint with the two-stage shutdown; `serve_with` (in `start`)
composes a worker from the harness.
"""

from ._channel import Channel, EventKind, Work, WorkOutcome, WorkRunner, WorkSink
from ._host import DRAIN_NOTICE, DRAIN_NOTICE_TOOLS, ServeHost

__all__ = [
    "DRAIN_NOTICE",
    "DRAIN_NOTICE_TOOLS",
    "Channel",
    "EventKind",
    "ServeHost",
    "Work",
    "WorkOutcome",
    "WorkRunner",
    "WorkSink",
]
