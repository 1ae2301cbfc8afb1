"""The 7.4 budget defaults as a run resolves them: 500000 tokens, 0 unbounded, 50 iterations, 120 s calls."""

from __future__ import annotations

from fiskai_agent._budget import Budget
from fiskai_core.config import BudgetSettings, Mode, parse_config


def test_defaults_resolve_to_the_reference_values() -> None:
    budget = Budget.from_settings(parse_config("", Mode.MCP).llm.budget, thinking=False)
    assert (budget.max_tokens, budget.max_iterations, budget.max_output_tokens, budget.call_timeout) == (
        500_000,
        50,
        8192,
        120.0,
    )
    assert Budget.from_settings(BudgetSettings(), thinking=True).max_output_tokens == 16384
    assert budget.exhausted(500_000) and not budget.exhausted(499_999)


def test_zero_max_tokens_never_exhausts() -> None:
    unbounded = Budget.from_settings(
        parse_config("llm: {budget: {max_tokens: 0}}", Mode.MCP).llm.budget, thinking=False
    )
    assert unbounded.max_tokens == 0 and not unbounded.exhausted(10**12)
