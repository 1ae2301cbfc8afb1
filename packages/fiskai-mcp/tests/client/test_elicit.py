"""A server's elicitation relayed to the operator's prompter: declined without a terminal, asked otherwise."""

import mcp_types as types
import pytest

from fiskai_core.prompter import DenyPrompter
from fiskai_core.testing import ScriptedPrompter
from fiskai_mcp.client._elicit import elicitation_relay

pytestmark = pytest.mark.anyio

FORM = types.ElicitRequestFormParams(
    message="Who are you?",
    requested_schema={
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": "Name"},
            "age": {"type": "integer", "title": "Age"},
            "color": {"type": "string", "enum": ["red", "blue"], "title": "Color"},
            "agree": {"type": "boolean", "title": "Agree"},
        },
    },
)


async def test_without_a_terminal_every_elicitation_is_declined() -> None:
    relay = elicitation_relay(DenyPrompter(), "docs")
    result = await relay(None, FORM)  # type: ignore[arg-type]
    assert isinstance(result, types.ElicitResult)
    assert result.action == "decline"


async def test_each_field_is_asked_in_turn_naming_the_server() -> None:
    prompter = ScriptedPrompter.of(True, "Ada", "36", 1, False)
    result = await elicitation_relay(prompter, "docs")(None, FORM)  # type: ignore[arg-type]
    assert isinstance(result, types.ElicitResult)
    assert (result.action, result.content) == ("accept", {"name": "Ada", "age": 36, "color": "blue", "agree": False})
    assert str(prompter.asked[0]).startswith('MCP server "docs" asks: Who are you?')


async def test_a_single_yes_no_field_is_one_question_and_no_is_an_answer() -> None:
    approval = types.ElicitRequestFormParams(
        message="Run drain?",
        requested_schema={"type": "object", "properties": {"approve": {"type": "boolean", "title": "Approve"}}},
    )
    prompter = ScriptedPrompter.of(False)
    result = await elicitation_relay(prompter, "peer")(None, approval)  # type: ignore[arg-type]
    assert isinstance(result, types.ElicitResult)
    assert (result.action, result.content) == ("accept", {"approve": False})
    assert prompter.asked == ['MCP server "peer" asks: Run drain? (Approve)']
