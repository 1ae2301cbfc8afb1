"""Command tree to tool specs, against every captured introspection document."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fiskai_core.errors import IntrospectionError
from fiskai_core.fisk import ApplicationModel, CmdModel, CommandSpec, walk_commands
from fiskai_core.fisk._walk import MAX_TOOL_NAME_LENGTH

_FIXTURECTL_TOOLS = [
    "types",
    "args_basic",
    "args_rest",
    "args_kv",
    "args_env",
    "args_choice",
    "args_typed",
    "cluster_node_list",
    "cluster_node_drain",
    "cluster_node_remove",
    "cluster_config_get",
    "cluster_config_set",
    "fail",
]
_EXPECTED_TOOLS = {
    "chat1": [],
    "chat2": ["register", "post"],
    "completion": ["nc", "ls", "ping", "nmap"],
    "curl": ["get_url", "get_file", "post"],
    "fixturectl": _FIXTURECTL_TOOLS,
    "modular": ["ls"],
    "ping": [],
}


def _load(path: Path) -> ApplicationModel:
    return ApplicationModel.model_validate_json(path.read_bytes())


def _by_name(specs: list[CommandSpec]) -> dict[str, CommandSpec]:
    return {spec.name: spec for spec in specs}


@pytest.mark.parametrize("variant", ["", "with-schemas"])
@pytest.mark.parametrize("app_name", sorted(_EXPECTED_TOOLS))
def test_walk_every_fisk_fixture_gives_expected_tools(captured_fixtures: Path, variant: str, app_name: str) -> None:
    folder = captured_fixtures / "fisk" / variant if variant else captured_fixtures / "fisk"
    specs = walk_commands(_load(folder / f"{app_name}.introspect.json"))
    assert [spec.name for spec in specs] == _EXPECTED_TOOLS[app_name]
    expected_source = "fisk" if variant else "derived"
    assert all(spec.schema_source == expected_source for spec in specs)
    assert all(spec.path == tuple(spec.name.split("_")) or "-" in spec.command for spec in specs)


def test_walk_fisk_schema_fixture_skips_hidden_debug(captured_fixtures: Path) -> None:
    specs = walk_commands(_load(captured_fixtures / "fisk-schema" / "fixturectl.introspect.json"))
    assert [spec.name for spec in specs] == [
        "echo",
        "login",
        "pos_required",
        "pos_defaults",
        "pos_enum",
        "pos_repeat",
        "pos_typed",
        "cluster_node_list",
        "cluster_node_drain",
        "cluster_node_rm",
        "cluster_config_set",
    ]


def test_walk_hidden_command_and_groups_never_become_tools(captured_fixtures: Path) -> None:
    app = _load(captured_fixtures / "fisk" / "with-schemas" / "fixturectl.introspect.json")
    names = [spec.name for spec in walk_commands(app)]
    assert "debug-dump" not in names
    assert not {"args", "cluster", "cluster_node", "cluster_config"} & set(names)
    drain = _by_name(walk_commands(app))["cluster_node_drain"]
    assert drain.path == ("cluster", "node", "drain")
    assert drain.command == "cluster node drain"
    assert drain.tags == ("ai:confirm", "impact:rw")
    assert drain.model_description == "Drain a node\n\nTags: ai:confirm, impact:rw"


def test_walk_uses_restricted_schema_verbatim_without_copying(captured_fixtures: Path) -> None:
    app = _load(captured_fixtures / "fisk" / "with-schemas" / "fixturectl.introspect.json")
    spec = _by_name(walk_commands(app))["cluster_node_drain"]
    assert spec.input_schema is spec.cmd.restricted_schema
    assert spec.input_schema["required"] == ["node", "reason"]


def test_walk_v08_and_with_schemas_agree_on_names_properties_and_required(captured_fixtures: Path) -> None:
    for path in sorted((captured_fixtures / "fisk").glob("*.introspect.json")):
        _assert_variants_agree(path)


def test_walk_v08_and_with_schemas_agree_on_the_nats_cli(shared_fixtures: Path) -> None:
    # The 221-tool NATS CLI model stays in the shared data (1.5 MB); CI runs this with it.
    _assert_variants_agree(shared_fixtures / "fisk" / "natscli.introspect.json")


def _assert_variants_agree(path: Path) -> None:
    derived = walk_commands(_load(path))
    precomputed = walk_commands(_load(path.parent / "with-schemas" / path.name))
    assert [spec.name for spec in derived] == [spec.name for spec in precomputed]
    for mine, theirs in zip(derived, precomputed, strict=True):
        mine_props = mine.input_schema["properties"]
        their_props = theirs.input_schema["properties"]
        assert isinstance(mine_props, dict)
        assert isinstance(their_props, dict)
        assert sorted(mine_props) == sorted(their_props), mine.name
        assert mine.input_schema.get("required") == theirs.input_schema.get("required"), mine.name
        for name, prop in their_props.items():
            # Where fisk itself says boolean, the derived schema must say so too.
            assert isinstance(prop, dict)
            mine_prop = mine_props[name]
            assert isinstance(mine_prop, dict)
            assert (prop.get("type") == "boolean") == (mine_prop.get("type") == "boolean"), (mine.name, name)


def test_walk_derived_schema_mentions_defaults_and_suggestions(captured_fixtures: Path) -> None:
    app = _load(captured_fixtures / "fisk" / "fixturectl.introspect.json")
    node_list = _by_name(walk_commands(app))["cluster_node_list"]
    assert node_list.input_schema == {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "limit": {"description": "Maximum number of nodes (default: 10)", "type": "string"},
            "state": {
                "description": "Only nodes in this state (default: any; suggested values: up, down, any)",
                "type": "string",
            },
            "sort": {"description": "Sort key (suggested values: name, age)", "type": "string"},
            "fields": {
                "description": "Fields to show",
                "type": "array",
                "items": {"type": "string"},
            },
        },
    }


def test_walk_without_schema_errors_when_schema_required(captured_fixtures: Path) -> None:
    app = _load(captured_fixtures / "fisk" / "fixturectl.introspect.json")
    with pytest.raises(IntrospectionError) as caught:
        walk_commands(app, require_schema=True)
    assert str(caught.value) == (
        'command "types" has no precomputed schema; introspect the application with a current fisk'
    )


def test_walk_nil_model_errors_and_app_without_commands_gives_no_tools() -> None:
    with pytest.raises(IntrospectionError) as caught:
        walk_commands(None)
    assert str(caught.value) == "application model is nil"
    assert walk_commands(ApplicationModel(name="empty")) == []


def test_walk_same_leaf_names_under_different_parents_stay_distinct() -> None:
    app = ApplicationModel(
        name="nats",
        commands=[
            CmdModel(
                name="auth", commands=[CmdModel(name="add"), CmdModel(name="user", commands=[CmdModel(name="add")])]
            ),
            CmdModel(name="account", commands=[CmdModel(name="add")]),
            CmdModel(name="secret", hidden=True, commands=[CmdModel(name="add")]),
        ],
    )
    specs = walk_commands(app)
    assert [spec.name for spec in specs] == ["auth_add", "auth_user_add", "account_add"]
    assert [spec.command for spec in specs] == ["auth add", "auth user add", "account add"]


@pytest.mark.parametrize(
    ("short", "long", "tags", "expected"),
    [
        ("remove a stream", "", ["impact:rw", "ai:confirm"], "remove a stream\n\nTags: impact:rw, ai:confirm"),
        ("", "", ["a"], "Tags: a"),
        ("", "only long", [], "only long"),
        ("short", "long text", [], "short\n\nlong text"),
        ("short", "a short summary", [], "a short summary"),
        ("the whole story", "whole", [], "the whole story"),
    ],
)
def test_walk_model_description_combines_help_and_tags(short: str, long: str, tags: list[str], expected: str) -> None:
    app = ApplicationModel(name="x", commands=[CmdModel(name="leaf", help=short, help_long=long, tags=tags)])
    (spec,) = walk_commands(app)
    assert spec.model_description == expected
    assert spec.description == (short or long)


def test_walk_refuses_hostile_command_names_with_a_reason_each(captured_fixtures: Path) -> None:
    # Issue 9.4.7: a captured document made hostile. Before the fix each of these became a tool.
    document = json.loads((captured_fixtures / "fisk" / "with-schemas" / "fixturectl.introspect.json").read_bytes())
    leaf = next(cmd for cmd in document["commands"] if cmd["name"] == "fail")
    hostile = ["../../etc", "--help", "", "two\nlines", "fail", "-x", "_hidden", "caf\u00e9"]
    document["commands"].extend({**leaf, "name": name} for name in hostile)
    group = next(cmd for cmd in document["commands"] if cmd["name"] == "cluster")
    group["commands"].append({**leaf, "name": "node_list"})  # the tool name cluster_node_list again
    refused: list[str] = []
    specs = walk_commands(ApplicationModel.model_validate(document), refused=refused)
    names = [spec.name for spec in specs]
    assert names == _FIXTURECTL_TOOLS
    assert len(refused) == len(hostile) + 1
    assert all("was skipped" in line and "\n" not in line for line in refused)
    assert any('"../../etc"' in line for line in refused)
    assert any('"two\\nlines"' in line for line in refused)
    assert any('"cluster node_list"' in line and '"cluster_node_list"' in line for line in refused)
    assert sum('"fail"' in line for line in refused) == 1


def test_walk_refuses_a_tool_name_longer_than_model_apis_accept(captured_fixtures: Path) -> None:
    document = json.loads((captured_fixtures / "fisk" / "with-schemas" / "fixturectl.introspect.json").read_bytes())
    leaf = next(cmd for cmd in document["commands"] if cmd["name"] == "fail")
    document["commands"].append({**leaf, "name": "x" * (MAX_TOOL_NAME_LENGTH + 1)})
    refused: list[str] = []
    specs = walk_commands(ApplicationModel.model_validate(document), refused=refused)
    assert [spec.name for spec in specs] == _FIXTURECTL_TOOLS
    assert len(refused) == 1
