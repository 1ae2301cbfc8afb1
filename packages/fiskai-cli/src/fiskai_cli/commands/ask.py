"""`fiskai ask AGENT "prompt"`: send a prompt to an agent's prompts channel and stream the answer to stdout."""

from __future__ import annotations

import json
import signal
import sys
from typing import Any

import anyio
import click

from fiskai_a2a import NatsContext
from fiskai_a2a.nats_service import NatsStreams
from fiskai_a2a.nats_transport import connect
from fiskai_a2a.prompts_client import cancel_turn, send_turn
from fiskai_a2a.protocol import new_id, serve as wire
from fiskai_cli import _wiring as wiring
from fiskai_cli._wiring import load_settings, reported
from fiskai_cli.commands.a2a import connection_options
from fiskai_core.config import DEFAULT_IDENTITY, Mode
from fiskai_core.sanitize import sanitize_for_terminal

__all__ = ["ask"]


@click.command("ask")
@click.argument("agent")
@click.argument("prompt", nargs=-1)
@click.option("--continue", "token", metavar="TOKEN", help="Add a turn to the conversation this token names.")
@click.option("--read", "read", type=click.IntRange(min=1), metavar="N", help="Print the conversation's last N blocks.")
@connection_options
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="`json` prints every message of the reply set as one JSON line.",
)
@click.option(
    "--approve",
    is_flag=True,
    help="Without a terminal, approve every command the agent asks about (once each); by default they are "
    "refused. On a terminal you are asked.",
)
@click.option(
    "--answer",
    "answer",
    metavar="CALL=CHOICE",
    help="With --continue: answer the approval a turn left unanswered (CALL is the tool_use id the error "
    "named; CHOICE is no, once or always); the run then goes on.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=1),
    default=120.0,
    show_default=True,
    help="Seconds of silence from the agent before giving up.",
)
@click.pass_context
def ask(
    ctx: click.Context,
    agent: str,
    prompt: tuple[str, ...],
    token: str | None,
    read: int | None,
    server_url: str | None,
    context_name: str | None,
    output_format: str,
    approve: bool,
    answer: str | None,
    timeout: float,
) -> None:
    """Send a prompt to AGENT (served by `fiskai serve` with prompts on) and stream its answer.

    The answer goes to stdout as it arrives; tool calls and the conversation token go to stderr. Pass the
    token to --continue for a follow-up turn. Ctrl-C asks the agent to stop the turn (it ends suspended and
    the conversation can go on).

    An agent serving with prompts.elicit asks before a gated command runs, and its ask_human tools ask
    questions: on a terminal you answer them (y/N/a for always); without one, commands are refused (the
    agent is told the refusal is final) unless --approve is given, and questions get "no operator".

    \b
    Examples:
      fiskai ask nats-worker "how many streams are there?" --server nats://127.0.0.1:4222
      fiskai ask nats-worker "and consumers?" --continue 3Hzmp8VqrKL42NmXcPd7bTgWfR1
      fiskai ask nats-worker --continue TOKEN --read 20
      fiskai ask nats-worker --continue TOKEN --answer toolu_01A9bK2mNpQr=once
      fiskai ask nats-worker "status?" --format json | jq -c .
    """
    text = " ".join(prompt).strip()
    if read is not None and (text or not token):
        raise click.UsageError("--read needs --continue TOKEN and no prompt")
    approval = _approval(answer) if answer is not None else None
    if approval is not None and (text or read is not None or not token):
        raise click.UsageError("--answer needs --continue TOKEN and no prompt or --read")
    if read is None and not text and not token:
        raise click.UsageError('give a prompt: fiskai ask AGENT "prompt"')
    config = None
    if not (server_url or context_name):
        settings = load_settings(ctx, Mode.MCP, required=False)
        config = settings.config if settings is not None else None
    target = wiring.nats_target(
        wiring.NatsTarget(server_url=server_url, context_name=context_name), config, needed_for="fiskai ask"
    )
    sender = config.identity if config is not None else DEFAULT_IDENTITY
    answers = _Answers(interactive=sys.stdin.isatty() and sys.stderr.isatty(), approve=approve)
    terminal = anyio.run(
        _ask, target, sender, agent, text, token, read, output_format == "json", timeout, answers, approval
    )
    if isinstance(terminal, wire.ErrorReply):
        if output_format == "text":
            click.echo(f"fiskai: error: {terminal.code or 'failed'}: {terminal.error}", err=True)
        sys.exit(1)


async def _ask(
    target: NatsContext,
    sender: str,
    agent: str,
    prompt: str,
    token: str | None,
    read: int | None,
    as_json: bool,
    silence: float,
    answers: _Answers,
    approval: dict[str, Any] | None,
) -> wire.ServeMessage:
    request = new_id()
    shown: list[str] = []
    terminal: wire.ServeMessage | None = None

    def on_message(message: wire.ServeMessage) -> None:
        if as_json:
            click.echo(json.dumps(message.to_wire(), ensure_ascii=False))
            return
        _render(message, shown)

    with reported():
        async with connect(target, name=f"fiskai ask {agent}") as transport:
            streams = NatsStreams(transport)
            async with anyio.create_task_group() as tasks:

                async def on_interrupt() -> None:
                    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                        async for _ in signals:
                            click.echo("asking the agent to stop this turn", err=True)
                            answers.abandon()
                            await cancel_turn(streams, agent, request, sender=sender, reason="interrupted")

                tasks.start_soon(on_interrupt)
                terminal = await send_turn(
                    streams,
                    agent,
                    sender=sender,
                    prompt=prompt if read is None and prompt else None,
                    token=token,
                    read=read,
                    request=request,
                    on_message=on_message,
                    on_question=answers.decide,
                    answer=approval,
                    request_timeout=silence,
                )
                tasks.cancel_scope.cancel()
    assert terminal is not None
    return terminal


def _render(message: wire.ServeMessage, shown: list[str]) -> None:
    """Text mode: prose to stdout as it streams; everything else to stderr, one line each."""
    if isinstance(message, wire.Ack):
        if message.accepted and message.conversation_token:
            click.echo(f"conversation: {message.conversation_token}", err=True)
        return
    if isinstance(message, wire.EventMessage):
        block = message.block
        if message.kind in ("text", "prompt") and isinstance(block.get("text"), str):
            text = str(block["text"])
            shown.append(text)
            prefix = "> " if message.kind == "prompt" else ""
            click.echo(sanitize_for_terminal(prefix + text))
        elif message.kind == "tool_call":
            click.echo(f"tool: {sanitize_for_terminal(str(block.get('name', '')))}", err=True)
        return
    if isinstance(message, wire.ResultReply) and message.text and message.text not in shown:
        click.echo(sanitize_for_terminal(message.text))


def _approval(text: str) -> dict[str, Any]:
    """`CALL=CHOICE` as a `request.answer`'s approval."""
    call, _, choice = text.partition("=")
    if not call or choice not in ("no", "once", "always"):
        raise click.BadParameter(
            f"{text!r}: give the call and the choice, e.g. toolu_01A9bK2mNpQr=once (no, once or always)",
            param_hint="--answer",
        )
    return {"tool_use_id": call, "kind": "approve", "answer": "choice", "choice": choice}


class _Answers:
    """Answers an agent's questions: asks on a terminal; otherwise refuses (or approves with --approve)."""

    def __init__(self, *, interactive: bool, approve: bool) -> None:
        self.interactive = interactive
        self.approve = approve
        self._asking: anyio.CancelScope | None = None

    def abandon(self) -> None:
        """Ctrl-C while a question is on screen: stop waiting for the person (the turn is being canceled)."""
        if self._asking is not None:
            self._asking.cancel()

    async def decide(self, question: wire.Question) -> dict[str, Any] | None:
        if not self.interactive:
            return self._unattended(question)
        with anyio.CancelScope() as self._asking:
            # The prompt blocks its thread on the terminal; a Ctrl-C leaves it behind instead of waiting.
            return await anyio.to_thread.run_sync(self._ask, question, abandon_on_cancel=True)
        self._asking = None
        return None

    def _unattended(self, question: wire.Question) -> dict[str, Any] | None:
        if question.kind != "approve":
            click.echo(
                f"fiskai ask: the agent asked a question and no terminal can answer it: {_said(question)}", err=True
            )
            return None
        if self.approve:
            click.echo(f"fiskai ask: approved (--approve): {_said(question)}", err=True)
            return {"choice": "once"}
        click.echo(
            f"fiskai ask: refused: the agent asks to run {_said(question)}, and there is no terminal to ask on; "
            "pass --approve to approve commands from a script",
            err=True,
        )
        return {"choice": "no"}

    def _ask(self, question: wire.Question) -> dict[str, Any] | None:
        said = _said(question)
        try:
            if question.kind == "approve":
                answer = click.prompt(f"Run {said}? [y/N/a(lways)]", default="n", show_default=False, err=True)
                choice = {"y": "once", "yes": "once", "a": "always", "always": "always"}.get(answer.strip().lower())
                return {"choice": choice or "no"}
            if question.kind == "confirm":
                return {"confirmed": click.confirm(said, default=False, err=True)}
            if question.kind == "select":
                options = question.options or []
                for number, option in enumerate(options, 1):
                    click.echo(f"  {number}. {sanitize_for_terminal(option)}", err=True)
                index = click.prompt(said, type=click.IntRange(1, max(1, len(options))), err=True)
                return {"index": index - 1}
            return {"value": click.prompt(said, default=question.default or "", show_default=True, err=True)}
        except click.Abort:
            return None  # Ctrl-D / Ctrl-C at the question: nobody answers


def _said(question: wire.Question) -> str:
    text = question.display or question.command or question.question or ""
    return sanitize_for_terminal(text)
