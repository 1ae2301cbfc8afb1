import json
import os
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner

from fiskai_cli._root import cli
from fiskai_runstate import FileJournalStore, Record, encode_record
from fiskai_runstate.records import SCHEMA_VERSION, JsonObject, MetaRecord, TerminalRecord, ToolResultRecord, UserRecord
from fiskai_runstate.testing import sample_meta, sample_turn


def _invoke(*args: str, color: bool = False) -> tuple[int, str, str]:
    # color=True prints as to a terminal: click then strips no escape sequence itself.
    result = CliRunner().invoke(cli, list(args), color=color)
    # A failure must be a clean ClickException exit, never an escaped traceback.
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def _journal(directory: Path, run_id: str, *, turns: int, end: str | None = "completed", crash: bool = False) -> None:
    async def write() -> None:
        store = FileJournalStore(directory)
        journal = await store.create(sample_meta(run_id, prompt=f"prompt of {run_id} " + "x" * 80))
        try:
            for iteration in range(turns):
                for record in sample_turn(run_id, seq=journal.last_seq + 1, iteration=iteration):
                    await journal.append(record)
            if crash:
                # An assistant turn and its tool intent are durable, the tool's result is not.
                for record in sample_turn(run_id, seq=journal.last_seq + 1, iteration=turns)[:2]:
                    await journal.append(record)
            if end is not None:
                await journal.append(Record(seq=journal.last_seq + 1, payload=TerminalRecord(reason="completed")))
        finally:
            await journal.aclose()

    anyio.run(write)


def test_list_shows_a_table_sorted_by_update_and_json_for_scripts(tmp_path: Path) -> None:
    _journal(tmp_path, "older", turns=1)
    _journal(tmp_path, "newer", turns=2, end=None)
    os.utime(tmp_path / "older.json", (1_000_000_000, 1_000_000_000))
    code, out, _ = _invoke("session", "--state-dir", str(tmp_path), "list")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["ID", "MODEL", "STATUS", "UPDATED", "PROMPT"]
    assert lines[1].startswith("newer ") and " open " in lines[1]
    assert lines[2].startswith("older ") and " completed " in lines[2]
    assert lines[1].endswith("...")
    code, out, _ = _invoke("session", "--state-dir", str(tmp_path), "ls", "--format", "json")
    assert code == 0
    listed = json.loads(out)
    assert [s["id"] for s in listed] == ["newer", "older"]
    assert listed[0]["status"] == "open"
    assert listed[1]["records"] == 5
    assert listed[0]["model"] == "claude-test"


def test_a_session_a_chat_rotated_to_names_the_one_it_continues(tmp_path: Path) -> None:
    _journal(tmp_path, "first", turns=0, end=None)

    async def rotated() -> None:
        base = sample_meta("second")
        meta = MetaRecord(
            run_id="second", created=base.created, fingerprint=base.fingerprint, prompt="again", previous="first"
        )
        await (await FileJournalStore(tmp_path).create(meta)).aclose()

    anyio.run(rotated)
    code, out, _ = _invoke("session", "--state-dir", str(tmp_path), "list")
    assert code == 0
    rows = {line.split()[0]: line.split() for line in out.splitlines()}
    assert rows["ID"][-1] == "CONTINUES"
    assert (rows["second"][-1], rows["first"][-1]) == ("first", "-")
    code, out, _ = _invoke("session", "--state-dir", str(tmp_path), "list", "--format", "json")
    assert {s["id"]: s["previous"] for s in json.loads(out)} == {"first": None, "second": "first"}
    code, out, _ = _invoke("session", "--state-dir", str(tmp_path), "show", "second")
    assert "Continues" in out and "first (a chat's /clear started this session)" in out


def test_list_without_sessions_says_where_it_looked(tmp_path: Path) -> None:
    code, out, _ = _invoke("session", "--state-dir", str(tmp_path / "none"), "list")
    assert code == 0
    assert out.strip() == (
        f"No checkpointed sessions in {tmp_path / 'none'} (file backend; if your sessions are in a configured "
        "backend, name its configuration: fiskai -c agent.yaml session list)"
    )


def test_default_directory_is_under_xdg_state_home() -> None:
    _journal(Path(os.environ["XDG_STATE_HOME"]) / "fiskai" / "runs", "in-xdg", turns=0)
    code, out, _ = _invoke("session", "list", "--format", "json")
    assert code == 0
    assert [s["id"] for s in json.loads(out)] == ["in-xdg"]


def test_show_summarizes_a_crashed_run_with_its_pending_batch(tmp_path: Path) -> None:
    _journal(tmp_path, "crashed", turns=2, end=None, crash=True)
    code, out, _ = _invoke("session", "--state-dir", str(tmp_path), "show", "crashed")
    assert code == 0
    assert out.startswith("Session crashed\n")
    assert "Status      open" in out
    assert "Next iter   3" in out
    assert "LLM calls   3" in out
    assert "Tool calls  2 (remote 0)" in out
    assert "Tokens      3600 in / 120 out" in out
    assert "Pending     an in-flight tool batch will resume first" in out
    assert "stream_info (toolu_2)" in out
    assert "\nPrompt\n  prompt of crashed" in out
    assert "--- transcript ---" not in out


def test_show_transcript_renders_every_record(tmp_path: Path) -> None:
    _journal(tmp_path, "talk", turns=1)
    code, out, _ = _invoke("session", "--state-dir", str(tmp_path), "view", "talk", "--transcript")
    assert code == 0
    transcript = out.split("\n--- transcript ---\n\n", 1)[1]
    assert transcript.splitlines() == [
        "[1] prompt: prompt of talk " + "x" * 80,
        "[2] assistant, iteration 0, tool_use, 1200 in / 40 out",
        "    checking iteration 0",
        '    -> stream_info {"stream":"ORDERS","iteration":0} (toolu_0)',
        "[3] about to run stream_info (toolu_0): nats stream info -- ORDERS",
        "[4] result for toolu_0:",
        '    {"exit_code":0,"output":"ok"}',
        "[5] ended: completed",
    ]


def test_show_json_has_counters_pending_and_intents(tmp_path: Path) -> None:
    _journal(tmp_path, "crashed", turns=1, end=None, crash=True)
    code, out, _ = _invoke("session", "--state-dir", str(tmp_path), "show", "crashed", "--format", "json")
    assert code == 0
    state = json.loads(out)
    assert state["status"] == "open"
    assert state["counters"]["llm_calls"] == 2
    assert state["pending"] == {"iteration": 1, "answered": [], "unanswered": ["toolu_1"]}
    assert state["intents_without_results"] == [
        {"tool_use_id": "toolu_1", "tool_name": "stream_info", "effect_id": "crashed/toolu_1"}
    ]
    assert state["last_seq"] == 6


def test_show_of_a_missing_run_is_a_clean_error(tmp_path: Path) -> None:
    code, _, err = _invoke("session", "--state-dir", str(tmp_path), "show", "ghost")
    assert code == 1
    assert err.strip() == "Error: run not found: 'ghost'"
    code, _, err = _invoke("session", "--state-dir", str(tmp_path), "show", "../etc/passwd")
    assert code == 1
    assert "invalid run id" in err


def test_show_of_a_damaged_journal_names_the_line_and_changes_nothing(tmp_path: Path) -> None:
    _journal(tmp_path, "damaged", turns=1)
    path = tmp_path / "damaged.json"
    lines = path.read_bytes().splitlines(keepends=True)
    lines[2] = lines[2].replace(b"ORDERS", b"0RDERS")
    path.write_bytes(b"".join(lines))
    before = path.read_bytes()
    code, _, err = _invoke("session", "--state-dir", str(tmp_path), "show", "damaged")
    assert code == 1
    assert "line 3" in err
    assert "checksum mismatch" in err
    assert path.read_bytes() == before


def test_show_of_a_newer_journal_names_both_versions(tmp_path: Path) -> None:
    _journal(tmp_path, "future", turns=0, end=None)
    newer = Record(seq=2, payload=UserRecord(message={"role": "user", "content": []}), version=7)
    with (tmp_path / "future.json").open("ab") as f:
        f.write(encode_record(newer) + b"\n")
    code, _, err = _invoke("session", "--state-dir", str(tmp_path), "show", "future")
    assert code == 1
    assert "schema version 7" in err
    assert f"versions up to {SCHEMA_VERSION}" in err


def test_rm_removes_and_refuses_a_run_held_by_a_writer(tmp_path: Path) -> None:
    _journal(tmp_path, "gone", turns=1)
    _journal(tmp_path, "held", turns=0, end=None)

    # The journal holds its lock through its descriptors, across event loops.
    journal = anyio.run(FileJournalStore(tmp_path).open, "held")
    try:
        code, _, err = _invoke("session", "--state-dir", str(tmp_path), "rm", "held")
    finally:
        anyio.run(journal.aclose)
    assert code == 1
    assert f"run 'held' is open in process {os.getpid()}" in err
    assert (tmp_path / "held.json").exists()
    code, out, _ = _invoke("session", "--state-dir", str(tmp_path), "delete", "gone")
    assert (code, out) == (0, "Removed session gone\n")
    assert not (tmp_path / "gone.json").exists()
    code, _, err = _invoke("session", "--state-dir", str(tmp_path), "rm", "gone")
    assert code == 1
    assert "run not found" in err


def test_export_writes_the_journaled_lines(tmp_path: Path) -> None:
    _journal(tmp_path, "out", turns=2)
    journal_bytes = (tmp_path / "out.json").read_bytes()
    code, out, _ = _invoke("session", "--state-dir", str(tmp_path), "export", "out")
    assert code == 0
    assert out.encode() == journal_bytes
    target = tmp_path / "export.jsonl"
    code, _, err = _invoke("session", "--state-dir", str(tmp_path), "export", "out", "-o", str(target))
    assert code == 0
    assert target.read_bytes() == journal_bytes
    assert "Exported 8 records" in err
    code, _, err = _invoke("session", "--state-dir", str(tmp_path), "export", "out", "-o", str(target))
    assert code == 1
    assert "already exists" in err


def test_export_of_a_journal_with_a_torn_tail_leaves_the_tail_out(tmp_path: Path) -> None:
    _journal(tmp_path, "torn", turns=1, end=None)
    complete = (tmp_path / "torn.json").read_bytes()
    with (tmp_path / "torn.json").open("ab") as f:
        f.write(encode_record(Record(seq=5, payload=ToolResultRecord(tool_use_id="x", result={})))[:30])
    code, out, _ = _invoke("session", "--state-dir", str(tmp_path), "export", "torn")
    assert code == 0
    assert out.encode() == complete


def test_a_truncated_journal_is_listed_and_shown_as_truncated(tmp_path: Path) -> None:
    """Steps:
    1. A completed run's journal is cut back to its first 4 of 8 records (its mark still counts 8).
    2. list shows status `truncated` and the reason on stderr; the JSON carries it.
    3. show still shows what the journal holds, says it is truncated, and names the fix.
    """
    _journal(tmp_path, "cut", turns=2)
    path = tmp_path / "cut.json"
    path.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[:4]))
    code, out, err = _invoke("session", "--state-dir", str(tmp_path), "list")
    assert code == 0
    assert out.splitlines()[1].split()[:3] == ["cut", "claude-test", "truncated"]
    assert "warning: journal for run 'cut' is truncated: its high-water mark cut.hwm counts 8 records" in err
    code, out, _ = _invoke("session", "--state-dir", str(tmp_path), "list", "--format", "json")
    (listed,) = json.loads(out)
    assert (listed["status"], listed["records"]) == ("truncated", 4)
    assert "holds 4" in listed["truncated"]
    code, out, err = _invoke("session", "--state-dir", str(tmp_path), "show", "cut", "--no-tui")
    assert code == 0
    assert "Status      open, journal truncated (resume needs --force)" in out
    assert "LLM calls   1" in out
    assert "counts 8 records but the journal holds 4" in err
    assert "--force" in err
    code, out, _ = _invoke("session", "--state-dir", str(tmp_path), "show", "cut", "--format", "json")
    assert code == 0
    assert "holds 4" in json.loads(out)["truncated"]


def test_explicit_config_picks_the_file_directory_and_refuses_other_backends(tmp_path: Path) -> None:
    _journal(tmp_path / "runs", "configured", turns=0)
    config = tmp_path / "agent.yaml"
    config.write_text(
        "application_path: ./app\nharness:\n  sessions:\n    backend: file\n    options:\n      directory: ./runs\n",
        encoding="utf-8",
    )
    code, out, _ = _invoke("-c", str(config), "session", "list", "--format", "json")
    assert code == 0
    assert [s["id"] for s in json.loads(out)] == ["configured"]
    other = tmp_path / "js.yaml"
    other.write_text(
        "application_path: ./app\nharness:\n  sessions:\n    backend: jetstream\n    options:\n      stream: RUNS\n",
        encoding="utf-8",
    )
    code, _, err = _invoke("-c", str(other), "session", "list")
    assert code == 1
    # The jetstream backend works from every command now; it needs the NATS connection nats_context names.
    assert "the jetstream session backend needs a NATS connection: set nats_context in agent.yaml" in err


def _hostile(kind: str, lines: list[bytes]) -> bytes:
    if kind == "head-truncated":
        return b"".join(lines)[40:]
    if kind == "bit-flipped":
        lines[1] = lines[1].replace(b'"iteration":0', b'"iteration":1')
    elif kind == "newer-version":
        turn = sample_turn("hostile", seq=2, iteration=0)
        lines[3] = encode_record(Record(seq=4, payload=turn[2].payload, version=SCHEMA_VERSION + 1)) + b"\n"
    elif kind == "duplicated-seq":
        lines.insert(3, lines[2])
    elif kind == "oversize-line":
        lines.insert(2, b"x" * (16 * 1024 * 1024 + 1) + b"\n")
    return b"".join(lines)


@pytest.mark.parametrize(
    ("kind", "line", "reason"),
    [
        ("head-truncated", 1, "checksum mismatch"),
        ("bit-flipped", 2, "checksum mismatch"),
        ("newer-version", 4, f"schema version {SCHEMA_VERSION + 1}"),
        ("duplicated-seq", 4, "seq 3 does not follow seq 3"),
        ("oversize-line", 3, "record limit"),
    ],
)
def test_hostile_journals_are_one_line_errors_and_stay_untouched(
    tmp_path: Path, kind: str, line: int, reason: str
) -> None:
    _journal(tmp_path, "hostile", turns=1)
    path = tmp_path / "hostile.json"
    damaged = _hostile(kind, path.read_bytes().splitlines(keepends=True))
    path.write_bytes(damaged)
    for command in ("show", "export"):
        code, out, err = _invoke("session", "--state-dir", str(tmp_path), command, "hostile")
        assert (code, out) == (1, "")
        assert err.startswith("Error: corrupt record sequence: journal for run 'hostile', ")
        assert f"line {line}: " in err
        assert reason in err
        assert "Traceback" not in err
    code, out, err = _invoke("session", "--state-dir", str(tmp_path), "list")
    assert code == 0
    [row] = out.splitlines()[1:]
    assert row.split()[:3] == ["hostile", "-", "damaged"]
    assert err.startswith("warning: session hostile is damaged: corrupt record sequence: ")
    assert reason in err
    code, out, _ = _invoke("session", "--state-dir", str(tmp_path), "list", "--format", "json")
    assert [(s["id"], s["status"]) for s in json.loads(out)] == [("hostile", "damaged")]
    assert reason in json.loads(out)[0]["damaged"]
    assert path.read_bytes() == damaged


# A stored prompt that would write the clipboard (OSC 52), ring the bell, clear the screen with an 8-bit CSI
# and reverse the rest of the line (U+202E), and a tool output with a 7-bit CSI.
_HOSTILE = "copy \x1b]52;c;cm0gLXJmIH4=\x07me\x07 \x9b2J now\u202eevil"
_RAW = ("\x1b", "\x07", "\x9b", "\u202e")


def _hostile_journal(directory: Path, run_id: str) -> None:
    async def write() -> None:
        journal = await FileJournalStore(directory).create(sample_meta(run_id, prompt=_HOSTILE, model="m\u202e1"))
        try:
            for record in sample_turn(run_id, seq=journal.last_seq + 1, iteration=0, output="\x1b[31mred\x1b[0m"):
                await journal.append(record)
        finally:
            await journal.aclose()

    anyio.run(write)


def test_list_and_show_neutralize_escapes_and_bidi_from_a_stored_prompt(tmp_path: Path) -> None:
    _hostile_journal(tmp_path, "evil")
    shown: dict[str, str] = {}
    for args in (("list",), ("show", "evil", "--no-tui", "--transcript"), ("show", "evil", "--approvals")):
        code, out, err = _invoke("session", "--state-dir", str(tmp_path), *args, color=True)
        assert code == 0, err
        assert not [raw for raw in _RAW if raw in out + err], args
        shown[" ".join(args[:1] + args[2:])] = out
    assert "copy me now<U+202E>evil" in shown["list"] and "m<U+202E>1" in shown["list"]
    transcript = shown["show --no-tui --transcript"]
    assert "Prompt\n  copy me now<U+202E>evil" in transcript
    assert "[1] prompt: copy me   now<U+202E>evil" in transcript  # the transcript keeps the spacing
    assert '"output":"red"' in transcript
    # JSON for scripts: the same strings, escaped so a terminal shows them and a parser reads them back.
    for args in (("list", "--format", "json"), ("show", "evil", "--format", "json", "--transcript")):
        code, out, _ = _invoke("session", "--state-dir", str(tmp_path), *args, color=True)
        assert code == 0
        assert not [raw for raw in _RAW if raw in out], args
        document: Any = json.loads(out)
        assert (document[0] if isinstance(document, list) else document)["prompt"] == _HOSTILE


def test_show_transcript_names_a_denied_call_with_its_channel_and_reason(tmp_path: Path) -> None:
    async def write() -> None:
        journal = await FileJournalStore(tmp_path).create(sample_meta("denied"))
        try:
            [assistant, _, _] = sample_turn("denied", seq=journal.last_seq + 1, iteration=0)
            await journal.append(assistant)
            gate: JsonObject = {
                "allowed": False,
                "channel": "no_terminal",
                "tag": "ai:confirm",
                "digest": "7eda908c242a" * 5,
            }
            body = '{"allowed":false,"reason":"no interactive terminal is attached, so no operator could be asked"}'
            result: JsonObject = {"tool_use_id": "toolu_0", "content": body}
            await journal.append(
                Record(
                    seq=journal.last_seq + 1, payload=ToolResultRecord(tool_use_id="toolu_0", result=result, gate=gate)
                )
            )
        finally:
            await journal.aclose()

    anyio.run(write)
    code, out, _ = _invoke("session", "--state-dir", str(tmp_path), "show", "denied", "--no-tui", "--transcript")
    assert code == 0
    assert out.splitlines()[-1] == (
        "[3] denied stream_info (no terminal, tag ai:confirm, argv 7eda908c242a): "
        "no interactive terminal is attached, so no operator could be asked"
    )


def test_help_keeps_the_examples_unwrapped_and_lists_the_subcommands() -> None:
    code, out, _ = _invoke("session", "--help")
    assert code == 0
    assert "\n    fiskai session show orders-report --transcript\n" in out
    for name in ("export", "list", "rm", "show"):
        assert f"\n  {name} " in out
