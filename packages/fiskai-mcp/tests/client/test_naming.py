"""Naming a server's tools: `<alias>_<tool>`, the entry's filters, collisions and skipped tools with reasons."""

import mcp_types as types

from fiskai_core.config import Mode, parse_config
from fiskai_mcp.client import McpClients, McpConnection, ServerReport


def _connection(extra: str = "") -> McpConnection:
    (entry,) = parse_config(
        f"mcp_clients:\n  - {{name: filesystem, alias: fs, command: x{extra}}}\n", Mode.MCP
    ).mcp_client_entries
    return McpConnection(entry, root=None)


def _tool(name: str, description: str = "does things", schema: dict[str, object] | None = None) -> types.Tool:
    return types.Tool(name=name, description=description, input_schema=schema or {"type": "object"})


def _name(connection: McpConnection, listed: list[types.Tool], taken: tuple[str, ...] = ()) -> ServerReport:
    clients = McpClients(taken=taken)
    report = ServerReport(name="filesystem", alias="fs", transport="stdio", endpoint="x", confirm="destructive")
    clients.reports.append(report)
    clients._tools["filesystem"] = clients._name_tools(connection, listed, report)
    return report


def test_every_tool_is_prefixed_with_the_alias_and_filters_see_the_servers_own_names() -> None:
    connection = _connection(", include: {tools: ['^read_']}, exclude: {tools: ['media']}")
    report = _name(connection, [_tool("read_file"), _tool("read_media_file"), _tool("write_file")])
    assert (report.advertised, report.kept, report.imported) == (3, 1, ["fs_read_file"])


def test_tools_without_description_object_schema_or_valid_name_are_skipped_with_reasons() -> None:
    listed = [
        _tool("quiet", description=" "),
        _tool("listy", schema={"type": "array"}),
        _tool("bad name"),
        _tool("fine"),
    ]
    report = _name(_connection(), listed)
    assert report.imported == ["fs_fine"]
    assert report.skipped == [
        "quiet (no description)",
        "listy (input schema root is not an object)",
        'bad name ("fs_bad name" is not a valid tool name (letters, digits, _ and - only))',
    ]


def test_a_name_another_tool_holds_is_left_out_and_reported_as_a_collision() -> None:
    report = _name(_connection(), [_tool("read_file"), _tool("stat")], taken=("fs_stat",))
    assert report.imported == ["fs_read_file"]
    assert report.skipped == ['stat (name "fs_stat" is already taken)']
    assert report.collisions == ['"fs_stat" (MCP server "filesystem")']
