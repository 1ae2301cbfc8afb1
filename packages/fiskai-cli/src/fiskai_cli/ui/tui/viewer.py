"""`fiskai session show ID` on a terminal: a journaled run, read-only, in the live view's widgets.

The records are the journal's (reference 13.5): the prompt, each assistant turn (thinking folded,
narration, the final answer), each tool call as the argv it ran (or name and arguments when none was
recorded), each result folded, follow-ups and the terminal record. A call the gate refused has no
intent record: it is shown by name and arguments with a `denied` line naming the channel, tag, argv
digest and the reason the model got. Nothing runs; `q` leaves.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from fiskai_cli.ui.gate_text import denial_line, is_denial
from fiskai_cli.ui.line_events import command_output
from fiskai_cli.ui.text import clip
from fiskai_cli.ui.tui.capture import StderrCapture
from fiskai_cli.ui.tui.transcript import Entry, entry
from fiskai_cli.ui.tui.view import LiveView
from fiskai_core.confirm import render_command_line
from fiskai_runstate import Record, RunState
from fiskai_runstate.records import (
    AssistantRecord,
    JsonValue,
    MetaRecord,
    TerminalRecord,
    ToolIntentRecord,
    ToolResultRecord,
    UserRecord,
)

__all__ = ["show_transcript", "transcript_entries"]

_ARGS_RUNES = 200


def show_transcript(records: Sequence[Record], state: RunState) -> None:
    """Open the viewer on the terminal until the operator quits."""
    view = LiveView(on_leave=lambda: view.app.exit(), title="fiskai session")
    view.add(transcript_entries(records))
    counters = state.counters
    status = view.status
    status.model = state.fingerprint.model
    status.session = state.run_id
    status.iteration = counters.llm_calls
    status.input_tokens, status.output_tokens = counters.in_tokens, counters.out_tokens
    status.cache_read, status.cache_write = counters.cache_read_tokens, counters.cache_create_tokens
    view.end(f"{state.status}, read-only")
    with StderrCapture():
        view.app.run()


def transcript_entries(records: Sequence[Record]) -> list[Entry]:
    """The journal as transcript entries."""
    entries: list[Entry] = []
    intents: dict[str, ToolIntentRecord] = {}
    uses: dict[str, dict[str, JsonValue]] = {}
    for record in records:
        payload = record.payload
        match payload:
            case MetaRecord():
                entries.append(entry("prompt", payload.prompt))
            case AssistantRecord():
                final = payload.stop_reason == "end_turn"
                content = payload.message.get("content")
                uses |= {str(body.get("id")): body for kind, body in _blocks(content) if kind == "tool_use"}
                entries += _assistant(content, final=final)
            case UserRecord():
                entries += [entry("prompt", text) for kind, body in _blocks(payload.message.get("content"))
                            if kind == "text" and (text := str(body.get("text", "")))]  # fmt: skip
            case ToolIntentRecord():
                intents[payload.tool_use_id] = payload
                if payload.argv is not None:
                    entries.append(entry("call", render_command_line(payload.argv)))
                else:
                    entries.append(entry("call", f"{payload.tool_name} ({payload.remote_target or 'built-in'})"))
            case ToolResultRecord() if is_denial(payload):
                use = uses.get(payload.tool_use_id, {})
                name = str(use.get("name", ""))
                if payload.tool_use_id not in intents:
                    arguments = json.dumps(use.get("input", {}), ensure_ascii=False)
                    entries.append(entry("call", f"{name} {clip(arguments, _ARGS_RUNES)} (not run)"))
                entries.append(entry("denied", denial_line(name, payload)))
            case ToolResultRecord():
                entries.append(_result(payload))
            case TerminalRecord():
                message = f": {payload.message}" if payload.message else ""
                entries.append(entry("meta", f"--- ended: {payload.reason}{message} ---"))
    return entries


def _blocks(content: JsonValue) -> list[tuple[str, dict[str, JsonValue]]]:
    blocks: list[tuple[str, dict[str, JsonValue]]] = []
    if not isinstance(content, list):
        return blocks
    for block in content:
        if isinstance(block, dict):
            for kind, body in block.items():
                blocks.append((kind, body if isinstance(body, dict) else {}))
    return blocks


def _assistant(content: JsonValue, *, final: bool) -> list[Entry]:
    entries: list[Entry] = []
    texts: list[str] = []
    for kind, body in _blocks(content):
        if kind == "thinking" and str(body.get("text", "")).strip():
            thought = str(body.get("text", ""))
            entries.append(entry("thinking", "thinking", thought))
        elif kind == "text":
            texts.append(str(body.get("text", "")))
    text = "\n\n".join(texts).strip()
    if text and final:
        entries += [entry("meta", "--- answer ---"), entry("answer", text)]
    elif text:
        entries.append(entry("narration", text))
    return entries


def _result(record: ToolResultRecord) -> Entry:
    content = record.result.get("content")
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    output, exit_code = command_output(text, None)
    is_error = record.result.get("is_error") is True
    head = "<- error" if is_error else "<-"
    if exit_code is not None:
        head += f" (exit {exit_code})"
    if not output.strip():
        head += " (no output)"
    return entry("error" if is_error else "result", head, output.strip())
