"""Semantic on by default: a cached model is used without a flag, lexical first, and its absence is one line."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from fiskai_cli._root import cli
from fiskai_cli.commands.knowledge_vectors import NO_MODEL
from fiskai_rag.models import KNOWN_MODELS, fetch_model
from fiskai_rag.testing import build_bert_model, built_model_spec, write_toy_docs

pytest.importorskip("onnxruntime", reason="the semantic extra (onnxruntime) is not installed")

WORDS = ["car", "automobile", "fuel", "apple", "orchard", "doctor", "the", "needs", "pick", "an", "from"]


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for name in ("FISKAI_STORE_DIR", "FISKAI_CONFIG", "FISKAI_KNOWLEDGE_MODEL", "FISKAI_KNOWLEDGE_SEMANTIC"):
        monkeypatch.delenv(name, raising=False)
    write_toy_docs(tmp_path / "docs")
    return tmp_path


@pytest.fixture
def cached_minilm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A tiny BERT installed in the model cache under the default contextual model's name (run in int8)."""
    built = build_bert_model(tmp_path / "built", WORDS)
    revision = "0123456789abcdef0123456789abcdef01234567"
    spec = built_model_spec(
        built,
        revision=revision,
        dimension=8,
        vocabulary=16,
        download_bytes=10_000,
        name="all-MiniLM-L6-v2",
        kind="bert",
    )
    monkeypatch.setitem(KNOWN_MODELS, "all-MiniLM-L6-v2", spec)
    small = replace(spec, name="all-MiniLM-L6-v2-int8", int8=True, files_of=spec.name)
    monkeypatch.setitem(KNOWN_MODELS, small.name, small)
    fetch_model(spec, source=built)  # the float model's download serves its int8 run too
    return small.identity


def _run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_without_a_model_index_and_search_stay_lexical_and_say_how_to_enable_semantic(workdir: Path) -> None:
    indexed = _run("knowledge", "index", "docs")
    assert indexed.exit_code == 0, indexed.output
    assert indexed.stderr.count(NO_MODEL) == 1 and "model fetch all-MiniLM-L6-v2" in NO_MODEL
    assert "embeddings" not in indexed.stdout  # nothing embedded
    searched = _run("knowledge", "search", "orchard")
    assert searched.exit_code == 0 and searched.stdout.startswith("docs/orchard.md#0")


def test_a_cached_model_makes_index_hybrid_without_a_flag_lexical_first(workdir: Path, cached_minilm: str) -> None:
    indexed = _run("knowledge", "index", "docs")

    assert indexed.exit_code == 0, indexed.output
    assert NO_MODEL not in indexed.stderr
    lines = indexed.stdout.splitlines()
    assert lines[0].startswith("indexed: added=3") and "embeddings" not in lines[0]  # the lexical pass
    assert "lexical index ready; embedding 3 chunks" in indexed.stderr
    assert lines[1].startswith("vectors: 3 chunks embedded; search is hybrid")
    assert f"model={cached_minilm}" in lines[1]
    searched = _run("knowledge", "search", "orchard")  # later commands follow the index's model
    assert searched.exit_code == 0 and searched.stdout.startswith("docs/orchard.md#0")
    assert "hybrid" in searched.stderr and "catch up" not in searched.stderr


def test_an_existing_lexical_index_is_not_switched_silently(
    workdir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _run("knowledge", "index", "docs").exit_code == 0  # no model yet: lexical
    built = build_bert_model(tmp_path / "built", WORDS)
    spec = built_model_spec(
        built,
        revision="f" * 40,
        dimension=8,
        vocabulary=16,
        download_bytes=10_000,
        name="all-MiniLM-L6-v2",
        kind="bert",
    )
    monkeypatch.setitem(KNOWN_MODELS, "all-MiniLM-L6-v2", spec)
    monkeypatch.setitem(
        KNOWN_MODELS,
        "all-MiniLM-L6-v2-int8",
        replace(spec, name="all-MiniLM-L6-v2-int8", int8=True, files_of=spec.name),
    )
    fetch_model(spec, source=built)

    again = _run("knowledge", "index", "docs")
    assert again.exit_code == 0, again.output
    assert '--reindex rebuilds it with model "all-MiniLM-L6-v2-int8"' in again.stderr
    rebuilt = _run("knowledge", "index", "--reindex", "docs")
    assert rebuilt.exit_code == 0, rebuilt.output
    assert "vectors: 3 chunks embedded" in rebuilt.stdout


@pytest.mark.skipif(
    not os.environ.get("FISKAI_TEST_MINILM_DIR"),
    reason="real all-MiniLM-L6-v2 not present (FISKAI_TEST_MINILM_DIR; .ci/run fetches it from PyPI)",
)
def test_background_returns_after_the_lexical_pass_and_a_detached_process_embeds(workdir: Path) -> None:
    # The detached child resolves the index's model by its pinned name, so it is the real one here.
    fetch_model(KNOWN_MODELS["all-MiniLM-L6-v2"], source=Path(os.environ["FISKAI_TEST_MINILM_DIR"]))
    indexed = _run("knowledge", "index", "--background", "docs")
    assert indexed.exit_code == 0, indexed.output
    assert indexed.stdout.splitlines() == ["indexed: added=3 updated=0 skipped=0 removed=0 (3 files, 3 chunks)"]
    assert "embedding 3 chunks in the background (pid " in indexed.stderr
    pid = int(indexed.stderr.split("(pid ", 1)[1].split(";", 1)[0])
    log = Path(indexed.stderr.rsplit("log: ", 1)[1].strip().rstrip(")"))
    _, status = os.waitpid(pid, 0)  # our child here (a CLI exits and leaves it to init): reap it
    assert os.waitstatus_to_exitcode(status) == 0, log.read_text(encoding="utf-8")
    searched = _run("knowledge", "search", "orchard")
    assert searched.exit_code == 0 and searched.stdout.startswith("docs/orchard.md#0")
    assert "catch up" not in searched.stderr and "hybrid" in searched.stderr
    assert log.read_text(encoding="utf-8").splitlines() == ["vector pass done: 3 chunks embedded"]
