"""The Provider seam, its capabilities, and the name registry with lazy import paths.

A provider turns a neutral `Request` into one model call. Providers are named in agent.yaml
(`llm.provider`); the registry maps a name to the module that implements it, imported only when a run
starts, so `import fiskai_agent` never pays for an SDK (anthropic costs seconds to import).
`credential_env_names()` is the union of every registered provider's credential variables, which
commands must never inherit.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from fiskai_agent.errors import SetupError

from ._capabilities import Capabilities, CapabilityOverrides, anthropic_capabilities
from ._types import Request, Response

__all__ = [
    "Capabilities",
    "CapabilityOverrides",
    "HttpExchange",
    "HttpObserver",
    "Provider",
    "ProviderSettings",
    "ProviderSpec",
    "create_provider",
    "credential_env_names",
    "known_providers",
    "preload_provider",
    "provider_capabilities",
    "provider_spec",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class HttpExchange:
    """One HTTP attempt, as seen by an `HttpObserver` (bodies are the raw bytes, never altered)."""

    iteration: int
    """The loop iteration the call belongs to."""
    attempt: int
    """0 for the first attempt, then the SDK's retry count."""
    method: str
    url: str
    request_body: bytes
    status: int | None = None
    """The HTTP status; `None` when no response came (a connection failure or timeout)."""
    response_body: bytes | None = None
    """The response body; `None` for a streamed response (not buffered) or no response."""
    duration_ms: float = 0.0
    error: str = ""


class HttpObserver(Protocol):
    """Sees every HTTP attempt a provider makes (`--trace FILE`, `--http-debug FILE`).

    Called on the run's task; must not raise (a failing observer is the caller's to report).
    """

    def exchange(self, exchange: HttpExchange) -> None:
        """One attempt finished (with a response or an error)."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderSettings:
    """How to build a provider for one run."""

    model: str
    api_key: str | None = None
    base_url: str | None = None
    """Validated by `validate_base_url` before it gets here."""
    call_timeout: float = 120.0
    """Seconds each model call may take, retries included."""
    max_retries: int = 2
    """Retries on 408/409/429/5xx and connection errors (the SDK's backoff honours `retry-after`)."""
    observer: HttpObserver | None = None
    overrides: CapabilityOverrides | None = None
    stream: bool = False
    """Use the streaming (SSE) transport for every call; it is used anyway when the output cap is too large
    for a non-streaming call."""


class Provider(Protocol):
    """One model backend for one run."""

    @property
    def capabilities(self) -> Capabilities:
        """What this provider supports for the configured model and server."""
        ...

    async def call(self, request: Request) -> Response:
        """Make one model call (retries included) under the call timeout.

        Raises:
            fiskai_agent.errors.ProviderError: The call failed (after retries), timed out, or was refused;
                the message says what to change.
        """
        ...

    async def aclose(self) -> None:
        """Release connections; idempotent."""
        ...


ProviderFactory = Callable[[ProviderSettings], Provider]


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderSpec:
    """A registered provider: where it lives and which environment variables hold its credentials."""

    name: str
    module: str
    """Imported when a run starts; it defines `create_provider(settings) -> Provider`."""
    credential_env: tuple[str, ...] = ()
    key_env: str = ""
    """The variable a missing-key message tells the operator to set."""
    base_url_env: str = ""
    capabilities: Callable[[str, str, str | None], Capabilities] | None = None
    """The automatic capabilities for (provider name, model, base URL), decided without importing the SDK."""


_REGISTRY: dict[str, ProviderSpec] = {}


def _register(spec: ProviderSpec) -> None:
    if not spec.name or spec.name in _REGISTRY:
        raise ValueError(f"provider {spec.name!r} is empty or registered twice")
    _REGISTRY[spec.name] = spec


_register(
    ProviderSpec(
        name="anthropic",
        module="fiskai_agent.llm.anthropic",
        credential_env=(
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_AUTH_TOKEN",
            "ANTHROPIC_IDENTITY_TOKEN",
            "ANTHROPIC_WEBHOOK_SIGNING_KEY",
            "ANTHROPIC_CUSTOM_HEADERS",
        ),
        key_env="ANTHROPIC_API_KEY",
        base_url_env="ANTHROPIC_BASE_URL",
        capabilities=anthropic_capabilities,
    )
)


def known_providers() -> list[str]:
    """Registered provider names, sorted."""
    return sorted(_REGISTRY)


def provider_spec(name: str) -> ProviderSpec:
    """The registered provider `name`.

    Raises:
        fiskai_agent.errors.SetupError: No provider has that name.
    """
    spec = _REGISTRY.get(name)
    if spec is None:
        raise SetupError(f'unknown llm provider "{name}": known providers are [{" ".join(known_providers())}]')
    return spec


def provider_capabilities(
    name: str, model: str, base_url: str | None, overrides: CapabilityOverrides | None = None
) -> Capabilities:
    """What a run of `model` on provider `name` at `base_url` uses, with the operator's forced settings.

    Raises:
        fiskai_agent.errors.SetupError: No provider has that name.
    """
    spec = provider_spec(name)
    auto = spec.capabilities(name, model, base_url) if spec.capabilities is not None else Capabilities(provider=name)
    return auto.restricted(overrides)


def credential_env_names() -> tuple[str, ...]:
    """Every registered provider's credential variables: sorted, deduplicated."""
    return tuple(sorted({name for spec in _REGISTRY.values() for name in spec.credential_env}))


def preload_provider(name: str) -> threading.Thread | None:
    """Start importing provider `name`'s module on a background thread.

    Its import cost (seconds, for anthropic) then overlaps other start-up work such as introspecting the
    application. Returns the thread, or None for an unknown name.
    """
    spec = _REGISTRY.get(name)
    if spec is None:
        return None
    thread = threading.Thread(target=importlib.import_module, args=(spec.module,), daemon=True, name="provider-import")
    thread.start()
    return thread


def create_provider(name: str, settings: ProviderSettings) -> Provider:
    """Import provider `name`'s module and build a provider.

    Raises:
        fiskai_agent.errors.SetupError: Unknown provider, or it cannot be built from `settings`.
    """
    spec = provider_spec(name)
    module = importlib.import_module(spec.module)
    factory: ProviderFactory = module.create_provider
    return factory(settings)
