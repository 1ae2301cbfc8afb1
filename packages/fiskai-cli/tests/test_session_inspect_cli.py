"""`fiskai session stats | query | search` on journals written by the file backend."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import anyio
from click.testing import CliRunner

from fiskai_cli._root import cli
from fiskai_runstate import FileJournalStore, Record
from fiskai_runstate.records import AssistantRecord, JsonObject, TerminalRecord, ToolResultRecord
from fiskai_runstate.testing import sample_meta, sample_turn


def _invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    # A failure must be a clean click exit, never a traceback.
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def _journal(directory: Path, run_id: str, *, turns: int, end: bool = False, denied: bool = False) -> None:
    """`turns` turns of one stream_info call each; `denied` adds a turn whose stream_rm the gate refused."""

    async def write() -> None:
        store = FileJournalStore(directory)
        async with await store.create(sample_meta(run_id, prompt=f"look at {run_id}")) as journal:
            for iteration in range(turns):
                for record in sample_turn(
                    run_id, seq=journal.last_seq + 1, iteration=iteration, output=f"o{iteration}"
                ):
                    await journal.append(record)
            if denied:
                message: JsonObject = {
                    "role": "assistant",
                    "content": [{"tool_use": {"id": "rm1", "name": "stream_rm", "input": {"stream": "ORDERS"}}}],
                }
                turn = AssistantRecord(iteration=turns, message=message, stop_reason="tool_use", in_tokens=1200)
                await journal.append(Record(seq=journal.last_seq + 1, payload=turn))
                result: JsonObject = {"tool_use_id": "rm1", "content": "not confirmed", "is_error": True}
                gate: JsonObject = {"allowed": False, "channel": "no_terminal", "digest": "d"}
                await journal.append(
                    Record(
                        seq=journal.last_seq + 1, payload=ToolResultRecord(tool_use_id="rm1", result=result, gate=gate)
                    )
                )
            if end:
                await journal.append(Record(seq=journal.last_seq + 1, payload=TerminalRecord(reason="completed")))

    anyio.run(write)


def test_stats_prints_the_summary_and_tables_and_json_keys(tmp_path: Path) -> None:
    _journal(tmp_path, "r1", turns=2, denied=True)
    code, out, _ = _invoke("session", "--state-dir", str(tmp_path), "stats", "r1")
    assert code == 0, out
    assert out.startswith("Session r1\n")
    assert "Status      open" in out and "Iterations  3 of 50 per turn" in out
    tools = out.split("\nTools\n", 1)[1].splitlines()
    assert tools[0].split() == ["TOOL", "KIND", "CALLS", "DISPATCHED", "NOT", "RUN", "UNANSWERED", "ERRORS", "TIME"]
    assert tools[1].split() == ["stream_info", "application", "2", "2", "0", "0", "0", "-"]
    assert tools[2].split() == ["stream_rm", "unknown", "1", "0", "1", "0", "1", "-"]
    code, out, _ = _invoke("session", "--state-dir", str(tmp_path), "stats", "r1", "--format", "json")
    document = json.loads(out)
    assert document["run_id"] == "r1" and document["terminal"] is None and document["iterations"] == 3
    assert document["tokens"]["in_tokens"] == 2 * 1200 + 1200
    assert [r["iteration"] for r in document["responses"]] == [0, 1, 2]
    assert {t["tool"]: t["undispatched"] for t in document["tools"]} == {"stream_info": 0, "stream_rm": 1}
    assert json.loads(_invoke("session", "--state-dir", str(tmp_path), "stats", "r1", "--json")[1]) == document


def test_query_filters_and_says_when_nothing_matched(tmp_path: Path) -> None:
    _journal(tmp_path, "q", turns=3, denied=True)
    base = ("session", "--state-dir", str(tmp_path), "query", "q")
    code, out, _ = _invoke(*base, "--iteration", "1")
    assert code == 0 and out.splitlines() == [
        "iteration 1  stream_info  toolu_1",
        '  input   {"stream":"ORDERS","iteration":1}',
        '  answer  result: {"exit_code":0,"output":"o1"}',
    ]
    code, out, _ = _invoke(*base, "--errors", "--format", "json")
    document = json.loads(out)
    assert document["run_id"] == "q"
    assert [(c["tool"], c["answer"]["kind"], c["answer"]["dispatched"]) for c in document["calls"]] == [
        ("stream_rm", "denied", False)
    ]
    code, out, _ = _invoke(*base, "--tool", "stream_info", "--tool", "stream_rm", "--output-match", "o[02]", "--json")
    assert [c["tool_use_id"] for c in json.loads(out)["calls"]] == ["toolu_0", "toolu_2"]
    code, out, _ = _invoke(*base, "--tool", "nothing_like_it")
    assert (code, out) == (0, "No matching calls\n")


def test_search_filters_newest_first_and_reports_identity_exclusions(tmp_path: Path) -> None:
    _journal(tmp_path, "old", turns=1, end=True)
    _journal(tmp_path, "new", turns=1)
    base = ("session", "--state-dir", str(tmp_path), "search")
    code, out, _ = _invoke(*base, "--format", "json")
    assert code == 0
    document = json.loads(out)
    assert sorted(r["run_id"] for r in document["runs"]) == ["new", "old"] and document["no_agent_excluded"] == 0
    code, out, _ = _invoke(*base, "--status", "completed")
    assert out.splitlines()[0].split() == ["ID", "AGENT", "CALLER", "MODEL", "STATUS", "CREATED", "UPDATED", "PROMPT"]
    assert [line.split()[0] for line in out.splitlines()[1:]] == ["old"]
    code, out, _ = _invoke(*base, "--match", "look at n")
    assert [line.split()[0] for line in out.splitlines()[1:]] == ["new"]
    # The sample journals were created on 2026-07-24.
    assert _invoke(*base, "--since", "2026-07-25")[1] == "No sessions matched\n"
    assert "new" in _invoke(*base, "--until", "2026-07-25T00:00:00Z")[1]
    code, out, err = _invoke(*base, "--identity", "ops")
    assert out == "No sessions matched\n" and "2 session(s) name no agent identity" in err


def test_clear_errors_for_an_unknown_id_a_damaged_journal_and_bad_flags(tmp_path: Path) -> None:
    _journal(tmp_path, "ok", turns=1)
    base = ("session", "--state-dir", str(tmp_path))
    code, _, err = _invoke(*base, "stats", "missing")
    assert code == 1 and "'missing'" in err and "fiskai session list" in err
    (tmp_path / "bad.json").write_bytes(b'{"seq":1,"protocol":"nonsense"}\n')
    code, _, err = _invoke(*base, "query", "bad")
    assert code == 1 and err.startswith("Error: ") and "bad" in err and "Traceback" not in err
    code, _, err = _invoke(*base, "query", "ok", "--calls-only", "--results-only")
    assert code == 2 and "exclude each other" in err
    code, _, err = _invoke(*base, "query", "ok", "--input-match", "(")
    assert code == 2 and "not a regular expression" in err
    code, _, err = _invoke(*base, "search", "--since", "yesterday")
    assert code == 2 and "is not a duration" in err


def test_reading_never_writes_or_locks_the_journal(tmp_path: Path) -> None:
    _journal(tmp_path, "live", turns=2)
    path = tmp_path / "live.json"
    before = (path.read_bytes(), os.stat(path).st_mtime_ns, sorted(p.name for p in tmp_path.iterdir()))
    for command in (("stats", "live"), ("query", "live"), ("search",)):
        assert _invoke("session", "--state-dir", str(tmp_path), *command)[0] == 0
    assert (path.read_bytes(), os.stat(path).st_mtime_ns, sorted(p.name for p in tmp_path.iterdir())) == before


_WRITER = """
import pathlib, sys, anyio
from fiskai_runstate import FileJournalStore
from fiskai_runstate.testing import sample_meta, sample_turn

async def main(directory, turns):
    store = FileJournalStore(pathlib.Path(directory))
    async with await store.create(sample_meta("live")) as journal:
        print("ready", flush=True)
        for iteration in range(turns):
            for record in sample_turn("live", seq=journal.last_seq + 1, iteration=iteration):
                await journal.append(record)

anyio.run(main, sys.argv[1], int(sys.argv[2]))
"""


def test_stats_and_query_on_a_run_another_process_is_writing(tmp_path: Path) -> None:
    turns = 120
    base = ("session", "--state-dir", str(tmp_path))
    iterations: list[int] = []
    command = [sys.executable, "-c", _WRITER, str(tmp_path), str(turns)]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as writer:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "ready"
        deadline = time.monotonic() + 60
        while writer.poll() is None and time.monotonic() < deadline:
            code, out, err = _invoke(*base, "stats", "live", "--json")
            assert code == 0, err
            stats = json.loads(out)
            code, out, err = _invoke(*base, "query", "live", "--json")
            assert code == 0, err
            assert len(json.loads(out)["calls"]) >= stats["iterations"]  # the query read later, never less
            iterations.append(stats["iterations"])
        assert writer.wait(timeout=60) == 0  # the writer held its lock and was never refused
    assert iterations == sorted(iterations) and len(set(iterations)) > 2, iterations
    final = json.loads(_invoke(*base, "stats", "live", "--json")[1])
    assert (final["iterations"], final["tools"][0]["calls"], final["tools"][0]["unanswered"]) == (turns, turns, 0)
