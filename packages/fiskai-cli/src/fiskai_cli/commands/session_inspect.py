"""`fiskai session stats | query | search`: read-only inspection of checkpointed runs.

Reading takes no lock and writes nothing, so a run another process is appending to can be inspected while it
runs: the store reads complete records only, and a call still in flight shows as unanswered. The folds live in
`fiskai_runstate.inspection` and `fiskai_runstate.session_search`; this module parses flags and prints.
Registered on the `session` group here (session.py is at the module size ceiling).
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Protocol, TypeVar, cast

import anyio
import click
from typing_extensions import override

from fiskai_cli._wiring import Settings, journal_store
from fiskai_cli.commands.session import session
from fiskai_cli.ui.text import clip, items, json_text, table
from fiskai_core.sanitize import sanitize_for_terminal
from fiskai_runstate import FileJournalStore, JournalError, JournalNotFoundError, Record, RunSummary, Store
from fiskai_runstate.inspection import CallFilter, CallView, SessionStats, query_calls, session_stats
from fiskai_runstate.session_search import STATUSES, SearchFilter, search_sessions

__all__ = ["session"]

_T = TypeVar("_T")
_DURATION = re.compile(r"(\d+)([smhdw])")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


class _SessionsContext(Protocol):
    """What the `session` group leaves in `ctx.obj`: the configuration and the file backend's directory."""

    settings: Settings | None
    state_dir: Path | None


def _read(ctx: click.Context, action: Callable[[Store], Awaitable[_T]], run_id: str = "") -> _T:
    sessions = cast(_SessionsContext, ctx.obj)

    async def go() -> _T:
        async with journal_store(sessions.settings, state_dir=sessions.state_dir) as store:
            # Converted inside the block: the NATS connection's own error reporting would otherwise word it.
            try:
                return await action(store)
            except JournalNotFoundError as err:
                where = f" in {sessions.state_dir}" if sessions.state_dir is not None else ""
                raise click.ClickException(f"{err}{where}; `fiskai session list` shows the sessions there") from err
            except JournalError as err:
                raise click.ClickException(str(err)) from err
            except OSError as err:  # a journal the operator may not read, a vanished directory
                what = f"session {run_id}" if run_id else "the sessions"
                raise click.ClickException(f"cannot read {what}: {err.strerror or err} ({err.filename or ''})") from err

    try:
        return anyio.run(go)
    except JournalError as err:  # opening the store (a misconfigured stream, an unusable directory)
        raise click.ClickException(str(err)) from err


async def _load(store: Store, run_id: str) -> tuple[list[Record], datetime | None]:
    """The run's records and when its journal was last written (the file's mtime, or the listing's)."""
    records = await store.load(run_id)
    if isinstance(store, FileJournalStore):
        try:
            return records, datetime.fromtimestamp(store.journal_path(run_id).stat().st_mtime, tz=UTC)
        except OSError:
            return records, None
    found = [s.updated for s in await store.list() if s.run_id == run_id]
    return records, found[0] if found else None


def _json_option(command: Callable[..., Any]) -> Callable[..., Any]:
    command = click.option("--json", "as_json", is_flag=True, help="Same as --format json (the Go agent's flag).")(
        command
    )
    return click.option(
        "--format",
        "output_format",
        type=click.Choice(["text", "json"]),
        default="text",
        show_default=True,
        help="`json` prints one document for scripts.",
    )(command)


def _pattern(_ctx: click.Context, param: click.Parameter, value: str | None) -> re.Pattern[str] | None:
    if value is None:
        return None
    try:
        return re.compile(value)
    except re.error as err:
        raise click.BadParameter(f"{value!r} is not a regular expression: {err}", param=param) from None


# ---------------------------------------------------------------- stats


@session.command("stats")
@click.argument("run_id")
@_json_option
@click.pass_context
def stats(ctx: click.Context, run_id: str, output_format: str, as_json: bool) -> None:
    """Show a run's totals, per-response token use and per-tool call counts.

    Read-only and lock-free: works on a run that is still going. Tool kinds come from how each call ran
    (a command line: application; a peer: remote; in process: builtin; never run: unknown). A call's time
    is the gap between its result and the record before it; journals from before schema version 6 (and
    the Go original's) carry no record times, and their Time column reads `-`.

    \b
    Examples:
      fiskai session stats orders-report
      fiskai session stats orders-report --format json | jq .tokens
      fiskai -c agent.yaml session stats orders-report --json
    """
    records, updated = _read(ctx, lambda store: _load(store, run_id), run_id)
    try:
        result = session_stats(records, updated=updated)
    except JournalError as err:
        raise click.ClickException(str(err)) from err
    if as_json or output_format == "json":
        click.echo(json_text(result.to_json()))
        return
    click.echo(_render_stats(result))


def _render_stats(s: SessionStats) -> str:
    wall = s.wall_clock_seconds
    per_turn = f" of {s.max_iterations} per turn" if s.max_iterations else ""
    budget = f" of {s.max_tokens} budget" if s.max_tokens else ""
    t = s.tokens
    pairs = [
        # A caller is what a remote sender claimed: never let it drive the terminal.
        ("Agent", sanitize_for_terminal(s.agent) or "-"),
        ("Caller", sanitize_for_terminal(s.caller) or "-"),
        ("Model", s.model or "-"),
        ("Status", s.status),
        ("Created", _local(s.created)),
        ("Ended", _local(s.updated.isoformat()) if s.ended and s.updated is not None else "-"),
        ("Iterations", f"{s.iterations}{per_turn}"),
        ("Wall clock", _duration(wall) if wall is not None else "-"),
        (
            "Tokens",
            f"{t.total}{budget} ({t.in_tokens} in, {t.out_tokens} out, "
            f"{t.cache_read_tokens} cache read, {t.cache_create_tokens} cache write)",
        ),
    ]
    out = [f"Session {sanitize_for_terminal(s.run_id)}", items(pairs), "", "Responses"]
    responses = [
        tuple(str(v) for v in (r.iteration, *_token_cells(r.tokens.to_json()), r.tokens.total)) for r in s.responses
    ]
    headers = ("iteration", "in", "out", "cache read", "cache write", "thinking", "total")
    out.append(table(headers, responses) if responses else "  none")
    out += ["", "Tools"]
    tools = [
        (
            t.tool,
            ",".join(t.kinds),
            str(t.calls),
            str(t.dispatched),
            str(t.undispatched),
            str(t.unanswered),
            str(t.errors),
            _duration(t.duration_ns / 1e9) if t.timed else "-",
        )
        for t in s.tools
    ]
    headers = ("tool", "kind", "calls", "dispatched", "not run", "unanswered", "errors", "time")
    out.append(table(headers, tools) if tools else "  none")
    return "\n".join(out)


def _token_cells(tokens: dict[str, int]) -> tuple[int, ...]:
    keys = ("in_tokens", "out_tokens", "cache_read_tokens", "cache_create_tokens", "thinking_tokens")
    return tuple(tokens[k] for k in keys)


def _local(text: str) -> str:
    try:
        return datetime.fromisoformat(text).astimezone().strftime("%Y-%m-%d %H:%M:%S")
    except ValueError:
        return text or "-"


def _duration(seconds: float) -> str:
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes}m{secs}s"
    return f"{minutes}m{secs}s" if minutes else f"{seconds:.1f}s"


# ---------------------------------------------------------------- query


@session.command("query")
@click.argument("run_id")
@click.option("--tool", "tools", multiple=True, metavar="NAME", help="Only calls of this tool (repeatable).")
@click.option("--iteration", type=click.IntRange(min=0), default=None, help="Only calls of this iteration.")
@click.option("--errors", is_flag=True, help="Only calls answered with an error (a gate denial is not one).")
@click.option("--calls-only", is_flag=True, help="Only calls without a result (in flight or interrupted).")
@click.option("--results-only", is_flag=True, help="Only calls with a result.")
@click.option("--input-match", metavar="RE", callback=_pattern, help="Regex searched in the call's JSON input.")
@click.option("--output-match", metavar="RE", callback=_pattern, help="Regex searched in the result's content.")
@_json_option
@click.pass_context
def query(
    ctx: click.Context,
    run_id: str,
    tools: tuple[str, ...],
    iteration: int | None,
    errors: bool,
    calls_only: bool,
    results_only: bool,
    input_match: re.Pattern[str] | None,
    output_match: re.Pattern[str] | None,
    output_format: str,
    as_json: bool,
) -> None:
    """List a run's tool calls and their answers, filtered.

    Every filter given must hold. An answer's kind is `result` (the tool ran), `denied` (the confirm gate
    refused it) or `refused` (not run: a hook, an unknown tool, missing arguments). Read-only and lock-free.

    \b
    Examples:
      fiskai session query orders-report --tool stream_info --errors
      fiskai session query orders-report --iteration 3 --output-match 'timeout|refused'
      fiskai session query orders-report --calls-only --format json | jq '.calls[].tool'
    """
    if calls_only and results_only:
        raise click.UsageError("--calls-only and --results-only exclude each other; give one")
    records, _ = _read(ctx, lambda store: _load(store, run_id), run_id)
    filters = CallFilter(
        tools=frozenset(tools),
        iteration=iteration,
        errors=errors,
        calls_only=calls_only,
        results_only=results_only,
        input_match=input_match,
        output_match=output_match,
    )
    try:
        calls = query_calls(records, filters)
    except JournalError as err:
        raise click.ClickException(str(err)) from err
    if as_json or output_format == "json":
        click.echo(json_text({"run_id": run_id, "calls": [c.to_json() for c in calls]}))
        return
    if not calls:
        click.echo("No matching calls")
        return
    click.echo("\n".join(_render_call(c) for c in calls))


def _render_call(call: CallView) -> str:
    arguments = json.dumps(call.input, ensure_ascii=False, separators=(",", ":"))
    head = f"iteration {call.iteration}  {clip(call.tool, 60)}  {clip(call.tool_use_id, 60)}"
    if call.answer_time:
        head += f"  answered {_local(call.answer_time)}"
    answer = call.answer
    if answer is None:
        said = "(no result yet: in flight, or interrupted)"
    else:
        content = answer.result.get("content")
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        error = " error" if answer.result.get("is_error") is True else ""
        said = f"{answer.kind}{error}: {clip(text, 300)}"
    return f"{head}\n  input   {clip(arguments, 300)}\n  answer  {said}"


# ---------------------------------------------------------------- search


class _Moment(click.ParamType[Any, datetime]):
    """A point in time: a duration ago (`24h`, `7d`, `1h30m`), a date (local midnight) or RFC 3339."""

    name = "WHEN"

    @override
    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> datetime:
        if isinstance(value, datetime):
            return value
        text = str(value).strip()
        parts = _DURATION.findall(text)
        if parts and "".join(n + u for n, u in parts) == text:
            ago = timedelta()
            for number, unit in parts:
                ago += timedelta(**{_UNITS[unit]: int(number)})
            return datetime.now(UTC) - ago
        try:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            self.fail(f"{text!r} is not a duration (24h, 7d), a date (2026-07-24) or an RFC 3339 time", param, ctx)
        return moment if moment.tzinfo is not None else moment.astimezone()


@session.command("search")
@click.option("--identity", default=None, help="Only sessions of this agent identity.")
@click.option("--model", default=None, help="Only sessions that used this model.")
@click.option("--caller", default=None, help="Only sessions started by this caller.")
@click.option("--status", type=click.Choice(STATUSES), default=None, help="Only sessions in this state.")
@click.option("--since", type=_Moment(), default=None, help="Created at or after: 24h, 7d, 2026-07-24, RFC 3339.")
@click.option("--until", type=_Moment(), default=None, help="Created at or before (same forms as --since).")
@click.option("--match", metavar="RE", callback=_pattern, help="Regex searched in the session's prompt.")
@_json_option
@click.pass_context
def search(
    ctx: click.Context,
    identity: str | None,
    model: str | None,
    caller: str | None,
    status: str | None,
    since: datetime | None,
    until: datetime | None,
    match: re.Pattern[str] | None,
    output_format: str,
    as_json: bool,
) -> None:
    """Find sessions by agent, caller, model, status, creation time and prompt, newest first.

    The caller is a served prompt's claimed (unverified) sender; a local run has none. Sessions written
    before fiskai journaled the agent name none, so --identity and --caller cannot match them; how many
    were left out is reported (`no_agent_excluded` in JSON). Read-only and lock-free.

    \b
    Examples:
      fiskai session search --status open
      fiskai session search --since 24h --match 'ORDERS'
      fiskai session search --model claude-sonnet-4-5 --until 2026-07-01 --format json | jq -r '.runs[].run_id'
    """
    filters = SearchFilter(
        identity=identity, model=model, caller=caller, status=status, since=since, until=until, match=match
    )
    summaries: list[RunSummary] = _read(ctx, lambda store: store.list())
    found = search_sessions(summaries, filters)
    if as_json or output_format == "json":
        click.echo(json_text(found.to_json()))
        return
    if found.no_agent_excluded:
        click.echo(
            f"note: {found.no_agent_excluded} session(s) name no agent identity or caller and were left out",
            err=True,
        )
    if not found.runs:
        click.echo("No sessions matched")
        return
    rows = [
        (
            s.run_id,
            clip(sanitize_for_terminal(s.agent), 30) or "-",
            clip(sanitize_for_terminal(s.caller), 30) or "-",
            s.model or "-",
            s.status,
            _local(s.created),
            _local(s.updated.isoformat()),
            clip(s.prompt, 50) or "-",
        )
        for s in found.runs
    ]
    click.echo(table(("id", "agent", "caller", "model", "status", "created", "updated", "prompt"), rows, indent=0))
