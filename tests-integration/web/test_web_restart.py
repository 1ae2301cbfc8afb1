"""A question waiting when the worker restarts: recovered from the journal, not lost.

The question lives in the worker's memory while it runs; after a restart the journal still holds the
call the question was about (unanswered), and the resume path asks it again. The session list shows the
conversation `waiting`, a GET replays the question with its text, and the answer on the next POST runs
the call.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from fiskai_agent.testing import MessagesServer, Turn, text, tool_use

from .conftest import WebWorker


def _say(thread: str, words: str) -> dict[str, Any]:
    message = {"id": "m1", "role": "user", "parts": [{"type": "text", "text": words}]}
    return {"id": thread, "messages": [message], "trigger": "submit-message"}


def _question(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    return next(chunk for chunk in chunks if chunk["type"] == "data-fisk-question")["data"]


def test_approval_survives_a_restart(web_worker: Callable[..., WebWorker], ui_stream_conformance: Any) -> None:
    script = [
        Turn([tool_use("cluster_node_drain", {"node": "n3", "reason": "disk"}, id="toolu_drain")]),
        Turn([text("Drained n3.")]),
    ]
    with MessagesServer(script) as model:
        first = web_worker(model)
        _, payloads = first.events("/vercel", _say("chat-r", "drain n3"))
        asked = _question(ui_stream_conformance(payloads))
        assert first.stop() == 0

        worker = web_worker(model)
        listed = worker.client.get("/sessions").json()["sessions"]
        assert [(row["id"], row["status"]) for row in listed] == [("chat-r", "waiting")]
        assert listed[0]["question"] == asked, "the same question, with its text"
        read = worker.client.get("/vercel/sessions/chat-r").json()
        assert read["question"] == asked and "n3" in read["question"]["text"]
        agui = worker.client.get("/agui/sessions/chat-r").json()
        assert agui["interrupt"]["id"] == "approval:toolu_drain" and agui["interrupt"]["message"] == asked["text"]
        refused = worker.post("/vercel", _say("chat-r", "hello?"))
        assert refused.status_code == 409 and refused.json()["code"] == "question_waiting"
        assert len(model.requests) == 1, "recovering the question called no model"

        answer = {"toolUseId": "toolu_drain", "kind": "approval", "approval": "once"}
        _, payloads = worker.events("/vercel", {"id": "chat-r", "messages": [], "fiskAnswer": answer})
        chunks = ui_stream_conformance(payloads)
        output = next(chunk for chunk in chunks if chunk["type"] == "tool-output-available")
        assert output["toolCallId"] == "toolu_drain" and "[n3]" in output["output"]
        assert chunks[-1]["finishReason"] == "stop"
        ran = [
            dict(r) for request in model.requests for r in request.tool_results() if r["tool_use_id"] == "toolu_drain"
        ]
        assert len(ran) == 1 and "[drain]" in json.dumps(ran[0]["content"]), "the command ran once, after the answer"
        listed = worker.client.get("/sessions").json()["sessions"]
        assert listed[0]["status"] not in ("waiting", "error") and listed[0]["question"] is None
        worker.stop()


def test_ask_human_input_survives_a_restart(web_worker: Callable[..., WebWorker], ui_stream_conformance: Any) -> None:
    ask = {"question": "Why drain it?", "default": "disk"}
    script = [Turn([tool_use("ask_human_input", ask, id="toolu_ask")]), Turn([text("Noted.")])]
    with MessagesServer(script) as model:
        first = web_worker(model)
        _, payloads = first.events("/vercel", _say("chat-i", "drain n3"))
        asked = _question(ui_stream_conformance(payloads))
        assert asked["kind"] == "input" and asked["text"] == "Why drain it?"
        assert first.stop() == 0

        worker = web_worker(model)
        read = worker.client.get("/vercel/sessions/chat-i").json()
        assert read["question"] == asked
        answer = {"toolUseId": "toolu_ask", "kind": "input", "value": "a failing disk"}
        _, payloads = worker.events("/vercel", {"id": "chat-i", "messages": [], "fiskAnswer": answer})
        ui_stream_conformance(payloads)
        answered = [dict(r) for request in model.requests for r in request.tool_results()]
        assert [r["tool_use_id"] for r in answered] == ["toolu_ask"]
        assert "a failing disk" in json.dumps(answered[0]["content"])
        worker.stop()
