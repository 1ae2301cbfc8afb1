"""Confirmation over MCP for `ai:confirm` and `confirm_tags` tools, in both protocol eras.

The gate fails closed: only an `accept` whose `approve` is the boolean `true` runs the command; a
decline, a cancel, a malformed answer, a timeout, a lost client, or (under 2026-07-28) approval state
that does not verify are all denials, and a denial is an error result saying the command did not run.

- Protocol 2025-11-25 and earlier: the server sends `elicitation/create` while the call is open and
  waits (two minutes at most) for the answer.
- Protocol 2026-07-28 has no server-to-client requests: the first round answers `InputRequiredResult`
  with the question and a sealed state (`ApprovalStates`); the client retries the same call with the
  answer and the state, which must verify for this tool and these exact arguments, once.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ._state import ApprovalStates
from ._verdict import Channel, ConfirmMode, Verdict

__all__ = ["APPROVAL_SCHEMA", "CONFIRM_KEY", "ELICIT_TIMEOUT", "Confirmation", "approval_message"]

CONFIRM_KEY = "confirm"
"""The key of the approval question in `InputRequiredResult.input_requests`."""
ELICIT_TIMEOUT = 120.0
"""Seconds a user has to answer, in either era."""

APPROVAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "approve": {
            "type": "boolean",
            "title": "Approve this command",
            "description": "Set to true to run the command now, or false to refuse it.",
        }
    },
    "required": ["approve"],
}

OperatorCheck = Callable[[str, Sequence[str], Sequence[str]], Awaitable[Verdict]]
"""`(tool name, tags, argv) -> Verdict`: approval by the server operator instead of the client."""


def approval_message(server_name: str, display: str, tag: str) -> str:
    """What the client shows its user."""
    return (
        f"{server_name} wants to run a command that requires your approval.\n\n"
        f"Command: {display}\nGated by: {tag}\n\nApprove to run it now, or refuse to skip it."
    )


class Confirmation:
    """Decides whether one gated call may run, by the configured mode and the client's abilities."""

    def __init__(
        self,
        *,
        mode: ConfirmMode,
        server_name: str,
        states: ApprovalStates,
        operator: OperatorCheck | None,
        log: Callable[[str], None],
    ) -> None:
        self._mode = mode
        self._server_name = server_name
        self._states = states
        self._operator = operator
        self._log = log

    async def check(
        self,
        ctx: ServerRequestContext[Any, Any],
        params: types.CallToolRequestParams,
        *,
        tags: Sequence[str],
        argv: Sequence[str],
        display: str,
        tag: str,
    ) -> Verdict | types.InputRequiredResult:
        """Approve or deny one call, or (2026-07-28, first round) ask the client for input."""
        try:
            return await self._decide(ctx, params, tags=tags, argv=argv, display=display, tag=tag)
        except anyio.get_cancelled_exc_class():
            # The caller went away (disconnect, cancel, shutdown) while a human was being asked: nothing runs,
            # and the log says so instead of the question silently vanishing.
            self._log(f'Approval withdrawn for "{display}" (gated by {tag}): the call ended before anyone answered')
            raise

    async def _decide(
        self,
        ctx: ServerRequestContext[Any, Any],
        params: types.CallToolRequestParams,
        *,
        tags: Sequence[str],
        argv: Sequence[str],
        display: str,
        tag: str,
    ) -> Verdict | types.InputRequiredResult:
        if self._operator is not None:
            # Said before waiting: while another question is on the terminal, the operator sees this one queue.
            self._log(f'Approval queued for "{display}" (gated by {tag}): asking on the server\'s terminal')
            return await self._operator(params.name, tags, argv)
        if self._mode is ConfirmMode.NEVER:
            return Verdict(allowed=True, channel=Channel.POLICY, reason="confirm_over_mcp=never")
        capabilities = ctx.session.client_capabilities
        if capabilities is None or capabilities.elicitation is None:
            if self._mode is ConfirmMode.ALWAYS:
                return Verdict(
                    allowed=False,
                    channel=Channel.POLICY,
                    reason=f'Not approved: running "{display}" requires approval, but this client cannot be asked '
                    "(it does not support elicitation). The command did not run.",
                )
            self._log(f'warning: running "{display}" ungated: gated by {tag} but the client cannot elicit approval')
            return Verdict(allowed=True, channel=Channel.POLICY, reason="client cannot elicit (confirm_over_mcp=auto)")
        message = approval_message(self._server_name, display, tag)
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return self._round_trip(params, message, display)
        return await self._elicit(ctx, message, display)

    def _round_trip(
        self, params: types.CallToolRequestParams, message: str, display: str
    ) -> Verdict | types.InputRequiredResult:
        if params.input_responses is None and params.request_state is None:
            return types.InputRequiredResult(
                input_requests={
                    CONFIRM_KEY: types.ElicitRequest(
                        params=types.ElicitRequestFormParams(message=message, requested_schema=APPROVAL_SCHEMA)
                    )
                },
                request_state=self._states.mint(params.name, params.arguments),
            )
        if not self._states.redeem(params.request_state, params.name, params.arguments):
            return Verdict(
                allowed=False,
                channel=Channel.INPUT_REQUIRED,
                reason=f'Not approved: the approval for "{display}" could not be verified (it was altered, already '
                "used, expired, or issued for a different call). The command did not run; call the tool again "
                "to be asked afresh.",
            )
        answer = (params.input_responses or {}).get(CONFIRM_KEY)
        if not isinstance(answer, types.ElicitResult):
            return Verdict(
                allowed=False,
                channel=Channel.INPUT_REQUIRED,
                reason=f'Not approved: the client returned no answer to the approval request for "{display}". '
                "The command did not run.",
            )
        return _interpret(answer, display, Channel.INPUT_REQUIRED)

    async def _elicit(self, ctx: ServerRequestContext[Any, Any], message: str, display: str) -> Verdict:
        try:
            with anyio.fail_after(ELICIT_TIMEOUT):
                answer = await ctx.session.elicit_form(message, APPROVAL_SCHEMA, related_request_id=ctx.request_id)
        # Each is a way the question went unanswered; the call is denied and says why.
        except (MCPError, TimeoutError, anyio.BrokenResourceError, anyio.ClosedResourceError) as err:
            reason = str(err) or type(err).__name__
            return Verdict(
                allowed=False,
                channel=Channel.ELICITATION,
                reason=f'Not approved: requesting approval to run "{display}" failed: {reason}. '
                "The command did not run.",
            )
        return _interpret(answer, display, Channel.ELICITATION)


def _interpret(answer: types.ElicitResult, display: str, channel: Channel) -> Verdict:
    content: Mapping[str, object] = answer.content or {}
    if answer.action == "accept" and content.get("approve") is True:
        return Verdict(allowed=True, channel=channel, reason="the user approved")
    if answer.action == "accept":
        reason = (
            f'Not approved: the user reviewed "{display}" and chose not to run it. This was their decision, '
            "not an error; do not retry."
        )
    elif answer.action == "decline":
        reason = (
            f'Not approved: the user declined to run "{display}". This was their decision, not an error; '
            "do not retry, ask how they want to proceed."
        )
    else:
        reason = (
            f'Approval not completed: the user dismissed the approval prompt for "{display}" without deciding. '
            "The command did not run; you may ask again if it is still needed."
        )
    return Verdict(allowed=False, channel=channel, reason=reason)
