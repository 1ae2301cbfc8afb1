"""What a confirm gate consults: one agent's rules, and what they mean for a run with no terminal."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from ._rules import ApprovalRule
from ._store import load_rules, save_rules

__all__ = ["Approvals", "no_terminal_warning"]

_NAMED_TOOLS = 3


class Approvals:
    """One agent's persisted rules, as a confirm gate consults and extends them.

    Args:
        rules: The rules loaded for the agent.
        saver: Persists the full rule list after the operator adds one at a prompt; `None` means rules
            cannot be saved on this path (the prompt then does not offer to).
        identity: The agent the rules belong to (shown in prompts).
    """

    def __init__(
        self,
        rules: Sequence[ApprovalRule] = (),
        *,
        saver: Callable[[Sequence[ApprovalRule]], None] | None = None,
        identity: str = "",
    ) -> None:
        self._rules = list(rules)
        self._saver = saver
        self.identity = identity

    @classmethod
    def from_file(cls, path: Path, *, identity: str) -> Approvals:
        """The rules in `path`, saving additions back to it.

        Raises:
            RuleError: The file is malformed or unreadable.
        """
        return cls(load_rules(path), saver=lambda rules: save_rules(path, rules, identity=identity), identity=identity)

    @property
    def rules(self) -> tuple[ApprovalRule, ...]:
        return tuple(self._rules)

    @property
    def can_persist(self) -> bool:
        return self._saver is not None

    def match(self, *, name: str, tags: Sequence[str], argv: Sequence[str]) -> ApprovalRule | None:
        """The first rule that approves this call, if any."""
        return next((rule for rule in self._rules if rule.matches(name=name, tags=tags, argv=argv)), None)

    def add(self, rule: ApprovalRule) -> None:
        """Keep `rule` for this run and save it (a rule that cannot be saved still holds for the run).

        Raises:
            RuleError: Saving failed (the rule is in force for this run all the same).
        """
        if rule not in self._rules:
            self._rules.append(rule)
        if self._saver is not None:
            self._saver(self._rules)


def no_terminal_warning(gated: Mapping[str, Sequence[str]], approvals: Approvals | None) -> str:
    """The start-up warning for gated tools when no operator can be asked, true to the saved rules.

    Without a terminal a gated call runs only when a persisted rule approves it; say so when some rule
    can (naming how many rules, and for which tools), instead of claiming every call will be declined.

    Args:
        gated: Each gated tool of the run (name to its current tags).
        approvals: The persisted rules the run's gate consults, if any.

    Returns:
        One line, for `warning: `.
    """
    head = f"{len(gated)} tool(s) require confirmation before running but no interactive terminal is attached"
    rules = approvals.rules if approvals is not None else ()
    live = [rule for rule in rules if rule.tool in gated and rule.applies_to(rule.tool, gated[rule.tool])]
    if not live:
        return f"{head}; they will always be declined rather than run"
    tools = sorted({rule.tool for rule in live})
    named = ", ".join(tools[:_NAMED_TOOLS]) + (
        f" and {len(tools) - _NAMED_TOOLS} more" if len(tools) > _NAMED_TOOLS else ""
    )
    return (
        f"{head}; {len(live)} saved approval rule(s) still let matching calls of {named} run (see fiskai "
        "approvals list), every other call is declined rather than run"
    )
