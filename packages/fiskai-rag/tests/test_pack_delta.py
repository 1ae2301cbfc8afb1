from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import stat
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from fiskai_rag import Remedy, Store, open_store
from fiskai_rag.errors import ReceiptNotFoundError
from fiskai_rag.pack._receipts_store import KEEP_PER_STORE, receipts_dir

CORPUS = Path(__file__).parent / "data" / "pack" / "corpus"
TODAY = dt.date(2026, 11, 30)


@pytest.fixture
def corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    shutil.copytree(CORPUS, tmp_path / "corpus")
    _index(tmp_path)
    return tmp_path / "corpus"


def _index(base: Path) -> None:
    with open_store(base / "store", read_only=False) as writer:
        writer.index(["corpus"])


@pytest.fixture
def reader(corpus: Path) -> Iterator[Store]:
    store = open_store(corpus.parent / "store", read_only=True)
    yield store
    store.close()


def _state() -> Path:
    return Path(os.environ["XDG_STATE_HOME"]) / "fiskai" / "receipts"


def test_ordinary_calls_write_nothing(reader: Store) -> None:
    reader.context("retention period", budget=800, today=TODAY)

    assert not _state().exists()


def test_a_saved_receipt_is_owner_only_compressed_and_holds_no_bodies(reader: Store) -> None:
    pack = reader.context("retention period", budget=800, save_receipt=True, today=TODAY)

    digest = pack.receipt["input_digest"]
    folder = receipts_dir(reader.directory)
    saved = folder / f"{digest}.json.z"
    manifest = json.loads(zlib.decompress(saved.read_bytes()))
    assert folder.parent == _state()
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    assert pack.receipt["saved"] is True
    assert {citation for citation, _ in manifest["entries"]} >= set(pack.citations)
    assert all(len(entry) == 2 and len(entry[1]) == 16 for entry in manifest["entries"])
    assert b"expired messages" not in zlib.decompress(saved.read_bytes())


def test_nothing_new_since_a_receipt_is_the_no_candidates_case(reader: Store) -> None:
    first = reader.context("retention period", budget=800, save_receipt=True, today=TODAY)

    again = reader.context("retention period", budget=800, since_receipt=first.receipt["input_digest"], today=TODAY)

    assert again.items == ()
    assert again.status == "no_candidates"
    assert again.receipt["since_receipt"] == first.receipt["input_digest"]
    assert "nothing new or changed" in again.receipt["warning"]["text"]


def test_a_delta_keeps_edited_and_added_chunks_and_never_emits_deleted_ones(corpus: Path) -> None:
    """Steps:
    1. Save a receipt for "retention".
    2. Edit one retention chunk, add a new retention file, delete the retention review note; re-index.
    3. The delta holds exactly the edited and the added chunks.
    """
    with open_store(corpus.parent / "store", read_only=True) as store:
        seed = store.context("retention", budget=4000, save_receipt=True, today=TODAY)
    assert "corpus/notes/2026-11-26-review.md#0" in seed.citations
    policy = corpus / "design" / "retention.md"
    policy.write_text(
        policy.read_text(encoding="utf-8").replace("at the next\nsweep.", "at the next hourly sweep."), encoding="utf-8"
    )
    (corpus / "notes" / "2026-11-28-retention.md").write_text(
        "---\ndate: 2026-11-28\n---\n# Retention change\n\nRetention for metrics streams drops to 30 days.\n",
        encoding="utf-8",
    )
    (corpus / "notes" / "2026-11-26-review.md").unlink()
    _index(corpus.parent)

    with open_store(corpus.parent / "store", read_only=True) as store:
        delta = store.context("retention", budget=4000, since_receipt=seed.receipt["input_digest"], today=TODAY)

    assert sorted(delta.citations) == ["corpus/design/retention.md#2", "corpus/notes/2026-11-28-retention.md#0"]
    assert delta.receipt["counts"]["unchanged"] >= 2
    assert delta.receipt["input_digest"] != seed.receipt["input_digest"]


def test_a_receipt_is_bound_to_its_query_and_missing_ones_say_how_to_reseed(reader: Store) -> None:
    seed = reader.context("retention period", budget=800, save_receipt=True, today=TODAY)

    with pytest.raises(ReceiptNotFoundError) as other_query:
        reader.context("broker", budget=800, since_receipt=seed.receipt["input_digest"], today=TODAY)
    with pytest.raises(ReceiptNotFoundError) as missing:
        reader.context("retention period", budget=800, since_receipt="0123456789abcdef", today=TODAY)
    with pytest.raises(ReceiptNotFoundError) as malformed:
        reader.context("retention period", budget=800, since_receipt="not-a-digest", today=TODAY)

    assert "bound to its query" in str(other_query.value)
    assert missing.value.remedy is Remedy.RESEED and "never saved" in str(missing.value)
    assert "16 hex digits" in str(malformed.value)


def test_only_the_16_most_recently_used_receipts_are_kept(reader: Store) -> None:
    words = ["retention", "buffer", "broker", "stream", "consumer", "limits", "upgrade", "window", "flow"]
    first = reader.context("retention", budget=800, save_receipt=True, today=TODAY).receipt["input_digest"]
    digests = [first]
    for a in words:
        for b in words:
            if len(digests) > KEEP_PER_STORE:
                break
            if a < b:
                digests.append(
                    reader.context(f"{a} {b}", budget=800, save_receipt=True, today=TODAY).receipt["input_digest"]
                )
        # Using the first receipt keeps it among the most recent.
        reader.context("retention", budget=800, since_receipt=first, today=TODAY)

    kept = {path.name.removesuffix(".json.z") for path in receipts_dir(reader.directory).glob("*.json.z")}
    assert len(kept) == KEEP_PER_STORE
    assert first in kept
    assert digests[1] not in kept
