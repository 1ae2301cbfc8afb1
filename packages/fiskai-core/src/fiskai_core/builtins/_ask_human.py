"""`ask_human_confirm`, `ask_human_select`, `ask_human_input`: the model asks the operator (reference 7.3).

Enabled by `harness.human_in_the_loop`; offered only on an agent run, never over MCP or A2A. Each tool
denies by default: no terminal, an interrupt, end of input or Escape gives a negative answer with a
reason, never a guess. Everything the model wrote is sanitized before it reaches the terminal, escape
sequences first and truncation after, so a cut can never leave half a sequence behind.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from pydantic import JsonValue
from typing_extensions import override

from fiskai_core.errors import ArgumentsError
from fiskai_core.prompter import PromptDeclined, Prompter
from fiskai_core.sanitize import sanitize_for_terminal
from fiskai_core.tools import CallContext, ToolArguments, ToolResult

from ._base import BuiltinTool, json_result

__all__ = [
    "ASK_HUMAN_CONFIRM",
    "ASK_HUMAN_INPUT",
    "ASK_HUMAN_SELECT",
    "HITL_SYSTEM_NOTE",
    "AskHumanConfirm",
    "AskHumanInput",
    "AskHumanSelect",
    "ask_human_tools",
]

ASK_HUMAN_CONFIRM = "ask_human_confirm"
ASK_HUMAN_SELECT = "ask_human_select"
ASK_HUMAN_INPUT = "ask_human_input"

HITL_SYSTEM_NOTE = (
    "You are running as a non-interactive agent: the operator cannot see your intermediate messages and cannot "
    "reply to them, so a question written as plain text will not reach them and only ends the run. The only way "
    "to get an answer or a decision from the operator is to call one of these tools: ask_human_confirm, "
    "ask_human_select, ask_human_input. Use them whenever your instructions tell you to check with the operator: "
    "to confirm an action, to choose between options, to collect a value, or to decide whether to continue, "
    "repeat, or stop."
)

_QUESTION_MAX_RUNES = 500
_MAX_OPTIONS = 25
NO_TERMINAL_REASON = "no interactive terminal is attached, so no operator could be asked"

_QUESTION: dict[str, JsonValue] = {
    "type": "string",
    "description": "The question to put to the operator, in one or two plain sentences.",
}

_AUTHORITATIVE = (
    " The answer is the operator's decision: it is authoritative and must not be retried or second-guessed; a "
    "negative answer with a reason (no terminal, the operator dismissed the prompt) means no decision was given, "
    "so do not proceed as if it had been."
)


def _question(tool: str, arguments: ToolArguments) -> str:
    raw = arguments.values.get("question", "")
    if raw is None:
        raw = ""
    if not isinstance(raw, str):
        raise ArgumentsError(f"invalid {tool} input: question must be a string")
    question = sanitize_for_terminal(raw, _QUESTION_MAX_RUNES)
    if not question:
        raise ArgumentsError(f"{tool} requires a non-empty question")
    return question


class _AskHuman(BuiltinTool):
    """Shared shape: the prompter the operator answers through; never repeated after a crash unasked."""

    asks_operator = True

    def __init__(self, prompter: Prompter) -> None:
        self._prompter = prompter

    @override
    def check(self, arguments: ToolArguments) -> None:
        """A question is required (sanitized to one line of at most 500 characters)."""
        _question(self._name, arguments)


class AskHumanConfirm(_AskHuman):
    """A yes/no question; no answer is no."""

    _name = ASK_HUMAN_CONFIRM
    _description = (
        "Ask the operator a yes/no question and wait for the answer. Use it before an action your instructions "
        "say needs the operator's agreement, or to decide whether to continue, repeat or stop. Returns "
        '{"confirmed": true} or {"confirmed": false} (with a "reason" when no answer could be had).' + _AUTHORITATIVE
    )
    _schema: Mapping[str, JsonValue] = {
        "type": "object",
        "properties": {"question": _QUESTION},
        "required": ["question"],
    }

    @override
    async def answer(self, arguments: ToolArguments, context: CallContext) -> ToolResult:
        """Ask; every outcome is a result."""
        question = _question(self._name, arguments)
        if not self._prompter.can_prompt():
            return json_result({"confirmed": False, "reason": NO_TERMINAL_REASON})
        try:
            confirmed = await self._prompter.ask_confirm(question)
        except PromptDeclined as err:
            return json_result({"confirmed": False, "reason": f"the operator did not confirm: {err}"})
        return json_result({"confirmed": bool(confirmed)})


class AskHumanSelect(_AskHuman):
    """Choose one of 1 to 25 options; nothing is ever picked on the operator's behalf."""

    _name = ASK_HUMAN_SELECT
    _description = (
        "Ask the operator to choose one option from a list and wait for the choice. Use it when your instructions "
        "leave a choice to the operator or several ways forward are reasonable. Give between 1 and 25 short "
        'options. Returns {"selected": "<the option text>"} or {"selected": null, "reason": "..."} when no '
        "option was chosen." + _AUTHORITATIVE
    )
    _schema: Mapping[str, JsonValue] = {
        "type": "object",
        "properties": {
            "question": _QUESTION,
            "options": {
                "type": "array",
                "items": {"type": "string"},
                "description": "The options to choose from, in the order to show them. At least one, at most 25.",
            },
        },
        "required": ["question", "options"],
    }

    @override
    def check(self, arguments: ToolArguments) -> None:
        """A question and 1 to 25 string options."""
        _question(self._name, arguments)
        self._options(arguments)

    def _options(self, arguments: ToolArguments) -> list[str]:
        raw_options = arguments.values.get("options")
        if raw_options is None:
            raw_options = []
        if not isinstance(raw_options, list) or not all(isinstance(option, str) for option in raw_options):
            raise ArgumentsError(f"invalid {self._name} input: options must be an array of strings")
        options = [sanitize_for_terminal(cast("str", option), _QUESTION_MAX_RUNES) for option in raw_options]
        if not options:
            raise ArgumentsError(f"{self._name} requires at least one option")
        if len(options) > _MAX_OPTIONS:
            raise ArgumentsError(f"{self._name} supports at most {_MAX_OPTIONS} options, got {len(options)}")
        return options

    @override
    async def answer(self, arguments: ToolArguments, context: CallContext) -> ToolResult:
        """Ask; every outcome is a result."""
        question = _question(self._name, arguments)
        options = self._options(arguments)
        if not self._prompter.can_prompt():
            return json_result({"selected": None, "reason": NO_TERMINAL_REASON})
        try:
            index = await self._prompter.ask_select(question, options)
        except PromptDeclined as err:
            return json_result({"selected": None, "reason": f"the operator did not choose: {err}"})
        if not 0 <= index < len(options):
            return json_result({"selected": None, "reason": "no option was chosen"})
        return json_result({"selected": options[index]})


class AskHumanInput(_AskHuman):
    """A free-text value; an empty string is a real answer."""

    _name = ASK_HUMAN_INPUT
    _description = (
        "Ask the operator for a free-text value (a name, an id, a number, a short instruction) and wait for it. "
        'Optionally offer a default the operator can accept or edit. Returns {"value": "<text>"} (an empty '
        'string is a valid answer) or {"value": null, "reason": "..."} when no answer could be had.' + _AUTHORITATIVE
    )
    _schema: Mapping[str, JsonValue] = {
        "type": "object",
        "properties": {
            "question": _QUESTION,
            "default": {
                "type": "string",
                "description": "A value shown pre-filled for the operator to accept or edit.",
            },
        },
        "required": ["question"],
    }

    @override
    def check(self, arguments: ToolArguments) -> None:
        """A question, and a string default when one is given."""
        _question(self._name, arguments)
        self._default(arguments)

    def _default(self, arguments: ToolArguments) -> str:
        raw_default = arguments.values.get("default")
        if raw_default is None:
            raw_default = ""
        if not isinstance(raw_default, str):
            raise ArgumentsError(f"invalid {self._name} input: default must be a string")
        return sanitize_for_terminal(raw_default, _QUESTION_MAX_RUNES)

    @override
    async def answer(self, arguments: ToolArguments, context: CallContext) -> ToolResult:
        """Ask; every outcome is a result."""
        question = _question(self._name, arguments)
        default = self._default(arguments)
        if not self._prompter.can_prompt():
            return json_result({"value": None, "reason": NO_TERMINAL_REASON})
        try:
            value = await self._prompter.ask_input(question, default)
        except PromptDeclined as err:
            return json_result({"value": None, "reason": f"the operator did not answer: {err}"})
        return json_result({"value": value})


def ask_human_tools(prompter: Prompter) -> list[AskHumanConfirm | AskHumanSelect | AskHumanInput]:
    """The three tools, in their documented order, answering through `prompter`."""
    return [AskHumanConfirm(prompter), AskHumanSelect(prompter), AskHumanInput(prompter)]
