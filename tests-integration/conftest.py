"""A real llama.cpp `llama-server` for the local-model tests (tests-integration/test_llama_server.py).

`.ci/run` builds `llama-server` once from PyPI's llama-cpp-python 0.3.36 sdist (`.ci/build-llama-server`)
and keeps it, the sdist's 128k-token Llama-3 vocabulary and its Qwen 2.5 chat template in a cache
folder; `FISKAI_LLAMA_SERVER` names the binary. Without it the tests skip with one line.

The model is written here, in seconds, with the `gguf` package: a 2-layer, 64-dimension llama in f16.
Its weights are chosen, not trained, so that it behaves the same on every machine: each layer adds
nothing (zero output projections), which makes it a bigram model whose next token is a fixed choice
of the current one. Free text is " list streams" then end of text; where the server's grammar forbids
end of text (a forced `tool_choice`), it goes on with "<tool_call>\n{" (the chat template's call
format) and the grammar writes the call, ending with "}" and "</tool_call>" then end of text. Inside
the call the choice among the tokens the grammar allows is arbitrary (fixed, not meaningful); a string
argument may not close, so a test forces a call whose schema admits only `{}`. The server, its request conversion, grammar, SSE framing and errors are the real ones.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from typing_extensions import override

LLAMA_CPP_PYTHON = "0.3.36"
# Where .ci/run builds it; read now, as the suite points XDG_CACHE_HOME at a temp folder per test.
_DEFAULT_DIR = (
    Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "fiskai" / f"llama-server-{LLAMA_CPP_PYTHON}"
)
_NAMED = os.environ.get("FISKAI_LLAMA_SERVER")
_EMBED, _LAYERS, _HEADS, _FFN = 64, 2, 4, 128


@pytest.fixture(scope="session")
def llama_server_binary() -> Path:
    """The built `llama-server`, with the vocabulary and chat template beside it; skips when absent."""
    binary = Path(_NAMED) if _NAMED else _DEFAULT_DIR / "llama-server"
    if not binary.is_file():
        pytest.skip(
            f"FISKAI_LLAMA_SERVER names {binary}, which does not exist"
            if _NAMED
            else f"llama-server is not built at {binary}: run .ci/build-llama-server {_DEFAULT_DIR} (.ci/run does)"
        )
    for name in ("ggml-vocab-llama-bpe.gguf", "chat-template.jinja"):
        if not (binary.parent / name).is_file():
            pytest.skip(f"{binary.parent / name} is missing: rerun .ci/build-llama-server {binary.parent}")
    return binary


def write_tiny_model(vocab: Path, template: str, out: Path) -> None:
    """Write the bigram llama described in the module docstring to `out` (about 33 MB)."""
    import gguf
    import numpy as np

    reader = gguf.GGUFReader(vocab)
    fields = reader.fields
    tokens: list[str] = fields["tokenizer.ggml.tokens"].contents()
    n_vocab = len(tokens)
    eos = int(fields["tokenizer.ggml.eos_token_id"].contents())

    def tid(text: str) -> int:
        return tokens.index(text.replace(" ", "\u0120"))  # byte-level BPE writes a space as "Ġ"

    rng = np.random.default_rng(34)
    embed = np.zeros((n_vocab, _EMBED), dtype=np.float32)
    embed[:, 0] = 1.0  # a constant channel: the base preference of every next token
    embed[:, 12:] = rng.normal(0, 0.01, (n_vocab, _EMBED - 12))  # breaks ties, the same way every time
    out_w = np.zeros((n_vocab, _EMBED), dtype=np.float32)
    out_w[:, 12:] = rng.normal(0, 0.01, (n_vocab, _EMBED - 12))
    first, second, stream, ls, quote, close = (
        tid(" list"),
        tid(" streams"),
        tid("stream"),
        tid("_ls"),
        tid('"'),
        tid("}"),
    )
    out_w[first, 0], out_w[stream, 0], out_w[ls, 0], out_w[close, 0] = 10, 8, 7, 5
    embed[first, 1] = 1.0  # after " list": " streams"
    out_w[second, 1] = 20
    embed[second, 2] = 1.0  # after " streams": end of text, or (inside a string) the closing quote
    out_w[eos, 2], out_w[quote, 2] = 30, 20
    # Where end of text is not allowed (a forced tool call), " streams" goes on with "<tool_call>\n{",
    # the opening of a call in the chat template's format, and a call ends with end of text.
    angle, tool, call, gt_nl, gt, brace = tid("<"), tid("tool"), tid("_call"), tid(">\u010a"), tid(">"), tid('{"')
    out_w[angle, 2] = 25
    for channel, (after, following) in enumerate(((angle, tool), (tool, call), (call, gt_nl)), start=3):
        embed[after, channel] = 1.0
        out_w[following, channel] = 20
    out_w[gt, 5] = 15
    embed[gt_nl, 6] = 1.0
    out_w[brace, 6], out_w[eos, 6] = 20, 15
    embed[gt, 7] = 1.0
    out_w[eos, 7] = 20
    # After a closing brace: end of text where allowed, else the closing "</tool_call>".
    for after in (close, tid("}\u010a")):
        embed[after, 8] = 1.0
    out_w[eos, 8], out_w[tid("</"), 8] = 25, 20
    embed[tid("</"), 3] = 1.0  # then "tool", "_call", ">"

    writer = gguf.GGUFWriter(out, "llama")
    writer.add_name("fiskai tiny bigram")
    writer.add_context_length(32768)
    writer.add_embedding_length(_EMBED)
    writer.add_block_count(_LAYERS)
    writer.add_feed_forward_length(_FFN)
    writer.add_head_count(_HEADS)
    writer.add_head_count_kv(_HEADS)
    writer.add_rope_dimension_count(_EMBED // _HEADS)
    writer.add_rope_freq_base(500000.0)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_vocab_size(n_vocab)
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    writer.add_tokenizer_model(fields["tokenizer.ggml.model"].contents())
    writer.add_tokenizer_pre(fields["tokenizer.ggml.pre"].contents())
    writer.add_token_list(tokens)
    writer.add_token_types(fields["tokenizer.ggml.token_type"].contents())
    writer.add_token_merges(fields["tokenizer.ggml.merges"].contents())
    writer.add_bos_token_id(int(fields["tokenizer.ggml.bos_token_id"].contents()))
    writer.add_eos_token_id(eos)
    writer.add_chat_template(template)

    def f16(array: np.ndarray) -> np.ndarray:
        return array.astype(np.float16)

    writer.add_tensor("token_embd.weight", f16(embed))
    writer.add_tensor("output_norm.weight", np.ones(_EMBED, dtype=np.float32))
    writer.add_tensor("output.weight", f16(out_w))
    for layer in range(_LAYERS):
        blk = f"blk.{layer}"
        writer.add_tensor(f"{blk}.attn_norm.weight", np.ones(_EMBED, dtype=np.float32))
        writer.add_tensor(f"{blk}.ffn_norm.weight", np.ones(_EMBED, dtype=np.float32))
        for name in ("attn_q", "attn_k", "attn_v"):
            writer.add_tensor(f"{blk}.{name}.weight", f16(rng.normal(0, 0.02, (_EMBED, _EMBED))))
        writer.add_tensor(f"{blk}.attn_output.weight", f16(np.zeros((_EMBED, _EMBED))))
        writer.add_tensor(f"{blk}.ffn_gate.weight", f16(rng.normal(0, 0.02, (_FFN, _EMBED))))
        writer.add_tensor(f"{blk}.ffn_up.weight", f16(rng.normal(0, 0.02, (_FFN, _EMBED))))
        writer.add_tensor(f"{blk}.ffn_down.weight", f16(np.zeros((_EMBED, _FFN))))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


_MODEL_NAME = "tiny-bigram-v2-f16.gguf"
"""Change the version when `write_tiny_model` changes: a cached model is reused by name."""


@pytest.fixture(scope="session")
def tiny_model(llama_server_binary: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny model: written once beside the binary (reading the vocabulary takes a while), else per session."""
    folder = llama_server_binary.parent
    cached = folder / _MODEL_NAME
    if cached.is_file():
        return cached
    template = (folder / "chat-template.jinja").read_text(encoding="utf-8")
    vocab = folder / "ggml-vocab-llama-bpe.gguf"
    partial = folder / f".{_MODEL_NAME}.{os.getpid()}"
    try:
        write_tiny_model(vocab, template, partial)
        os.replace(partial, cached)  # whole or absent, should two sessions write it at once
    except OSError:  # a read-only cache: this session writes its own
        partial.unlink(missing_ok=True)
        cached = tmp_path_factory.mktemp("llama-model") / _MODEL_NAME
        write_tiny_model(vocab, template, cached)
    return cached


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class LlamaServer:
    """One `llama-server` process on a free loopback port; its own log is kept in `log`."""

    def __init__(self, binary: Path, model: Path, log: Path, extra: Sequence[str] = ()) -> None:
        self.port = _free_port()
        self.log = log
        self.url = f"http://127.0.0.1:{self.port}"
        # One thread and one slot: the machine is shared, and a run makes one call at a time.
        args = [str(binary), "-m", str(model), "--host", "127.0.0.1", "--port", str(self.port), "--jinja"]
        args += ["-c", "16384", "-np", "1", "-t", "1", "-tb", "1", "--seed", "34", "--no-webui", *extra]
        with log.open("wb") as sink:
            self.proc = subprocess.Popen(args, stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self._wait_ready()

    def _wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"llama-server exited with {self.proc.returncode}: {self.log_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{self.url}/health", timeout=2) as answer:
                    if json.loads(answer.read()).get("status") == "ok":
                        return
            except (OSError, ValueError, urllib.error.HTTPError):
                pass
            time.sleep(0.1)
        self.kill()
        pytest.fail(f"llama-server was not ready in {timeout:g}s: {self.log_text()[-2000:]}")

    def log_text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace") if self.log.exists() else ""

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=30)


@pytest.fixture
def start_llama(llama_server_binary: Path, tiny_model: Path, tmp_path: Path) -> Iterator[Callable[..., LlamaServer]]:
    """Starts `llama-server`s for one test (`start_llama("--ignore-eos")`); every one is killed afterwards."""
    started: list[LlamaServer] = []

    def start(*extra: str) -> LlamaServer:
        server = LlamaServer(llama_server_binary, tiny_model, tmp_path / f"llama-server-{len(started)}.log", extra)
        started.append(server)
        return server

    try:
        yield start
    finally:
        for server in started:
            server.kill()


@pytest.fixture
def llama_server(start_llama: Callable[..., LlamaServer]) -> LlamaServer:
    """A fresh `llama-server` for one test (a test may kill it)."""
    return start_llama()


class RequestLog:
    """A logging proxy in front of a model server: the request log of what each run sent.

    Every request is relayed unchanged, streamed responses chunk by chunk; each POST body is recorded
    (`entries`, and one JSON line per request in `path`). `inject[i]` adds fields to the i-th POST
    before it is relayed (the server's `tool_choice`, to obtain a real tool call from a model that has
    no reason to make one), or is a function of the sent body returning them; the log keeps what fiskai
    sent and, apart, what was added. `on_stream`
    is called once the first streamed bytes went out (a test kills the server there).
    """

    def __init__(self, upstream: str, path: Path) -> None:
        self.upstream = urlsplit(upstream)
        self.path = path
        self.entries: list[dict[str, Any]] = []
        self.inject: dict[int, dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]]] = {}
        self.on_stream: Callable[[], None] | None = None
        log = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            @override
            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                log.relay(self, b"")

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                log.relay(self, body)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> RequestLog:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _record(self, handler: BaseHTTPRequestHandler, body: bytes) -> bytes:
        sent = json.loads(body)
        index = len(self.entries)
        extra = self.inject.get(index, {})
        if callable(extra):  # built from what fiskai sent (a test narrows its tools)
            extra = extra(sent)
        tools = sent.get("tools", [])
        text = body.decode()
        entry = {
            "index": index,
            "path": handler.path,
            "model": sent.get("model"),
            "stream": bool(sent.get("stream")),
            "max_tokens": sent.get("max_tokens"),
            "tools": [tool.get("name") for tool in tools],
            "tools_bytes": len(json.dumps(tools, separators=(",", ":")).encode()),
            "defer_loading": "defer_loading" in text,
            "tool_search_tool": any(str(tool.get("type", "")).startswith("tool_search") for tool in tools),
            "cache_control": "cache_control" in text,
            "thinking": sent.get("thinking"),
            "injected": extra,
            "body": sent,
        }
        self.entries.append(entry)
        with self.path.open("a", encoding="utf-8") as file:
            file.write(json.dumps(entry) + "\n")
        return json.dumps({**sent, **extra}).encode() if extra else body

    def relay(self, handler: BaseHTTPRequestHandler, body: bytes) -> None:
        if handler.command == "POST" and handler.path.startswith("/v1/messages"):
            body = self._record(handler, body)
        headers = {k: v for k, v in handler.headers.items() if k.lower() not in ("host", "content-length")}
        headers["Content-Length"] = str(len(body))
        upstream = http.client.HTTPConnection(self.upstream.hostname or "", self.upstream.port or 80, timeout=120)
        try:
            upstream.request(handler.command, handler.path, body if handler.command == "POST" else None, headers)
            answer = upstream.getresponse()
        except OSError:
            handler.send_error(502, "request log proxy: the model server did not answer")
            upstream.close()
            return
        handler.send_response(answer.status)
        for key, value in answer.getheaders():
            if key.lower() not in ("transfer-encoding", "connection", "content-length"):
                handler.send_header(key, value)
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        started = False
        try:
            while chunk := answer.read1(65536):
                handler.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                handler.wfile.flush()
                if not started and "event-stream" in (answer.getheader("content-type") or ""):
                    started = True
                    if self.on_stream is not None:
                        self.on_stream()
            handler.wfile.write(b"0\r\n\r\n")
        except (OSError, http.client.HTTPException):
            # The server went away mid-answer: so does this connection, without the closing chunk.
            handler.close_connection = True
            with contextlib.suppress(OSError):
                handler.connection.shutdown(socket.SHUT_RDWR)
        finally:
            upstream.close()


@pytest.fixture
def request_log(llama_server: LlamaServer, tmp_path: Path) -> Iterator[RequestLog]:
    """A `RequestLog` in front of the test's `llama_server`; the log is `tmp_path/requests.jsonl`."""
    with RequestLog(llama_server.url, tmp_path / "requests.jsonl") as log:
        yield log


@pytest.fixture
def request_log_for(tmp_path: Path) -> Iterator[Callable[[LlamaServer], RequestLog]]:
    """Puts a `RequestLog` in front of a server the test started itself; each is stopped afterwards."""
    opened: list[RequestLog] = []

    def open_for(server: LlamaServer) -> RequestLog:
        log = RequestLog(server.url, tmp_path / f"requests-{len(opened)}.jsonl").__enter__()
        opened.append(log)
        return log

    try:
        yield open_for
    finally:
        for log in opened:
            log.__exit__(None, None, None)
