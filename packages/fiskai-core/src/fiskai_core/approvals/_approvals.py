"""What a confirm gate consults: one agent's rules."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from ._rules import ApprovalRule
from ._store import load_rules, save_rules

__all__ = ["Approvals"]


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
