"""Fixtures shared by the fiskai-rag tests."""

from __future__ import annotations

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
