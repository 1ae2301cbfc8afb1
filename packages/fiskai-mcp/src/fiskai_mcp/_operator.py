"""Approval by the server operator (`--approve-on-tty`): the confirm gate asks a `Prompter` on the host.

For clients whose own approval UI cannot be trusted: a gated call is put to the person running the server,
whatever the client can or cannot do, and the client only learns the outcome. The gate is the same one an
agent run uses (default deny; "allow for the session" lasts as long as the server), so a terminal that
cannot be asked, an interrupt or end of input is a denial.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from fiskai_core.confirm import ConfirmGate
from fiskai_core.prompter import Prompter

from ._verdict import Channel, Verdict

__all__ = ["OperatorApproval"]


class OperatorApproval:
    """Asks the operator through `prompter`; one per server."""

    def __init__(self, prompter: Prompter, *, confirm_tags: Collection[str]) -> None:
        self._gate = ConfirmGate(prompter, confirm_tags=confirm_tags)

    async def __call__(self, name: str, tags: Sequence[str], argv: Sequence[str]) -> Verdict:
        decision = await self._gate.check(name=name, tags=tags, argv=argv)
        if decision.allowed:
            how = "for this session" if decision.channel == "session" else "on the server's terminal"
            return Verdict(allowed=True, channel=Channel.OPERATOR, reason=f"the operator approved {how}")
        return Verdict(
            allowed=False,
            channel=Channel.OPERATOR,
            reason=f'Not approved: running "{decision.display}" was put to the server operator and {decision.reason}. '
            "The command did not run.",
        )
