"""`fold`: replay a journal's records into the state a run resumes from. Pure: no IO, no clock.

The state holds the committed conversation prefix, counters derived from the records (so they cannot
drift from what happened), the next iteration, the in-flight tool batch of the last model turn, and the
tool intents that have no result. It holds no client, credentials or configuration; those are rebuilt on
resume.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from .errors import JournalCorruptError, JournalVersionError
from .fingerprint import Fingerprint
from .records import (
    SCHEMA_VERSION,
    AssistantRecord,
    JsonObject,
    JsonValue,
    MetaRecord,
    Record,
    TerminalRecord,
    ToolIntentRecord,
    ToolResultRecord,
    UserRecord,
    tool_use_ids,
)

__all__ = ["Counters", "PendingBatch", "RunState", "fold"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Counters:
    """Cumulative run statistics, derived from the journal."""

    llm_calls: int = 0
    tool_calls: int = 0
    remote_tool_calls: int = 0
    in_tokens: int = 0
    out_tokens: int = 0
    cache_read_tokens: int = 0
    cache_create_tokens: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class PendingBatch:
    """The last model turn's tool calls when some have no result yet (a crash or a budget stop mid-batch).

    A resume reuses `results` in journal order, runs `unanswered` in the assistant's block order, then
    commits the assistant message and one user message with every result.
    """

    assistant: JsonObject
    """The assistant message that asked for the tools."""
    iteration: int
    """Its iteration."""
    stop_reason: str
    """Its stop reason."""
    results: tuple[ToolResultRecord, ...]
    """Results already journaled, in journal order."""
    answered: frozenset[str]
    """tool_use ids with a result."""
    unanswered: tuple[str, ...]
    """tool_use ids without a result, in block order."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunState:
    """Everything a resume needs from the journal."""

    version: int
    """The meta record's schema version."""
    run_id: str
    created: str
    fingerprint: Fingerprint
    prompt: str
    interactive: bool
    messages: tuple[JsonObject, ...]
    """The committed conversation prefix: the prompt, then every complete turn."""
    counters: Counters
    next_iteration: int
    """The iteration the resumed loop starts at."""
    pending: PendingBatch | None
    """The in-flight tool batch, if the last turn's tools did not all finish."""
    intents_without_results: tuple[ToolIntentRecord, ...]
    """Tool calls that were about to run (or ran) but have no journaled result: their side effect may
    have happened, so they must not be repeated silently."""
    last_stop_reason: str
    terminal: TerminalRecord | None
    """The last terminal record, if any."""
    last_seq: int
    """The highest sequence number; the next append is `last_seq + 1`."""
    previous: str = ""
    """The session this one continues (a chat's `/clear` rotated from it); empty for a first session."""
    agent: str = ""
    """The agent identity the session was started under (schema version 6; empty before)."""
    caller: str = ""
    """Who asked for it (schema version 6; empty for the local operator and before)."""

    @property
    def completed(self) -> bool:
        """True when the run ended with a final answer (and so cannot be resumed)."""
        return self.terminal is not None and self.terminal.reason == "completed"

    @property
    def status(self) -> str:
        """The terminal reason, or `open` when the run has none."""
        return self.terminal.reason if self.terminal is not None else "open"


@dataclass(slots=True)
class _Turn:
    record: AssistantRecord
    uses: tuple[str, ...]
    results: list[ToolResultRecord] = field(default_factory=lambda: [])
    answered: set[str] = field(default_factory=lambda: set())


def _results_message(results: list[ToolResultRecord]) -> JsonObject:
    content: list[JsonValue] = [{"tool_result": r.result} for r in results]
    return {"role": "user", "content": content}


def _bad(run_id: str, seq: int, reason: str) -> JournalCorruptError:
    return JournalCorruptError(run_id, reason, where=f"seq {seq}")


# One branch per record kind, in journal order: splitting the kinds apart would hide how a turn opens and commits.
def fold(records: Iterable[Record]) -> RunState:  # noqa: C901
    """Replay records into a `RunState`.

    Args:
        records: The journal, in sequence order (as a store's `load` returns it).

    Returns:
        The state a resume continues from.

    Raises:
        JournalVersionError: The meta record is from a newer schema version.
        JournalCorruptError: No records, no leading meta record, a second meta, a sequence that does not
            increase, or a tool record before any model turn.
    """
    it = iter(records)
    first = next(it, None)
    if first is None:
        raise JournalCorruptError("?", "the journal has no records")
    meta = first.payload
    if not isinstance(meta, MetaRecord) or first.seq != 1:
        raise JournalCorruptError("?", "the first record is not the meta record at seq 1")
    run_id = meta.run_id
    if meta.version > SCHEMA_VERSION:
        raise JournalVersionError(run_id, found=meta.version, supported=SCHEMA_VERSION, where="meta")

    messages: list[JsonObject] = [{"role": "user", "content": [{"text": {"text": meta.prompt}}]}]
    llm_calls = tool_calls = remote_calls = in_tok = out_tok = cache_read = cache_create = 0
    turn: _Turn | None = None
    last_iteration = -1
    last_stop = ""
    terminal: TerminalRecord | None = None
    intents: dict[str, ToolIntentRecord] = {}
    last_seq = 1

    def commit(open_turn: _Turn) -> None:
        messages.append(open_turn.record.message)
        if open_turn.results:
            messages.append(_results_message(open_turn.results))

    for record in it:
        seq = record.seq
        if seq <= last_seq:
            raise _bad(run_id, seq, f"seq {seq} not increasing after {last_seq}")
        if record.version > SCHEMA_VERSION:
            raise JournalVersionError(run_id, found=record.version, supported=SCHEMA_VERSION, where=f"seq {seq}")
        last_seq = seq
        payload = record.payload
        match payload:
            case AssistantRecord():
                if turn is not None:
                    commit(turn)
                turn = _Turn(record=payload, uses=tool_use_ids(payload.message))
                llm_calls += 1
                in_tok += payload.in_tokens
                out_tok += payload.out_tokens
                cache_read += payload.cache_read_tokens
                cache_create += payload.cache_create_tokens
                last_iteration = payload.iteration
                last_stop = payload.stop_reason
            case ToolIntentRecord():
                if turn is None:
                    raise _bad(run_id, seq, "tool_intent before any assistant record")
                intents[payload.tool_use_id] = payload
            case ToolResultRecord():
                if turn is None:
                    raise _bad(run_id, seq, "tool_result before any assistant record")
                turn.results.append(payload)
                turn.answered.add(payload.tool_use_id)
                intents.pop(payload.tool_use_id, None)
                tool_calls += 1
                if payload.remote:
                    remote_calls += 1
            case UserRecord():
                if turn is not None:
                    commit(turn)
                    turn = None
                _append_user(messages, payload.message)
            case TerminalRecord():
                terminal = payload
            case MetaRecord():
                raise _bad(run_id, seq, "a second meta record")

    pending: PendingBatch | None = None
    if turn is not None:
        unanswered = tuple(u for u in turn.uses if u not in turn.answered)
        if unanswered:
            pending = PendingBatch(
                assistant=turn.record.message,
                iteration=turn.record.iteration,
                stop_reason=turn.record.stop_reason,
                results=tuple(turn.results),
                answered=frozenset(turn.answered),
                unanswered=unanswered,
            )
        else:
            commit(turn)

    return RunState(
        version=meta.version,
        run_id=run_id,
        created=meta.created,
        fingerprint=meta.fingerprint,
        prompt=meta.prompt,
        interactive=meta.interactive,
        messages=tuple(messages),
        counters=Counters(
            llm_calls=llm_calls,
            tool_calls=tool_calls,
            remote_tool_calls=remote_calls,
            in_tokens=in_tok,
            out_tokens=out_tok,
            cache_read_tokens=cache_read,
            cache_create_tokens=cache_create,
        ),
        next_iteration=last_iteration + 1,
        pending=pending,
        intents_without_results=tuple(intents.values()),
        last_stop_reason=last_stop,
        terminal=terminal,
        last_seq=last_seq,
        previous=meta.previous,
        agent=meta.agent,
        caller=meta.caller,
    )


def _append_user(messages: list[JsonObject], message: JsonObject) -> None:
    # Consecutive user turns merge into one message, as providers require alternating roles.
    last = messages[-1]
    new_content = message.get("content")
    old_content = last.get("content")
    if last.get("role") == "user" and isinstance(old_content, list) and isinstance(new_content, list):
        messages[-1] = {**last, "content": [*old_content, *new_content]}
    else:
        messages.append(message)
