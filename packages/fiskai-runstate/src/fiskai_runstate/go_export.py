"""A run's records as a journal the Go agent reads: its record formats only, nothing fiskai adds.

The Go agent's schemas (`io.choria.fisk-ai.v1/session.*.json`) refuse any key they do not name, and its
fold refuses a meta version other than 3. So the export drops fiskai-only records (`tool_intent`) and
fields (each record's `version` and checksum, `meta.previous`, `tool_result.gate`), writes meta version 3,
and renumbers the remaining records 1, 2, 3, ... (the Go append contract continues from the last seq).
A session fiskai started since issue 31 carries the Go agent's fingerprint hashes, so the Go agent resumes
it without `--force` under the same configuration.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from .records import (
    PROTOCOL_PREFIX,
    AssistantRecord,
    MetaRecord,
    Record,
    TerminalRecord,
    ToolIntentRecord,
    ToolResultRecord,
    UserRecord,
)

__all__ = ["GO_META_VERSION", "go_journal"]

GO_META_VERSION = 3
"""The only meta version the Go agent's fold accepts."""

_FINGERPRINT_FIELDS = (
    "provider",
    "model",
    "system_hash",
    "tools_hash",
    "thinking_mode",
    "reasoning_effort",
    "max_tokens",
    "max_iterations",
)


def _payload(record: Record) -> tuple[str, dict[str, Any]] | None:
    payload = record.payload
    match payload:
        case MetaRecord():
            fingerprint = {n: getattr(payload.fingerprint, n) for n in _FINGERPRINT_FIELDS}
            meta: dict[str, Any] = {
                "version": GO_META_VERSION,
                "run_id": payload.run_id,
                "created": payload.created,
                "fingerprint": {n: v for n, v in fingerprint.items() if v},  # Go's omitempty
                "prompt": payload.prompt,
            }
            if payload.interactive:
                meta["interactive"] = True
            return "meta", meta
        case AssistantRecord():
            out: dict[str, Any] = {"iteration": payload.iteration, "message": payload.message}
            if payload.stop_reason:
                out["stop_reason"] = payload.stop_reason
            out["in_tokens"] = payload.in_tokens
            out["out_tokens"] = payload.out_tokens
            if payload.cache_read_tokens:
                out["cache_read_tokens"] = payload.cache_read_tokens
            if payload.cache_create_tokens:
                out["cache_create_tokens"] = payload.cache_create_tokens
            return "assistant", out
        case UserRecord():
            return "user", {"message": payload.message}
        case ToolResultRecord():
            out = {"tool_use_id": payload.tool_use_id, "result": payload.result}
            if payload.remote:
                out["remote"] = True
            return "tool_result", out
        case TerminalRecord():
            out = {"reason": payload.reason}
            if payload.message:
                out["message"] = payload.message
            return "terminal", out
        case ToolIntentRecord():
            return None


def go_journal(records: Iterable[Record]) -> list[bytes]:
    """The Go agent's JSON lines (no trailing newlines) for `records`, in order, renumbered from 1."""
    lines: list[bytes] = []
    for record in records:
        converted = _payload(record)
        if converted is None:
            continue
        kind, body = converted
        line = {"seq": len(lines) + 1, "protocol": PROTOCOL_PREFIX + kind, kind: body}
        lines.append(json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode())
    return lines
