from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from fiskai_rag import RagError, open_store
from fiskai_rag.errors import IndexLockedError

_HOLD_LOCK = textwrap.dedent(
    """
    import sys
    from fiskai_rag import open_store
    store = open_store(sys.argv[1], read_only=False)
    print("locked", flush=True)
    sys.stdin.readline()
    store.close()
    """
)

_WRITE = textwrap.dedent(
    """
    import sys
    from fiskai_rag import open_store
    with open_store(sys.argv[1], read_only=False) as store:
        print("writing", flush=True)
        stats = store.index([sys.argv[2]], reindex=True)
    print(stats.added, flush=True)
    """
)


def _python(code: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", code, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )


def test_a_second_writer_is_refused_and_told_which_process_writes(tmp_path: Path) -> None:
    store_dir = tmp_path / "store"
    holder = _python(_HOLD_LOCK, str(store_dir))
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"

        with pytest.raises(IndexLockedError) as caught:
            open_store(store_dir, read_only=False)

        assert caught.value.pid == holder.pid
        assert f"index is being written by process {holder.pid}" in str(caught.value)
        with open_store(store_dir, read_only=True) as reader:  # readers never wait for the writer
            assert reader.search("anything").status == "index_empty"  # the writer created an empty index
    finally:
        holder.communicate("\n", timeout=30)
    with open_store(store_dir, read_only=False):  # released when the holder exits
        pass


def test_readers_search_consistently_while_another_process_rebuilds(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i in range(1300):  # more than two write batches of 500 files
        (corpus / f"n{i:04}.md").write_text(f"# Note {i}\n\nthe shared needle appears in note {i}\n", encoding="utf-8")
    store_dir = tmp_path / "store"
    with open_store(store_dir, read_only=False) as store:
        store.index([str(corpus / "n0000.md")])

    writer = _python(_WRITE, str(store_dir), str(corpus))
    assert writer.stdout is not None and writer.stdout.readline().strip() == "writing"
    seen: list[int] = []
    errors: list[RagError] = []
    with open_store(store_dir, read_only=True) as reader:
        while writer.poll() is None:
            try:
                result = reader.search("needle", top_k=3)
                seen.append(len(reader.sources()))
                assert result.status in ("ok", "index_empty")
            except RagError as err:  # pragma: no cover - the assertion below reports it
                errors.append(err)
        out, _ = writer.communicate(timeout=60)
        final = reader.search("needle", top_k=3)

    assert writer.returncode == 0
    assert out.strip() == "1300"
    assert errors == []
    assert seen, "the reader ran at least once while the writer worked"
    # Before the rebuild's reset commits a reader sees the old single file; after it, every committed
    # batch only adds files, so the count a reader sees never goes down.
    after_reset = seen[next((i for i, n in enumerate(seen) if n != 1), len(seen)) :]
    assert after_reset == sorted(after_reset)
    assert set(after_reset) <= {0, 500, 1000, 1300}
    assert len(final.hits) == 3


def test_threads_share_one_reader_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An MCP server or agent runs searches from worker threads concurrently on one open store."""
    from concurrent.futures import ThreadPoolExecutor

    from fiskai_rag.testing import FakeEmbedder

    monkeypatch.chdir(tmp_path)
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i in range(60):
        (corpus / f"d{i:02}.md").write_text(f"# Doc {i}\n\nthreaded search needle {i}\n", encoding="utf-8")
    embedder = FakeEmbedder()
    with open_store(tmp_path / "store", read_only=False, embedder=embedder) as writer:
        writer.index(["corpus"])

    with open_store(tmp_path / "store", read_only=True, embedder=embedder) as store:

        def search(i: int) -> int:
            return len(store.search(f"needle {i}", top_k=5).hits) + len(store.sources())

        with ThreadPoolExecutor(max_workers=8) as pool:
            counts = list(pool.map(search, range(200)))

    assert counts == [65] * 200
