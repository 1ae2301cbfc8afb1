"""Golden packs for the small corpus: byte-identical across runs, re-indexes and rebuilds.

After an intended change to the ranking or the encodings (bump `RANKING_VERSION` for the former), rewrite
the files with `FISKAI_UPDATE_GOLDEN=1 uv run pytest packages/fiskai-rag/tests/test_pack_golden.py` and
review the diff.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from fiskai_rag import open_store

DATA = Path(__file__).parent / "data" / "pack"
TODAY = dt.date(2026, 11, 30)
REQUESTS: dict[str, dict[str, Any]] = {
    "buffer_text_explain.txt": {"query": "what happens when the buffer fills", "budget": 600, "explain": True},
    "retention_last_week.json": {"query": "retention last week", "budget": 700, "fmt": "json"},
    "broker_pinned.jsonl": {"query": "broker", "budget": 700, "fmt": "jsonl", "pins": ["corpus/glossary.md#1"]},
    "retention_small_budget.txt": {"query": "retention period limits", "budget": 260},
    "no_match.txt": {"query": "zeppelin", "budget": 300},
}


def _packs(store_dir: Path) -> dict[str, str]:
    with open_store(store_dir, read_only=True) as store:
        return {name: store.context(today=TODAY, **request).text for name, request in REQUESTS.items()}


def test_golden_packs_are_byte_identical_across_runs_reindexes_and_rebuilds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    shutil.copytree(DATA / "corpus", tmp_path / "corpus")
    with open_store(tmp_path / "store", read_only=False) as writer:
        writer.index(["corpus"])
    first = _packs(tmp_path / "store")
    if os.environ.get("FISKAI_UPDATE_GOLDEN") == "1":
        for name, text in first.items():
            (DATA / "golden" / name).write_bytes(text.encode())

    golden = {name: (DATA / "golden" / name).read_bytes().decode() for name in REQUESTS}
    again = _packs(tmp_path / "store")
    with open_store(tmp_path / "store", read_only=False) as writer:
        unchanged = writer.index(["corpus"])
    after_reindex = _packs(tmp_path / "store")
    with open_store(tmp_path / "store", read_only=False) as writer:
        writer.index(["corpus"], reindex=True)
    after_rebuild = _packs(tmp_path / "store")

    assert first == golden
    assert again == golden
    assert unchanged.skipped == unchanged.files
    assert after_reindex == golden
    assert after_rebuild == golden
