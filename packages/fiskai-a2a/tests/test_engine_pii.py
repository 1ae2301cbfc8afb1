"""The a2a tool endpoint hands results to another agent's model: `harness.pii.mode` applies before they leave."""

from functools import partial
from typing import Any, Literal

import anyio
import pytest

from fiskai_a2a import A2AClient, Server
from fiskai_a2a.testing import FakeTransport
from fiskai_core.pii import RESULT_WITHHELD
from fiskai_core.testing import FakeTool
from fiskai_core.tools import ToolResult

pytestmark = pytest.mark.anyio

RECORD = "owner maria.gonzalez@northwind-traders.com, card 4532 0151 1283 0366\n"


async def _call(mode: Literal["redact", "reject", "off"]) -> Any:
    result = ToolResult(output=RECORD, command="customer show 48211", exit_code=0)
    server = Server(
        identity="app", version="1", tools=[FakeTool(name="customer", description="C.", result=result)], pii_mode=mode
    )
    transport = FakeTransport()
    reply: Any = None
    async with anyio.create_task_group() as tasks:
        await tasks.start(partial(transport.serve, identity="app", version="1", handler=server))
        client = A2AClient(transport, identity="caller", timeout=5, stall_timeout=5, cancel_timeout=0.2)
        reply = await client.call_tool("app", "customer")
        tasks.cancel_scope.cancel()
    return reply


async def test_a_served_result_is_redacted_by_default() -> None:
    reply = await _call("redact")
    assert reply.output == "owner [REDACTED:EMAIL], card [REDACTED:CREDIT_CARD]\n"
    assert reply.is_error is None and reply.exec is not None and reply.exec.command == "customer show 48211"


async def test_reject_withholds_a_served_result() -> None:
    reply = await _call("reject")
    assert reply.is_error and reply.output == RESULT_WITHHELD


async def test_off_serves_it_unchanged() -> None:
    assert (await _call("off")).output == RECORD
