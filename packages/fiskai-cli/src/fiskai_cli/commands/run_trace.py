"""`fiskai run --trace FILE` and `--http-debug FILE`: HTTP observers writing what the model saw.

Both files hold the whole conversation (prompts, tool output), so both are created mode 0600. The
trace (reference 6.10) is JSON lines for tools: a `session` line first, a `request` and a `response`
(or `error`) line per HTTP attempt, retries included, and a `summary` line last; it must not exist
beforehand (O_EXCL), so a trace is never appended to or overwritten by mistake. The HTTP debug dump is
for eyes: each body pretty-printed under a `=== HTTP request/response ===` header; an old dump at the
same path is replaced. Observers never alter a call and never raise: the first write failure is
reported once through `on_error` and the rest are dropped.
"""

from __future__ import annotations

import http
import json
import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fiskai_agent import RunStats
from fiskai_agent.llm import HttpExchange

__all__ = ["HttpDebugDump", "Observers", "TraceFile", "open_exclusive"]


def open_exclusive(path: Path, *, replace: bool = False) -> int:
    """Create `path` mode 0600 for writing; it must not exist unless `replace` (then it is removed first).

    Raises:
        OSError: It exists (without `replace`) or cannot be created.
    """
    if replace:
        path.unlink(missing_ok=True)
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def _body(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")


class _Sink:
    def __init__(self, path: Path, fd: int, on_error: Callable[[str], None]) -> None:
        self.path = path
        self._file = os.fdopen(fd, "w", encoding="utf-8")
        self._on_error = on_error
        self._failed = False

    def write(self, text: str) -> None:
        if self._failed:
            return
        try:
            self._file.write(text)
            self._file.flush()
        except OSError as err:
            self._failed = True
            self._on_error(f'writing "{self.path}" failed, later entries are dropped: {err.strerror or err}')

    def close(self) -> None:
        try:
            self._file.close()
        except OSError as err:
            if not self._failed:
                self._on_error(f'closing "{self.path}" failed: {err.strerror or err}')


class TraceFile:
    """The `--trace` JSON-lines writer."""

    def __init__(self, path: Path, fd: int, on_error: Callable[[str], None]) -> None:
        self._sink = _Sink(path, fd, on_error)
        self._ids = 0

    def _line(self, entry: dict[str, Any]) -> None:
        entry = {"type": entry.pop("type"), "time": _now(), **{k: v for k, v in entry.items() if v not in (None, "")}}
        self._sink.write(json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n")

    def session(self, *, model: str, config: str, version: str) -> None:
        """The first line."""
        self._line({"type": "session", "model": model, "config": config, "version": version})

    def exchange(self, exchange: HttpExchange) -> None:
        """A `request` line, then a `response` or an `error` line, sharing one id."""
        self._ids += 1
        common: dict[str, Any] = {"id": self._ids, "iter": exchange.iteration, "attempt": exchange.attempt or None}
        self._line(
            {
                "type": "request",
                **common,
                "method": exchange.method,
                "url": exchange.url,
                "body": _body(exchange.request_body),
            }
        )
        if exchange.status is None:
            self._line(
                {"type": "error", **common, "duration_ms": round(exchange.duration_ms, 3), "error": exchange.error}
            )
            return
        response: dict[str, Any] = {
            "type": "response",
            **common,
            "status": _status_text(exchange.status),
            "status_code": exchange.status,
            "duration_ms": round(exchange.duration_ms, 3),
        }
        if exchange.response_body is None:
            response["body_unavailable"] = True
        else:
            response["body"] = _body(exchange.response_body)
        self._line(response)

    def summary(self, stats: RunStats) -> None:
        """The last line: the run's counters."""
        self._line(
            {
                "type": "summary",
                "session": stats.session_id,
                "suspended": stats.suspended or None,
                "llm_calls": stats.llm_calls,
                "tool_calls": stats.tool_calls,
                "remote_tool_calls": stats.remote_tool_calls or None,
                "tool_calls_by_kind": dict(stats.by_kind) or None,
                "input_tokens": stats.input_tokens,
                "output_tokens": stats.output_tokens,
                "cache_read_tokens": stats.cache_read_tokens,
                "cache_create_tokens": stats.cache_create_tokens,
            }
        )

    def close(self) -> None:
        """Flush and close."""
        self._sink.close()


class HttpDebugDump:
    """The `--http-debug` dump: request and response bodies, pretty-printed."""

    def __init__(self, path: Path, fd: int, on_error: Callable[[str], None]) -> None:
        self._sink = _Sink(path, fd, on_error)

    def exchange(self, exchange: HttpExchange) -> None:
        """Both bodies of one attempt."""
        self._sink.write(
            f"\n=== HTTP request: {exchange.method} {exchange.url} ===\n{_pretty(exchange.request_body)}\n"
        )
        if exchange.status is None:
            self._sink.write(f"\n=== HTTP error: {exchange.error} ===\n")
        elif exchange.response_body is None:
            self._sink.write(f"\n=== HTTP response: {_status_text(exchange.status)} ===\n(streamed body not kept)\n")
        else:
            body = _pretty(exchange.response_body)
            self._sink.write(f"\n=== HTTP response: {_status_text(exchange.status)} ===\n{body}\n")

    def close(self) -> None:
        """Flush and close."""
        self._sink.close()


class Observers:
    """Fans one `HttpExchange` out to every open writer (the run takes a single observer)."""

    def __init__(self, *observers: TraceFile | HttpDebugDump) -> None:
        self.observers = observers

    def exchange(self, exchange: HttpExchange) -> None:
        """Hand the attempt to each writer."""
        for observer in self.observers:
            observer.exchange(exchange)


def _pretty(raw: bytes) -> str:
    body = _body(raw)
    return body if isinstance(body, str) else json.dumps(body, indent=2, ensure_ascii=False)


def _status_text(status: int) -> str:
    try:
        return f"{status} {http.HTTPStatus(status).phrase}"
    except ValueError:
        return str(status)
