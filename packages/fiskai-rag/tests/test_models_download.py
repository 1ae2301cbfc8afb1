"""Downloading a named model once into the cache, end to end against a local hub-like HTTP server."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from fiskai_rag import StaticEmbedder
from fiskai_rag.errors import ModelError
from fiskai_rag.models import KNOWN_MODELS, ModelSpec, fetch_model, installed, model_dir, model_of_identity
from fiskai_rag.testing import ModelServer, build_static_model, built_model_spec

pytest.importorskip("tokenizers", reason="the semantic extra (tokenizers) is not installed")

REVISION = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture
def built(tmp_path: Path) -> Path:
    rows = {f"word{i}": [float(i % 7), float(i % 5), 1.0, float(i % 3)] for i in range(400)}
    return build_static_model(tmp_path / "served", rows)


@pytest.fixture
def spec(built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ModelSpec:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    made = built_model_spec(built, revision=REVISION, dimension=4, vocabulary=401, download_bytes=1000)
    monkeypatch.setitem(KNOWN_MODELS, made.name, made)
    return made


def test_a_model_downloads_once_with_progress_and_loads(built: Path, spec: ModelSpec) -> None:
    seen: list[tuple[str, int, int | None]] = []
    with ModelServer(built) as server:

        def progress(name: str, done: int, total: int | None) -> None:
            seen.append((name, done, total))

        folder = fetch_model(spec, base_url=server.base_url, progress=progress)
        assert folder == model_dir(spec) and installed(spec)
        assert [path for path, _ in server.requests] == [
            f"/fiskai-tests/tiny-test/resolve/{REVISION}/{name}"
            for name in ("config.json", "tokenizer.json", "model.safetensors")
        ]
        fetch_model(spec, base_url=server.base_url)  # cached: no second request
        assert len(server.requests) == 3
    size = (built / "model.safetensors").stat().st_size
    assert ("model.safetensors", size, size) in seen
    marker = json.loads((folder / "fiskai-model.json").read_text(encoding="utf-8"))
    assert marker["revision"] == REVISION and marker["files"]["model.safetensors"]["size"] == size
    assert not list(folder.glob("*.part"))
    embedder = StaticEmbedder("tiny-test")
    assert embedder.model == f"model2vec:tiny-test@{REVISION[:12]}"
    assert model_of_identity(embedder.model) == "tiny-test"
    assert model_of_identity("model2vec:tiny-test@ffffffffffff") is None  # another revision: not this model
    assert embedder.embed(["word3 word10"])[0] == pytest.approx([3.0, 1.5, 1.0, 0.5])  # ([3,3,1,0] + [3,0,1,1]) / 2


def test_a_loopback_mirror_is_reached_directly_whatever_the_proxy_variables_say(
    built: Path, spec: ModelSpec, recording_proxy: Any
) -> None:
    """Issue 36.5: urllib honours HTTP(S)_PROXY for a loopback mirror unless NO_PROXY names it."""
    urllib.request.install_opener(None)  # `urlopen` keeps the proxies it read first: let it read this test's
    with ModelServer(built) as server:
        fetch_model(spec, base_url=server.base_url)

        assert len(server.requests) == 3
    assert installed(spec)
    # Only the mirror's requests matter here: onnxruntime, once loaded in this process by another test,
    # sends its own telemetry through the proxy variables (seen: CONNECT mobile.events.data.microsoft.com).
    assert [line for line in recording_proxy.requests if "127.0.0.1" in line or "localhost" in line] == []


def test_an_interrupted_download_resumes_where_it_stopped(built: Path, spec: ModelSpec) -> None:
    with ModelServer(built, cut_after=4096) as server:  # each file over 4 KiB is cut short once
        for cut in ("tokenizer.json", "model.safetensors"):
            with pytest.raises(ModelError, match=f"{cut}: the connection closed after 4096 of"):
                fetch_model(spec, base_url=server.base_url)
            assert not installed(spec)
        fetch_model(spec, base_url=server.base_url)
        ranges = {
            name: [span for path, span in server.requests if path.endswith(name)]
            for name in ("tokenizer.json", "model.safetensors")
        }
    assert ranges == {"tokenizer.json": ["", "bytes=4096-"], "model.safetensors": ["", "bytes=4096-"]}
    for name in ("tokenizer.json", "model.safetensors"):  # the pinned SHA-256 held over the resumed bytes
        assert (model_dir(spec) / name).read_bytes() == (built / name).read_bytes()
    assert installed(spec)


def test_a_download_with_the_wrong_checksum_is_refused(built: Path, spec: ModelSpec, tmp_path: Path) -> None:
    other = build_static_model(tmp_path / "other", {"x": [1.0, 2.0, 3.0, 4.0]})
    with ModelServer(other) as server, pytest.raises(ModelError, match="SHA-256") as caught:
        fetch_model(spec, base_url=server.base_url)
    assert caught.value.remedy is None  # the message names the fix itself
    assert not installed(spec) and not list(model_dir(spec).glob("*.part"))


def test_the_wrong_mirror_leaves_no_unpinned_file_a_later_fetch_would_keep(
    built: Path, spec: ModelSpec, tmp_path: Path
) -> None:
    other = build_static_model(tmp_path / "other", {"x": [1.0, 2.0, 3.0, 4.0]})
    with ModelServer(other) as server, pytest.raises(ModelError, match="SHA-256"):
        fetch_model(spec, base_url=server.base_url)
    # The other model's tokenizer came first and has no pinned hash: kept, it would pass as complete.
    assert not (model_dir(spec) / "tokenizer.json").exists()
    with ModelServer(built) as server:
        fetch_model(spec, base_url=server.base_url)
    assert (model_dir(spec) / "tokenizer.json").read_bytes() == (built / "tokenizer.json").read_bytes()


def test_a_local_copy_installs_the_named_model_without_the_hub(built: Path, spec: ModelSpec) -> None:
    seen: list[tuple[str, int, int | None]] = []

    folder = fetch_model(spec, source=built, progress=lambda name, done, total: seen.append((name, done, total)))

    assert folder == model_dir(spec) and installed(spec)
    for name in ("config.json", "tokenizer.json", "model.safetensors"):
        assert (folder / name).read_bytes() == (built / name).read_bytes()
    marker = json.loads((folder / "fiskai-model.json").read_text(encoding="utf-8"))
    assert marker["source"] == built.resolve().as_uri() and marker["revision"] == REVISION
    size = (built / "model.safetensors").stat().st_size
    assert ("model.safetensors", size, size) in seen and not list(folder.glob("*.part"))
    embedder = StaticEmbedder("tiny-test")  # the named identity, not a path
    assert embedder.model == f"model2vec:tiny-test@{REVISION[:12]}"
    assert embedder.embed(["word3 word10"])[0] == pytest.approx([3.0, 1.5, 1.0, 0.5])


def test_a_local_copy_of_another_model_or_an_incomplete_one_is_refused(
    built: Path, spec: ModelSpec, tmp_path: Path
) -> None:
    other = build_static_model(tmp_path / "other", {"x": [1.0, 2.0, 3.0, 4.0]})
    with pytest.raises(ModelError, match=r"has SHA-256 .* expected .* another version of the file"):
        fetch_model(spec, source=other)
    assert not installed(spec) and sorted(p.name for p in model_dir(spec).iterdir()) == [".lock"]
    (other / "model.safetensors").unlink()
    with pytest.raises(ModelError, match=r'model\.safetensors is missing: a copy of model "tiny-test" holds'):
        fetch_model(spec, source=other)
    with pytest.raises(ModelError, match="no directory at"):
        fetch_model(spec, source=tmp_path / "nowhere")
    fetch_model(spec, source=built)
    assert installed(spec)


def test_offline_is_one_line_naming_the_url_and_the_fix(built: Path, spec: ModelSpec) -> None:
    with ModelServer(built) as server:
        base = server.base_url
    with pytest.raises(ModelError) as caught:  # the server is gone: connection refused
        fetch_model(spec, base_url=base)
    message = str(caught.value)
    assert f"{base}/fiskai-tests/tiny-test/resolve/{REVISION}/config.json" in message
    assert "FISKAI_MODEL_BASE_URL" in message and "\n" not in message
    with pytest.raises(ModelError, match="not http"):
        fetch_model(spec, base_url="file:///etc")


def test_the_embedder_downloads_only_when_allowed(
    built: Path, spec: ModelSpec, monkeypatch: pytest.MonkeyPatch
) -> None:
    with ModelServer(built) as server:
        monkeypatch.setenv("FISKAI_MODEL_BASE_URL", server.base_url)
        with pytest.raises(ModelError, match="not downloaded yet"):
            StaticEmbedder("tiny-test").embed(["word1"])
        assert server.requests == []
        assert len(StaticEmbedder("tiny-test", download=True).embed(["word1"])[0]) == 4
        assert len(server.requests) == 3


def test_the_default_model_is_pinned() -> None:
    default = KNOWN_MODELS["potion-base-8M"]
    assert len(default.revision) == 40
    assert {f.name for f in default.files} == {"config.json", "tokenizer.json", "model.safetensors"}
    weights = next(f for f in default.files if f.name == "model.safetensors")
    assert weights.sha256 is not None and len(weights.sha256) == 64


def test_the_int8_variant_shares_the_float_models_download_and_pins_its_own_identity(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("onnxruntime", reason="the semantic extra (onnxruntime) is not installed")
    from dataclasses import replace

    from fiskai_rag.testing import build_bert_model

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    built = build_bert_model(tmp_path / "served", ["alpha", "beta", "gamma", "rotate", "keys"], hidden=16)
    full = built_model_spec(built, revision=REVISION, dimension=16, vocabulary=10, download_bytes=1000, kind="bert")
    small = replace(full, name="tiny-test-int8", int8=True, files_of=full.name)
    monkeypatch.setitem(KNOWN_MODELS, full.name, full)
    monkeypatch.setitem(KNOWN_MODELS, small.name, small)

    fetch_model(small, source=built)  # fetching either name fills the one directory
    assert model_dir(small) == model_dir(full) and installed(full) and installed(small)
    exact, quantised = StaticEmbedder(full.name), StaticEmbedder(small.name)
    assert quantised.model == f"bert:tiny-test-int8@{REVISION[:12]}" != exact.model
    assert model_of_identity(quantised.model) == small.name and model_of_identity(exact.model) == full.name
    a, b = exact.embed(["rotate keys"])[0], quantised.embed(["rotate keys"])[0]
    assert (
        a != b
        and sum(x * y for x, y in zip(a, b, strict=True))
        > 0.98 * (sum(x * x for x in a) * sum(y * y for y in b)) ** 0.5
    )
    assert KNOWN_MODELS["all-MiniLM-L6-v2-int8"].files == KNOWN_MODELS["all-MiniLM-L6-v2"].files
