"""Start-up time of the `fiskai` command, against `python -c pass` measured in the same run.

Run: uv run python bench/startup.py [--runs N]

Budgets (issue: foundation): `fiskai --version` and `fiskai --help` <= 150 ms; `fiskai info` on the
example <= 300 ms plus the application's own introspection time; `fiskai info` on a generated 50-command click
app (issue 33, a `tool_sources` entry, description cached) <= 300 ms plus that app's own import time, beside
`app --help`. `uv run fiskai --version` (issue 9.2:
uv's environment check before the entry point; it was 1.2-1.4 s while the workspace compiled bytecode on
every `uv run`) <= 300 ms. Each figure is the median of N runs
of a fresh process, after compiling the workspace sources and the installed packages to bytecode (the
machine sets PYTHONDONTWRITEBYTECODE=1, so without that step every run would recompile them).
"""

from __future__ import annotations

import argparse
import compileall
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_UNTUNED = "from fiskai_cli._root import main; main()"
BIN = Path(sys.executable).parent
EXAMPLE = ROOT / "examples" / "fixturectl"


def _run_once(argv: list[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, cwd=ROOT, check=False)
    elapsed = (time.perf_counter() - start) * 1000
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.decode()[-500:]}")
    return elapsed


def _time_interleaved(commands: dict[str, list[str]], runs: int) -> dict[str, list[float]]:
    """Run every command once per round, so load drift on a shared machine hits all of them alike."""
    samples: dict[str, list[float]] = {label: [] for label in commands}
    for argv in commands.values():
        _run_once(argv)  # warm the page cache once
    for _ in range(runs):
        for label, argv in commands.items():
            samples[label].append(_run_once(argv))
    return samples


def _click_app() -> tuple[str, str, str] | None:
    """A generated 50-command click app in a scratch venv: (config, app script, app python), or None offline."""
    uv = shutil.which("uv")
    if uv is None:
        return None
    home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "fiskai" / "bench-click-50"
    python = home / "venv" / "bin" / "python"
    if not python.exists():
        for argv in (
            [uv, "venv", "--quiet", "--python", sys.executable, str(home / "venv")],
            [uv, "pip", "install", "--quiet", "--python", str(python), "click==8.5.1"],
        ):
            if subprocess.run(argv, check=False).returncode != 0:
                return None
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    commands = "".join(
        f"\n@cli.command()\n@click.option('--limit', type=int)\n@click.option('--force', is_flag=True)\n"
        f'@click.argument(\'name\')\ndef cmd{i:02d}(limit, force, name):\n    """Command {i}."""\n'
        for i in range(50)
    )
    text = f'import click\n\n\n@click.group()\ndef cli():\n    """Fifty commands."""\n{commands}'
    module = Path(site) / "fiskai_bench_click50.py"
    if not module.exists() or module.read_text() != text:
        module.write_text(text)
    script = home / "click50"
    script.write_text(f"#!{python}\nfrom fiskai_bench_click50 import cli\ncli()\n")
    script.chmod(0o755)
    config = home / "agent.yaml"
    config.write_text(f"tool_sources:\n  - click: fiskai_bench_click50:cli\n    python: {python}\n    run: {script}\n")
    return str(config), str(script), str(python)


def _p95(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()

    # The installed dependencies too: the workspace no longer compiles bytecode at install (issue 9.2), and
    # with PYTHONDONTWRITEBYTECODE=1 nothing is ever cached, so every run would recompile pydantic and
    # click from source (about 250 ms of `fiskai info`) where a user's first run caches them once.
    for folder in [*sorted((ROOT / "packages").glob("*/src")), Path(sysconfig.get_paths()["purelib"])]:
        compileall.compile_dir(folder, quiet=1, workers=0)

    fiskai = str(BIN / "fiskai")
    config = str(EXAMPLE / "agent.yaml")
    uv = shutil.which("uv")
    commands = {
        "python -c pass (baseline)": [sys.executable, "-c", "pass"],
        "fixturectl --fisk-introspect": [str(EXAMPLE / "fixturectl"), "--fisk-introspect"],
        "fiskai --version": [fiskai, "--version"],
        # What the README's commands cost: uv checks the environment before it runs the entry point.
        **({"uv run fiskai --version": [uv, "run", "fiskai", "--version"]} if uv else {}),
        "fiskai --help": [fiskai, "--help"],
        "fiskai -c example info": [fiskai, "-c", config, "info"],
        "fiskai -c example info --format json": [fiskai, "-c", config, "info", "--format", "json"],
        # The same command without `_entry`'s collector tuning: the row that shows the trick still pays.
        "  same, collector on (no tuning)": [sys.executable, "-c", _UNTUNED, "-c", config, "info"],
    }
    click_app = _click_app()
    if click_app is not None:
        click_config, click_script, click_python = click_app
        commands |= {
            "click50 import (app python)": [click_python, "-c", "import fiskai_bench_click50"],
            "click50 --help": [click_script, "--help"],
            "fiskai info, 50-command click source": [fiskai, "-c", click_config, "info"],
        }
    else:
        print("no uv or no network: the 50-command click rows are left out")
    samples = _time_interleaved(commands, args.runs)
    base = statistics.median(samples["python -c pass (baseline)"])
    intro = statistics.median(samples["fixturectl --fisk-introspect"])
    budgets = {
        "fiskai --version": 150.0,
        "fiskai --help": 150.0,
        "uv run fiskai --version": 300.0,
        "fiskai -c example info": 300.0 + intro,
        "fiskai -c example info --format json": 300.0 + intro,
    }
    if click_app is not None:
        # The app's own import time, less the interpreter start the baseline already is.
        app_import = statistics.median(samples["click50 import (app python)"]) - base
        budgets["fiskai info, 50-command click source"] = 300.0 + max(app_import, 0.0)
    rows = [(label, samples[label], budgets.get(label)) for label in commands]
    print(f"runs per command: {args.runs}, interleaved; python {sys.version.split()[0]}; cores {os.cpu_count()}")
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
