"""The run's side of the journal: numbering records and writing them at the right moments.

A run that is not checkpointed has no journal; every method is then a no-op, so the loop reads the
same either way. Each append returns once the record is durable (the store's contract), which is what
lets the loop run a tool only after its intent is on disk.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

import anyio

from fiskai_agent.errors import ResumeRefusedError
from fiskai_agent.events import Advisory, Events
from fiskai_agent.llm import Message, Response, ToolResultBlock, ToolUseBlock, message_to_json, tool_result_to_json
from fiskai_core.confirm import GateDecision
from fiskai_core.telemetry import current as current_telemetry
from fiskai_core.tools import ToolResult
from fiskai_runstate import Journal, JournalTruncatedError, Record, Store
from fiskai_runstate.records import (
    AssistantRecord,
    JsonObject,
    TerminalReason,
    TerminalRecord,
    ToolIntentRecord,
    ToolResultRecord,
    UserRecord,
    args_digest,
)

__all__ = [
    "CITATIONS_KEY",
    "HOOKS_KEY",
    "RunJournal",
    "delivered_citations",
    "gate_json",
    "new_run_id",
    "open_for_resume",
]

HOOKS_KEY = "hooks"
"""Key of the hook decisions journaled with a tool result."""

CITATIONS_KEY = "citations"
"""Key of the knowledge citations a journaled knowledge_search result delivered."""

_BACKENDS = {"FileJournal": "file", "JetStreamJournal": "jetstream", "InMemoryJournal": "memory"}
"""`fisk.session.backend` by journal class (the metric's attribute; never a path or a subject)."""

_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_KSUID_EPOCH = 1_400_000_000


def _append_error(err: BaseException) -> str:
    if isinstance(err, anyio.get_cancelled_exc_class()):
        return "canceled"
    return "io" if isinstance(err, OSError) else "journal"


def new_run_id() -> str:
    """A 27-character, time-sortable id (KSUID layout: 4 bytes of seconds, 16 random bytes, base62)."""
    stamp = max(0, int(time.time()) - _KSUID_EPOCH).to_bytes(4, "big")
    number = int.from_bytes(stamp + secrets.token_bytes(16), "big")
    digits: list[str] = []
    while number:
        number, rest = divmod(number, 62)
        digits.append(_BASE62[rest])
    return "".join(reversed(digits)).rjust(27, "0")


def gate_json(decision: GateDecision) -> JsonObject:
    """The journal form of a gate decision: how it was reached and the argv digest, never the values."""
    out: JsonObject = {"allowed": decision.allowed, "channel": decision.channel, "digest": decision.digest}
    if decision.tag is not None:
        out["tag"] = decision.tag
    if decision.rule is not None:
        out["rule"] = decision.rule
    return out


async def open_for_resume(store: Store, run_id: str, *, force: bool, events: Events) -> Journal:
    """Open a run to resume it; a journal cut short is refused, or with `force` opened after a warning.

    A journal holding fewer records than its high-water mark counts would repeat the lost steps' side
    effects; the refusal names the records expected and found, and the fix.

    Raises:
        ResumeRefusedError: The journal is cut short and `force` is not set.
    """
    # Only a forced resume pays for the extra read: without force, `open` itself refuses.
    cut = await store.truncation(run_id) if force else None
    try:
        journal = await store.open(run_id, force=force)
    except JournalTruncatedError as err:
        raise ResumeRefusedError(str(err)) from None
    if cut is not None:
        events.warn(
            Advisory(
                kind="resume_forced",
                name=run_id,
                message=f'resuming session "{run_id}" although its journal {cut.reason} (--force)',
            )
        )
    return journal


class RunJournal:
    """Appends a run's records in order; a no-op without a journal."""

    def __init__(self, journal: Journal | None, *, run_id: str, last_seq: int) -> None:
        self._journal = journal
        self.run_id = run_id
        self._seq = last_seq
        self._effects = 0

    def next_effect_id(self) -> str:
        """The effect id of the call about to start: `<run id>/<n>`, fiskai's own, never the model's.

        In a journaled run `n` is the sequence number its intent record is about to get, unique in the
        session and kept in that record, so the same intent re-run after a crash exports the same id; in
        a run without a journal it counts the run's calls.
        """
        if self._journal is not None:
            return f"{self.run_id}/{self._seq + 1}"
        self._effects += 1
        return f"{self.run_id}/{self._effects}"

    @property
    def active(self) -> bool:
        """Whether records are written (the run is checkpointed)."""
        return self._journal is not None

    async def _append(
        self, payload: AssistantRecord | UserRecord | ToolIntentRecord | ToolResultRecord | TerminalRecord
    ) -> None:
        if self._journal is None:
            return
        self._seq += 1
        # Millisecond UTC stamps give session inspection its response and call times (schema version 6).
        stamp = datetime.now(UTC).isoformat(timespec="milliseconds")
        started = time.perf_counter()
        backend = _BACKENDS.get(type(self._journal).__name__, "custom")
        try:
            await self._journal.append(Record(seq=self._seq, payload=payload, time=stamp))
        except BaseException as err:
            # A failed append is measured too, with its kind (reference 6.4), then raised as before.
            attributes = {"fisk.session.backend": backend, "error.type": _append_error(err)}
            current_telemetry().record("fisk.session.append.duration", time.perf_counter() - started, attributes)
            raise
        current_telemetry().record(
            "fisk.session.append.duration", time.perf_counter() - started, {"fisk.session.backend": backend}
        )

    async def assistant(self, iteration: int, response: Response) -> None:
        """The model's turn, before any of its tools run."""
        usage = response.usage
        await self._append(
            AssistantRecord(
                iteration=iteration,
                message=message_to_json(response.message),
                stop_reason=response.stop_reason,
                in_tokens=usage.input_tokens,
                out_tokens=usage.output_tokens,
                cache_read_tokens=usage.cache_read_tokens,
                cache_create_tokens=usage.cache_create_tokens,
            )
        )

    async def intent(
        self,
        use: ToolUseBlock,
        *,
        effect_id: str,
        argv: Sequence[str] | None,
        remote_target: str | None,
        gate: GateDecision | None,
    ) -> None:
        """A call about to run; durable before the tool starts."""
        await self._append(
            ToolIntentRecord(
                tool_use_id=use.id,
                tool_name=use.name,
                args_digest=args_digest(use.input),
                effect_id=effect_id,
                argv=tuple(argv) if argv is not None else None,
                remote_target=remote_target,
                gate=gate_json(gate) if gate is not None else None,
            )
        )

    async def result(
        self,
        use: ToolUseBlock,
        result: ToolResult,
        *,
        remote: bool = False,
        gate: GateDecision | None = None,
        citations: Sequence[str] = (),
        hooks: Sequence[JsonObject] = (),
    ) -> ToolResultBlock:
        """A call's result, as soon as it exists; returns the block the model receives.

        `citations` (knowledge_search) ride in the journaled result object beside the content, so a resumed
        run knows what was already delivered; the model never sees that key.
        """
        block = ToolResultBlock(tool_use_id=use.id, content=result.text, is_error=result.is_error)
        body = tool_result_to_json(block)
        if citations:
            body[CITATIONS_KEY] = list(citations)
        if hooks:
            # Every hook decision on this call (a rewrite with both versions), beside the result like citations.
            body[HOOKS_KEY] = list(hooks)
        await self._append(
            ToolResultRecord(
                tool_use_id=use.id,
                result=body,
                remote=remote,
                gate=gate_json(gate) if gate is not None else None,
            )
        )
        return block

    async def user(self, message: Message, hooks: Sequence[JsonObject] = ()) -> None:
        """A chat follow-up (only the newly typed blocks) and what the `user_prompt_submit` hooks decided."""
        await self._append(UserRecord(message=message_to_json(message), hooks=tuple(hooks)))

    async def terminal(self, reason: TerminalReason, message: str = "") -> None:
        """Why the run stopped (a later one, after a resume, supersedes it)."""
        await self._append(TerminalRecord(reason=reason, message=message))

    async def aclose(self) -> None:
        """Release the journal (its lock)."""
        if self._journal is not None:
            await self._journal.aclose()


def delivered_citations(results: Iterable[JsonObject]) -> list[str]:
    """Every citation journaled with `results` (tool result objects), in order, without repeats."""
    seen: dict[str, None] = {}
    for result in results:
        listed = result.get(CITATIONS_KEY)
        if isinstance(listed, list):
            seen.update(dict.fromkeys(c for c in listed if isinstance(c, str)))
    return list(seen)
