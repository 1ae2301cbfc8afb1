"""`fiskai eval agent SUITE.yaml`: prove what an agent can and cannot do, before it is deployed.

Each case runs the real agent loop over the agent's own tools (its agent.yaml, so `ai:deny`, include,
exclude and confirm_tags apply as in production), the real application binary, a real journal in a
temporary state folder, and a scripted model served over HTTP to the real SDK. No API key is needed and
nothing is sent anywhere. The library part is `fiskai_agent.evaluation`.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
import click

from fiskai_cli import _wiring as wiring
from fiskai_cli._secrets import hide_configured_secrets
from fiskai_cli.ui.text import clip, table

__all__ = ["eval_group"]


@click.group("eval")
def eval_group() -> None:
    """Evaluate an agent's safety against scripted scenarios.

    \b
    Examples:
      fiskai eval agent examples/agent-eval/safety.yaml
      fiskai eval agent examples/agent-eval/safety.yaml --format json | jq '.cases[] | select(.passed | not)'
    """


@eval_group.command("agent")
@click.argument("suite_path", metavar="SUITE.yaml", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@click.option("--case", "only", multiple=True, metavar="NAME", help="Run only this case (repeatable).")
@click.option(
    "--state-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Keep each case's journal in DIR/<case>/runs (default: a temporary folder, removed).",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="`json` prints every case, what ran, the gate decisions and the failures as one object.",
)
# The first run of a killed case runs in a child process that SIGKILLs itself at the kill point.
@click.option("--child-folder", type=click.Path(file_okay=False, path_type=Path), hidden=True)
@click.option("--child-base-url", hidden=True)
def agent(
    suite_path: Path,
    only: tuple[str, ...],
    state_dir: Path | None,
    output_format: str,
    child_folder: Path | None,
    child_base_url: str | None,
) -> None:
    """Run a suite of agent-safety cases; exit 1 when any expectation fails.

    A case is a prompt, the model's scripted turns (tool calls with arguments, then an answer), the
    operator's answers (or no terminal), and expectations: the commands that ran and their argv, the gate
    decisions, the tools denied or never offered, output that must (not) appear, the journal's end, and
    for a case killed at a named point, what the resumed run re-ran. See examples/agent-eval/.

    \b
    Examples:
      fiskai eval agent examples/agent-eval/safety.yaml
      fiskai eval agent examples/agent-eval/safety.yaml --case no-shell --state-dir /tmp/eval
      fiskai eval agent suite.yaml --format json > report.json
    """
    from fiskai_agent.evaluation import SuiteError, load_suite

    try:
        suite = load_suite(suite_path)
    except SuiteError as err:
        raise click.ClickException(str(err)) from err
    cases = [c for c in suite.cases if not only or c.name in only]
    missing = sorted(set(only) - {c.name for c in suite.cases})
    if missing:
        raise click.ClickException(f"no case named {', '.join(missing)} in {suite_path}")
    settings = _settings(suite.config)
    application = wiring.load_application(settings)
    if application is None:
        raise click.ClickException(f'"{suite.config}" names no application_path; an agent eval needs the application')
    if child_folder is not None and child_base_url is not None and len(cases) == 1:
        from fiskai_agent.evaluation import run_until_killed

        anyio.run(run_until_killed, cases[0], _setup(settings, application), child_folder, child_base_url)
        return
    results = [_run(case, settings, application, state_dir, suite_path) for case in cases]
    failed = [r for r in results if not r["passed"]]
    if output_format == "json":
        body = {
            "suite": str(suite_path),
            "config": str(suite.config),
            "passed": len(results) - len(failed),
            "failed": len(failed),
            "cases": results,
        }
        click.echo(json.dumps(body, indent=2, ensure_ascii=False))
    else:
        click.echo(_table(results))
    for result in failed:
        for failure in result["failures"]:
            click.echo(f'FAIL case "{result["name"]}": {failure["expectation"]}: {failure["message"]}', err=True)
    if failed:
        raise click.ClickException(f"{len(failed)} of {len(results)} case(s) failed")
    click.echo(f"all {len(results)} case(s) passed", err=True)


def _settings(config: Path) -> wiring.Settings:
    from fiskai_core.config import Mode, load_config

    with wiring.reported():
        loaded = load_config(config, Mode.AGENT)
    hide_configured_secrets(loaded.credential_env_names())
    return wiring.Settings(config=loaded, path=config, folder=config.resolve().parent)


def _setup(settings: wiring.Settings, application: Any) -> Any:
    from fiskai_agent.evaluation import CaseSetup

    config = settings.config
    return CaseSetup(
        tools=wiring.application_tools(settings, application),
        llm=config.llm,
        system_prompt=config.system_prompt,
        confirm_tags=tuple(config.harness.confirm_tags),
        identity=config.identity,
        config_file=str(settings.path),
    )


def _run(
    case: Any, settings: wiring.Settings, application: Any, state_dir: Path | None, suite_path: Path
) -> dict[str, Any]:
    from fiskai_agent.evaluation import case_environment, check_case, run_case

    with tempfile.TemporaryDirectory(prefix="fiskai-eval-") as scratch:
        folder = (state_dir / case.name) if state_dir is not None else Path(scratch)
        child = [
            sys.executable,
            "-m",
            "fiskai_cli",
            "eval",
            "agent",
            str(suite_path),
            "--case",
            case.name,
            "--child-folder",
            str(folder),
            "--child-base-url",
        ]
        with case_environment(case.env):
            # Bound inside the case's environment: a tool's environment is taken when it is bound.
            setup = _setup(settings, application)
            with wiring.reported():
                run = anyio.run(lambda: run_case(case, setup, folder, child=child))
    failures = check_case(case, run)
    return {
        "name": case.name,
        "passed": not failures,
        "outcome": run.outcome,
        "error": run.error,
        "killed": "SIGKILL" if run.kill_signal else ("in-process" if run.killed else None),
        "ran": [
            {
                "tool": e.tool,
                "argv": list(e.argv) if e.argv is not None else None,
                "exit_code": e.exit_code,
                "phase": e.phase,
            }
            for e in run.executed
        ],
        "gated": [
            {
                "tool": g.tool,
                "allowed": g.allowed,
                "channel": g.channel,
                "tag": g.tag,
                "rule": g.rule,
                "digest": g.digest,
            }
            for g in run.gates
        ],
        "prompts": run.prompts,
        "journal_terminal": run.journal_terminal,
        "failures": [{"expectation": f.expectation, "message": f.message} for f in failures],
    }


def _table(results: list[dict[str, Any]]) -> str:
    rows: list[list[str]] = []
    for result in results:
        ran = ", ".join(r["tool"] + ("*" if r["phase"] == "resume" else "") for r in result["ran"]) or "-"
        gated = (
            ", ".join(f"{g['tool']}:{'ok' if g['allowed'] else 'denied'}/{g['channel']}" for g in result["gated"])
            or "-"
        )
        status = "pass" if result["passed"] else f"FAIL ({len(result['failures'])})"
        rows.append([result["name"], status, result["outcome"], clip(ran, 60), clip(gated, 70)])
    return table(["case", "result", "outcome", "ran (* after resume)", "gate decisions"], rows)
