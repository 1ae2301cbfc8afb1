"""The web card (`GET <base>/card`): what a page shows before the first prompt.

Top-level agent.yaml keys (`description`, `display_name`, `icon`, `icon_url`, `prompts`) plus what the
worker knows: its notes, protocols, tools with their behaviour hints, model and telemetry posture.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fiskai_core.tools import TAG_IDEMPOTENT, trigger_tag

if TYPE_CHECKING:
    from fiskai_core.config import Config
    from fiskai_core.tools import ToolSet

__all__ = ["build_card"]

_READ_ONLY_TAGS = ("ai:read_only", "ai:readonly", "read_only", "readonly")


def build_card(config: Config, tools: ToolSet, base_path: str) -> dict[str, Any]:
    """The card's JSON."""
    base = base_path.rstrip("/")
    capture = config.telemetry.capture
    return {
        "name": config.identity,
        "display_name": config.display_name or config.identity,
        "description": config.description,
        "icon": config.icon,
        "icon_url": config.icon_url,
        "prompts": list(config.prompts),
        "notes": [
            "Nobody is authenticated by the agent; the listener's reachability is the access control.",
            "Questions (approvals, ask_human) end the turn; answer them on the next POST.",
            "The server keeps the conversation: only the last message of a request is read.",
        ],
        "protocols": {
            "vercel": {"path": f"{base}/vercel", "sessions": f"{base}/vercel/sessions/{{id}}"},
            "agui": {"path": f"{base}/agui", "sessions": f"{base}/agui/sessions/{{id}}"},
        },
        "tools": [_tool(entry, config.harness.confirm_tags) for entry in tools.entries],
        "model": config.llm.model,
        "telemetry": bool(config.telemetry.enabled),
        "telemetry_content": bool(config.telemetry.enabled and capture.enabled),
    }


def _tool(entry: Any, confirm_tags: list[str]) -> dict[str, Any]:
    tool = entry.tool
    tags = tuple(tool.tags)
    gated = trigger_tag(tags, confirm_tags) is not None
    return {
        "name": tool.name,
        "description": tool.description,
        "input_schema": dict(tool.input_schema),
        "behavior": {
            "read_only": any(tag in tags for tag in _READ_ONLY_TAGS),
            "destructive": gated,
            "idempotent": TAG_IDEMPOTENT in tags,
            "open_world": entry.kind in ("remote", "mcp"),
        },
    }
