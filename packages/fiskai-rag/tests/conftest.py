"""Fixtures shared by the fiskai-rag tests."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from fiskai_rag import Store, open_store

PACK_CORPUS = Path(__file__).parent / "data" / "pack" / "corpus"


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Store]:
    """The small pack corpus indexed as `corpus/...`, opened read-only."""
    monkeypatch.chdir(tmp_path)
    shutil.copytree(PACK_CORPUS, tmp_path / "corpus")
    with open_store(tmp_path / "store", read_only=False) as writer:
        writer.index(["corpus"])
    opened = open_store(tmp_path / "store", read_only=True)
    yield opened
    opened.close()


@pytest.fixture
def pack_corpus(tmp_path: Path) -> Path:
    """A writable copy of the small pack corpus at `tmp_path/corpus`."""
    return Path(shutil.copytree(PACK_CORPUS, tmp_path / "corpus"))


@pytest.fixture(scope="session")
def pack_words() -> list[str]:
    """The pack corpus's distinct lowercase words of 3+ letters, sorted: queries of its own vocabulary."""
    text = " ".join(path.read_text(encoding="utf-8").lower() for path in sorted(PACK_CORPUS.rglob("*.md")))
    return sorted(set(re.findall(r"[a-z]{3,}", text)))


@pytest.fixture
def pack_writer(tmp_path: Path, pack_corpus: Path) -> Iterator[Store]:
    """A writable store at `tmp_path/store` with `pack_corpus` indexed."""
    with open_store(tmp_path / "store", read_only=False) as writer:
        writer.index([str(pack_corpus)])
        yield writer
