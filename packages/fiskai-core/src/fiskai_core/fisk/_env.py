"""The environment a wrapped command runs with: the harness's own, minus its credentials.

A tool command is driven by a model, so it must not inherit what lets the harness talk to its LLM
provider. The list is the union over every provider fiskai can link (today only Anthropic), not only the
active one, as in fisk-ai.

fisk-ai strips five Anthropic variables. The Python SDK (anthropic 2.x) also resolves credentials from
further variables, so fiskai strips those too:

* `ANTHROPIC_IDENTITY_TOKEN_FILE`, `ANTHROPIC_FEDERATION_RULE_ID`, `ANTHROPIC_ORGANIZATION_ID`: the
  workload-identity exchange; together they are a credential.
* `ANTHROPIC_PROFILE`, `ANTHROPIC_CONFIG_DIR`: select which stored profile (and so which key) the SDK uses.
  fisk-ai keeps these as mere selectors; with the 2.x SDK they point a child straight at the harness's key,
  so fiskai removes them. `XDG_CONFIG_HOME` is kept: it is far too general to remove.
* `ANTHROPIC_BASE_URL`: behind a gateway that adds the key itself, the address alone is the credential.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

__all__ = ["CREDENTIAL_ENV_NAMES", "tool_env"]

CREDENTIAL_ENV_NAMES: tuple[str, ...] = (
    # fisk-ai's list for its anthropic provider.
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_IDENTITY_TOKEN",
    "ANTHROPIC_WEBHOOK_SIGNING_KEY",
    "ANTHROPIC_CUSTOM_HEADERS",
    # What the anthropic 2.x Python SDK also reads to find or use a credential (see the module docstring).
    "ANTHROPIC_IDENTITY_TOKEN_FILE",
    "ANTHROPIC_FEDERATION_RULE_ID",
    "ANTHROPIC_ORGANIZATION_ID",
    "ANTHROPIC_PROFILE",
    "ANTHROPIC_CONFIG_DIR",
    "ANTHROPIC_BASE_URL",
)
"""Variables never passed to a wrapped command. Names are exact and case sensitive."""


def tool_env(
    base: Mapping[str, str] | None = None,
    *,
    strip: Iterable[str] = (),
    work_dir: str | None = None,
) -> dict[str, str]:
    """Build the environment for a wrapped command (and for `--fisk-introspect`).

    Args:
        base: The environment to start from; the current process environment when None.
        strip: Further variable names to remove, such as the operator's embeddings key variable
            (`knowledge.embeddings.api_key_env`). Exact, case-sensitive names; empty names are ignored.
        work_dir: The run's tool working directory. When given, `PWD` is replaced by it, so a shell script
            sees the directory it was started in. `HOME` and `TMPDIR` are left alone.

    Returns:
        A new mapping: `base` without `CREDENTIAL_ENV_NAMES` and `strip`, with `PWD` set when `work_dir` is
        given and `LLMFORMAT=1` last (so fisk applications print model-friendly output).
    """
    env = dict(os.environ if base is None else base)
    for name in (*CREDENTIAL_ENV_NAMES, *strip):
        env.pop(name, None)
    if work_dir is not None:
        # Removed first so the new value also comes last, as in fisk-ai's appended entry.
        env.pop("PWD", None)
        env["PWD"] = work_dir
    env.pop("LLMFORMAT", None)
    env["LLMFORMAT"] = "1"
    return env
