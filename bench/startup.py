"""Start-up time of the `fiskai` command, against `python -c pass` measured in the same run.

Run: uv run python bench/startup.py [--runs N]

Budgets (issue: foundation): `fiskai --version` and `fiskai --help` <= 150 ms; `fiskai info` on the
example <= 300 ms plus the application's own introspection time. Each figure is the median of N runs
of a fresh process, after compiling the workspace sources to bytecode (the machine sets
PYTHONDONTWRITEBYTECODE=1, so without that step every run would recompile them).
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
EXAMPLE = ROOT / "examples" / "fixturectl"


def _time(argv: list[str], runs: int) -> list[float]:
    samples: list[float] = []
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, cwd=ROOT, check=False)
        samples.append((time.perf_counter() - start) * 1000)
        if done.returncode != 0:
            sys.exit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.decode()[-500:]}")
    return samples


def _p95(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()

    for src in sorted((ROOT / "packages").glob("*/src")):
        compileall.compile_dir(src, quiet=1)

    fiskai = str(BIN / "fiskai")
    config = str(EXAMPLE / "agent.yaml")
    baseline = _time([sys.executable, "-c", "pass"], args.runs)
    introspect = _time([str(EXAMPLE / "fixturectl"), "--fisk-introspect"], args.runs)
    base = statistics.median(baseline)
    intro = statistics.median(introspect)
    rows = [
        ("python -c pass (baseline)", baseline, None),
        ("fixturectl --fisk-introspect", introspect, None),
        ("fiskai --version", _time([fiskai, "--version"], args.runs), 150.0),
        ("fiskai --help", _time([fiskai, "--help"], args.runs), 150.0),
        ("fiskai -c example info", _time([fiskai, "-c", config, "info"], args.runs), 300.0 + intro),
        (
            "fiskai -c example info --format json",
            _time([fiskai, "-c", config, "info", "--format", "json"], args.runs),
            300.0 + intro,
        ),
    ]
    print(f"runs per command: {args.runs}; python {sys.version.split()[0]}; cores {os.cpu_count()}")
    header = f"{'command':<38} {'median ms':>10} {'p95 ms':>8} {'x baseline':>11} {'budget ms':>10}  verdict"
    print(header)
    print("-" * len(header))
    failed = False
    for label, samples, budget in rows:
        median = statistics.median(samples)
        verdict = ""
        if budget is not None:
            ok = median <= budget
            failed |= not ok
            verdict = "ok" if ok else "OVER"
        budget_text = f"{budget:.0f}" if budget is not None else "-"
        print(f"{label:<38} {median:>10.1f} {_p95(samples):>8.1f} {median / base:>11.2f} {budget_text:>10}  {verdict}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
