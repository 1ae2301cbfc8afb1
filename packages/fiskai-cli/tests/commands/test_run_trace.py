"""The --trace and --http-debug writers: line shapes, private files, and write failures reported once."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from fiskai_agent import RunStats
from fiskai_agent.llm import HttpExchange
from fiskai_cli.commands.run_trace import HttpDebugDump, Observers, TraceFile, open_exclusive


def _exchange(**changes: object) -> HttpExchange:
    fields: dict[str, object] = {
        "iteration": 2,
        "attempt": 0,
        "method": "POST",
        "url": "http://127.0.0.1:9/v1/messages",
        "request_body": b'{"model":"m"}',
        "status": 200,
        "response_body": b'{"id":"msg_1"}',
        "duration_ms": 12.3456,
    }
    fields.update(changes)
    return HttpExchange(**fields)  # pyright: ignore[reportArgumentType]


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_trace_lines_in_order_with_empty_fields_omitted(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    errors: list[str] = []
    trace = TraceFile(path, open_exclusive(path), errors.append)
    trace.session(model="m", config="agent.yaml", version="0.1.0")
    trace.exchange(_exchange())
    trace.exchange(_exchange(attempt=1, status=None, response_body=None, error="timed out"))
    trace.exchange(_exchange(attempt=2, response_body=None))
    trace.exchange(_exchange(attempt=3, request_body=b"not json"))
    trace.summary(RunStats(model="m", llm_calls=1, tool_calls=2, input_tokens=10, output_tokens=3))
    trace.close()

    lines = _lines(path)
    assert [line["type"] for line in lines] == [
        "session",
        "request",
        "response",
        "request",
        "error",
        "request",
        "response",
        "request",
        "response",
        "summary",
    ]
    assert all(isinstance(line["time"], str) and str(line["time"]).endswith("Z") for line in lines)
    first_request, first_response = lines[1], lines[2]
    assert first_request["id"] == first_response["id"] == 1
    assert "attempt" not in first_request
    assert first_request["iter"] == 2
    assert first_request["body"] == {"model": "m"}
    assert first_response["status"] == "200 OK"
    assert first_response["status_code"] == 200
    assert first_response["body"] == {"id": "msg_1"}
    assert lines[4] == {**lines[4], "id": 2, "attempt": 1, "error": "timed out"}
    assert lines[6]["body_unavailable"] is True
    assert lines[7]["body"] == "not json"
    summary = lines[-1]
    assert (summary["llm_calls"], summary["tool_calls"], summary["input_tokens"]) == (1, 2, 10)
    assert "session" not in summary
    assert errors == []
    assert path.stat().st_mode & 0o777 == 0o600


def test_a_trace_never_overwrites_an_existing_file(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("precious\n", encoding="utf-8")
    with pytest.raises(FileExistsError):
        open_exclusive(path)
    assert path.read_text(encoding="utf-8") == "precious\n"


def test_http_debug_replaces_an_old_dump_and_pretty_prints_bodies(tmp_path: Path) -> None:
    path = tmp_path / "http.log"
    path.write_text("old\n", encoding="utf-8")
    dump = HttpDebugDump(path, open_exclusive(path, replace=True), lambda _: None)
    Observers(dump).exchange(_exchange())
    Observers(dump).exchange(_exchange(status=529, response_body=b'{"type":"error"}'))
    dump.close()

    content = path.read_text(encoding="utf-8")
    assert "old" not in content
    assert '=== HTTP request: POST http://127.0.0.1:9/v1/messages ===\n{\n  "model": "m"\n}' in content
    assert "=== HTTP response: 200 OK ===" in content
    assert "=== HTTP response: 529 ===" in content


def test_a_write_failure_is_reported_once_and_later_entries_dropped(tmp_path: Path) -> None:
    errors: list[str] = []
    full = os.open("/dev/full", os.O_WRONLY)
    trace = TraceFile(tmp_path / "t.jsonl", full, errors.append)
    trace.exchange(_exchange())
    trace.exchange(_exchange())
    trace.close()

    assert len(errors) == 1
    assert "later entries are dropped" in errors[0]
