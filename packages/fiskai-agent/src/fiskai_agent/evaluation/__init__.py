"""Agent-safety evaluation: prove, before deployment, what an agent can and cannot do.

A suite (`load_suite`) holds cases: a prompt, a scripted model, an operator's answers and expectations
(which commands ran with which argv, which were gated, denied or never offered, what the journal
holds, what a resume after a kill re-ran). `run_case` runs one through the real loop, the agent's own
tools, a real journal and a scripted Anthropic Messages server the real SDK talks to; `check_case`
lists the expectations that did not hold. `fiskai eval agent SUITE.yaml` is the command around them.
"""

from fiskai_agent.evaluation._checks import Failure, check_case
from fiskai_agent.evaluation._run import CaseRun, CaseSetup, Executed, case_environment, run_case, run_until_killed
from fiskai_agent.evaluation._suite import Case, Suite, SuiteError, load_suite

__all__ = [
    "Case",
    "CaseRun",
    "CaseSetup",
    "Executed",
    "Failure",
    "Suite",
    "SuiteError",
    "case_environment",
    "check_case",
    "load_suite",
    "run_case",
    "run_until_killed",
]
