"""The Prompter seam: the only way any fiskai tier asks a human something.

A prompter only reports what the operator chose, or raises `PromptDeclined` when no answer came
(an interrupt, end of input, Escape, a lost terminal). Deny-by-default lives in the callers (the
confirm gate, the ask_human tools), never in a prompter, so a prompter that misbehaves can only
fail towards "no".

Implementations: `DenyPrompter` here (no operator on this path), the line prompter and the
full-screen prompter in fiskai-cli, and `fiskai_core.testing.ScriptedPrompter` for tests.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from fiskai_core.errors import FiskaiError

__all__ = ["ConfirmChoice", "DenyPrompter", "GateRequest", "PromptDeclined", "Prompter"]


class ConfirmChoice(StrEnum):
    """An operator's answer to "run this command?"."""

    NO = "no"
    ONCE = "once"
    ALWAYS = "always"
    """Allow this tool, with any arguments, for the rest of the run."""
    COMMAND = "command"
    """Allow this exact command line (the same argv) for the rest of the run."""
    RULE = "rule"
    """Allow, and save a rule for this agent; the gate then asks for the rule (`ask_input`, pre-filled with
    `GateRequest.suggested_rule`). Offer it only when `GateRequest.can_persist`."""


@dataclass(frozen=True, slots=True, kw_only=True)
class GateRequest:
    """What the operator is asked to approve."""

    command: str
    """The tool name, e.g. `stream_rm`."""
    display: str
    """The exact command line, rendered by `fiskai_core.confirm.render_command_line` (safe to print)."""
    tag: str
    """The tag that put the command behind the gate (`ai:confirm` or a `confirm_tags` entry)."""
    can_persist: bool = False
    """Whether `ConfirmChoice.RULE` can be chosen (the gate has an agent's rules file to save to)."""
    suggested_rule: str = ""
    """The narrowest rule matching this call (`fiskai_core.approvals.suggest_rule`), for the operator to widen."""


class PromptDeclined(FiskaiError):
    """No answer came: interrupted, end of input, dismissed, or no operator on this path.

    The message says why in a few words (`end of input`, `interrupted`); callers fold it into the
    reason they give the model.
    """


class Prompter(Protocol):
    """Asks the operator; every method either returns the operator's answer or raises `PromptDeclined`."""

    def can_prompt(self) -> bool:
        """Whether an operator can be asked at all (for a line prompter: stdin is a terminal)."""
        ...

    async def approve_command(self, request: GateRequest) -> ConfirmChoice:
        """Ask whether a gated command may run."""
        ...

    async def ask_confirm(self, question: str) -> bool:
        """A yes/no question; the default answer is no."""
        ...

    async def ask_select(self, question: str, options: Sequence[str]) -> int:
        """Choose one of `options`; the index chosen, or -1 when none was."""
        ...

    async def ask_input(self, question: str, default: str) -> str:
        """A free-text value, `default` offered pre-filled."""
        ...

    def report(self, request: GateRequest, outcome: str) -> None:
        """Show the operator what became of an approval after its last question, in a few words.

        The gate calls it when the outcome was not known at `approve_command`'s answer: a rule saved (or
        held for the run only), or no rule saved and the approval asked again. Never asks anything.
        """
        ...


_NO_OPERATOR = "no operator is available to answer on this path"


class DenyPrompter:
    """The prompter for paths with no operator (piped runs, servers): it can never prompt."""

    def can_prompt(self) -> bool:
        return False

    async def approve_command(self, request: GateRequest) -> ConfirmChoice:
        raise PromptDeclined(_NO_OPERATOR)

    async def ask_confirm(self, question: str) -> bool:
        raise PromptDeclined(_NO_OPERATOR)

    async def ask_select(self, question: str, options: Sequence[str]) -> int:
        raise PromptDeclined(_NO_OPERATOR)

    async def ask_input(self, question: str, default: str) -> str:
        raise PromptDeclined(_NO_OPERATOR)

    def report(self, request: GateRequest, outcome: str) -> None:
        pass
