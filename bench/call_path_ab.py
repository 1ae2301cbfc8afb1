"""Same-run A/B of the call-path benches between two checkouts (issue 27: figures do not regress).

Run: uv run python bench/call_path_ab.py A_DIR B_DIR [--rounds 3] [--only agent,mcp] [--keep DIR]

A is the baseline (say, a `git worktree` of the starting commit), B the candidate (say, this checkout).
Each checkout runs its OWN script with its OWN virtual environment (`A_DIR/.venv`, made by
`uv sync --all-packages --all-extras` there): the bench scripts follow the API of their checkout, so a
bench from one cannot run against the other's packages. Rounds interleave whole bench runs, each bench
once per side in turn (A then B in odd rounds, B then A in even ones, so neither side always runs second),
so drift in the machine's load (other processes on a shared machine) hits both sides alike; every run
logs the 1-minute load average it started under.

Each bench prints its own table; this driver reads every line that is a label followed by figures (two
or more spaces, then a number with an optional unit), takes the bench's own figure (its median; for
`local_model_requests` the body bytes) and reports, per figure, the median over rounds for A and for B,
B/A of those medians, and the spread of the per-round ratios B_i/A_i. An indented row is named after the
row above it that is not indented. A figure that only one side prints (a row that is new) is listed with
the other side empty. For `/s` rows higher is better; for every other row lower is. `*` marks a figure
whose per-round ratios (two rounds at least) all lie on the same side of 1 by more than 5%: a
difference that survived every round; the rest is read as noise.

Before the first round the workspace sources and installed packages of both checkouts are compiled to
bytecode (the machine sets PYTHONDONTWRITEBYTECODE=1: without it a run would time compilation).
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCHES: dict[str, tuple[str, ...]] = {
    # Lighter than each script's defaults so that several interleaved rounds fit in minutes; every
    # figure is still a median of many samples inside the run.
    "agent": ("--runs", "3"),
    "mcp": ("--calls", "60", "--rounds", "20", "--starts", "3"),
    "a2a": ("--rounds", "100", "--cli-runs", "3"),
    "tool_finder": (),
    "local_model_requests": (),
    "startup": ("--runs", "9"),
    "journal": ("--rounds", "5"),
}
COLUMN = {"local_model_requests": 3}
"""The figure's column where it is not the first number of a row (request body bytes)."""
_ROW = re.compile(r"^(?P<indent> *)(?P<label>\S.*?[A-Za-z)].*?) {2,}(?P<cells>-?[\d,]+(?:\.\d+)?.*)$")
_CELL = re.compile(r"(?<!\S)(-?[\d,]+(?:\.\d+)?)(?: ?(ms|MiB|KiB|us|/s|s|x))?(?!\S)")
_CONSISTENT = 0.05


@dataclass
class Figure:
    unit: str
    a: list[float] = field(default_factory=list[float])
    b: list[float] = field(default_factory=list[float])


@dataclass
class Side:
    name: str
    folder: Path
    python: Path
    loads: dict[str, list[float]] = field(default_factory=dict[str, list[float]])


def parse_rows(output: str, column: int = 0) -> dict[str, tuple[float, str]]:
    """Every `label  number [unit] ...` row of a bench's table, by label: (the figure, its unit)."""
    found: list[tuple[int, str, float, str]] = []
    for line in output.splitlines():
        match = _ROW.match(line.rstrip())
        if match is None:
            continue
        cells = _CELL.findall(match["cells"])
        if len(cells) <= column:
            continue
        value, unit = cells[column]
        found.append((len(match["indent"]), match["label"].strip(), float(value.replace(",", "")), unit))
    rows: dict[str, tuple[float, str]] = {}
    base = min((indent for indent, *_ in found), default=0)
    parent = ""
    for indent, label, value, unit in found:
        if indent == base:
            parent = label
        elif parent:
            label = f"{parent} / {label}"
        rows.setdefault(label, (value, unit))
    return rows


def _side(name: str, folder: str) -> Side:
    path = Path(folder).resolve()
    python = path / ".venv" / "bin" / "python"
    if not python.is_file():
        sys.exit(f"{name}: no virtual environment at {path / '.venv'}; run `uv sync --all-packages --all-extras` there")
    return Side(name=name, folder=path, python=python)


def _env(side: Side) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["VIRTUAL_ENV"] = str(side.python.parent.parent)
    env["PATH"] = f"{side.python.parent}{os.pathsep}{env.get('PATH', '')}"
    shared = ROOT.parent / "shared"
    if "FISKAI_SHARED_DIR" not in env and shared.is_dir():
        env["FISKAI_SHARED_DIR"] = str(shared)  # a baseline worktree elsewhere has no ../shared of its own
    return env


_COMPILE = (
    "import compileall, pathlib, sysconfig\n"
    "for f in [*sorted(pathlib.Path('packages').glob('*/src')), pathlib.Path(sysconfig.get_paths()['purelib'])]:\n"
    "    compileall.compile_dir(f, quiet=1, workers=0)\n"
)


def _compile(side: Side) -> None:
    subprocess.run([str(side.python), "-c", _COMPILE], cwd=side.folder, env=_env(side), check=True)


def _run(side: Side, bench: str, args: tuple[str, ...], keep: Path | None, round_no: int) -> str:
    script = side.folder / "bench" / f"{bench}.py"
    if not script.is_file():
        sys.exit(f"{side.name}: {script} does not exist")
    load = os.getloadavg()[0]
    side.loads.setdefault(bench, []).append(load)
    start = time.perf_counter()
    done = subprocess.run(
        [str(side.python), str(script), *args],
        cwd=side.folder,
        env=_env(side),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
    )
    took = time.perf_counter() - start
    print(
        f"round {round_no} {side.name} {bench}: {took:.0f} s, exit {done.returncode}, load average {load:.2f}",
        file=sys.stderr,
        flush=True,
    )
    if keep is not None:
        (keep / f"{bench}-{side.name}-{round_no}.txt").write_text(done.stdout + done.stderr, encoding="utf-8")
    # A script exits 1 when a figure misses its budget: a result still. No table at all is a failure.
    if not parse_rows(done.stdout):
        sys.exit(f"{side.name}: bench/{bench}.py printed no figures (exit {done.returncode}):\n{done.stderr[-1500:]}")
    return done.stdout


def _ratio_text(a: list[float], b: list[float]) -> tuple[str, str, bool]:
    ma, mb = statistics.median(a), statistics.median(b)
    if ma == 0:
        return "-", "", False
    paired = [y / x for x, y in zip(a, b, strict=False) if x]
    consistent = len(paired) > 1 and (
        all(r > 1 + _CONSISTENT for r in paired) or all(r < 1 - _CONSISTENT for r in paired)
    )
    spread = f"{min(paired):.2f}..{max(paired):.2f}" if paired else ""
    return f"{mb / ma:.2f}", spread, consistent


def _number(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}" if abs(value) < 1 else f"{value:.2f}"


def report(figures: dict[str, dict[str, Figure]], a: Side, b: Side, rounds: int) -> None:
    print(
        f"A = {a.folder}\nB = {b.folder}\n{rounds} interleaved rounds; medians over rounds of each bench's own figure"
    )
    header = ["bench", "figure", "unit", "A", "B", "B/A", "rounds B/A", "", "load A", "load B"]
    lines = [header]
    for bench, rows in figures.items():
        loads = [a.loads.get(bench, []), b.loads.get(bench, [])]
        load_text = [f"{min(x):.1f}-{max(x):.1f}" if x else "" for x in loads]
        for label, figure in rows.items():
            if figure.a and figure.b:
                ratio, spread, consistent = _ratio_text(figure.a, figure.b)
            else:
                ratio, spread, consistent = "-", "only " + ("A" if figure.a else "B"), False
            lines.append(
                [
                    bench,
                    label[:58],
                    figure.unit,
                    _number(statistics.median(figure.a)) if figure.a else "",
                    _number(statistics.median(figure.b)) if figure.b else "",
                    ratio,
                    spread,
                    "*" if consistent else "",
                    *load_text,
                ]
            )
            bench = ""
            load_text = ["", ""]
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    right = {3, 4, 5}
    for line in lines:
        cells = [
            cell.rjust(w) if i in right else cell.ljust(w) for i, (cell, w) in enumerate(zip(line, widths, strict=True))
        ]
        print("  ".join(cells).rstrip())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("a", metavar="A_DIR", help="the baseline checkout")
    parser.add_argument("b", metavar="B_DIR", help="the candidate checkout")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", default="", help=f"comma-separated benches (default: {','.join(BENCHES)})")
    parser.add_argument(
        "--args",
        action="append",
        default=[],
        metavar="BENCH=ARGS",
        help="replace a bench's arguments, e.g. 'agent=--runs 5'",
    )
    parser.add_argument("--keep", type=Path, help="a folder to keep every run's output in")
    args = parser.parse_args()
    chosen = [name.strip() for name in args.only.split(",") if name.strip()] or list(BENCHES)
    unknown = [name for name in chosen if name not in BENCHES]
    if unknown:
        sys.exit(f"unknown bench {', '.join(unknown)}; choose from {', '.join(BENCHES)}")
    bench_args = dict(BENCHES)
    for item in args.args:
        name, sep, rest = item.partition("=")
        if not sep or name not in BENCHES:
            sys.exit(f"--args {item!r}: write BENCH=ARGS with BENCH one of {', '.join(BENCHES)}")
        bench_args[name] = tuple(shlex.split(rest))
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
    a, b = _side("A", args.a), _side("B", args.b)
    for side in (a, b):
        _compile(side)

    figures: dict[str, dict[str, Figure]] = {name: {} for name in chosen}
    for round_no in range(1, args.rounds + 1):
        for bench in chosen:
            for side in (a, b) if round_no % 2 else (b, a):
                rows = parse_rows(_run(side, bench, bench_args[bench], args.keep, round_no), COLUMN.get(bench, 0))
                for label, (value, unit) in rows.items():
                    figure = figures[bench].setdefault(label, Figure(unit=unit))
                    (figure.a if side is a else figure.b).append(value)
    report(figures, a, b, args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
