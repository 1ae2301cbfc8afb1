"""The client-side tool finder on the NATS CLI: index build, query latency, ranking, request size.

Run: uv run python bench/tool_finder.py [--rounds N]

Budgets (issue 17): the index builds in <= 20 ms for 250 tools and answers a query in <= 2 ms. Floors,
measured in the same run over the same tools: for the build, one pass that only lower-cases and joins
each tool's name, description and argument help and splits it into words (what any word index must do
once); for a query, a plain substring scan of the query's words over that text (the naive search the
index replaces). Floor and finder alternate sample by sample, so load from other processes on a shared
machine hits both alike. The header prints the load average; `cpu ms` is the median CPU time of this
process for the same calls, which other processes on the machine do not inflate. The verdict is `ok`
when the wall-clock median meets the budget, `ok (cpu)` when only the CPU time does (a loaded machine).

Request size: the JSON of the tool definitions a request carries (`name`, `description`,
`input_schema`, as the Anthropic codec sends them), with every tool vs with `find_tools` alone (the NATS
CLI has no `ai:no_defer` command, so nothing else is sent up front) and vs `find_tools` plus the five
tools one search loads. Tokens are estimated at 4 bytes per token.

Needs the shared fixtures (`../shared`, or `FISKAI_SHARED_DIR`).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from pydantic import JsonValue

from fiskai_core.builtins import FindToolsTool
from fiskai_core.exec.running import command_tools
from fiskai_core.fisk import load_application
from fiskai_core.testing import write_fake_app
from fiskai_core.tools import CallContext, CallPlan, Tool, ToolArguments, ToolFinder, ToolResult

ROOT = Path(__file__).resolve().parent.parent
QUESTIONS = ROOT / "packages" / "fiskai-core" / "tests" / "tools" / "test_finder_ranking.py"
_WORD = re.compile(r"[^\W_]+")
BUILD_BUDGET_MS = 20.0
QUERY_BUDGET_MS = 2.0


@dataclass(frozen=True, slots=True)
class _Renamed:
    """A real tool under another name, to pad the NATS CLI's 221 tools to 250 with real text."""

    tool: Tool
    name: str

    @property
    def tags(self) -> Sequence[str]:
        return self.tool.tags

    @property
    def description(self) -> str:
        return self.tool.description

    @property
    def input_schema(self) -> Mapping[str, JsonValue]:
        return self.tool.input_schema

    def plan(self, arguments: ToolArguments) -> CallPlan:
        return self.tool.plan(arguments)

    async def invoke(self, plan: CallPlan, context: CallContext) -> ToolResult:
        return await self.tool.invoke(plan, context)


def _shared_fixtures() -> Path:
    base = Path(os.environ.get("FISKAI_SHARED_DIR", ROOT.parent / "shared"))
    path = base / "fixtures" / "fisk" / "with-schemas" / "natscli.introspect.json"
    if not path.is_file():
        sys.exit(f"NATS CLI fixture not found at {path}; put ../shared beside the checkout or set FISKAI_SHARED_DIR")
    return path


def _nats_tools(model: Path, scratch: Path) -> list[Tool]:
    return list(command_tools(load_application(str(write_fake_app(scratch, model, name="nats")))))


def _haystacks(tools: Sequence[Tool]) -> list[str]:
    out: list[str] = []
    for tool in tools:
        parts = [tool.name, tool.description]
        properties = tool.input_schema.get("properties")
        if isinstance(properties, dict):
            for name, spec in properties.items():
                parts.append(name)
                if isinstance(spec, dict) and isinstance(spec.get("description"), str):
                    parts.append(str(spec["description"]))
        out.append("\n".join(parts).casefold())
    return out


def _words(tools: Sequence[Tool]) -> list[list[str]]:
    return [_WORD.findall(text) for text in _haystacks(tools)]


def _substring_scan(haystacks: Sequence[str], names: Sequence[str], query: str, limit: int = 5) -> list[str]:
    words = query.lower().split()
    hits = [(sum(word in text for word in words), name) for text, name in zip(haystacks, names, strict=True)]
    hits.sort(key=lambda hit: (-hit[0], hit[1]))
    return [name for count, name in hits[:limit] if count]


@dataclass
class _Samples:
    """Wall and CPU milliseconds of one figure, and the floor's wall milliseconds taken alongside."""

    wall: list[float] = field(default_factory=list[float])
    cpu: list[float] = field(default_factory=list[float])
    floor: list[float] = field(default_factory=list[float])


def _time(call: Callable[[], object]) -> tuple[float, float]:
    wall, cpu = time.perf_counter_ns(), time.process_time_ns()
    call()
    return (time.perf_counter_ns() - wall) / 1e6, (time.process_time_ns() - cpu) / 1e6


def _alternate(index: Callable[[], object], floor: Callable[[], object], rounds: int, into: _Samples) -> None:
    """`rounds` samples of each, taken in turn."""
    for _ in range(rounds):
        into.floor.append(_time(floor)[0])
        wall, cpu = _time(index)
        into.wall.append(wall)
        into.cpu.append(cpu)


def _p95(samples: Sequence[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def _questions() -> ModuleType:
    spec = importlib.util.spec_from_file_location("finder_questions", QUESTIONS)
    if spec is None or spec.loader is None:
        sys.exit(f"cannot load the ranking questions from {QUESTIONS}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _definition(tool: Tool) -> dict[str, object]:
    return {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema}


def _size(tools: Sequence[Tool]) -> int:
    return len(json.dumps([_definition(tool) for tool in tools], separators=(",", ":")).encode())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=30, help="builds per figure and passes over the questions")
    args = parser.parse_args()

    model = _shared_fixtures()
    with tempfile.TemporaryDirectory() as scratch:
        nats = _nats_tools(model, Path(scratch))
    padded: list[Tool] = [*nats, *(_Renamed(tool, f"mirror_{tool.name}") for tool in nats[: 250 - len(nats)])]
    questions = _questions()
    tuned: Sequence[tuple[str, frozenset[str]]] = questions._TUNED  # the ranking test owns the questions
    held_out: Sequence[tuple[str, frozenset[str]]] = questions._HELD_OUT
    queries = [question for question, _ in (*tuned, *held_out)]

    rows: list[tuple[str, _Samples, float]] = []
    for label, tools in ((f"build, NATS CLI ({len(nats)} tools)", nats), (f"build, {len(padded)} tools", padded)):
        build = _Samples()
        _alternate(lambda tools=tools: ToolFinder(tools), lambda tools=tools: _words(tools), args.rounds, build)
        rows.append((label, build, BUILD_BUDGET_MS))

    finder = ToolFinder(padded)
    haystacks = _haystacks(padded)
    names = [tool.name for tool in padded]
    query = _Samples()
    for asked in queries:
        _alternate(
            lambda q=asked: finder.find(q), lambda q=asked: _substring_scan(haystacks, names, q), args.rounds, query
        )
    rows.append((f"query, {len(padded)} tools ({len(queries)} questions)", query, QUERY_BUDGET_MS))

    load = os.getloadavg()[0]
    print(f"rounds: {args.rounds}; python {sys.version.split()[0]}; cores {os.cpu_count()}; load average {load:.1f}")
    header = (
        f"{'figure':<44} {'median ms':>10} {'p95 ms':>8} {'cpu ms':>7} {'floor ms':>9} {'x floor':>8} "
        f"{'budget ms':>10}  verdict"
    )
    print(header)
    print("-" * len(header))
    failed = False
    for label, samples, budget in rows:
        median = statistics.median(samples.wall)
        cpu = statistics.median(samples.cpu)
        floor = statistics.median(samples.floor)
        # Over the budget on the wall clock but not in CPU time means other processes held the cores.
        verdict = "ok" if median <= budget else "ok (cpu)" if cpu <= budget else "OVER"
        failed |= verdict == "OVER"
        print(
            f"{label:<44} {median:>10.3f} {_p95(samples.wall):>8.3f} {cpu:>7.3f} {floor:>9.3f} "
            f"{median / floor:>8.1f} {budget:>10}  {verdict}"
        )

    print()
    nats_finder = ToolFinder(nats)
    scan_names = [tool.name for tool in nats]
    scan_text = _haystacks(nats)
    print(f"{'ranking on the NATS CLI':<32} {'top-1':>6} {'top-5':>6}   substring-scan top-5 (floor)")
    for label, asked in (("tuned questions", tuned), ("held-out questions", held_out)):
        top1 = sum(bool(expected & {m.name for m in nats_finder.find(q, limit=1)}) for q, expected in asked)
        top5 = sum(bool(expected & {m.name for m in nats_finder.find(q, limit=5)}) for q, expected in asked)
        scan5 = sum(bool(expected & set(_substring_scan(scan_text, scan_names, q))) for q, expected in asked)
        print(f"{label:<32} {top1:>3}/{len(asked):<2} {top5:>3}/{len(asked):<2}   {scan5}/{len(asked)}")

    print()
    by_name = {tool.name: tool for tool in nats}
    find_tools = FindToolsTool(nats_finder)
    every = _size(nats)
    alone = _size([find_tools])
    after = sorted(_size([find_tools, *(by_name[m.name] for m in nats_finder.find(q))]) for q in queries)
    print(f"{'request tool definitions (NATS CLI)':<52} {'bytes':>8} {'~tokens':>8} {'x finder':>9}")
    sizes = (
        (f"all {len(nats)} tools sent directly", every),
        ("find_tools only (nothing is ai:no_defer)", alone),
        ("find_tools + the 5 tools one search loads (median)", statistics.median(after)),
        ("find_tools + the 5 tools one search loads (max)", after[-1]),
    )
    for label, size in sizes:
        print(f"{label:<52} {size:>8.0f} {size / 4:>8.0f} {size / alone:>9.1f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
