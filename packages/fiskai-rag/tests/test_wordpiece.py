"""The Python WordPiece tokenizer for queries: the ids `tokenizers` gives, without importing it."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from fiskai_rag import StaticEmbedder
from fiskai_rag.embed._static_model import load_static_model
from fiskai_rag.embed._wordpiece import WordPiece
from fiskai_rag.testing import build_static_model

tokenizers = pytest.importorskip("tokenizers", reason="the semantic extra (tokenizers) is not installed")


def _reference(path: Path) -> tuple[Any, int | None]:
    tokenizer = tokenizers.Tokenizer.from_file(str(path))
    return tokenizer, tokenizer.token_to_id("[UNK]")


def _expected(tokenizer: Any, unk: int | None, text: str) -> list[int]:
    ids: list[int] = tokenizer.encode(text, add_special_tokens=False).ids
    return [i for i in ids if i != unk]


@pytest.fixture(scope="module")
def unicode_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A WordPiece vocabulary holding every assigned BMP character, alone and as a `##` continuation."""
    tokens: dict[str, list[float]] = {}
    for code in range(0x21, 0x10000):
        char = chr(code)
        if unicodedata.category(char) in ("Cn", "Cs", "Co", "Cc"):
            continue
        tokens.setdefault(char, [1.0])
        tokens.setdefault("##" + char, [1.0])
    for word in ("ab", "##cd", "x", "cafe", "retention", "##s", "policy"):
        tokens.setdefault(word, [1.0])
    return build_static_model(tmp_path_factory.mktemp("unicode") / "model", tokens)


def test_every_bmp_character_tokenizes_as_tokenizers_does(unicode_model: Path) -> None:
    """Each character between letters and on its own: normalising, splitting and WordPiece all agree."""
    path = unicode_model / "tokenizer.json"
    wordpiece = WordPiece.from_tokenizer_json(path)
    assert wordpiece is not None
    tokenizer, unk = _reference(path)
    handled = 0
    for code in range(0x10000):
        text = f"Ab{chr(code)}cd {chr(code)}X"
        ids = wordpiece.ids(text)
        if ids is None:
            continue  # refused: this text goes to tokenizers
        handled += 1
        assert ids == _expected(tokenizer, unk, text), f"U+{code:04X}"
    assert handled > 50_000  # the refusals are the exception (unassigned, private, later-Unicode marks)


@pytest.mark.parametrize(
    "text",
    [
        "How do I configure retention policies?",
        "Café NAÏVE résumé ΟΔΟΣ Straße İstanbul",
        "influxd --http-bind-address=:8086 && curl 'http://localhost:8086/ping'",
        "中文的查询 と 日本語、한국어。",
        "tabs\tand\nnew\r\nlines\x00with\x07controls\u200b\u00a0nbsp",
        "a" * 150 + " supercalifragilistic",
        "",
    ],
)
def test_queries_tokenize_as_tokenizers_does(unicode_model: Path, text: str) -> None:
    path = unicode_model / "tokenizer.json"
    wordpiece = WordPiece.from_tokenizer_json(path)
    assert wordpiece is not None
    tokenizer, unk = _reference(path)
    assert wordpiece.ids(text) == _expected(tokenizer, unk, text)


def test_a_literal_added_token_or_an_emoji_is_left_to_tokenizers(tmp_path: Path) -> None:
    model = build_static_model(tmp_path / "m", {"[CLS]": [1.0, 0.0], "cls": [0.0, 0.0], "rotate": [0.0, 1.0]})
    tokenizer = tokenizers.Tokenizer.from_file(str(model / "tokenizer.json"))
    tokenizer.add_special_tokens(["[CLS]"])  # matched in the raw text, before normalising and splitting
    tokenizer.save(str(model / "tokenizer.json"))
    wordpiece = WordPiece.from_tokenizer_json(model / "tokenizer.json")
    assert wordpiece is not None
    assert wordpiece.ids("rotate [CLS]") is None
    assert wordpiece.ids("rotate 🔑") is None
    loaded = load_static_model(model)
    try:  # the model still encodes them, through tokenizers
        assert loaded.encode(["rotate [CLS]", "rotate 🔑"]) == [[0.5, 0.5], [0.0, 1.0]]
    finally:
        loaded.close()


def test_other_tokenizer_pipelines_are_not_taken(tmp_path: Path) -> None:
    model = build_static_model(tmp_path / "m", {"rotate": [1.0]})
    raw = json.loads((model / "tokenizer.json").read_text(encoding="utf-8"))
    raw["normalizer"]["lowercase"] = False
    path = tmp_path / "cased.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    assert WordPiece.from_tokenizer_json(path) is None
    raw["normalizer"]["lowercase"] = True
    raw["pre_tokenizer"] = {"type": "Whitespace"}
    path.write_text(json.dumps(raw), encoding="utf-8")
    assert WordPiece.from_tokenizer_json(path) is None


def test_the_vocabulary_cache_follows_a_changed_tokenizer_file(tmp_path: Path) -> None:
    model = build_static_model(tmp_path / "m", {"rotate": [1.0, 0.0], "keys": [0.0, 1.0]})
    first = WordPiece.from_tokenizer_json(model / "tokenizer.json")
    assert first is not None and (model / ".fiskai-wordpiece.txt").is_file()
    cached = WordPiece.from_tokenizer_json(model / "tokenizer.json")
    assert cached is not None and cached.vocab == first.vocab and cached.unk_id == first.unk_id
    build_static_model(model, {"keys": [0.0, 1.0], "vault": [1.0, 1.0], "rotate": [1.0, 0.0]})
    os.utime(model / "tokenizer.json", ns=(1, 1))  # a stamp the cache cannot hold, whatever the clock
    rebuilt = WordPiece.from_tokenizer_json(model / "tokenizer.json")
    assert rebuilt is not None and rebuilt.ids("rotate vault keys") == [3, 2, 1]


def test_a_query_embeds_without_importing_tokenizers(tmp_path: Path) -> None:
    model = build_static_model(tmp_path / "m", {"rotate": [1.0, 0.0], "keys": [0.0, 1.0]})
    script = (
        "import sys, json\n"
        "from fiskai_rag import StaticEmbedder\n"
        f"vector = StaticEmbedder({str(model)!r}).embed(['Rotate the KEYS'])[0]\n"
        "print(json.dumps([vector, 'tokenizers' in sys.modules]))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60)
    vector, imported = json.loads(done.stdout)
    assert imported is False
    embedder = StaticEmbedder(str(model))
    try:  # the emoji sends this text through tokenizers: the same vector
        assert vector == pytest.approx(embedder.embed(["rotate keys 🔑"])[0]) == [0.5, 0.5]
    finally:
        embedder.close()


def test_documentation_text_tokenizes_as_tokenizers_does(tmp_path: Path, shared_fixtures: Path) -> None:
    """A WordPiece vocabulary trained on influxdata-docs, over a sample of its pages.

    Through `shared_fixtures`, so CI's FISKAI_REQUIRE_SHARED=1 makes missing data a failure, not a skip.
    """
    files = sorted((shared_fixtures / "corpus" / "influxdata-docs").rglob("*.md"))
    sample = random.Random(16).sample(files, 200)
    tokenizer = tokenizers.Tokenizer(tokenizers.models.WordPiece(unk_token="[UNK]"))
    tokenizer.normalizer = tokenizers.normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = tokenizers.pre_tokenizers.BertPreTokenizer()
    trainer = tokenizers.trainers.WordPieceTrainer(vocab_size=4000, special_tokens=["[UNK]"])
    tokenizer.train([str(p) for p in sample], trainer)
    path = tmp_path / "tokenizer.json"
    tokenizer.save(str(path))
    wordpiece = WordPiece.from_tokenizer_json(path)
    assert wordpiece is not None
    unk = tokenizer.token_to_id("[UNK]")
    compared = 0
    for file in sample:
        for paragraph in file.read_text(encoding="utf-8", errors="replace").split("\n\n")[:20]:
            ids = wordpiece.ids(paragraph)
            if ids is not None:
                compared += 1
                assert ids == _expected(tokenizer, unk, paragraph), paragraph[:200]
    assert compared > 1000
