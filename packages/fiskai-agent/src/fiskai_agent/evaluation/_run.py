"""Running one eval case: the real loop, the real application, a real journal, a scripted model over HTTP.

The model is a `MessagesServer` on a loopback port that the real anthropic SDK talks to; the tools are
the agent's own (bound by the caller from its agent.yaml, so `ai:deny`, include and exclude apply as in
production); the journal is the file backend in the case's own state folder; the operator is a script
of answers, or absent (then the gate denies, as without a terminal).

A case that kills the run runs its first run in a child process (`run_until_killed`, started by the
caller's command line) that SIGKILLs itself the moment the named record is durable in the journal:
nothing else of that run happens (no terminal record, no further tool, no clean-up, the journal lock
left to the kernel). The child reports each finished command on stdout as it goes. Then the case
resumes the run, as `--resume` does, with its own operator and model turns, and the checks see what the
resumed run did. Without a child command line the first run stops in-process at the same point instead.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Generator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import anyio
from typing_extensions import override

from fiskai_agent._options import RunOptions, RunResult, SessionOptions
from fiskai_agent._run import run
from fiskai_agent.evaluation._doubles import Killed, KillingStore, ScriptedOperator
from fiskai_agent.evaluation._suite import Case, ModelTurn
from fiskai_agent.events import Events, ToolResultTrace
from fiskai_agent.llm import ProviderSettings, create_provider
from fiskai_agent.testing import MessagesServer, RecordingEvents, Turn, Usage, text, tool_use
from fiskai_core.approvals import Approvals, RuleError, load_rules, parse_rule, save_rules
from fiskai_core.config import LLMSettings
from fiskai_core.confirm import ConfirmGate
from fiskai_core.prompter import ConfirmChoice, GateRequest
from fiskai_core.tools import Tool, ToolSet
from fiskai_runstate import FileJournalStore, JournalError, Record, Store
from fiskai_runstate.gate_log import GateEntry, gate_entries
from fiskai_runstate.records import TerminalRecord, ToolIntentRecord

__all__ = ["CaseRun", "CaseSetup", "Executed", "case_environment", "run_case", "run_until_killed"]


@dataclass(frozen=True, slots=True, kw_only=True)
class CaseSetup:
    """The agent under test, as its agent.yaml makes it (built by the caller, with the case's env set)."""

    tools: Sequence[Tool]
    llm: LLMSettings
    system_prompt: str = ""
    confirm_tags: Sequence[str] = ()
    identity: str = "agent"
    config_file: str = "agent.yaml"


@dataclass(frozen=True, slots=True, kw_only=True)
class Executed:
    """A command that ran."""

    tool: str
    tool_use_id: str
    argv: tuple[str, ...] | None
    """The journaled argv after the binary."""
    output: str
    exit_code: int | None
    phase: str
    """`run`, or `resume` for the resumed run of a killed case."""
    echo_mismatch: str | None = None
    """When the application echoed its argv (fixturectl does) and it differs from the journaled one: what it echoed."""


@dataclass(slots=True)
class CaseRun:
    """What happened in one case."""

    outcome: str = ""
    error: str = ""
    killed: bool = False
    kill_signal: bool = False
    """The first run's process was killed with SIGKILL (not stopped in-process)."""
    executed: list[Executed] = field(default_factory=list[Executed])
    gates: list[GateEntry] = field(default_factory=list[GateEntry])
    offered: set[str] = field(default_factory=set[str])
    prompts: int = 0
    journal_terminal: str | None = None
    problem: str = ""
    """A case that could not run as written (a rule for an unknown tool, ...)."""


def _script(turns: Sequence[ModelTurn], phase: str) -> list[Turn]:
    script: list[Turn] = []
    for number, turn in enumerate(turns, 1):
        usage = Usage(input_tokens=turn.input_tokens, output_tokens=turn.output_tokens)
        if turn.answer is not None:
            script.append(Turn([text(turn.answer)], stop_reason="end_turn", usage=usage))
            continue
        blocks = [text(turn.text)] if turn.text else []
        for index, call in enumerate(turn.calls, 1):
            use_id = call.id or f"toolu_{phase}_{number:02d}_{index:02d}"
            blocks.append(tool_use(call.tool, call.arguments, id=use_id))
        script.append(Turn(blocks, stop_reason="tool_use", usage=usage))
    return script


@contextmanager
def case_environment(env: Mapping[str, str]) -> Generator[None]:
    """Set `env` for the duration (the tools read the environment when they are bound)."""
    saved = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _echoed(output: str, argv: Sequence[str]) -> str | None:
    """Fixturectl's echo of its argv, when it differs from `argv` (None when it matches or is not an echo)."""
    header = "was called with "
    if header not in output.split("\n", 1)[0]:
        return None
    expected = f"{len(argv)} argument(s):\n" + "".join(f"  [{arg}]\n" for arg in argv)
    body = output.split(header, 1)[1]
    return None if body.startswith(expected) else body[: len(expected) + 40]


def _executed(traces: Sequence[ToolResultTrace], records: Sequence[Record], phase: str) -> list[Executed]:
    argv_of = {
        r.payload.tool_use_id: r.payload.argv
        for r in records
        if isinstance(r.payload, ToolIntentRecord) and r.payload.argv is not None
    }
    done: list[Executed] = []
    for trace in traces:
        if trace.kind != "application" or trace.exit_code is None:
            continue  # not an application command, or its process never ran (bad arguments, no binary)
        full = argv_of.get(trace.tool_use_id)
        tail = tuple(full[1:]) if full is not None else None
        output, exit_code = trace.output, trace.exit_code
        try:
            body: object = json.loads(trace.output)
        except ValueError:
            body = None
        if isinstance(body, dict):
            fields: dict[object, object] = dict(body)  # pyright: ignore[reportUnknownArgumentType]
            text_out = fields.get("output")
            output = text_out if isinstance(text_out, str) else output
        mismatch = _echoed(output, tail) if tail is not None else None
        done.append(
            Executed(
                tool=trace.name,
                tool_use_id=trace.tool_use_id,
                argv=tail,
                output=output,
                exit_code=exit_code,
                phase=phase,
                echo_mismatch=mismatch,
            )
        )
    return done


def _offered(server: MessagesServer, report: CaseRun) -> None:
    for request in server.requests:
        report.offered.update(request.tool_names)
        report.offered.update(request.deferred_tool_names)


async def _drive(
    setup: CaseSetup,
    *,
    prompt: str,
    base_url: str,
    operator: ScriptedOperator,
    approvals: Approvals,
    session: SessionOptions,
    events: Events,
) -> RunResult:
    provider = create_provider(
        setup.llm.provider,
        ProviderSettings(model=setup.llm.model, api_key="fiskai-eval", base_url=base_url, call_timeout=60),
    )
    options = RunOptions(
        prompt=prompt,
        llm=setup.llm,
        system_prompt=setup.system_prompt,
        tools=ToolSet.of(setup.tools),
        gate=ConfirmGate(operator, confirm_tags=setup.confirm_tags, approvals=approvals),
        config_file=setup.config_file,
        events=events,
        session=session,
        provider=provider,
    )
    try:
        return await run(options)
    finally:
        await provider.aclose()


async def _one_run(
    setup: CaseSetup,
    *,
    prompt: str,
    turns: Sequence[ModelTurn],
    phase: str,
    operator: ScriptedOperator,
    approvals: Approvals,
    session: SessionOptions,
    report: CaseRun,
) -> None:
    events = RecordingEvents()
    with MessagesServer(_script(turns, phase)) as server:
        try:
            result = await _drive(
                setup,
                prompt=prompt,
                base_url=server.base_url,
                operator=operator,
                approvals=approvals,
                session=session,
                events=events,
            )
            report.outcome = result.reason or "error"
            report.error = result.error
        except Killed:
            report.killed = True
            report.outcome = "killed"
        _offered(server, report)
    records = await session.store.load(session.name or session.resume_id or "")
    report.executed += _executed(events.tool_results, records, phase)
    report.prompts += operator.approvals_asked


def _prepared(case: Case, setup: CaseSetup, state_dir: Path) -> tuple[CaseSetup, Approvals] | str:
    """The case's setup (budgets applied) and approvals (its rules), or what is wrong with the case."""
    llm = setup.llm
    budget = llm.budget.model_copy(
        update={
            key: value
            for key, value in (("max_tokens", case.max_tokens), ("max_iterations", case.max_iterations))
            if value is not None
        }
    )
    setup = replace(setup, llm=llm.model_copy(update={"budget": budget}))
    tags = {tool.name: tool.tags for tool in setup.tools}
    try:
        rules = [parse_rule(text_, tags=tags[text_.split()[0]]) for text_ in case.rules if text_.split()]
    except KeyError as err:
        return f"rules: no loaded tool {err}"
    except RuleError as err:
        return f"rules: {err}"
    rules_file = state_dir / "approvals" / f"{setup.identity}.yaml"
    approvals = Approvals(
        rules, saver=lambda kept: save_rules(rules_file, kept, identity=setup.identity), identity=setup.identity
    )
    return setup, approvals


def _report(line: Mapping[str, object]) -> None:
    """One line to the parent, flushed at once: the process may be killed right after."""
    sys.stdout.write(json.dumps(line, ensure_ascii=False) + "\n")
    sys.stdout.flush()


class _ReportingEvents(RecordingEvents):
    """A killed child's events: each command that ran, printed as a JSON line the moment it finishes."""

    @override
    def tool_result(self, trace: ToolResultTrace) -> None:
        super().tool_result(trace)
        _report({"result": asdict(trace)})


class _ReportingOperator(ScriptedOperator):
    @override
    async def approve_command(self, request: GateRequest) -> ConfirmChoice:
        _report({"prompt": request.command})
        return await super().approve_command(request)


def _sigkill() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


async def run_until_killed(case: Case, setup: CaseSetup, state_dir: Path, base_url: str) -> None:
    """The first run of a killed case, in a child process that SIGKILLs itself at the kill point.

    Reports on stdout, one JSON object a line: `{"result": ToolResultTrace}` per finished tool call and
    `{"prompt": tool}` per approval asked, then `{"outcome": ..., "error": ...}` if the kill point was
    never reached. The parent (`run_case` with `child`) serves the model and resumes the run.
    """
    prepared = _prepared(case, setup, state_dir)
    kill = case.kill
    if isinstance(prepared, str) or kill is None:
        _report({"outcome": "error", "error": prepared if isinstance(prepared, str) else "no kill point"})
        return
    setup, approvals = prepared
    store = KillingStore(FileJournalStore(state_dir / "runs"), kill, on_hit=_sigkill)
    result = await _drive(
        setup,
        prompt=case.prompt,
        base_url=base_url,
        operator=_ReportingOperator(case.terminal, case.answers),
        approvals=approvals,
        session=SessionOptions(store=store, checkpoint=True, name=case.name),
        events=_ReportingEvents(),
    )
    _report({"outcome": result.reason or "error", "error": result.error})


def _trace(data: object) -> ToolResultTrace | None:
    if not isinstance(data, dict):
        return None
    fields: dict[str, Any] = dict(data)  # pyright: ignore[reportUnknownArgumentType]
    try:
        return ToolResultTrace(**fields)
    except TypeError:
        return None


async def _killed_child(case: Case, child: Sequence[str], store: FileJournalStore, report: CaseRun) -> None:
    """Run the first run in `child` (which SIGKILLs itself at the kill point) against a served script."""
    traces: list[ToolResultTrace] = []
    with MessagesServer(_script(case.turns, "run")) as server:
        process = await anyio.run_process([*child, server.base_url], check=False, stderr=None)
        _offered(server, report)
    for line in process.stdout.decode("utf-8", "replace").splitlines():
        try:
            data: object = json.loads(line)
        except ValueError:
            continue
        if not isinstance(data, dict):
            continue
        item: dict[str, object] = dict(data)  # pyright: ignore[reportUnknownArgumentType]
        if "prompt" in item:
            report.prompts += 1
        trace = _trace(item.get("result"))
        if trace is not None:
            traces.append(trace)
        if "outcome" in item:
            report.outcome, report.error = str(item["outcome"]), str(item.get("error", ""))
    if process.returncode == -signal.SIGKILL:
        report.killed = report.kill_signal = True
        report.outcome = "killed"
    elif not report.outcome:
        report.outcome, report.error = "error", f"the run's process exited with status {process.returncode}"
    try:
        records = await store.load(case.name)
    except JournalError as err:
        report.problem = f"the killed run left no journal ({err}); see its error above"
        return
    report.executed += _executed(traces, records, "run")


async def run_case(case: Case, setup: CaseSetup, state_dir: Path, *, child: Sequence[str] | None = None) -> CaseRun:
    """Run `case` (and its resume) against `setup`, journaling under `state_dir`; call with `case.env` set.

    For a case with a kill point, `child` is the command line of a process that runs the first run with
    `run_until_killed` (the base URL of the scripted model appended): it is killed for real, with
    SIGKILL, at that point. Without `child` the first run stops in-process at the same point instead
    (the journal is the same; the process lives on).
    """
    report = CaseRun()
    prepared = _prepared(case, setup, state_dir)
    if isinstance(prepared, str):
        report.problem = prepared
        return report
    setup, approvals = prepared
    store = FileJournalStore(state_dir / "runs")
    if case.kill is not None and child is not None:
        await _killed_child(case, child, store, report)
        if report.problem:
            return report
        # Rules saved at a prompt in the child are in the rules file; the resume starts from them.
        approvals = Approvals(
            load_rules(state_dir / "approvals" / f"{setup.identity}.yaml") or approvals.rules,
            saver=None,
            identity=setup.identity,
        )
    else:
        first: Store = KillingStore(store, case.kill) if case.kill is not None else store
        await _one_run(
            setup,
            prompt=case.prompt,
            turns=case.turns,
            phase="run",
            operator=ScriptedOperator(case.terminal, case.answers),
            approvals=approvals,
            session=SessionOptions(store=first, checkpoint=True, name=case.name),
            report=report,
        )
    if case.resume is not None and report.killed:
        resume = case.resume
        await _one_run(
            setup,
            prompt=case.prompt,
            turns=resume.turns or [ModelTurn(answer="(the script has no more turns)")],
            phase="resume",
            operator=ScriptedOperator(resume.terminal, resume.answers),
            approvals=approvals,
            session=SessionOptions(store=store, resume_id=case.name),
            report=report,
        )
    records = await store.load(case.name)
    report.gates = gate_entries(records)
    terminals = [r.payload.reason for r in records if isinstance(r.payload, TerminalRecord)]
    report.journal_terminal = terminals[-1] if terminals else None
    return report
