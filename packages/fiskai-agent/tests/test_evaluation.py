"""fiskai_agent.evaluation in-process: suites are checked strictly, a case without a child command line
stops at its kill point in-process, and its resume re-runs only what it must; expectations name what failed.

The real fixturectl (argv log), a real file journal, the real SDK against the scripted Messages server.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from fiskai_agent.evaluation import Case, CaseSetup, SuiteError, check_case, load_suite, run_case
from fiskai_core.config import LLMSettings

from .conftest import App

_LLM = LLMSettings.model_validate({"model": "claude-sonnet-4-6"})


def _case(data: dict[str, object]) -> Case:
    return Case.model_validate(data)


def test_a_case_killed_after_a_result_resumes_without_running_it_again(app: App, tmp_path: Path) -> None:
    case = _case(
        {
            "name": "k",
            "turns": [
                {
                    "calls": [
                        {"tool": "cluster_node_list", "arguments": {}},
                        {"tool": "cluster_config_get", "arguments": {"key": "ttl"}},
                    ]
                }
            ],
            "kill": {"after": "result", "tool": "cluster_node_list"},
            "resume": {"turns": [{"answer": "done"}]},
            "expect": {
                "outcome": "completed",
                "ran": [{"tool": "cluster_node_list"}, {"tool": "cluster_config_get"}],
                "resume_ran": [{"tool": "cluster_config_get", "argv": ["cluster", "config", "get", "--", "ttl"]}],
            },
        }
    )
    run = anyio.run(run_case, case, CaseSetup(tools=app.tools, llm=_LLM, identity="t"), tmp_path / "state")
    assert run.killed and not run.kill_signal
    assert check_case(case, run) == []
    assert app.calls() == ["cluster node list", "cluster config get -- ttl"], "node list ran exactly once"


def test_expectations_that_do_not_hold_name_themselves(app: App, tmp_path: Path) -> None:
    case = _case(
        {
            "name": "wrong",
            "rules": ["cluster_node_drain @1=db*"],
            "turns": [
                {"calls": [{"tool": "cluster_node_drain", "arguments": {"node": "n3", "reason": "x"}}]},
                {"answer": "done"},
            ],
            "expect": {
                "ran": [{"tool": "cluster_node_drain"}],
                "gated": [{"tool": "cluster_node_drain", "allowed": True, "channel": "rule"}],
                "offered": ["cluster_node_remove"],
                "prompts": 1,
            },
        }
    )
    run = anyio.run(run_case, case, CaseSetup(tools=app.tools, llm=_LLM, identity="t"), tmp_path / "state")
    failures = {f.expectation: f.message for f in check_case(case, run)}
    assert failures == {
        "ran[0]": "expected cluster_node_drain to run, but it did not: denied (no_terminal)",
        "gated[0]": "expected cluster_node_drain allowed, journal has cluster_node_drain denied",
        "offered": "cluster_node_remove was never offered to the model",
        "prompts": "the operator was asked 0 time(s), expected 1",
    }
    assert app.calls() == []


def test_a_rule_for_a_tool_the_agent_does_not_have_is_the_case_problem(app: App, tmp_path: Path) -> None:
    case = _case({"name": "r", "rules": ["cluster_node_remove ..."], "turns": [{"answer": "x"}]})
    run = anyio.run(run_case, case, CaseSetup(tools=app.tools, llm=_LLM, identity="t"), tmp_path / "state")
    assert [f.message for f in check_case(case, run)] == ["rules: no loaded tool 'cluster_node_remove'"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("config: a.yaml\ncases: []\n", "cases: List should have at least 1 item"),
        (
            "config: a.yaml\ncases:\n  - {name: a, turns: [{answer: x}]}\n  - {name: a, turns: [{answer: x}]}\n",
            "two cases",
        ),
        ("config: a.yaml\ncases:\n  - {name: a, turns: [{answer: x}], expect: {ran: [{tool: t, args: []}]}}\n", "args"),
        ("- 1\n", "must be a mapping"),
    ],
)
def test_suites_are_checked_strictly(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "suite.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SuiteError, match=message):
        load_suite(path)


def test_config_is_relative_to_the_suite_and_bare_no_is_an_answer(tmp_path: Path) -> None:
    path = tmp_path / "suite.yaml"
    path.write_text("config: x/agent.yaml\ncases:\n  - {name: a, answers: [no, once], turns: [{answer: x}]}\n")
    suite = load_suite(path)
    assert suite.config == tmp_path / "x" / "agent.yaml"
    assert suite.cases[0].answers == ["no", "once"]
