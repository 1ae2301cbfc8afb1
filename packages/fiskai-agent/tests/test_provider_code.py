"""The serving error code a failed model call maps to (queued jobs and prompts store or send it)."""

from __future__ import annotations

import pytest

from fiskai_agent.errors import ProviderError, provider_code


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (ProviderError("HTTP 429", status=429), "provider_busy"),
        (ProviderError("HTTP 529", status=529), "provider_busy"),
        (ProviderError("the model call did not finish within 120s (llm.budget.call_timeout)"), "provider_busy"),
        (ProviderError("HTTP 401", status=401), "provider_refused"),
        (ProviderError("HTTP 404", status=404, detail="model: claude-nope"), "provider_refused"),
        (ProviderError("HTTP 400", status=400, detail="prompt is too long: 250000 tokens"), "context_exceeded"),
        (ProviderError("HTTP 400", status=400, detail="tools.0: bad schema"), ""),
        (ProviderError("HTTP 500", status=500), ""),
        (ProviderError("cannot reach http://x: refused", retryable=True), ""),
    ],
)
def test_provider_code(error: ProviderError, code: str) -> None:
    assert provider_code(error) == code
