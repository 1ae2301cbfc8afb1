"""Cost of the PII guard per KB of tool output, in CPU time (a busy machine does not inflate it).

Run: uv run python bench/pii.py [--runs N]

Inputs, each cut to 64 KiB (the most a command's output can be): the test corpus repeated (dense with
personal data), its look-alike negatives repeated, and structured log lines (digit-dense, no personal data).
Also the one-time cost of compiling the patterns, paid once per run at start-up.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[1] / "packages" / "fiskai-core" / "tests" / "pii" / "corpus.jsonl"
SIZE = 64 * 1024


def _inputs() -> dict[str, str]:
    rows = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines()]
    logs = "".join(
        f'2024-06-01T12:{i % 60:02d}:{i % 60:02d}.123Z level=info msg="request done" path=/api/v1/orders/{i} '
        f"status=200 dur={i % 97}ms req=7c9e6679-7425-40de-944b-e07fc1f97441\n"
        for i in range(700)
    )
    bases = {
        "corpus (dense personal data)": "\n".join(row["text"] for row in rows),
        "look-alike negatives": "\n".join(row["text"] for row in rows if not row["expect"]),
        "structured logs": logs,
    }
    return {name: (base * (SIZE // len(base) + 1))[:SIZE] for name, base in bases.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    runs = parser.parse_args().runs
    compile_ms = subprocess.run(
        [sys.executable, "-c", "import time; t = time.process_time(); import fiskai_core.pii; "
         "print((time.process_time() - t) * 1000)"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    from fiskai_core.pii import redact

    print(f"import (compiles the patterns): {float(compile_ms):.1f} ms CPU")
    for name, text in _inputs().items():
        found = redact(text).counts
        started = time.process_time()
        for _ in range(runs):
            redact(text)
        seconds = (time.process_time() - started) / runs
        print(
            f"{name:30} {seconds * 1e6 / 64:6.0f} us/KB  {seconds * 1000:5.1f} ms per 64 KiB  {sum(found.values())} found"
        )


if __name__ == "__main__":
    main()
