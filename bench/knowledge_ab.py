"""The cold lexical index of several checkouts, A/B in one run: which commit made indexing slower or faster.

Run: git -C . worktree add /tmp/old 669db13 && (cd /tmp/old && uv sync --all-packages --all-extras)
     uv run python bench/knowledge_ab.py /tmp/old . --corpus influxdata-docs --rounds 7

Each round runs, for every checkout in turn (the order reversed every other round, so load on a shared
machine hits all of them alike), its own `bench/knowledge_ops.py` in a fresh child of its own `.venv`:
the raw FTS5 insert of its chunks (the floor of bench/knowledge.py), a cold index into a fresh store and,
with `--reindex`, a no-change re-index of that store. Every checkout is compiled to bytecode first. The
table shows medians and the ratio of the cold index to its own floor, and the CPU time of the children.

With `--search`, each checkout then keeps one store of its own and both are searched with the same seeded
keyword pairs and whole questions (bench/knowledge.py's): in-process `Store.search` against a raw FTS5
bm25 query (checkouts alternating round by round), and `fiskai knowledge search` as a one-shot CLI
(checkouts alternating query by query). It answers "did search get slower since that commit?" on a
machine whose speed differs from day to day, where a figure from an earlier session cannot.

Run: uv run python bench/knowledge_ab.py /tmp/old . --corpus influxdata-docs --rounds 3 --search
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from gen_corpus import generate
from knowledge import _queries, _time_cli

SHARED = Path(os.environ.get("FISKAI_SHARED_DIR", Path(__file__).resolve().parent.parent.parent / "shared"))


def _child(tree: Path, op: str, **payload: Any) -> tuple[dict[str, Any], float]:
    """One operation of `tree`'s knowledge_ops in a child of its own venv, with the child's CPU seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [str(tree / ".venv" / "bin" / "python"), str(tree / "bench" / "knowledge_ops.py"), op, json.dumps(payload)],
        capture_output=True,
        text=True,
        check=False,
        cwd=tree,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{tree}: {op} failed: {(done.stderr.strip().splitlines() or ['?'])[-1]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return json.loads(done.stdout), cpu


def _corpus(name: str) -> Path:
    if name.startswith("generated-"):
        files = int(name.removeprefix("generated-").removesuffix("k")) * 1000
        return generate(files, 7, files * 0.007)
    path = SHARED / "fixtures" / "corpus" / name
    return path if path.is_dir() else Path(name)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trees", nargs="+", type=Path, help="checkouts, each with a synced .venv")
    parser.add_argument(
        "--corpus", default="generated-1k", help="generated-1k, generated-10k, a shared corpus name, or a folder"
    )
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--reindex", action="store_true", help="also time a no-change re-index")
    parser.add_argument("--search", action="store_true", help="also time in-process and CLI search")
    parser.add_argument("--cli-runs", type=int, default=40, help="CLI searches per checkout (with --search)")
    args = parser.parse_args()
    trees = [tree.resolve() for tree in args.trees]
    for tree in trees:
        # Each venv's installed packages too: with PYTHONDONTWRITEBYTECODE=1 a checkout whose venv was never
        # compiled recompiles click, apsw and the rest in every CLI search (60 ms of its p50, measured).
        for src in [*sorted((tree / "packages").glob("*/src")), *sorted(tree.glob(".venv/lib/python*/site-packages"))]:
            compileall.compile_dir(src, quiet=1)
    corpus = _corpus(args.corpus)
    ops = ["raw-insert", "index", *(["reindex"] if args.reindex else [])]
    seconds: dict[Path, dict[str, list[float]]] = {tree: {op: [] for op in [*ops, "index cpu"]} for tree in trees}
    work = Path(tempfile.mkdtemp(prefix="knowledge-ab-"))
    try:
        for n in range(args.rounds):
            for i, tree in enumerate(trees if n % 2 == 0 else trees[::-1]):
                folder = work / str(i)
                shutil.rmtree(folder, ignore_errors=True)
                folder.mkdir()
                floor, _ = _child(tree, "raw-insert", corpus=str(corpus), db=str(folder / "raw.db"))
                seconds[tree]["raw-insert"].append(floor["seconds"])
                cold, cpu = _child(tree, "index", corpus=str(corpus), store=str(folder / "store"))
                seconds[tree]["index"].append(cold["seconds"])
                seconds[tree]["index cpu"].append(cpu)
                if args.reindex:
                    again, _ = _child(tree, "index", corpus=str(corpus), store=str(folder / "store"))
                    seconds[tree]["reindex"].append(again["seconds"])
            print(f"round {n + 1}/{args.rounds} done; load {os.getloadavg()[0]:.2f}", flush=True)
        searched = _search_ab(trees, corpus, work, args.rounds, args.cli_runs) if args.search else None
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"\n{corpus}: {args.rounds} rounds, medians; load now {os.getloadavg()[0]:.2f}")
    header = f"{'checkout':<40} {'floor':>8} {'cold':>8} {'ratio':>6} {'cold cpu':>9}" + (
        f" {'re-index':>9}" if args.reindex else ""
    )
    print(header)
    print("-" * len(header))
    for tree in trees:
        m = {op: statistics.median(values) for op, values in seconds[tree].items()}
        line = f"{str(tree)[-40:]:<40} {m['raw-insert']:7.3f}s {m['index']:7.3f}s {m['index'] / m['raw-insert']:5.2f}x"
        line += f" {m['index cpu']:8.3f}s" + (f" {m['reindex']:8.3f}s" if args.reindex else "")
        print(line)
    if searched is not None:
        _print_search(trees, searched)
    return 0


def _search_ab(trees: list[Path], corpus: Path, work: Path, rounds: int, cli_runs: int) -> dict[Path, dict[str, float]]:
    """Median in-process and CLI search times of each checkout, over one store each (see the docstring)."""
    states: dict[Path, tuple[Path, Path]] = {}
    for i, tree in enumerate(trees):
        folder = work / f"search-{i}"
        state = folder / "state"
        folder.mkdir()
        _child(tree, "raw-insert", corpus=str(corpus), db=str(folder / "raw.db"))
        _child(tree, "index", corpus=str(corpus), store=str(state / "knowledge" / "default"))
        states[tree] = (state, folder / "raw.db")
    keywords, questions = _queries(states[trees[0]][1], 20)
    samples: dict[Path, dict[str, list[float]]] = {
        tree: {"keywords": [], "questions": [], "keywords floor": [], "questions floor": [], "cli": []}
        for tree in trees
    }
    for n in range(rounds):
        for tree in trees if n % 2 == 0 else trees[::-1]:
            state, raw = states[tree]
            store = state / "knowledge" / "default"
            got, _ = _child(
                tree, "search", store=str(store), db=str(raw), keywords=keywords, questions=questions, rounds=3
            )
            for kind in ("keywords", "questions"):
                samples[tree][kind].append(got[kind]["ours"]["p50_ms"])
                samples[tree][f"{kind} floor"].append(got[kind]["floor"]["p50_ms"])
    queries = (keywords * (cli_runs // len(keywords) + 1))[:cli_runs]
    for n, query in enumerate(queries):
        for tree in trees if n % 2 == 0 else trees[::-1]:
            fiskai = tree / ".venv" / "bin" / "fiskai"
            timed = _time_cli([[str(fiskai), "knowledge", "--store-dir", str(states[tree][0]), "search", query]])
            if isinstance(timed, str):
                sys.exit(f"{tree}: CLI search failed: {timed}")
            samples[tree]["cli"] += timed
    return {tree: {name: statistics.median(values) for name, values in got.items()} for tree, got in samples.items()}


def _print_search(trees: list[Path], searched: dict[Path, dict[str, float]]) -> None:
    header = f"{'checkout':<40} {'keywords':>9} {'floor':>7} {'questions':>10} {'floor':>7} {'CLI p50':>8}"
    print("\nsearch p50 (ms): in-process, each against its raw FTS5 floor; one-shot CLI")
    print(header)
    print("-" * len(header))
    for tree in trees:
        m = searched[tree]
        print(
            f"{str(tree)[-40:]:<40} {m['keywords']:9.2f} {m['keywords floor']:7.2f} {m['questions']:10.2f}"
            f" {m['questions floor']:7.2f} {m['cli']:8.1f}"
        )


if __name__ == "__main__":
    sys.exit(main())
