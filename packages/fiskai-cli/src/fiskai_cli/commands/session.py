"""`fiskai session`: list, show, remove and export checkpointed runs.

The configuration (the root `-c/--config`, or `./agent.yaml` when it exists) picks the backend with its
`harness.sessions` block (a relative `options.directory` is under the configuration's folder); without one
the file backend in the state home is used (`$XDG_STATE_HOME/fiskai/runs`). `--state-dir` overrides the
file backend's directory. Reading never takes a run's lock, so a live run can be inspected.

A journal holds what a model, its tools and the operator wrote; everything printed from one goes
through `fiskai_core.sanitize` (text) or `json_text` (JSON), so a stored escape sequence or bidi
control is shown, never obeyed. `export` alone writes the journal's bytes exactly, for files and pipes.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import anyio
import click
from typing_extensions import override

from fiskai_cli._stores import journal_backend
from fiskai_cli._wiring import Settings, journal_store, load_settings
from fiskai_cli.commands.session_approvals import (
    APPROVALS_FLAG,
    approval_rows,
    remember_approvals_flag,
    render_approvals,
)
from fiskai_cli.commands.session_export import export
from fiskai_cli.ui.gate_text import denial_line, is_denial
from fiskai_cli.ui.text import clip, items, json_text, table
from fiskai_core.config import Mode
from fiskai_core.confirm import render_command_line
from fiskai_core.sanitize import sanitize_for_display, sanitize_for_terminal
from fiskai_runstate import (
    FileJournalStore,
    JournalError,
    JournalNotFoundError,
    Record,
    RunState,
    RunSummary,
    Store,
    encode_record,
    fold,
)
from fiskai_runstate.records import (
    AssistantRecord,
    JsonValue,
    MetaRecord,
    TerminalRecord,
    ToolIntentRecord,
    ToolResultRecord,
    UserRecord,
)

__all__ = ["session"]

_T = TypeVar("_T")
_ALIASES = {"ls": "list", "view": "show", "delete": "rm"}
_EMPTY_FILE_HINT = (
    "No checkpointed sessions in {directory} (file backend; if your sessions are in a configured backend, "
    "name its configuration: fiskai -c agent.yaml session list)"
)
_OUTPUT_CLIP = 2000


class _AliasGroup(click.Group):
    """Accepts the original's alternative names (`ls`, `view`, `delete`) without listing them twice."""

    @override
    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return super().get_command(ctx, _ALIASES.get(cmd_name, cmd_name))

    @override
    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        _, command, rest = super().resolve_command(ctx, args)
        return (command.name if command is not None else None), command, rest


@click.group("session", cls=_AliasGroup)
@click.option(
    "--state-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Directory of the file backend (default $XDG_STATE_HOME/fiskai/runs).",
)
@click.pass_context
def session(ctx: click.Context, state_dir: Path | None) -> None:
    """Manage checkpointed agent runs.

    \b
    Examples:
      fiskai session list
      fiskai session show orders-report --transcript
      fiskai session export orders-report -o orders-report.jsonl
      fiskai session rm orders-report
    """
    settings = load_settings(ctx, Mode.MCP, required=False)
    journal_backend(settings.config.harness.sessions if settings is not None else None)  # a typo fails now
    ctx.obj = _Sessions(settings=settings, state_dir=state_dir)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Sessions:
    """The `session` group's context object: where every subcommand's store comes from."""

    settings: Settings | None
    state_dir: Path | None

    @property
    def configured(self) -> bool:
        """True when a configuration chose the store (an empty list then needs no hint about one)."""
        return self.settings is not None


def _sessions(ctx: click.Context) -> _Sessions:
    found = ctx.find_object(_Sessions)
    if found is None:
        raise click.UsageError("run this through `fiskai session`")
    return found


def _run(ctx: click.Context, action: Callable[[Store], Awaitable[_T]]) -> _T:
    sessions = _sessions(ctx)

    async def go() -> _T:
        async with journal_store(sessions.settings, state_dir=sessions.state_dir) as store:
            return await action(store)

    try:
        return anyio.run(go)
    except JournalError as err:
        raise click.ClickException(str(err)) from err


async def _listing(store: Store) -> tuple[list[RunSummary], Path | None]:
    """The sessions, and the file backend's directory (for the hint when there are none)."""
    directory = store.directory if isinstance(store, FileJournalStore) else None
    return list(await store.list()), directory


_FORMAT = click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="`json` prints one document for scripts.",
)


@session.command("list")
@_FORMAT
@click.pass_context
def list_sessions(ctx: click.Context, output_format: str) -> None:
    """List checkpointed runs, most recently updated first (alias: ls).

    A journal that cannot be read is listed with status `damaged`, one that holds fewer records than its
    high-water mark with status `truncated` (a resume needs --force); the reason goes to stderr. A session
    a chat's /clear started names the one it continues (column `continues`, JSON `previous`).

    \b
    Examples:
      fiskai session list
      fiskai -c agent.yaml session list --format json | jq -r '.[].id'
      fiskai session --state-dir ./runs ls
    """
    summaries, directory = _run(ctx, _listing)
    if output_format == "json":
        click.echo(json_text([_summary_json(s) for s in summaries]))
        return
    if not summaries:
        if _sessions(ctx).configured or directory is None:
            click.echo("No checkpointed sessions")
        else:
            click.echo(_EMPTY_FILE_HINT.format(directory=directory))
        return
    linked = [s.previous or "-" for s in summaries] if any(s.previous for s in summaries) else []  # by /clear
    rows = [(s.run_id, s.model or "-", s.status, _local_time(s.updated), clip(s.prompt, 53) or "-") for s in summaries]
    headers = ("id", "model", "status", "updated", "prompt", *(["continues"] if linked else []))
    click.echo(table(headers, [(*row, *linked[i : i + 1]) for i, row in enumerate(rows)], indent=0))
    for summary in summaries:
        if summary.damaged:
            run_id = sanitize_for_terminal(summary.run_id)
            click.echo(
                f"warning: session {run_id} is damaged: {sanitize_for_terminal(summary.damaged)}; "
                f"`fiskai session rm {run_id}` removes it",
                err=True,
            )
        elif summary.truncated:
            click.echo(f"warning: {summary.truncated}", err=True)


def _summary_json(summary: RunSummary) -> dict[str, Any]:
    return {
        "id": summary.run_id,
        "model": summary.model,
        "status": summary.status,
        "updated": summary.updated.isoformat(),
        "created": summary.created,
        "records": summary.records,
        "prompt": summary.prompt,
        "damaged": summary.damaged or None,
        "truncated": summary.truncated or None,
        "previous": summary.previous or None,
    }


def _local_time(moment: datetime) -> str:
    return moment.astimezone().strftime("%Y-%m-%d %H:%M:%S")


@session.command("show")
@click.argument("run_id")
@click.option("--transcript", is_flag=True, help="Also print every record as a readable transcript.")
@click.option(
    "--approvals",
    is_flag=True,
    expose_value=False,
    callback=remember_approvals_flag,
    help="Print only the run's gate decisions: tool, allowed or denied, channel, tag, argv digest, rule.",
)
@click.option("--no-tui", is_flag=True, help="Print instead of opening the full-screen viewer on a terminal.")
@_FORMAT
@click.pass_context
def show(ctx: click.Context, run_id: str, transcript: bool, no_tui: bool, output_format: str) -> None:
    """Show a run's status, counters and prompt (alias: view).

    On a terminal the run opens read-only in the full-screen viewer (q leaves); piped, or with
    --no-tui, it is printed.

    \b
    Examples:
      fiskai session show orders-report
      fiskai session show orders-report --transcript --no-tui
      fiskai session show orders-report --format json | jq .counters
    """
    records = _run(ctx, lambda store: store.load(run_id))
    try:
        state = fold(records)
    except JournalError as err:
        raise click.ClickException(str(err)) from err
    cut = _run(ctx, lambda store: store.truncation(run_id))
    if cut is not None:
        click.echo(f"warning: {cut}", err=True)
    if ctx.meta.get(APPROVALS_FLAG):
        _show_approvals(records, output_format)
        return
    if output_format == "text" and not no_tui and _open_viewer(records, state):
        return
    if output_format == "json":
        document = _state_json(state)
        document["truncated"] = str(cut) if cut is not None else None
        if transcript:
            document["records"] = [json.loads(encode_record(r)) for r in records]
        click.echo(json_text(document))
        return
    click.echo(_render_state(state, truncated=cut is not None))
    if transcript:
        click.echo("\n--- transcript ---\n")
        names = _tool_names(records)
        click.echo(sanitize_for_display("\n".join(_render_record(r, names) for r in records)))


def _open_viewer(records: list[Record], state: RunState) -> bool:
    """The full-screen viewer when stdin and stdout are terminals and the `tui` extra is installed."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        return False
    try:
        from fiskai_cli.ui.tui.viewer import show_transcript
    except ImportError:
        return False
    show_transcript(records, state)
    return True


def _show_approvals(records: list[Record], output_format: str) -> None:
    rows = approval_rows(records)
    click.echo(json_text(rows) if output_format == "json" else render_approvals(rows))


def _state_json(state: RunState) -> dict[str, Any]:
    fp = state.fingerprint
    pending = state.pending
    return {
        "id": state.run_id,
        "status": state.status,
        "model": fp.model,
        "fingerprint": {
            "provider": fp.provider,
            "model": fp.model,
            "system_hash": fp.system_hash,
            "tools_hash": fp.tools_hash,
            "thinking_mode": fp.thinking_mode,
            "max_tokens": fp.max_tokens,
            "max_iterations": fp.max_iterations,
        },
        "created": state.created,
        "interactive": state.interactive,
        "previous": state.previous or None,
        "version": state.version,
        "next_iteration": state.next_iteration,
        "last_seq": state.last_seq,
        "counters": {
            "llm_calls": state.counters.llm_calls,
            "tool_calls": state.counters.tool_calls,
            "remote_tool_calls": state.counters.remote_tool_calls,
            "in_tokens": state.counters.in_tokens,
            "out_tokens": state.counters.out_tokens,
            "cache_read_tokens": state.counters.cache_read_tokens,
            "cache_create_tokens": state.counters.cache_create_tokens,
        },
        "pending": None
        if pending is None
        else {
            "iteration": pending.iteration,
            "answered": sorted(pending.answered),
            "unanswered": list(pending.unanswered),
        },
        "intents_without_results": [
            {"tool_use_id": i.tool_use_id, "tool_name": i.tool_name, "effect_id": i.effect_id}
            for i in state.intents_without_results
        ],
        "terminal": None
        if state.terminal is None
        else {"reason": state.terminal.reason, "message": state.terminal.message},
        "prompt": state.prompt,
    }


def _render_state(state: RunState, *, truncated: bool) -> str:
    c = state.counters
    pairs = [
        ("Status", f"{state.status}, journal truncated (resume needs --force)" if truncated else state.status),
        ("Model", state.fingerprint.model or "-"),
        ("Next iter", str(state.next_iteration)),
        ("LLM calls", str(c.llm_calls)),
        ("Tool calls", f"{c.tool_calls} (remote {c.remote_tool_calls})"),
        ("Tokens", f"{c.in_tokens} in / {c.out_tokens} out"),
    ]
    if state.previous:
        pairs.append(("Continues", f"{state.previous} (a chat's /clear started this session)"))
    if state.pending is not None:
        pairs.append(("Pending", "an in-flight tool batch will resume first"))
    if state.intents_without_results:
        names = ", ".join(f"{i.tool_name} ({i.tool_use_id})" for i in state.intents_without_results)
        pairs.append(("Unresolved", f"started but unanswered, may have run: {names}"))
    if state.terminal is not None and state.terminal.message:
        pairs.append(("Reason", clip(state.terminal.message, 200)))
    return f"Session {sanitize_for_terminal(state.run_id)}\n{items(pairs)}\n\nPrompt\n  {clip(state.prompt, 200)}"


def _tool_names(records: list[Record]) -> dict[str, str]:
    """tool_use id -> tool name, from the assistant turns (a denied call has no intent to name it)."""
    names: dict[str, str] = {}
    for record in records:
        if isinstance(record.payload, AssistantRecord):
            for kind, body in _blocks(record.payload.message.get("content")):
                if kind == "tool_use" and isinstance(body.get("id"), str):
                    names[str(body["id"])] = str(body.get("name", ""))
    return names


def _blocks(content: JsonValue) -> list[tuple[str, dict[str, JsonValue]]]:
    blocks: list[tuple[str, dict[str, JsonValue]]] = []
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict):
            blocks += [(kind, body if isinstance(body, dict) else {}) for kind, body in block.items()]
    return blocks


def _render_record(record: Record, names: dict[str, str]) -> str:
    head = f"[{record.seq}]"
    payload = record.payload
    match payload:
        case MetaRecord():
            return f"{head} prompt: {payload.prompt}"
        case AssistantRecord():
            usage = f"{payload.in_tokens} in / {payload.out_tokens} out"
            title = (
                f"{head} assistant, iteration {payload.iteration}, {payload.stop_reason or 'no stop reason'}, {usage}"
            )
            return "\n".join([title, *_render_blocks(payload.message.get("content"))])
        case UserRecord():
            return "\n".join([f"{head} user", *_render_blocks(payload.message.get("content"))])
        case ToolIntentRecord():
            target = render_command_line(payload.argv) if payload.argv is not None else payload.remote_target or "-"
            return f"{head} about to run {payload.tool_name} ({payload.tool_use_id}): {target}"
        case ToolResultRecord() if is_denial(payload):
            return f"{head} {denial_line(names.get(payload.tool_use_id, ''), payload)}"
        case ToolResultRecord():
            remote = " (remote)" if payload.remote else ""
            error = " error" if payload.result.get("is_error") is True else ""
            content = payload.result.get("content")
            text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
            return f"{head} result{error}{remote} for {payload.tool_use_id}:\n    {_clip_block(text)}"
        case TerminalRecord():
            message = f": {payload.message}" if payload.message else ""
            return f"{head} ended: {payload.reason}{message}"


def _render_blocks(content: JsonValue) -> list[str]:
    if not isinstance(content, list):
        return []
    lines: list[str] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        for kind, body in block.items():
            lines.append(f"    {_render_block(kind, body)}")
    return lines


def _render_block(kind: str, body: JsonValue) -> str:
    fields: dict[str, JsonValue] = body if isinstance(body, dict) else {}
    if kind == "text":
        return _clip_block(str(fields.get("text", "")))
    if kind == "thinking":
        return f"(thinking) {clip(str(fields.get('text', '')), 200)}"
    if kind == "tool_use":
        arguments = json.dumps(fields.get("input"), ensure_ascii=False, separators=(",", ":"))
        return f"-> {fields.get('name')} {clip(arguments, 200)} ({fields.get('id')})"
    if kind == "tool_result":
        content = fields.get("content")
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        return f"<- {fields.get('tool_use_id')}: {_clip_block(text)}"
    if kind == "provider":
        return f"[{fields.get('kind', 'provider')} block]"
    return f"[{kind} block]"


def _clip_block(text: str) -> str:
    text = text if len(text) <= _OUTPUT_CLIP else text[:_OUTPUT_CLIP] + "..."
    return text.replace("\n", "\n    ")


@session.command("rm")
@click.argument("run_id")
@click.pass_context
def remove(ctx: click.Context, run_id: str) -> None:
    """Delete a run's journal (alias: delete). Refused while a process has the run open.

    \b
    Examples:
      fiskai session rm orders-report
      fiskai -c agent.yaml session delete orders-report
    """

    async def action(store: Store) -> None:
        try:
            await store.load(run_id)
        except JournalNotFoundError:
            raise
        except JournalError:
            pass  # a damaged journal can still be removed; that is often why it is being removed
        await store.delete(run_id)

    _run(ctx, action)
    click.echo(f"Removed session {run_id}")


def load_records(ctx: click.Context, run_id: str) -> list[Record]:
    """A run's records from the group's store (`session export` reads them through this)."""
    return _run(ctx, lambda store: store.load(run_id))


session.add_command(export)
