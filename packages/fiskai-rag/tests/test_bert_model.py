"""The in-process contextual model: a BERT encoder's forward pass, its invariants, and hybrid search with it."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from typing_extensions import override

from fiskai_rag import StaticEmbedder, open_store
from fiskai_rag.embed._bert_model import is_bert_directory, load_bert_model
from fiskai_rag.errors import ModelError
from fiskai_rag.models import KNOWN_MODELS, fetch_model, model_dir, model_of_identity
from fiskai_rag.search._fusion import RRF_K, STATIC_VECTOR_WEIGHT
from fiskai_rag.testing import ModelServer, build_bert_model, built_model_spec, write_safetensors, write_toy_docs

pytest.importorskip("tokenizers", reason="the semantic extra (tokenizers) is not installed")
pytest.importorskip("numpy", reason="the semantic extra (numpy) is not installed")

WORDS = ["alpha", "beta", "gamma", "delta", "rotate", "keys", "car", "fuel", "apple", "the", "a", "of"]
GOLDEN = Path(__file__).parent / "data" / "minilm" / "golden.json"


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True)) / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))


@pytest.fixture
def model(tmp_path: Path) -> Path:
    return build_bert_model(tmp_path / "bert", WORDS)


def test_the_vector_depends_on_word_order_unlike_a_static_mean(model: Path) -> None:
    loaded = load_bert_model(model)
    try:
        forward, backward = loaded.encode(["alpha beta gamma", "gamma beta alpha"])
        assert len(forward) == loaded.dimension == 8
        assert _cosine(forward, backward) < 0.999
        assert loaded.token_ids(["Alpha zeppelin"]) == [[2, 5, 1, 3]]  # [CLS] alpha [UNK] [SEP], lower-cased
    finally:
        loaded.close()


def test_a_text_gets_the_same_vector_alone_and_in_a_padded_batch(model: Path) -> None:
    loaded = load_bert_model(model)
    texts = ["car", "rotate the keys of a car", "apple " * 30, "", "fuel fuel gamma delta alpha"]
    try:
        together = loaded.encode(texts)
        for text, vector in zip(texts, together, strict=True):
            (alone,) = loaded.encode([text])
            assert alone == pytest.approx(vector, abs=1e-5)
    finally:
        loaded.close()


def test_mean_and_cls_pooling_follow_the_pooling_config(tmp_path: Path) -> None:
    mean = load_bert_model(build_bert_model(tmp_path / "mean", WORDS, pooling="mean"))
    cls = load_bert_model(build_bert_model(tmp_path / "cls", WORDS, pooling="cls"))
    default = load_bert_model(build_bert_model(tmp_path / "default", WORDS))
    try:
        text = ["rotate the keys"]
        assert mean.encode(text)[0] == pytest.approx(default.encode(text)[0])
        assert _cosine(cls.encode(text)[0], mean.encode(text)[0]) < 0.999
    finally:
        for loaded in (mean, cls, default):
            loaded.close()


def test_text_past_max_seq_length_does_not_move_the_vector(tmp_path: Path) -> None:
    loaded = load_bert_model(build_bert_model(tmp_path / "short", WORDS, max_tokens=6))
    try:
        assert loaded.max_tokens == 6
        cut = loaded.encode(["alpha beta gamma delta car", "alpha beta gamma delta apple", "beta beta gamma delta"])
        assert cut[0] == pytest.approx(
            cut[1], abs=1e-6
        )  # differs only after the 4 words that fit beside [CLS] and [SEP]
        assert _cosine(cut[0], cut[2]) < 0.999
        assert len(loaded.token_ids(["alpha " * 50])[0]) == 6
    finally:
        loaded.close()


def test_f16_weights_and_a_bert_prefix_load_to_the_same_vectors(tmp_path: Path) -> None:
    plain = load_bert_model(build_bert_model(tmp_path / "f32", WORDS))
    half = load_bert_model(build_bert_model(tmp_path / "f16", WORDS, dtype="F16"))
    prefixed = load_bert_model(build_bert_model(tmp_path / "prefixed", WORDS, prefix="bert."))
    try:
        text = ["rotate the keys of the car"]
        assert prefixed.encode(text)[0] == pytest.approx(plain.encode(text)[0], abs=1e-6)
        assert _cosine(half.encode(text)[0], plain.encode(text)[0]) > 0.999
    finally:
        for loaded in (plain, half, prefixed):
            loaded.close()


def test_a_malformed_model_is_refused_naming_the_file_and_the_fault(model: Path, tmp_path: Path) -> None:
    config = json.loads((model / "config.json").read_text(encoding="utf-8"))
    (model / "config.json").write_text(json.dumps({**config, "hidden_size": 10}), encoding="utf-8")
    with pytest.raises(ModelError, match=r"embeddings\.word_embeddings\.weight' has shape \[17, 8\], expected"):
        load_bert_model(model)
    (model / "config.json").write_text(json.dumps({**config, "hidden_act": "relu"}), encoding="utf-8")
    with pytest.raises(ModelError, match="hidden_act 'relu' is not supported"):
        load_bert_model(model)
    (model / "config.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ModelError, match=r"config\.json is not valid JSON"):
        load_bert_model(model)
    (model / "config.json").write_text(json.dumps(config), encoding="utf-8")
    write_safetensors(model / "model.safetensors", {"embeddings.LayerNorm.bias": ("F32", (8,), b"\0" * 32)})
    with pytest.raises(ModelError, match=r"has no tensor 'embeddings\.word_embeddings\.weight'; is it a BERT model"):
        load_bert_model(model)
    (model / "model.safetensors").write_bytes(b"\x05")
    with pytest.raises(ModelError, match="not a safetensors file"):
        load_bert_model(model)


def test_a_bert_directory_is_a_contextual_in_process_model(model: Path, tmp_path: Path) -> None:
    assert is_bert_directory(model) and not is_bert_directory(tmp_path)
    embedder = StaticEmbedder(str(model))
    assert embedder.contextual and embedder.model == f"bert:{model.resolve()}"
    assert model_of_identity(embedder.model) == f"bert:{model.resolve()}"
    assert StaticEmbedder(f"bert:{model.resolve()}").model == embedder.model  # the identity rebuilds it
    assert len(embedder.embed(["rotate the keys"])[0]) == 8
    embedder.close()


def test_hybrid_search_with_a_contextual_model_indexes_and_searches(
    model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    docs = write_toy_docs(tmp_path / "docs")
    store_dir = tmp_path / "store"
    with open_store(store_dir, read_only=False, embedder=StaticEmbedder(str(model))) as writer:
        stats = writer.index([docs])
        assert stats.embeddings == stats.chunks > 0
    with open_store(store_dir, read_only=True, embedder=StaticEmbedder(str(model))) as reader:
        manifest = reader.manifest()
        assert manifest is not None and manifest.model == f"bert:{model.resolve()}" and manifest.dimension == 8
        result = reader.search("zeppelin", top_k=3)  # no chunk has the word: only the vectors rank
        assert result.tier.startswith("hybrid (FTS5 + vectors, RRF) - model=bert:") and result.hits
        # A contextual model's nearest chunk counts fully in RRF, where a static model's would add only
        # 0.05 / (RRF_K + 1).
        assert result.hits[0].score == pytest.approx(1 / (RRF_K + 1))
        assert result.hits[0].score > STATIC_VECTOR_WEIGHT / (RRF_K + 1)


@pytest.mark.skipif(
    not os.environ.get("FISKAI_TEST_MINILM_DIR"),
    reason="real all-MiniLM-L6-v2 not present (FISKAI_TEST_MINILM_DIR; .ci/run fetches it from PyPI)",
)
def test_all_minilm_gives_the_vectors_pytorch_gives() -> None:
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    loaded = load_bert_model(Path(os.environ["FISKAI_TEST_MINILM_DIR"]))
    try:
        vectors = loaded.encode(golden["texts"])
        assert [len(ids) for ids in loaded.token_ids(golden["texts"])][-1] == 256  # the long text is cut
        for vector, expected in zip(vectors, golden["vectors"], strict=True):
            assert _cosine(vector, expected) > 0.9999
        # Unrelated and related texts: the model reads meaning, not shared words.
        question, answer, _, german, _ = vectors
        assert _cosine(question, answer) > 0.4 > 0.2 > _cosine(question, german)
    finally:
        loaded.close()


@pytest.mark.skipif(
    not os.environ.get("FISKAI_TEST_MINILM_DIR"),
    reason="real all-MiniLM-L6-v2 not present (FISKAI_TEST_MINILM_DIR; .ci/run fetches it from PyPI)",
)
def test_the_real_files_install_as_the_named_model_against_every_pin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    spec = KNOWN_MODELS["all-MiniLM-L6-v2"]

    folder = fetch_model(spec, source=Path(os.environ["FISKAI_TEST_MINILM_DIR"]))  # raises on any pin's mismatch

    embedder = StaticEmbedder("all-MiniLM-L6-v2")
    assert folder == model_dir(spec) and embedder.model == "bert:all-MiniLM-L6-v2@1110a243fdf4"
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    try:
        assert _cosine(embedder.embed(golden["texts"][:1])[0], golden["vectors"][0]) > 0.9999
    finally:
        embedder.close()


def test_a_models_own_prompts_prefix_its_queries_and_documents_and_are_pinned(
    model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (model / "config_sentence_transformers.json").write_text(
        json.dumps({"prompts": {"query": "query: ", "passage": "passage: ", "text": ""}}), encoding="utf-8"
    )
    docs = write_toy_docs(tmp_path / "docs")
    embedded: list[str] = []
    plain_embed = StaticEmbedder.embed

    def recording(self: StaticEmbedder, texts: Sequence[str]) -> list[list[float]]:
        embedded.extend(texts)
        return plain_embed(self, texts)

    monkeypatch.setattr(StaticEmbedder, "embed", recording)
    embedder = StaticEmbedder(str(model))
    assert (embedder.query_prefix, embedder.document_prefix) == ("query: ", "passage: ")
    with open_store(tmp_path / "store", read_only=False, embedder=embedder) as writer:
        writer.index([docs])
        manifest = writer.manifest()
    assert manifest is not None and (manifest.query_prefix, manifest.document_prefix) == ("query: ", "passage: ")
    assert embedded[0] == "dimension probe" and all(text.startswith("passage: ") for text in embedded[1:])
    embedded.clear()
    with open_store(tmp_path / "store", read_only=True, embedder=StaticEmbedder(str(model))) as reader:
        assert reader.search("rotate the keys").hits
    assert embedded == ["query: rotate the keys"]
    # An embedder rebuilt from a manifest takes the index's prompts, whatever the folder says now.
    assert StaticEmbedder(str(model), prompts=("", "")).query_prefix == ""
    (model / "config_sentence_transformers.json").write_text("{nope", encoding="utf-8")
    with pytest.raises(ModelError, match="config_sentence_transformers.json"):
        _ = StaticEmbedder(str(model)).query_prefix


def test_a_named_contextual_model_downloads_once_and_loads(
    model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    revision = "89abcdef0123456789abcdef0123456789abcdef"
    spec = built_model_spec(
        model, revision=revision, dimension=8, vocabulary=17, download_bytes=10_000, name="tiny-bert", kind="bert"
    )
    monkeypatch.setitem(KNOWN_MODELS, spec.name, spec)
    with ModelServer(model) as server:
        with pytest.raises(ModelError, match='"tiny-bert" is not downloaded yet'):
            StaticEmbedder("tiny-bert").embed(["alpha"])  # a search never downloads
        assert fetch_model(spec, base_url=server.base_url) == model_dir(spec)
    embedder = StaticEmbedder("tiny-bert")
    assert embedder.contextual and embedder.model == f"bert:tiny-bert@{revision[:12]}"
    assert model_of_identity(embedder.model) == "tiny-bert"
    assert model_of_identity(f"bert:tiny-bert@{'f' * 12}") is None  # another revision: not this model
    direct = load_bert_model(model)
    try:
        assert embedder.embed(["rotate the keys"])[0] == pytest.approx(direct.encode(["rotate the keys"])[0])
    finally:
        direct.close()
        embedder.close()


def test_the_shipped_minilm_entry_pins_every_file() -> None:
    spec = KNOWN_MODELS["all-MiniLM-L6-v2"]
    assert spec.kind == "bert" and spec.identity == "bert:all-MiniLM-L6-v2@1110a243fdf4"
    assert all(file.sha256 is not None and len(file.sha256) == 64 for file in spec.files)
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    weights = next(file for file in spec.files if file.name == "model.safetensors")
    assert golden["weights_sha256"] == weights.sha256  # the golden vectors came from these weights


def test_a_query_of_bare_names_stays_lexical_without_embedding(
    model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    docs = write_toy_docs(tmp_path / "docs")
    with open_store(tmp_path / "store", read_only=False, embedder=StaticEmbedder(str(model))) as writer:
        writer.index([docs])
    embedded: list[str] = []

    class Counting(StaticEmbedder):
        @override
        def embed(self, texts: Sequence[str]) -> list[list[float]]:
            embedded.extend(texts)
            return super().embed(texts)

    with open_store(tmp_path / "store", read_only=True, embedder=Counting(str(model))) as reader:
        reader.search("max-age rotate_keys", top_k=3)
        assert embedded == []
        reader.search("how do I rotate the keys", top_k=3)
        assert embedded == ["how do I rotate the keys"]


def test_a_repeated_text_is_encoded_once_and_gets_its_vector_everywhere(
    model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loaded = load_bert_model(model)
    seen: list[int] = []
    session = loaded._session
    assert session is not None

    class Counting:
        def run(self, output_names: list[str], input_feed: dict[str, Any]) -> list[Any]:
            seen.append(len(input_feed["input_ids"]))
            return session.run(output_names, input_feed)

    monkeypatch.setattr(loaded, "_session", Counting())
    try:
        vectors = loaded.encode(["alpha beta", "gamma", "alpha beta", "gamma", "delta"])
        assert sum(seen) == 3
        assert vectors[0] == vectors[2] and vectors[1] == vectors[3] and vectors[0] != vectors[4]
    finally:
        loaded.close()
