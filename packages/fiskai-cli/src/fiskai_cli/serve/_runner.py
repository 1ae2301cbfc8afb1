"""`HarnessRunner`: runs a channel's `Work` as one turn of the agent over the shared harness.

Every turn is journaled: a conversation is an interactive session that ends each turn suspended at its
answer, and the next turn resumes it with the new prompt (`SessionOptions.follow_up`), so no worker holds
a conversation between turns and any worker that sees the journal can take the next one.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Final

import anyio
from typing_extensions import override

from fiskai_agent import FollowUp, RunControl, RunOptions, RunResult, SessionOptions, run
from fiskai_agent.errors import ProviderError, ResumeRefusedError, SetupError
from fiskai_agent.events import Advisory, NullEvents, ToolResultTrace, ToolTrace
from fiskai_agent.llm import Response, TextBlock, ThinkingBlock, ToolUseBlock
from fiskai_cli._hooks import command_hooks
from fiskai_core.confirm import ConfirmGate
from fiskai_core.prompter import ConfirmChoice, DenyPrompter, GateRequest, Prompter
from fiskai_runstate import JournalError, JournalNotFoundError
from fiskai_runstate.errors import JournalClaimedError, JournalExistsError, JournalLockedError

from ._channel import CallLedger, EventKind, Work, WorkOutcome

if TYPE_CHECKING:
    from anyio.streams.memory import MemoryObjectSendStream

    from fiskai_agent.llm import Capabilities, Provider, Request
    from fiskai_cli._wiring import Harness

__all__ = ["HarnessRunner", "TurnPrompter"]

_log = logging.getLogger("fiskai.serve")
_turn_prompter: ContextVar[Prompter | None] = ContextVar("fiskai_serve_turn_prompter", default=None)
_NOBODY: Final = DenyPrompter()


def _current() -> Prompter:
    return _turn_prompter.get() or _NOBODY


class TurnPrompter:
    """The prompter the worker's shared tool set is built with: it asks through the running turn's own.

    The ask_human tools are built once per worker, but who answers them is the turn's caller (or nobody);
    each turn runs in its own task, so a context variable set by `HarnessRunner.run` picks the right one.
    """

    def can_prompt(self) -> bool:
        return _current().can_prompt()

    async def approve_command(self, request: GateRequest) -> ConfirmChoice:
        return await _current().approve_command(request)

    async def ask_confirm(self, question: str) -> bool:
        return await _current().ask_confirm(question)

    async def ask_select(self, question: str, options: Sequence[str]) -> int:
        return await _current().ask_select(question, options)

    async def ask_input(self, question: str, default: str) -> str:
        return await _current().ask_input(question, default)

    def report(self, request: GateRequest, outcome: str) -> None:
        _current().report(request, outcome)


class HarnessRunner:
    """Implements `WorkRunner` over a harness built once for the worker and a provider shared by every run."""

    def __init__(self, harness: Harness, provider: Provider, *, tool_timeout: float | None) -> None:
        self.harness = harness
        self.provider = provider
        self.tool_timeout = tool_timeout
        # Channel runs meet the same `harness.hooks` as `fiskai run` (prompts and tool calls alike).
        self.hooks = command_hooks(harness.settings)

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
            agent=config.identity,
            caller=work.caller,
        )
        if work.takeover and work.resume:
            # The claim is written before the run starts; a worker still running this journal sees it before
            # its next tool call and stops (the file backend's lock is then released for this one).
            claim = getattr(harness.journal, "claim", None)
            if claim is not None:
                await claim(work.session_id)
        prompter = work.prompter or DenyPrompter()
        _turn_prompter.set(prompter)
        gate = ConfirmGate(prompter, confirm_tags=config.harness.confirm_tags, nobody_reason=work.unasked)
        send, receive = anyio.create_memory_object_stream[tuple[EventKind, dict[str, Any]]](math.inf)
        provider = _Watched(self.provider)
        pump = _Pump(work)
        events = _SinkEvents(send, pump, work.calls, argv=work.argv)
        if work.calls is not None:
            work.calls.settle = pump.settle
        options = RunOptions(
            prompt=work.prompt,
            identity=config.identity,
            llm=llm,
            tools=harness.tools,
            tool_updates=harness.tool_updates,
            gate=gate,
            provider=provider,
            system_prompt=config.system_prompt,
            start_context=harness.start_context,
            config_file=str(harness.settings.path),
            events=events,
            session=session,
            control=work.control or RunControl(),
            interactive=work.conversation,
            next_prompt=turn_end if work.conversation else None,
            tool_timeout=self.tool_timeout,
            hooks=self.hooks,
            pii_mode=config.harness.pii.mode,
        )
        outcome: WorkOutcome | None = None
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(pump.run, receive)
            try:
                outcome = _outcome(await run(options), ended, provider.failure)
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


_PROVIDER_CODES: Final = {
    "busy": "provider_busy",
    "refused": "provider_refused",
    "context_exceeded": "context_exceeded",
}
"""The reference's codes (3.8) for a turn ended by a model call's failure; any other failure is `failed`."""


class _Watched:
    """The worker's shared provider as one turn sees it: it remembers the last model call that failed.

    The loop folds a failed call into its error text; the kind of failure (the adapter's reading of its
    SDK's exception type) is what a served caller needs to decide between resending and giving up.
    """

    def __init__(self, inner: Provider) -> None:
        self._inner = inner
        self.failure: ProviderError | None = None

    @property
    def capabilities(self) -> Capabilities:
        return self._inner.capabilities

    async def call(self, request: Request) -> Response:
        try:
            return await self._inner.call(request)
        except ProviderError as err:
            self.failure = err
            raise

    async def aclose(self) -> None:
        """The shared provider outlives the turn; the worker closes it."""


def _provider_code(error: str, failure: ProviderError | None) -> str:
    if failure is None or error != f"llm call: {failure}":
        return ""  # the turn failed otherwise (a call that failed earlier was retried without a capability)
    return _PROVIDER_CODES.get(failure.failure, "")


def _outcome(result: RunResult, ended: list[str], failure: ProviderError | None = None) -> WorkOutcome:
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
        return WorkOutcome(reason=kind, error=ended[0], code=_provider_code(ended[0], failure), usage=usage)
    if result.reason == "completed":
        return WorkOutcome(reason="completed", answer=result.answer, usage=usage)
    if result.reason == "max_iterations":
        return WorkOutcome(reason="max_iterations", error=result.error, usage=usage)
    if result.reason == "budget":
        return WorkOutcome(reason="budget_exhausted", error=result.error, usage=usage)
    if result.reason == "suspended":
        return WorkOutcome(reason="suspended", usage=usage)
    error = result.error or "the run failed"
    return WorkOutcome(reason="failed", error=error, code=_provider_code(error, failure), usage=usage)


def _refusal_code(message: str) -> str:
    if "run not found" in message:
        return "unknown_conversation"
    if "changed" in message or "drift" in message or "configuration" in message:
        return "config_drift"
    return "turn_not_taken"


class _Pump:
    """Hands the run's queued events to the channel's sink in order; `settle` waits for it to catch up."""

    def __init__(self, work: Work) -> None:
        self.work = work
        self.sent = 0
        self.delivered = 0
        self._waiters: list[anyio.Event] = []

    async def run(self, receive: Any) -> None:
        async with receive:
            async for kind, block in receive:
                try:
                    await self.work.sink(kind, block)
                finally:
                    self.delivered += 1
                    if self.delivered >= self.sent:
                        for waiter in self._waiters:
                            waiter.set()
                        self._waiters.clear()

    async def settle(self) -> None:
        if self.delivered >= self.sent:
            return
        waiter = anyio.Event()
        self._waiters.append(waiter)
        await waiter.wait()


class _SinkEvents(NullEvents):
    """The run's events as protocol blocks, queued in order for the channel (callbacks must not block)."""

    def __init__(
        self,
        send: MemoryObjectSendStream[tuple[EventKind, dict[str, Any]]],
        pump: _Pump,
        calls: CallLedger | None,
        *,
        argv: bool = False,
    ) -> None:
        self._send = send
        self._argv = argv
        self._pump = pump
        self._calls = calls
        self._inputs: dict[str, Any] = {}
        self._iteration = 0

    def _emit(self, kind: EventKind, block: dict[str, Any]) -> None:
        try:
            self._send.send_nowait((kind, block))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            return
        self._pump.sent += 1

    @override
    def panicked(self, error: BaseException, traceback: str) -> None:
        # `crashed` tells the caller to look here: the worker's log is the only place the detail goes.
        _log.error("a served turn hit a bug: %s\n%s", error, traceback)

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
                if self._calls is not None:
                    self._calls.seen(block.id, block.name)
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
        if self._argv:  # not in the prompts protocol's tool_call block, whose schema allows no more keys
            block["display"] = trace.display
        self._emit("tool_call", block)

    @override
    def tool_result(self, trace: ToolResultTrace) -> None:
        self._emit("tool_result", {"call_id": trace.tool_use_id, "output": trace.output, "is_error": trace.is_error})
