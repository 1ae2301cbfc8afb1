"""`HarnessRunner`: runs a channel's `Work` as one turn of the agent over the shared harness.

Every turn is journaled: a conversation is an interactive session that ends each turn suspended at its
answer, and the next turn resumes it with the new prompt (`SessionOptions.follow_up`), so no worker holds
a conversation between turns and any worker that sees the journal can take the next one.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import anyio
from typing_extensions import override

from fiskai_agent import FollowUp, RunControl, RunOptions, RunResult, SessionOptions, run
from fiskai_agent.errors import ResumeRefusedError, SetupError
from fiskai_agent.events import Advisory, NullEvents, ToolResultTrace, ToolTrace
from fiskai_agent.llm import Response, TextBlock, ThinkingBlock, ToolUseBlock
from fiskai_core.confirm import ConfirmGate
from fiskai_core.prompter import DenyPrompter
from fiskai_runstate import JournalError, JournalNotFoundError
from fiskai_runstate.errors import JournalClaimedError, JournalExistsError, JournalLockedError

from ._channel import EventKind, Work, WorkOutcome

if TYPE_CHECKING:
    from anyio.streams.memory import MemoryObjectSendStream

    from fiskai_agent.llm import Provider
    from fiskai_cli._wiring import Harness

__all__ = ["HarnessRunner"]


class HarnessRunner:
    """Implements `WorkRunner` over a harness built once for the worker and a provider shared by every run."""

    def __init__(self, harness: Harness, provider: Provider, *, tool_timeout: float | None) -> None:
        self.harness = harness
        self.provider = provider
        self.tool_timeout = tool_timeout

    async def run(self, work: Work) -> WorkOutcome:
        """One turn; a refusal (unknown conversation, drift, busy) is an outcome, never raised."""
        harness = self.harness
        config = harness.config
        assert harness.journal is not None, "serve opens the journal store at start-up"
        ended: list[str] = []

        async def turn_end(error: str) -> FollowUp | None:
            # A served turn ends at its answer; the journal keeps the conversation for the next one.
            ended.append(error)
            return None

        llm = config.llm
        budget = llm.budget
        lowered = {
            key: min(value, getattr(budget, key))
            for key, value in (("max_tokens", work.max_tokens), ("max_iterations", work.max_iterations))
            if value
        }
        if lowered:
            llm = llm.model_copy(update={"budget": budget.model_copy(update=lowered)})
        session = SessionOptions(
            store=harness.journal,
            checkpoint=not work.resume,
            name=None if work.resume else work.session_id,
            resume_id=work.session_id if work.resume else None,
            force=work.force,
            follow_up=work.prompt if work.resume else "",
        )
        if work.takeover and work.resume:
            # The claim is written before the run starts; a worker still running this journal sees it before
            # its next tool call and stops (the file backend's lock is then released for this one).
            claim = getattr(harness.journal, "claim", None)
            if claim is not None:
                await claim(work.session_id)
        gate = ConfirmGate(work.prompter or DenyPrompter(), confirm_tags=config.harness.confirm_tags)
        send, receive = anyio.create_memory_object_stream[tuple[EventKind, dict[str, Any]]](math.inf)
        options = RunOptions(
            prompt=work.prompt,
            llm=llm,
            tools=harness.tools,
            tool_updates=harness.tool_updates,
            gate=gate,
            provider=self.provider,
            system_prompt=config.system_prompt,
            start_context=harness.start_context,
            config_file=str(harness.settings.path),
            events=_SinkEvents(send),
            session=session,
            control=work.control or RunControl(),
            interactive=work.conversation,
            next_prompt=turn_end if work.conversation else None,
            tool_timeout=self.tool_timeout,
        )
        outcome: WorkOutcome | None = None
        async with anyio.create_task_group() as pump:
            pump.start_soon(_pump, receive, work)
            try:
                outcome = _outcome(await run(options), ended)
            except ResumeRefusedError as err:
                outcome = WorkOutcome(reason="refused", code=_refusal_code(str(err)), error=str(err))
            except JournalClaimedError as err:
                outcome = WorkOutcome(reason="refused", code="taken_over", error=str(err))
            except (JournalLockedError, JournalExistsError):
                # Held by a writer, or created a moment ago by another worker taking the same work.
                outcome = WorkOutcome(
                    reason="refused", code="conversation_busy", error="a turn of this conversation is running"
                )
            except JournalNotFoundError:
                outcome = WorkOutcome(reason="refused", code="unknown_conversation", error="no such conversation")
            except (SetupError, JournalError) as err:
                outcome = WorkOutcome(reason="failed", error=str(err))
            finally:
                send.close()
        assert outcome is not None
        return outcome


def _outcome(result: RunResult, ended: list[str]) -> WorkOutcome:
    stats = result.stats
    usage = {
        "input_tokens": stats.input_tokens,
        "output_tokens": stats.output_tokens,
        "cache_read_tokens": stats.cache_read_tokens,
        "cache_create_tokens": stats.cache_create_tokens,
        "llm_calls": stats.llm_calls,
        "tool_calls": stats.tool_calls,
    }
    if result.internal_error:
        return WorkOutcome(reason="crashed", error=result.error, usage=usage)
    if ended:
        if not ended[0]:
            return WorkOutcome(reason="completed", answer=result.answer, usage=usage)
        kind = "max_iterations" if ended[0].startswith("max iterations") else "failed"
        return WorkOutcome(reason=kind, error=ended[0], usage=usage)
    if result.reason == "completed":
        return WorkOutcome(reason="completed", answer=result.answer, usage=usage)
    if result.reason == "max_iterations":
        return WorkOutcome(reason="max_iterations", error=result.error, usage=usage)
    if result.reason == "budget":
        return WorkOutcome(reason="budget_exhausted", error=result.error, usage=usage)
    if result.reason == "suspended":
        return WorkOutcome(reason="suspended", usage=usage)
    return WorkOutcome(reason="failed", error=result.error or "the run failed", code=result.error_code, usage=usage)


def _refusal_code(message: str) -> str:
    if "run not found" in message:
        return "unknown_conversation"
    if "changed" in message or "drift" in message or "configuration" in message:
        return "config_drift"
    return "turn_not_taken"


async def _pump(receive: Any, work: Work) -> None:
    async with receive:
        async for kind, block in receive:
            await work.sink(kind, block)


class _SinkEvents(NullEvents):
    """The run's events as protocol blocks, queued in order for the channel (callbacks must not block)."""

    def __init__(self, send: MemoryObjectSendStream[tuple[EventKind, dict[str, Any]]]) -> None:
        self._send = send
        self._inputs: dict[str, Any] = {}
        self._iteration = 0

    def _emit(self, kind: EventKind, block: dict[str, Any]) -> None:
        try:
            self._send.send_nowait((kind, block))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            return

    @override
    def warn(self, advisory: Advisory) -> None:
        self._emit("warning", {"kind": advisory.kind, "name": advisory.name, "count": advisory.count})

    @override
    def message(self, response: Response, terminal: bool) -> None:
        self._iteration += 1
        for block in response.message.content:
            if isinstance(block, TextBlock) and block.text:
                self._emit("text", {"text": block.text, "final": terminal})
            elif isinstance(block, ThinkingBlock) and block.text:
                self._emit("thinking", {"text": block.text})
            elif isinstance(block, ToolUseBlock):
                self._inputs[block.id] = block.input
        if not terminal:
            usage = response.usage
            self._emit(
                "status",
                {
                    "iteration": self._iteration,
                    "usage": {
                        "input_tokens": usage.input_tokens,
                        "output_tokens": usage.output_tokens,
                        "cache_read_tokens": usage.cache_read_tokens,
                        "cache_create_tokens": usage.cache_create_tokens,
                    },
                },
            )

    @override
    def tool_call(self, trace: ToolTrace) -> None:
        block = {"id": trace.tool_use_id, "name": trace.name, "input": self._inputs.pop(trace.tool_use_id, {})}
        self._emit("tool_call", block)

    @override
    def tool_result(self, trace: ToolResultTrace) -> None:
        self._emit("tool_result", {"call_id": trace.tool_use_id, "output": trace.output, "is_error": trace.is_error})
