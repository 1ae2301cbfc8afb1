"""Which journals a restarted web worker reads as waiting on a question (`Turns._asks_again`).

Only a run interrupted while its first unanswered call waited on a person is resumed to ask again: an
ask_human call, or a gated tool's call that never started. Anything else would run a tool or the model
on a mere look at the conversation, so it is left alone. Real file journals, written as the agent does.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fiskai_cli.serve.web._turns import Turns
from fiskai_runstate import FileJournalStore
from fiskai_runstate.records import (
    AssistantRecord,
    JsonObject,
    Payload,
    Record,
    TerminalReason,
    TerminalRecord,
    ToolIntentRecord,
)
from fiskai_runstate.testing import sample_meta

pytestmark = pytest.mark.anyio

_RUN = "w-0123456789ab-chat"


async def _journal(store: FileJournalStore, tool: str, *, started: bool, terminal: TerminalReason | None) -> None:
    journal = await store.create(sample_meta(_RUN))
    message: JsonObject = {"role": "assistant", "content": [{"tool_use": {"id": "toolu_1", "name": tool, "input": {}}}]}
    payloads: list[Payload] = [AssistantRecord(iteration=0, message=message, stop_reason="tool_use")]
    if started:
        payloads.append(ToolIntentRecord(tool_use_id="toolu_1", tool_name=tool, args_digest="0" * 64, effect_id="e1"))
    if terminal is not None:
        payloads.append(TerminalRecord(reason=terminal, message="the run was interrupted by the operator"))
    for seq, payload in enumerate(payloads, start=2):
        await journal.append(Record(seq=seq, payload=payload))
    await journal.aclose()


@pytest.mark.parametrize(
    ("tool", "started", "terminal", "asks"),
    [
        ("ask_human_input", True, "error", True),  # the question tool is asked again on resume
        ("ask_human_confirm", False, "error", True),
        ("cluster_node_drain", False, "error", True),  # the gate asks before the intent is journaled
        ("cluster_node_drain", True, "error", False),  # started: resuming could repeat its effect
        ("cluster_node_list", False, "error", False),  # ungated: resuming would just run it
        ("cluster_node_drain", False, None, False),  # a crash, not a question's interruption
        ("cluster_node_drain", False, "suspended", False),
    ],
)
async def test_a_journal_waits_on_a_question_only_when_a_person_was_being_asked(
    tmp_path: Path, tool: str, started: bool, terminal: TerminalReason | None, asks: bool
) -> None:
    store = FileJournalStore(tmp_path)
    await _journal(store, tool, started=started, terminal=terminal)
    turns = Turns("agent", store, gated=lambda: {"cluster_node_drain"})
    assert await turns._asks_again(_RUN) is asks
    assert await turns._asks_again("w-0123456789ab-none") is False
