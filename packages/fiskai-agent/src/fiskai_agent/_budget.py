"""Budgets: the run's token budget over all four usage tiers, the iteration cap, the per-response cap.

The run budget is a soft cap checked after each model call and before that turn's tools run, so an
over-budget turn has no further side effects; a final answer is delivered whatever the budget says.
All four tiers (uncached input, output, cache reads, cache writes) count, so the cap measures total
throughput. The per-response cap keeps a single call below the non-streaming ceiling.
"""

from __future__ import annotations

from dataclasses import dataclass

from fiskai_core.config import BudgetSettings

__all__ = [
    "DEFAULT_MAX_ITERATIONS",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_OUTPUT_TOKENS",
    "DEFAULT_OUTPUT_TOKENS_THINKING",
    "Budget",
]

DEFAULT_MAX_TOKENS = 500_000
DEFAULT_MAX_ITERATIONS = 50
DEFAULT_OUTPUT_TOKENS = 8192
DEFAULT_OUTPUT_TOKENS_THINKING = 16384


@dataclass(frozen=True, slots=True, kw_only=True)
class Budget:
    """The limits of one run, defaults applied."""

    max_tokens: int
    max_iterations: int
    max_output_tokens: int
    call_timeout: float

    @classmethod
    def from_settings(cls, settings: BudgetSettings, *, thinking: bool) -> Budget:
        """Resolve `llm.budget`.

        `max_tokens: 0` is unbounded, a zero output cap the default; an explicit output cap wins, even
        over thinking.
        """
        default_output = DEFAULT_OUTPUT_TOKENS_THINKING if thinking else DEFAULT_OUTPUT_TOKENS
        return cls(
            max_tokens=settings.max_tokens,
            max_iterations=settings.max_iterations if settings.max_iterations > 0 else DEFAULT_MAX_ITERATIONS,
            max_output_tokens=settings.max_output_tokens if settings.max_output_tokens > 0 else default_output,
            call_timeout=settings.call_timeout.total_seconds(),
        )

    def exhausted(self, total_tokens: int) -> bool:
        """Whether `total_tokens` (all four tiers, cumulative) has reached the run budget."""
        return self.max_tokens > 0 and total_tokens >= self.max_tokens

    def exhausted_message(self, iterations: int) -> str:
        """The run's error line for a budget stop."""
        return f"token budget ({self.max_tokens}) exhausted after {iterations} iterations"
