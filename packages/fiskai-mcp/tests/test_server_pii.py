"""The MCP client's model is a model too: `harness.pii.mode` applies to served results."""

from typing import Literal

import mcp_types as types
import pytest
from mcp import Client

from fiskai_core.pii import RESULT_WITHHELD
from fiskai_core.testing import FakeTool
from fiskai_core.tools import ToolResult
from fiskai_mcp import ServerOptions, build_server

pytestmark = pytest.mark.anyio

RECORD = "owner maria.gonzalez@northwind-traders.com, SSN 536-22-1893"


async def _call(mode: Literal["redact", "reject", "off"]) -> types.CallToolResult:
    tool = FakeTool(name="customer", description="Show a customer.", result=ToolResult(output=RECORD))
    logged: list[str] = []
    server = build_server([tool], ServerOptions(pii_mode=mode), log=logged.append)
    async with Client(server, mode="auto") as client:
        return await client.call_tool("customer", {})


def _text(result: types.CallToolResult) -> str:
    (block,) = result.content
    assert isinstance(block, types.TextContent)
    return block.text


async def test_a_served_result_is_redacted_by_default() -> None:
    result = await _call("redact")
    assert _text(result) == "owner [REDACTED:EMAIL], SSN [REDACTED:SSN]"
    assert result.is_error is False


async def test_reject_withholds_it_and_off_passes_it() -> None:
    rejected = await _call("reject")
    assert rejected.is_error is True and _text(rejected) == RESULT_WITHHELD
    assert _text(await _call("off")) == RECORD
