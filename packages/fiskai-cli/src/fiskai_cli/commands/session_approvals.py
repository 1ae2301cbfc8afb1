"""`fiskai session show ID --approvals`: every gate decision a run journaled, with how it was reached.

A call that ran carries its decision on its `tool_intent` record; a call that did not (denied, or a
crash re-run refused) carries it on its `tool_result`. Tool names of results come from the assistant
turn that asked for the call. Only the argv digest is journaled, never the values.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import click

from fiskai_cli.ui.text import table
from fiskai_runstate import AssistantRecord, Record, ToolIntentRecord, ToolResultRecord

__all__ = ["APPROVALS_FLAG", "CHANNELS", "approval_rows", "remember_approvals_flag", "render_approvals"]

APPROVALS_FLAG = "fiskai.session.approvals"
"""`ctx.meta` key of `session show --approvals`."""

CHANNELS = {
    "ungated": "not gated",
    "session": "session allow",
    "rule": "persisted rule",
    "prompt": "terminal prompt",
    "no_terminal": "no terminal",
    "policy": "policy",
    "elicitation": "MCP elicitation",
    "input_required": "MCP input required",
    "operator": "host-side approver",
}
"""Journal channel to the words an operator reads."""


def remember_approvals_flag(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    """Click callback: keep `--approvals` in `ctx.meta` (the flag is not a parameter of `show`)."""
    ctx.meta[APPROVALS_FLAG] = value


def _tool_names(records: Sequence[Record]) -> dict[str, str]:
    names: dict[str, str] = {}
    for record in records:
        payload = record.payload
        if isinstance(payload, AssistantRecord):
            content = payload.message.get("content")
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    use_id, name = block.get("id"), block.get("name")
                    if isinstance(use_id, str) and isinstance(name, str):
                        names[use_id] = name
        elif isinstance(payload, ToolIntentRecord):
            names[payload.tool_use_id] = payload.tool_name
    return names


def approval_rows(records: Sequence[Record]) -> list[dict[str, Any]]:
    """One object per journaled gate decision, in journal order."""
    names = _tool_names(records)
    rows: list[dict[str, Any]] = []
    for record in records:
        payload = record.payload
        if not isinstance(payload, ToolIntentRecord | ToolResultRecord) or payload.gate is None:
            continue
        gate = payload.gate
        channel = str(gate.get("channel", ""))
        rows.append(
            {
                "seq": record.seq,
                "tool_use_id": payload.tool_use_id,
                "tool": names.get(payload.tool_use_id, ""),
                "allowed": gate.get("allowed") is True,
                "channel": channel,
                "channel_text": CHANNELS.get(channel, channel),
                "tag": gate.get("tag"),
                "rule": gate.get("rule"),
                "digest": gate.get("digest"),
                "ran": isinstance(payload, ToolIntentRecord),
            }
        )
    return rows


def render_approvals(rows: Sequence[dict[str, Any]]) -> str:
    """A table of the decisions (digests shortened), or a line saying there were none."""
    if not rows:
        return "no gate decisions were journaled in this run"
    body = [
        [
            str(row["seq"]),
            str(row["tool"]),
            "allowed" if row["allowed"] else "denied",
            str(row["channel_text"]),
            str(row["tag"] or "-"),
            str(row["digest"] or "")[:12],
            str(row["rule"] or "-"),
        ]
        for row in rows
    ]
    return table(["seq", "tool", "decision", "channel", "tag", "argv digest", "rule"], body)
