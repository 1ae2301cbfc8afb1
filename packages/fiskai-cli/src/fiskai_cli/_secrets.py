"""When the `fiskai` command hides the secrets it holds from its tools (the how: `fiskai_core.hardening`).

Three moments, each before any child can start:

- When a subcommand is about to load (`_lazy`; `--version` and `--help` never get there): the names every
  configuration strips (`fiskai_core.credentials`: `ANTHROPIC_*`, `CLAUDE_CODE_*` and the default list).
  Only when one is set: the check costs microseconds, the work (ctypes included) about 3.5 ms.
- Once a configuration is loaded (`_wiring.load_settings`): its `harness.environment.strip` names and the
  embeddings `api_key_env`.
- When `fiskai mcp --token-env NAME` takes the bearer token (`take_secret`).

The values stay in `os.environ` (apart from the token, which is taken out), so the model client and the
tools' `harness.environment.pass` still find them. A step that fails is a one-line warning, not an error:
the command is then as exposed as it was before this existed, and the operator is told so.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable

from fiskai_core.credentials import credential_matcher

__all__ = ["hide_configured_secrets", "hide_default_secrets", "take_secret"]


def hide_default_secrets() -> None:
    """Hide every set variable that fiskai strips from tools whatever the configuration says."""
    _hide_present(credential_matcher())


def hide_configured_secrets(strip: Iterable[str]) -> None:
    """Hide the set variables a configuration adds (`Config.credential_env_names()`)."""
    _hide_present(credential_matcher(strip, defaults=False))


def take_secret(name: str) -> str:
    """Remove `name` from the environment and return its value ("" when unset), blanked in the block too."""
    value = os.environ.pop(name, "")
    if value:
        _hide(lambda candidate: candidate == name)
    return value


def _hide_present(matches: Callable[[str], bool]) -> None:
    if any(matches(name) for name in os.environ):
        _hide(matches)


def _hide(matches: Callable[[str], bool]) -> None:
    from fiskai_core.hardening import hide_environment  # only when there is a secret to hide

    hidden = hide_environment(matches)
    if hidden.problem is not None:
        sys.stderr.write(f"warning: {hidden.problem}\n")
