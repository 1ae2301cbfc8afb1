"""`fiskai knowledge eval SUITE`: score the knowledge index against judged queries.

Prints recall@k, MRR@10 and nDCG@10 of the index's ranking and, when the suite names a corpus, of a plain
FTS5 BM25 floor over the same documents measured in the same run; exits 1 when a stated threshold is
missed, so a CI job can hold the ranking to a figure.
"""

from __future__ import annotations

import dataclasses
import sys
import tempfile
import time
from collections.abc import Callable, Generator, Sequence
from contextlib import contextmanager
from pathlib import Path

import click
import yaml

from fiskai_cli.commands.index_progress import index_with_progress
from fiskai_cli.commands.knowledge import without_stage_option
from fiskai_cli.commands.knowledge_eval_baseline import compare_with_baseline, figures_of, save_baseline
from fiskai_cli.commands.knowledge_eval_report import (
    AnswerSettings,
    Evidence,
    Run,
    json_report,
    table,
    threshold_misses,
)
from fiskai_cli.commands.knowledge_model import fetch_with_progress
from fiskai_rag import Embedder, OpenAICompatibleEmbedder, RagError, StaticEmbedder, Store, open_store
from fiskai_rag.eval import (
    DEFAULT_RECALL_K,
    Bm25Baseline,
    EvalSuite,
    SuiteError,
    answer_figures,
    check_answers,
    check_evidence,
    evaluate,
    load_suite,
    suite_from_mapping,
)

__all__ = ["eval_command"]

_MAX_DEPTH = 20
"""One search returns at most 20 hits, so recall is measured at most that deep."""


def _read_suite(path: Path) -> EvalSuite:
    if path.suffix in {".yaml", ".yml"}:
        try:
            data: object = yaml.safe_load(path.read_text(encoding="utf-8"))
        except OSError as err:
            raise SuiteError(f"cannot read suite file {str(path)!r}: {err.strerror or err}") from err
        except yaml.YAMLError as err:
            raise SuiteError(f"{path}: not valid YAML: {err}") from err
        return suite_from_mapping(data, name=path.name, base_dir=path.parent)
    return load_suite(path)


def _timed(search: Callable[[str], Sequence[str]], samples: list[float]) -> Callable[[str], Sequence[str]]:
    def run(text: str) -> Sequence[str]:
        start = time.perf_counter()
        found = search(text)
        samples.append((time.perf_counter() - start) * 1000)
        return found

    return run


@contextmanager
def _store_dir(given: Path | None) -> Generator[Path]:
    if given is not None:
        yield given
        return
    # No store named: index the suite's corpus into a throwaway store that is gone when the run ends.
    with tempfile.TemporaryDirectory(prefix="fiskai-eval-") as scratch:
        yield Path(scratch) / "knowledge"


def _index_corpus(store_dir: Path, corpus: Path, embedder: Embedder | None, *, progress: bool) -> str:
    start = time.perf_counter()
    with open_store(store_dir, read_only=False, embedder=embedder) as store:
        # A contextual model indexes tens of chunks a second: a large corpus takes minutes, so it shows.
        stats = index_with_progress(store, [str(corpus)], progress=progress)
    elapsed = time.perf_counter() - start
    embedded = f", {stats.embeddings} embeddings" if embedder is not None else ""
    return f"indexed {stats.files} files into {stats.chunks} chunks{embedded} in {elapsed:.1f} s"


def _rank_with_store(
    store_dir: Path,
    suite: EvalSuite,
    k: int,
    embedder: Embedder | None,
    budget: int,
    answering: AnswerSettings,
    label: str = "",
    without_stages: Sequence[str] = (),
) -> Run:
    samples: list[float] = []
    with open_store(store_dir, read_only=True, embedder=embedder, without_stages=without_stages) as store:

        def search(text: str) -> list[str]:
            result = store.search(text, top_k=_MAX_DEPTH)
            if result.degraded:
                # A hybrid figure silently measured on the lexical tier alone would be wrong, not slow.
                raise click.ClickException(f"the vector tier failed during the evaluation: {result.degraded}")
            return [hit.citation for hit in result.hits]

        report = evaluate(suite, _timed(search, samples), k=k)
        evidence = _check_evidence(store, suite, k, budget)
        checks = tuple(
            check_answers(store, query, top=answering.top, budget=answering.budget)
            for query in suite.queries
            if query.answers
        )
    label = label or ("fiskai knowledge, hybrid" if embedder is not None else "fiskai knowledge")
    return Run(
        label=label,
        report=report,
        search_ms=samples,
        evidence=evidence,
        answers=tuple(answer_figures(checks)),
        answer_checks=checks,
    )


def _check_evidence(store: Store, suite: EvalSuite, k: int, budget: int) -> Evidence | None:
    """Answer-bearing checks: the pack an agent would get must carry the expected words, not only the URI."""
    checked = [query for query in suite.queries if query.has_evidence_checks]
    if not checked:
        return None
    failures: list[str] = []
    for query in checked:
        outcome = check_evidence(
            store,
            query.text,
            budget=budget,
            expected_excerpts=query.expected_excerpts,
            expected_reads=query.expected_reads,
            k=k,
        )
        failures += [f"query {query.id}: {failure}" for failure in outcome.failures]
    failed = len({failure.split(":", 1)[0] for failure in failures})
    return Evidence(checked=len(checked), passed=len(checked) - failed, budget=budget, failures=tuple(failures))


def _rank_with_baseline(suite: EvalSuite, corpus: Path, k: int) -> Run:
    samples: list[float] = []
    baseline = Bm25Baseline()
    try:
        baseline.add_folder(corpus, base_dir=suite.base_dir or corpus.parent)
        report = evaluate(suite, _timed(lambda text: baseline.search(text, _MAX_DEPTH), samples), k=k)
    finally:
        baseline.close()
    return Run(label="FTS5 BM25, naive OR", report=report, search_ms=samples)


def _evidence_misses(evidence: Evidence | None) -> list[str]:
    if evidence is None or not evidence.failures:
        return []
    # High recall with missing evidence still fails: the agent would not have had the answer.
    return [f"evidence: {evidence.checked - evidence.passed} of {evidence.checked} queries lacked it"]


def _eval_embedder(
    url: str | None, model: str | None, *, semantic: bool, model_name: str | None, timeout: float = 30.0
) -> OpenAICompatibleEmbedder | StaticEmbedder | None:
    """The embedder the options ask for: a server (--embeddings-url), the in-process model, or none."""
    if (url is None) != (model is None):
        raise click.UsageError("--embeddings-url and --embeddings-model go together")
    semantic = semantic or model_name is not None
    if semantic and url is not None:
        raise click.UsageError("--semantic (the in-process model) and --embeddings-url (a server) exclude each other")
    if url is not None and model is not None:
        return OpenAICompatibleEmbedder(base_url=url, model=model, timeout=timeout)
    if not semantic:
        return None
    embedder = StaticEmbedder(model_name or "", download=True)
    fetch_with_progress(embedder)
    return embedder


def _suite(suite_path: Path, corpus_dir: Path | None) -> EvalSuite:
    try:
        suite = _read_suite(suite_path)
    except SuiteError as err:
        raise click.ClickException(str(err)) from err
    return suite if corpus_dir is None else dataclasses.replace(suite, corpus=corpus_dir)


def _against_baseline(
    runs: list[Run], suite: EvalSuite, answering: AnswerSettings, baseline_file: Path | None, tolerance: float
) -> list[str]:
    if baseline_file is None:
        return []
    figures = figures_of(runs[0].report, runs[0].answers, answering.top, answering.budget)
    return compare_with_baseline(baseline_file, figures, suite=suite.name, tolerance=tolerance)


def _save(runs: list[Run], suite: EvalSuite, answering: AnswerSettings, save_file: Path) -> None:
    figures = figures_of(runs[0].report, runs[0].answers, answering.top, answering.budget)
    bm25 = figures_of(runs[1].report, (), answering.top, answering.budget) if len(runs) > 1 else None
    save_baseline(save_file, figures, suite=suite.name, bm25=bm25)


@click.command("eval")
@click.argument("suite_path", metavar="SUITE", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--store",
    "store_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The store directory to search (the folder holding knowledge.db). Default: a temporary store built "
    "from the suite's corpus, so an evaluation never touches the configured index.",
)
@click.option(
    "--index/--no-index",
    "index_first",
    default=True,
    show_default=True,
    help="Index the suite's corpus into the store before the queries run (incremental; no-op without a corpus).",
)
@click.option(
    "--embeddings-url",
    default=None,
    metavar="URL",
    help="An OpenAI-compatible embeddings API (http://host:port/v1): evaluate the hybrid tier with it.",
)
@click.option("--embeddings-model", default=None, metavar="NAME", help="The model to ask --embeddings-url for.")
@click.option(
    "--embeddings-timeout",
    type=click.FloatRange(min=1),
    default=30.0,
    show_default=True,
    metavar="SECONDS",
    help="Per-request timeout for --embeddings-url (a CPU server embeds 64 chunks a request).",
)
@click.option(
    "--semantic",
    is_flag=True,
    help="Evaluate the hybrid tier with the in-process embedding model (no server; the semantic extra).",
)
@click.option(
    "--model",
    "model_name",
    default=None,
    metavar="NAME|DIR",
    help="The in-process model for --semantic (implies it): a known name or a directory holding a Model2Vec "
    "model or a sentence-transformers BERT encoder.",
)
@click.option(
    "--corpus",
    "corpus_dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="Index this folder instead of the corpus the suite names (the shared data lives elsewhere, say).",
)
@click.option("--bm25/--no-bm25", default=True, show_default=True, help="Also score plain FTS5 BM25.")
@click.option("--no-baseline", "no_bm25", is_flag=True, hidden=True, help="Old name of --no-bm25.")
@click.option(
    "--baseline",
    "baseline_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="A baseline saved by --save-baseline: exit 1 when any figure it holds is lower now by more than --tolerance.",
)
@click.option(
    "--save-baseline",
    "save_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write this run's figures (ranking and per-kind answer rates) to FILE, for a later --baseline.",
)
@click.option(
    "--tolerance",
    type=click.FloatRange(0, 1),
    default=0.01,
    show_default=True,
    help="How far below the --baseline a figure may fall before it counts as a regression.",
)
@click.option(
    "-k",
    "--recall-k",
    "k",
    type=click.IntRange(1, _MAX_DEPTH),
    default=DEFAULT_RECALL_K,
    show_default=True,
    help="Recall depth.",
)
@click.option("--min-ndcg", type=click.FloatRange(0, 1), default=None, help="Fail when nDCG@10 is lower.")
@click.option("--min-mrr", type=click.FloatRange(0, 1), default=None, help="Fail when MRR@10 is lower.")
@click.option("--min-recall", type=click.FloatRange(0, 1), default=None, help="Fail when recall@k is lower.")
@click.option(
    "--budget",
    type=click.IntRange(min=1),
    default=6000,
    show_default=True,
    help="Token budget of the context pack for queries with expected_excerpts/expected_reads "
    "(as knowledge_search uses max_injected_tokens).",
)
@click.option(
    "--answer-top",
    type=click.IntRange(1, _MAX_DEPTH),
    default=5,
    show_default=True,
    help="For questions listing `answers`: how many search hits may carry one.",
)
@click.option(
    "--answer-budget",
    type=click.IntRange(min=1),
    default=1500,
    show_default=True,
    help="For questions listing `answers`: the token budget of the context pack that must carry one.",
)
@click.option(
    "--per-query",
    is_flag=True,
    help=(
        "Also list each query's figures (table format) and, under each question whose answer missed the top "
        "hits, the hits that came instead: one that answers in other words is a gap in the question set."
    ),
)
@click.option("--format", "output_format", type=click.Choice(["table", "json"]), default="table", show_default=True)
@without_stage_option
@click.option(
    "--progress/--no-progress",
    default=None,
    help="Draw a progress bar while the corpus is indexed (default: when stderr is a terminal).",
)
def eval_command(
    suite_path: Path,
    store_dir: Path | None,
    index_first: bool,
    embeddings_url: str | None,
    embeddings_model: str | None,
    embeddings_timeout: float,
    semantic: bool,
    model_name: str | None,
    corpus_dir: Path | None,
    bm25: bool,
    no_bm25: bool,
    baseline_file: Path | None,
    save_file: Path | None,
    tolerance: float,
    k: int,
    min_ndcg: float | None,
    min_mrr: float | None,
    min_recall: float | None,
    budget: int,
    answer_top: int,
    answer_budget: int,
    per_query: bool,
    output_format: str,
    progress: bool | None,
    without_stages: tuple[str, ...],
) -> None:
    """Score the knowledge index against a suite of judged queries.

    SUITE is a TREC-style folder (queries.jsonl, qrels.tsv, optional corpus/), its qrels.tsv, or a
    YAML/JSON file listing queries with the URIs (relpaths or citations) each should find:

    \b
      corpus: docs/
      queries:
        - query: how do I rotate the signing keys
          expected: [docs/keys.md, docs/ops.md#3]
          expected_excerpts: {docs/keys.md: [every 90 days]}
          expected_reads: {docs/keys.md: [kms rotate-key]}

    Prints nDCG@10, MRR@10 and recall@k for the index and, when the suite names a corpus, for plain
    FTS5 BM25 over the same documents. Queries with expected_excerpts or expected_reads also get
    answer-bearing checks: the context pack an agent would receive (--budget) must deliver the URI
    within k with those words in its excerpt, and reading the citation back must show the read
    fragments. Exits 1 when a --min-* threshold is missed or any evidence is missing.

    Questions that list `answers` (verbatim strings that answer them) and a `kind` get per-kind rates:
    the share whose answer is in the top --answer-top search hits, and in the context pack at
    --answer-budget tokens. --save-baseline FILE stores every figure; --baseline FILE exits 1 when one
    of them is now lower by more than --tolerance.

    \b
    Examples:
      fiskai knowledge eval suites/ops.yaml
      fiskai knowledge eval ../shared/ir/cisi --min-ndcg 0.35 --format json
      fiskai knowledge eval ../shared/ir/med --semantic     # hybrid, lexical and BM25 rows
      fiskai knowledge eval suite.yaml --store ~/.local/state/fiskai/knowledge/default --no-index
      fiskai knowledge eval evals/influxdata-tuning.yaml --baseline evals/baselines/influxdata-tuning.json
      fiskai knowledge eval ../shared/ir/med --without-stage bursty    # what one ranking stage adds
    """
    suite = _suite(suite_path, corpus_dir)
    answering = AnswerSettings(top=answer_top, budget=answer_budget)
    if store_dir is None and suite.corpus is None:
        raise click.UsageError("the suite names no corpus, so pass --store DIR (the folder holding knowledge.db)")
    notes: list[str] = []
    embedder: OpenAICompatibleEmbedder | StaticEmbedder | None = None
    lexical: list[Run] = []
    try:
        embedder = _eval_embedder(
            embeddings_url, embeddings_model, semantic=semantic, model_name=model_name, timeout=embeddings_timeout
        )
        with _store_dir(store_dir) as where:
            if index_first and suite.corpus is not None:
                draw = sys.stderr.isatty() if progress is None else progress
                notes.append(f"corpus {suite.corpus}: {_index_corpus(where, suite.corpus, embedder, progress=draw)}")
            runs = [_rank_with_store(where, suite, k, embedder, budget, answering, without_stages=without_stages)]
            if embedder is not None:
                # The same store without its vectors: the lexical row a hybrid figure is judged against.
                lexical = [
                    _rank_with_store(
                        where, suite, k, None, budget, answering, "fiskai knowledge, lexical", without_stages
                    )
                ]
            if without_stages:
                notes.append(f"search stages switched off: {', '.join(without_stages)}")
    except RagError as err:
        raise click.ClickException(str(err)) from err
    finally:
        if embedder is not None:
            embedder.close()
    if bm25 and not no_bm25 and suite.corpus is not None:  # --no-baseline: the old name of --no-bm25
        try:
            runs.append(_rank_with_baseline(suite, suite.corpus, k))
        except OSError as err:
            raise click.ClickException(
                f"cannot read the corpus {str(suite.corpus)!r} for the BM25 baseline: {err.strerror or err}; "
                "check the folder, or pass --no-bm25"
            ) from err
    misses = threshold_misses(runs[0].report, {"ndcg": min_ndcg, "mrr": min_mrr, "recall": min_recall})
    misses += _evidence_misses(runs[0].evidence)
    evidence = runs[0].evidence
    misses += _against_baseline(runs, suite, answering, baseline_file, tolerance)
    if save_file is not None:
        _save(runs, suite, answering, save_file)
        notes.append(f"baseline saved to {save_file}")
    if output_format == "json":
        click.echo(json_report(suite, runs, notes, misses, answering, lexical))
    else:
        click.echo(table(suite, [*runs, *lexical], notes, per_query, answering))
    if evidence is not None:
        for failure in evidence.failures:
            click.echo(f"evidence missing: {failure}", err=True)
    for miss in misses:
        click.echo(f"threshold missed: {miss}", err=True)
    if misses:
        click.get_current_context().exit(1)
