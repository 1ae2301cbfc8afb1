"""`fiskai session show ID --approvals`: every gate decision a run journaled, with how it was reached."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

import click

from fiskai_cli.ui.gate_text import CHANNELS
from fiskai_cli.ui.text import table
from fiskai_runstate import Record
from fiskai_runstate.gate_log import gate_entries

__all__ = ["APPROVALS_FLAG", "CHANNELS", "approval_rows", "remember_approvals_flag", "render_approvals"]

APPROVALS_FLAG = "fiskai.session.approvals"
"""`ctx.meta` key of `session show --approvals`."""


def remember_approvals_flag(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    """Click callback: keep `--approvals` in `ctx.meta` (the flag is not a parameter of `show`)."""
    ctx.meta[APPROVALS_FLAG] = value


def approval_rows(records: Sequence[Record]) -> list[dict[str, Any]]:
    """One object per journaled gate decision, in journal order (`channel_text` in words)."""
    return [{**asdict(e), "channel_text": CHANNELS.get(e.channel, e.channel)} for e in gate_entries(records)]


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
