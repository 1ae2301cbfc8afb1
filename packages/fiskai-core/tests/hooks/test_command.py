import json
import sys
from pathlib import Path

import pytest

from fiskai_core.hooks import (
    Allow,
    CommandHook,
    Decisions,
    Deny,
    Hooks,
    PromptSubmit,
    ReplaceOutput,
    RewritePrompt,
    RewriteTool,
    ToolOutput,
    ToolUse,
    pre_tool_use,
)

pytestmark = pytest.mark.anyio

USE = ToolUse(tool="stream_rm", arguments={"stream": "ORDERS"}, tool_use_id="t1")


def program(tmp_path: Path, body: str) -> list[str]:
    path = tmp_path / "hook.py"
    path.write_text(f"import json, os, sys\nevent = json.load(sys.stdin)\n{body}", encoding="utf-8")
    return [sys.executable, str(path)]


async def test_empty_output_allows_and_each_answer_maps_to_its_decision(tmp_path: Path) -> None:
    assert await CommandHook("pre_tool_use", program(tmp_path, ""), timeout=10)(USE) == Allow()
    rewrite = program(tmp_path, 'print(json.dumps({"decision": "rewrite", "tool": "stream_ls", "arguments": {}}))')
    assert await CommandHook("pre_tool_use", rewrite, timeout=10)(USE) == RewriteTool(tool="stream_ls", arguments={})
    output = program(tmp_path, 'print(json.dumps({"decision": "rewrite", "output": "[redacted]"}))')
    got = await CommandHook("post_tool_use", output, timeout=10)(ToolOutput(tool="x", arguments={}, output="secret"))
    assert got == ReplaceOutput("[redacted]")
    prompt = program(tmp_path, 'print(json.dumps({"decision": "rewrite", "prompt": event["prompt"].upper()}))')
    assert await CommandHook("user_prompt_submit", prompt, timeout=10)(PromptSubmit(prompt="hi")) == RewritePrompt("HI")


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ("sys.exit(3)", "exited with status 3"),
        ("print('yes please')", "not JSON"),
        ("print('[1]')", "not an object"),
        ('print(json.dumps({"decision": "maybe"}))', "not a decision"),
    ],
)
async def test_anything_but_a_decision_denies(tmp_path: Path, body: str, says: str) -> None:
    got = await CommandHook("pre_tool_use", program(tmp_path, body), timeout=10)(USE)
    assert isinstance(got, Deny)
    assert says in got.reason
    # After a tool ran, failing closed means the output is withheld.
    after = await CommandHook("post_tool_use", program(tmp_path, body), timeout=10)(
        ToolOutput(tool="x", arguments={}, output="secret")
    )
    assert isinstance(after, ReplaceOutput)
    assert "secret" not in after.output


async def test_a_missing_program_denies(tmp_path: Path) -> None:
    got = await CommandHook("pre_tool_use", [str(tmp_path / "nope")], timeout=10)(USE)
    assert isinstance(got, Deny)
    assert "could not start" in got.reason


async def test_the_hook_gets_a_scrubbed_environment(tmp_path: Path) -> None:
    body = 'print(json.dumps({"decision": "deny", "reason": ",".join(sorted(k for k in os.environ if k.startswith(("ANTHROPIC", "OTEL", "KEEP"))))}))'
    env = {"ANTHROPIC_API_KEY": "k", "OTEL_EXPORTER_OTLP_HEADERS": "a=b", "KEEP_ME": "1", "PATH": "/usr/bin:/bin"}
    got = await CommandHook("pre_tool_use", program(tmp_path, body), timeout=10, env=env)(USE)
    assert got == Deny("KEEP_ME")


async def test_a_hook_scoped_to_tools_allows_others_without_running(tmp_path: Path) -> None:
    hook = CommandHook("pre_tool_use", [str(tmp_path / "never-run")], timeout=10, tools=["stream_info"])
    assert await hook(USE) == Allow()


async def test_rewrites_chain_and_every_decision_is_recorded(tmp_path: Path) -> None:
    async def first(use: ToolUse) -> Allow | Deny | RewriteTool:
        return RewriteTool(arguments={"stream": "AUDIT"})

    async def second(use: ToolUse) -> Allow | Deny | RewriteTool:
        return Deny("no AUDIT") if use.arguments["stream"] == "AUDIT" else Allow()

    decisions = Decisions()
    got = await pre_tool_use(Hooks(pre_tool_use=(first, second)), USE, decisions)
    assert got == Deny("no AUDIT")
    assert [r["decision"] for r in decisions.records] == ["rewrite", "deny"]
    assert decisions.records[0]["original"]["arguments"] == {"stream": "ORDERS"}
    assert json.dumps(decisions.records)  # journal-ready
