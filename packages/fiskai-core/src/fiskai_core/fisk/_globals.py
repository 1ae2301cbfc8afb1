"""Exposing an application's global flags (`global_flags` in agent.yaml) on every command tool.

fisk-ai's rules, reproduced here:

* Resolution over the app's top-level flags: each allowlisted name must exist and must not be hidden
  or a framework flag; duplicates are ignored; then every `required` app flag that is not a framework
  flag is exposed too (a command cannot run without it). Order: allowlist order, then required ones.
* Per command, a global named like one of the command's own flags or args is skipped (local wins).
* Schema: a merged copy (the shared introspected schema is never touched). Each applicable global not
  already a property becomes fisk's degraded flag schema (`boolean` or `string`, array when
  cumulative) described as `Global flag: <help>`; completions become an `enum` on a `string`; a
  required global without default joins `required`.
* argv: see `build_argv` in `_args.py` (globals first, so they always precede `--`).

Known quirk kept from fisk-ai: a counter global (boolean and cumulative) gets an array-of-boolean
schema, while ArgsFromJSON accepts only a JSON boolean for it, so such a global cannot be usefully
exposed.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence

from pydantic import JsonValue

from fiskai_core._gojson import go_quote
from fiskai_core.errors import ConfigError

from ._model import ApplicationModel, CmdModel, FlagModel
from ._schema import flag_restricted_schema

__all__ = [
    "FRAMEWORK_GLOBAL_FLAGS",
    "applicable_globals",
    "global_flag_schema",
    "merge_global_flags",
    "resolve_global_flags",
]

FRAMEWORK_GLOBAL_FLAGS = frozenset(
    {
        "help",
        "help-long",
        "help-man",
        "help-llm",
        "help-compact",
        "completion-bash",
        "completion-script-bash",
        "completion-script-zsh",
        "fisk-introspect",
        "version",
    }
)
"""Flags fisk adds to every application; exposing one would print usage or a version instead of running."""


def resolve_global_flags(app: ApplicationModel, allowlist: Sequence[str]) -> tuple[FlagModel, ...]:
    """Pick the global flags exposed to the model: the allowlisted ones, then every required one.

    Args:
        app: The application model.
        allowlist: The `global_flags` names from the configuration.

    Returns:
        The exposed flags, allowlist order first, then required flags in application order.

    Raises:
        ConfigError: A name matches no global flag, or names a hidden or framework flag.
    """
    by_name = {flag.name: flag for flag in app.flags}
    exposed: dict[str, FlagModel] = {}
    for name in allowlist:
        flag = by_name.get(name)
        if flag is None:
            raise ConfigError(
                f"global_flags entry {go_quote(name)} matches no global flag of application {go_quote(app.name)}; "
                "run `fisk-ai info` to list the exposable global flags"
            )
        if flag.name in FRAMEWORK_GLOBAL_FLAGS or flag.hidden:
            raise ConfigError(
                f"global_flags entry {go_quote(name)} is a hidden or framework flag and cannot be exposed to the "
                "model; only application-defined global flags can be exposed"
            )
        exposed.setdefault(flag.name, flag)
    for flag in app.flags:
        if flag.required and flag.name not in FRAMEWORK_GLOBAL_FLAGS:
            exposed.setdefault(flag.name, flag)
    return tuple(exposed.values())


def applicable_globals(exposed: Sequence[FlagModel], cmd: CmdModel) -> tuple[FlagModel, ...]:
    """The exposed globals a command carries: those not shadowed by its own flag or arg names.

    Args:
        exposed: The resolved globals.
        cmd: The command.

    Returns:
        The globals, in exposed order.
    """
    local = {flag.name for flag in cmd.flags} | {arg.name for arg in cmd.args}
    return tuple(flag for flag in exposed if flag.name not in local)


def global_flag_schema(flag: FlagModel) -> dict[str, JsonValue]:
    """The schema property for an exposed global flag.

    Args:
        flag: The global flag.

    Returns:
        A new dict: the degraded flag schema, described as a global, with completions as an enum when
        the type is `string`.
    """
    schema = flag_restricted_schema(flag)
    schema["description"] = f"Global flag: {flag.help}" if flag.help else "Global flag"
    if flag.completions and schema["type"] == "string":
        schema["enum"] = list[JsonValue](flag.completions)
    return schema


def merge_global_flags(schema: Mapping[str, JsonValue], globals_: Sequence[FlagModel]) -> dict[str, JsonValue]:
    """A deep copy of a command schema with the applicable globals added as properties.

    Args:
        schema: The command's input schema (never modified).
        globals_: The applicable globals.

    Returns:
        The merged schema. A global already present as a property is left to the command's definition.
    """
    merged = copy.deepcopy(dict(schema))
    existing = merged.get("properties")
    properties: dict[str, JsonValue] = existing if isinstance(existing, dict) else {}
    listed = merged.get("required")
    required: list[JsonValue] = [name for name in listed if isinstance(name, str)] if isinstance(listed, list) else []
    for flag in globals_:
        if flag.name in properties:
            continue
        properties[flag.name] = global_flag_schema(flag)
        if flag.required and not flag.default:
            required.append(flag.name)
    merged["properties"] = properties
    if required:
        merged["required"] = required
    return merged
