"""`fiskai run`: the agent's main job, with the line UI.

Start-up order matters for speed: the configuration is read, then the provider SDK starts importing
on a background thread (anthropic costs seconds) while the application is introspected (a subprocess
the main thread waits on), so the two overlap and the first model request goes out sooner.

Signals: without a journal, Ctrl-C or SIGTERM aborts the run (the tool in flight is killed). With one
(`--checkpoint`, `--resume`), the first suspends at the next loop boundary, never mid-tool, and the
second aborts; either way the journal gets its terminal record and the stats line is printed.
"""

from __future__ import annotations

import json
import signal
import sys
from collections.abc import Callable, Coroutine, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import click

from fiskai_agent import NextPrompt, RunControl, RunOptions, RunResult, SessionOptions, run as run_agent
from fiskai_agent.events import Advisory
from fiskai_agent.llm import ProviderSettings, preload_provider
from fiskai_cli import _wiring as wiring
from fiskai_cli._hooks import command_hooks
from fiskai_cli._observe import RunTelemetry, inventory, start_telemetry
from fiskai_cli._version import VERSION
from fiskai_cli.commands.run_chat import stored_session
from fiskai_cli.commands.run_flags import ToolOutputChoice, http_debug_file, no_color, read_api_key_file, tool_output
from fiskai_cli.commands.run_trace import HttpDebugDump, Observers, TraceFile, open_exclusive
from fiskai_cli.ui.chat import LineChat
from fiskai_cli.ui.line_events import LineEvents, ToolOutput
from fiskai_cli.ui.line_stats import result_json, stats_line

if TYPE_CHECKING:
    from fiskai_cli.ui.tui import FullScreen

__all__ = ["run"]

_SUSPEND_NOTICE = "\nsuspend requested; finishing current step, press ^C again to abort"


@click.command("run")
@click.argument("prompt", nargs=-1)
@click.option("--checkpoint", is_flag=True, help="Journal the run so it can be suspended and resumed.")
@click.option("--name", metavar="ID", help="The session id for --checkpoint (default: generated).")
@click.option("--resume", "resume_id", metavar="ID", help="Resume a checkpointed session (the prompt is restored).")
@click.option("--force", is_flag=True, help="Resume even though agent.yaml changed since (never across providers).")
@click.option(
    "--chat",
    is_flag=True,
    help="Stay open after each answer for a follow-up (/help lists the commands); a chat session resumes as one.",
)
@click.option(
    "--no-tui",
    is_flag=True,
    envvar="NO_TUI",
    help="Use the line UI even on a terminal (as harness.no_tui; a pipe always does). Env: NO_TUI.",
)
@click.option(
    "-v",
    "--verbose",
    is_flag=True,
    envvar="VERBOSE",
    help="Show start details, request summaries and full tool output. Env: VERBOSE.",
)
@click.option(
    "--tool-output",
    "tool_output_mode",
    type=ToolOutputChoice(),
    default="folded",
    show_default=True,
    envvar="TOOL_OUTPUT",
    help="Tool results: one line each (folded), whole (full) or not shown (none); the full screen starts "
    "with output unfolded for full. Env: TOOL_OUTPUT.",
)
@click.option(
    "--no-color",
    "no_color_flag",
    is_flag=True,
    help="No colour: answers print as written (no Markdown rendering), the full screen in monochrome. "
    "Env: NO_COLOR (any value).",
)
@click.option(
    "--api-key-file",
    type=click.Path(dir_okay=False, path_type=Path),
    envvar="ANTHROPIC_API_KEY_FILE",
    help="Read the API key from FILE (trailing whitespace dropped), instead of ANTHROPIC_API_KEY. "
    "Env: ANTHROPIC_API_KEY_FILE.",
)
@click.option(
    "--trace",
    "trace_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write every model HTTP exchange as JSON lines to FILE (created 0600; must not exist).",
)
@click.option(
    "--http-debug",
    "http_debug_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Dump request and response bodies, pretty-printed, to FILE (replaced; 0600). "
    "Env: HTTP_DEBUG (1 writes ./http-debug.log; any other value names the file).",
)
@click.option(
    "--base-url",
    metavar="URL",
    help="An Anthropic-compatible server (wins over llm.base_url and ANTHROPIC_BASE_URL).",
)
@click.option("--model", metavar="NAME", help="Override llm.model.")
@click.option("--state-dir", type=click.Path(file_okay=False, path_type=Path), help="The file session directory.")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="`json` prints the outcome, answer, stats and session id as one object on stdout.",
)
@click.option("--no-telemetry", is_flag=True, help="Export no telemetry, whatever agent.yaml's telemetry says.")
@click.pass_context
def run(
    ctx: click.Context,
    prompt: tuple[str, ...],
    checkpoint: bool,
    name: str | None,
    resume_id: str | None,
    force: bool,
    chat: bool,
    no_tui: bool,
    verbose: bool,
    tool_output_mode: str,
    no_color_flag: bool,
    api_key_file: Path | None,
    trace_path: Path | None,
    http_debug_path: Path | None,
    base_url: str | None,
    model: str | None,
    state_dir: Path | None,
    output_format: str,
    no_telemetry: bool,
) -> None:
    """Run the agent: the model may call only the configured application's commands.

    The answer goes to stdout; narration, tool calls, warnings and the stats line go to stderr.
    Commands tagged ai:confirm (or a harness.confirm_tags tag) need the operator's approval; with no
    terminal attached they are denied. Needs ANTHROPIC_API_KEY, or a base URL for an
    Anthropic-compatible server (llm.base_url, ANTHROPIC_BASE_URL or --base-url; Ollama serves one at
    http://localhost:11434).

    \b
    Examples:
      fiskai -c agent.yaml run "which nodes are unhealthy?"
      fiskai -c agent.yaml run --checkpoint "drain node n3"      # Ctrl-C suspends
      fiskai -c agent.yaml run --resume 2abc...
      fiskai -c agent.yaml run --chat --checkpoint "let's look at the cluster"   # /clear starts a new session
      ANTHROPIC_BASE_URL=http://localhost:11434 fiskai -c agent.yaml run --model qwen3 "status?"
      fiskai -c agent.yaml run --format json "status?" | jq -r .answer
      fiskai -c agent.yaml run --tool-output full --no-color "list the nodes"
      fiskai -c agent.yaml run --api-key-file ~/.config/anthropic.key "status?"
      NO_TUI=1 TOOL_OUTPUT=none VERBOSE=1 HTTP_DEBUG=1 fiskai -c agent.yaml run "status?"
    """
    _check_flags(prompt, checkpoint=checkpoint, name=name, resume_id=resume_id, force=force)
    settings = _load(ctx, model)
    original = " ".join(prompt).strip()
    if resume_id is not None:
        # A chat session resumes as a chat (its meta record says so), with or without --chat; /restart
        # then re-sends the session's own prompt.
        stored_chat, original = anyio.run(stored_session, settings, resume_id, state_dir)
        chat = chat or stored_chat
    config = settings.config
    key = read_api_key_file(api_key_file) if api_key_file is not None else None
    connection = wiring.model_connection(settings, base_url, api_key=key)
    http_debug_path = http_debug_file(http_debug_path)
    plain = no_color(no_color_flag)
    observed = start_telemetry(settings, no_telemetry=no_telemetry)
    # The SDK import (seconds) overlaps the introspection in the harness, which waits on a subprocess.
    preload_provider(config.llm.provider)
    checkpointing = checkpoint or resume_id is not None
    events = LineEvents(
        verbose=verbose,
        answer_to_stdout=output_format == "text",
        trace_file=str(trace_path or ""),
        tool_output=tool_output(tool_output_mode),
        color=not plain,
    )
    warn = _warner()
    trace = _open_trace(trace_path, config.llm.model, settings.path, warn)
    dump = _open_http_debug(http_debug_path, warn)
    writers = [w for w in (trace, dump) if w is not None]
    control = RunControl()
    screen = None
    tui_off = no_tui or config.harness.no_tui
    if not tui_off and output_format == "text" and sys.stdin.isatty() and sys.stdout.isatty():
        screen = _full_screen(
            control=control,
            checkpointing=checkpointing,
            line=events,
            prompt=original,
            verbose=verbose,
            chat=chat,
            bell=not config.harness.no_bell,
            resumed=resume_id is not None,
            tool_output=events.tool_output,
            color=not plain,
        )
    request = _Request(
        prompt=" ".join(prompt).strip(),
        session=(checkpoint, name, resume_id, force),
        state_dir=state_dir,
        provider=ProviderSettings(
            model=config.llm.model,
            api_key=connection.api_key,
            base_url=connection.base_url,
            call_timeout=config.llm.budget.call_timeout.total_seconds(),
            observer=Observers(*writers) if writers else None,
        ),
        screen=screen,
        events=events,
        control=control,
        chat=chat,
        original=original,
        verbose=verbose,
        observed=observed,
    )
    try:
        if screen is not None:
            result = anyio.run(screen.run, lambda: _drive(settings, request, screen.signalled))
        else:
            result = anyio.run(_drive, settings, request)
        if trace is not None:
            trace.summary(result.stats)
    finally:
        # Closed even when setup failed, so what was written reaches the disk.
        for writer in writers:
            writer.close()
        observed.shutdown(verbose=verbose)
    _finish(
        result,
        output_format=output_format,
        verbose=verbose,
        config_path=settings.path,
        aborted=control.aborted,
        trace=observed.summary(),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class _Request:
    """What the command line asked of this run, beside the configuration."""

    prompt: str
    session: tuple[bool, str | None, str | None, bool]
    """`--checkpoint`, `--name`, `--resume`, `--force`."""
    state_dir: Path | None
    provider: ProviderSettings
    screen: FullScreen | None
    events: LineEvents
    control: RunControl
    chat: bool
    original: str
    """The prompt a chat's /restart sends again (on resume: the session's own)."""
    verbose: bool
    observed: RunTelemetry


def _check_flags(
    prompt: Sequence[str], *, checkpoint: bool, name: str | None, resume_id: str | None, force: bool
) -> None:
    # The original's messages, in its order.
    if resume_id is not None and checkpoint:
        raise click.UsageError("--resume cannot be combined with --checkpoint")
    if resume_id is not None and prompt:
        raise click.UsageError("--resume does not take a query; the prompt is restored from the session")
    if name is not None and not checkpoint:
        raise click.UsageError("--name requires --checkpoint")
    if force and resume_id is None:
        raise click.UsageError("--force only applies when resuming")


def _load(ctx: click.Context, model: str | None) -> wiring.Settings:
    settings = wiring.load_settings(ctx, "agent", required=True)
    assert settings is not None  # required=True raises instead
    if not model:
        return settings
    llm = settings.config.llm.model_copy(update={"model": model})
    return replace(settings, config=settings.config.model_copy(update={"llm": llm}))


def _full_screen(
    *,
    control: RunControl,
    checkpointing: bool,
    line: LineEvents,
    prompt: str,
    verbose: bool,
    chat: bool,
    bell: bool,
    resumed: bool,
    tool_output: ToolOutput,
    color: bool,
) -> FullScreen | None:
    """The full-screen UI, or None without the `tui` extra (the line UI then serves)."""
    try:
        # prompt-toolkit loads only for a full-screen run.
        from fiskai_cli.ui.tui import FullScreen
    except ImportError:
        return None
    return FullScreen(
        control=control,
        checkpointing=checkpointing,
        line=line,
        prompt=prompt,
        verbose=verbose,
        chat=chat,
        bell=bell,
        resumed=resumed,
        tool_output=tool_output,
        color=color,
    )


def _next_prompt(chat: bool, screen: FullScreen | None, prompt: str, *, resuming: bool) -> NextPrompt | None:
    """The chat input: the full screen's row, or `> ` on the terminal for the line UI."""
    if not chat:
        return None
    if screen is not None:
        return screen.next_prompt
    if not sys.stdin.isatty():
        if resuming:
            raise click.UsageError("resuming a chat session needs a terminal on stdin")
        raise click.UsageError("--chat needs a terminal on stdin")
    return LineChat(prompt)


def _warner() -> Callable[[str], None]:
    def warn(message: str) -> None:
        click.echo(f"warning: {message}", err=True)

    return warn


def _open_trace(path: Path | None, model: str, config_path: Path, warn: Callable[[str], None]) -> TraceFile | None:
    if path is None:
        return None
    try:
        fd = open_exclusive(path)
    except FileExistsError:
        raise click.ClickException(
            f'--trace "{path}" already exists; name a new file (a trace is never overwritten)'
        ) from None
    except OSError as err:
        raise click.ClickException(f'--trace "{path}": {err.strerror or err}') from err
    trace = TraceFile(path, fd, warn)
    trace.session(model=model, config=str(config_path), version=VERSION)
    return trace


def _open_http_debug(path: Path | None, warn: Callable[[str], None]) -> HttpDebugDump | None:
    if path is None:
        return None
    try:
        fd = open_exclusive(path, replace=True)
    except OSError as err:
        raise click.ClickException(f'--http-debug "{path}": {err.strerror or err}') from err
    click.echo(
        f"Dumping model API request and response bodies to {path} (contains the full conversation; "
        "file is created mode 0600, do not share it)",
        err=True,
    )
    return HttpDebugDump(path, fd, warn)


async def _drive(
    settings: wiring.Settings, request: _Request, on_signal: Callable[[int], None] | None = None
) -> RunResult:
    """Build the harness, then run the agent while SIGINT/SIGTERM suspend (journaled runs) or abort it.

    `on_signal` (the full screen's) is told of each signal after the run was steered, to show it.
    """
    control = request.control
    checkpoint, _, resume_id, _ = request.session
    checkpointing = checkpoint or resume_id is not None
    screen = request.screen
    outcome: list[RunResult | Exception] = []

    async def watch_signals() -> None:
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async for signum in signals:
                if checkpointing and not control.suspend_requested:
                    click.echo(_SUSPEND_NOTICE, err=True)
                    control.request_suspend()
                else:
                    control.abort()
                if on_signal is not None:
                    on_signal(signum)

    prompter = screen.prompter if screen is not None else wiring.operator_prompter()
    config = settings.config
    observed = request.observed
    with observed.root(config.identity, interactive=request.chat, resumed=resume_id is not None) as root:
        async with AsyncExitStack() as stack:
            with observed.startup(config.identity, system_prompt=config.system_prompt) as startup:
                harness = await stack.enter_async_context(
                    wiring.open_harness(
                        settings, "run", prompter=prompter, checkpointing=checkpointing, state_dir=request.state_dir
                    )
                )
                inventory(startup, harness.tools, remote_hosts=len(config.remote_tools))
            await _run_in(harness, request, outcome, watch_signals)
        observed.finish(root, outcome[0] if outcome else None)
    if isinstance(outcome[0], Exception):
        raise outcome[0]
    return outcome[0]


async def _run_in(
    harness: wiring.Harness,
    request: _Request,
    outcome: list[RunResult | Exception],
    watch_signals: Callable[[], Coroutine[Any, Any, None]],
) -> None:
    """Run the agent over a built harness, with the signal watcher beside it; the result or error in `outcome`."""
    settings, screen, control = harness.settings, request.screen, request.control
    checkpoint, name, resume_id, force = request.session
    config = settings.config
    session = None
    if harness.journal is not None:
        session = SessionOptions(
            store=harness.journal,
            checkpoint=checkpoint,
            name=name,
            resume_id=resume_id,
            force=force,
            agent=config.identity or "",
        )
    options = RunOptions(
        prompt=request.prompt,
        identity=config.identity or "",
        llm=config.llm,
        tools=harness.tools,
        gate=harness.gate,
        provider=request.provider,
        system_prompt=config.system_prompt,
        start_context=harness.start_context,
        config_file=str(settings.path),
        notices=[Advisory(kind=kind, message=message) for kind, message in harness.notices],  # pyright: ignore[reportArgumentType]
        events=screen.events if screen is not None else request.events,
        session=session,
        control=control,
        interactive=request.chat,
        next_prompt=_next_prompt(request.chat, screen, request.original, resuming=resume_id is not None),
        verbose=request.verbose,
        hooks=command_hooks(settings),
        pii_mode=config.harness.pii.mode,
        tool_updates=harness.tool_updates,
        tool_timeout=wiring.tool_time_limit(config),
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(watch_signals)
        try:
            with wiring.reported():
                outcome.append(await run_agent(options))
        except Exception as err:  # noqa: BLE001 - re-raised below, outside the task group
            # Raised outside the group, so the caller sees the error itself, not an exception group.
            outcome.append(err)
        finally:
            tg.cancel_scope.cancel()


def _finish(
    result: RunResult, *, output_format: str, verbose: bool, config_path: Path, aborted: bool, trace: str = ""
) -> None:
    if result.internal_error:
        click.echo("internal error: fiskai crashed (a bug, not a model or tool failure); please report it", err=True)
    if result.reason == "suspended" and result.session_id:
        click.echo(f"\nsuspended; resume with: fiskai -c {config_path} run --resume {result.session_id}", err=True)
    click.echo("", err=True)
    click.echo(stats_line(result.stats, verbose=verbose) + trace, err=True)
    if output_format == "json":
        click.echo(json.dumps(result_json(result), indent=2, ensure_ascii=False))
    if result.ok:
        return
    message = result.error or f"the run ended: {result.reason}"
    if aborted:
        # 128 + SIGINT, as a shell reports an interrupted command.
        click.echo(f"Error: {message}", err=True)
        sys.exit(130)
    raise click.ClickException(message)
