"""ask_human_confirm / _select / _input: deny by default, sanitized before truncation (reference 7.3)."""

from __future__ import annotations

import json

import pytest

from fiskai_core.builtins import AskHumanConfirm, AskHumanInput, AskHumanSelect
from fiskai_core.prompter import DenyPrompter, PromptDeclined
from fiskai_core.testing import ScriptedPrompter

pytestmark = pytest.mark.anyio

NO_TERMINAL = "no interactive terminal is attached, so no operator could be asked"


async def test_confirm_yes_no_and_declined() -> None:
    prompter = ScriptedPrompter.of(True, False, PromptDeclined("end of input"))
    tool = AskHumanConfirm(prompter)
    assert json.loads((await tool.execute('{"question":"Proceed?"}')).text) == {"confirmed": True}
    assert json.loads((await tool.execute('{"question":"Proceed?"}')).text) == {"confirmed": False}
    declined = json.loads((await tool.execute('{"question":"Proceed?"}')).text)
    assert declined == {"confirmed": False, "reason": "the operator did not confirm: end of input"}


async def test_no_terminal_is_a_negative_answer_and_nobody_is_asked() -> None:
    prompter = ScriptedPrompter.of(True, interactive=False)
    result = await AskHumanConfirm(prompter).execute('{"question":"Proceed?"}')
    assert not result.is_error and json.loads(result.text) == {"confirmed": False, "reason": NO_TERMINAL}
    assert prompter.asked == []
    select = await AskHumanSelect(DenyPrompter()).execute('{"question":"Which?","options":["a"]}')
    assert json.loads(select.text) == {"selected": None, "reason": NO_TERMINAL}


async def test_escapes_are_stripped_before_the_question_is_truncated() -> None:
    prompter = ScriptedPrompter.of(True)
    hostile = "\x1b]0;pwned\x07" + "\x1b[2J" + "x" * 498 + "\x1b[31mEND"
    await AskHumanConfirm(prompter).execute(json.dumps({"question": hostile}))
    (asked,) = prompter.asked
    assert asked == "x" * 498 + "EN…"
    assert "\x1b" not in str(asked)


async def test_select_never_picks_for_the_operator_and_bounds_its_options() -> None:
    prompter = ScriptedPrompter.of(1, -1)
    tool = AskHumanSelect(prompter)
    chosen = await tool.execute('{"question":"Which?","options":["red","gr\\u001b[1men"]}')
    assert json.loads(chosen.text) == {"selected": "gren"}
    none = await tool.execute('{"question":"Which?","options":["red"]}')
    assert json.loads(none.text) == {"selected": None, "reason": "no option was chosen"}
    empty = await tool.execute('{"question":"Which?","options":[]}')
    assert empty.is_error and empty.text == "ask_human_select requires at least one option"
    many = await tool.execute(json.dumps({"question": "Which?", "options": [str(i) for i in range(26)]}))
    assert many.is_error and many.text == "ask_human_select supports at most 25 options, got 26"


async def test_input_takes_an_empty_answer_and_sanitizes_the_default() -> None:
    prompter = ScriptedPrompter.of("")
    result = await AskHumanInput(prompter).execute('{"question":"Name?","default":"a\\u001b[2Jb"}')
    assert json.loads(result.text) == {"value": ""}


async def test_malformed_input_and_an_empty_question_are_errors() -> None:
    tool = AskHumanConfirm(ScriptedPrompter.of())
    malformed = await tool.execute("{nope")
    assert malformed.is_error and malformed.text.startswith("invalid ask_human_confirm input: ")
    empty = await tool.execute('{"question":"  \\u001b[2J "}')
    assert empty.is_error and empty.text == "ask_human_confirm requires a non-empty question"
    missing = await tool.execute(None)
    assert missing.is_error and missing.text == "ask_human_confirm requires a non-empty question"
