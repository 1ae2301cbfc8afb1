"""The stand-ins an agent eval drives a real run with: the scripted operator and the journal that kills the run.

`ScriptedOperator` answers prompts from a case's script (no terminal, or an exhausted script, behaves as a
real one would); `KillingStore` is a file journal store whose journals stop the run dead just after the
kill point's record is durable (in-process with `Killed`, or with a real SIGKILL through `on_hit`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from fiskai_agent.evaluation._suite import Kill
from fiskai_core.prompter import ConfirmChoice, GateRequest, PromptDeclined
from fiskai_runstate import FileJournalStore, Journal, JournalTruncatedError, Record
from fiskai_runstate.records import MetaRecord, ToolIntentRecord

__all__ = ["Killed", "KillingJournal", "KillingStore", "ScriptedOperator"]

_CHOICES = {
    "no": ConfirmChoice.NO,
    "once": ConfirmChoice.ONCE,
    "always": ConfirmChoice.ALWAYS,
    "command": ConfirmChoice.COMMAND,
    "rule": ConfirmChoice.RULE,
}


class Killed(BaseException):
    """Raised out of the journal to stop the run dead at the kill point (escapes the loop's error barrier)."""


class ScriptedOperator:
    """Answers prompts from a script; no terminal (or an exhausted script) behaves as a real one would."""

    def __init__(self, terminal: bool, answers: Sequence[str]) -> None:
        self._terminal = terminal
        self._answers = list(answers)
        self.approvals_asked = 0

    def _next(self) -> str:
        if not self._answers:
            raise PromptDeclined("end of input")
        return self._answers.pop(0)

    def can_prompt(self) -> bool:
        return self._terminal

    async def approve_command(self, request: GateRequest) -> ConfirmChoice:
        self.approvals_asked += 1
        answer = self._next().strip().lower()
        return _CHOICES.get(answer, ConfirmChoice.NO)

    async def ask_confirm(self, question: str) -> bool:
        return self._next().strip().lower() in ("y", "yes", "true")

    async def ask_select(self, question: str, options: Sequence[str]) -> int:
        answer = self._next().strip()
        return int(answer) - 1 if answer.isdigit() else -1

    async def ask_input(self, question: str, default: str) -> str:
        return self._next() or default

    def report(self, request: GateRequest, outcome: str) -> None:
        pass


class KillingJournal:
    def __init__(self, inner: Journal, hit: Callable[[Record], bool], on_hit: Callable[[], None] | None) -> None:
        self._inner = inner
        self._hit = hit
        self._on_hit = on_hit

    @property
    def run_id(self) -> str:
        return self._inner.run_id

    @property
    def last_seq(self) -> int:
        return self._inner.last_seq

    async def append(self, record: Record) -> None:
        await self._inner.append(record)
        if self._hit(record):
            if self._on_hit is not None:
                self._on_hit()  # a real kill: nothing after this line runs
            await self._inner.aclose()
            raise Killed

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> KillingJournal:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


class KillingStore:
    """A file store whose journals stop the run just after the kill point's record is durable."""

    def __init__(self, inner: FileJournalStore, kill: Kill, *, on_hit: Callable[[], None] | None = None) -> None:
        self._inner = inner
        self._kill = kill
        self._on_hit = on_hit
        self._seen = 0
        self._uses: dict[str, str] = {}

    def _hit(self, record: Record) -> bool:
        payload, kill = record.payload, self._kill
        if isinstance(payload, ToolIntentRecord):
            self._uses[payload.tool_use_id] = payload.tool_name
        kind = {"intent": "tool_intent", "result": "tool_result", "assistant": "assistant"}[kill.after]
        if record.kind != kind:
            return False
        if kill.after == "intent" and getattr(payload, "tool_name", None) != kill.tool:
            return False
        if kill.after == "result" and self._uses.get(getattr(payload, "tool_use_id", ""), "") != kill.tool:
            return False
        self._seen += 1
        return self._seen == kill.nth

    async def create(self, meta: MetaRecord) -> Journal:
        return KillingJournal(await self._inner.create(meta), self._hit, self._on_hit)

    async def open(self, run_id: str, *, force: bool = False) -> Journal:
        return KillingJournal(await self._inner.open(run_id, force=force), self._hit, self._on_hit)

    async def load(self, run_id: str) -> list[Record]:
        return await self._inner.load(run_id)

    async def truncation(self, run_id: str) -> JournalTruncatedError | None:
        return await self._inner.truncation(run_id)

    async def list(self):
        return await self._inner.list()

    async def delete(self, run_id: str) -> None:
        await self._inner.delete(run_id)
