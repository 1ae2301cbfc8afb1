"""`fiskai serve` with the prompts channel, as processes on a real nats-server with the scripted Messages server.

The worker is a `fiskai serve` subprocess; callers are the library's prompts client, a raw NATS request
and `fiskai ask`.
"""

import json
import os
import pty
import queue
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import AsyncGenerator, Generator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from fiskai_a2a import NatsContext
from fiskai_a2a.errors import RemoteAgentError
from fiskai_a2a.nats_service import NatsStreams
from fiskai_a2a.nats_transport import connect
from fiskai_a2a.prompts_client import answer_question, cancel_turn, send_turn, send_waiting
from fiskai_a2a.protocol import Identity, request_header, serve as wire
from fiskai_a2a.transport import Route
from fiskai_agent.testing import Failure, MessagesServer, Turn, text, tool_use

pytestmark = [pytest.mark.nats, pytest.mark.anyio]

_ROOT = Path(__file__).resolve().parents[1]
_MODEL = _ROOT / "examples" / "fixturectl" / "fixturectl.introspect.json"
_AGENT = "ops-agent"


def _write_config(folder: Path, *, workers: int = 1, elicit: bool = False, extra: str = "") -> Path:
    """An agent answering prompts with fixturectl's commands; `cluster_config_get slow` sleeps 30 s."""
    app = folder / "fixturectl"
    app.write_text(
        "#!/bin/sh\n"
        f'if [ "$#" -eq 1 ] && [ "$1" = "--fisk-introspect" ]; then exec cat "{_MODEL}"; fi\n'
        'for arg in "$@"; do printf "[%s]\\n" "$arg"; done\n'
        # `slow`: a child in the command's process group, then the leader's pid: a cancel must stop both.
        'for arg in "$@"; do if [ "$arg" = "slow" ]; then d="$(dirname "$0")"; sleep 30 & echo $! > "$d/slow.child"; '
        'echo $$ > "$d/slow.pid"; wait; fi; done\n',
        encoding="utf-8",
    )
    app.chmod(0o755)
    config = folder / "agent.yaml"
    config.write_text(
        f"identity: {_AGENT}\n"
        f"application_path: {app}\n"
        "system_prompt: You operate the cluster.\n"
        "llm: {model: claude-sonnet-4-6}\n"
        f"{extra}"
        f"expose: {{agent: {{a2a: {{request_timeout: 30s, prompts: {{workers: {workers}, elicit: {str(elicit).lower()}}}}}}}}}\n",
        encoding="utf-8",
    )
    (folder / "runs").mkdir()
    return config


class Worker:
    def __init__(self, proc: subprocess.Popen[str], lines: "queue.Queue[str]") -> None:
        self.proc = proc
        self.lines = lines
        self.seen: list[str] = []

    def stop(self) -> int:
        """SIGTERM (a drain); the exit code."""
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=20)

    def stderr(self) -> str:
        while True:
            try:
                self.seen.append(self.lines.get_nowait())
            except queue.Empty:
                return "".join(self.seen)


@contextmanager
def serving(config: Path, url: str, model: MessagesServer, *extra: str) -> Generator[Worker]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "FISKAI_"))}
    env.update(ANTHROPIC_BASE_URL=model.base_url, ANTHROPIC_API_KEY="test-key")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "fiskai_cli",
            "-c",
            str(config),
            "serve",
            "--server",
            url,
            "--state-dir",
            str(config.parent / "runs"),
            *extra,
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    lines: queue.Queue[str] = queue.Queue()
    reader = threading.Thread(target=lambda: [lines.put(line) for line in proc.stderr or ()], daemon=True)
    reader.start()
    worker = Worker(proc, lines)
    try:
        deadline = time.monotonic() + 30
        while not any("Answering prompts over a2a" in line for line in worker.seen):
            try:
                worker.seen.append(lines.get(timeout=0.2))
            except queue.Empty:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"fiskai serve did not start: {''.join(worker.seen)}")
        yield worker
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        reader.join(timeout=5)
        if proc.stderr is not None:
            proc.stderr.close()


@asynccontextmanager
async def caller(url: str) -> AsyncGenerator[NatsStreams]:
    async with connect(NatsContext.from_url(url)) as transport:
        yield NatsStreams(transport)


async def _turn(streams: NatsStreams, **options: Any) -> tuple[list[wire.ServeMessage], wire.ServeMessage]:
    messages: list[wire.ServeMessage] = []
    with anyio.fail_after(30):
        terminal = await send_turn(streams, _AGENT, sender="tester", on_message=messages.append, **options)
    return messages, terminal


def _in_order(messages: list[wire.ServeMessage]) -> None:
    assert [m.header.sequence for m in messages] == list(range(1, len(messages) + 1))
    assert isinstance(messages[0], wire.Ack) and messages[0].accepted


async def test_a_three_turn_conversation_streams_in_order_and_continues_after_a_restart(
    nats_server: str, tmp_path: Path
) -> None:
    """Steps:
    1. Turn one runs a tool and answers; its reply set is ack, events in sequence order, result.
    2. Turn two joins by token on the same worker.
    3. The worker drains on SIGTERM (exit 0); a new worker takes turn three by token: the model sees the
       whole conversation.
    4. The conversation reads back between replay markers.
    """
    config = _write_config(tmp_path)
    with MessagesServer() as model:
        model.add(
            Turn(
                [
                    tool_use("cluster_node_drain", {"node": "n1", "reason": "test"}, id="toolu_drain"),
                    tool_use("cluster_node_list", {"limit": 2}, id="toolu_list"),
                ]
            ),
            Turn([text("one")]),
            Turn([text("two")]),
            Turn([text("three")]),
        )
        with serving(config, nats_server, model) as worker:
            async with caller(nats_server) as streams:
                first, result = await _turn(streams, prompt="list the nodes")
                _in_order([*first])
                ack = first[0]
                assert isinstance(ack, wire.Ack) and ack.conversation_token
                token = ack.conversation_token
                kinds = [m.kind for m in first if isinstance(m, wire.EventMessage) and m.kind != "warning"]
                assert kinds == ["status", "tool_call", "tool_result", "text"], kinds
                call = next(m for m in first if isinstance(m, wire.EventMessage) and m.kind == "tool_call")
                assert call.block == {"id": "toolu_list", "name": "cluster_node_list", "input": {"limit": 2}}
                assert isinstance(result, wire.ResultReply) and (result.stop_reason, result.text) == ("end_turn", "one")
                second, result = await _turn(streams, prompt="and again", token=token)
                _in_order(second)
                assert isinstance(result, wire.ResultReply) and result.text == "two"
            assert worker.stop() == 0
            assert "draining: no new work is taken" in worker.stderr()
        with serving(config, nats_server, model):
            async with caller(nats_server) as streams:
                third, result = await _turn(streams, prompt="once more", token=token)
                _in_order(third)
                assert isinstance(result, wire.ResultReply) and result.text == "three"
                assert result.usage is not None and result.usage["llm_calls"] == 4
                read, end = await _turn(streams, token=token, read=50)
    # No elicit: the gated command is refused (nobody to ask) and the model is told so; it never ran.
    denied = {block["tool_use_id"]: block for block in model.requests[1].tool_results()}["toolu_drain"]
    refusal = json.loads(str(denied["content"]))
    assert refusal["allowed"] is False and "prompts.elicit is off" in refusal["reason"]
    sent = json.dumps(model.requests[-1].messages)
    assert all(word in sent for word in ("list the nodes", "one", "and again", "two", "once more"))
    events = [m for m in read if isinstance(m, wire.EventMessage)]
    assert events[0].block["phase"] == "replay_start" and events[-1].block["phase"] == "replay_end"
    replayed = [(e.kind, e.block.get("text")) for e in events[1:-1] if e.kind in ("prompt", "text")]
    assert replayed == [
        ("prompt", "list the nodes"),
        ("text", "one"),
        ("prompt", "and again"),
        ("text", "two"),
        ("prompt", "once more"),
        ("text", "three"),
    ]
    assert isinstance(end, wire.ResultReply)


async def test_a_cancel_stops_the_command_s_process_group_and_ends_suspended(nats_server: str, tmp_path: Path) -> None:
    config = _write_config(tmp_path)
    messages: list[wire.ServeMessage] = []
    done: list[wire.ServeMessage] = []
    pid = child = 0
    with MessagesServer() as model:
        model.add(Turn([tool_use("cluster_config_get", {"key": "slow"}, id="toolu_slow")]), Turn([text("after")]))
        with serving(config, nats_server, model):
            async with caller(nats_server) as streams, anyio.create_task_group() as tasks:

                async def turn() -> None:
                    done.append(
                        await send_turn(
                            streams,
                            _AGENT,
                            sender="tester",
                            prompt="read slow",
                            request="cancel-me",
                            on_message=messages.append,
                        )
                    )

                tasks.start_soon(turn)
                pid_file = tmp_path / "slow.pid"
                with anyio.fail_after(20):
                    while not pid_file.exists() or not pid_file.read_text(encoding="utf-8").strip():  # noqa: ASYNC110
                        await anyio.sleep(0.05)
                    pid = int(pid_file.read_text(encoding="utf-8"))
                    child = int((tmp_path / "slow.child").read_text(encoding="utf-8"))
                    assert os.getpgid(pid) == pid and os.getpgid(child) == pid  # the command leads its own group
                    assert await cancel_turn(streams, _AGENT, "cancel-me", sender="tester")
                    while not done:  # noqa: ASYNC110
                        await anyio.sleep(0.05)
    (terminal,) = done
    assert isinstance(terminal, wire.ErrorReply) and (terminal.code, terminal.stop_reason) == ("suspended", "suspended")
    assert _group_gone(pid), f"process group {pid} still has live members after the cancel"
    assert not _alive(child) and not _alive(pid)


def _alive(pid: int) -> bool:
    """A process exists and is not a zombie (an orphan's zombie waits for a reaper that may never come)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8").rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def _group_gone(pgid: int, wait: float = 5.0) -> bool:
    """No live process is left in process group `pgid` (polled briefly: SIGKILL delivery is asynchronous)."""
    deadline = time.monotonic() + wait
    while True:
        live: list[str] = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                fields = (entry / "stat").read_text(encoding="utf-8").rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
                live.append(entry.name)
        if not live:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


async def test_a_saturated_prompts_channel_answers_capacity_at_once(nats_server: str, tmp_path: Path) -> None:
    config = _write_config(tmp_path, workers=1)
    refused: list[wire.ServeMessage] = []
    terminal: wire.ServeMessage | None = None
    waited = 0.0
    with MessagesServer() as model:
        model.add(Turn([tool_use("cluster_config_get", {"key": "slow"}, id="toolu_slow")]), Turn([text("late")]))
        with serving(config, nats_server, model):
            async with caller(nats_server) as streams, anyio.create_task_group() as tasks:
                tasks.start_soon(lambda: send_turn(streams, _AGENT, sender="tester", prompt="hold", request="holder"))
                pid_file = tmp_path / "slow.pid"
                with anyio.fail_after(20):
                    while not pid_file.exists():  # noqa: ASYNC110
                        await anyio.sleep(0.05)
                started = time.monotonic()
                refused, terminal = await _turn(streams, prompt="me too")
                waited = time.monotonic() - started
                assert await cancel_turn(streams, _AGENT, "holder", sender="tester")
    ack = refused[0]
    assert isinstance(ack, wire.Ack) and ack.accepted is False
    assert isinstance(terminal, wire.ErrorReply) and terminal.code == "capacity"
    assert waited < 2


def test_fiskai_ask_streams_the_answer_and_prints_the_token(nats_server: str, tmp_path: Path) -> None:
    config = _write_config(tmp_path)
    with MessagesServer() as model:
        model.add(Turn([text("all nodes are healthy")]))
        with serving(config, nats_server, model):
            done = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "fiskai_cli",
                    "ask",
                    _AGENT,
                    "how",
                    "are",
                    "the",
                    "nodes?",
                    "--server",
                    nats_server,
                ],
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
                stdin=subprocess.DEVNULL,
            )
            unknown = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "fiskai_cli",
                    "ask",
                    _AGENT,
                    "hi",
                    "--continue",
                    "nope",
                    "--server",
                    nats_server,
                    "--format",
                    "json",
                ],
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
                stdin=subprocess.DEVNULL,
            )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "all nodes are healthy\n" and "conversation: " in done.stderr
    assert unknown.returncode == 1
    last = json.loads(unknown.stdout.splitlines()[-1])
    assert last["protocol"] == "io.choria.fisk-ai.v1.error" and last["code"] == "unknown_conversation"


async def test_the_first_sigterm_drains_and_the_second_stops_the_turn_now(nats_server: str, tmp_path: Path) -> None:
    config = _write_config(tmp_path)
    done: list[wire.ServeMessage] = []
    pid = code = 0
    with MessagesServer() as model:
        model.add(Turn([tool_use("cluster_config_get", {"key": "slow"}, id="toolu_slow")]), Turn([text("late")]))
        with serving(config, nats_server, model) as worker:
            async with caller(nats_server) as streams, anyio.create_task_group() as tasks:

                async def turn() -> None:
                    done.append(await send_turn(streams, _AGENT, sender="tester", prompt="hold"))

                tasks.start_soon(turn)
                pid_file = tmp_path / "slow.pid"
                with anyio.fail_after(20):
                    while not pid_file.exists() or not pid_file.read_text(encoding="utf-8").strip():  # noqa: ASYNC110
                        await anyio.sleep(0.05)
                    pid = int(pid_file.read_text(encoding="utf-8"))
                    worker.proc.send_signal(signal.SIGTERM)  # drain: the turn goes on
                    while "draining" not in worker.stderr():  # noqa: ASYNC110
                        await anyio.sleep(0.05)
                    assert not done
                    worker.proc.send_signal(signal.SIGTERM)  # stop now
                    while not done:  # noqa: ASYNC110
                        await anyio.sleep(0.05)
                    code = await anyio.to_thread.run_sync(worker.proc.wait)
    (terminal,) = done
    assert isinstance(terminal, wire.ErrorReply) and terminal.code == "failed"
    assert code == 0 and "stopping now" in worker.stderr()
    assert _group_gone(pid), f"process group {pid} outlived the stop"


async def test_a_model_failure_ends_the_turn_with_the_provider_s_code(nats_server: str, tmp_path: Path) -> None:
    """Reference 3.8: the anthropic SDK's exception type decides the terminal code; each turn meets one failure."""
    config = _write_config(tmp_path)
    cases = [
        (Failure(429, "rate limited", should_retry=False), "provider_busy"),
        (Failure(529, "overloaded", should_retry=False), "provider_busy"),
        (Failure(401, "invalid x-api-key", should_retry=False), "provider_refused"),
        (Failure(404, "model: claude-nope", should_retry=False), "provider_refused"),
        (Failure(400, "prompt is too long: 250000 tokens > 200000 maximum", should_retry=False), "context_exceeded"),
        (Failure(400, "messages: roles must alternate", should_retry=False), "failed"),
        (Failure(500, "internal", should_retry=False), "failed"),
    ]
    seen: list[tuple[str | None, str | None, str]] = []
    with MessagesServer() as model:
        model.add(*(failure for failure, _code in cases))
        with serving(config, nats_server, model, "-v") as worker:
            async with caller(nats_server) as streams:
                for failure, _code in cases:
                    messages, terminal = await _turn(streams, prompt=f"status {failure.status}")
                    _in_order(messages)
                    assert isinstance(terminal, wire.ErrorReply)
                    seen.append((terminal.code, terminal.stop_reason, terminal.error))
            log = worker.stderr()
    assert [code for code, _stop, _error in seen] == [code for _failure, code in cases]
    assert {stop for _code, stop, _error in seen} == {"error"}
    assert "HTTP 429" in seen[0][2] and "rate limited" in seen[0][2]
    # The reference's log lines (3.14), with the caller's unverified claim and the code the caller got.
    assert "Accepted a prompt channel=a2a/prompts" in log and "caller=tester" in log and "prompt_bytes=10" in log
    assert "caller_verified=false resume=false" in log
    assert "Ending a run channel=a2a/prompts" in log and "code=provider_busy reason=error" in log


async def test_with_elicit_the_caller_approves_gated_commands_and_always_stops_the_asking(
    nats_server: str, tmp_path: Path
) -> None:
    """Steps:
    1. The model calls the gated `cluster_node_drain`; the caller is asked (approve, with the call's id and
       the 30 s window) and says no: the call does not run and the model is told the refusal is final.
       An answer of the wrong kind (400) and one to an unknown question (404) are refused.
    2. The model calls it again; the caller says always: it runs.
    3. A third call runs without a question, and so does one in the conversation's next turn.
    """
    config = _write_config(tmp_path, elicit=True)
    questions: list[wire.Question] = []
    unknown: list[bool] = []
    held: list[bool] = []
    with MessagesServer() as model:
        model.add(
            Turn([tool_use("cluster_node_drain", {"node": "n1", "reason": "a"}, id="toolu_a")]),
            Turn([tool_use("cluster_node_drain", {"node": "n2", "reason": "b"}, id="toolu_b")]),
            Turn([tool_use("cluster_node_drain", {"node": "n3", "reason": "c"}, id="toolu_c")]),
            Turn([text("drained")]),
            Turn([tool_use("cluster_node_drain", {"node": "n9", "reason": "d"}, id="toolu_d")]),
            Turn([text("drained again")]),
        )
        with serving(config, nats_server, model) as worker:
            async with caller(nats_server) as streams:

                async def decide(question: wire.Question) -> dict[str, Any]:
                    questions.append(question)
                    if len(questions) == 1:
                        confirm = question.header.model_copy(update={"protocol": wire.QUESTION_PREFIX + "confirm"})
                        misfit = question.model_copy(update={"header": confirm})
                        unknown.append(
                            await answer_question(streams, _AGENT, "elicit1", misfit, {"confirmed": True}, sender="t")
                        )
                        bogus = question.model_copy(update={"question_id": "nope"})
                        unknown.append(
                            await answer_question(streams, _AGENT, "elicit1", bogus, {"choice": "once"}, sender="t")
                        )
                        return {"choice": "no"}
                    held.append(await send_waiting(streams, _AGENT, "elicit1", question, sender="t"))
                    return {"choice": "always"}

                messages: list[wire.ServeMessage] = []
                with anyio.fail_after(30):
                    terminal = await send_turn(
                        streams,
                        _AGENT,
                        sender="tester",
                        prompt="drain three",
                        request="elicit1",
                        on_message=messages.append,
                        on_question=decide,
                    )
                    held.append(await send_waiting(streams, _AGENT, "elicit1", questions[1], sender="t"))
                    ack = messages[0]
                    assert isinstance(ack, wire.Ack) and ack.conversation_token
                    later, again = await _turn(
                        streams, prompt="once more", token=ack.conversation_token, on_question=decide
                    )
    _in_order(messages)
    assert isinstance(again, wire.ResultReply) and not any(isinstance(m, wire.Question) for m in later)
    assert isinstance(terminal, wire.ResultReply) and terminal.text == "drained", worker.stderr()
    assert held == [True, False]  # `waiting` is acked while the question is open, 404 once it is answered
    assert unknown == [False, False]  # an answer of the wrong kind (400), then to an unknown question (404)
    assert [(q.kind, q.tool_use_id, q.command, q.wait_ms) for q in questions] == [
        ("approve", "toolu_a", "cluster_node_drain", 30000),
        ("approve", "toolu_b", "cluster_node_drain", 30000),
    ]
    assert "n1" in (questions[0].display or "") and questions[0].tag == "ai:confirm"
    results = {block["tool_use_id"]: block for request in model.requests for block in request.tool_results()}
    refused = json.loads(str(results["toolu_a"]["content"]))
    assert refused["allowed"] is False and "final" in refused["reason"]
    assert "[n2]" in str(results["toolu_b"]["content"]) and "[n3]" in str(results["toolu_c"]["content"])
    assert "[n9]" in str(results["toolu_d"]["content"])
    ran = [m.block["call_id"] for m in messages if isinstance(m, wire.EventMessage) and m.kind == "tool_result"]
    assert ran == ["toolu_b", "toolu_c"]
    # both questions travelled on the reply set, numbered with the events
    kinds = [m.header.protocol.rsplit(".", 1)[-1] if not isinstance(m, wire.EventMessage) else m.kind for m in messages]
    assert kinds.count("approve") == 2


def test_fiskai_ask_without_a_terminal_refuses_a_gated_command_unless_told_to_approve(
    nats_server: str, tmp_path: Path
) -> None:
    config = _write_config(tmp_path, elicit=True)
    with MessagesServer() as model:
        model.add(
            Turn([tool_use("cluster_node_drain", {"node": "n1", "reason": "a"}, id="toolu_a")]),
            Turn([text("left alone")]),
            Turn([tool_use("cluster_node_drain", {"node": "n2", "reason": "b"}, id="toolu_b")]),
            Turn([text("drained")]),
        )
        with serving(config, nats_server, model):
            command = [sys.executable, "-m", "fiskai_cli", "ask", _AGENT, "drain", "--server", nats_server]
            runs = [
                subprocess.run(
                    [*command, *extra],
                    capture_output=True,
                    text=True,
                    timeout=60,
                    check=False,
                    stdin=subprocess.DEVNULL,
                )
                for extra in ((), ("--approve",))
            ]
    refused, approved = runs
    assert refused.returncode == 0 and refused.stdout == "left alone\n"
    assert "refused: the agent asks to run" in refused.stderr and "pass --approve" in refused.stderr
    assert approved.returncode == 0 and approved.stdout == "drained\n" and "approved (--approve)" in approved.stderr
    results = {block["tool_use_id"]: block for request in model.requests for block in request.tool_results()}
    assert json.loads(str(results["toolu_a"]["content"]))["allowed"] is False
    assert "[n2]" in str(results["toolu_b"]["content"])


async def test_an_unanswered_approval_parks_the_turn_and_request_answer_resumes_it(
    nats_server: str, tmp_path: Path
) -> None:
    """Steps:
    1. The model calls the gated command; the caller never answers: after the window (30 s, the minimum)
       the turn ends `suspended` naming the call, which did not run.
    2. A `request.answer` for another call is refused (`unknown_call`); one whose answer does not fit its
       kind is a 400.
    3. `request.answer` approving the call (`fiskai ask --continue TOKEN --answer CALL=once`) resumes the run:
       the command runs and the model answers.
    4. A cancel while a question is open closes it: the turn ends `suspended` at once.
    """
    config = _write_config(tmp_path, elicit=True)
    with MessagesServer() as model:
        model.add(
            Turn([tool_use("cluster_node_drain", {"node": "n7", "reason": "late"}, id="toolu_t")]),
            Turn([text("drained after all")]),
            Turn([tool_use("cluster_node_drain", {"node": "n8", "reason": "x"}, id="toolu_x")]),
            Turn([text("never")]),
        )
        with serving(config, nats_server, model):
            async with caller(nats_server) as streams:
                first = await _ignoring_questions(streams, "silent1", "drain n7")
                ack, question, parked = first[0], first[-2], first[-1]
                assert isinstance(ack, wire.Ack) and ack.conversation_token
                token = ack.conversation_token
                wrong, _ = await _turn(
                    streams,
                    token=token,
                    answer={"tool_use_id": "toolu_other", "kind": "approve", "answer": "choice", "choice": "once"},
                )
                with pytest.raises(RemoteAgentError) as malformed:
                    await _turn(
                        streams, token=token, answer={"tool_use_id": "toolu_t", "kind": "approve", "answer": "value"}
                    )
                answered_by_cli = await anyio.run_process(
                    [sys.executable, "-m", "fiskai_cli", "ask", _AGENT, "--continue", token, "--answer", "toolu_t=once"]
                    + ["--server", nats_server, "--format", "json"],
                    check=False,
                    stdin=subprocess.DEVNULL,
                )

                async def cancel_then_answer(question: wire.Question) -> dict[str, Any]:
                    assert await cancel_turn(streams, _AGENT, "asked2", sender="tester")
                    return {"choice": "once"}

                canceled, stopped = await _turn(
                    streams, prompt="drain n8", request="asked2", on_question=cancel_then_answer
                )
    assert isinstance(question, wire.Question) and question.tool_use_id == "toolu_t"
    assert isinstance(parked, wire.ErrorReply) and (parked.code, parked.stop_reason) == ("suspended", "suspended")
    assert "toolu_t" in parked.error and "request.answer" in parked.error
    assert isinstance(wrong[-1], wire.ErrorReply) and wrong[-1].code == "unknown_call"
    assert malformed.value.code == "400"
    assert answered_by_cli.returncode == 0, answered_by_cli.stderr
    resumed = [json.loads(line) for line in answered_by_cli.stdout.decode().splitlines()]
    assert [m["block"]["call_id"] for m in resumed if m["protocol"].endswith(".event.tool_result")] == ["toolu_t"]
    assert resumed[-1]["protocol"] == f"{wire.RESULT}" and resumed[-1]["text"] == "drained after all"
    assert isinstance(stopped, wire.ErrorReply) and stopped.code == "suspended"
    assert any(isinstance(m, wire.Question) for m in canceled)
    results = {block["tool_use_id"]: block for request in model.requests for block in request.tool_results()}
    assert "[n7]" in str(results["toolu_t"]["content"]) and "toolu_x" not in results
    assert model.remaining == 1  # the canceled turn never reached the model again


async def _ignoring_questions(streams: NatsStreams, request: str, prompt: str) -> list[wire.ServeMessage]:
    """A caller that never answers: one prompt's whole reply set, read without the library's answering."""
    message = wire.PromptRequest(header=_prompt_header(request), prompt=prompt)
    got: list[wire.ServeMessage] = []
    async with streams.stream(Route(agent=_AGENT, kind="task"), wire.encode(message)) as replies:
        with anyio.fail_after(60):
            while not got or not isinstance(got[-1], wire.ResultReply | wire.ErrorReply):
                got.append(wire.decode((await replies.receive(60)).payload))
    return got


async def test_an_unanswered_ask_human_question_is_declined_and_the_run_goes_on(
    nats_server: str, tmp_path: Path
) -> None:
    """fiskai has no deferred calls: after the window the tool answers "not confirmed" and the model goes on."""
    config = _write_config(tmp_path, elicit=True, extra="harness: {human_in_the_loop: {enabled: true}}\n")
    with MessagesServer() as model:
        model.add(
            Turn([tool_use("ask_human_confirm", {"question": "proceed?"}, id="toolu_q")]),
            Turn([text("nobody said yes")]),
        )
        with serving(config, nats_server, model):
            async with caller(nats_server) as streams:
                messages = await _ignoring_questions(streams, "quiet1", "ask first")
    _in_order(messages)
    terminal = messages[-1]
    assert any(isinstance(m, wire.Question) and m.tool_use_id == "toolu_q" for m in messages), messages
    assert isinstance(terminal, wire.ResultReply) and terminal.text == "nobody said yes"
    (result,) = model.requests[1].tool_results()
    body = json.loads(str(result["content"]))
    assert body["confirmed"] is False and "nobody answered within 30s" in body["reason"]


def _prompt_header(request: str) -> Any:
    header = request_header(wire.PROMPT, sender=Identity(name="tester"), recipient=_AGENT)
    return header.model_copy(update={"request": request, "conversation": request})


def test_fiskai_ask_on_a_terminal_puts_the_approval_to_the_person(nats_server: str, tmp_path: Path) -> None:
    """`fiskai ask` with a terminal on stdin and stderr: the y/N/a prompt names the command; `y` runs it once."""
    config = _write_config(tmp_path, elicit=True)
    with MessagesServer() as model:
        model.add(
            Turn([tool_use("cluster_node_drain", {"node": "n4", "reason": "tty"}, id="toolu_tty")]),
            Turn([text("drained on request")]),
        )
        with serving(config, nats_server, model):
            screen, out, code = _on_a_terminal(
                [sys.executable, "-m", "fiskai_cli", "ask", _AGENT, "drain n4", "--server", nats_server],
                when="[y/N/a(lways)]",
                type_in="y\n",
            )
    assert "Run " in screen and "node drain" in screen and "n4" in screen, screen
    assert code == 0 and out == "drained on request\n"
    results = {block["tool_use_id"]: block for request in model.requests for block in request.tool_results()}
    assert "[n4]" in str(results["toolu_tty"]["content"])


def _on_a_terminal(argv: list[str], *, when: str, type_in: str) -> tuple[str, str, int]:
    """Run `argv` with a pseudo-terminal as stdin and stderr; type `type_in` once `when` shows on it."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(argv, stdin=slave, stderr=slave, stdout=subprocess.PIPE, text=True)
    os.close(slave)
    screen = ""
    typed = False
    deadline = time.monotonic() + 60
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    screen += os.read(master, 4096).decode(errors="replace")
                except OSError:
                    break
            if not typed and when in screen:
                os.write(master, type_in.encode())
                typed = True
        out, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    return screen, out, proc.returncode


async def test_with_elicit_the_ask_human_tools_ask_the_caller(nats_server: str, tmp_path: Path) -> None:
    """confirm, select and input questions name their calls; the answers reach the model as the tools' results."""
    config = _write_config(tmp_path, elicit=True, extra="harness: {human_in_the_loop: {enabled: true}}\n")
    questions: list[wire.Question] = []
    answers = {"confirm": {"confirmed": True}, "select": {"index": 1}, "input": {"value": "zed"}}

    async def decide(question: wire.Question) -> dict[str, Any]:
        questions.append(question)
        return answers[question.kind]

    with MessagesServer() as model:
        model.add(
            Turn(
                [
                    tool_use("ask_human_confirm", {"question": "proceed?"}, id="toolu_c"),
                    tool_use("ask_human_select", {"question": "which?", "options": ["a", "b"]}, id="toolu_s"),
                    tool_use("ask_human_input", {"question": "name?", "default": "x"}, id="toolu_i"),
                ]
            ),
            Turn([text("asked")]),
        )
        with serving(config, nats_server, model):
            async with caller(nats_server) as streams:
                messages, terminal = await _turn(streams, prompt="ask me", on_question=decide)
    _in_order(messages)
    assert isinstance(terminal, wire.ResultReply) and terminal.text == "asked"
    assert [(q.kind, q.tool_use_id, q.question) for q in questions] == [
        ("confirm", "toolu_c", "proceed?"),
        ("select", "toolu_s", "which?"),
        ("input", "toolu_i", "name?"),
    ]
    assert questions[1].options == ["a", "b"] and questions[2].default == "x"
    results = {block["tool_use_id"]: json.loads(str(block["content"])) for block in model.requests[1].tool_results()}
    assert results == {"toolu_c": {"confirmed": True}, "toolu_s": {"selected": "b"}, "toolu_i": {"value": "zed"}}
