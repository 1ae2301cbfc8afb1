"""Which server capabilities a run uses, why, and the operator's forced settings.

Decided per run, without importing any SDK (so `fiskai info` can say the same as a run): a Claude model
(`claude-*`), or any model on Anthropic's own API, keeps server-side tool search, prompt caching and
thinking whatever the base URL (proxies and test servers serve them too); another model behind a
non-Anthropic base URL runs without them, since local Anthropic-compatible servers (Ollama, llama.cpp,
vLLM) reject those fields. `llm.capabilities` in agent.yaml forces any of the three on or off.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal
from urllib.parse import urlsplit

__all__ = [
    "CAPABILITY_NAMES",
    "Capabilities",
    "CapabilityName",
    "CapabilityOverrides",
    "anthropic_capabilities",
    "overrides_from_settings",
]

CapabilityName = Literal["tool_search", "prompt_cache", "thinking"]
CAPABILITY_NAMES: tuple[CapabilityName, ...] = ("tool_search", "prompt_cache", "thinking")
_SHOWN: dict[CapabilityName, str] = {
    "tool_search": "server tool search",
    "prompt_cache": "prompt cache",
    "thinking": "thinking",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class CapabilityOverrides:
    """Forced capability settings; `None` keeps the provider's automatic choice."""

    tool_search: bool | None = None
    prompt_cache: bool | None = None
    thinking: bool | None = None

    @property
    def forced(self) -> tuple[CapabilityName, ...]:
        """The capabilities set here, in `CAPABILITY_NAMES` order."""
        return tuple(name for name in CAPABILITY_NAMES if getattr(self, name) is not None)


def overrides_from_settings(settings: object) -> CapabilityOverrides | None:
    """`llm.capabilities` (`auto|on|off` per capability) as overrides; `None` when all are `auto`."""
    values: dict[str, bool | None] = {}
    for name in CAPABILITY_NAMES:
        setting = getattr(settings, name, "auto")
        values[name] = None if setting == "auto" else setting == "on"
    if all(value is None for value in values.values()):
        return None
    return CapabilityOverrides(
        tool_search=values["tool_search"], prompt_cache=values["prompt_cache"], thinking=values["thinking"]
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Capabilities:
    """What a provider (and the server behind it) supports for this run."""

    provider: str
    """The neutral provider id journaled in the fingerprint (`anthropic`); a resume cannot change it."""
    tool_search: bool = False
    """Server-side tool search: deferred tools plus the BM25 search tool."""
    prompt_cache: bool = False
    """`cache_control` breakpoints."""
    thinking: bool = False
    """Adaptive thinking."""
    reason: str = ""
    """Why the automatic choice turned capabilities off, for a warning (empty when none was turned off)."""
    basis: str = ""
    """Why the automatic choice is what it is (`claude-sonnet-4-6 is a Claude model`)."""
    forced: tuple[CapabilityName, ...] = ()
    """The capabilities the operator forced (`llm.capabilities`), whatever the automatic choice."""

    def restricted(self, overrides: CapabilityOverrides | None) -> Capabilities:
        """These capabilities with the operator's forced settings applied (`None` fields keep the auto value)."""
        if overrides is None or not overrides.forced:
            return self
        out = replace(
            self,
            tool_search=self.tool_search if overrides.tool_search is None else overrides.tool_search,
            prompt_cache=self.prompt_cache if overrides.prompt_cache is None else overrides.prompt_cache,
            thinking=self.thinking if overrides.thinking is None else overrides.thinking,
            forced=overrides.forced,
        )
        # The warning is about what the automatic choice took away; nothing is left to warn about when
        # the operator decided every capability it turned off.
        auto_off = [name for name in CAPABILITY_NAMES if not getattr(out, name) and name not in out.forced]
        return out if auto_off else replace(out, reason="")

    def without_server_features(self, why: str) -> Capabilities:
        """All three off: the fallback after a server refused one of them (`why` says which)."""
        return replace(self, tool_search=False, prompt_cache=False, thinking=False, reason=why, basis=why, forced=())

    def why(self) -> str:
        """`server tool search set in llm.capabilities; auto: claude-sonnet-4-6 is a Claude model`."""
        parts: list[str] = []
        if self.forced:
            parts.append(f"{', '.join(_SHOWN[name] for name in self.forced)} set in llm.capabilities")
        if len(self.forced) < len(CAPABILITY_NAMES) and self.basis:
            parts.append(f"auto: {self.basis}")
        return "; ".join(parts)

    def describe(self) -> str:
        """`server tool search on, prompt cache off (llm.capabilities), thinking on (auto: <basis>)`."""
        parts = [
            f"{_SHOWN[name]} {'on' if getattr(self, name) else 'off'}"
            + (" (llm.capabilities)" if name in self.forced else "")
            for name in CAPABILITY_NAMES
        ]
        text = ", ".join(parts)
        if len(self.forced) < len(CAPABILITY_NAMES) and self.basis:
            text += f" (auto: {self.basis})"
        return text


def anthropic_capabilities(provider: str, model: str, base_url: str | None) -> Capabilities:
    """The automatic capabilities for `model` at `base_url` on the Anthropic Messages API."""
    if model.startswith("claude"):
        return Capabilities(
            provider=provider, tool_search=True, prompt_cache=True, thinking=True, basis=f"{model} is a Claude model"
        )
    if not base_url:
        return Capabilities(
            provider=provider, tool_search=True, prompt_cache=True, thinking=True, basis="Anthropic's own API"
        )
    host = (urlsplit(base_url).hostname or "").lower()
    if host == "anthropic.com" or host.endswith(".anthropic.com"):
        return Capabilities(
            provider=provider, tool_search=True, prompt_cache=True, thinking=True, basis=f"Anthropic's API at {host}"
        )
    basis = f'model "{model}" behind {host or base_url} is not a Claude model on Anthropic'
    return Capabilities(
        provider=provider,
        reason=f"{basis}, so server-side tool search, prompt caching and thinking are off (force them with "
        "llm.capabilities in agent.yaml)",
        basis=basis,
    )
