"""Which environment variables are credentials: the names no tool inherits and no other process may read.

Standard library only, and outside `fiskai_core.exec` on purpose: the `fiskai` entry point reads these
lists before anything else loads (`fiskai_core.hardening` blanks the values in the process's own
environment block), and `fiskai_core.exec.tool_env` strips the same names from every tool's environment.

Three groups (the README of fiskai-core lists them for operators):

1. The harness's own credentials: the OTLP exporter's `OTEL_EXPORTER_OTLP_*` (`TELEMETRY_CREDENTIAL_PREFIXES`), and
   the model's, `HARNESS_CREDENTIAL_PREFIXES`: every variable starting with
   `ANTHROPIC_` or `CLAUDE_CODE_` (fisk-ai strips five exact Anthropic names; the anthropic 2.x Python SDK
   also resolves credentials from `ANTHROPIC_PROFILE`, `ANTHROPIC_CONFIG_DIR`, `ANTHROPIC_BASE_URL` behind
   a key-adding gateway, and the workload-identity variables, so the whole namespace goes).
2. Well-known credentials of other providers and services: `DEFAULT_STRIPPED_ENV` (exact names) and
   `DEFAULT_STRIPPED_PREFIXES`.
3. The operator's own list (`harness.environment.strip` and the embeddings `api_key_env`): exact names or
   a prefix written `PREFIX_*`.

Names are compared exactly (case sensitive).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

__all__ = [
    "DEFAULT_STRIPPED_ENV",
    "DEFAULT_STRIPPED_PREFIXES",
    "HARNESS_CREDENTIAL_PREFIXES",
    "TELEMETRY_CREDENTIAL_PREFIXES",
    "credential_matcher",
    "is_harness_credential",
    "split_entries",
]

HARNESS_CREDENTIAL_PREFIXES: tuple[str, ...] = ("ANTHROPIC_", "CLAUDE_CODE_")
"""The model provider's namespaces: never reach a tool, whatever the configuration says."""

TELEMETRY_CREDENTIAL_PREFIXES: tuple[str, ...] = ("OTEL_EXPORTER_OTLP_",)
"""The OTLP exporter's settings, which carry the collector's credentials (`..._HEADERS`, the mTLS key and
certificates, and their per-signal forms): never reach a tool, whether or not telemetry is on (reference 6.1).
The whole namespace goes, so a per-signal form added later is covered too."""

DEFAULT_STRIPPED_PREFIXES: tuple[str, ...] = ("OPENAI_", "AZURE_OPENAI_")
"""Whole namespaces of other model providers, removed by default."""

DEFAULT_STRIPPED_ENV: tuple[str, ...] = (
    # Cloud providers: the secret halves and session tokens (region and profile names are not secrets).
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_SECURITY_TOKEN",
    "AWS_BEARER_TOKEN_BEDROCK",
    "AZURE_CLIENT_SECRET",
    "AZURE_CLIENT_CERTIFICATE_PASSWORD",
    "AZURE_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_APPLICATION_CREDENTIALS",
    # Other model APIs.
    "GEMINI_API_KEY",
    "MISTRAL_API_KEY",
    "COHERE_API_KEY",
    "CO_API_KEY",
    "GROQ_API_KEY",
    "DEEPSEEK_API_KEY",
    "XAI_API_KEY",
    "OPENROUTER_API_KEY",
    "TOGETHER_API_KEY",
    "FIREWORKS_API_KEY",
    "HF_TOKEN",
    "HUGGING_FACE_HUB_TOKEN",
    # Source forges.
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "GH_ENTERPRISE_TOKEN",
    "GITHUB_ENTERPRISE_TOKEN",
    "GITLAB_TOKEN",
    # NATS credentials as the nats CLI and client libraries read them (the URL and context name are kept).
    "NATS_CREDS",
    "NATS_NKEY",
    "NATS_PASSWORD",
    "NATS_TOKEN",
)
"""Exact names removed by default; `harness.environment.pass` may let one through."""


def is_harness_credential(name: str) -> bool:
    """Whether `name` belongs to the model provider's or the OTLP exporter's namespaces, which no setting passes."""
    return name.startswith(HARNESS_CREDENTIAL_PREFIXES) or name.startswith(TELEMETRY_CREDENTIAL_PREFIXES)


def split_entries(entries: Iterable[str]) -> tuple[frozenset[str], tuple[str, ...]]:
    """An operator's strip list as (exact names, prefixes): `PREFIX_*` is a prefix; empty entries are ignored."""
    exact: set[str] = set()
    prefixes: list[str] = []
    for entry in entries:
        if entry.endswith("*"):
            if entry[:-1]:
                prefixes.append(entry[:-1])
        elif entry:
            exact.add(entry)
    return frozenset(exact), tuple(prefixes)


def credential_matcher(strip: Iterable[str] = (), *, defaults: bool = True) -> Callable[[str], bool]:
    """A test for "this variable holds a credential": the harness's namespaces, the defaults, and `strip`.

    Args:
        strip: The operator's names: exact, or prefixes written `PREFIX_*`.
        defaults: Whether the harness's namespaces and the default lists count too (False: `strip` only).
            `harness.environment.pass` is deliberately not an argument: a passed name still holds a
            credential; only the tool that needs it gets it, through its own environment.
    """
    exact, prefixes = split_entries(strip)
    if defaults:
        exact |= frozenset(DEFAULT_STRIPPED_ENV)
        prefixes += HARNESS_CREDENTIAL_PREFIXES + TELEMETRY_CREDENTIAL_PREFIXES + DEFAULT_STRIPPED_PREFIXES

    def matches(name: str) -> bool:
        return name in exact or name.startswith(prefixes)

    return matches
