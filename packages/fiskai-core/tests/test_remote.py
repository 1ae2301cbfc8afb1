import json

import pytest

from fiskai_core.errors import ToolSelectionError
from fiskai_core.remote import (
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
from fiskai_core.tools import Tool

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
