"""What fiskai adds to a call of an imported MCP tool (`mcp_clients`), against the `mcp` client alone.

Run: uv run python bench/mcp_client.py [--rounds N]

Target (issue 29): an imported tool call through fiskai is within 5 ms (median) of the same call made
directly with the `mcp` client.

Two stdio sessions to two children of the same server: the MCP reference "everything" server
(`@modelcontextprotocol/server-everything`, installed by .ci/run; its `echo` tool), or, when it is
absent, a small Python MCP server written here with the same `echo`. Measured per round, interleaved so
load drift on the shared machine hits both alike:

* direct: `Client.call_tool("echo", {...})` on a session opened with `mcp.Client`;
* fiskai: the one call path on the imported `everything_echo`: `prepare_call` (decode, required
  parameters, the `--json.path` gate line and its digest), `ConfirmGate.decide`, `run_call`
  (`McpTool.invoke`, the result mapped to text and capped);
* fiskai, gated: the same with `confirm: all`, approved by a persisted rule matched on the gate line.

Figures are medians in milliseconds; the ratio and difference are against `direct` from the same run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio

from fiskai_core.approvals import Approvals, parse_rule
from fiskai_core.calls import ToolCall, prepare_call, run_call
from fiskai_core.config import Mode, parse_config
from fiskai_core.confirm import ConfirmGate
from fiskai_core.prompter import DenyPrompter

REFERENCE = Path(
    os.environ.get(
        "FISKAI_MCP_REFERENCE_SERVERS",
        Path.home() / ".cache" / "fiskai" / "mcp-reference-servers-2026.8.31" / "node_modules" / ".bin",
    )
)
MESSAGE = {"message": "the quick brown fox"}

_PYTHON_ECHO = """
import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.stdio import stdio_server

ECHO = types.Tool(
    name="echo", description="Echoes back the input", annotations=types.ToolAnnotations(read_only_hint=True),
    input_schema={"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]},
)


async def list_tools(ctx, params):
    return types.ListToolsResult(tools=[ECHO])


async def call_tool(ctx, params):
    return types.CallToolResult(content=[types.TextContent(type="text", text="Echo: " + params.arguments["message"])])


server = Server("echo", on_list_tools=list_tools, on_call_tool=call_tool)


async def main():
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


anyio.run(main)
"""


def _server(folder: Path) -> tuple[str, list[str], str]:
    everything = REFERENCE / "mcp-server-everything"
    if everything.exists():
        return str(everything), ["stdio"], "@modelcontextprotocol/server-everything 2026.8.31 (stdio)"
    script = folder / "echo_server.py"
    script.write_text(_PYTHON_ECHO, encoding="utf-8")
    return sys.executable, [str(script)], "a Python mcp echo server (stdio; the npm server is not installed)"


async def _time(action: Callable[[], Awaitable[object]]) -> float:
    began = time.perf_counter()
    await action()
    return (time.perf_counter() - began) * 1000


async def _bench(rounds: int) -> None:
    from mcp import Client, StdioServerParameters

    from fiskai_mcp.client import open_mcp_clients

    with tempfile.TemporaryDirectory() as scratch:
        command, args, label = _server(Path(scratch))
        quoted = ", ".join(f"'{a}'" for a in args)
        config = parse_config(
            f"mcp_clients:\n  - {{name: everything, command: '{command}', args: [{quoted}], confirm: none}}\n"
            f"  - {{name: gated, command: '{command}', args: [{quoted}], confirm: all}}\n",
            Mode.MCP,
        )
        async with (
            open_mcp_clients(config.mcp_client_entries, root=None) as clients,
            Client(StdioServerParameters(command=command, args=args), cache=None) as direct,
        ):
            tools = {tool.name: tool for tool in clients.tools}
            open_gate = ConfirmGate(DenyPrompter())
            rule = parse_rule("gated_echo --message=* ...", tags=tools["gated_echo"].tags)
            approvals = Approvals([rule], identity="bench")
            rule_gate = ConfirmGate(DenyPrompter(), approvals=approvals)
            arguments = '{"message": "the quick brown fox"}'

            async def through(name: str, gate: ConfirmGate) -> None:
                call = prepare_call(tools[name], arguments)
                assert isinstance(call, ToolCall)
                if call.gate_tag is not None:
                    decision = await gate.decide(call)
                    assert decision.allowed, decision.reason
                result = await run_call(call)
                assert "quick brown fox" in result.output, result

            async def plain() -> None:
                result = await direct.call_tool("echo", MESSAGE)
                assert not result.is_error

            measures: dict[str, Callable[[], Awaitable[object]]] = {
                "direct mcp Client.call_tool": plain,
                "fiskai call path (ungated)": lambda: through("everything_echo", open_gate),
                "fiskai call path (gated, rule)": lambda: through("gated_echo", rule_gate),
            }
            for action in measures.values():  # warm both sessions and every code path
                for _ in range(5):
                    await action()
            times: dict[str, list[float]] = {name: [] for name in measures}
            for _ in range(rounds):
                for name, action in measures.items():
                    times[name].append(await _time(action))
    base = statistics.median(times["direct mcp Client.call_tool"])
    print(f"server: {label}; {rounds} rounds, interleaved; medians in ms")
    print(f"{'measure':34} {'median':>8} {'p90':>8} {'ratio':>7} {'diff':>8}")
    for name, values in times.items():
        median = statistics.median(values)
        p90 = statistics.quantiles(values, n=10)[-1]
        print(f"{name:34} {median:8.3f} {p90:8.3f} {median / base:6.2f}x {median - base:+8.3f}")
    worst = max(statistics.median(v) for v in times.values()) - base
    print(f"target: within 5 ms of direct; worst difference {worst:+.3f} ms: {'met' if worst <= 5 else 'NOT met'}")


def main() -> None:
    """Parse the arguments and run the bench."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    rounds = parser.parse_args().rounds
    anyio.run(_bench, rounds)


if __name__ == "__main__":
    main()
