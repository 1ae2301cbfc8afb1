"""ask_human_confirm / _select / _input: deny by default, sanitized before truncation (reference 7.3)."""

from __future__ import annotations

import json

import pytest

from fiskai_core.builtins import AskHumanConfirm, AskHumanInput, AskHumanSelect
from fiskai_core.prompter import DenyPrompter, PromptDeclined
from fiskai_core.testing import ScriptedPrompter, call_tool

pytestmark = pytest.mark.anyio

NO_TERMINAL = "no interactive terminal is attached, so no operator could be asked"


async def test_confirm_yes_no_and_declined() -> None:
    prompter = ScriptedPrompter.of(True, False, PromptDeclined("end of input"))
    tool = AskHumanConfirm(prompter)
    assert json.loads((await call_tool(tool, '{"question":"Proceed?"}')).text) == {"confirmed": True}
    assert json.loads((await call_tool(tool, '{"question":"Proceed?"}')).text) == {"confirmed": False}
    declined = json.loads((await call_tool(tool, '{"question":"Proceed?"}')).text)
    assert declined == {"confirmed": False, "reason": "the operator did not confirm: end of input"}


async def test_no_terminal_is_a_negative_answer_and_nobody_is_asked() -> None:
    prompter = ScriptedPrompter.of(True, interactive=False)
    result = await call_tool(AskHumanConfirm(prompter), '{"question":"Proceed?"}')
    assert not result.is_error and json.loads(result.text) == {"confirmed": False, "reason": NO_TERMINAL}
    assert prompter.asked == []
    select = await call_tool(AskHumanSelect(DenyPrompter()), '{"question":"Which?","options":["a"]}')
    assert json.loads(select.text) == {"selected": None, "reason": NO_TERMINAL}


async def test_escapes_are_stripped_before_the_question_is_truncated() -> None:
    prompter = ScriptedPrompter.of(True)
    hostile = "\x1b]0;pwned\x07" + "\x1b[2J" + "x" * 498 + "\x1b[31mEND"
    await call_tool(AskHumanConfirm(prompter), json.dumps({"question": hostile}))
    (asked,) = prompter.asked
    assert asked == "x" * 498 + "EN…"
    assert "\x1b" not in str(asked)


async def test_select_never_picks_for_the_operator_and_bounds_its_options() -> None:
    prompter = ScriptedPrompter.of(1, -1)
    tool = AskHumanSelect(prompter)
    chosen = await call_tool(tool, '{"question":"Which?","options":["red","gr\\u001b[1men"]}')
    assert json.loads(chosen.text) == {"selected": "gren"}
    none = await call_tool(tool, '{"question":"Which?","options":["red"]}')
    assert json.loads(none.text) == {"selected": None, "reason": "no option was chosen"}
    empty = await call_tool(tool, '{"question":"Which?","options":[]}')
    assert empty.is_error and empty.text == "ask_human_select requires at least one option"
    many = await call_tool(tool, json.dumps({"question": "Which?", "options": [str(i) for i in range(26)]}))
    assert many.is_error and many.text == "ask_human_select supports at most 25 options, got 26"


async def test_input_takes_an_empty_answer_and_sanitizes_the_default() -> None:
    prompter = ScriptedPrompter.of("")
    result = await call_tool(AskHumanInput(prompter), '{"question":"Name?","default":"a\\u001b[2Jb"}')
    assert json.loads(result.text) == {"value": ""}


async def test_malformed_input_and_an_empty_question_are_errors() -> None:
    tool = AskHumanConfirm(ScriptedPrompter.of())
    malformed = await call_tool(tool, "{nope")
    assert malformed.is_error
    assert malformed.text == "invalid JSON arguments: invalid character 'n' looking for beginning of object key string"
    not_text = await call_tool(tool, '{"question": 3}')
    assert not_text.is_error and not_text.text == "invalid ask_human_confirm input: question must be a string"
    empty = await call_tool(tool, '{"question":"  \\u001b[2J "}')
    assert empty.is_error and empty.text == "ask_human_confirm requires a non-empty question"
    missing = await call_tool(tool, None)
    assert missing.is_error and missing.text == "ask_human_confirm requires a non-empty question"
