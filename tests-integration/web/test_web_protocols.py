"""The web channel's two protocols on a real `fiskai serve`: the AI SDK UI message stream (checked by a
conformance check written from its documentation) and AG-UI (each event validated by the protocol's own
models); questions end the turn and the answer rides the next POST."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from fiskai_agent.testing import MessagesServer, Turn, text, tool_use

from .conftest import WebWorker


def _say(thread: str, words: str, **extra: Any) -> dict[str, Any]:
    message = {"id": "m1", "role": "user", "parts": [{"type": "text", "text": words}]}
    return {"id": thread, "messages": [message], "trigger": "submit-message", **extra}


def _tool_results(model: MessagesServer) -> list[dict[str, Any]]:
    return [dict(result) for request in model.requests for result in request.tool_results()]


def test_ai_sdk_stream_conforms(web_worker: Callable[..., WebWorker], ui_stream_conformance: Any) -> None:
    script = [
        Turn([text("Looking."), tool_use("cluster_node_list", {}, id="toolu_list")]),
        Turn([text("There are three nodes.")]),
    ]
    with MessagesServer(script) as model:
        worker = web_worker(model)
        response, payloads = worker.events("/vercel", _say("chat1", "list the nodes"))
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.headers["x-vercel-ai-ui-message-stream"] == "v1"
        assert response.headers["cache-control"] == "no-cache"
        assert response.headers["x-accel-buffering"] == "no"
        chunks = ui_stream_conformance(payloads)
        kinds = [chunk["type"] for chunk in chunks]
        assert kinds.count("start-step") == 2, kinds
        call = next(chunk for chunk in chunks if chunk["type"] == "tool-input-available")
        assert call["toolCallId"] == "toolu_list" and call["toolName"] == "cluster_node_list"
        assert "cluster" in call["title"], "the command line rides as the call's title"
        output = next(chunk for chunk in chunks if chunk["type"] == "tool-output-available")
        assert "[node]" in output["output"] and "[list]" in output["output"]
        said = "".join(chunk["delta"] for chunk in chunks if chunk["type"] == "text-delta")
        assert said == "Looking.There are three nodes."
        assert chunks[-1]["finishReason"] == "stop"
        # The journal is the conversation: read back as UI messages.
        read = worker.client.get("/vercel/sessions/chat1").json()
        roles = [message["role"] for message in read["messages"]]
        assert roles == ["user", "assistant"]
        parts = read["messages"][1]["parts"]
        assert any(part["type"] == "dynamic-tool" and part["state"] == "output-available" for part in parts)
        worker.stop()


def test_conformance_check_can_fail(ui_stream_conformance: Any) -> None:
    good = [{"type": "start"}, {"type": "text-start", "id": "a"}, {"type": "text-end", "id": "a"}, {"type": "finish"}]
    ui_stream_conformance([*good, "[DONE]"])
    for broken in (
        good,  # no [DONE]
        [good[0], {"type": "text-delta", "id": "a", "delta": "x"}, good[3], "[DONE]"],  # delta before start
        [good[0], {"type": "tool-output-available", "toolCallId": "c", "output": 1}, good[3], "[DONE]"],
        [good[0], {"type": "text-start", "id": "a", "extra": 1}, good[2], good[3], "[DONE]"],  # strict keys
        [good[0], {"type": "tool-call", "toolCallId": "c"}, good[3], "[DONE]"],  # not a UI stream part
    ):
        with pytest.raises(AssertionError):
            ui_stream_conformance(broken)


def test_approval_answered_on_the_next_post_runs_the_command(
    web_worker: Callable[..., WebWorker], ui_stream_conformance: Any
) -> None:
    script = [
        Turn([tool_use("cluster_node_drain", {"node": "n3", "reason": "disk"}, id="toolu_drain")]),
        Turn([text("Drained n3.")]),
    ]
    with MessagesServer(script) as model:
        worker = web_worker(model)
        _, payloads = worker.events("/vercel", _say("chat2", "drain n3"))
        chunks = ui_stream_conformance(payloads)
        question = next(chunk for chunk in chunks if chunk["type"] == "data-fisk-question")
        asked = question["data"]
        assert asked["kind"] == "approval" and asked["toolUseId"] == "toolu_drain"
        assert "n3" in asked["text"] and asked["choices"] == ["once", "conversation", "decline"]
        assert chunks[-1]["finishReason"] == "other"
        assert not any(chunk["type"] == "tool-output-available" for chunk in chunks), "nothing ran yet"
        listed = worker.client.get("/sessions").json()["sessions"]
        assert [(row["id"], row["status"]) for row in listed] == [("chat2", "waiting")]
        # A new message while the question waits is refused: the answer must come first.
        assert worker.post("/vercel", _say("chat2", "hello?")).status_code == 409

        wrong = {"toolUseId": "toolu_other", "kind": "approval", "approval": "once"}
        assert worker.post("/vercel", {"id": "chat2", "messages": [], "fiskAnswer": wrong}).status_code == 409
        nowhere = worker.post("/vercel", {"id": "nochat", "messages": [], "fiskAnswer": wrong})
        assert nowhere.status_code == 404
        answer = {"toolUseId": "toolu_drain", "kind": "approval", "approval": "once"}
        _, payloads = worker.events("/vercel", {"id": "chat2", "messages": [], "fiskAnswer": answer})
        chunks = ui_stream_conformance(payloads)
        output = next(chunk for chunk in chunks if chunk["type"] == "tool-output-available")
        assert output["toolCallId"] == "toolu_drain" and "[n3]" in output["output"]
        assert chunks[-1]["finishReason"] == "stop"
        again = worker.post("/vercel", {"id": "chat2", "messages": [], "fiskAnswer": answer})
        assert again.status_code == 409 and again.json()["code"] == "unknown_call", "answered already"
        ran = [result for result in _tool_results(model) if result["tool_use_id"] == "toolu_drain"]
        assert ran and "[drain]" in str(ran[0]["content"]), "the model got the command's output"
        worker.stop()


def test_declined_approval_tells_the_model(web_worker: Callable[..., WebWorker], ui_stream_conformance: Any) -> None:
    script = [
        Turn([tool_use("cluster_node_drain", {"node": "n3", "reason": "disk"}, id="toolu_drain")]),
        Turn([text("Not drained.")]),
    ]
    with MessagesServer(script) as model:
        worker = web_worker(model)
        worker.events("/vercel", _say("chat3", "drain n3"))
        answer = {"toolUseId": "toolu_drain", "kind": "approval", "approval": "decline"}
        _, payloads = worker.events("/vercel", {"id": "chat3", "messages": [], "fiskAnswer": answer})
        chunks = ui_stream_conformance(payloads)
        assert not any(chunk["type"].startswith("tool-output") for chunk in chunks), "the command never ran"
        refused = [result for result in _tool_results(model) if result["tool_use_id"] == "toolu_drain"]
        assert refused and "[n3]" not in str(refused[0]["content"])
        worker.stop()


def test_ask_human_answered_on_the_next_post(web_worker: Callable[..., WebWorker], ui_stream_conformance: Any) -> None:
    script = [
        Turn([tool_use("ask_human_select", {"question": "Which node?", "options": ["n1", "n2"]}, id="toolu_ask")]),
        Turn([text("You chose.")]),
    ]
    with MessagesServer(script) as model:
        worker = web_worker(model)
        _, payloads = worker.events("/vercel", _say("chat4", "pick a node"))
        chunks = ui_stream_conformance(payloads)
        asked = next(chunk for chunk in chunks if chunk["type"] == "data-fisk-question")["data"]
        assert asked == {
            "toolUseId": "toolu_ask",
            "kind": "select",
            "tool": "ask_human_select",
            "text": "Which node?",
            "options": ["n1", "n2"],
        }
        answer = {"toolUseId": "toolu_ask", "kind": "select", "index": 1}
        _, payloads = worker.events("/vercel", {"id": "chat4", "messages": [], "fiskAnswer": answer})
        ui_stream_conformance(payloads)
        answered = [result for result in _tool_results(model) if result["tool_use_id"] == "toolu_ask"]
        assert answered and '"n2"' in str(answered[0]["content"])
        worker.stop()


def test_agui_events_validate_against_the_protocol_models(web_worker: Callable[..., WebWorker]) -> None:
    core = pytest.importorskip("ag_ui.core", reason="ag-ui-protocol is not installed")
    from pydantic import TypeAdapter

    events = TypeAdapter(core.Event)
    script = [
        Turn([text("Checking."), tool_use("cluster_node_list", {}, id="toolu_list")]),
        Turn([tool_use("cluster_node_drain", {"node": "n3", "reason": "disk"}, id="toolu_drain")]),
        Turn([text("Drained.")]),
    ]
    with MessagesServer(script) as model:
        worker = web_worker(model)
        body = {"threadId": "thread-1", "runId": "run-1", "messages": [{"id": "u1", "role": "user", "content": "go"}]}
        core.RunAgentInput.model_validate(body)  # the request is a valid AG-UI run input too
        response, payloads = worker.events("/agui", body)
        assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
        parsed = [events.validate_python(payload) for payload in payloads]
        kinds = [event.type.value for event in parsed]
        assert kinds[:2] == ["RUN_STARTED", "CUSTOM"] and parsed[1].name == "fisk.capabilities"
        assert "TOOL_CALL_RESULT" in kinds and kinds[-1] == "RUN_FINISHED"
        interrupt = parsed[-1].outcome.interrupts[0]
        assert interrupt.id == "approval:toolu_drain" and interrupt.tool_call_id == "toolu_drain"

        resume = {"interruptId": interrupt.id, "status": "resolved", "payload": {"approval": "once"}}
        body = {"threadId": "thread-1", "runId": "run-2", "messages": [], "resume": [resume]}
        core.RunAgentInput.model_validate(body)
        _, payloads = worker.events("/agui", body)
        parsed = [events.validate_python(payload) for payload in payloads]
        assert parsed[-1].type.value == "RUN_FINISHED" and parsed[-1].outcome.type == "success"
        result = next(event for event in parsed if event.type.value == "TOOL_CALL_RESULT")
        assert result.tool_call_id == "toolu_drain" and "[n3]" in result.content

        history = worker.client.get("/agui/sessions/thread-1").json()
        for message in history["messages"]:
            TypeAdapter(core.Message).validate_python(message)
        assert [m["role"] for m in history["messages"]][:2] == ["user", "assistant"]
        worker.stop()


def test_card_and_sessions(web_worker: Callable[..., WebWorker]) -> None:
    with MessagesServer([Turn([text("One.")]), Turn([text("Two.")])]) as model:
        worker = web_worker(model)
        card = worker.client.get("/card").json()
        assert card["name"] == "web-agent" and card["display_name"] == "Cluster operator"
        assert card["prompts"] == ["List the nodes", "Drain node n3"] and card["icon"] == "🛠"
        assert card["protocols"]["vercel"]["path"] == "/fisk/v1/vercel"
        drain = next(tool for tool in card["tools"] if tool["name"] == "cluster_node_drain")
        assert drain["behavior"]["destructive"] is True and drain["input_schema"]["type"] == "object"
        assert worker.client.get("/").text.startswith("<!doctype html>")
        for thread in ("a1", "a2"):
            assert worker.post("/vercel", _say(thread, f"hello {thread}")).status_code == 200
        page = worker.client.get("/sessions", params={"limit": 1}).json()
        assert [row["id"] for row in page["sessions"]] == ["a2"] and page["next_cursor"]
        rest = worker.client.get("/sessions", params={"limit": 1, "cursor": page["next_cursor"]}).json()
        assert [row["id"] for row in rest["sessions"]] == ["a1"] and rest["next_cursor"] is None
        picked = worker.client.get("/sessions", params=[("id", "a1"), ("id", "zz")]).json()
        assert [row["id"] for row in picked["sessions"]] == ["a1"]
        assert worker.client.get("/sessions", params={"limit": 101}).status_code == 400
        assert worker.client.get("/sessions", params=[("id", f"x{n}") for n in range(51)]).status_code == 400
        assert worker.client.delete("/sessions/a1").status_code == 204
        assert worker.client.get("/vercel/sessions/a1").status_code == 404
        assert worker.client.delete("/sessions/a1").status_code == 404
        assert worker.client.get("/vercel/sessions/bad.id").status_code in (400, 404)
        assert worker.client.put("/card").status_code == 405
        worker.stop()


def test_allow_for_the_conversation_covers_later_turns(
    web_worker: Callable[..., WebWorker], ui_stream_conformance: Any
) -> None:
    script = [
        Turn([tool_use("cluster_node_drain", {"node": "n3", "reason": "disk"}, id="toolu_1")]),
        Turn([text("Drained n3.")]),
        Turn([tool_use("cluster_node_drain", {"node": "n4", "reason": "disk"}, id="toolu_2")]),
        Turn([text("Drained n4.")]),
    ]
    with MessagesServer(script) as model:
        worker = web_worker(model)
        worker.events("/vercel", _say("chat5", "drain n3"))
        answer = {"toolUseId": "toolu_1", "kind": "approval", "approval": "conversation"}
        worker.events("/vercel", {"id": "chat5", "messages": [], "fiskAnswer": answer})
        _, payloads = worker.events("/vercel", _say("chat5", "now n4"))
        chunks = ui_stream_conformance(payloads)
        assert not any(chunk["type"] == "data-fisk-question" for chunk in chunks), "not asked again"
        output = next(chunk for chunk in chunks if chunk["type"] == "tool-output-available")
        assert output["toolCallId"] == "toolu_2" and "[n4]" in output["output"]
        worker.stop()
