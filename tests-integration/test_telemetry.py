"""Telemetry end to end: `fiskai run` exporting to an in-process OTLP/HTTP receiver.

The receiver is a small HTTP server decoding the protobuf bodies with `opentelemetry-proto`, as a
collector would; the run is the real CLI against the scripted Messages server and fixturectl. The tests
assert the span tree, the attribute and metric names of reference section 6, and the run summary.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from typing_extensions import override

from fiskai_agent.testing import Failure, Hang, MessagesServer, RunProcesses, Turn, text, tool_use

trace_pb = pytest.importorskip(
    "opentelemetry.proto.collector.trace.v1.trace_service_pb2", reason="needs opentelemetry-proto (dev group)"
)
metrics_pb = pytest.importorskip("opentelemetry.proto.collector.metrics.v1.metrics_service_pb2")

_ROOT = Path(__file__).resolve().parents[1]
_FIXTURECTL = _ROOT / "examples" / "fixturectl"


@dataclass
class Exported:
    """One span as the collector saw it."""

    name: str
    trace_id: str
    span_id: str
    parent_id: str
    attributes: dict[str, Any]
    events: list[str]
    error: bool
    event_attributes: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])


@dataclass
class Receiver:
    """What reached the collector."""

    url: str
    spans: list[Exported] = field(default_factory=list[Exported])
    metrics: dict[str, list[Any]] = field(default_factory=dict[str, list[Any]])
    lock: threading.Lock = field(default_factory=threading.Lock)

    def named(self, prefix: str) -> list[Exported]:
        return [span for span in self.spans if span.name == prefix or span.name.startswith(prefix + " ")]

    def by_id(self, span_id: str) -> Exported:
        return next(span for span in self.spans if span.span_id == span_id)


def _value(any_value: Any) -> Any:
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in any_value.array_value.values]
    return getattr(any_value, kind) if kind else None


def _attributes(items: Any) -> dict[str, Any]:
    return {item.key: _value(item.value) for item in items}


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            if self.path == "/v1/traces":
                request = trace_pb.ExportTraceServiceRequest.FromString(body)
                reply = trace_pb.ExportTraceServiceResponse()
                with got.lock:
                    for resource in request.resource_spans:
                        for scope in resource.scope_spans:
                            got.spans += [
                                Exported(
                                    name=span.name,
                                    trace_id=span.trace_id.hex(),
                                    span_id=span.span_id.hex(),
                                    parent_id=span.parent_span_id.hex(),
                                    attributes=_attributes(span.attributes),
                                    events=[event.name for event in span.events],
                                    error=span.status.code == 2,
                                    event_attributes=[_attributes(event.attributes) for event in span.events],
                                )
                                for span in scope.spans
                            ]
            elif self.path == "/v1/metrics":
                request = metrics_pb.ExportMetricsServiceRequest.FromString(body)
                reply = metrics_pb.ExportMetricsServiceResponse()
                with got.lock:
                    for resource in request.resource_metrics:
                        for scope in resource.scope_metrics:
                            for metric in scope.metrics:
                                got.metrics.setdefault(metric.name, []).append(metric)
            else:
                self.send_error(404)
                return
            data = reply.SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        @override
        def log_message(self, format: str, *args: Any) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    got = Receiver(url=f"http://127.0.0.1:{server.server_address[1]}")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield got
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "FISKAI_", "OTEL_", "NO_TELE"))}
    base.update(XDG_STATE_HOME=str(tmp_path / "state"), NO_COLOR="1", ANTHROPIC_API_KEY="test-key")
    return base


_RUNS = RunProcesses()


@pytest.fixture(autouse=True)
def _reap() -> Iterator[None]:
    yield
    _RUNS.reap()


def fiskai(args: Sequence[str], env: Mapping[str, str], server: MessagesServer) -> tuple[int, str, str]:
    proc = _RUNS.start(args, env, server, cwd=Path(env["XDG_STATE_HOME"]).parent)
    out, err = proc.communicate(timeout=90)
    return proc.returncode, out, err


def agent(
    tmp_path: Path,
    receiver: Receiver,
    *,
    capture: str = "",
    knowledge: bool = False,
    embeddings: str = "",
    memory: bool = False,
) -> Path:
    """fixturectl with telemetry to `receiver` (with `knowledge`, an index to search; with `memory`, a file store)."""
    folder = tmp_path / "agent"
    shutil.copytree(_FIXTURECTL, folder)
    lines = [
        "identity: fixturectl",
        "application_path: ./fixturectl",
        "system_prompt: operate the cluster",
        "exclude: {tools: ['^fail$']}",
        "harness:",
        "  confirm_tags: [impact:rw]",
    ]
    if knowledge:
        docs = folder / "docs"
        docs.mkdir()
        (docs / "drain.md").write_text("# Draining\n\nDrain a node before maintenance.\n", encoding="utf-8")
        lines += ["  knowledge:", "    enabled: true", "    paths: [./docs]", "    directory: ./kstore"]
        if embeddings:
            lines += [f"    embeddings: {embeddings}"]
    if memory:
        lines += ["  memory:", "    enabled: true", "    options: {directory: ./memory}"]
    lines += [
        "llm: {model: claude-sonnet-4-6, no_tool_search: true}",
        "telemetry:",
        "  enabled: true",
        f"  endpoint: {receiver.url}",
    ]
    if capture:
        lines += ["  capture:", "    enabled: true", f"    messages: {capture}", "    max_bytes: 4096"]
    config = folder / "agent.yaml"
    config.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return config


def _remember(directory: Path, key: str, description: str) -> None:
    """One entry in a file memory store, as an earlier run would have left it."""
    import anyio

    from fiskai_memory import FileMemoryStore

    anyio.run(lambda: FileMemoryStore(directory).write(key, description, "body"))


def _trace_of(stderr: str) -> str:
    for word in stderr.split():
        if word.startswith("trace="):
            return word.removeprefix("trace=")
    raise AssertionError(f"no trace= in the run summary:\n{stderr}")


def test_a_run_exports_the_span_tree_attributes_and_metrics(
    tmp_path: Path, env: dict[str, str], receiver: Receiver
) -> None:
    """Steps:
    1. Build the knowledge index. 2. The model lists the nodes, searches the knowledge, then asks to drain
       n3 (gated, no terminal: denied), then answers. 3. The collector holds one trace of that run.
    """
    config = agent(tmp_path, receiver, knowledge=True, memory=True)
    _remember(config.parent / "memory", "drain-policy", "a note from an earlier run")
    built = subprocess.run(
        [sys.executable, "-m", "fiskai_cli", "-c", str(config), "knowledge", "index"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    script = [
        Turn([tool_use("cluster_node_list", {}, id="toolu_list")]),
        Turn([tool_use("knowledge_search", {"query": "drain a node"}, id="toolu_k")]),
        Turn([tool_use("cluster_node_drain", {"node": "n3", "reason": "maintenance"}, id="toolu_drain")]),
        Turn([text("n3 was not drained.")]),
    ]
    with MessagesServer(script) as server:
        code, out, err = fiskai(["-c", str(config), "run", "-v", "drain n3"], env, server)

    assert code == 0, err
    assert out == "n3 was not drained.\n"
    trace_id = _trace_of(err)
    assert len(trace_id) == 32
    assert {span.trace_id for span in receiver.spans} == {trace_id}
    (root,) = receiver.named("invoke_agent")
    assert root.name == "invoke_agent fixturectl"
    assert root.parent_id == ""
    (startup,) = receiver.named("startup")
    assert startup.parent_id == root.span_id
    chats = receiver.named("chat")
    assert [c.name for c in chats] == ["chat claude-sonnet-4-6"] * 4
    assert {c.parent_id for c in chats} == {root.span_id}
    assert sorted(c.attributes["fisk.llm.iteration"] for c in chats) == [0, 1, 2, 3]
    tools = {span.attributes.get("gen_ai.tool.name"): span for span in receiver.named("execute_tool")}
    assert set(tools) == {"cluster_node_list", "knowledge_search", "cluster_node_drain"}
    assert {span.parent_id for span in tools.values()} == {root.span_id}
    (retrieval,) = receiver.named("retrieval")
    assert retrieval.parent_id == tools["knowledge_search"].span_id
    assert retrieval.attributes["fisk.knowledge.search.status"] == "ok"
    assert retrieval.attributes["fisk.knowledge.indexed_chunks"] == 1  # the one short document

    listed, drained = tools["cluster_node_list"].attributes, tools["cluster_node_drain"]
    assert listed["fisk.tool.outcome"] == "executed"
    assert listed["fisk.tool.kind"] == "application"
    assert listed["fisk.tool.exit_code"] == 0
    assert drained.attributes["fisk.tool.outcome"] == "confirm_unanswered"
    assert drained.attributes["fisk.tool.arg_keys"] == ["node", "reason"]
    assert drained.error
    assert "gen_ai.tool.call.arguments" not in drained.attributes  # capture is off
    assert root.attributes["fisk.run.terminal_reason"] == "completed"
    assert root.attributes["fisk.run.tool_calls"] == 3
    assert chats[0].attributes["gen_ai.operation.name"] == "chat"
    assert {"gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", "fisk.llm.uncached_input_tokens"} <= set(
        chats[0].attributes
    )
    assert startup.attributes["fisk.tools.builtin"] >= 1
    (memory_index,) = receiver.named("memory_index")
    assert memory_index.parent_id == startup.span_id
    assert memory_index.attributes["fisk.memory.entries"] == 1
    assert memory_index.attributes["fisk.memory.backend"] == "file"

    assert {
        "gen_ai.client.token.usage",
        "gen_ai.client.operation.duration",
        "gen_ai.invoke_agent.duration",
        "gen_ai.invoke_agent.inference_calls",
        "gen_ai.invoke_agent.tool_calls",
        "gen_ai.execute_tool.duration",
    } <= set(receiver.metrics)
    duration = receiver.metrics["gen_ai.execute_tool.duration"][0]
    assert duration.unit == "s"
    assert list(duration.histogram.data_points[0].explicit_bounds)[:3] == [0.005, 0.01, 0.025]
    tokens = receiver.metrics["gen_ai.client.token.usage"][0]
    assert {point.attributes[-1].value.string_value for point in tokens.histogram.data_points} <= {"input", "output"}
    assert f"telemetry: {len(receiver.spans)} of {len(receiver.spans)} spans delivered" in err


def test_crash_and_resume_is_a_new_trace_that_continues_the_iteration_numbering(
    tmp_path: Path, env: dict[str, str], receiver: Receiver
) -> None:
    """Steps:
    1. A checkpointed run lists the nodes, then hangs on its second model call; SIGKILL.
    2. `--resume`: a new trace whose root says resumed, whose first chat is iteration 1.
    """
    config = agent(tmp_path, receiver)
    script = [Turn([tool_use("cluster_node_list", {}, id="toolu_list")]), Hang()]
    with MessagesServer(script, responder=lambda _: Turn([text("done")])) as server:
        proc = _RUNS.start(
            ["-c", str(config), "run", "--checkpoint", "--name", "otel-run", "list"],
            env,
            server,
            cwd=Path(env["XDG_STATE_HOME"]).parent,
        )
        server.wait_for_requests(2, timeout=30)
        proc.kill()
        proc.communicate(timeout=30)
        before = {span.trace_id for span in receiver.spans}
        code, _, err = fiskai(["-c", str(config), "run", "--resume", "otel-run"], env, server)

    assert code == 0, err
    trace_id = _trace_of(err)
    assert trace_id not in before
    resumed = [span for span in receiver.spans if span.trace_id == trace_id]
    (root,) = [span for span in resumed if span.name.startswith("invoke_agent")]
    assert root.attributes["fisk.run.resumed"] is True
    assert root.attributes["gen_ai.conversation.id"] == "otel-run"
    # The first process died without a terminal record; the session's totals include its model call,
    # the run's own counts only this process's.
    assert root.attributes["fisk.run.crashed"] is True
    assert root.attributes["fisk.session.llm_calls"] == 2
    assert root.attributes["fisk.run.tool_calls"] == 0
    assert root.attributes["fisk.session.usage.input_tokens"] > root.attributes["gen_ai.usage.input_tokens"]
    # A checkpointed run times its journal appends (reference 6.4), by backend.
    (appends, *_) = receiver.metrics["fisk.session.append.duration"]
    assert appends.unit == "s"
    backends = {a.value.string_value for p in appends.histogram.data_points for a in p.attributes}
    assert backends == {"file"}
    (chat,) = [span for span in resumed if span.name.startswith("chat")]
    assert chat.attributes["fisk.llm.iteration"] == 1


def test_capture_cuts_a_1_mb_tool_result_and_every_document_parses(
    tmp_path: Path, env: dict[str, str], receiver: Receiver
) -> None:
    config = agent(tmp_path, receiver, capture="delta")
    # fixturectl's captured model behind a script whose every command prints 1 MB.
    app = config.parent / "fixturectl"
    shutil.copy(_FIXTURECTL / "fixturectl.introspect.json", config.parent / "model.json")
    app.unlink()
    app.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = "--fisk-introspect" ]; then exec cat "$(dirname "$0")/model.json"; fi\n'
        "head -c 1000000 /dev/zero | tr '\\0' x\n",
        encoding="utf-8",
    )
    app.chmod(0o755)
    script = [
        Turn([tool_use("cluster_config_get", {"key": "motd"}, id="toolu_big")]),
        Turn([text("read")]),
    ]
    with MessagesServer(script) as server:
        code, _, err = fiskai(["-c", str(config), "run", "read the motd"], env, server)

    assert code == 0, err
    assert "content=exported" in err
    (startup,) = receiver.named("startup")
    assert json.loads(startup.attributes["gen_ai.system_instructions"]) == [
        {"type": "text", "content": "operate the cluster"}
    ]
    (tool,) = receiver.named("execute_tool")
    assert json.loads(tool.attributes["gen_ai.tool.call.arguments"]) == {"key": "motd"}
    result = tool.attributes["gen_ai.tool.call.result"]
    assert len(result.encode()) <= 4096
    assert json.loads(result).endswith("bytes omitted]")
    assert tool.attributes["fisk.content.truncated"] is True
    chats = receiver.named("chat")
    for chat in chats:
        json.loads(chat.attributes["gen_ai.input.messages"])
        json.loads(chat.attributes["gen_ai.output.messages"])
    second = next(c for c in chats if c.attributes["fisk.llm.iteration"] == 1)
    # Delta: the first call exported the prompt (input) and its reply (output); the second only the tool result.
    sent = json.loads(second.attributes["gen_ai.input.messages"])
    assert second.attributes["fisk.content.from_index"] == 2
    assert [message["role"] for message in sent] == ["tool"]
    assert second.attributes["fisk.content.from_index"] + len(sent) == second.attributes["fisk.llm.messages"]
    assert second.attributes["fisk.content.truncated"] is True


def test_refusals_and_the_off_switch(tmp_path: Path, env: dict[str, str], receiver: Receiver) -> None:
    config = agent(tmp_path, receiver)
    with MessagesServer([Turn([text("ok")])]) as server:
        code, _, err = fiskai(["-c", str(config), "run", "hi"], {**env, "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, server)
        assert code == 1
        assert "OTEL_EXPORTER_OTLP_PROTOCOL=grpc" in err
        assert "Traceback" not in err
        code, _, err = fiskai(["-c", str(config), "run", "--no-telemetry", "hi"], env, server)
    assert code == 0, err
    assert "trace=" not in err
    assert receiver.spans == []


@pytest.mark.nats
def test_a_remote_tool_over_nats_joins_the_callers_trace(
    tmp_path: Path, env: dict[str, str], receiver: Receiver, nats_server: str
) -> None:
    """Steps:
    1. `fiskai a2a` serves fixturectl over a real nats-server, exporting to the receiver.
    2. A caller agent with no application of its own imports its tools and calls cluster_node_list.
    3. The served call's execute_tool span is in the caller's trace, under its `invoke_agent fixturectl`.
    """
    contexts = tmp_path / "config" / "nats" / "context"
    contexts.mkdir(parents=True)
    (contexts / "test-nats.json").write_text(json.dumps({"url": nats_server}), encoding="utf-8")
    env = {**env, "XDG_CONFIG_HOME": str(tmp_path / "config")}
    served_config = agent(tmp_path, receiver)
    with served_config.open("a", encoding="utf-8") as out:
        out.write("nats_context: test-nats\nexpose: {agent: {agent_to_agent: true}}\n")
    caller = tmp_path / "caller.yaml"
    caller.write_text(
        "identity: caller\nsystem_prompt: ask fixturectl\nnats_context: test-nats\n"
        "remote_tools: [{name: fixturectl}]\n"
        f"llm: {{model: claude-sonnet-4-6, no_tool_search: true}}\ntelemetry: {{enabled: true, endpoint: {receiver.url}}}\n",
        encoding="utf-8",
    )
    server = subprocess.Popen(
        [sys.executable, "-m", "fiskai_cli", "-c", str(served_config), "a2a"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stderr is not None
        started: list[str] = []
        for line in server.stderr:
            started.append(line)
            if line.startswith("Serving "):
                break
        else:
            pytest.fail(f"fiskai a2a did not start: {''.join(started)}")
        script = [Turn([tool_use("cluster_node_list", {}, id="toolu_remote")]), Turn([text("listed")])]
        with MessagesServer(script) as model:
            code, out, err = fiskai(["-c", str(caller), "run", "list the nodes"], env, model)
    finally:
        server.terminate()
        server.communicate(timeout=30)

    assert code == 0, err
    assert out == "listed\n"
    trace_id = _trace_of(err)
    (remote,) = [span for span in receiver.named("invoke_agent") if span.name == "invoke_agent fixturectl"]
    assert remote.trace_id == trace_id
    assert remote.attributes["fisk.tool.remote_agent"] == "fixturectl"
    caller_tool = receiver.by_id(remote.parent_id)
    assert caller_tool.name == "execute_tool cluster_node_list"
    assert caller_tool.attributes["fisk.tool.remote"] is True
    served = [span for span in receiver.named("execute_tool") if span.parent_id == remote.span_id]
    assert [span.name for span in served] == ["execute_tool cluster_node_list"]
    assert served[0].trace_id == trace_id
    assert served[0].attributes["fisk.tool.outcome"] == "executed"


def test_embeddings_spans_http_attempt_events_and_the_root_run_attributes(
    tmp_path: Path, env: dict[str, str], receiver: Receiver
) -> None:
    """Steps:
    1. Index through a local OpenAI-compatible embeddings server.
    2. The model server answers the first attempt 529, then lists the nodes; the model searches the
       knowledge, then answers.
    3. The chat span of the retried call has both attempts' events and its resend count; the search's
       `retrieval` span has an `embeddings <model>` child; the root names the switches the run used.
    """
    from fiskai_rag.testing import EmbeddingsServer

    with EmbeddingsServer(use_static_model=False) as vectors:
        embeddings = f"{{base_url: '{vectors.base_url}', model: {vectors.model}}}"
        config = agent(tmp_path, receiver, knowledge=True, embeddings=embeddings)
        built = subprocess.run(
            [sys.executable, "-m", "fiskai_cli", "-c", str(config), "knowledge", "index"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert built.returncode == 0, built.stderr
        receiver.spans.clear()  # indexing is not instrumented, but be sure only the run is looked at
        script = [
            Failure(529, retry_after=0.01),
            Turn([tool_use("knowledge_search", {"query": "drain a node"}, id="toolu_k")]),
            Turn([text("drain it first")]),
        ]
        with MessagesServer(script) as server:
            code, _, err = fiskai(["-c", str(config), "run", "how do I drain?"], env, server)
        assert code == 0, err
        searched = list(receiver.spans)
        # The same search with the embeddings server refusing: the search degrades to lexical, and says so.
        receiver.spans.clear()
        vectors.status = 400
        again = [Turn([tool_use("knowledge_search", {"query": "drain a node"}, id="toolu_k2")]), Turn([text("ok")])]
        with MessagesServer(again) as server:
            code, _, err = fiskai(["-c", str(config), "run", "again"], env, server)
        assert code == 0, err
        degraded, failed = receiver.named("retrieval")[0], receiver.named("embeddings")[0]
        receiver.spans[:] = searched

    assert degraded.attributes["fisk.knowledge.degraded"] is True
    assert degraded.attributes["fisk.knowledge.degraded_reason"] == "embeddings"
    assert (failed.error, failed.attributes["http.response.status_code"]) == (True, 400)
    assert "fisk.knowledge.degraded_searches" in receiver.metrics
    (retrieval,) = receiver.named("retrieval")
    (embedded,) = receiver.named("embeddings")
    assert embedded.name == f"embeddings {vectors.model}"
    assert embedded.parent_id == retrieval.span_id
    attributes = embedded.attributes
    assert (attributes["fisk.embeddings.inputs"], attributes["fisk.embeddings.purpose"]) == (1, "query")
    assert (attributes["server.address"], attributes["http.response.status_code"]) == ("127.0.0.1", 200)
    assert attributes["server.port"] == int(vectors.base_url.rsplit(":", 1)[1].split("/")[0])
    assert retrieval.attributes["fisk.knowledge.search.status"] == "ok"

    first = next(c for c in receiver.named("chat") if c.attributes["fisk.llm.iteration"] == 0)
    assert first.events == ["fisk.llm.http_response", "fisk.llm.http_response"]
    assert first.attributes["http.request.resend_count"] == 1
    statuses = [(e["fisk.llm.http_attempt"], e["http.response.status_code"]) for e in first.event_attributes]
    assert statuses == [(1, 529), (2, 200)]
    assert all(e["fisk.llm.http_duration_ms"] >= 0 for e in first.event_attributes)
    second = next(c for c in receiver.named("chat") if c.attributes["fisk.llm.iteration"] == 1)
    assert second.events == ["fisk.llm.http_response"] and "http.request.resend_count" not in second.attributes

    (root,) = receiver.named("invoke_agent")
    for key in ("fisk.llm.thinking", "fisk.llm.prompt_cache", "fisk.llm.tool_search", "fisk.run.crashed"):
        assert isinstance(root.attributes[key], bool), key
    assert root.attributes["fisk.run.crashed"] is False
    assert root.attributes["gen_ai.usage.cache_read.input_tokens"] >= 0
    assert "fisk.session.llm_calls" not in root.attributes  # not a resumed run


def test_an_in_process_contextual_models_query_is_an_embeddings_span_under_retrieval(
    tmp_path: Path, env: dict[str, str], receiver: Receiver
) -> None:
    """Steps:
    1. Index with a tiny contextual (BERT) model in process: `embeddings` names a model directory, no server.
    2. The model searches the knowledge, then answers.
    3. The `retrieval` span has an `embeddings <model>` child for the query, without server attributes.
    """
    pytest.importorskip("onnxruntime", reason="the semantic extra (onnxruntime) is not installed")
    from fiskai_rag.testing import build_bert_model

    model = build_bert_model(tmp_path / "bert", ["drain", "a", "node", "before", "maintenance", "how", "do", "i"])
    config = agent(tmp_path, receiver, knowledge=True, embeddings=f"{{model: '{model}'}}")
    built = subprocess.run(
        [sys.executable, "-m", "fiskai_cli", "-c", str(config), "knowledge", "index"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    assert "hybrid" in built.stdout + built.stderr, built.stdout + built.stderr
    script = [Turn([tool_use("knowledge_search", {"query": "drain a node"}, id="toolu_k")]), Turn([text("drain")])]
    with MessagesServer(script) as server:
        code, _, err = fiskai(["-c", str(config), "run", "how do I drain?"], env, server)

    assert code == 0, err
    (retrieval,) = receiver.named("retrieval")
    (embedded,) = receiver.named("embeddings")
    assert embedded.name.startswith("embeddings bert:") and embedded.name.endswith("bert")
    assert embedded.parent_id == retrieval.span_id
    assert (embedded.attributes["fisk.embeddings.inputs"], embedded.attributes["fisk.embeddings.purpose"]) == (
        1,
        "query",
    )
    assert not embedded.error
    assert "server.address" not in embedded.attributes and "http.response.status_code" not in embedded.attributes
    assert retrieval.attributes["fisk.knowledge.search.status"] == "ok"
