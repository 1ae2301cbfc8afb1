"""The web channel's pieces without a server: answers, AG-UI resume entries, the question prompter, pings."""

from __future__ import annotations

import math

import anyio
import pytest

from fiskai_agent import RunControl
from fiskai_cli.serve.web._agui import parse_request as agui_request
from fiskai_cli.serve.web._ids import session_for, thread_of, valid_thread
from fiskai_cli.serve.web._questions import Answer, AnswerError, WebPrompter, parse_answer
from fiskai_cli.serve.web._turns import Admission, TurnEvent, relay
from fiskai_cli.serve.web._vercel import parse_request as vercel_request
from fiskai_core.prompter import ConfirmChoice, GateRequest, PromptDeclined

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("yes", "must be an object"),
        ({"kind": "approval", "approval": "once"}, "toolUseId"),
        ({"toolUseId": "t", "kind": "approval", "approval": "always"}, "once, conversation or decline"),
        ({"toolUseId": "t", "kind": "confirm", "confirmed": "yes"}, "true or false"),
        ({"toolUseId": "t", "kind": "select", "index": True}, "index"),
        ({"toolUseId": "t", "kind": "input", "value": 3}, "text, or null"),
        ({"toolUseId": "t", "kind": "vote"}, "approval, confirm, select or input"),
    ],
)
def test_bad_answers_name_the_field(raw: object, message: str) -> None:
    with pytest.raises(AnswerError, match=message):
        parse_answer(raw)


def test_agui_resume_entries() -> None:
    resolved = agui_request(
        {"threadId": "t", "resume": [{"interruptId": "select:toolu_1", "status": "resolved", "payload": {"index": 2}}]}
    )
    assert resolved.answer == Answer(tool_use_id="toolu_1", kind="select", index=2)
    cancelled = agui_request({"threadId": "t", "resume": [{"interruptId": "approval:toolu_2", "status": "cancelled"}]})
    assert cancelled.answer == Answer(tool_use_id="toolu_2", kind="approval", approval="decline")
    for bad in ({"interruptId": "toolu_1", "status": "resolved"}, {"interruptId": "input:x", "status": "maybe"}):
        with pytest.raises(ValueError, match=r"resume\[0\]"):
            agui_request({"threadId": "t", "resume": [bad]})
    assert agui_request({"threadId": "t", "messages": [{"role": "user", "content": "hi"}]}).text == "hi"


def test_vercel_reads_only_the_last_user_message() -> None:
    asked = vercel_request(
        {
            "id": "c1",
            "messages": [
                {"role": "user", "parts": [{"type": "text", "text": "old"}]},
                {"role": "assistant", "parts": [{"type": "text", "text": "reply"}]},
                {"role": "user", "parts": [{"type": "text", "text": "new"}, {"type": "file", "url": "x"}]},
            ],
        }
    )
    assert (asked.thread, asked.text, asked.answer) == ("c1", "new", None)
    with pytest.raises(ValueError, match="user's"):
        vercel_request({"id": "c1", "messages": [{"role": "assistant", "parts": []}]})


def test_session_ids_are_derived_and_reversible() -> None:
    session = session_for("ops", "chat-1")
    assert session.startswith("w-") and session.endswith("-chat-1")
    assert thread_of("ops", session) == "chat-1"
    assert thread_of("other", session) is None, "another agent's conversations are not this one's"
    assert thread_of("ops", "t-abc") is None
    assert not valid_thread("../x") and not valid_thread("x" * 65) and valid_thread("A_b-9")


async def test_the_prompter_answers_its_call_and_asks_about_any_other() -> None:
    async def locate() -> tuple[str, str]:
        return ("toolu_1", "drain")

    request = GateRequest(command="drain", display="app node drain n3", tag="ai:confirm")
    given = WebPrompter(
        control=RunControl(),
        locate=locate,
        answer=Answer(tool_use_id="toolu_1", kind="approval", approval="conversation"),
    )
    assert await given.approve_command(request) is ConfirmChoice.ALWAYS
    control = RunControl()
    other = WebPrompter(control=control, locate=locate, answer=Answer(tool_use_id="toolu_9", kind="approval"))
    with anyio.CancelScope() as scope:
        control._attach(scope)  # stands in for the run attaching its scope
        await other.approve_command(request)
    assert control.aborted and other.asked is not None
    assert other.asked.wire() == {
        "toolUseId": "toolu_1",
        "kind": "approval",
        "tool": "drain",
        "text": "app node drain n3",
        "tag": "ai:confirm",
        "choices": ["once", "conversation", "decline"],
    }
    empty = WebPrompter(control=RunControl(), locate=locate, answer=Answer(tool_use_id="toolu_1", kind="input"))
    with pytest.raises(PromptDeclined):
        await empty.ask_input("Name?", "n1")


async def test_a_quiet_turn_is_pinged() -> None:
    send, receive = anyio.create_memory_object_stream[TurnEvent](math.inf)
    seen: list[str] = []

    async def late_end() -> None:
        await anyio.sleep(0.25)
        await send.send(("end", {"reason": "completed"}))
        send.close()

    async with anyio.create_task_group() as group:
        group.start_soon(late_end)
        async for kind, _ in relay(Admission(session="s", run_id="", events=receive), ping=0.05):
            seen.append(kind)
    assert seen[-1] == "end" and seen.count("ping") >= 2
