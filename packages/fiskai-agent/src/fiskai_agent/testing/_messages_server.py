"""A scripted Anthropic Messages API over real HTTP, for tests and benches.

The real `anthropic` SDK (or `fiskai run` in a subprocess, through `ANTHROPIC_BASE_URL`) talks to it
on a loopback port, so retries, timeouts, SSE parsing and the request JSON are the SDK's own, not a
mock's. Each `POST /v1/messages` takes the next step of a script: a `Turn` (content blocks, a stop
reason, usage), a `Failure` (an HTTP error, optionally with `retry-after`), `Hang` (no answer until
the client gives up) or `Drop` (the connection closes with no answer). A step may also be a callable
that builds the step from the request, and a `responder` callable can drive every request instead.
Every request body is recorded, so tests assert on the tools, deferral, cache breakpoints and
thinking that were sent.

`local=True` behaves like an Anthropic-compatible local server (Ollama, llama.cpp, vLLM): a request
carrying `defer_loading` or a tool-search server tool is refused with a 400 naming the field, as
those servers answer unknown fields, and no usage is ever reported as cached.
"""

from __future__ import annotations

import itertools
import json
import math
import select
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, ClassVar, Self, cast

__all__ = [
    "Drop",
    "Failure",
    "Hang",
    "MessagesServer",
    "RecordedRequest",
    "Step",
    "Turn",
    "Usage",
    "redacted_thinking",
    "server_tool_use",
    "text",
    "thinking",
    "tool_search",
    "tool_search_result",
    "tool_use",
]

from ._messages_script import (
    Block,
    Drop,
    Failure,
    Hang,
    RawJSON,
    Turn,
    Usage,
    dumps,
    redacted_thinking,
    server_tool_use,
    text,
    thinking,
    tool_search,
    tool_search_result,
    tool_use,
)


@dataclass(frozen=True)
class RecordedRequest:
    """One request as received: the parsed JSON body and the lower-cased headers."""

    index: int
    path: str
    headers: Mapping[str, str]
    body: Mapping[str, Any]
    raw: bytes

    @property
    def stream(self) -> bool:
        """Whether the client asked for SSE."""
        return bool(self.body.get("stream"))

    @property
    def tools(self) -> list[Mapping[str, Any]]:
        """The `tools` array, or empty."""
        return list(self.body.get("tools") or [])

    @property
    def tool_names(self) -> list[str]:
        """Names of every tool sent, in order (server tools included)."""
        return [str(tool.get("name", "")) for tool in self.tools]

    @property
    def deferred_tool_names(self) -> list[str]:
        """Names of the tools sent with `defer_loading: true`."""
        return [str(tool.get("name", "")) for tool in self.tools if tool.get("defer_loading")]

    @property
    def loaded_tool_names(self) -> list[str]:
        """Names of the tools whose full definition the model sees now (not deferred, not server tools)."""
        return [
            str(tool.get("name", ""))
            for tool in self.tools
            if not tool.get("defer_loading") and not str(tool.get("type", "")).startswith("tool_search_tool")
        ]

    @property
    def messages(self) -> list[Mapping[str, Any]]:
        """The conversation sent."""
        return list(self.body.get("messages") or [])

    @property
    def retry_count(self) -> int:
        """The SDK's `x-stainless-retry-count` (0 on a first attempt)."""
        try:
            return int(self.headers.get("x-stainless-retry-count", "0"))
        except ValueError:
            return 0

    def tool_results(self) -> list[Mapping[str, Any]]:
        """The `tool_result` blocks of the last message (what the tools answered to the previous turn)."""
        if not self.messages:
            return []
        content: Any = self.messages[-1].get("content")
        if not isinstance(content, list):
            return []
        blocks = cast("list[Any]", content)
        return [
            block
            for block in blocks
            if isinstance(block, dict) and cast("dict[str, Any]", block).get("type") == "tool_result"
        ]


Step = Turn | Failure | Hang | Drop | Callable[[RecordedRequest], "Turn | Failure | Hang | Drop"]
"""One scripted answer, or a callable computing it from the request."""

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


class _IPv6Server(ThreadingHTTPServer):
    address_family = socket.AF_INET6


class MessagesServer:
    """A loopback HTTP server answering `POST /v1/messages` from a script.

    Use as a context manager; `base_url` is what the SDK's `base_url=` or `ANTHROPIC_BASE_URL` takes.

    Args:
        script: Steps answered in order, one per request (a retried request takes the next step).
        responder: Called for each request once the script is exhausted (or for every request when
            there is no script). Without one, a request past the end of the script gets a 500 with
            `x-should-retry: false` that says the script ran out.
        local: Behave like a local Anthropic-compatible server (see the module docstring).
        host: The loopback address to listen on: `127.0.0.1`, or `::1` for IPv6.
    """

    def __init__(
        self,
        script: Sequence[Step] = (),
        *,
        responder: Callable[[RecordedRequest], Turn | Failure | Hang | Drop] | None = None,
        local: bool = False,
        host: str = "127.0.0.1",
    ) -> None:
        self._host = host
        self._script: list[Step] = list(script)
        self._responder = responder
        self.local = local
        self._lock = threading.Condition()
        self._requests: list[RecordedRequest] = []
        self._service: list[float] = []
        self._closing = threading.Event()
        self._ids = itertools.count(1)
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------------

    def start(self) -> Self:
        """Bind a free loopback port and serve in a daemon thread."""
        handler = _handler_for(self)
        self._httpd = (_IPv6Server if ":" in self._host else ThreadingHTTPServer)((self._host, 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="messages-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Release hung requests, stop serving and close the socket."""
        self._closing.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:<port>` (`http://[::1]:<port>` on IPv6)."""
        if self._httpd is None:
            raise RuntimeError("MessagesServer is not started; use it as a context manager")
        port = self._httpd.server_address[1]
        return f"http://[{self._host}]:{port}" if ":" in self._host else f"http://{self._host}:{port}"

    # -- script and records ------------------------------------------------------------------------

    def add(self, *steps: Step) -> None:
        """Append steps to the script (safe while serving)."""
        with self._lock:
            self._script.extend(steps)

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, in arrival order (a copy)."""
        with self._lock:
            return list(self._requests)

    @property
    def service_seconds(self) -> list[float]:
        """For each answered request (not hangs or drops), the seconds from its headers to the last byte sent.

        The server's share of a call's wall time, so a bench can subtract "model time" exactly.
        """
        with self._lock:
            return list(self._service)

    def _served(self, seconds: float) -> None:
        with self._lock:
            self._service.append(seconds)

    @property
    def remaining(self) -> int:
        """Script steps not yet served."""
        with self._lock:
            return len(self._script)

    def wait_for_requests(self, count: int, timeout: float = 10.0) -> list[RecordedRequest]:
        """Block until at least `count` requests arrived; raise `TimeoutError` after `timeout` seconds."""
        with self._lock:
            if not self._lock.wait_for(lambda: len(self._requests) >= count, timeout=timeout):
                raise TimeoutError(f"MessagesServer saw {len(self._requests)} request(s), expected {count}")
            return list(self._requests)

    def _record(self, path: str, headers: Mapping[str, str], raw: bytes) -> RecordedRequest:
        try:
            parsed: Any = json.loads(raw) if raw else {}
        except ValueError:
            parsed = {}
        body: dict[str, Any] = cast("dict[str, Any]", parsed) if isinstance(parsed, dict) else {}
        with self._lock:
            request = RecordedRequest(len(self._requests), path, headers, body, raw)
            self._requests.append(request)
            self._lock.notify_all()
        return request

    def _answer_for(self, request: RecordedRequest) -> Turn | Failure | Hang | Drop:
        rejection = self._local_rejection(request)
        if rejection is not None:
            # Refused before the model sees it, so the script is not consumed.
            return rejection
        with self._lock:
            step = self._script.pop(0) if self._script else self._responder
        if step is None:
            return Failure(500, f"scripted server: script exhausted at request {request.index + 1}", should_retry=False)
        return step(request) if callable(step) else step

    def _next_id(self, prefix: str) -> str:
        return f"{prefix}_{next(self._ids):06d}"

    # -- answering ---------------------------------------------------------------------------------

    def _local_rejection(self, request: RecordedRequest) -> Failure | None:
        if not self.local:
            return None
        for i, tool in enumerate(request.tools):
            kind = str(tool.get("type", ""))
            if kind.startswith("tool_search_tool"):
                return Failure(400, f'tools.{i}.type: unsupported tool type "{kind}"', should_retry=False)
            if "defer_loading" in tool:
                return Failure(400, f"tools.{i}.defer_loading: Extra inputs are not permitted", should_retry=False)
        return None

    def _message(self, request: RecordedRequest, turn: Turn) -> dict[str, Any]:
        content = [self._fill_ids(dict(block)) for block in turn.content]
        stop = turn.stop_reason or ("tool_use" if any(b.get("type") == "tool_use" for b in content) else "end_turn")
        usage = turn.usage
        out_tokens = usage.output_tokens
        if out_tokens is None:
            out_tokens = max(1, math.ceil(len(dumps(content)) / 4))
        in_tokens = usage.input_tokens if usage.input_tokens is not None else max(1, math.ceil(len(request.raw) / 4))
        cached = 0 if self.local else usage.cache_read_input_tokens
        written = 0 if self.local else usage.cache_creation_input_tokens
        return {
            "id": self._next_id("msg"),
            "type": "message",
            "role": "assistant",
            "model": str(request.body.get("model", "scripted")),
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {
                "input_tokens": in_tokens,
                "output_tokens": out_tokens,
                "cache_read_input_tokens": cached,
                "cache_creation_input_tokens": written,
            },
        }

    def _fill_ids(self, block: Block) -> Block:
        kind = block.get("type")
        if kind in ("tool_use", "server_tool_use") and not block.get("id"):
            block["id"] = self._next_id("toolu" if kind == "tool_use" else "srvtoolu")
        return block

    def _wait_for_disconnect(self, connection: socket.socket) -> None:
        # Poll the socket: readable with no data means the client closed it (its timeout fired).
        while not self._closing.is_set():
            readable, _, _ = select.select([connection], [], [], 0.05)
            if not readable:
                continue
            try:
                if not connection.recv(1, socket.MSG_PEEK):
                    return
            except OSError:
                return
            # Pipelined bytes from a confused client: keep waiting for the close.
            self._closing.wait(0.05)


def _sse_events(message: Mapping[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """The SSE event sequence the Messages API streams for `message`."""
    usage = dict(message["usage"])
    start = dict(message, content=[], stop_reason=None, stop_sequence=None, usage=dict(usage, output_tokens=1))
    yield "message_start", {"type": "message_start", "message": start}
    yield "ping", {"type": "ping"}
    for index, block in enumerate(message["content"]):
        yield from _block_events(index, block)
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
            "usage": usage,
        },
    )
    yield "message_stop", {"type": "message_stop"}


def _block_events(index: int, block: Mapping[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    kind = block.get("type")
    deltas: list[dict[str, Any]] = []
    if kind == "text":
        start = dict(block, text="")
        deltas = [{"type": "text_delta", "text": part} for part in _split(str(block["text"]))]
    elif kind == "thinking":
        start = dict(block, thinking="", signature="")
        deltas = [{"type": "thinking_delta", "thinking": part} for part in _split(str(block["thinking"]))]
        deltas.append({"type": "signature_delta", "signature": block["signature"]})
    elif kind in ("tool_use", "server_tool_use"):
        start = dict(block, input={})
        tool_input = block.get("input", {})
        arguments = tool_input.text if isinstance(tool_input, RawJSON) else json.dumps(tool_input)
        deltas = [{"type": "input_json_delta", "partial_json": part} for part in _split(arguments)]
    else:
        # tool_search_tool_result, redacted_thinking and other whole blocks arrive in their start event.
        start = dict(block)
    yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": start}
    for delta in deltas:
        yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
    yield "content_block_stop", {"type": "content_block_stop", "index": index}


def _split(value: str, size: int = 16) -> list[str]:
    # Several deltas per block, as the API sends, so clients must accumulate rather than take one.
    return [value[i : i + size] for i in range(0, len(value), size)] or [""]


class _Handler(BaseHTTPRequestHandler):
    messages: ClassVar[MessagesServer]
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        started = time.perf_counter()
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        headers = {key.lower(): value for key, value in self.headers.items()}
        path = self.path.split("?", 1)[0]
        if path != "/v1/messages":
            self._error(Failure(404, f"scripted server serves POST /v1/messages, not {path}"))
            return
        request = self.messages._record(path, headers, raw)  # pyright: ignore[reportPrivateUsage]
        answer = self.messages._answer_for(request)  # pyright: ignore[reportPrivateUsage]
        self._answer(request, answer)
        if not isinstance(answer, Hang | Drop):
            self.messages._served(time.perf_counter() - started)  # pyright: ignore[reportPrivateUsage]

    def _answer(self, request: RecordedRequest, answer: Turn | Failure | Hang | Drop) -> None:
        if isinstance(answer, Failure):
            self._error(answer)
        elif isinstance(answer, Hang):
            self.messages._wait_for_disconnect(self.connection)  # pyright: ignore[reportPrivateUsage]
            self.close_connection = True
        elif isinstance(answer, Drop):
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
        else:
            message = self.messages._message(request, answer)  # pyright: ignore[reportPrivateUsage]
            if request.stream:
                body = "".join(
                    f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in _sse_events(message)
                ).encode()
                self._send(200, body, "text/event-stream")
            else:
                self._send(200, dumps(message).encode(), "application/json")

    def _error(self, failure: Failure) -> None:
        kind = _ERROR_TYPES.get(failure.status, "api_error")
        body = {"type": "error", "error": {"type": kind, "message": failure.message}}
        extra: dict[str, str] = {}
        if failure.retry_after is not None:
            extra["retry-after-ms"] = str(round(failure.retry_after * 1000))
        if failure.should_retry is not None:
            extra["x-should-retry"] = "true" if failure.should_retry else "false"
        self._send(failure.status, json.dumps(body).encode(), "application/json", extra)

    def _send(self, status: int, body: bytes, content_type: str, extra: Mapping[str, str] | None = None) -> None:
        try:
            self.send_response(status)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(body)))
            self.send_header("request-id", self.messages._next_id("req"))  # pyright: ignore[reportPrivateUsage]
            for key, value in (extra or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(body)
        except OSError:
            # The client gave up (its timeout) while we answered; nothing left to tell it.
            self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002  # pyright: ignore[reportImplicitOverride]
        # Quiet: test output is the client's story, not the server's access log.
        return


def _handler_for(server: MessagesServer) -> type[BaseHTTPRequestHandler]:
    return type("MessagesHandler", (_Handler,), {"messages": server})
