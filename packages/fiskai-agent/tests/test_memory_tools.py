"""The four memory tools over a real file store (reference 9.4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fiskai_agent._memory_tools import memory_tools
from fiskai_memory import FileMemoryStore

pytestmark = pytest.mark.anyio


async def test_write_read_list_delete_round_trip(tmp_path: Path) -> None:
    tools = {t.name: t for t in memory_tools(FileMemoryStore(tmp_path / "memory"))}
    written = await tools["memory_write"].execute(
        '{"key":"layout","description":"Where\\nthings live","content":"a/b"}'
    )
    assert json.loads(written.text) == {"written": True}
    read = json.loads((await tools["memory_read"].execute('{"key":"layout"}')).text)
    assert read == {"found": True, "key": "layout", "description": "Where things live", "content": "a/b"}
    listed = json.loads((await tools["memory_list"].execute(None)).text)
    assert listed == {"memories": [{"key": "layout", "description": "Where things live"}]}
    assert json.loads((await tools["memory_delete"].execute('{"key":"layout"}')).text) == {"deleted": True}
    assert json.loads((await tools["memory_delete"].execute('{"key":"layout"}')).text) == {"deleted": False}


async def test_write_refuses_an_existing_key_and_names_its_description(tmp_path: Path) -> None:
    tools = {t.name: t for t in memory_tools(FileMemoryStore(tmp_path / "memory"))}
    await tools["memory_write"].execute('{"key":"k","description":"First","content":"1"}')
    again = await tools["memory_write"].execute('{"key":"k","description":"Second","content":"2"}')
    assert not again.is_error
    body = json.loads(again.text)
    assert body["written"] is False
    assert body["reason"].startswith('a memory already exists under key "k" (description: "First")')
    replaced = await tools["memory_write"].execute('{"key":"k","description":"Second","content":"2","overwrite":true}')
    assert json.loads(replaced.text) == {"written": True}


async def test_a_miss_is_not_an_error_and_a_bad_key_is(tmp_path: Path) -> None:
    tools = {t.name: t for t in memory_tools(FileMemoryStore(tmp_path / "memory"))}
    miss = await tools["memory_read"].execute('{"key":"nothing"}')
    assert not miss.is_error and json.loads(miss.text)["found"] is False
    bad = await tools["memory_read"].execute('{"key":"../etc/passwd"}')
    assert bad.is_error and bad.text.startswith('reading memory "../etc/passwd": ')
    malformed = await tools["memory_write"].execute("{not json")
    assert malformed.is_error and malformed.text.startswith("invalid memory_write input: ")


async def test_trace_lines_sanitize_the_key(tmp_path: Path) -> None:
    tools = {t.name: t for t in memory_tools(FileMemoryStore(tmp_path / "memory"))}
    assert tools["memory_list"].trace_line(None) == "memory_list"
    assert tools["memory_read"].trace_line('{"key":"a\\u001b[2Jb"}') == "memory_read ab"
