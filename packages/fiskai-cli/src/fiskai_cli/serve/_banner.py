"""What `fiskai serve` prints once every endpoint listens: the shared settings, then each endpoint's section."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

__all__ = ["banner", "go_duration", "section"]


def go_duration(value: timedelta) -> str:
    """A duration as Go prints one (`5m0s`, `30s`, `1h0m0s`, `0s`)."""
    total = value.total_seconds()
    if total <= 0:
        return "0s"
    hours, rest = divmod(total, 3600)
    minutes, seconds = divmod(rest, 60)
    text = f"{seconds:g}s"
    if hours or minutes:
        text = f"{int(minutes)}m{text}"
    if hours:
        text = f"{int(hours)}h{text}"
    return text


def section(rows: Sequence[tuple[str, str]]) -> str:
    """Rows as the Go banner draws them: a title, then right-aligned labels; a label repeats for list values."""
    width = max((len(label) for label, _ in rows if label), default=0)
    lines: list[str] = []
    for label, value in rows:
        if not label:
            lines.append(f"  {value}" if not lines else f"    {value}")
            if len(lines) == 1:
                lines.append("")
            continue
        values = value.split("\n") or [""]
        lines.append(f"  {label.rjust(width + 8)}: {values[0]}")
        lines.extend(f"  {'':>{width + 8}}  {more}" for more in values[1:])
    return "\n".join(lines)


def banner(
    config: Any,
    *,
    endpoints: Sequence[str],
    sessions: str,
    knowledge: str,
    agent_context: str,
    workers: str,
    work_dir: str,
    sections: Sequence[Sequence[tuple[str, str]]],
    queue_context: str = "",
) -> str:
    """The whole banner: the worker's shared settings, then one section per endpoint."""
    top: list[tuple[str, str]] = [
        ("Endpoints", "\n".join(endpoints)),
        ("Model", config.llm.model or "(none: tool endpoint only)"),
        *([("Queue Context", queue_context)] if queue_context else []),
        ("Agent Context", agent_context),
        ("Sessions", sessions),
        ("Knowledge", knowledge),
        ("MCP Clients", "none configured"),
        ("Telemetry", "disabled"),
        ("Tool Directory", work_dir),
        ("Tool Timeout", go_duration(config.harness.tool_timeout)),
        ("Queue Workers", workers),
    ]
    parts = [f"fiskai serve: agent {config.identity}", section(top)]
    parts.extend(section(rows) for rows in sections)
    return "\n\n".join(parts)
