"""The confirm gate: a tagged command runs only after an operator approves it, and "no" is the default.

Checks, in a fixed order (reference 7.1, extended); the first that decides wins:

1. Not gated (no `ai:confirm`, no `confirm_tags` tag): allowed, channel `ungated`.
2. The operator earlier allowed this tool, with any arguments, for the session: allowed, channel
   `session`, rule `session: TOOL ...`.
3. The operator earlier allowed this exact command line for the session: allowed, channel `session`,
   rule `session: command line <digest prefix>`.
4. A persisted rule of this agent matches the canonical argv (`fiskai_core.approvals`): allowed,
   channel `rule`, rule = the rule's text.
5. The prompter cannot prompt (no terminal): denied, channel `no_terminal`.
6. The operator is asked: once, this command line for the session, this tool for the session, or
   allow and save a rule (asked for with `ask_input`, pre-filled with the narrowest rule; it must match
   the call being approved). Any of these allows; no, or no answer at all (`PromptDeclined`), denies.
   Channel `prompt`; the rule that was added, if any, rides on the decision.

   Saving a rule allows only once the rule is saved (or held for the run when the file cannot be
   written), and the prompter is told which (`Prompter.report`), so no screen says "approved" early.
   Dismissing the rule question (Escape, end of input) or three unusable rules save nothing and put the
   approval question again; a prompter that cannot ask any more then declines it, which denies.

Callers check required parameters before the gate, so a broken call is never put to an operator, and
hand the gate the exact argv the tool would run (`Confirmable.command_argv`), so what the operator
approves, and what a rule is matched on, is what runs. A denial goes back to the model as a non-error
result (`denial_result`) whose reason says not to retry.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import anyio

from fiskai_core.approvals import ApprovalRule, Approvals, RuleError, parse_rule, suggest_rule
from fiskai_core.calls._prepare import argv_digest
from fiskai_core.prompter import ConfirmChoice, GateRequest, PromptDeclined, Prompter
from fiskai_core.sanitize import INVISIBLE
from fiskai_core.tools import ToolResult, trigger_tag

if TYPE_CHECKING:
    from fiskai_core.calls import ToolCall

__all__ = ["ConfirmGate", "GateChannel", "GateDecision", "argv_digest", "render_command_line"]

GateChannel = Literal[
    "ungated", "session", "rule", "no_terminal", "prompt", "policy", "elicitation", "input_required", "operator"
]
"""How a decision was reached; journaled beside it.

`session`: an earlier "allow for the session" (tool or exact command line); `rule`: a persisted rule;
`prompt`: the operator at this terminal answered (or did not); `no_terminal`: nobody could be asked;
`policy`: a caller's own rule (a crash re-run). MCP approvals use `elicitation`, `input_required` (the
client asked its user) and `operator` (the host-side approver)."""

_VALUE_KEEP_HEAD = 60
_VALUE_KEEP_TAIL = 24
_VALUE_MAX = _VALUE_KEEP_HEAD + _VALUE_KEEP_TAIL + 16
# Unquoted only when every character is one a shell would also read literally; anything else is quoted.
_SAFE_TOKEN = re.compile(r"[A-Za-z0-9_@%+=:,./-]+")
# Controls, and every character the free-text sanitizer shows as `<U+XXXX>` (bidi controls such as U+202E
# would otherwise reorder the line), plus the zero-width joiners: an approved argv must read exactly.
_NEEDS_ANSI_C = re.compile(rf"[\x00-\x1f\x7f-\x9f\u200c\u200d]|{INVISIBLE.pattern}")

_RULE_ATTEMPTS = 3
_RULE_ROUNDS = 3
"""How many times a dismissed rule question puts the approval question again before the call is denied."""
NO_TERMINAL_REASON = "no interactive terminal is attached, so no operator could be asked"
DECLINED_REASON = "the operator declined to permit this command; this decision is final, do not retry"


def _quote_plain(text: str) -> str:
    if _SAFE_TOKEN.fullmatch(text):
        return text
    if not _NEEDS_ANSI_C.search(text):
        return "'" + text.replace("'", "'\\''") + "'"
    # ANSI-C quoting shows control characters as escapes, so none can act on the terminal or hide text.
    out: list[str] = []
    for ch in text:
        code = ord(ch)
        if ch == "\\":
            out.append("\\\\")
        elif ch == "'":
            out.append("\\'")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif _NEEDS_ANSI_C.match(ch):
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
        else:
            out.append(ch)
    return "$'" + "".join(out) + "'"


def _quote_token(token: str) -> str:
    if len(token) <= _VALUE_MAX:
        return _quote_plain(token) if token else "''"
    head, tail = token[:_VALUE_KEEP_HEAD], token[-_VALUE_KEEP_TAIL:]
    hidden = len(token) - len(head) - len(tail)
    # The marker stands outside any quotes, where no literal argument text can appear, so it cannot be forged.
    return f"{_quote_plain(head)}<…{hidden:,} more characters…>{_quote_plain(tail)}"


def render_command_line(argv: Sequence[str]) -> str:
    """The command line an operator approves: every argv token, quoted so it reads unambiguously.

    Tokens of plain characters stand as they are; others are single-quoted, and any holding a control,
    bidi or invisible format character (U+202E, U+200B, U+FEFF, ...) use `$'...'` escapes (`$'\\u202e'`),
    so nothing in a value can move the cursor, end the line, reorder what is shown or pose as another
    argument. A value over 100 characters keeps its first 60 and last 24 with a
    `<…N more characters…>` marker between, so a long value never pushes a later argument out of view.

    Args:
        argv: The exact argv that will run, binary first.

    Returns:
        One line, safe to print on a terminal.
    """
    return " ".join(_quote_token(token) for token in argv)


@dataclass(frozen=True, slots=True, kw_only=True)
class GateDecision:
    """The gate's verdict on one call."""

    allowed: bool
    reason: str
    """Why, in words a model reads; empty when allowed."""
    channel: GateChannel
    tag: str | None
    """The trigger tag; `None` when the tool is not gated."""
    digest: str
    """`argv_digest` of the argv decided on."""
    display: str
    """`render_command_line` of that argv."""
    rule: str | None = None
    """The rule that decided (`session: ...` or a persisted rule's text), or the rule the operator saved."""

    def denial_result(self) -> ToolResult:
        """The authoritative, non-error result a model gets for a denied call."""
        body = {"allowed": False, "reason": self.reason} if self.reason else {"allowed": False}
        return ToolResult(output=json.dumps(body, ensure_ascii=False, separators=(",", ":")))


class ConfirmGate:
    """Default-deny approval for tools tagged `ai:confirm` or a configured `confirm_tags` tag.

    One gate lives for one run (or one server): "allow for the session" lasts as long as it does.
    Prompts are serialized, so concurrent callers (an MCP server) never interleave questions.

    Args:
        prompter: Asks the operator.
        confirm_tags: Tags that gate like `ai:confirm`.
        approvals: The agent's persisted rules; consulted before asking, and extended when the operator
            saves a rule at a prompt (offered only when they can be saved).
        nobody_reason: What the model is told when the prompter cannot ask (default: no terminal); a
            served channel says why nobody can be asked there.
    """

    def __init__(
        self,
        prompter: Prompter,
        *,
        confirm_tags: Collection[str] = (),
        approvals: Approvals | None = None,
        nobody_reason: str = "",
    ) -> None:
        self._prompter = prompter
        self._nobody_reason = nobody_reason or NO_TERMINAL_REASON
        self._confirm_tags = tuple(dict.fromkeys(confirm_tags))
        self._session_allowed: set[str] = set()
        self._session_lines: set[tuple[str, str]] = set()
        self._approvals = approvals
        self._prompt_lock = anyio.Lock()

    @property
    def prompter(self) -> Prompter:
        """The prompter the gate asks through."""
        return self._prompter

    @property
    def approvals(self) -> Approvals | None:
        """The persisted rules the gate consults, if any."""
        return self._approvals

    @property
    def confirm_tags(self) -> tuple[str, ...]:
        """`harness.confirm_tags`: the tags that gate like `ai:confirm`."""
        return self._confirm_tags

    def trigger_tag(self, tags: Sequence[str]) -> str | None:
        """The tag that gates a tool: `ai:confirm` if present, else its first tag in `confirm_tags`."""
        return trigger_tag(tags, self._confirm_tags)

    async def decide(self, call: ToolCall) -> GateDecision:
        """`check` for a prepared call: its tool, tags and the exact argv that will run."""
        return await self.check(name=call.name, tags=call.tool.tags, argv=call.gate_argv)

    def session_allowed(self, name: str) -> bool:
        """Whether `name` was allowed, with any arguments, for the rest of this run."""
        return name in self._session_allowed

    def restore_session_rule(self, name: str, rule: str, digest: str) -> None:
        """Honour an earlier "allow for the session" a resumed session's journal holds.

        `rule` is what the gate journaled with that approval (`session: NAME ...` for the tool, `session:
        command line ...` for one argv, whose `digest` is kept); any other rule is not a session approval
        and is ignored.
        """
        if rule == f"session: {name} ...":
            self._session_allowed.add(name)
        elif rule.startswith("session: command line ") and digest:
            self._session_lines.add((name, digest))

    def _standing(
        self, name: str, tags: Sequence[str], argv: Sequence[str], digest: str
    ) -> tuple[GateChannel, str] | None:
        """An earlier approval that covers this call: (channel, rule), or None."""
        if name in self._session_allowed:
            return "session", f"session: {name} ..."
        if (name, digest) in self._session_lines:
            return "session", f"session: command line {digest[:12]}"
        if self._approvals is not None:
            rule = self._approvals.match(name=name, tags=tags, argv=argv)
            if rule is not None:
                return "rule", rule.text
        return None

    async def check(self, *, name: str, tags: Sequence[str], argv: Sequence[str]) -> GateDecision:
        """Decide whether this call may run; asks the operator when it must.

        Args:
            name: The tool name.
            tags: The tool's tags.
            argv: The exact argv the call would run.

        Returns:
            The decision; never raises for an operator who does not answer (that is a denial).
        """
        tag = self.trigger_tag(tags)
        display = render_command_line(argv)
        digest = argv_digest(argv)

        def decide(allowed: bool, channel: GateChannel, reason: str = "", rule: str | None = None) -> GateDecision:
            return GateDecision(
                allowed=allowed, reason=reason, channel=channel, tag=tag, digest=digest, display=display, rule=rule
            )

        if tag is None:
            return decide(True, "ungated")
        standing = self._standing(name, tags, argv, digest)
        if standing is not None:
            return decide(True, standing[0], rule=standing[1])
        if not self._prompter.can_prompt():
            return decide(False, "no_terminal", self._nobody_reason)
        async with self._prompt_lock:
            # Another caller may have allowed the call while this one waited.
            standing = self._standing(name, tags, argv, digest)
            if standing is not None:
                return decide(True, standing[0], rule=standing[1])
            approvals = self._approvals
            can_persist = approvals is not None and approvals.can_persist
            request = GateRequest(
                command=name,
                display=display,
                tag=tag,
                can_persist=can_persist,
                suggested_rule=suggest_rule(name, argv) if can_persist else "",
            )
            try:
                choice = await self._ask(request, approvals, name, tags, argv, decide)
                if isinstance(choice, GateDecision):
                    return choice
            except PromptDeclined as err:
                reason = f"the operator did not permit this command: {err}; this decision is final, do not retry"
                return decide(False, "prompt", reason)
        if choice is ConfirmChoice.ALWAYS:
            self._session_allowed.add(name)
            return decide(True, "prompt", rule=f"session: {name} ...")
        if choice is ConfirmChoice.COMMAND:
            self._session_lines.add((name, digest))
            return decide(True, "prompt", rule=f"session: command line {digest[:12]}")
        if choice is ConfirmChoice.ONCE:
            return decide(True, "prompt")
        return decide(False, "prompt", DECLINED_REASON)

    async def _ask(
        self,
        request: GateRequest,
        approvals: Approvals | None,
        name: str,
        tags: Sequence[str],
        argv: Sequence[str],
        decide: Callable[..., GateDecision],
    ) -> ConfirmChoice | GateDecision:
        """The operator's choice, or the decision a saved rule made; a rule not saved asks the choice again."""
        prompter = self._prompter
        for _ in range(_RULE_ROUNDS):
            choice = await prompter.approve_command(request)
            if choice is not ConfirmChoice.RULE or approvals is None or not request.can_persist:
                return choice
            try:
                decision, outcome = await self._save_rule(approvals, name, tags, argv, decide)
            except PromptDeclined as err:
                prompter.report(request, f"no rule saved ({err}); asking again")
                continue
            prompter.report(request, outcome)
            return decision
        raise PromptDeclined("no rule was saved")

    async def _save_rule(
        self,
        approvals: Approvals,
        name: str,
        tags: Sequence[str],
        argv: Sequence[str],
        decide: Callable[..., GateDecision],
    ) -> tuple[GateDecision, str]:
        """Ask for the rule to save (it must parse and match this call), save it, and allow the call.

        Returns:
            The decision, and what became of the rule in an operator's words.
        """
        question = (
            f"Rule to save for agent {approvals.identity!r} (edit the values to widen it: * matches printable "
            "text without /, ** also /, ? one character; no wildcard matches a control character or a .. "
            "segment; ... allows unmentioned arguments):"
        )
        default = suggest_rule(name, argv)
        for _ in range(_RULE_ATTEMPTS):
            text = await self._prompter.ask_input(question, default)
            problem = ""
            rule: ApprovalRule | None = None
            try:
                rule = parse_rule(text, tags=tags)
            except RuleError as err:
                problem = str(err)
            if rule is not None and not rule.matches(name=name, tags=tags, argv=argv):
                problem = f"the rule {rule.text!r} does not match the command being approved"
                rule = None
            if rule is None:
                question = f"{problem}; enter a rule for this command:"
                default = text
                continue
            try:
                approvals.add(rule)
            except RuleError as err:
                held = f"{rule.text} (in force for this run only: {err})"
                return decide(True, "prompt", rule=held), f"approved, rule held for this run only: {held}"
            return decide(
                True, "prompt", rule=rule.text
            ), f"approved, rule saved for agent {approvals.identity!r}: {rule.text}"
        raise PromptDeclined("no usable rule was entered")
