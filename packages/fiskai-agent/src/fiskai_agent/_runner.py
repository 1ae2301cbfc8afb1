"""The iteration loop (reference 6.2) and tool dispatch (6.5), with the crash-safe intent rules.

Per iteration: stop at the boundary if a suspend was requested; call the model; journal its turn before
any tool runs; a `max_tokens` stop is an error whose tool calls never run; a turn with no tool call (and
not paused) is the answer; otherwise check the run budget, then run the calls one at a time, journaling
an intent before and the result after each, and feed all results back as one user message.

A 400 naming a capability the request used (`defer_loading`, the tool-search tool, `cache_control`,
thinking) makes the run drop those capabilities once, with a warning, and repeat the call (`fall_back`).

Dispatch, in order: a deferred tool the model has not found through `find_tools` (refused in-band,
nothing runs); `find_tools` itself (answered, its tools loaded; no gate, no intent); unknown tool;
missing required parameters (before the gate, so an operator is never
asked about a broken call); the confirm gate; the intent record (durable before the tool starts, its
effect id exported to the command as `FISKAI_EFFECT_ID`); the call; the result record.

After a crash, a call whose intent has no result may already have had its effect. It is re-run without
asking only when the tool is tagged `ai:idempotent`; otherwise the operator is asked, and without a
terminal the call is refused in-band.
"""

from __future__ import annotations

import json
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from fiskai_agent._hooked import HookAbort, after_tool, before_tool, gated_as_original
from fiskai_agent._options import StopReason
from fiskai_agent._prepared import Setup
from fiskai_agent._setup import fall_back
from fiskai_agent._telemetry import ChatTelemetry, ToolSpan
from fiskai_agent._tool_finder import refused_capability
from fiskai_agent._tool_updates import apply_tool_updates
from fiskai_agent._tools import Entry
from fiskai_agent.errors import ProviderError
from fiskai_agent.events import Advisory, AdvisoryKind, ToolResultTrace, ToolTrace
from fiskai_agent.llm import (
    Message,
    Request,
    Response,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    message_from_json,
    message_to_json,
    tool_result_from_json,
)
from fiskai_agent.llm._attempts import reporting_attempts
from fiskai_core.builtins import FIND_TOOLS, found_tool_names
from fiskai_core.calls import Refusal, ToolCall, prepare_call, run_call
from fiskai_core.confirm import GateChannel, GateDecision, argv_digest
from fiskai_core.errors import ArgumentsError
from fiskai_core.hooks import Decisions
from fiskai_core.prompter import PromptDeclined
from fiskai_core.telemetry import current as current_telemetry
from fiskai_core.tools import CallContext, ToolResult, arguments_from_value
from fiskai_runstate.records import JsonObject

__all__ = ["Outcome", "Runner"]

_PREVIEW_RUNES = 60
_TRUNCATED = "not run: the reply that asked for this call was cut off at the output token limit"


@dataclass(frozen=True, slots=True)
class Outcome:
    """How the loop ended."""

    reason: StopReason
    error: str = ""
    answer: str = ""


class Runner:
    """Drives one run's loop over a prepared `Setup`."""

    def __init__(self, setup: Setup) -> None:
        self._s = setup
        self._iteration = setup.start_iteration
        self._limit = setup.budget.max_iterations
        self._chat = ChatTelemetry(current_telemetry())
        self._tools_seen = 0
        if setup.resumed and setup.options.interactive:
            # A resumed chat gets a fresh allowance for its next turn (a one-shot run keeps its cap).
            self._limit = setup.start_iteration + setup.budget.max_iterations

    def clear(self) -> None:
        """Forget the conversation (a chat's `/clear`); a journaled run keeps it, as its journal does."""
        if not self._s.journal.active:
            self._s.messages.clear()

    def restart(self, prompt: str) -> None:
        """A new session's first turn (after a rotation): `prompt` alone, a fresh iteration count."""
        s = self._s
        s.messages[:] = [Message(role="user", content=(TextBlock(text=prompt),))]
        self._iteration = 0
        self._limit = s.budget.max_iterations

    async def follow_up(self, text: str, *, reset: bool, hooks: Sequence[JsonObject] = ()) -> None:
        """A chat's next turn: a fresh iteration allowance, the text as a user turn (journaled)."""
        if self._s.pending is not None:  # a resumed conversation's next turn settles the last turn's calls first
            await self._complete_pending()
        s = self._s
        if reset:
            self.clear()
        self._limit = self._iteration + s.budget.max_iterations
        turn = Message(role="user", content=(TextBlock(text=text),))
        await s.journal.user(turn, hooks)
        if s.messages and s.messages[-1].role == "user":
            # Roles must alternate: a turn left ending in a user message (a failed call) absorbs the text.
            last = s.messages[-1]
            s.messages[-1] = Message(role="user", content=(*last.content, *turn.content))
        else:
            s.messages.append(turn)

    async def loop(self) -> Outcome:
        """Run until an answer, a budget, the cap, an error or a suspend."""
        s = self._s
        control = s.options.control
        if s.pending is not None:
            await self._complete_pending()
        while self._iteration < self._limit:
            if s.journal.active and control is not None and control.suspend_requested:
                return Outcome("suspended")
            index = self._iteration
            self._iteration += 1
            response = await self._call(index)
            if isinstance(response, Outcome):
                return response
            self._count(response)
            s.messages.append(response.message)
            await s.journal.assistant(index, response)
            uses = response.message.tool_uses
            if response.stop_reason == "max_tokens":
                s.options.events.message(response, True)
                return Outcome("error", "model reply truncated at the output token limit; the answer is incomplete")
            terminal = not uses and response.stop_reason != "pause_turn"
            s.options.events.message(response, terminal)
            if terminal:
                if response.stop_reason == "refusal":
                    return Outcome("error", "model refused to respond")
                return Outcome("completed", answer=response.message.text)
            if s.budget.exhausted(s.stats.total_tokens):
                return Outcome("budget", s.budget.exhausted_message(index + 1))
            if uses:
                try:
                    results = [await self._dispatch_within_cap(i, use, len(uses)) for i, use in enumerate(uses)]
                except HookAbort as err:
                    return Outcome("error", str(err))
                s.messages.append(Message(role="user", content=tuple(results)))
        return Outcome("max_iterations", f"max iterations ({s.budget.max_iterations}) reached without a final answer")

    async def _dispatch_within_cap(self, index: int, use: ToolUseBlock, asked: int) -> ToolResultBlock:
        """Run the turn's first `max_tool_calls_per_turn` calls; answer the rest, unrun, with why."""
        s = self._s
        cap = s.options.max_tool_calls_per_turn
        if not cap or index < cap:
            return await self._dispatch(use)
        s.stats.tool_calls += 1
        if index == cap:
            s.options.events.warn(
                Advisory(
                    kind="tool_calls_capped",
                    count=asked - cap,
                    message=f"the model asked for {asked} tool calls in one turn; only the first {cap} ran",
                )
            )
        text = (
            f"not run: this turn asked for {asked} tool calls and at most {cap} run per turn; look at the results "
            "of the ones that ran, then call what is still needed in your next turn"
        )
        return await s.journal.result(use, ToolResult(output=text, is_error=True))

    async def _call(self, index: int) -> Response | Outcome:
        """One model call; a capability the server refuses is dropped once and the call repeated."""
        s, chat = self._s, self._chat
        while True:
            request = self._request(index)
            if s.options.verbose:
                s.options.events.llm_request(_summary(request))
            with chat.telemetry.span(f"chat {request.model}", chat.attributes(request)) as span:
                chat.capture_input(span, request)
                started = time.perf_counter()
                try:
                    with reporting_attempts(span):
                        response = await s.provider.call(request)
                except ProviderError as err:
                    chat.failed(span, request, "provider", started)
                    refused = None if s.fell_back else refused_capability(err, request)
                    if refused is None:
                        return Outcome("error", f"llm call: {err}")
                    fall_back(s, refused, f"HTTP {err.status}: {err.detail or err}")
                    continue
                chat.finished(span, request, response, started)
                return response

    def _request(self, iteration: int) -> Request:
        s = self._s
        self._tools_seen = apply_tool_updates(s, s.options.tool_updates, self._tools_seen)
        llm = s.options.llm
        return Request(
            model=llm.model,
            system=tuple(s.system),
            messages=tuple(s.messages),
            tools=s.request_tools(),
            tool_search=s.tool_search,
            thinking=s.thinking,
            max_output_tokens=s.budget.max_output_tokens,
            effort=llm.reasoning_effort,
            prompt_cache=s.capabilities.prompt_cache and not llm.no_prompt_cache,
            cache_ttl="1h" if s.options.interactive else "5m",
            iteration=iteration,
            capabilities=s.capabilities,
        )

    def _count(self, response: Response) -> None:
        stats, usage = self._s.stats, response.usage
        stats.llm_calls += 1
        stats.input_tokens += usage.input_tokens
        stats.output_tokens += usage.output_tokens
        stats.cache_read_tokens += usage.cache_read_tokens
        stats.cache_create_tokens += usage.cache_create_tokens

    async def _complete_pending(self) -> None:
        """Finish the last turn's batch: reuse journaled results, run (or refuse) the rest, in block order."""
        s = self._s
        pending = s.pending
        assert pending is not None
        assistant = message_from_json(pending.assistant)
        journaled = {record.tool_use_id: tool_result_from_json(record.result) for record in pending.results}
        results: list[ToolResultBlock] = []
        uses = assistant.tool_uses
        for index, use in enumerate(uses):
            done = journaled.get(use.id)
            if done is not None:
                if use.name == FIND_TOOLS and not done.is_error and s.finder is not None:
                    s.finder.deferred.load(found_tool_names(done.content))
                results.append(done)
            elif pending.stop_reason == "max_tokens":
                # A truncated reply's tool calls may be cut mid-argument: they never run, not even on resume.
                s.stats.tool_calls += 1
                results.append(await s.journal.result(use, ToolResult(output=_TRUNCATED, is_error=True)))
            elif use.id in s.intents:
                results.append(await self._after_crash(use))
            else:
                # Held to the per-turn cap as the live turn was: a crash must not let the rest run.
                results.append(await self._dispatch_within_cap(index, use, len(uses)))
        s.messages.append(assistant)
        s.messages.append(Message(role="user", content=tuple(results)))
        s.pending = None

    async def _after_crash(self, use: ToolUseBlock) -> ToolResultBlock:
        """A call that was started before a crash and has no result: re-run only when safe or approved.

        The decision is journaled on the call's result like a gate decision: channel `policy` for an
        idempotent tool, `prompt` when the operator was asked, `no_terminal` when nobody could be.
        """
        s = self._s
        entry = s.entries.get(use.name)
        if entry is None:
            return await self._dispatch(use)
        events = s.options.events
        intent = s.intents[use.id]
        digest = argv_digest(intent.argv) if intent.argv is not None else intent.args_digest

        def decided(allowed: bool, channel: GateChannel, reason: str = "") -> GateDecision:
            return GateDecision(
                allowed=allowed, reason=reason, channel=channel, tag=None, digest=digest, display=use.name
            )

        if entry.presentation == "self_rendered":
            # A question has no effect: an interrupted one is simply asked again (reference 8.3), which is
            # how a web turn that ended on an ask_human question gets its answer on the next request.
            return await self._dispatch(use, recovery=decided(True, "policy"))
        if entry.idempotent:
            events.warn(
                Advisory(
                    kind="intent_rerun",
                    name=use.name,
                    message=f're-running "{use.name}", interrupted by a crash; it is safe to repeat (ai:idempotent '
                    "or read-only)",
                )
            )
            return await self._dispatch(use, recovery=decided(True, "policy"))
        prompter = s.gate.prompter
        question = f'The run crashed while "{use.name}" was running, so it may already have taken effect. Run it again?'
        if not prompter.can_prompt():
            decision = decided(
                False,
                "no_terminal",
                "no interactive terminal is attached, so no operator could approve running it again",
            )
        else:
            try:
                if await prompter.ask_confirm(question):
                    return await self._dispatch(use, recovery=decided(True, "prompt"))
                decision = decided(False, "prompt", "the operator declined to run it again")
            except PromptDeclined as err:
                decision = decided(False, "prompt", f"the operator did not approve running it again: {err}")
        events.warn(
            Advisory(kind="intent_declined", name=use.name, message=f'not re-running "{use.name}": {decision.reason}')
        )
        body = {
            "allowed": False,
            "reason": f"the run crashed while this call was running, so it may already have taken effect; "
            f"{decision.reason}. Check the current state before deciding what to do; this decision is final, do "
            "not retry",
        }
        result = ToolResult(output=json.dumps(body, separators=(",", ":")))
        s.stats.tool_calls += 1
        return await s.journal.result(use, result, gate=decision)

    def _refused(self, use: ToolUseBlock, kind: AdvisoryKind, message: str) -> None:
        self._s.options.events.warn(Advisory(kind=kind, name=use.name, message=message))

    async def _dispatch(self, use: ToolUseBlock, *, recovery: GateDecision | None = None) -> ToolResultBlock:
        """One call, inside its `execute_tool` span (which covers it from before the registry lookup)."""
        telemetry = self._chat.telemetry
        known = use.name in self._s.entries or use.name == FIND_TOOLS
        name = f"execute_tool {use.name}" if known else "execute_tool"
        with telemetry.span(name, {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.id": use.id}) as span:
            trace = ToolSpan(span, telemetry)
            if recovery is not None:
                span.set("fisk.tool.resumed", True)
            try:
                return await self._dispatch_traced(use, recovery, trace)
            finally:
                trace.close()

    # One step per reference check, in order; splitting it would hide that order.
    async def _dispatch_traced(
        self, use: ToolUseBlock, recovery: GateDecision | None, trace: ToolSpan
    ) -> ToolResultBlock:
        s = self._s
        stats, journal = s.stats, s.journal
        stats.tool_calls += 1
        if s.finder is not None:
            refusal = s.finder.deferred.refusal(use.name)
            if refusal is not None:
                trace.refused("deferred")
                stats.by_kind["not_loaded"] = stats.by_kind.get("not_loaded", 0) + 1
                self._refused(
                    use, "tool_not_loaded", f'model called "{use.name}" before finding it with find_tools; not run'
                )
                return await journal.result(use, refusal)
            if use.name == FIND_TOOLS:
                trace.known(use.name, "builtin", use.input)
                return await self._find(use)
        entry = s.entries.get(use.name)
        if entry is None:
            trace.span.set("fisk.tool.requested_name", use.name)
            trace.refused("unknown_tool")
            stats.by_kind["unknown"] = stats.by_kind.get("unknown", 0) + 1
            self._refused(use, "unknown_tool", f'model called unknown tool "{use.name}"')
            return await journal.result(use, ToolResult(output=f'unknown tool "{use.name}"', is_error=True))
        stats.by_kind[entry.kind] = stats.by_kind.get(entry.kind, 0) + 1
        trace.known(use.name, entry.kind, use.input)
        original, hooked = use, Decisions()
        effective = await before_tool(s, use, entry, hooked, trace)
        if isinstance(effective, ToolResult):
            self._refused(use, "hook_denied", f'"{use.name}" was not run: {effective.output}')
            return await journal.result(use, effective, hooks=hooked.records)
        use, entry = effective
        call = _prepare(entry, use, s.gate.confirm_tags)
        call = gated_as_original(call, s.entries[original.name])
        ran, use = use, original  # the journal and the model answer the call the model made
        if isinstance(call, Refusal):
            trace.refused("missing_arguments" if call.kind == "missing" else "error")
            if call.kind == "missing":
                self._refused(
                    use, "missing_required", f'model called tool "{use.name}" without required parameter(s); not run'
                )
            return await journal.result(use, call.result, hooks=hooked.records)
        decision: GateDecision | None = None
        if call.gate_tag is not None:
            asked = time.perf_counter()
            decision = await s.gate.decide(call)
            trace.span.set("fisk.tool.confirm_wait_ms", round((time.perf_counter() - asked) * 1000))
            if not decision.allowed:
                trace.refused("confirm_unanswered" if decision.channel == "no_terminal" else "confirm_denied")
                self._refused(use, "confirm_denied", f'"{use.name}" was not run: {decision.reason}')
                return await journal.result(use, decision.denial_result(), gate=decision, hooks=hooked.records)
        remote = entry.kind == "remote"
        if recovery is None:
            effect = journal.next_effect_id()
            await journal.intent(
                use,
                effect_id=effect,
                argv=call.argv,
                remote_target=f"{entry.agent}/{getattr(entry.tool, 'remote_name', use.name)}" if remote else None,
                gate=decision,
            )
        else:
            intent = s.intents.get(use.id)
            effect = intent.effect_id if intent is not None else journal.next_effect_id()
        s.options.events.tool_call(
            ToolTrace(
                tool_use_id=use.id,
                name=use.name,
                display=call.display,
                display_short=call.display_short,
                presentation=entry.presentation,
                kind=entry.kind,
                agent=entry.agent,
                gate=decision,
            )
        )
        if remote:
            stats.remote_tool_calls += 1
            trace.span.set("fisk.tool.remote", True)
            trace.span.set("fisk.tool.remote_agent", entry.agent or "")
        # A call that waits on the operator is paced by a person, not bounded by the tool timeout.
        limit = None if entry.presentation == "self_rendered" else s.options.tool_timeout
        result = await run_call(call, CallContext(effect_id=effect, delivered=frozenset(s.delivered)), time_limit=limit)
        result = await after_tool(s, ran, result, hooked)
        trace.result(result.text, is_error=result.is_error, exit_code=result.exit_code)
        s.delivered.update(dict.fromkeys(result.citations))
        s.options.events.tool_result(_result_trace(use, entry, result))
        return await journal.result(
            use, result, remote=remote, gate=recovery, citations=result.citations, hooks=hooked.records
        )

    async def _find(self, use: ToolUseBlock) -> ToolResultBlock:
        """Answer `find_tools` and load what it found for the next request: no gate, no intent (no effect)."""
        s = self._s
        finder = s.finder
        assert finder is not None
        entry = finder.entry
        s.stats.by_kind[entry.kind] = s.stats.by_kind.get(entry.kind, 0) + 1
        call = _prepare(entry, use, ())
        if isinstance(call, Refusal):
            return await s.journal.result(use, call.result)
        s.options.events.tool_call(
            ToolTrace(
                tool_use_id=use.id,
                name=use.name,
                display=call.display,
                display_short=call.display_short,
                presentation=entry.presentation,
                kind=entry.kind,
            )
        )
        found = finder.tool.find(call.plan.arguments)
        if not found.result.is_error:
            finder.deferred.load(found.found)
        s.options.events.tool_result(_result_trace(use, entry, found.result))
        return await s.journal.result(use, found.result)


def _prepare(entry: Entry, use: ToolUseBlock, confirm_tags: Collection[str]) -> ToolCall | Refusal:
    """The call path's first step for a model's tool_use: its arguments are already decoded, numbers as written."""
    try:
        arguments = arguments_from_value(use.arguments)
    except ArgumentsError as err:
        return Refusal(result=ToolResult(output=str(err), is_error=True), kind="invalid")
    return prepare_call(entry.tool, arguments, confirm_tags=confirm_tags)


def _result_trace(use: ToolUseBlock, entry: Entry, result: ToolResult) -> ToolResultTrace:
    return ToolResultTrace(
        tool_use_id=use.id,
        name=use.name,
        presentation=entry.presentation,
        kind=entry.kind,
        output=result.text,
        is_error=result.is_error,
        exit_code=result.exit_code,
    )


def _summary(request: Request) -> str:
    """`"<preview>" (msgs=<n>, <size>)` for a verbose run's request line."""
    last = request.messages[-1] if request.messages else None
    preview = "(empty)"
    if last is not None:
        texts = [b.text for b in last.content if isinstance(b, TextBlock)]
        results = sum(1 for b in last.content if isinstance(b, ToolResultBlock))
        if texts:
            text = " ".join(texts[0].split())
            preview = json.dumps(
                text[:_PREVIEW_RUNES] + ("…" if len(text) > _PREVIEW_RUNES else ""), ensure_ascii=False
            )
        elif results:
            preview = "1 tool result" if results == 1 else f"{results} tool results"
        elif last.content:
            preview = "(no text)"
    size = len(json.dumps([message_to_json(m) for m in request.messages], ensure_ascii=False))
    return f"{preview} (msgs={len(request.messages)}, {_size(size)})"


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KB"
    return f"{n / (1024 * 1024):.1f} MB"
