"""Global flag exposure: resolution, schema merge on a copy, argv placement and error wrapping."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from pydantic import JsonValue

from fiskai_core.errors import ArgumentsError, ConfigError
from fiskai_core.fisk import ApplicationModel, ArgModel, CmdModel, CommandSpec, FlagModel, walk_commands


def _flag(name: str, **fields: object) -> FlagModel:
    return FlagModel.model_validate({"name": name, **fields})


_SCHEMA: dict[str, JsonValue] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {"subject": {"description": "Subject", "type": "string"}},
    "required": ["subject"],
}


def _app() -> ApplicationModel:
    return ApplicationModel(
        name="nats",
        flags=[
            _flag("help", boolean=True),
            _flag("context", help="NATS context", completions=["prod", "dev"]),
            _flag("trace", help="Trace", boolean=True, negatable=True),
            _flag("secret", hidden=True),
            _flag("server", help="Server URL", required=True),
            _flag("user"),
        ],
        commands=[
            CmdModel(
                name="pub",
                restricted_schema=copy.deepcopy(_SCHEMA),
                args=[ArgModel(name="subject", required=True)],
                flags=[_flag("count")],
            ),
            CmdModel(name="save", restricted_schema={"type": "object"}, args=[ArgModel(name="context")]),
            CmdModel(name="ping", restricted_schema={"type": "object", "properties": {}}),
        ],
    )


def _specs(allowlist: list[str]) -> dict[str, CommandSpec]:
    return {spec.name: spec for spec in walk_commands(_app(), global_flags=allowlist)}


def test_globals_allowlist_order_then_required_and_duplicates_ignored() -> None:
    specs = _specs(["trace", "context", "trace"])
    assert [flag.name for flag in specs["pub"].global_flags] == ["trace", "context", "server"]


def test_globals_required_global_exposed_even_when_not_listed() -> None:
    specs = _specs([])
    assert [flag.name for flag in specs["ping"].global_flags] == ["server"]
    assert specs["ping"].input_schema["required"] == ["server"]


def test_globals_schema_merge_copies_and_never_mutates_shared_schema() -> None:
    app = _app()
    pristine = copy.deepcopy(app.commands[0].restricted_schema)
    (pub, _, _) = walk_commands(app, global_flags=["context", "trace"])
    assert pub.input_schema is not app.commands[0].restricted_schema
    assert app.commands[0].restricted_schema == pristine
    assert pub.input_schema["properties"] == {
        "subject": {"description": "Subject", "type": "string"},
        "context": {"description": "Global flag: NATS context", "type": "string", "enum": ["prod", "dev"]},
        "trace": {"description": "Global flag: Trace", "type": "boolean"},
        "server": {"description": "Global flag: Server URL", "type": "string"},
    }
    assert pub.input_schema["required"] == ["subject", "server"]
    walk_commands(app, global_flags=["context"])
    assert app.commands[0].restricted_schema == pristine


def test_globals_render_after_path_and_before_separator() -> None:
    pub = _specs(["context", "trace"])["pub"]
    argv = pub.argv('{"subject":"orders","context":"prod","count":2,"server":"nats://x"}')
    assert argv == ["pub", "--context=prod", "--server=nats://x", "--count=2", "--", "orders"]
    assert pub.argv('{"trace":false,"subject":"s"}') == ["pub", "--no-trace", "--", "s"]


def test_globals_omitted_when_not_supplied() -> None:
    pub = _specs(["context"])["pub"]
    assert pub.argv('{"subject":"s"}') == ["pub", "--", "s"]
    assert pub.argv(None) == ["pub"]
    assert pub.argv("null") == ["pub"]


def test_globals_local_arg_with_same_name_wins() -> None:
    save = _specs(["context"])["save"]
    assert [flag.name for flag in save.global_flags] == ["server"]
    assert save.argv('{"context":"local"}') == ["save", "--", "local"]


def test_globals_errors_are_prefixed_by_side() -> None:
    pub = _specs(["trace"])["pub"]
    with pytest.raises(ArgumentsError) as caught:
        pub.argv('{"trace":"yes"}')
    assert str(caught.value) == 'building global flags for "pub": flag "trace": expected boolean, got string'
    with pytest.raises(ArgumentsError) as caught:
        pub.argv('{"nope":1}')
    assert str(caught.value) == 'building command line for "pub": unknown property "nope"'


def test_globals_input_that_is_not_one_object_goes_whole_to_the_command() -> None:
    pub = _specs(["context"])["pub"]
    # Trailing data defeats the split (json.Unmarshal), so the command sees "context" as unknown.
    with pytest.raises(ArgumentsError) as caught:
        pub.argv('{"context":"prod"} {}')
    assert str(caught.value) == 'building command line for "pub": unknown property "context"'
    with pytest.raises(ArgumentsError) as caught:
        pub.argv("[1]")
    assert str(caught.value) == (
        'building command line for "pub": invalid JSON arguments: json: cannot unmarshal array into Go value '
        "of type map[string]interface {}"
    )


@pytest.mark.parametrize(
    ("name", "message"),
    [
        (
            "nope",
            'global_flags entry "nope" matches no global flag of application "nats"; run `fisk-ai info` to list '
            "the exposable global flags",
        ),
        (
            "secret",
            'global_flags entry "secret" is a hidden or framework flag and cannot be exposed to the model; only '
            "application-defined global flags can be exposed",
        ),
        (
            "help",
            'global_flags entry "help" is a hidden or framework flag and cannot be exposed to the model; only '
            "application-defined global flags can be exposed",
        ),
    ],
)
def test_globals_unknown_hidden_or_framework_names_error(name: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        walk_commands(_app(), global_flags=[name])
    assert str(caught.value) == message


def test_globals_on_fixturectl_with_schemas(captured_fixtures: Path) -> None:
    app = ApplicationModel.model_validate_json(
        (captured_fixtures / "fisk" / "with-schemas" / "fixturectl.introspect.json").read_bytes()
    )
    drain = {spec.name: spec for spec in walk_commands(app, global_flags=["output", "debug"])}["cluster_node_drain"]
    argv = drain.argv('{"node":"n1","reason":"maintenance","output":"json","debug":true,"wait":false}')
    assert argv == [
        "cluster",
        "node",
        "drain",
        "--output=json",
        "--debug",
        "--reason=maintenance",
        "--no-wait",
        "--",
        "n1",
    ]
