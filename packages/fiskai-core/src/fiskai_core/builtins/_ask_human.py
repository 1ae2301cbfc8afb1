"""`ask_human_confirm`, `ask_human_select`, `ask_human_input`: the model asks the operator (reference 7.3).

Enabled by `harness.human_in_the_loop`; offered only on an agent run, never over MCP or A2A. Each tool
denies by default: no terminal, an interrupt, end of input or Escape gives a negative answer with a
reason, never a guess. Everything the model wrote is sanitized before it reaches the terminal, escape
sequences first and truncation after, so a cut can never leave half a sequence behind.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, cast

from pydantic import JsonValue

from fiskai_core.prompter import PromptDeclined, Prompter
from fiskai_core.sanitize import sanitize_for_terminal
from fiskai_core.tools import ToolResult

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


def _decode(tool: str, arguments: str | bytes | None) -> dict[str, Any] | ToolResult:
    try:
        text = arguments.decode() if isinstance(arguments, bytes) else (arguments or "")
        decoded: object = json.loads(text) if text.strip() else None
    except (ValueError, UnicodeDecodeError) as err:
        return ToolResult(text=f"invalid {tool} input: {err}", is_error=True)
    if decoded is None:
        return {}
    if not isinstance(decoded, dict):
        return ToolResult(text=f"invalid {tool} input: expected a JSON object", is_error=True)
    return cast("dict[str, Any]", decoded)


def _question(tool: str, data: Mapping[str, Any]) -> str | ToolResult:
    raw = data.get("question", "")
    if not isinstance(raw, str):
        return ToolResult(text=f"invalid {tool} input: question must be a string", is_error=True)
    question = sanitize_for_terminal(raw, _QUESTION_MAX_RUNES)
    if not question:
        return ToolResult(text=f"{tool} requires a non-empty question", is_error=True)
    return question


def _result(body: dict[str, object]) -> ToolResult:
    return ToolResult(text=json.dumps(body, ensure_ascii=False, separators=(",", ":")))


class _AskHuman:
    """Shared shape: a name, no tags, a schema, and the prompter the operator answers through."""

    _name: str
    _description: str
    _schema: Mapping[str, JsonValue]

    def __init__(self, prompter: Prompter) -> None:
        self._prompter = prompter

    @property
    def name(self) -> str:
        """The tool name."""
        return self._name

    @property
    def tags(self) -> Sequence[str]:
        """Built-ins carry no tags."""
        return ()

    @property
    def description(self) -> str:
        """What the model reads about the tool."""
        return self._description

    @property
    def input_schema(self) -> Mapping[str, JsonValue]:
        """The tool's argument schema (shared; never mutate it)."""
        return self._schema


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

    async def execute(self, arguments: str | bytes | None) -> ToolResult:
        """Ask; every outcome is a result."""
        data = _decode(self._name, arguments)
        if isinstance(data, ToolResult):
            return data
        question = _question(self._name, data)
        if isinstance(question, ToolResult):
            return question
        if not self._prompter.can_prompt():
            return _result({"confirmed": False, "reason": NO_TERMINAL_REASON})
        try:
            confirmed = await self._prompter.ask_confirm(question)
        except PromptDeclined as err:
            return _result({"confirmed": False, "reason": f"the operator did not confirm: {err}"})
        return _result({"confirmed": bool(confirmed)})


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

    async def execute(self, arguments: str | bytes | None) -> ToolResult:
        """Ask; every outcome is a result."""
        data = _decode(self._name, arguments)
        if isinstance(data, ToolResult):
            return data
        question = _question(self._name, data)
        if isinstance(question, ToolResult):
            return question
        raw_options = data.get("options", [])
        if not isinstance(raw_options, list):
            return ToolResult(text=f"invalid {self._name} input: options must be an array of strings", is_error=True)
        listed = cast("list[object]", raw_options)
        if not all(isinstance(option, str) for option in listed):
            return ToolResult(text=f"invalid {self._name} input: options must be an array of strings", is_error=True)
        options = [sanitize_for_terminal(cast("str", option), _QUESTION_MAX_RUNES) for option in listed]
        if not options:
            return ToolResult(text=f"{self._name} requires at least one option", is_error=True)
        if len(options) > _MAX_OPTIONS:
            return ToolResult(
                text=f"{self._name} supports at most {_MAX_OPTIONS} options, got {len(options)}", is_error=True
            )
        if not self._prompter.can_prompt():
            return _result({"selected": None, "reason": NO_TERMINAL_REASON})
        try:
            index = await self._prompter.ask_select(question, options)
        except PromptDeclined as err:
            return _result({"selected": None, "reason": f"the operator did not choose: {err}"})
        if not 0 <= index < len(options):
            return _result({"selected": None, "reason": "no option was chosen"})
        return _result({"selected": options[index]})


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

    async def execute(self, arguments: str | bytes | None) -> ToolResult:
        """Ask; every outcome is a result."""
        data = _decode(self._name, arguments)
        if isinstance(data, ToolResult):
            return data
        question = _question(self._name, data)
        if isinstance(question, ToolResult):
            return question
        raw_default = data.get("default", "")
        if not isinstance(raw_default, str):
            return ToolResult(text=f"invalid {self._name} input: default must be a string", is_error=True)
        default = sanitize_for_terminal(raw_default, _QUESTION_MAX_RUNES)
        if not self._prompter.can_prompt():
            return _result({"value": None, "reason": NO_TERMINAL_REASON})
        try:
            value = await self._prompter.ask_input(question, default)
        except PromptDeclined as err:
            return _result({"value": None, "reason": f"the operator did not answer: {err}"})
        return _result({"value": value})


def ask_human_tools(prompter: Prompter) -> list[AskHumanConfirm | AskHumanSelect | AskHumanInput]:
    """The three tools, in their documented order, answering through `prompter`."""
    return [AskHumanConfirm(prompter), AskHumanSelect(prompter), AskHumanInput(prompter)]
