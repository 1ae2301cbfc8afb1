"""A model's tool arguments, from the wire to the command: decoded once, numbers as written, objects only.

Every test drives `fiskai_agent.run` with the real anthropic SDK against `MessagesServer`, over a fake
fisk application (`write_fake_app`) whose argv log shows exactly what ran, in both transports: the JSON
body, and SSE (which a run uses for output caps over 21333 tokens, or when the settings ask for it).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from fiskai_agent import RunOptions, SessionOptions, run
from fiskai_agent.llm import ProviderSettings
from fiskai_agent.testing import MessagesServer, Turn, text, tool_use
from fiskai_core.config import BudgetSettings, LLMSettings
from fiskai_core.fisk import load_application
from fiskai_core.fisk.execution import CommandTool, command_tools
from fiskai_core.testing import DecodeCounter, write_fake_app
from fiskai_core.tools import ToolSet
from fiskai_runstate import FileJournalStore, Fingerprint, Record
from fiskai_runstate.records import AssistantRecord, JsonValue, MetaRecord, ToolIntentRecord, ToolResultRecord

pytestmark = pytest.mark.anyio

MODEL = "claude-sonnet-4-6"
RAW = '{"ratio": 1.50, "count": 1e2}'
_FLAGS = [
    {"name": "ratio", "help": "Scale factor", "boolean": False, "cumulative": False},
    {"name": "count", "help": "Replicas", "boolean": False, "cumulative": False},
]
_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "ratio": {"type": "number", "description": "Scale factor"},
        "count": {"type": "integer", "description": "Replicas"},
    },
    "required": ["ratio"],
}
_MODEL = {
    "name": "scalectl",
    "help": "Scale deployments",
    "commands": [
        {
            "name": "scale",
            "help": "Scale a deployment",
            "schema": _SCHEMA,
            "restricted_schema": _SCHEMA,
            "flags": _FLAGS,
        }
    ],
}


class Scalectl:
    """A fake fisk application with one command, `scale --ratio=<number> --count=<integer>`."""

    def __init__(self, directory: Path) -> None:
        model = directory / "scalectl.introspect.json"
        model.write_text(json.dumps(_MODEL), encoding="utf-8")
        self._binary = write_fake_app(directory, model, name="scalectl")
        self.tools: list[CommandTool] = command_tools(load_application(str(self._binary)))

    def calls(self) -> list[list[str]]:
        """The argv (without the binary) of every call, in order."""
        log = self._binary.with_name("scalectl.calls")
        text_ = log.read_text(encoding="utf-8") if log.exists() else ""
        return [[line[1:-1] for line in call.splitlines()] for call in text_.split("--\n")[:-1]]


def _tool_use(turn: AssistantRecord) -> dict[str, Any]:
    """The first content block of a journaled model turn, a tool_use."""
    content = cast("list[dict[str, Any]]", turn.message["content"])
    return cast("dict[str, Any]", content[0]["tool_use"])


@pytest.fixture
def scalectl(tmp_path: Path) -> Scalectl:
    directory = tmp_path / "scalectl"
    directory.mkdir()
    tool = Scalectl(directory)
    assert [t.name for t in tool.tools] == ["scale"] and tool.tools[0].spec.strict_schema
    return tool


# Each way a run reaches the server: the JSON body, SSE because the settings ask, SSE for a large output cap.
TRANSPORTS: dict[str, tuple[bool, bool]] = {
    "json": (False, False),
    "sse-settings": (True, False),
    "sse-output-cap": (False, True),
}
"""(ProviderSettings.stream, an output cap too large for a non-streaming call) per transport."""


def _options(
    server: MessagesServer, tools: list[CommandTool], transport: str, session: SessionOptions | None = None
) -> RunOptions:
    stream, large_cap = TRANSPORTS[transport]
    budget = BudgetSettings(max_output_tokens=32000) if large_cap else BudgetSettings()
    return RunOptions(
        prompt="scale it",
        llm=LLMSettings(model=MODEL, budget=budget),
        tools=ToolSet.of(tools),
        provider=ProviderSettings(model=MODEL, api_key="test", base_url=server.base_url, stream=stream),
        session=session,
    )


@pytest.mark.parametrize("transport", list(TRANSPORTS))
async def test_a_models_numbers_reach_the_command_as_written(scalectl: Scalectl, transport: str) -> None:
    with MessagesServer() as server:
        server.add(Turn([tool_use("scale", raw_input=RAW)]), Turn([text("scaled")]))
        result = await run(_options(server, scalectl.tools, transport))
        requests = server.requests
    assert (result.reason, result.answer) == ("completed", "scaled")
    assert [request.stream for request in requests] == [transport != "json"] * 2
    assert scalectl.calls() == [["scale", "--ratio=1.50", "--count=1e2"]]
    (sent,) = requests[1].tool_results()
    assert json.loads(str(sent["content"]))["command"] == "scale --ratio=1.50 --count=1e2"


@pytest.mark.parametrize("transport", ["json", "sse-settings"])
async def test_a_resumed_call_keeps_the_numbers_the_model_wrote(
    scalectl: Scalectl, store: FileJournalStore, transport: str
) -> None:
    """Steps:
    1. A checkpointed run journals the model's turn (the plain input and the exact text beside it).
    2. A crash before the call ran is simulated by cutting the journal after that turn.
    3. The resumed run runs the journaled call with 1.50 and 1e2, not 1.5 and 100.0.
    """
    with MessagesServer() as server:
        server.add(Turn([tool_use("scale", raw_input=RAW, id="toolu_scale")]), Turn([text("scaled")]))
        await run(_options(server, scalectl.tools, transport, SessionOptions(store=store, checkpoint=True, name="s")))
    records = await store.load("s")
    turn = records[1].payload
    assert isinstance(turn, AssistantRecord)
    block = _tool_use(turn)
    assert block["input"] == {"ratio": 1.5, "count": 100.0}
    assert block["exact"] == '{"ratio":1.50,"count":1e2}'

    crashed = FileJournalStore(store.directory / "crashed")
    meta = records[0].payload
    assert isinstance(meta, MetaRecord)
    journal = await crashed.create(
        MetaRecord(run_id="c", created=meta.created, fingerprint=meta.fingerprint, prompt="x")
    )
    await journal.append(Record(seq=2, payload=turn))
    await journal.aclose()
    with MessagesServer() as server:
        server.add(Turn([text("scaled again")]))
        resumed = await run(
            _options(server, scalectl.tools, transport, SessionOptions(store=crashed, resume_id="c", force=True))
        )
    assert resumed.answer == "scaled again"
    assert scalectl.calls() == [["scale", "--ratio=1.50", "--count=1e2"]] * 2


@pytest.fixture
def loaded_provider() -> Iterator[None]:
    # The adapter module is imported when the first run starts; load it first so its names get wrapped.
    import fiskai_agent.llm.anthropic  # noqa: F401  # pyright: ignore[reportUnusedImport]

    yield


@pytest.mark.parametrize("transport", list(TRANSPORTS))
async def test_a_tool_calls_arguments_are_decoded_exactly_once_in_a_run(
    scalectl: Scalectl, store: FileJournalStore, monkeypatch: pytest.MonkeyPatch, loaded_provider: None, transport: str
) -> None:
    # Where the response arrives (the JSON body, or the accumulated input_json_delta text), and never again:
    # not to check required parameters, not for the gate, not to journal, not to build the argv.
    decodes = DecodeCounter(monkeypatch.setattr, b"1.50")
    with MessagesServer() as server:
        server.add(Turn([tool_use("scale", raw_input=RAW)]), Turn([text("done")]))
        session = SessionOptions(store=store, checkpoint=True, name="d")
        result = await run(_options(server, scalectl.tools, transport, session))
    assert result.answer == "done"
    assert scalectl.calls() == [["scale", "--ratio=1.50", "--count=1e2"]]
    assert decodes.seen == ["loads_exact"]


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("null", 'arguments for tool "scale" must be a JSON object, got null; nothing was run'),
        (
            '"--ratio=9"',
            "invalid JSON arguments: json: cannot unmarshal string into Go value of type map[string]interface {}",
        ),
        ("[1.5]", "invalid JSON arguments: json: cannot unmarshal array into Go value of type map[string]interface {}"),
    ],
)
@pytest.mark.parametrize("transport", ["json", "sse-settings"])
async def test_input_that_is_no_object_is_refused_and_nothing_runs(
    scalectl: Scalectl, store: FileJournalStore, raw: str, message: str, transport: str
) -> None:
    # Issue 36.9: `null` was read as {} and a call with no arguments ran; anything else but an object is
    # refused in a run too, before the gate and without an intent record.
    with MessagesServer() as server:
        server.add(Turn([tool_use("scale", raw_input=raw, id="toolu_x")]), Turn([text("could not")]))
        result = await run(
            _options(server, scalectl.tools, transport, SessionOptions(store=store, checkpoint=True, name="n"))
        )
        (refused,) = server.requests[1].tool_results()
    assert result.reason == "completed"
    assert refused == {"type": "tool_result", "tool_use_id": "toolu_x", "content": message, "is_error": True}
    assert scalectl.calls() == []
    records = [r.payload for r in await store.load("n")]
    assert not any(isinstance(p, ToolIntentRecord) for p in records)
    (journaled,) = [p for p in records if isinstance(p, ToolResultRecord)]
    assert journaled.result["content"] == message
    turn = records[1]
    assert isinstance(turn, AssistantRecord)
    assert _tool_use(turn)["exact"] == json.dumps(json.loads(raw), separators=(",", ":"))


async def test_a_resumed_null_call_is_refused_too(scalectl: Scalectl, store: FileJournalStore) -> None:
    meta = MetaRecord(
        run_id="r",
        created="2026-12-01T01:00:00+00:00",
        fingerprint=Fingerprint(provider="anthropic", model=MODEL),
        prompt="x",
    )
    journal = await store.create(meta)
    use: JsonValue = {"tool_use": {"id": "toolu_n", "name": "scale", "input": {}, "exact": "null"}}
    turn = AssistantRecord(iteration=0, message={"role": "assistant", "content": [use]}, stop_reason="tool_use")
    await journal.append(Record(seq=2, payload=turn))
    await journal.aclose()
    with MessagesServer() as server:
        server.add(Turn([text("ok")]))
        await run(_options(server, scalectl.tools, "json", SessionOptions(store=store, resume_id="r", force=True)))
        (refused,) = server.requests[0].tool_results()
    assert refused["is_error"] is True and "got null" in str(refused["content"])
    assert scalectl.calls() == []
