"""`harness.pii.mode` end to end: a real `fiskai run` whose tool prints a customer record.

The tool is fixturectl's captured model behind a script that prints an email address and a card number;
the model is the scripted Messages server; telemetry goes, with content capture on, to an in-process
OTLP/HTTP receiver. What the model was sent (as the server recorded it), the journal file and the exported
spans must all hold the redacted form, and never the values; `reject` refuses a prompt and withholds a
result; `off` lets both through.
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
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from typing_extensions import override

from fiskai_agent.testing import MessagesServer, Turn, text, tool_use
from fiskai_core.pii import RESULT_WITHHELD
from fiskai_runstate import FileJournalStore, decode_record

trace_pb = pytest.importorskip(
    "opentelemetry.proto.collector.trace.v1.trace_service_pb2", reason="needs opentelemetry-proto (dev group)"
)

_FIXTURECTL = Path(__file__).resolve().parents[1] / "examples" / "fixturectl"
EMAIL = "maria.gonzalez@northwind-traders.com"
CARD = "4532 0151 1283 0366"
CUSTOMER = f'{{"customer": 48211, "email": "{EMAIL}", "card": "{CARD}", "status": "active"}}'


class Spans:
    """The spans an OTLP/HTTP collector received, as `{name: attributes}` lists."""

    def __init__(self) -> None:
        self.spans: list[tuple[str, dict[str, Any]]] = []
        self.lock = threading.Lock()

    def named(self, prefix: str) -> list[dict[str, Any]]:
        with self.lock:
            return [attrs for name, attrs in self.spans if name.startswith(prefix)]


@pytest.fixture
def collector() -> Iterator[tuple[str, Spans]]:
    got = Spans()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            if self.path == "/v1/traces":
                request = trace_pb.ExportTraceServiceRequest.FromString(body)
                with got.lock:
                    for resource in request.resource_spans:
                        for scope in resource.scope_spans:
                            for span in scope.spans:
                                attrs = {
                                    a.key: getattr(a.value, a.value.WhichOneof("value") or "string_value")
                                    for a in span.attributes
                                }
                                got.spans.append((span.name, attrs))
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

        @override
        def log_message(self, format: str, *args: Any) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", got
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "FISKAI_", "OTEL_", "NO_TELE"))}
    base.update(XDG_STATE_HOME=str(tmp_path / "state"), NO_COLOR="1", ANTHROPIC_API_KEY="test-key")
    return base


def agent(tmp_path: Path, endpoint: str, mode: str | None) -> Path:
    """fixturectl whose every command prints the customer record, with capture on and `harness.pii.mode`."""
    folder = tmp_path / "agent"
    shutil.copytree(_FIXTURECTL, folder)
    shutil.copy(_FIXTURECTL / "fixturectl.introspect.json", folder / "model.json")
    app = folder / "fixturectl"
    app.unlink()
    app.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = "--fisk-introspect" ]; then exec cat "$(dirname "$0")/model.json"; fi\n'
        f"echo '{CUSTOMER}'\n",
        encoding="utf-8",
    )
    app.chmod(0o755)
    lines = [
        "identity: fixturectl",
        "application_path: ./fixturectl",
        "system_prompt: operate the cluster",
        "exclude: {tools: ['^fail$']}",
        "harness:",
        "  confirm_tags: [impact:rw]",
    ]
    if mode is not None:
        lines += ["  pii:", f"    mode: {mode}"]
    lines += [
        "llm: {model: claude-sonnet-4-6, no_tool_search: true}",
        "telemetry:",
        "  enabled: true",
        f"  endpoint: {endpoint}",
        "  capture: {enabled: true, messages: full, max_bytes: 65536}",
    ]
    config = folder / "agent.yaml"
    config.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return config


def fiskai(
    config: Path, env: Mapping[str, str], script: Sequence[Turn], prompt: str
) -> tuple[subprocess.CompletedProcess[str], MessagesServer]:
    with MessagesServer(list(script)) as server:
        done = subprocess.run(
            [sys.executable, "-m", "fiskai_cli", "-c", str(config), "run", "--checkpoint", "--name", "pii", prompt],
            cwd=config.parent,
            env={**env, "ANTHROPIC_BASE_URL": server.base_url},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    return done, server


def journal(env: Mapping[str, str]) -> tuple[bytes, list[Any]]:
    path = FileJournalStore(Path(env["XDG_STATE_HOME"]) / "fiskai" / "runs").journal_path("pii")
    raw = path.read_bytes()
    records = [decode_record(line, run_id="pii", line_no=n) for n, line in enumerate(raw.split(b"\n")[:-1], 1)]
    return raw, records


SCRIPT = [Turn([tool_use("cluster_config_get", {"key": "motd"}, id="toolu_c")]), Turn([text("done")])]


def test_redact_reaches_the_model_the_journal_and_telemetry_redacted(
    tmp_path: Path, env: dict[str, str], collector: tuple[str, Spans]
) -> None:
    endpoint, spans = collector
    config = agent(tmp_path, endpoint, None)  # no block: redact is the default
    done, server = fiskai(config, env, SCRIPT, "look up the customer; reply to jane.roe@example.com")

    assert done.returncode == 0, done.stderr
    first, second = server.requests
    assert first.messages[0]["content"][0]["text"] == "look up the customer; reply to [REDACTED:EMAIL]"
    (result,) = second.tool_results()
    sent = json.dumps(result["content"])
    assert "[REDACTED:EMAIL]" in sent and "[REDACTED:CREDIT_CARD]" in sent
    assert EMAIL not in sent and CARD not in sent

    raw, records = journal(env)
    assert EMAIL.encode() not in raw and CARD.encode() not in raw and b"jane.roe@example.com" not in raw
    assert records[0].payload.prompt == "look up the customer; reply to [REDACTED:EMAIL]"
    (journaled,) = [r.payload for r in records if r.kind == "tool_result"]
    assert journaled.result["hooks"] == [
        {"point": "post_tool_use", "hook": "pii", "decision": "redact", "counts": {"CREDIT_CARD": 1, "EMAIL": 1}}
    ]

    (tool,) = spans.named("execute_tool")
    captured = tool["gen_ai.tool.call.result"]
    assert "[REDACTED:EMAIL]" in captured and EMAIL not in captured and CARD not in captured
    for chat in spans.named("chat"):
        assert (
            EMAIL not in chat["gen_ai.input.messages"] and "jane.roe@example.com" not in chat["gen_ai.input.messages"]
        )
    assert "redacted 1 CREDIT_CARD, 1 EMAIL" in done.stderr


def test_reject_refuses_a_prompt_before_anything_is_sent(
    tmp_path: Path, env: dict[str, str], collector: tuple[str, Spans]
) -> None:
    config = agent(tmp_path, collector[0], "reject")
    done, server = fiskai(config, env, SCRIPT, "card 4532015112830366 was declined, why?")

    assert done.returncode == 1
    assert "prompt refused: it contains personal data or secrets (harness.pii.mode: reject)" in done.stderr
    assert "found CREDIT_CARD" in done.stderr
    assert server.requests == []


def test_reject_withholds_a_tool_result_with_the_fixed_message(
    tmp_path: Path, env: dict[str, str], collector: tuple[str, Spans]
) -> None:
    endpoint, spans = collector
    config = agent(tmp_path, endpoint, "reject")
    done, server = fiskai(config, env, SCRIPT, "look up the customer")

    assert done.returncode == 0, done.stderr
    (result,) = server.requests[1].tool_results()
    assert result["is_error"] is True
    assert RESULT_WITHHELD in json.dumps(result["content"])
    assert EMAIL not in json.dumps(result["content"])
    raw, records = journal(env)
    assert EMAIL.encode() not in raw and CARD.encode() not in raw
    (journaled,) = [r.payload for r in records if r.kind == "tool_result"]
    assert journaled.result["hooks"] == [
        {"point": "post_tool_use", "hook": "pii", "decision": "withhold", "counts": {"CREDIT_CARD": 1, "EMAIL": 1}}
    ]
    (tool,) = spans.named("execute_tool")
    assert EMAIL not in tool["gen_ai.tool.call.result"]
    assert '"cluster_config_get": result withheld (1 CREDIT_CARD, 1 EMAIL)' in done.stderr


def test_off_lets_the_values_through(tmp_path: Path, env: dict[str, str], collector: tuple[str, Spans]) -> None:
    config = agent(tmp_path, collector[0], "off")
    done, server = fiskai(config, env, SCRIPT, "look up jane.roe@example.com")

    assert done.returncode == 0, done.stderr
    assert server.requests[0].messages[0]["content"][0]["text"] == "look up jane.roe@example.com"
    (result,) = server.requests[1].tool_results()
    assert EMAIL in json.dumps(result["content"]) and CARD in json.dumps(result["content"])
    _, records = journal(env)
    (journaled,) = [r.payload for r in records if r.kind == "tool_result"]
    assert "hooks" not in journaled.result


def test_a_bad_mode_is_a_clear_configuration_error(
    tmp_path: Path, env: dict[str, str], collector: tuple[str, Spans]
) -> None:
    config = agent(tmp_path, collector[0], "mask")
    done, server = fiskai(config, env, SCRIPT, "hello")

    assert done.returncode != 0
    assert 'harness.pii.mode: got the string "mask"; expected one of redact, reject or off' in done.stderr
    assert "Traceback" not in done.stderr
    assert server.requests == []
