"""A job's session read from the journal store: whether it exists, and the answer of one that completed.

A journal that cannot be read the same way twice (a corrupt record, a file the worker may not read) is a
`JournalUnusableError`: the channel refuses the job instead of retrying it until the queue's try limit. The
journal is only read here, so the damaged file stays as it was for an operator to inspect.
"""

from __future__ import annotations

from fiskai_agent.llm import TextBlock, message_from_json
from fiskai_runstate import FileJournalStore, JournalError, JournalNotFoundError, Record, Store, fold
from fiskai_runstate.errors import JournalCorruptError

from ._replay import journal_usage

__all__ = ["JournalUnusableError", "StoreJournals"]


class JournalUnusableError(Exception):
    """A job's journal that every retry would fail on; `code` names the problem (`journal_corrupt`, ...)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code


class StoreJournals:
    """Implements `jobs.Journals` over the worker's journal store (lock-free reads)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    async def exists(self, session: str) -> bool:
        return bool(await self._records(session))

    async def _records(self, session: str) -> list[Record]:
        """The session's records ([] when it has no journal).

        Raises:
            JournalUnusableError: the journal is corrupt, or its file cannot be read. Any other journal error
                (a session stream that did not answer) propagates: it may pass, so the job is retried.
        """
        try:
            return await self.store.load(session)
        except JournalNotFoundError:
            return []
        except JournalCorruptError as err:
            raise JournalUnusableError("journal_corrupt", f"{err}; {self._fix(session)}") from None
        except OSError as err:
            problem = f"journal of session {session!r} cannot be read: {err.strerror or err}"
            raise JournalUnusableError("journal_unreadable", f"{problem}; {self._fix(session)}") from None
        except JournalError as err:
            if not isinstance(self.store, FileJournalStore):
                raise
            raise JournalUnusableError("journal_unreadable", f"{err}; {self._fix(session)}") from None

    def _fix(self, session: str) -> str:
        if isinstance(self.store, FileJournalStore):
            where = f"the session file {self.store.journal_path(session)}"
        else:
            where = f"session {session!r} in the session store"
        return (
            f"{where} was left as it is: inspect it (`fiskai session list` shows it as damaged), repair it or "
            "move it aside, then submit the job again"
        )

    async def answered(self, session: str) -> tuple[str, dict[str, int]] | None:
        """The final answer of a completed session (its last assistant prose) and its whole usage."""
        records = await self._records(session)
        if not records:
            return None
        state = fold(records)
        if not state.completed:
            return None
        answer = ""
        for raw in reversed(state.messages):
            message = message_from_json(raw)
            if message.role == "assistant":
                answer = "".join(block.text for block in message.content if isinstance(block, TextBlock))
                break
        return answer, journal_usage(state.counters)
