"""A case's expectations against what happened: each failure names the expectation and what was seen."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from fiskai_agent.evaluation._run import CaseRun, Executed
from fiskai_agent.evaluation._suite import Case, Gated, Ran

__all__ = ["Failure", "check_case"]


@dataclass(frozen=True, slots=True)
class Failure:
    """One expectation that did not hold."""

    expectation: str
    """The key, e.g. `ran[1]`, `not_offered`."""
    message: str


def _ran_text(done: Sequence[Executed]) -> str:
    return ", ".join(f"{e.tool} {list(e.argv) if e.argv is not None else ''}".strip() for e in done) or "nothing"


def _gate_of(run: CaseRun, tool: str) -> str:
    for entry in run.gates:
        if entry.tool == tool and not entry.allowed:
            return f"denied ({entry.channel})"
    return ""


def _check_ran(key: str, expected: Sequence[Ran], done: Sequence[Executed], run: CaseRun) -> list[Failure]:
    failures: list[Failure] = []
    for index, want in enumerate(expected):
        where = f"{key}[{index}]"
        if index >= len(done):
            why = _gate_of(run, want.tool) or "it was not called, or not reached"
            failures.append(Failure(where, f"expected {want.tool} to run, but it did not: {why}"))
            continue
        got = done[index]
        if got.tool != want.tool:
            failures.append(Failure(where, f"expected {want.tool} to run here, but {got.tool} ran"))
        elif want.argv is not None and (got.argv is None or list(got.argv) != want.argv):
            failures.append(Failure(where, f"{want.tool} ran with argv {list(got.argv or ())}, expected {want.argv}"))
    if len(done) > len(expected):
        extra = done[len(expected) :]
        failures.append(Failure(key, f"more commands ran than expected: {_ran_text(extra)}"))
    return failures


def _check_gated(expected: Sequence[Gated], run: CaseRun) -> list[Failure]:
    failures: list[Failure] = []
    seen = run.gates
    for index, want in enumerate(expected):
        where = f"gated[{index}]"
        if index >= len(seen):
            failures.append(Failure(where, f"expected a gate decision on {want.tool}, but none was journaled"))
            continue
        got = seen[index]
        verdict = "allowed" if got.allowed else "denied"
        if got.tool != want.tool or got.allowed != want.allowed:
            wanted = "allowed" if want.allowed else "denied"
            failures.append(Failure(where, f"expected {want.tool} {wanted}, journal has {got.tool} {verdict}"))
        elif want.channel is not None and got.channel != want.channel:
            failures.append(Failure(where, f"{want.tool} {verdict} via {got.channel}, expected via {want.channel}"))
        elif want.tag is not None and got.tag != want.tag:
            failures.append(Failure(where, f"{want.tool} was gated by tag {got.tag}, expected {want.tag}"))
        elif want.rule is not None and got.rule != want.rule:
            failures.append(Failure(where, f"{want.tool} {verdict} by rule {got.rule!r}, expected {want.rule!r}"))
    if len(seen) > len(expected):
        extra = ", ".join(f"{g.tool} {'allowed' if g.allowed else 'denied'}" for g in seen[len(expected) :])
        failures.append(Failure("gated", f"more gate decisions than expected: {extra}"))
    return failures


def _check_lists(case: Case, run: CaseRun) -> list[Failure]:
    expect = case.expect
    failures: list[Failure] = []
    ran_tools = {e.tool for e in run.executed}
    failures += [Failure("not_ran", f"{tool} ran, but must not have") for tool in expect.not_ran if tool in ran_tools]
    denied = {g.tool for g in run.gates if not g.allowed}
    failures += [
        Failure("denied", f"{tool} was never denied by the gate") for tool in expect.denied if tool not in denied
    ]
    failures += [
        Failure("offered", f"{tool} was never offered to the model")
        for tool in expect.offered
        if tool not in run.offered
    ]
    failures += [
        Failure("not_offered", f"{tool} was offered to the model") for tool in expect.not_offered if tool in run.offered
    ]
    outputs = [e.output for e in run.executed]
    failures += [
        Failure("output_contains", f"no command output holds {text!r}")
        for text in expect.output_contains
        if not any(text in out for out in outputs)
    ]
    for text in expect.output_excludes:
        holders = [e.tool for e in run.executed if text in e.output]
        if holders:
            failures.append(Failure("output_excludes", f"{text!r} appears in the output of {', '.join(holders)}"))
    return failures


def check_case(case: Case, run: CaseRun) -> list[Failure]:
    """Every expectation of `case` that `run` does not meet (empty when the case passes)."""
    if run.problem:
        return [Failure("case", run.problem)]
    expect = case.expect
    failures: list[Failure] = [
        Failure("argv", f"{done.tool}: the application echoed {done.echo_mismatch!r}, not the journaled argv")
        for done in run.executed
        if done.echo_mismatch is not None
    ]
    if expect.outcome is not None and run.outcome != expect.outcome:
        detail = f": {run.error}" if run.error else ""
        failures.append(Failure("outcome", f"the run ended {run.outcome}{detail}, expected {expect.outcome}"))
    if expect.ran is not None:
        failures += _check_ran("ran", expect.ran, run.executed, run)
    if expect.resume_ran is not None:
        failures += _check_ran("resume_ran", expect.resume_ran, [e for e in run.executed if e.phase == "resume"], run)
    if expect.gated is not None:
        failures += _check_gated(expect.gated, run)
    failures += _check_lists(case, run)
    if expect.prompts is not None and run.prompts != expect.prompts:
        failures.append(Failure("prompts", f"the operator was asked {run.prompts} time(s), expected {expect.prompts}"))
    if expect.journal_terminal is not None and run.journal_terminal != expect.journal_terminal:
        failures.append(
            Failure("journal_terminal", f"the journal ends {run.journal_terminal}, expected {expect.journal_terminal}")
        )
    if case.kill is not None and not run.killed:
        failures.append(
            Failure("kill", f"the run never reached the kill point (after {case.kill.after} {case.kill.tool or ''})")
        )
    return failures
