"""Which tools are listed, and the hints derived from their tags."""

from __future__ import annotations

import mcp_types as types
from pydantic import JsonValue

from fiskai_core.testing import FakeTool
from fiskai_mcp._names import describe_tool, servable_tools


def test_names_the_protocol_rejects_are_skipped_with_a_warning() -> None:
    warnings: list[str] = []
    tools = [FakeTool(name="ok_1"), FakeTool(name="bad name!"), FakeTool(name="x" * 129), FakeTool(name="ok_1")]

    kept = servable_tools(tools, warn=warnings.append)

    assert [tool.name for tool in kept] == ["ok_1"]
    assert kept[0] is tools[0]
    assert warnings == [
        'skipping tool "bad name!": not a valid MCP tool name',
        f'skipping tool "{"x" * 129}": not a valid MCP tool name',
        'skipping tool "ok_1": another tool already has that name',
    ]


def test_annotations_follow_tags_and_gating_wins_over_read_only() -> None:
    read = describe_tool(FakeTool(name="node_list", tags=["impact:ro"]), confirm_tags=())
    write = describe_tool(FakeTool(name="config_set", tags=["impact:rw"]), confirm_tags=())
    gated = describe_tool(FakeTool(name="drain", tags=["impact:ro", "ai:confirm"]), confirm_tags=())
    by_config = describe_tool(FakeTool(name="wipe", tags=["danger"]), confirm_tags=["danger"])
    plain = describe_tool(FakeTool(name="other"), confirm_tags=())

    def hints(entry: types.Tool) -> tuple[bool | None, bool | None]:
        assert entry.annotations is not None
        return entry.annotations.read_only_hint, entry.annotations.destructive_hint

    assert hints(read) == (True, False)
    assert hints(write) == (False, True)
    assert hints(gated) == (False, True)
    assert hints(by_config) == (False, True)
    assert hints(plain) == (None, None)
    assert read.annotations is not None and read.annotations.title == "node list"


def test_the_listed_schema_is_the_tools_own() -> None:
    schema: dict[str, JsonValue] = {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]}
    entry = describe_tool(FakeTool(name="get", input_schema=schema, description="Read a key"), confirm_tags=())

    assert entry.input_schema == schema
    assert entry.description == "Read a key"
