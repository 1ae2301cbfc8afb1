"""`fiskai serve`: host the agent behind the endpoints its configuration turns on, until interrupted.

Endpoints: prompts over NATS (`expose.agent.a2a.prompts`), queued jobs (`expose.agent.jobs`), the web channel
(`expose.agent.web`), the 0.0.5 tool endpoint (`expose.agent.a2a.serve_tools: true`), all channels of one host
(`fiskai_cli.serve`). `fiskai a2a` is kept as an alias that serves the tool endpoint alone.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from fiskai_cli import _wiring as wiring
from fiskai_cli.commands.a2a import connection_options
from fiskai_cli.serve.startup import Flags, start

__all__ = ["serve"]


@click.command("serve")
@click.option("--workers", type=int, metavar="N", help="Queued jobs run at once (overrides expose.agent.jobs.workers).")
@click.option(
    "--work-dir",
    type=click.Path(path_type=Path),
    help="Directory command tools run in: an absolute path that exists (default: the current directory).",
)
@click.option("--state-dir", type=click.Path(file_okay=False, path_type=Path), help="The file session directory.")
@click.option("--base-url", metavar="URL", help="An Anthropic-compatible server (wins over llm.base_url).")
@click.option(
    "--api-key-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Read the model API key from this file (trailing whitespace dropped; an empty file is refused).",
)
@click.option("-v", "--verbose", is_flag=True, help="Log each accepted prompt and tool call to stderr.")
@click.option(
    "--trace",
    "trace_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write every model request and response of every run to this new file.",
)
@click.option(
    "--token-env",
    metavar="NAME",
    default=None,
    help="Web channel: require `Authorization: Bearer <token>`, the token read from environment variable NAME "
    "(never pass the token itself; advised for a non-loopback expose.agent.web.listen).",
)
@connection_options
@click.pass_context
def serve(
    ctx: click.Context,
    workers: int | None,
    work_dir: Path | None,
    state_dir: Path | None,
    base_url: str | None,
    api_key_file: Path | None,
    verbose: bool,
    trace_path: Path | None,
    token_env: str | None,
    server_url: str | None,
    context_name: str | None,
) -> None:
    """Host the agent: answer prompts over NATS and browsers over HTTP, take queued jobs, serve tools.

    Runs until interrupted, turning on what agent.yaml enables: expose.agent.a2a.prompts (other agents send
    prompts; answers stream back), expose.agent.web (a chat page, the Vercel AI SDK and AG-UI over HTTP),
    expose.agent.jobs (tasks from an asyncjobs queue; answers stored on the task) and
    expose.agent.a2a.serve_tools: true (peers call the selected tools). Storage must exist beforehand (the
    session directory or stream, the asyncjobs task store and queue); nothing is created. The first Ctrl-C
    (or SIGTERM) drains: no new work, running work finishes; the second stops now. A fault on any endpoint exits non-zero so a
    supervisor restarts the worker.

    \b
    Examples:
      fiskai -c agent.yaml serve
      fiskai -c agent.yaml serve --server nats://127.0.0.1:4222 --state-dir /var/lib/fiskai/runs
      fiskai -c agent.yaml serve --workers 4                  (four queued jobs at once)
      fiskai ask my-agent "how many streams are there?"      (from another shell)
      WEB_TOKEN=... fiskai -c agent.yaml serve --token-env WEB_TOKEN
    """
    flags = Flags(
        workers=workers,
        work_dir=work_dir,
        state_dir=state_dir,
        base_url=base_url,
        api_key_file=api_key_file,
        verbose=verbose,
        trace_path=trace_path,
        target=wiring.NatsTarget(server_url=server_url, context_name=context_name),
        token_env=token_env,
    )
    settings = wiring.load_settings(ctx, "mcp", required=True)
    assert settings is not None, "required=True raises instead of returning None"
    sys.exit(start(settings, flags))
