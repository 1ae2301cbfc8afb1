"""The gate decisions a journal holds: one entry per decision, in journal order.

A call that ran carries its decision on its `tool_intent` record; a call that did not (denied by the
gate, or a crash re-run refused) carries it on its `tool_result`. A result's tool name comes from the
assistant turn that asked for the call. Only the argv digest is journaled, never the values.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .records import AssistantRecord, Record, ToolIntentRecord, ToolResultRecord

__all__ = ["GateEntry", "gate_entries"]


@dataclass(frozen=True, slots=True, kw_only=True)
class GateEntry:
    """One journaled gate decision."""

    seq: int
    tool_use_id: str
    tool: str
    """The tool name ("" when the journal does not say)."""
    allowed: bool
    channel: str
    tag: str | None
    rule: str | None
    digest: str
    ran: bool
    """Whether the decision let the call start (it is on the call's intent)."""


def _tool_names(records: Sequence[Record]) -> dict[str, str]:
    names: dict[str, str] = {}
    for record in records:
        payload = record.payload
        if isinstance(payload, AssistantRecord):
            content = payload.message.get("content")
            for block in content if isinstance(content, list) else []:
                # The journal's block form is {"tool_use": {"id", "name", "input"}}.
                use = block.get("tool_use") if isinstance(block, dict) else None
                if isinstance(use, dict):
                    use_id, name = use.get("id"), use.get("name")
                    if isinstance(use_id, str) and isinstance(name, str):
                        names[use_id] = name
        elif isinstance(payload, ToolIntentRecord):
            names[payload.tool_use_id] = payload.tool_name
    return names


def gate_entries(records: Sequence[Record]) -> list[GateEntry]:
    """Every gate decision in `records`, in order."""
    names = _tool_names(records)
    entries: list[GateEntry] = []
    for record in records:
        payload = record.payload
        if not isinstance(payload, ToolIntentRecord | ToolResultRecord) or payload.gate is None:
            continue
        gate = payload.gate
        tag, rule, digest = gate.get("tag"), gate.get("rule"), gate.get("digest")
        entries.append(
            GateEntry(
                seq=record.seq,
                tool_use_id=payload.tool_use_id,
                tool=names.get(payload.tool_use_id, ""),
                allowed=gate.get("allowed") is True,
                channel=str(gate.get("channel", "")),
                tag=tag if isinstance(tag, str) else None,
                rule=rule if isinstance(rule, str) else None,
                digest=digest if isinstance(digest, str) else "",
                ran=isinstance(payload, ToolIntentRecord),
            )
        )
    return entries
