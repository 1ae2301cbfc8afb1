"""The one tool-call path every driver takes: prepare, decide, run.

0. `hooked_prepare` / `hooked_output`: the `pre_tool_use` and `post_tool_use` hooks around steps 1-3,
   the same on every face (a denial is a `Refusal`; the gate still fires for a gated original).
1. `prepare_call(tool, arguments)`: the model's arguments decoded once (or taken as a transport
   decoded them, numbers as written), anything but a JSON object refused, then the tool's own `plan`:
   required parameters, schema, the exact argv, the display lines; the digest a gate and a journal key
   on. A call that cannot go on is a `Refusal` carrying the result the model gets.
2. Decide: `ConfirmGate.decide(call)` (`fiskai_core.confirm`) when `call.gate_tag` is set; MCP asks
   its client instead. The gate sees exactly the argv that will run.
3. `run_call(call)`: the tool invoked with the call's context (effect id, delivered citations), inside
   an optional time limit and a `CallSlots` place; a failure, a timeout or a full queue is an in-band
   error result, never an exception (only cancellation propagates).

The agent loop, the MCP server, the A2A server and `fiskai tools call` all go through here; none of
them knows what kind of tool it is calling.
"""

from ._hooked import HookedCall, hooked_output, hooked_prepare, keep_gate
from ._prepare import Refusal, ToolCall, prepare_call
from ._run import run_call
from ._slots import CallSlots, SlotsBusyError

__all__ = [
    "CallSlots",
    "HookedCall",
    "Refusal",
    "SlotsBusyError",
    "ToolCall",
    "hooked_output",
    "hooked_prepare",
    "keep_gate",
    "prepare_call",
    "run_call",
]
