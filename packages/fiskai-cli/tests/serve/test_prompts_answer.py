"""`request.answer`: an answer that does not fit its kind is refused (a 400) before anything runs."""

from typing import Any

import pytest

from fiskai_cli.serve.prompts import _answer_problem

CALL = {"tool_use_id": "toolu_1"}


@pytest.mark.parametrize(
    "answer",
    [
        {**CALL, "kind": "approve", "answer": "choice", "choice": "once"},
        {**CALL, "kind": "approve", "answer": "no_operator"},
        {**CALL, "kind": "confirm", "answer": "confirmed", "confirmed": False},
        {**CALL, "kind": "select", "answer": "value", "value": "the option text"},
        {**CALL, "kind": "input", "answer": "value", "value": ""},
    ],
)
def test_answers_that_fit_their_kind_pass(answer: dict[str, Any]) -> None:
    assert _answer_problem(answer) == ""


@pytest.mark.parametrize(
    ("answer", "where"),
    [
        ({"kind": "approve", "answer": "choice", "choice": "once"}, "/answer/tool_use_id"),
        ({**CALL, "kind": "vote", "answer": "choice", "choice": "once"}, "/answer/kind"),
        ({**CALL, "kind": "approve", "answer": "value", "value": "once"}, "/answer/answer"),
        ({**CALL, "kind": "approve", "answer": "choice"}, "/answer/choice"),
        ({**CALL, "kind": "approve", "answer": "choice", "choice": "maybe"}, "/answer/choice"),
        ({**CALL, "kind": "confirm", "answer": "confirmed", "confirmed": "yes"}, "/answer/confirmed"),
        ({**CALL, "kind": "select", "answer": "value", "value": 1}, "/answer/value"),
    ],
)
def test_an_answer_that_does_not_fit_names_the_field(answer: dict[str, Any], where: str) -> None:
    assert f"at '{where}'" in _answer_problem(answer)
