"""Crash and signal tests: `fiskai run --checkpoint` killed at each journal point, then `--resume`d.

Each test stops the run at a known point (the scripted model hangs, or a tool blocks on a FIFO),
waits until the journal file shows the record it is testing, SIGKILLs the CLI and resumes it. The
properties: no acknowledged record is lost (what was journaled is what the resumed model sees), and
a tool whose intent was journaled without a result is re-run only when tagged `ai:idempotent`
(otherwise the operator would be asked; with no terminal, it is not re-run).

The application is fixturectl's captured model behind a wrapper script that logs every call (argv and
`FISKAI_EFFECT_ID`) and can block once on a FIFO; the test's copy of the model tags `cluster node list`
`ai:idempotent`, the only change to the captured data.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from fiskai_agent.testing import Hang, MessagesServer, RecordedRequest, RunProcesses, Turn, text, tool_use
from fiskai_runstate import FileJournalStore, Record, decode_record

_ROOT = Path(__file__).resolve().parents[1]
_FIXTURECTL = _ROOT / "examples" / "fixturectl"
_RUN_ID = "crash-run"


@dataclass
class App:
    """The wrapped fixturectl and its call log."""

    config: Path
    calls: Path
    fifo: Path
    block: Path

    def block_next_call(self) -> None:
        """The next command blocks (reading the FIFO) until `release`."""
        self.block.touch()

    def release(self) -> bool:
        """Let a blocked command go on; False when no command is reading the FIFO yet."""
        try:
            fd = os.open(self.fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            return False
        with contextlib.suppress(OSError):
            os.write(fd, b"go\n")
        os.close(fd)
        return True

    def call_log(self) -> list[str]:
        return self.calls.read_text(encoding="utf-8").splitlines() if self.calls.exists() else []


@pytest.fixture
def app(tmp_path: Path) -> Iterator[App]:
    folder = tmp_path / "app"
    folder.mkdir()
    model = json.loads((_FIXTURECTL / "fixturectl.introspect.json").read_text(encoding="utf-8"))
    _tag(model, ["cluster", "node", "list"], "ai:idempotent")
    (folder / "model.json").write_text(json.dumps(model), encoding="utf-8")
    calls, fifo, block = folder / "calls.log", folder / "release.fifo", folder / "block-once"
    os.mkfifo(fifo)
    script = folder / "fixturectl"
    script.write_text(
        "#!/bin/sh\n"
        'if [ "$#" -eq 1 ] && [ "$1" = "--fisk-introspect" ]; then exec cat "$(dirname "$0")/model.json"; fi\n'
        f'echo "$* effect=$FISKAI_EFFECT_ID" >> "{calls}"\n'
        f'if [ -e "{block}" ]; then rm -f "{block}"; read _ < "{fifo}"; fi\n'
        'printf "fixturectl ran:"; printf " [%s]" "$@"; echo\n',
        encoding="utf-8",
    )
    script.chmod(0o755)
    config = folder / "agent.yaml"
    shutil.copy(_FIXTURECTL / "agent.yaml", config)
    made = App(config=config, calls=calls, fifo=fifo, block=block)
    yield made
    made.release()


def _tag(model: dict[str, Any], path: Sequence[str], tag: str) -> None:
    node = model
    for name in path:
        node = next(sub for sub in node["commands"] if sub["name"] == name)
    node["tags"] = [*(node.get("tags") or []), tag]


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "FISKAI_"))}
    base.update(XDG_STATE_HOME=str(tmp_path / "state"), NO_COLOR="1", ANTHROPIC_API_KEY="test-key")
    return base


def _journal(env: Mapping[str, str]) -> Path:
    return FileJournalStore(Path(env["XDG_STATE_HOME"]) / "fiskai" / "runs").journal_path(_RUN_ID)


def records(env: Mapping[str, str]) -> list[Record]:
    """The complete records of the journal (a torn last line is not yet a record)."""
    path = _journal(env)
    if not path.exists():
        return []
    out: list[Record] = []
    for number, line in enumerate(path.read_bytes().split(b"\n")[:-1], 1):
        out.append(decode_record(line, run_id=_RUN_ID, line_no=number))
    return out


def kinds(env: Mapping[str, str]) -> list[str]:
    return [record.kind for record in records(env)]


def wait_until(condition: Callable[[], bool], what: str, timeout: float = 30) -> None:
    """Poll `condition` until it holds; fail naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.02)


_RUNS = RunProcesses()


@pytest.fixture(autouse=True)
def _reap() -> Iterator[None]:
    """A failed test leaves no CLI running (nor its pipes open)."""
    yield
    _RUNS.reap()


def start(args: Sequence[str], env: Mapping[str, str], server: MessagesServer) -> subprocess.Popen[str]:
    # Nothing a run writes lands in the checkout.
    return _RUNS.start(args, env, server, cwd=Path(env["XDG_STATE_HOME"]).parent)


def finish(proc: subprocess.Popen[str], timeout: float = 60) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


def kill(proc: subprocess.Popen[str]) -> None:
    proc.kill()
    proc.communicate(timeout=30)


def resume(app: App, env: Mapping[str, str], server: MessagesServer) -> tuple[int, str, str]:
    return finish(start(["-c", str(app.config), "run", "--resume", _RUN_ID], env, server))


def checkpointed(app: App, env: Mapping[str, str], server: MessagesServer, prompt: str) -> subprocess.Popen[str]:
    return start(["-c", str(app.config), "run", "--checkpoint", "--name", _RUN_ID, prompt], env, server)


def _answer_when_results_arrive(answer: str) -> Callable[[RecordedRequest], Turn]:
    def respond(request: RecordedRequest) -> Turn:
        results = request.tool_results()
        return Turn([text(f"{answer}: {results[0]['content'] if results else 'no results'}")])

    return respond


def test_killed_during_the_first_model_call_resumes_from_the_prompt(app: App, env: dict[str, str]) -> None:
    """Steps:
    1. The model call hangs; the journal holds only the meta record.
    2. SIGKILL. 3. Resume: the same prompt goes to the model once, the run completes.
    """
    with MessagesServer([Hang(), Turn([text("nodes are fine")])]) as server:
        proc = checkpointed(app, env, server, "are the nodes fine?")
        server.wait_for_requests(1, timeout=30)
        wait_until(lambda: kinds(env)[:1] == ["meta"], "the meta record")
        kill(proc)
        code, out, err = resume(app, env, server)

    assert code == 0, err
    assert out == "nodes are fine\n"
    resumed = server.requests[-1]
    assert [m["role"] for m in resumed.messages] == ["user"]
    assert resumed.messages[0]["content"][0]["text"] == "are the nodes fine?"
    assert kinds(env)[0] == "meta"
    assert kinds(env)[-1] == "terminal"


def test_intent_without_result_of_a_non_idempotent_tool_is_not_rerun_without_approval(
    app: App, env: dict[str, str]
) -> None:
    """Steps:
    1. The model calls cluster_config_get; the tool blocks after its intent is journaled.
    2. SIGKILL. 3. Resume with no terminal: the operator cannot approve a re-run, so it does not run,
       and the model is told so in the tool result for that call.
    """
    app.block_next_call()
    script = [Turn([tool_use("cluster_config_get", {"key": "region"}, id="toolu_get")])]
    with MessagesServer(script, responder=_answer_when_results_arrive("done")) as server:
        proc = checkpointed(app, env, server, "what is the region?")
        wait_until(lambda: "tool_intent" in kinds(env) and len(app.call_log()) == 1, "the tool intent and the call")
        assert "tool_result" not in kinds(env)
        kill(proc)
        code, _, err = resume(app, env, server)

    assert code == 0, err
    assert len(app.call_log()) == 1, app.call_log()
    resumed = server.requests[-1]
    # The acknowledged assistant turn came back once, followed by the answer for its call.
    assert [m["role"] for m in resumed.messages] == ["user", "assistant", "user"]
    (result,) = resumed.tool_results()
    assert result["tool_use_id"] == "toolu_get"
    assert "fixturectl ran" not in str(result["content"])
    assert kinds(env).count("tool_result") == 1
    assert kinds(env)[-1] == "terminal"


def test_intent_without_result_of_an_idempotent_tool_is_rerun_with_the_same_effect_id(
    app: App, env: dict[str, str]
) -> None:
    app.block_next_call()
    script = [Turn([tool_use("cluster_node_list", {}, id="toolu_list")])]
    with MessagesServer(script, responder=_answer_when_results_arrive("listed")) as server:
        proc = checkpointed(app, env, server, "list the nodes")
        wait_until(lambda: "tool_intent" in kinds(env) and len(app.call_log()) == 1, "the tool intent and the call")
        kill(proc)
        code, out, err = resume(app, env, server)

    assert code == 0, err
    first, second = app.call_log()
    assert first.startswith("cluster node list")
    assert first == second
    assert "effect=" in first
    assert first.split("effect=", 1)[1]
    assert "fixturectl ran: [cluster] [node] [list]" in out


def test_killed_after_a_tool_result_keeps_the_result_and_does_not_rerun_the_tool(app: App, env: dict[str, str]) -> None:
    script = [Turn([tool_use("cluster_config_get", {"key": "region"}, id="toolu_get")]), Hang()]
    with MessagesServer(script, responder=_answer_when_results_arrive("region")) as server:
        proc = checkpointed(app, env, server, "what is the region?")
        server.wait_for_requests(2, timeout=30)
        wait_until(lambda: "tool_result" in kinds(env), "the tool result record")
        kill(proc)
        code, out, err = resume(app, env, server)

    assert code == 0, err
    assert len(app.call_log()) == 1
    (result,) = server.requests[-1].tool_results()
    assert result["tool_use_id"] == "toolu_get"
    assert "fixturectl ran: [cluster] [config] [get] [--] [region]" in str(result["content"])
    assert out.startswith("region: ")


def test_a_completed_session_is_not_resumed(app: App, env: dict[str, str]) -> None:
    with MessagesServer([Turn([text("done")])]) as server:
        code, _, err = finish(checkpointed(app, env, server, "hi"))
        assert code == 0, err
        again, _, again_err = resume(app, env, server)
        assert len(server.requests) == 1
    assert again == 1
    assert "Traceback" not in again_err
    assert kinds(env)[-1] == "terminal"


def test_sigterm_suspends_at_the_loop_boundary_and_the_resume_finishes(app: App, env: dict[str, str]) -> None:
    """Steps:
    1. A checkpointed run's tool is running (blocked) when SIGTERM arrives: the run asks to suspend.
    2. The tool is released and completes; the run stops before the next model call, exit 0.
    3. Resume: the model gets the tool result; the tool is not run again.
    """
    app.block_next_call()
    script = [Turn([tool_use("cluster_config_get", {"key": "region"}, id="toolu_get")])]
    with MessagesServer(script, responder=_answer_when_results_arrive("region")) as server:
        proc = checkpointed(app, env, server, "what is the region?")
        wait_until(lambda: len(app.call_log()) == 1, "the tool call")
        stream = proc.stderr
        assert stream is not None
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.extend(iter(stream.readline, "")), daemon=True)
        reader.start()
        proc.send_signal(signal.SIGTERM)
        wait_until(lambda: any("suspend requested" in line for line in lines), "the suspend notice")
        wait_until(app.release, "the blocked tool to take the release")
        assert proc.wait(timeout=60) == 0, "".join(lines)
        reader.join(timeout=10)
        err = "".join(lines)
        assert "resume with:" in err
        assert "Run suspended:" in err
        assert len(server.requests) == 1
        assert kinds(env)[-2:] == ["tool_result", "terminal"]
        resumed, out, resumed_err = resume(app, env, server)

    assert resumed == 0, resumed_err
    assert len(app.call_log()) == 1
    assert out.startswith("region: ")


def test_ctrl_c_without_a_journal_aborts_the_hung_call_cleanly(app: App, env: dict[str, str]) -> None:
    with MessagesServer([Hang()]) as server:
        proc = start(["-c", str(app.config), "run", "hi"], env, server)
        server.wait_for_requests(1, timeout=30)
        proc.send_signal(signal.SIGINT)
        code, out, err = finish(proc)

    assert code == 130
    assert out == ""
    assert "Traceback" not in err
    assert "interrupted" in err
    assert "Run summary:" in err


def test_resume_after_a_configuration_change_needs_force_and_says_what_changed(app: App, env: dict[str, str]) -> None:
    with MessagesServer([Hang(), Turn([text("fine")])]) as server:
        proc = checkpointed(app, env, server, "status?")
        server.wait_for_requests(1, timeout=30)
        wait_until(lambda: kinds(env)[:1] == ["meta"], "the meta record")
        kill(proc)
        config = app.config.read_text(encoding="utf-8")
        app.config.write_text(config.replace("Prefer read-only commands", "Prefer safe commands"), encoding="utf-8")
        refused, _, refused_err = resume(app, env, server)
        forced, out, forced_err = finish(
            start(["-c", str(app.config), "run", "--resume", _RUN_ID, "--force"], env, server)
        )

    assert refused == 1
    assert "--force" in refused_err
    assert "Traceback" not in refused_err
    assert forced == 0, forced_err
    assert out == "fine\n"
    assert "warning: resuming despite a configuration change (--force): " in forced_err
    assert f'resuming session "{_RUN_ID}"' in forced_err
    assert len(server.requests) == 2


def test_a_journal_cut_back_after_a_kill_is_refused_until_forced(app: App, env: dict[str, str]) -> None:
    """Steps:
    1. A checkpointed run calls cluster_config_get (not idempotent); its result is journaled; SIGKILL.
    2. The journal is cut back to before the call's intent, as a partial copy or an older restore leaves it.
    3. Resume refuses with one line naming the run, 4 records expected and 2 found, and --force; the tool
       does not run again and the journal is untouched.
    4. Resume --force goes ahead (the operator's call), warning that the journal was cut short.
    """
    script = [Turn([tool_use("cluster_config_get", {"key": "region"}, id="toolu_get")]), Hang()]
    with MessagesServer(script, responder=_answer_when_results_arrive("region")) as server:
        proc = checkpointed(app, env, server, "what is the region?")
        server.wait_for_requests(2, timeout=30)
        wait_until(lambda: "tool_result" in kinds(env), "the tool result record")
        kill(proc)
        path = _journal(env)
        cut = b"".join(path.read_bytes().splitlines(keepends=True)[:2])
        path.write_bytes(cut)
        refused, _, refused_err = resume(app, env, server)
        assert path.read_bytes() == cut
        assert len(app.call_log()) == 1
        forced, out, forced_err = finish(
            start(["-c", str(app.config), "run", "--resume", _RUN_ID, "--force"], env, server)
        )

    assert refused == 1
    assert "Traceback" not in refused_err
    assert f"journal for run '{_RUN_ID}' is truncated" in refused_err
    assert "counts 4 records but the journal holds 2" in refused_err
    assert "--force" in refused_err
    assert forced == 0, forced_err
    assert f'warning: resuming session "{_RUN_ID}" although its journal is truncated' in forced_err
    assert len(app.call_log()) == 2
    assert out.startswith("region: ")
