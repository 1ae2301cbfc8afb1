"""The environment a wrapped command runs with: the harness's own, minus credentials.

A tool command is driven by a model, so it must not inherit what lets the harness, or anything else
the operator's shell can reach, authenticate. Three layers, applied in this order:

1. The harness's own credentials, never passed on: every variable starting with `ANTHROPIC_`,
   `CLAUDE_CODE_` or `OTEL_EXPORTER_OTLP_` (why the whole namespace: `fiskai_core.credentials`, which
   holds the lists).
2. Well-known credentials of other providers and services (`DEFAULT_STRIPPED_ENV`, exact names, and
   `DEFAULT_STRIPPED_PREFIXES`): removed unless the operator passes a name through
   (`harness.environment.pass`, exact names).
3. The operator's own list (`harness.environment.strip` and the embeddings `api_key_env`): exact
   names or a prefix written `PREFIX_*`; always removed, `pass` does not override it.

Names are compared exactly (case sensitive). `XDG_CONFIG_HOME`, `HOME` and `TMPDIR` are kept: far too
general to remove. A tool that legitimately needs one of the default names (a wrapped `gh` needs
`GH_TOKEN`) gets it only through `pass`. The `fiskai` command also blanks these values in its own
environment block, which a tool could otherwise read from `/proc` (`fiskai_core.hardening`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

from fiskai_core.credentials import (
    DEFAULT_STRIPPED_ENV,
    DEFAULT_STRIPPED_PREFIXES,
    HARNESS_CREDENTIAL_PREFIXES,
    is_harness_credential,
    split_entries,
)

__all__ = [
    "CREDENTIAL_ENV_NAMES",
    "DEFAULT_STRIPPED_ENV",
    "DEFAULT_STRIPPED_PREFIXES",
    "HARNESS_CREDENTIAL_PREFIXES",
    "ENV_NAME_PATTERN",
    "is_harness_credential",
    "tool_env",
]

CREDENTIAL_ENV_NAMES: tuple[str, ...] = DEFAULT_STRIPPED_ENV
"""The default exact names (kept under its earlier name; the prefixes are separate)."""

ENV_NAME_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\*)?")
"""An entry of a strip list: a variable name, or a prefix followed by `*`."""


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
    exact, prefixes = split_entries(strip)
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
