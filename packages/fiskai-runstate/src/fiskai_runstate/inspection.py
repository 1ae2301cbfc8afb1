"""Session inspection: statistics and tool-call queries over a run's journaled records.

Pure folds over what a store's `load` and `list` return (no IO, no lock), so they work on a run that a live
process is still appending to: a store reads only complete lines, and a call whose result is not journaled
yet is reported as unanswered, never as an error.

Records written since schema version 6 carry the time they were written, and the meta record the agent
identity and the caller. A response's time is its record's; a call's time is its model turn's, its answer
time its result's, and its duration the gap between its result and the record before it (so hook and
approval waits count, as in the reference). Older records (and the Go original's) have no time: `time`
and `answer_time` are None and such a call counts as `untimed`; their agent and caller read as empty, and
a search filtered on them excludes such sessions and counts them (`no_agent_excluded`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal, TypeAlias

from .errors import JournalCorruptError
from .records import (
    AssistantRecord,
    JsonObject,
    JsonValue,
    MetaRecord,
    Record,
    TerminalRecord,
    ToolIntentRecord,
    ToolResultRecord,
)

__all__ = [
    "AnswerView",
    "CallFilter",
    "CallView",
    "ResponseStats",
    "SessionStats",
    "TokenStats",
    "ToolStats",
    "parse_created",
    "query_calls",
    "session_stats",
]

ToolKind: TypeAlias = Literal["application", "builtin", "remote", "custom", "mcp", "unknown"]
AnswerKind: TypeAlias = Literal["result", "denied", "refused"]


@dataclass(frozen=True, slots=True, kw_only=True)
class TokenStats:
    """Token usage; `total` is uncached input + output + cache read + cache write."""

    in_tokens: int = 0
    out_tokens: int = 0
    cache_read_tokens: int = 0
    cache_create_tokens: int = 0
    thinking_tokens: int = 0
    """Not journaled separately (thinking is billed as output): always 0 here."""

    @property
    def total(self) -> int:
        return self.in_tokens + self.out_tokens + self.cache_read_tokens + self.cache_create_tokens

    def to_json(self) -> dict[str, int]:
        return {
            "in_tokens": self.in_tokens,
            "out_tokens": self.out_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_create_tokens": self.cache_create_tokens,
            "thinking_tokens": self.thinking_tokens,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class ResponseStats:
    """One model response (an assistant record)."""

    iteration: int
    tokens: TokenStats
    time: str | None = None
    """When the response was journaled; None for a record from before schema version 6."""


@dataclass(slots=True, kw_only=True)
class ToolStats:
    """One tool's calls in a run."""

    tool: str
    kinds: list[ToolKind] = field(default_factory=lambda: [])
    calls: int = 0
    """tool_use blocks the model sent for it."""
    dispatched: int = 0
    """Calls that reached the tool (a tool_intent record was written before it ran)."""
    undispatched: int = 0
    """Calls answered without running: the gate, a hook, an unknown name or missing arguments refused them."""
    unanswered: int = 0
    """Calls with no result yet: still running in a live run, or interrupted by a crash."""
    errors: int = 0
    """Answered calls whose result is an error (an unknown tool or missing arguments are; a gate denial is not)."""
    duration_ns: int = 0
    timed: int = 0
    untimed: int = 0

    def to_json(self) -> dict[str, JsonValue]:
        return {
            "tool": self.tool,
            "kinds": list(self.kinds),
            "calls": self.calls,
            "dispatched": self.dispatched,
            "undispatched": self.undispatched,
            "unanswered": self.unanswered,
            "errors": self.errors,
            "duration_ns": self.duration_ns,
            "timed": self.timed,
            "untimed": self.untimed,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionStats:
    """`fiskai session stats`: one run's totals, per-response usage and per-tool counts."""

    run_id: str
    agent: str
    caller: str
    model: str
    created: str
    updated: datetime | None
    """When the journal was last written (the store's modification time), if known."""
    terminal: str | None
    """The last terminal reason; None while the run is open."""
    ended: bool
    iterations: int
    max_iterations: int
    max_tokens: int
    tokens: TokenStats
    responses: tuple[ResponseStats, ...]
    tools: tuple[ToolStats, ...]

    @property
    def status(self) -> str:
        return self.terminal or "open"

    @property
    def wall_clock_seconds(self) -> float | None:
        """Creation to the last write, when both are known."""
        created = parse_created(self.created)
        if created is None or self.updated is None:
            return None
        return max(0.0, (self.updated - created).total_seconds())

    def to_json(self) -> dict[str, JsonValue]:
        return {
            "run_id": self.run_id,
            "agent": self.agent,
            "model": self.model,
            "created": self.created,
            "updated": self.updated.isoformat() if self.updated is not None else None,
            "terminal": self.terminal,
            "ended": self.ended,
            "iterations": self.iterations,
            "max_iterations": self.max_iterations,
            "max_tokens": self.max_tokens,
            "tokens": dict(self.tokens.to_json()),
            "responses": [
                {"iteration": r.iteration, "time": r.time, "tokens": dict(r.tokens.to_json())} for r in self.responses
            ],
            "tools": [t.to_json() for t in self.tools],
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class _Call:
    iteration: int
    tool_use_id: str
    tool: str
    input: JsonValue
    time: str = ""


@dataclass(frozen=True, slots=True)
class _Answered:
    result: ToolResultRecord
    time: str
    """The result record's time ("" when unknown)."""
    duration_ns: int | None
    """The gap from the record before it; None when either time is unknown."""


@dataclass(slots=True)
class _Calls:
    """Every tool call of a run, with its intent and result when journaled (in call order)."""

    meta: MetaRecord
    calls: list[_Call] = field(default_factory=lambda: [])
    intents: dict[str, ToolIntentRecord] = field(default_factory=lambda: {})
    results: dict[str, _Answered] = field(default_factory=lambda: {})
    responses: list[ResponseStats] = field(default_factory=lambda: [])
    terminal: TerminalRecord | None = None
    last_time: str = ""


def _collect(records: Sequence[Record]) -> _Calls:
    if not records or not isinstance(records[0].payload, MetaRecord):
        raise JournalCorruptError("?", "the first record is not the meta record")
    found = _Calls(meta=records[0].payload)
    before = records[0].time or found.meta.created
    for record in records[1:]:
        payload = record.payload
        if record.time:
            found.last_time = record.time
        match payload:
            case AssistantRecord():
                tokens = TokenStats(
                    in_tokens=payload.in_tokens,
                    out_tokens=payload.out_tokens,
                    cache_read_tokens=payload.cache_read_tokens,
                    cache_create_tokens=payload.cache_create_tokens,
                )
                found.responses.append(
                    ResponseStats(iteration=payload.iteration, tokens=tokens, time=record.time or None)
                )
                found.calls += _tool_uses(payload, record.time)
            case ToolIntentRecord():
                found.intents[payload.tool_use_id] = payload
            case ToolResultRecord():
                found.results[payload.tool_use_id] = _Answered(payload, record.time, _gap_ns(before, record.time))
            case TerminalRecord():
                found.terminal = payload
            case _:
                pass
        before = record.time
    return found


def _gap_ns(start: str, end: str) -> int | None:
    first, last = parse_created(start) if start else None, parse_created(end) if end else None
    if first is None or last is None:
        return None
    return max(0, round((last - first).total_seconds() * 1e9))


def _tool_uses(turn: AssistantRecord, time: str) -> list[_Call]:
    content = turn.message.get("content")
    uses: list[_Call] = []
    for block in content if isinstance(content, list) else []:
        use = block.get("tool_use") if isinstance(block, dict) else None
        if isinstance(use, dict) and isinstance(use.get("id"), str):
            name = use.get("name")
            uses.append(
                _Call(
                    iteration=turn.iteration,
                    tool_use_id=str(use["id"]),
                    tool=name if isinstance(name, str) else "",
                    input=use.get("input"),
                    time=time,
                )
            )
    return uses


def _kind(intent: ToolIntentRecord | None, result: ToolResultRecord | None) -> ToolKind:
    # The journal says how a call ran, not where its tool came from: a command line is an application
    # (or custom) command, a peer target is remote; anything else that ran is in-process (builtin or mcp).
    if (intent is not None and intent.remote_target is not None) or (result is not None and result.remote):
        return "remote"
    if intent is None:
        return "unknown"
    return "application" if intent.argv is not None else "builtin"


def _is_error(result: ToolResultRecord) -> bool:
    return result.result.get("is_error") is True


def session_stats(records: Sequence[Record], *, updated: datetime | None = None) -> SessionStats:
    """Fold a run's records into its statistics.

    Args:
        records: The run's records, as `Store.load` returns them.
        updated: When the journal was last written (for the wall clock), if the store knows it.

    Raises:
        JournalCorruptError: The records do not start with a meta record.
    """
    found = _collect(records)
    tools: dict[str, ToolStats] = {}
    for call in found.calls:
        stats = tools.setdefault(call.tool, ToolStats(tool=call.tool))
        intent, answered = found.intents.get(call.tool_use_id), found.results.get(call.tool_use_id)
        result = answered.result if answered is not None else None
        stats.calls += 1
        kind = _kind(intent, result)
        if kind != "unknown" and kind not in stats.kinds:
            stats.kinds.append(kind)
        if intent is not None:
            stats.dispatched += 1
        elif result is not None:
            stats.undispatched += 1
        if answered is None or result is None:
            stats.unanswered += 1
            continue
        if answered.duration_ns is None:
            stats.untimed += 1
        else:
            stats.timed += 1
            stats.duration_ns += answered.duration_ns
        stats.errors += _is_error(result)
    for stats in tools.values():
        if not stats.kinds:
            stats.kinds.append("unknown")
    responses = tuple(found.responses)
    fp = found.meta.fingerprint
    return SessionStats(
        run_id=found.meta.run_id,
        agent=found.meta.agent,
        caller=found.meta.caller,
        model=fp.model,
        created=found.meta.created,
        # The last record's own time when it has one: the store's modification time can be later (a copy).
        updated=parse_created(found.last_time) if found.last_time else updated,
        terminal=found.terminal.reason if found.terminal is not None else None,
        ended=found.terminal is not None,
        iterations=len(responses),
        max_iterations=fp.max_iterations,
        max_tokens=fp.max_tokens,
        tokens=TokenStats(
            in_tokens=sum(r.tokens.in_tokens for r in responses),
            out_tokens=sum(r.tokens.out_tokens for r in responses),
            cache_read_tokens=sum(r.tokens.cache_read_tokens for r in responses),
            cache_create_tokens=sum(r.tokens.cache_create_tokens for r in responses),
        ),
        responses=responses,
        tools=tuple(sorted(tools.values(), key=lambda t: (-t.calls, t.tool))),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class CallFilter:
    """`fiskai session query` filters; every given one must hold (an empty filter keeps every call)."""

    tools: frozenset[str] = frozenset()
    iteration: int | None = None
    errors: bool = False
    """Only calls answered with an error."""
    calls_only: bool = False
    """Only calls without a result."""
    results_only: bool = False
    """Only calls with a result."""
    input_match: re.Pattern[str] | None = None
    """Searched in the call's input as compact JSON."""
    output_match: re.Pattern[str] | None = None
    """Searched in the result's content."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AnswerView:
    """How a call was answered."""

    tool_use_id: str
    result: JsonObject
    """The result block `{tool_use_id, content, is_error}` the model received."""
    kind: AnswerKind
    """`result` (the tool ran), `denied` (the confirm gate refused it) or `refused` (not run: a hook, an
    unknown tool name, missing arguments)."""
    dispatched: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class CallView:
    """One tool call and its answer, if journaled."""

    iteration: int
    tool_use_id: str
    tool: str
    input: JsonValue
    answer: AnswerView | None
    time: str | None = None
    answer_time: str | None = None

    def to_json(self) -> dict[str, JsonValue]:
        answer: JsonValue = None
        if self.answer is not None:
            answer = {
                "tool_use_id": self.answer.tool_use_id,
                "result": self.answer.result,
                "kind": self.answer.kind,
                "dispatched": self.answer.dispatched,
            }
        return {
            "iteration": self.iteration,
            "tool_use_id": self.tool_use_id,
            "tool": self.tool,
            "input": self.input,
            "time": self.time,
            "answer": answer,
            "answer_time": self.answer_time,
        }


def _content_text(result: JsonObject) -> str:
    content = result.get("content")
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)


def _answer(intent: ToolIntentRecord | None, result: ToolResultRecord) -> AnswerView:
    gate = result.gate
    denied = gate is not None and gate.get("allowed") is not True
    kind: AnswerKind = "denied" if denied else "result" if intent is not None else "refused"
    # Only the block the model saw: journal-side keys (citations, hook decisions) stay out of it.
    block: JsonObject = {
        "tool_use_id": result.tool_use_id,
        "content": result.result.get("content"),
        "is_error": _is_error(result),
    }
    return AnswerView(tool_use_id=result.tool_use_id, result=block, kind=kind, dispatched=intent is not None)


def _keep(call: CallView, query: CallFilter) -> bool:
    answer = call.answer
    checks = (
        not query.tools or call.tool in query.tools,
        query.iteration is None or call.iteration == query.iteration,
        not query.errors or (answer is not None and answer.result.get("is_error") is True),
        not query.calls_only or answer is None,
        not query.results_only or answer is not None,
        query.input_match is None
        or query.input_match.search(json.dumps(call.input, ensure_ascii=False, separators=(",", ":"))) is not None,
        query.output_match is None
        or (answer is not None and query.output_match.search(_content_text(answer.result)) is not None),
    )
    return all(checks)


def query_calls(records: Sequence[Record], query: CallFilter | None = None) -> list[CallView]:
    """A run's tool calls (in the order the model made them) that pass `query`.

    Raises:
        JournalCorruptError: The records do not start with a meta record.
    """
    found = _collect(records)
    views: list[CallView] = []
    for call in found.calls:
        intent, answered = found.intents.get(call.tool_use_id), found.results.get(call.tool_use_id)
        view = CallView(
            iteration=call.iteration,
            tool_use_id=call.tool_use_id,
            tool=call.tool,
            input=call.input,
            answer=_answer(intent, answered.result) if answered is not None else None,
            time=call.time or None,
            answer_time=(answered.time or None) if answered is not None else None,
        )
        if query is None or _keep(view, query):
            views.append(view)
    return views


def parse_created(text: str) -> datetime | None:
    """An RFC 3339 time as an aware datetime (a naive one is local time); None when it does not parse."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.astimezone()
