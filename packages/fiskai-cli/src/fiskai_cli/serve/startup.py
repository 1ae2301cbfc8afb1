"""Start-up of a serving worker: the command line, the checks that refuse to start, the model credential.

Every refusal is one line naming the fix, before anything listens (the reference's start-up refusals).
"""

from __future__ import annotations

import logging
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import anyio
import click

from fiskai_cli import _wiring as wiring

__all__ = ["Flags", "start"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Flags:
    """The command line of `serve` (and of the `a2a` alias)."""

    workers: int | None = None
    work_dir: Path | None = None
    state_dir: Path | None = None
    base_url: str | None = None
    api_key_file: Path | None = None
    verbose: bool = False
    trace_path: Path | None = None
    target: wiring.NatsTarget = wiring.NatsTarget()
    tools_only: bool = False
    """`fiskai a2a`: the tool endpoint alone."""
    token_env: str | None = None
    """`--token-env`: the web channel requires this variable's bearer token."""
    token: str | None = None
    """The token read from `token_env` (taken out of the environment at start-up)."""


def start(settings: wiring.Settings, flags: Flags) -> int:
    """Check the configuration for serving, then serve; the process's exit code.

    Raises:
        click.ClickException: a start-up refusal, in one line naming the fix.
    """
    config = settings.config
    a2a = config.expose.agent.a2a
    if config.expose.agent.agent_to_agent and not flags.tools_only:
        raise click.ClickException(
            f'expose.agent.agent_to_agent in "{settings.path}" was replaced in 0.0.5: set '
            "expose.agent.a2a.serve_tools: true instead"
        )
    prompts = None if flags.tools_only else a2a.prompts
    jobs = None if flags.tools_only else config.expose.agent.jobs
    web = None if flags.tools_only else config.expose.agent.web
    channels = prompts is not None or jobs is not None or web is not None
    tools = a2a.serve_tools or flags.tools_only
    if not channels and not tools:
        raise click.ClickException(
            f'no endpoint is enabled in "{settings.path}": add expose.agent.a2a.prompts (answer prompts), '
            "expose.agent.jobs (take queued jobs), expose.agent.web (answer browsers) or set "
            "expose.agent.a2a.serve_tools: true (serve tools)"
        )
    if flags.workers is not None and flags.workers < 1:
        raise click.ClickException(f"--workers {flags.workers}: must be at least 1")
    if jobs is not None:
        _check_channel(settings, "expose.agent.jobs", "take queued jobs")
    if prompts is not None:
        _check_prompts(settings)
    if web is not None:
        _check_prompts(settings, "expose.agent.web", "answer on the web")
        flags = _web_token(flags, web.listen)
    elif flags.token_env is not None:
        raise click.ClickException(
            f'--token-env guards the web channel, which "{settings.path}" does not turn on: add expose.agent.web or '
            "drop --token-env"
        )
    if tools and not config.application_path:
        raise click.ClickException(
            f'application_path is required to serve tools (expose.agent.a2a.serve_tools) in "{settings.path}"'
        )
    if (prompts is not None or jobs is not None or tools) and not config.nats_context and not flags.target.given:
        raise click.ClickException(
            f'nats_context is required for fiskai serve in "{settings.path}": set nats_context in agent.yaml (a '
            "context of the nats CLI), or pass --server URL or --context NAME"
        )
    if flags.work_dir is not None and not (flags.work_dir.is_absolute() and flags.work_dir.is_dir()):
        raise click.ClickException(f'--work-dir "{flags.work_dir}" must be an absolute path to a directory that exists')
    if channels:
        _check_session_directory(settings, flags.state_dir)
    connection = _connection(settings, flags) if channels else None
    _log_to_stderr(flags.verbose)
    from .start import serve_with

    return anyio.run(serve_with, settings, flags, connection)


def _check_session_directory(settings: wiring.Settings, state_dir: Path | None) -> None:
    """The file backend's directory must exist: a worker provisions nothing (a supervisor would crash-loop)."""
    from fiskai_cli._stores import journal_backend

    sessions = settings.config.harness.sessions
    if journal_backend(sessions) != "file":
        return  # the jetstream stream is checked when the store binds to it
    from fiskai_runstate.options import parse_file_options

    with wiring.reported():
        configured = parse_file_options(sessions.options).directory
    directory = state_dir or (
        wiring.resolve_under(configured, settings.folder) if configured else wiring.state_home() / "runs"
    )
    if not Path(directory).is_dir():
        raise click.ClickException(
            f'the session directory "{directory}" does not exist; create it (mkdir -p -m 700 {directory}) or pass '
            "--state-dir: fiskai serve provisions nothing"
        )


def _check_channel(settings: wiring.Settings, block: str, what: str) -> None:
    config = settings.config
    for value, key in ((config.system_prompt, "system_prompt"), (config.llm.model, "llm.model")):
        if not value:
            raise click.ClickException(f'{key} is required to {what} ({block}) in "{settings.path}"')


def _check_prompts(
    settings: wiring.Settings, block: str = "expose.agent.a2a.prompts", what: str = "answer prompts"
) -> None:
    _check_channel(settings, block, what)
    if not settings.config.identity_written:
        raise click.ClickException(
            f'identity must be set in "{settings.path}" to {what}: it names the conversations and (over NATS) the '
            "subject callers address, so a derived one would change with the binary's name"
        )


def _web_token(flags: Flags, listen: str) -> Flags:
    """`--token-env` for the web channel: read (and taken out of the environment) now, as `fiskai mcp` does."""
    import dataclasses

    from fiskai_cli._secrets import take_secret

    from .web._listen import is_loopback

    host = listen.rpartition(":")[0]
    if flags.token_env is None:
        if not is_loopback(host):
            # Beyond the reference (which authenticates nothing): a reachable listener runs the agent for anyone.
            click.echo(
                f"warning: expose.agent.web listens on non-loopback {host!r} with no token: anyone who can reach it "
                "can run the agent; pass --token-env NAME to require a bearer token",
                err=True,
            )
        return flags
    token = take_secret(flags.token_env).strip()
    if not token:
        raise click.ClickException(
            f"--token-env {flags.token_env}: the environment variable {flags.token_env} is unset or empty; export "
            "the bearer token in it (the name goes on the command line, never the token)"
        )
    return dataclasses.replace(flags, token=token)


def _connection(settings: wiring.Settings, flags: Flags) -> wiring.ModelConnection:
    from fiskai_cli.commands.run_flags import read_api_key_file

    key = read_api_key_file(flags.api_key_file) if flags.api_key_file is not None else None
    return wiring.model_connection(settings, flags.base_url, api_key=key)


class _StderrLines(logging.StreamHandler[TextIO]):
    """The handler serve adds, recognizable so it is added once."""


def _log_to_stderr(verbose: bool) -> None:
    for name in ("fiskai_a2a", "fiskai.serve"):
        logger = logging.getLogger(name)
        logger.setLevel(logging.INFO if verbose or name == "fiskai_a2a" else logging.WARNING)
        if not any(isinstance(handler, _StderrLines) for handler in logger.handlers):
            handler = _StderrLines(sys.stderr)
            handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
            logger.addHandler(handler)
