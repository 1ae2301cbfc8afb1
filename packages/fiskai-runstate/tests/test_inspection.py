"""Session inspection over journals written by the file backend, including one a live writer is appending to."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import anyio
import pytest

from fiskai_runstate import FileJournalStore, Record
from fiskai_runstate.inspection import CallFilter, query_calls, session_stats
from fiskai_runstate.records import (
    AssistantRecord,
    JsonObject,
    JsonValue,
    TerminalRecord,
    ToolIntentRecord,
    ToolResultRecord,
    args_digest,
    effect_id,
)
from fiskai_runstate.session_search import SearchFilter, search_sessions
from fiskai_runstate.testing import sample_meta

pytestmark = pytest.mark.anyio

_GATE_DENIED: JsonObject = {"allowed": False, "channel": "no_terminal", "tag": "ai:confirm", "digest": "ab"}


def _use(use_id: str, name: str, arguments: JsonObject) -> JsonValue:
    return {"tool_use": {"id": use_id, "name": name, "input": arguments}}


def _turn(iteration: int, uses: list[JsonValue], *, in_tokens: int, out_tokens: int, cache: int = 0) -> AssistantRecord:
    return AssistantRecord(
        iteration=iteration,
        message={"role": "assistant", "content": [{"text": {"text": "working"}}, *uses]},
        stop_reason="tool_use",
        in_tokens=in_tokens,
        out_tokens=out_tokens,
        cache_read_tokens=cache,
        cache_create_tokens=cache // 2,
    )


def _intent(run_id: str, use_id: str, name: str, arguments: JsonObject, **kw: object) -> ToolIntentRecord:
    return ToolIntentRecord(
        tool_use_id=use_id,
        tool_name=name,
        args_digest=args_digest(arguments),
        effect_id=effect_id(run_id, use_id),
        **kw,  # type: ignore[arg-type]
    )


def _result(use_id: str, content: str, *, error: bool = False, **kw: object) -> ToolResultRecord:
    body: JsonObject = {"tool_use_id": use_id, "content": content}
    if error:
        body["is_error"] = True
    return ToolResultRecord(tool_use_id=use_id, result=body, **kw)  # type: ignore[arg-type]


def _payloads(run_id: str) -> list[object]:
    """Two iterations: a command that ran, a gate denial, a remote call, an erroring builtin, an unknown
    tool, and a last call that never got its result (a crash or a live run)."""
    info: JsonObject = {"stream": "ORDERS"}
    rm: JsonObject = {"stream": "ORDERS", "force": True}
    remote: JsonObject = {"subject": "orders.>"}
    return [
        _turn(0, [_use("u1", "stream_info", info), _use("u2", "stream_rm", rm)], in_tokens=1000, out_tokens=50),
        _intent(run_id, "u1", "stream_info", info, argv=("nats", "stream", "info", "ORDERS")),
        _result("u1", "messages: 42"),
        _result("u2", "stream_rm was not run: no terminal to confirm", gate=_GATE_DENIED),
        _turn(
            1,
            [
                _use("u3", "peer_lookup", remote),
                _use("u4", "read_file", {"path": "../etc"}),
                _use("u5", "nope", {}),
                _use("u6", "stream_info", {"stream": "EVENTS"}),
            ],
            in_tokens=2000,
            out_tokens=70,
            cache=800,
        ),
        _intent(run_id, "u3", "peer_lookup", remote, remote_target="ops/lookup"),
        _result("u3", "found 3", remote=True),
        _intent(run_id, "u4", "read_file", {"path": "../etc"}),
        _result("u4", "path escapes the root", error=True),
        _result("u5", 'unknown tool "nope"', error=True),
        _intent(run_id, "u6", "stream_info", {"stream": "EVENTS"}, argv=("nats", "stream", "info", "EVENTS")),
    ]


async def _write(store: FileJournalStore, run_id: str, *, end: bool = False, model: str = "claude-test") -> None:
    journal = await store.create(sample_meta(run_id, model=model, prompt=f"check {run_id}"))
    async with journal:
        for payload in _payloads(run_id) + ([TerminalRecord(reason="completed")] if end else []):
            await journal.append(Record(seq=journal.last_seq + 1, payload=payload))  # type: ignore[arg-type]


async def test_stats_count_tokens_responses_and_each_tools_outcomes(tmp_path: Path) -> None:
    store = FileJournalStore(tmp_path)
    await _write(store, "r1")
    stats = session_stats(await store.load("r1"), updated=datetime(2026, 7, 24, 10, 5, tzinfo=UTC))
    assert (stats.run_id, stats.model, stats.status, stats.ended, stats.iterations) == (
        "r1",
        "claude-test",
        "open",
        False,
        2,
    )
    assert stats.tokens.total == 1000 + 50 + 2000 + 70 + 800 + 400
    assert [(r.iteration, r.tokens.in_tokens, r.tokens.cache_read_tokens) for r in stats.responses] == [
        (0, 1000, 0),
        (1, 2000, 800),
    ]
    assert stats.wall_clock_seconds == pytest.approx(5 * 60 - 0.123456)
    tools = {t.tool: t for t in stats.tools}
    info = tools["stream_info"]
    assert (info.calls, info.dispatched, info.undispatched, info.unanswered, info.errors) == (2, 2, 0, 1, 0)
    assert info.kinds == ["application"]
    rm = tools["stream_rm"]
    assert (rm.calls, rm.dispatched, rm.undispatched, rm.errors, rm.kinds) == (1, 0, 1, 0, ["unknown"])
    assert tools["peer_lookup"].kinds == ["remote"]
    assert (tools["read_file"].kinds, tools["read_file"].errors) == (["builtin"], 1)
    assert tools["nope"].undispatched == 1
    document = stats.to_json()
    assert list(document) == [
        "run_id",
        "agent",
        "model",
        "created",
        "updated",
        "terminal",
        "ended",
        "iterations",
        "max_iterations",
        "max_tokens",
        "tokens",
        "responses",
        "tools",
    ]
    assert document["tools"][0] == {  # type: ignore[index]
        "tool": "stream_info",
        "kinds": ["application"],
        "calls": 2,
        "dispatched": 2,
        "undispatched": 0,
        "unanswered": 1,
        "errors": 0,
        "duration_ns": 0,
        "timed": 0,
        "untimed": 1,
    }


async def test_a_terminal_record_ends_the_session(tmp_path: Path) -> None:
    store = FileJournalStore(tmp_path)
    await _write(store, "done", end=True)
    stats = session_stats(await store.load("done"))
    assert (stats.status, stats.terminal, stats.ended, stats.wall_clock_seconds) == (
        "completed",
        "completed",
        True,
        None,
    )


async def test_query_filters_by_tool_iteration_errors_answers_and_patterns(tmp_path: Path) -> None:
    store = FileJournalStore(tmp_path)
    await _write(store, "q")
    records = await store.load("q")

    def ids(query: CallFilter) -> list[str]:
        return [c.tool_use_id for c in query_calls(records, query)]

    assert ids(CallFilter()) == ["u1", "u2", "u3", "u4", "u5", "u6"]
    assert ids(CallFilter(tools=frozenset({"stream_info", "nope"}))) == ["u1", "u5", "u6"]
    assert ids(CallFilter(iteration=0)) == ["u1", "u2"]
    assert ids(CallFilter(errors=True)) == ["u4", "u5"]  # a gate denial is not an error result
    assert ids(CallFilter(calls_only=True)) == ["u6"]
    assert ids(CallFilter(results_only=True, iteration=1)) == ["u3", "u4", "u5"]
    assert ids(CallFilter(input_match=re.compile(r'"force":true'))) == ["u2"]
    assert ids(CallFilter(output_match=re.compile(r"^found \d"))) == ["u3"]
    calls = {c.tool_use_id: c for c in query_calls(records)}
    denied = calls["u2"].answer
    assert denied is not None and (denied.kind, denied.dispatched) == ("denied", False)
    assert calls["u5"].answer is not None and calls["u5"].answer.kind == "refused"
    assert calls["u1"].to_json() == {
        "iteration": 0,
        "tool_use_id": "u1",
        "tool": "stream_info",
        "input": {"stream": "ORDERS"},
        "time": None,
        "answer": {
            "tool_use_id": "u1",
            "result": {"tool_use_id": "u1", "content": "messages: 42", "is_error": False},
            "kind": "result",
            "dispatched": True,
        },
        "answer_time": None,
    }
    assert calls["u6"].to_json()["answer"] is None


async def test_search_filters_and_sorts_newest_first(tmp_path: Path) -> None:
    store = FileJournalStore(tmp_path)
    await _write(store, "a", end=True)
    await _write(store, "b", model="claude-other")
    summaries = await store.list()
    created = {"a": "2026-07-20T10:00:00+00:00", "b": "2026-07-23T10:00:00+00:00"}
    summaries = [dataclasses.replace(s, created=created[s.run_id]) for s in summaries]
    found = search_sessions(summaries, SearchFilter())
    assert [s.run_id for s in found.runs] == ["b", "a"]
    assert [s.run_id for s in search_sessions(summaries, SearchFilter(status="open")).runs] == ["b"]
    assert [s.run_id for s in search_sessions(summaries, SearchFilter(model="claude-test")).runs] == ["a"]
    since = datetime(2026, 7, 22, tzinfo=UTC)
    assert [s.run_id for s in search_sessions(summaries, SearchFilter(since=since)).runs] == ["b"]
    assert [s.run_id for s in search_sessions(summaries, SearchFilter(until=since)).runs] == ["a"]
    assert [s.run_id for s in search_sessions(summaries, SearchFilter(match=re.compile("check a"))).runs] == ["a"]
    by_identity = search_sessions(summaries, SearchFilter(identity="ops"))
    assert (by_identity.runs, by_identity.no_agent_excluded) == ((), 2)
    document = found.to_json()
    assert list(document) == ["runs", "no_agent_excluded"]
    assert list(document["runs"][0]) == [  # type: ignore[index]
        "run_id",
        "agent",
        "caller",
        "model",
        "status",
        "created",
        "updated",
        "ended",
        "prompt",
    ]


_WRITER = """
import sys, anyio
from fiskai_runstate import FileJournalStore, Record
from fiskai_runstate.testing import sample_meta, sample_turn

async def main(directory, turns):
    store = FileJournalStore(__import__("pathlib").Path(directory))
    async with await store.create(sample_meta("live")) as journal:
        print("ready", flush=True)
        for iteration in range(turns):
            for record in sample_turn("live", seq=journal.last_seq + 1, iteration=iteration):
                await journal.append(record)

anyio.run(main, sys.argv[1], int(sys.argv[2]))
"""


def test_a_journal_being_appended_by_a_live_writer_reads_consistently(tmp_path: Path) -> None:
    """Reads race a separate writer process: never an error, never a torn record, counts only grow, and the
    writer (which holds the run's lock throughout) is never blocked by a reader."""
    turns = 150
    store = FileJournalStore(tmp_path)
    seen: list[int] = []
    command = [sys.executable, "-c", _WRITER, str(tmp_path), str(turns)]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as writer:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "ready"
        deadline = time.monotonic() + 60
        while writer.poll() is None and time.monotonic() < deadline:
            records = anyio.run(store.load, "live")
            stats = session_stats(records)
            calls = query_calls(records)
            # Every complete turn is assistant + intent + result; a read may land between any two of them.
            assert stats.iterations == len(calls) == (len(records) + 1) // 3
            assert sum(t.unanswered for t in stats.tools) <= 1
            seen.append(len(records))
        assert writer.wait(timeout=60) == 0
    assert seen == sorted(seen) and len(set(seen)) > 2, seen  # the reads really overlapped the writes
    final = session_stats(anyio.run(store.load, "live"))
    assert (final.iterations, final.tools[0].calls, final.tools[0].unanswered) == (turns, turns, 0)


async def test_a_torn_last_line_is_left_out_and_the_file_is_not_changed(tmp_path: Path) -> None:
    store = FileJournalStore(tmp_path)
    await _write(store, "torn")
    path = store.journal_path("torn")
    with path.open("ab") as out:
        out.write(b'{"seq":13,"protocol":"io.choria.fisk-ai.v1.session.terminal","ver')  # a write in progress
    before = path.read_bytes()
    stats = session_stats(await store.load("torn"))
    assert (stats.status, stats.iterations) == ("open", 2)
    assert path.read_bytes() == before


async def _write_timed(store: FileJournalStore, run_id: str, *, agent: str, caller: str = "") -> None:
    """The same calls, each record stamped 2 s after the one before it (schema version 6)."""
    meta = dataclasses.replace(
        sample_meta(run_id, prompt=f"check {run_id}"), created="2026-07-24T10:00:00+00:00", agent=agent, caller=caller
    )
    journal = await store.create(meta)
    async with journal:
        for number, payload in enumerate(_payloads(run_id), start=1):
            stamp = f"2026-07-24T10:00:{2 * number:02d}.000+00:00"
            await journal.append(Record(seq=journal.last_seq + 1, payload=payload, time=stamp))  # type: ignore[arg-type]


async def test_record_times_fill_the_time_columns_and_agent_and_caller_are_read(tmp_path: Path) -> None:
    store = FileJournalStore(tmp_path)
    await _write_timed(store, "timed", agent="ops", caller="alice")
    records = await store.load("timed")
    assert records[1].time == "2026-07-24T10:00:02.000+00:00"

    stats = session_stats(records)
    assert (stats.agent, stats.caller) == ("ops", "alice")
    assert [r.time for r in stats.responses] == ["2026-07-24T10:00:02.000+00:00", "2026-07-24T10:00:10.000+00:00"]
    # The last record (u6's intent, the 11th) is the session's last write: 22 s after creation.
    assert stats.wall_clock_seconds == pytest.approx(22)
    tools = {t.tool: t for t in stats.tools}
    # u1's result came 2 s after its intent; u6 has no result yet, so it is neither timed nor untimed.
    info = tools["stream_info"]
    assert (info.timed, info.untimed, info.duration_ns) == (1, 0, 2_000_000_000)
    assert (tools["stream_rm"].timed, tools["stream_rm"].duration_ns) == (1, 2_000_000_000)

    calls = {c.tool_use_id: c for c in query_calls(records)}
    assert (calls["u1"].time, calls["u1"].answer_time) == (
        "2026-07-24T10:00:02.000+00:00",
        "2026-07-24T10:00:06.000+00:00",
    )
    assert (calls["u6"].time, calls["u6"].answer_time) == ("2026-07-24T10:00:10.000+00:00", None)


async def test_search_matches_identity_and_caller_and_counts_sessions_that_name_no_agent(tmp_path: Path) -> None:
    store = FileJournalStore(tmp_path)
    await _write_timed(store, "served", agent="ops", caller="alice")
    await _write_timed(store, "local", agent="ops")
    await _write_timed(store, "other", agent="billing", caller="alice")
    await _write(store, "old")  # written before the meta record named an agent
    summaries = await store.list()

    def ids(query: SearchFilter) -> tuple[list[str], int]:
        found = search_sessions(summaries, query)
        return sorted(s.run_id for s in found.runs), found.no_agent_excluded

    assert ids(SearchFilter(identity="ops")) == (["local", "served"], 1)
    assert ids(SearchFilter(caller="alice")) == (["other", "served"], 1)
    assert ids(SearchFilter(identity="ops", caller="alice")) == (["served"], 1)
    assert ids(SearchFilter(identity="nobody")) == ([], 1)
    assert ids(SearchFilter()) == (["local", "old", "other", "served"], 0)
    runs = search_sessions(summaries, SearchFilter(caller="alice", identity="ops")).to_json()["runs"]
    assert [(r["agent"], r["caller"]) for r in runs] == [("ops", "alice")]  # type: ignore[index]
