"""`fiskai knowledge --semantic`: one switch, a model downloaded once, hybrid search and packs afterwards."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from fiskai_cli import _wiring as wiring
from fiskai_cli._root import cli
from fiskai_core.config import EmbeddingsSettings
from fiskai_rag import OpenAICompatibleEmbedder, StaticEmbedder
from fiskai_rag.models import KNOWN_MODELS
from fiskai_rag.testing import ModelServer, build_bert_model, build_static_model, built_model_spec, write_toy_docs

pytest.importorskip("tokenizers", reason="the semantic extra (tokenizers) is not installed")

REVISION = "fedcba9876543210fedcba9876543210fedcba98"
VECTORS = {
    "car": [1.0, 0.0, 0.0],
    "automobile": [0.97, 0.05, 0.0],
    "fuel": [0.6, 0.0, 0.4],
    "apple": [0.0, 1.0, 0.0],
    "orchard": [0.0, 0.9, 0.1],
    "doctor": [0.0, 0.0, 1.0],
}


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for name in ("FISKAI_STORE_DIR", "FISKAI_CONFIG", "FISKAI_KNOWLEDGE_MODEL", "FISKAI_KNOWLEDGE_SEMANTIC"):
        monkeypatch.delenv(name, raising=False)
    write_toy_docs(tmp_path / "docs")
    return tmp_path


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModelServer]:
    """A hub-like server holding a built model, registered as the known model `tiny-test`."""
    built = build_static_model(tmp_path / "served", VECTORS)
    spec = built_model_spec(built, revision=REVISION, dimension=3, vocabulary=7, download_bytes=2000)
    monkeypatch.setitem(KNOWN_MODELS, spec.name, spec)
    with ModelServer(built) as server:
        monkeypatch.setenv("FISKAI_MODEL_BASE_URL", server.base_url)
        yield server


def _run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_one_switch_at_index_time_makes_later_commands_hybrid(workdir: Path, hub: ModelServer) -> None:
    indexed = _run("knowledge", "--model", "tiny-test", "index", "docs")
    assert indexed.exit_code == 0, indexed.output
    assert indexed.stdout.splitlines() == [
        "indexed: added=3 updated=0 skipped=0 removed=0 (3 files, 3 chunks, 3 embeddings)"
    ]
    assert 'downloading embedding model "tiny-test"' in indexed.stderr
    assert len(hub.requests) == 3

    searched = _run("knowledge", "search", "--format", "json", "automobile")  # no flag: the manifest decides
    assert searched.exit_code == 0, searched.output
    found = json.loads(searched.stdout)
    assert found["tier"].startswith("hybrid (FTS5 + vectors, RRF) - model=model2vec:tiny-test@")
    assert found["results"][0]["citation"] == "docs/garage.md#0"

    packed = _run("knowledge", "context", "car", "fuel", "--budget", "400")
    assert packed.exit_code == 0, packed.output
    assert "docs/garage.md#0" in packed.stdout

    again = _run("knowledge", "index", "docs")  # incremental, no flag: keeps the vector tier, no download
    assert again.exit_code == 0, again.output
    assert len(hub.requests) == 3

    doctor = _run("knowledge", "doctor")  # checks the model the index was built with
    assert "[ ok ] Manifest matches model: model=model2vec:tiny-test@" in doctor.stdout

    listed = _run("knowledge", "model", "list", "--format", "json")
    rows = {row["name"]: row for row in json.loads(listed.stdout)}
    assert rows["tiny-test"]["downloaded"] is True
    # "default" is what a plain `knowledge index` uses first when cached; `--semantic` alone names potion.
    assert [name for name, row in rows.items() if row["default"]] == ["all-MiniLM-L6-v2-int8"]
    assert [name for name, row in rows.items() if row["semantic_flag_default"]] == ["potion-base-8M"]
    assert (rows["all-MiniLM-L6-v2-int8"]["runs_as"], rows["all-MiniLM-L6-v2"]["runs_as"]) == ("int8", "F32")
    text = _run("knowledge", "model", "list").stdout
    assert "all-MiniLM-L6-v2-int8 (default): contextual" in text and "F32 file run as int8" in text
    assert "potion-base-8M (--semantic's default): static" in text
    assert (rows["potion-base-8M"]["contextual"], rows["all-MiniLM-L6-v2"]["contextual"]) == (False, True)
    assert rows["all-MiniLM-L6-v2"]["kind"] == "bert"


def test_fetch_offline_is_one_line_naming_the_url_and_the_fix(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, hub: ModelServer
) -> None:
    hub.stop()  # nothing listens there any more
    fetched = _run("knowledge", "model", "fetch", "tiny-test")
    assert fetched.exit_code == 1
    (line,) = fetched.stderr.strip().splitlines()[-1:]
    assert line.startswith('Error: cannot download embedding model "tiny-test" from http://127.0.0.1:')
    assert f"/fiskai-tests/tiny-test/resolve/{REVISION}/config.json" in line
    assert "FISKAI_MODEL_BASE_URL" in line and "Traceback" not in fetched.output
    assert line.endswith("; to install it from a copy of its files: fiskai knowledge model fetch NAME --from DIR")
    default = _run("knowledge", "model", "fetch")  # no name: the model a plain index uses first
    assert default.exit_code == 1
    assert 'cannot download embedding model "all-MiniLM-L6-v2-int8"' in default.stderr


def test_a_search_never_downloads_it_degrades_with_a_note(
    workdir: Path, hub: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _run("knowledge", "--model", "tiny-test", "index", "docs").exit_code == 0
    monkeypatch.setenv("XDG_CACHE_HOME", str(workdir / "empty-cache"))  # the model is gone
    searched = _run("knowledge", "search", "car")
    assert searched.exit_code == 0, searched.output
    assert searched.stdout.startswith("docs/garage.md#0")
    assert "note: the embedding model could not be loaded, so this query used the lexical tier only" in searched.stderr
    assert 'embedding model "tiny-test" is not downloaded yet' in searched.stderr
    assert len(hub.requests) == 3  # the index run's download only


def test_a_model_directory_moved_away_degrades_search_and_doctor_names_it(workdir: Path, tmp_path: Path) -> None:
    # A BERT directory: once gone, its kind can no longer be read from its config.json.
    model = build_bert_model(tmp_path / "local-bert", ["car", "automobile", "fuel", "apple", "orchard", "doctor"])
    # With prompts of its own, which the index pins and a search must reuse without the folder.
    prompts = {"prompts": {"query": "query: ", "document": "passage: "}}
    (model / "config_sentence_transformers.json").write_text(json.dumps(prompts), encoding="utf-8")
    assert _run("knowledge", "--model", str(model), "index", "docs").exit_code == 0
    model.rename(tmp_path / "moved")

    searched = _run("knowledge", "search", "car")
    doctor = CliRunner().invoke(cli, ["knowledge", "doctor"])

    # Not "built with a different embedding configuration": the index still names the directory it used.
    assert searched.exit_code == 0, searched.output
    assert searched.stdout.startswith("docs/garage.md#0")
    assert f"lexical tier only (no model directory at {model.resolve()})" in searched.stderr
    assert f"Embeddings reachable: no model directory at {model.resolve()}" in doctor.output
    assert "[ ok ] Manifest matches model" in doctor.output


def test_a_lexical_index_searched_with_a_model_asks_for_a_reindex(workdir: Path, hub: ModelServer) -> None:
    assert _run("knowledge", "index", "docs").exit_code == 0  # lexical index
    searched = _run("knowledge", "--model", "tiny-test", "search", "car")
    assert searched.exit_code == 1  # a lexical index opened with a model: the manifest refuses it
    assert "built lexical-only" in searched.stderr and "--reindex" in searched.stderr
    assert hub.requests == []


def test_eval_prints_hybrid_lexical_and_bm25_rows(workdir: Path, tmp_path: Path) -> None:
    model = build_static_model(tmp_path / "local-model", VECTORS)
    suite = workdir / "suite.yaml"
    suite.write_text(
        textwrap.dedent(
            """\
            corpus: docs
            queries:
              - query: automobile
                expected: [docs/garage.md]
              - query: apple
                expected: [docs/orchard.md]
            """
        ),
        encoding="utf-8",
    )
    result = _run("knowledge", "eval", str(suite), "--model", str(model), "--format", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["ranking"]["label"] == "fiskai knowledge, hybrid"
    assert report["lexical"]["label"] == "fiskai knowledge, lexical"
    assert report["baseline"]["label"] == "FTS5 BM25, naive OR"
    assert report["ranking"]["ndcg_at_10"] == 1.0  # the synonym query is answered only with vectors
    assert report["lexical"]["ndcg_at_10"] == 0.5


def test_agent_yaml_without_a_base_url_means_the_in_process_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    local = wiring.knowledge_embedder(EmbeddingsSettings(model="potion-base-8M"))
    assert isinstance(local, StaticEmbedder) and local.model.startswith("model2vec:potion-base-8M@")
    server = wiring.knowledge_embedder(EmbeddingsSettings(base_url="http://127.0.0.1:9/v1", model="e5"))
    assert isinstance(server, OpenAICompatibleEmbedder)
    server.close()
    # The MCP server and the agent open the store through the wiring, which follows the index's model.
    model = build_static_model(tmp_path / "m", VECTORS)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "garage.md").write_text("# Garage\n\nThe car needs fuel.\n", encoding="utf-8")
    with wiring.open_knowledge_store(tmp_path / "store", read_only=False, embedder=StaticEmbedder(str(model))) as w:
        w.index([docs])
    with wiring.open_knowledge_store(tmp_path / "store", read_only=True) as reader:
        assert isinstance(reader.embedder, StaticEmbedder)
        assert reader.search("automobile").hits[0].citation == "docs/garage.md#0"


def test_the_progress_bar_draws_a_download(workdir: Path, hub: ModelServer, capsys: pytest.CaptureFixture[str]) -> None:
    from fiskai_cli.commands.knowledge_model import fetch_with_progress

    embedder = StaticEmbedder("tiny-test")
    fetch_with_progress(embedder, draw=True)  # the rich bar, as on a terminal
    assert len(embedder.embed(["car"])[0]) == 3
    err = capsys.readouterr().err
    assert 'downloading embedding model "tiny-test"' in err and 'model "tiny-test" is ready' in err


def test_a_damaged_model_directory_is_one_line_saying_how_to_mend_it(workdir: Path, tmp_path: Path) -> None:
    model = build_static_model(tmp_path / "local-model", VECTORS)
    (model / "tokenizer.json").unlink()

    result = CliRunner().invoke(cli, ["knowledge", "--model", str(model), "index", "docs"])

    assert result.exit_code == 1
    assert f"{model / 'tokenizer.json'} is missing; point --model at a whole model directory" in result.output
    assert "model fetch" not in result.output  # fetching mends a named model, not this directory
    assert "Traceback" not in result.output


def test_fetch_from_a_local_copy_installs_the_named_model_offline(
    workdir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built = build_static_model(tmp_path / "copy", VECTORS)
    spec = built_model_spec(built, revision=REVISION, dimension=3, vocabulary=7, download_bytes=2000)
    monkeypatch.setitem(KNOWN_MODELS, spec.name, spec)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("FISKAI_MODEL_BASE_URL", "http://127.0.0.1:9/unreachable")  # no hub here

    fetched = _run("knowledge", "model", "fetch", "tiny-test", "--from", str(built), "--no-progress")
    indexed = _run("knowledge", "--model", "tiny-test", "index", "docs")
    wrong = CliRunner().invoke(cli, ["knowledge", "model", "fetch", str(built), "--from", str(built)])

    assert fetched.exit_code == 0, fetched.output
    assert f'copying embedding model "tiny-test" (about 0 MB) from {built}' in fetched.stderr
    assert (
        fetched.stdout.strip()
        == f"model2vec:tiny-test@{REVISION[:12]} ready in {tmp_path / 'cache'}/fiskai/models/tiny-test"
    )
    assert indexed.exit_code == 0, indexed.output
    assert _run("knowledge", "search", "automobile").stdout.startswith("docs/garage.md#0")
    assert wrong.exit_code == 2 and "--from installs a known model" in wrong.output
