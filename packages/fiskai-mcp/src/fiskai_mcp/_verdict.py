"""The outcome of confirming one call, whoever decided it."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["DEFAULT_CONFIRM_MODE", "Channel", "ConfirmMode", "Verdict"]


class ConfirmMode(StrEnum):
    """`expose.agent.mcp.confirm_over_mcp`: how a confirm-gated tool is approved over MCP."""

    ALWAYS = "always"
    """The default: ask clients that can elicit; refuse the call for clients that cannot."""
    AUTO = "auto"
    """The Go agent's default: ask clients that can elicit; run the tool ungated, with only a warning on the
    server's stderr, for clients that cannot (so any client without elicitation runs gated commands with
    nobody asked)."""
    NEVER = "never"
    """Never ask: approval is delegated to the client's own UI."""


DEFAULT_CONFIRM_MODE = ConfirmMode.ALWAYS
"""Refusing, unlike the original's `auto`: nobody approving is a denial, not a pass."""


class Channel(StrEnum):
    """Who or what decided; logged with every decision."""

    ELICITATION = "elicitation"
    """The client asked its user mid-call (protocol 2025-11-25 and earlier)."""
    INPUT_REQUIRED = "input_required"
    """The client asked its user between two rounds of the call (protocol 2026-07-28)."""
    OPERATOR = "operator"
    """The server operator answered on the server's terminal (`--approve-on-tty`)."""
    POLICY = "policy"
    """No human was asked: `confirm_over_mcp` decided."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Verdict:
    """Run the call or not, why, and through which channel the decision came."""

    allowed: bool
    channel: Channel
    reason: str
    """For a denial, the text the client (and its model) sees; for an approval, a note for the log."""
