"""ToolAccess: a store as the memory tools see it, expected outcomes as values and the rest as errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from fiskai_memory import FileMemoryStore, MemoryStoreError, ToolAccess
from fiskai_memory.testing import InMemoryMemoryStore
from fiskai_memory.tool_access import Note

pytestmark = pytest.mark.anyio


async def test_over_a_file_store_a_taken_key_is_exists_and_a_miss_is_none(tmp_path: Path) -> None:
    access = ToolAccess(FileMemoryStore(tmp_path / "memory"))
    assert await access.read("layout") is None
    assert await access.write("layout", "Where things live", "a/b", overwrite=False) == "written"
    assert await access.write("layout", "Other", "c", overwrite=False) == "exists"
    assert await access.read("layout") == Note(key="layout", description="Where things live", content="a/b")
    # The file backend has no read-before-update guard: an overwrite without a read goes through.
    assert await access.write("layout", "Moved", "c/d", overwrite=True) == "written"
    assert await access.list() == [Note(key="layout", description="Moved")]
    assert await access.delete("layout") is True
    assert await access.delete("layout") is False


async def test_an_overwrite_not_preceded_by_a_read_of_the_current_revision_is_stale() -> None:
    store = InMemoryMemoryStore(require_read_before_update=True)
    access = ToolAccess(store)
    assert await access.write("k", "d", "1", overwrite=False) == "written"
    store.bump("k", "changed elsewhere")
    assert await access.write("k", "d", "2", overwrite=True) == "stale"
    assert await access.read("k") == Note(key="k", description="d", content="changed elsewhere")
    assert await access.write("k", "d", "2", overwrite=True) == "written"


async def test_any_other_failure_raises_with_a_message_naming_the_key(tmp_path: Path) -> None:
    access = ToolAccess(FileMemoryStore(tmp_path / "memory"))
    with pytest.raises(MemoryStoreError) as caught:
        await access.read("../etc/passwd")
    assert "../etc/passwd" in str(caught.value)
    with pytest.raises(MemoryStoreError):
        await access.write("bad key", "d", "c", overwrite=False)
