import json

import pytest

from fiskai_core.errors import ToolSelectionError
from fiskai_core.exec import MAX_TOOL_OUTPUT_BYTES
from fiskai_core.fisk import MAX_TOOL_NAME_LENGTH
from fiskai_core.remote import (
    MAX_REMOTE_DESCRIPTION_CHARS,
    DiscoveredHost,
    RemoteCallError,
    RemoteDescriptor,
    RemoteInvoker,
    RemoteReply,
    RemoteTool,
    ToolNameCollisionError,
    filter_descriptors,
    name_remote_tools,
)
from fiskai_core.testing import FakeRemoteInvoker, Rule, call_tool
from fiskai_core.tools import Tool, plan_deferral

pytestmark = pytest.mark.anyio


def _scripted(reply: RemoteReply | RemoteCallError | None = None) -> FakeRemoteInvoker:
    """A FakeRemoteInvoker answering every tool these tests call with one reply."""
    scripted = reply if reply is not None else RemoteReply(output="ok")
    pairs = [("ops", name) for name in ("list", "x", "status")]
    return FakeRemoteInvoker(replies=dict.fromkeys(pairs, scripted))


def _d(name: str, schema: object = None) -> RemoteDescriptor:
    return RemoteDescriptor(name=name, description=f"{name} does things", input_schema=schema)


def _host(agent: str, *names: str, alias: str = "") -> DiscoveredHost:
    return DiscoveredHost(agent=agent, alias=alias or agent, descriptors=[_d(n) for n in names])


def test_scripted_invoker_satisfies_the_seam_and_remote_tool_is_a_tool() -> None:
    invoker: RemoteInvoker = _scripted()
    tool: Tool = RemoteTool.from_descriptor(_d("x"), name="x", agent="peer", invoker=invoker)
    assert tool.tags == ()


def test_bare_names_stay_when_nothing_collides() -> None:
    naming = name_remote_tools([_host("ops", "status"), _host("db", "query")], taken=["local"], invoker=_scripted())
    assert [t.name for t in naming.tools] == ["status", "query"]
    assert naming.collisions == [] and naming.skipped == {}


def test_alias_prefix_only_on_collision_with_a_local_tool_or_another_host() -> None:
    hosts = [_host("ops", "status", "list", alias="o"), _host("db", "list", "vacuum")]
    naming = name_remote_tools(hosts, taken=["status"], invoker=_scripted())
    assert sorted(t.name for t in naming.tools) == ["db_list", "o_list", "o_status", "vacuum"]
    remote_names = {t.name: (t.agent, t.remote_name) for t in naming.tools}
    assert remote_names["o_status"] == ("ops", "status")


def test_naming_does_not_depend_on_host_order() -> None:
    hosts = [_host("ops", "a", "b"), _host("db", "b", "c"), _host("web", "c", "d")]
    forward = name_remote_tools(hosts, taken=["d"], invoker=_scripted())
    backward = name_remote_tools(list(reversed(hosts)), taken=["d"], invoker=_scripted())
    assert (
        {t.name for t in forward.tools}
        == {t.name for t in backward.tools}
        == {
            "a",
            "ops_b",
            "db_b",
            "db_c",
            "web_c",
            "web_d",
        }
    )


def test_a_residual_collision_is_skipped_and_fails_a_strict_import() -> None:
    # "ops_status" is already a local name, so prefixing cannot resolve the clash.
    naming = name_remote_tools([_host("ops", "status")], taken=["status", "ops_status"], invoker=_scripted())
    assert naming.tools == []
    assert naming.skipped == {"ops": ['status (name "ops_status" collides)']}
    assert naming.collisions == ['"ops_status" (agent "ops")']
    error = naming.collision_error()
    assert isinstance(error, ToolNameCollisionError)
    assert str(error) == (
        'imported tool name collision: "ops_status" (agent "ops"); set a distinct alias on the remote_tools host'
    )


def test_two_hosts_with_one_alias_collide() -> None:
    hosts = [_host("a1", "x", alias="same"), _host("a2", "x", alias="same")]
    naming = name_remote_tools(hosts, taken=[], invoker=_scripted())
    assert naming.tools == [] and len(naming.collisions) == 2


def test_untrusted_descriptors_are_checked() -> None:
    host = DiscoveredHost(
        agent="peer",
        alias="peer",
        descriptors=[
            _d("text_schema", '{"type": "object", "properties": {"a": {"type": "string"}}}'),
            _d("no_schema"),
            _d("array_schema", [1, 2]),
            _d("broken_schema", "{not json"),
            RemoteDescriptor(name="silent", description="  "),
            _d("bad.name"),
        ],
    )
    naming = name_remote_tools([host], taken=[], invoker=_scripted())
    by_name = {t.name: t for t in naming.tools}
    assert set(by_name) == {"text_schema", "no_schema"}
    assert by_name["no_schema"].input_schema == {"type": "object"}
    assert by_name["text_schema"].input_schema["properties"] == {"a": {"type": "string"}}
    skipped = naming.skipped["peer"]
    assert any(s.startswith("array_schema (") and "not a JSON object" in s for s in skipped)
    assert any(s.startswith("broken_schema (") and "unparsable input schema" in s for s in skipped)
    assert any(s.startswith("silent (") and "advertises no description" in s for s in skipped)
    assert 'bad.name (invalid name "bad.name")' in skipped


def test_filters_apply_to_names_and_ignore_tags_with_a_warning() -> None:
    descriptors = [_d("cluster_list"), _d("cluster_drain"), _d("debug")]
    kept, warnings = filter_descriptors(
        descriptors, include=Rule(tools=["^cluster_"], tags=["impact:ro"]), exclude=Rule(tools=["drain"]), agent="ops"
    )
    assert [d.name for d in kept] == ["cluster_list"]
    assert warnings == [
        'remote agent "ops" include filter uses tags, which discovery does not carry; the tag filter was ignored '
        "(filter by tool name instead)"
    ]
    with pytest.raises(ToolSelectionError) as caught:
        filter_descriptors(descriptors, include=Rule(tools=["("]), exclude=Rule(), agent="ops")
    assert str(caught.value).startswith('invalid remote tool filter pattern "("')


async def test_a_remote_result_has_the_local_command_shape() -> None:
    invoker = _scripted(RemoteReply(output="n1\n", command="cluster node list", exit_code=2, truncated=True))
    tool = RemoteTool.from_descriptor(_d("list"), name="ops_list", agent="ops", invoker=invoker)
    result = await call_tool(tool, '{"limit": 2}')
    assert json.loads(result.text) == {
        "command": "cluster node list",
        "exit_code": 2,
        "output": "n1\n",
        "truncated": True,
    }
    assert result.exit_code == 2 and not result.is_error
    assert invoker.calls == [("ops", "list", '{"limit":2}')]


async def test_numbers_reach_the_peer_as_the_model_wrote_them() -> None:
    invoker = _scripted()
    tool = RemoteTool.from_descriptor(_d("list"), name="list", agent="ops", invoker=invoker)
    await call_tool(tool, '{"ratio": 1.50, "count": 1e2, "big": 9007199254740993}')
    assert invoker.calls == [("ops", "list", '{"ratio":1.50,"count":1e2,"big":9007199254740993}')]


@pytest.mark.parametrize("arguments", [None, "", "{}", b"{}", " {} "])
async def test_empty_arguments_are_an_empty_object(arguments: str | bytes | None) -> None:
    invoker = _scripted()
    tool = RemoteTool.from_descriptor(_d("x"), name="x", agent="ops", invoker=invoker)
    result = await call_tool(tool, arguments)
    assert json.loads(result.text) == {"command": "", "exit_code": 0, "output": "ok"}
    assert invoker.calls == [("ops", "x", "{}")]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ("null", 'arguments for tool "x" must be a JSON object, got null; nothing was run'),
        ("[1]", "invalid JSON arguments: json: cannot unmarshal array into Go value of type map[string]interface {}"),
        ('"x"', "invalid JSON arguments: json: cannot unmarshal string into Go value of type map[string]interface {}"),
    ],
)
async def test_arguments_that_are_no_object_never_reach_the_peer(arguments: str, message: str) -> None:
    # Issue 36.9: null used to be sent as no arguments at all.
    invoker = _scripted()
    result = await call_tool(RemoteTool.from_descriptor(_d("x"), name="x", agent="ops", invoker=invoker), arguments)
    assert result.is_error and result.text == message
    assert invoker.calls == []


async def test_remote_failures_are_error_results() -> None:
    serving_failure = _scripted(RemoteReply(output="tool timed out", is_error=True))
    unreachable = _scripted(RemoteCallError("remote agent unavailable: no reply"))
    failed = await call_tool(RemoteTool.from_descriptor(_d("x"), name="x", agent="ops", invoker=serving_failure), None)
    lost = await call_tool(RemoteTool.from_descriptor(_d("x"), name="x", agent="ops", invoker=unreachable), None)
    assert failed.is_error and failed.text == "tool timed out"
    assert lost.is_error and lost.text == 'calling tool "x" on agent "ops": remote agent unavailable: no reply'
    assert unreachable.calls == [("ops", "x", "{}")]


async def test_the_fake_invoker_treats_an_unscripted_agent_as_absent() -> None:
    tool = RemoteTool.from_descriptor(_d("x"), name="x", agent="elsewhere", invoker=_scripted())
    result = await call_tool(tool, None)
    assert result.is_error
    assert (
        result.text
        == 'calling tool "x" on agent "elsewhere": remote agent unavailable: no agent "elsewhere" is serving'
    )


async def test_a_peer_s_output_is_capped_like_a_local_command_s() -> None:
    # Five 600 KB results once reached the model in one request; each is now 64 KiB, head and tail kept.
    output = "HEAD" + "x" * 600_000 + "TAIL"
    huge = _scripted(RemoteReply(output=output, command="c" * 600_000, exit_code=1))
    result = await call_tool(RemoteTool.from_descriptor(_d("x"), name="x", agent="ops", invoker=huge), None)
    body = json.loads(result.text)
    assert body["truncated"] is True and body["exit_code"] == 1
    assert body["output"].startswith("HEAD") and body["output"].endswith("TAIL")
    assert "\n...[output truncated]...\n" in body["output"]
    assert len(body["output"].encode()) == MAX_TOOL_OUTPUT_BYTES + len("\n...[output truncated]...\n")
    assert len(body["command"].encode()) < 5000
    failing = _scripted(RemoteReply(output=output, is_error=True))
    failed = await call_tool(RemoteTool.from_descriptor(_d("x"), name="x", agent="ops", invoker=failing), None)
    assert failed.is_error and len(failed.text.encode()) < MAX_TOOL_OUTPUT_BYTES + 100
    small = _scripted(RemoteReply(output="é" * 1000))
    whole = json.loads(
        (await call_tool(RemoteTool.from_descriptor(_d("x"), name="x", agent="ops", invoker=small), None)).text
    )
    assert whole["output"] == "é" * 1000 and "truncated" not in whole


def test_names_longer_than_a_local_tool_s_are_skipped_with_a_reason() -> None:
    longest, too_long, absurd = "a" * MAX_TOOL_NAME_LENGTH, "b" * (MAX_TOOL_NAME_LENGTH + 1), "c" * 300
    naming = name_remote_tools([_host("peer", longest, too_long, absurd)], taken=[], invoker=_scripted())
    assert [tool.name for tool in naming.tools] == [longest]
    skipped = naming.skipped["peer"]
    assert len(skipped) == 2 and all("characters, over the 128 a tool name may have" in s for s in skipped)
    assert all(len(s) < 250 for s in skipped), "a peer's long name is clipped in the warning"
    # The alias prefix counts too: a bare name that fits can still make a final name that does not.
    prefixed = name_remote_tools([_host("peer", "n" * 120, alias="longalias")], taken=["n" * 120], invoker=_scripted())
    assert prefixed.tools == [] and "over the 128" in prefixed.skipped["peer"][0]


def test_a_peer_name_with_control_characters_is_escaped_in_the_warning() -> None:
    naming = name_remote_tools([_host("peer", "evil\n\x1b[2Jname")], taken=[], invoker=_scripted())
    (skipped,) = naming.skipped["peer"]
    assert "\n" not in skipped and "\x1b" not in skipped and "\\n" in skipped


@pytest.mark.parametrize(
    ("schema", "reason"),
    [
        ({"type": "string"}, 'its input schema has type "string", not an object schema'),
        ('{"type": ["object", "null"]}', "not an object schema"),
        ({"type": "object", "properties": ["a"]}, '"properties" is not an object of schemas'),
        ({"type": "object", "properties": {"a": "string"}}, '"properties" is not an object of schemas'),
        ({"type": "object", "required": "a"}, '"required" is not a list of names'),
        ({"type": "object", "description": "x" * 70_000}, "over the 65536-byte limit"),
    ],
)
def test_an_input_schema_that_is_not_an_object_schema_is_skipped(schema: object, reason: str) -> None:
    naming = name_remote_tools(
        [DiscoveredHost(agent="peer", alias="peer", descriptors=[_d("x", schema)])], taken=[], invoker=_scripted()
    )
    assert naming.tools == []
    (skipped,) = naming.skipped["peer"]
    assert skipped.startswith('x (tool "x" from agent "peer": ') and reason in skipped


def test_a_schema_without_a_type_is_an_object_schema() -> None:
    tool = RemoteTool.from_descriptor(_d("x", {"properties": {"a": True}}), name="x", agent="p", invoker=_scripted())
    assert tool.input_schema == {"type": "object", "properties": {"a": True}}


@pytest.mark.parametrize(
    ("description", "tags"),
    [
        ("List nodes.\n\nTags: impact:ro, ai:no_defer", ("impact:ro", "ai:no_defer")),
        ("Tags: kind:demo", ("kind:demo",)),
        ("List nodes.\nTags: impact:ro", ()),  # not the fisk layout: no blank line before it
        ("List nodes.\n\nTags: impact:ro,ai:no_defer", ()),
        ("List nodes.\n\nTags: has space, x", ()),
        ("Tags: ai:no_defer\n\nList nodes.", ()),
        ("List nodes.", ()),
    ],
)
def test_tags_come_from_the_description_s_tags_line(description: str, tags: tuple[str, ...]) -> None:
    descriptor = RemoteDescriptor(name="x", description=description)
    tool = RemoteTool.from_descriptor(descriptor, name="x", agent="p", invoker=_scripted())
    assert tool.tags == tags and tool.description == description


def test_a_long_description_is_capped_and_keeps_its_tags_line() -> None:
    description = "Start. " + "word " * 5_000 + "\n\nTags: impact:ro, ai:no_defer"
    descriptor = RemoteDescriptor(name="x", description=description)
    tool = RemoteTool.from_descriptor(descriptor, name="x", agent="p", invoker=_scripted())
    assert len(tool.description) == MAX_REMOTE_DESCRIPTION_CHARS
    assert tool.description.startswith("Start. word") and tool.description.endswith("\n\nTags: impact:ro, ai:no_defer")
    assert "[description truncated]" in tool.description and tool.tags == ("impact:ro", "ai:no_defer")


def test_a_peer_s_ai_no_defer_tag_keeps_its_tool_out_of_deferral() -> None:
    descriptors = [
        RemoteDescriptor(name=f"t{i}", description=f"Tool {i}." + ("\n\nTags: ai:no_defer" if i == 0 else ""))
        for i in range(12)
    ]
    host = DiscoveredHost(agent="peer", alias="peer", descriptors=descriptors)
    naming = name_remote_tools([host], taken=[], invoker=_scripted())
    plan = plan_deferral(naming.tools)
    assert plan.deferred["t0"] is False and all(plan.deferred[f"t{i}"] for i in range(1, 12))
