"""The environment a wrapped command runs with: the harness's own, minus credentials.

A tool command is driven by a model, so it must not inherit what lets the harness, or anything else
the operator's shell can reach, authenticate. Three layers, applied in this order:

1. The harness's own model credentials, never passed on: every variable starting with `ANTHROPIC_`
   or `CLAUDE_CODE_` (fisk-ai strips five exact Anthropic names; the anthropic 2.x Python SDK also
   resolves credentials from `ANTHROPIC_PROFILE`, `ANTHROPIC_CONFIG_DIR`, `ANTHROPIC_BASE_URL` behind a
   key-adding gateway, and the workload-identity variables, so the whole namespace goes).
2. Well-known credentials of other providers and services (`DEFAULT_STRIPPED_ENV`, exact names, and
   `DEFAULT_STRIPPED_PREFIXES`): removed unless the operator passes a name through
   (`harness.environment.pass`, exact names).
3. The operator's own list (`harness.environment.strip` and the embeddings `api_key_env`): exact
   names or a prefix written `PREFIX_*`; always removed, `pass` does not override it.

Names are compared exactly (case sensitive). `XDG_CONFIG_HOME`, `HOME` and `TMPDIR` are kept: far too
general to remove. A tool that legitimately needs one of the default names (a wrapped `gh` needs
`GH_TOKEN`) gets it only through `pass`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

__all__ = [
    "CREDENTIAL_ENV_NAMES",
    "DEFAULT_STRIPPED_ENV",
    "DEFAULT_STRIPPED_PREFIXES",
    "HARNESS_CREDENTIAL_PREFIXES",
    "ENV_NAME_PATTERN",
    "is_harness_credential",
    "tool_env",
]

HARNESS_CREDENTIAL_PREFIXES: tuple[str, ...] = ("ANTHROPIC_", "CLAUDE_CODE_")
"""The model provider's namespaces: never reach a tool, whatever the configuration says."""

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

CREDENTIAL_ENV_NAMES: tuple[str, ...] = DEFAULT_STRIPPED_ENV
"""The default exact names (kept under its earlier name; the prefixes are separate)."""

ENV_NAME_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\*)?")
"""An entry of a strip list: a variable name, or a prefix followed by `*`."""


def is_harness_credential(name: str) -> bool:
    """Whether `name` belongs to the model provider's namespaces, which no setting passes to a tool."""
    return name.startswith(HARNESS_CREDENTIAL_PREFIXES)


def tool_env(
    base: Mapping[str, str] | None = None,
    *,
    strip: Iterable[str] = (),
    passthrough: Iterable[str] = (),
    work_dir: str | None = None,
) -> dict[str, str]:
    """Build the environment for a wrapped command (and for introspecting its binary).

    Args:
        base: The environment to start from; the current process environment when None.
        strip: Further variables to remove: exact names, or prefixes written `PREFIX_*`. Always
            removed. Empty entries are ignored.
        passthrough: Exact names exempt from the default list (`DEFAULT_STRIPPED_ENV` and
            `DEFAULT_STRIPPED_PREFIXES`); never from `strip` nor from the harness's own namespaces.
        work_dir: The run's tool working directory. When given, `PWD` is replaced by it, so a shell script
            sees the directory it was started in. `HOME` and `TMPDIR` are left alone.

    Returns:
        A new mapping without the stripped variables, with `PWD` set when `work_dir` is given and
        `LLMFORMAT=1` last (so fisk applications print model-friendly output).
    """
    exact, prefixes = _split(strip)
    passed = frozenset(passthrough)
    defaults = frozenset(DEFAULT_STRIPPED_ENV)
    env = {
        name: value
        for name, value in (os.environ if base is None else base).items()
        if not is_harness_credential(name)
        and name not in exact
        and not name.startswith(prefixes)
        and (name in passed or (name not in defaults and not name.startswith(DEFAULT_STRIPPED_PREFIXES)))
    }
    if work_dir is not None:
        # Removed first so the new value also comes last, as in fisk-ai's appended entry.
        env.pop("PWD", None)
        env["PWD"] = work_dir
    env.pop("LLMFORMAT", None)
    env["LLMFORMAT"] = "1"
    return env


def _split(entries: Iterable[str]) -> tuple[frozenset[str], tuple[str, ...]]:
    exact: set[str] = set()
    prefixes: list[str] = []
    for entry in entries:
        if entry.endswith("*"):
            if entry[:-1]:
                prefixes.append(entry[:-1])
        elif entry:
            exact.add(entry)
    return frozenset(exact), tuple(prefixes)
