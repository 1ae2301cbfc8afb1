"""A stand-in fisk application on disk: replays a captured model and records every call.

The fake is a small `/bin/sh` script, so tests exercise real process execution (argv, environment,
exit codes) without building a Go binary.
"""

from __future__ import annotations

import shlex
from pathlib import Path

__all__ = ["write_fake_app"]


def write_fake_app(directory: Path, model_json: Path, *, name: str = "fakeapp", exit_code: int = 0) -> Path:
    """Write an executable that answers `--fisk-introspect` with `model_json`.

    Any other call appends its argv (one `[arg]` per line, then `--`) to `<name>.calls` beside the
    script, prints the same lines plus `PWD=...` and `LLMFORMAT=...` to stdout, and exits with
    `exit_code`.

    Returns:
        The script's path.
    """
    script = directory / name
    calls = directory / f"{name}.calls"
    model = shlex.quote(str(model_json))
    log = shlex.quote(str(calls))
    script.write_text(
        "#!/bin/sh\n"
        f'if [ "$#" -eq 1 ] && [ "$1" = "--fisk-introspect" ]; then exec cat {model}; fi\n'
        'for arg in "$@"; do printf \'[%s]\\n\' "$arg"; done | tee -a ' + log + "\n"
        f"echo -- >> {log}\n"
        'echo "PWD=$PWD"\n'
        'echo "LLMFORMAT=$LLMFORMAT"\n'
        f"exit {int(exit_code)}\n",
        encoding="utf-8",
    )
    script.chmod(0o755)
    return script
