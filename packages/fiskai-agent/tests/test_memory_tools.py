"""The four memory tools (fiskai_core.builtins) over fiskai_memory's stores through ToolAccess (reference 9.4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fiskai_core.builtins import MEMORY_TOOL_NAMES, MemoryAccess, MemoryTool, memory_tools
from fiskai_core.calls import ToolCall, prepare_call
from fiskai_core.testing import call_tool
from fiskai_core.tools import TAG_IDEMPOTENT
from fiskai_memory import FileMemoryStore, ToolAccess
from fiskai_memory.testing import InMemoryMemoryStore

pytestmark = pytest.mark.anyio


def _tools(access: MemoryAccess) -> dict[str, MemoryTool]:
    return {t.name: t for t in memory_tools(access)}


def _file_tools(tmp_path: Path) -> dict[str, MemoryTool]:
    # The seam, checked statically by pyright: fiskai_memory satisfies core's protocol without importing core.
    access: MemoryAccess = ToolAccess(FileMemoryStore(tmp_path / "memory"))
    return _tools(access)


async def test_write_read_list_delete_round_trip(tmp_path: Path) -> None:
    tools = _file_tools(tmp_path)
    written = await call_tool(
        tools["memory_write"], '{"key":"layout","description":"Where\\nthings live","content":"a/b"}'
    )
    assert json.loads(written.text) == {"written": True}
    read = json.loads((await call_tool(tools["memory_read"], '{"key":"layout"}')).text)
    assert read == {"found": True, "key": "layout", "description": "Where things live", "content": "a/b"}
    listed = json.loads((await call_tool(tools["memory_list"], None)).text)
    assert listed == {"memories": [{"key": "layout", "description": "Where things live"}]}
    assert json.loads((await call_tool(tools["memory_delete"], '{"key":"layout"}')).text) == {"deleted": True}
    assert json.loads((await call_tool(tools["memory_delete"], '{"key":"layout"}')).text) == {"deleted": False}


async def test_write_refuses_an_existing_key_and_names_its_description(tmp_path: Path) -> None:
    tools = _file_tools(tmp_path)
    await call_tool(tools["memory_write"], '{"key":"k","description":"First","content":"1"}')
    again = await call_tool(tools["memory_write"], '{"key":"k","description":"Second","content":"2"}')
    assert not again.is_error
    body = json.loads(again.text)
    assert body["written"] is False
    assert body["reason"].startswith('a memory already exists under key "k" (description: "First")')
    replaced = await call_tool(
        tools["memory_write"], '{"key":"k","description":"Second","content":"2","overwrite":true}'
    )
    assert json.loads(replaced.text) == {"written": True}
    read = json.loads((await call_tool(tools["memory_read"], '{"key":"k"}')).text)
    assert (read["description"], read["content"]) == ("Second", "2")


async def test_an_overwrite_of_a_memory_changed_since_it_was_read_is_refused_until_read_again() -> None:
    # The KV backend's guard (the in-memory store behaves the same with require_read_before_update).
    store = InMemoryMemoryStore(require_read_before_update=True)
    tools = _tools(ToolAccess(store))
    await call_tool(tools["memory_write"], '{"key":"k","description":"d","content":"1"}')
    store.bump("k", "changed by another run")
    overwrite = '{"key":"k","description":"d","content":"2","overwrite":true}'
    stale = await call_tool(tools["memory_write"], overwrite)
    assert not stale.is_error
    body = json.loads(stale.text)
    assert body["written"] is False
    assert body["reason"].startswith('cannot overwrite memory "k": read it first with memory_read')
    assert (await store.read("k")).content == "changed by another run"
    await call_tool(tools["memory_read"], '{"key":"k"}')
    assert json.loads((await call_tool(tools["memory_write"], overwrite)).text) == {"written": True}


async def test_a_miss_is_not_an_error_and_a_bad_key_is(tmp_path: Path) -> None:
    tools = _file_tools(tmp_path)
    miss = await call_tool(tools["memory_read"], '{"key":"nothing"}')
    assert not miss.is_error
    assert json.loads(miss.text) == {
        "found": False,
        "reason": 'no memory is stored under key "nothing"; call memory_list for the current set',
    }
    bad = await call_tool(tools["memory_read"], '{"key":"../etc/passwd"}')
    assert bad.is_error and bad.text.startswith('reading memory "../etc/passwd": ')
    malformed = await call_tool(tools["memory_write"], "{not json")
    assert malformed.is_error
    assert malformed.text == "invalid JSON arguments: invalid character 'n' looking for beginning of object key string"
    wrong = await call_tool(tools["memory_write"], '{"key":"k","description":1,"content":"x"}')
    assert wrong.is_error and wrong.text.startswith("invalid memory_write input: ")
    assert json.loads((await call_tool(tools["memory_list"], None)).text) == {"memories": []}


async def test_display_lines_sanitize_the_key(tmp_path: Path) -> None:
    tools = _file_tools(tmp_path)
    listed = prepare_call(tools["memory_list"], None)
    read = prepare_call(tools["memory_read"], '{"key":"a\\u001b[2Jb"}')
    assert isinstance(listed, ToolCall) and isinstance(read, ToolCall)
    assert (listed.display, read.display) == ("memory_list", "memory_read ab")
    assert listed.argv is None and read.argv is None


def test_only_the_read_only_memory_tools_are_safe_to_repeat(tmp_path: Path) -> None:
    tools = _file_tools(tmp_path)
    assert list(tools) == list(MEMORY_TOOL_NAMES)
    assert {name for name, tool in tools.items() if TAG_IDEMPOTENT in tool.tags} == {"memory_list", "memory_read"}
    assert all(not tool.asks_operator for tool in tools.values())


async def test_read_only_offers_list_and_read_and_nothing_that_writes(tmp_path: Path) -> None:
    from fiskai_core.builtins import MEMORY_READ_ONLY_NOTE, agent_tool_set

    store = FileMemoryStore(tmp_path / "memory")
    await ToolAccess(store).write("layout", "Where things live", "a/b", overwrite=False)
    before = sorted(p.name for p in (tmp_path / "memory").rglob("*"))
    tools = memory_tools(ToolAccess(store), read_only=True)
    assert [t.name for t in tools] == ["memory_list", "memory_read"]
    assert all(TAG_IDEMPOTENT in t.tags for t in tools)
    read = json.loads((await call_tool(tools[1], '{"key":"layout"}')).text)
    assert read["content"] == "a/b"
    tool_set = agent_tool_set(memory=ToolAccess(store), memory_read_only=True)
    assert [entry.tool.name for entry in tool_set.entries] == ["memory_list", "memory_read"]
    assert MEMORY_READ_ONLY_NOTE in tool_set.notes and "read-only" in MEMORY_READ_ONLY_NOTE
    assert sorted(p.name for p in (tmp_path / "memory").rglob("*")) == before
